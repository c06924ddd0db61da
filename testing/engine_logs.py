"""The repository's calibration corpus of real engine start-up logs: load it, check it, count it.

``tests/fixtures/engine-logs/corpus.jsonl`` holds one case per line in the schema of
``../shared/fixtures/engine-logs/README.md`` (plus the optional fields this corpus's README
names). ``check`` returns every problem it finds rather than stopping at the first, so one test
run shows the whole list; ``spread`` counts the cases by engine line, GPU, parallelism, model
class and quantisation for the README's summary.

A *source* is what one person or one sweep produced: an issue or pull-request thread
(``owner/repo#N``, every comment of it), a repository (every file of it, whatever the commit),
or a web page. The share cap and leave-one-source-out both group by this key.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CORPUS_DIR = REPO / "tests" / "fixtures" / "engine-logs"
CORPUS = CORPUS_DIR / "corpus.jsonl"
SOURCES_MD = CORPUS_DIR / "SOURCES.md"
README_MD = CORPUS_DIR / "README.md"

ENGINES = ("vllm", "sglang", "llamacpp", "tgi", "trtllm")
MAX_SOURCE_SHARE = 0.10

# Every field a case carries, with the types a value may have (None = the source does not say).
_NUM = (int, float)
FIELDS: dict[str, tuple[type, ...]] = {
    "id": (str,),
    "source": (str,),
    "engine": (str,),
    "engine_version": (str,),
    "model": (str,),
    "gpu": (str,),
    "gpu_count": (int,),
    "tensor_parallel_size": (int,),
    "pipeline_parallel_size": (int,),
    "data_parallel_size": (int,),
    "gpu_memory_utilization": _NUM,
    "max_model_len": (int,),
    "max_num_seqs": (int,),
    "max_num_batched_tokens": (int,),
    "kv_cache_dtype": (str,),
    "quantization": (str,),
    "block_size": (int,),
    "enforce_eager": (bool,),
    "enable_prefix_caching": (bool,),
    "speculative_config": (dict,),
    "logged": (dict,),
    "co_resident": (list,),
    "quotes": (list,),
    "notes": (str,),
}
REQUIRED = ("id", "source", "engine", "model", "logged", "quotes", "notes")

# The figures a log can show (per rank unless the README says otherwise).
LOGGED: dict[str, tuple[type, ...]] = {
    "kv_cache_tokens": (int,),
    "gpu_blocks": (int,),
    "max_concurrency": _NUM,
    "max_concurrency_at_tokens": (int,),
    "available_kv_gib": _NUM,
    "weights_gib": _NUM,
    "kv_buffer_mib": _NUM,
    "error": (str,),
    "total_gpu_gib": _NUM,
    "activation_peak_gib": _NUM,
    "non_torch_gib": _NUM,
    "non_torch_init_gib": _NUM,
    "cuda_graph_gib": _NUM,
    "cuda_graph_estimated_gib": _NUM,
    "sglang_k_gib": _NUM,
    "sglang_v_gib": _NUM,
    "avail_mem_before_load_gib": _NUM,
    "avail_mem_after_load_gib": _NUM,
    "trtllm_available_gib": _NUM,
    "kv_pool_gib": _NUM,
    "kv_buffer_swa_mib": _NUM,
    "non_memory_error": (str,),
}
# Figures a case must log at least one of to be worth replaying.
OUTCOMES = (
    "kv_cache_tokens",
    "gpu_blocks",
    "available_kv_gib",
    "kv_buffer_mib",
    "error",
    "max_concurrency",
    "non_memory_error",
)

_ID = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_THREAD = re.compile(r"^([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)#(\d+)$")
_BLOB = re.compile(
    r"^https://github\.com/([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)/blob/([0-9a-f]{40})/\S+$"
)
_PAGE = re.compile(r"^https?://\S+$")


def load(path: Path = CORPUS) -> list[dict[str, Any]]:
    """Every case of a JSONL corpus, in file order."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def source_key(source: str) -> str:
    """The unit a case's source counts as: a thread, a repository or a page."""
    if m := _THREAD.match(source):
        return f"{m.group(1)}#{m.group(2)}"
    if m := _BLOB.match(source):
        return m.group(1)
    return source


def repository(source: str) -> str | None:
    """The repository a thread or blob source lives in (None for a web page)."""
    if m := _THREAD.match(source) or _BLOB.match(source):
        return m.group(1)
    return None


def reserved_sources(text: str) -> set[str]:
    """The thread, repository and page entries of a RESERVED.md (its ``- `` list items)."""
    return {line[2:].strip() for line in text.splitlines() if line.startswith("- ")}


def is_reserved(source: str, reserved: set[str]) -> bool:
    """A listed thread (any comment of it), any file of a listed repository, or a listed page."""
    return (
        source_key(source) in reserved
        or repository(source) in reserved
        or source.rstrip("/") in {r.rstrip("/") for r in reserved}
    )


def _typed(value: Any, kinds: tuple[type, ...]) -> bool:
    if value is None:
        return True
    if bool not in kinds and isinstance(value, bool):
        return False  # a bool is an int to isinstance; no count field takes one
    return isinstance(value, kinds)


def check_case(case: dict[str, Any]) -> list[str]:
    """The problems of one case's shape and values (empty when it is well formed)."""
    where = str(case.get("id", "<no id>"))
    problems = [f"{where}: unknown field {key!r}" for key in case if key not in FIELDS]
    problems += [f"{where}: missing {key!r}" for key in REQUIRED if not case.get(key)]
    for key, kinds in FIELDS.items():
        if key in case and not _typed(case[key], kinds):
            problems.append(f"{where}: {key} is {case[key]!r}, expected {kinds[0].__name__}")
    if isinstance(case.get("id"), str) and not _ID.match(case["id"]):
        problems.append(f"{where}: id is not a lower-case slug")
    if case.get("engine") not in ENGINES:
        problems.append(f"{where}: engine {case.get('engine')!r} is not one of {ENGINES}")
    source = str(case.get("source", ""))
    if not (_THREAD.match(source) or _BLOB.match(source) or _PAGE.match(source)):
        problems.append(f"{where}: source {source!r} is neither owner/repo#N nor a URL")
    elif source.startswith("https://github.com/") and not _BLOB.match(source):
        problems.append(f"{where}: a GitHub file source must be a blob URL pinned to a commit")
    logged = case.get("logged") if isinstance(case.get("logged"), dict) else {}
    problems += [f"{where}: unknown logged figure {k!r}" for k in logged if k not in LOGGED]
    for key, value in logged.items():
        if key in LOGGED and not _typed(value, LOGGED[key]):
            problems.append(f"{where}: logged.{key} is {value!r}")
    if not any(logged.get(key) is not None for key in OUTCOMES):
        problems.append(f"{where}: logs none of {OUTCOMES}")
    problems += _co_resident_problems(where, case.get("co_resident"))
    quotes = case.get("quotes")
    if not isinstance(quotes, list) or not all(isinstance(q, str) and q for q in quotes):
        problems.append(f"{where}: quotes must be a list of non-empty strings")
    for key in ("gpu_count", "tensor_parallel_size", "pipeline_parallel_size", "max_model_len"):
        value = case.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value < 1:
            problems.append(f"{where}: {key} {value} is not positive")
    gmu = case.get("gpu_memory_utilization")
    if isinstance(gmu, _NUM) and not 0 < gmu <= 1:
        problems.append(f"{where}: gpu_memory_utilization {gmu} is outside (0, 1]")
    return problems


def _co_resident_problems(where: str, items: Any) -> list[str]:
    """Each co-resident is ``{"gib": X, "what": "..."}``, optionally naming the ``case`` and the
    ``figure`` of its ``logged`` figures that states X (``check`` compares them)."""
    if items is None:
        return []
    if not isinstance(items, list) or not items:
        return [f"{where}: co_resident must be a non-empty list"]
    problems = []
    for item in items:
        ok = isinstance(item, dict) and set(item) <= {"gib", "what", "case", "figure"}
        ok = ok and _typed(item.get("gib"), _NUM) and item.get("gib") is not None
        ok = ok and isinstance(item.get("what"), str) and bool(item["what"])
        if ok and ("case" in item) != ("figure" in item):
            ok = False
        if not ok:
            shape = "{gib, what[, case, figure]}"
            problems.append(f"{where}: co_resident item {item!r} is not {shape}")
    return problems


def _co_resident_links(cases: list[dict[str, Any]]) -> list[str]:
    """A co-resident that names a case and figure must quote that case's logged figure."""
    by_id = {str(c.get("id")): c for c in cases}
    problems = []
    for case in cases:
        for item in case.get("co_resident") or []:
            if not isinstance(item, dict) or "case" not in item:
                continue
            other = by_id.get(str(item["case"]))
            if other is None:
                problems.append(f"{case['id']}: co_resident names unknown case {item['case']!r}")
                continue
            figure = (other.get("logged") or {}).get(str(item.get("figure")))
            if figure != item.get("gib"):
                problems.append(
                    f"{case['id']}: co_resident gives {item.get('gib')} GiB, "
                    f"{item['case']} logs {item.get('figure')} = {figure}"
                )
    return problems


def check(
    cases: list[dict[str, Any]],
    *,
    reserved: set[str] | None = None,
    sources_md: str | None = None,
    max_share: float = MAX_SOURCE_SHARE,
) -> list[str]:
    """Every problem of the corpus: case shape, duplicate ids, reserved sources, the share cap,
    and (given ``sources_md``) that SOURCES.md lists each source with its exact case count."""
    problems = [p for case in cases for p in check_case(case)]
    problems += _co_resident_links(cases)
    ids = Counter(str(case.get("id")) for case in cases)
    problems += [f"{i}: id used {n} times" for i, n in ids.items() if n > 1]
    if reserved is not None:
        problems += [
            f"{case['id']}: source {case['source']} is reserved"
            for case in cases
            if is_reserved(str(case.get("source", "")), reserved)
        ]
    shares = Counter(source_key(str(case.get("source", ""))) for case in cases)
    limit = max_share * len(cases)
    problems += [
        f"source {key} has {n} of {len(cases)} cases (over {max_share:.0%})"
        for key, n in shares.items()
        if n > limit
    ]
    if sources_md is not None:
        listed = sources_table(sources_md)
        for key, n in shares.items():
            if key not in listed:
                problems.append(f"SOURCES.md does not list {key}")
            elif listed[key] != n:
                problems.append(f"SOURCES.md gives {key} {listed[key]} cases, the corpus {n}")
        problems += [
            f"SOURCES.md lists {key}, which no case cites" for key in listed if key not in shares
        ]
    return problems


def sources_table(text: str) -> dict[str, int]:
    """``| `source` | cases | ...`` rows of SOURCES.md: source key -> case count."""
    table: dict[str, int] = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].startswith("`") and cells[1].isdigit():
            table[cells[0].strip("`")] = int(cells[1])
    return table


# --- the spread ---------------------------------------------------------------------------


# Lines only vLLM's V1 engine prints (when the source states no version).
_V1_MARKS = ("V1 LLM engine", "Available KV cache memory", "GPU KV cache size")


def version_line(case: dict[str, Any]) -> str:
    """The engine and the line of its version that sizes the cache differently."""
    engine = str(case["engine"])
    version = str(case.get("engine_version") or "")
    if engine != "vllm":
        line = re.match(r"\d+\.\d+", version)
        return f"{engine} {line.group(0)}" if line else engine
    text = " ".join(case.get("quotes") or [])
    match = re.match(r"(\d+)\.(\d+)", version)
    if match:
        minor = (int(match.group(1)), int(match.group(2)))
        if minor < (0, 4):
            return "vllm V0 <0.4"
        if minor < (0, 8):
            return "vllm V0 0.4-0.7" if "V1 LLM engine" not in text else "vllm V1 0.7"
        if minor < (0, 11) and "V0 LLM engine" in text:
            return "vllm V0 0.8-0.10"
        return "vllm V1 0.8-0.10" if minor < (0, 11) else "vllm V1 0.11+"
    if any(mark in text for mark in _V1_MARKS):
        return "vllm V1 (version not stated)"
    return "vllm V0 (version not stated)"


def gpu_family(case: dict[str, Any]) -> str:
    gpu = str(case.get("gpu") or "")
    if not gpu:
        return "not stated"
    for prefix in ("NVIDIA GeForce ", "NVIDIA ", "AMD Instinct ", "Tesla "):
        if gpu.startswith(prefix):
            gpu = gpu[len(prefix) :]
    return gpu


def parallelism(case: dict[str, Any]) -> str:
    tp = case.get("tensor_parallel_size") or 1
    pp = case.get("pipeline_parallel_size") or 1
    dp = case.get("data_parallel_size") or 1
    parts = [f"TP{tp}"] + ([f"PP{pp}"] if pp > 1 else []) + ([f"DP{dp}"] if dp > 1 else [])
    return " ".join(parts)


_CLASSES = (
    ("vision", r"vl|vision|gemma-3-4b|gemma-3-12b|gemma-3-27b|llava|pixtral|minicpm-v|ocr"),
    ("mla", r"deepseek-v2|deepseek-v3|deepseek-r1(?!-distill)|kimi-k2|deepseek v3|deepseek2|mla"),
    (
        "hybrid linear",
        r"qwen3\.5|qwen3\.6|qwen3\.8|qwen3-next|coder-next|mamba|jamba|nemotron-h|granite-4|kimi-linear",
    ),
    (
        "moe",
        r"mixtral|moe|a3b|a10b|a22b|a800m|gpt-oss|qwen3-30b|qwen3-235b|maverick|scout|glm-4\.5"
        r"|minimax-m2",
    ),
    ("sliding window", r"gemma-2|gemma2|gemma-3|gemma3|mistral-7b-instruct-v0\.1"),
)


def _outcome(case: dict[str, Any]) -> str:
    if case["logged"].get("error"):
        return "refusal"
    if case["logged"].get("non_memory_error"):
        return "failed (not memory)"
    return "started"


def model_class(case: dict[str, Any]) -> str:
    """A coarse class from the model's name (dense unless the name says otherwise)."""
    name = str(case.get("model") or "").lower()
    for label, pattern in _CLASSES:
        if re.search(pattern, name):
            return label
    return "dense"


# Quantisation methods as engines print them, then as model names carry them.
_QUANT_METHODS = ("mxfp4", "nvfp4", "modelopt", "awq", "gptq", "marlin", "bitsandbytes", "fp8")
_QUANT_METHODS += ("gguf", "auto_round")


def quant_label(case: dict[str, Any]) -> str:
    raw = str(case.get("quantization") or "").lower()
    name = str(case.get("model") or "").lower()
    for label in _QUANT_METHODS:
        if label in raw:
            return "nvfp4" if label == "modelopt" else label
    for label in ("awq", "gptq", "bnb-4bit", "fp8", "nvfp4", "int4", "gguf"):
        if label in name:
            return "bitsandbytes" if label == "bnb-4bit" else label
    return "none (16-bit)"


def kv_label(case: dict[str, Any]) -> str:
    raw = str(case.get("kv_cache_dtype") or "")
    if not raw or raw in ("auto", "bfloat16", "float16", "k=f16,v=f16"):
        return "16-bit"
    return raw


def _graphs(enforce_eager: bool | None) -> str:
    return {True: "eager", False: "graphs", None: "not stated"}[enforce_eager]


def spread(cases: Iterable[dict[str, Any]]) -> dict[str, Counter[str]]:
    """Counts of the corpus along each axis the README summarises."""
    cases = list(cases)
    return {
        "engine and version line": Counter(version_line(c) for c in cases),
        "GPU": Counter(gpu_family(c) for c in cases),
        "parallelism": Counter(parallelism(c) for c in cases),
        "model class": Counter(model_class(c) for c in cases),
        "weights": Counter(quant_label(c) for c in cases),
        "KV cache dtype": Counter(kv_label(c) for c in cases),
        "CUDA graphs": Counter(_graphs(c.get("enforce_eager")) for c in cases),
        "outcome": Counter(_outcome(c) for c in cases),
    }


def spread_markdown(cases: Iterable[dict[str, Any]]) -> str:
    """The README's spread section, one table per axis (most common first)."""
    cases = list(cases)
    sources = Counter(source_key(str(c["source"])) for c in cases)
    top_key, top_n = sources.most_common(1)[0] if sources else ("-", 0)
    lines = [
        f"{len(cases)} cases from {len(sources)} sources; the largest source, `{top_key}`, "
        f"has {top_n} ({top_n / max(len(cases), 1):.1%}).",
        "",
    ]
    for axis, counts in spread(cases).items():
        lines += [f"| {axis} | cases |", "|---|---:|"]
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        lines += [f"| {label} | {n} |" for label, n in ranked]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
