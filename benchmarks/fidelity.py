"""Replay every calibration log through kvlint and report how close its engine accounting comes.

    python benchmarks/fidelity.py              # in-sample and leave-one-source-out tables
    python benchmarks/fidelity.py --cases      # and one row per case
    python benchmarks/fidelity.py --sources    # and one row per source (out of sample)
    python benchmarks/fidelity.py --fit        # the constants fitted on every case, with cases
    python benchmarks/fidelity.py --write-band # regenerate fitted.py and band_logs.py

Reads both corpora of real start-up logs: ``../shared/fixtures/engine-logs/engine_logs.jsonl``
and the repository's ``tests/fixtures/engine-logs/corpus.jsonl`` (same schema; see their
READMEs). For each case it builds a Deployment from the logged settings, resolves the model
through kvlint's catalog (else the shared ``hf-configs`` fixture) and the GPU through kvlint's
GPU catalog (else the total the log prints), and compares:

* available KV memory predicted from the GPU, settings and model alone, per GPU (vLLM);
* ``GPU KV cache size`` tokens predicted from the logged available memory (passed as
  ``kv_cache_memory_bytes``, so only the paging is tested: no constant enters it);
* the start / refuse verdict, three-valued with the band (starts, refuses, borderline), for
  every case that logs an outcome;
* whether the logged available memory lies inside kvlint's 90% band;
* for the other engines that size a pool from the GPU (TensorRT-LLM, SGLang, TGI): the pool
  memory their logs state against the one predicted, the residuals their band is built from
  (kvlint/engines/band.py), and that band's calibration, in-sample and leave-one-source-out.

Two tables. **In-sample**: the memory model's constants fitted on every case, then every case
predicted with them. **Leave-one-source-out** (the figure quoted): each source's cases (a
thread, a repository, a page; a sweep is one source) predicted with constants fitted without
that source, and with a band built from the out-of-sample residuals of the other sources only.
No source in ``RESERVED.md`` is read: the loader refuses a corpus that holds one.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import json
import re
import statistics
import sys
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import replace as dc_replace
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kvlint.deployment import Deployment  # noqa: E402
from kvlint.deployment import Sourced  # noqa: E402
from kvlint.engines import account as engine_account  # noqa: E402
from kvlint.engines import band as engine_band  # noqa: E402
from kvlint.engines import estimate  # noqa: E402
from kvlint.engines import facts as engine_facts  # noqa: E402
from kvlint.engines import settle  # noqa: E402
from kvlint.engines.sizer import size  # noqa: E402
from kvlint.engines.trtllm.defaults import BUILD_PY_MAX_INPUT_LEN  # noqa: E402
from kvlint.engines.vllm import accounting as vllm_accounting  # noqa: E402
from kvlint.engines.vllm import band as vllm_band  # noqa: E402
from kvlint.engines.vllm.effective import VllmSettled  # noqa: E402
from kvlint.engines.vllm.memory import CONSTANTS  # noqa: E402
from kvlint.engines.vllm.memory import LINES  # noqa: E402
from kvlint.engines.vllm.memory import PRIORS  # noqa: E402
from kvlint.engines.vllm.memory import MemoryConstants  # noqa: E402
from kvlint.engines.vllm.memory import activation_bytes  # noqa: E402
from kvlint.engines.vllm.memory import forward_bytes  # noqa: E402
from kvlint.engines.vllm.memory import graph_width  # noqa: E402
from kvlint.engines.vllm.memory import memory_line  # noqa: E402
from kvlint.engines.vllm.memory import native_sampler  # noqa: E402
from kvlint.engines.vllm.memory import sampler_bytes  # noqa: E402
from kvlint.estimate import EngineEstimate  # noqa: E402
from kvlint.finding import Span  # noqa: E402
from kvlint.gpus import GpuSpec  # noqa: E402
from kvlint.gpus import gpu_variants  # noqa: E402
from kvlint.gpus import lookup_gpu  # noqa: E402
from kvlint.model.resolve import draft_spec  # noqa: E402
from kvlint.model.spec import ModelSpec  # noqa: E402
from kvlint.settled import Settled  # noqa: E402
from kvlint.units import GiB  # noqa: E402
from testing.engine_logs import is_reserved  # noqa: E402
from testing.engine_logs import reserved_sources  # noqa: E402
from testing.engine_logs import source_key  # noqa: E402

SHARED_LOGS = REPO.parent / "shared" / "fixtures" / "engine-logs"
LOGS = SHARED_LOGS / "engine_logs.jsonl"
RESERVED = SHARED_LOGS / "RESERVED.md"
CORPUS = REPO / "tests" / "fixtures" / "engine-logs" / "corpus.jsonl"
HF_CONFIGS = REPO.parent / "shared" / "fixtures" / "hf-configs"
FITTED = REPO / "kvlint" / "engines" / "vllm" / "fitted.py"
POOL_LOGS = REPO / "kvlint" / "engines" / "band_logs.py"
SPAN = Span("engine_logs.jsonl", 1, 1)

# Log lines only the V0 engine prints: such a case is replayed as a V0 release.
_V0_MARKERS = ("worker.py:267]", "executor_base.py", "model_runner.py:11", "# cuda blocks")
# The V0 engine's banner, which V1 releases print when VLLM_USE_V1=0 selects it.
_V0_ENGINE = "Initializing a V0 LLM engine"


def load_cases(path: Path = LOGS) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def load_corpora(paths: Iterable[Path]) -> list[dict[str, Any]]:
    """Every case of the corpora that exist, refusing any case from a reserved source."""
    reserved = reserved_sources(RESERVED.read_text()) if RESERVED.exists() else set()
    cases: list[dict[str, Any]] = []
    for path in paths:
        if not path.exists():
            continue
        for case in load_cases(path):
            if is_reserved(str(case.get("source", "")), reserved):
                raise SystemExit(f"{path}: case {case['id']} is from a reserved source")
            cases.append(case)
    return cases


# --- the case's model and GPU -------------------------------------------------------------

# Cases whose ``model`` field is free text: the Hub id the case's notes identify.
MODEL_NAMES = {
    "LLaMa 3.1 70B": "meta-llama/Meta-Llama-3.1-70B-Instruct",
    "Llama2-70b": "meta-llama/Llama-2-70b-hf",
    "deepseek-coder-6.7b-instruct": "deepseek-ai/deepseek-coder-6.7b-instruct",
    "mistralai_mistral-7b-instruct-v0.2": "mistralai/Mistral-7B-Instruct-v0.2",
    "Qwen/Qwen1.5-72B-Chat-GGUF": "Qwen/Qwen1.5-72B-Chat",
    # A Qwen3ForCausalLM fine-tune of Qwen3-0.6B-Base with the same config (28 layers, 8 KV
    # heads of 128, vocabulary 151,669); the logged pool, 112 KiB a token, is that shape's.
    "Qwen/Qwen3-Reranker-0.6B": "Qwen/Qwen3-0.6B",
}
_HUB_ID = re.compile(r"(?<![\w./~-])([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)")
_CACHE_DIR = re.compile(r"models--([\w.-]+)--([\w.-]+)")
# Words a checkpoint's name adds to its base model's: a quantisation, a mirror's tag.
_SUFFIX = re.compile(
    r"[-_.](?:unsloth|bnb|4bit|8bit|awq|gptq|int4|int8|w4a16|w8a16|w8a8|fp8|fp16|bf16|block|"
    r"dynamic|gguf|mxfp4|nvfp4|autoround|auto|sym|abliterated|v2|hf|q4_k_m|q8_0|f16)$",
    re.I,
)


def model_refs(text: str) -> list[str]:
    """The names a case's ``model`` text gives, most specific first: Hub ids anywhere in it, a
    Hub cache folder, the last part of a local path, and each without its checkpoint suffixes."""
    head = text.split(" (")[0].strip()
    refs = [MODEL_NAMES.get(head, head)]
    refs += [f"{m.group(1)}/{m.group(2)}" for m in _CACHE_DIR.finditer(text)]
    refs += [m.group(1) for m in _HUB_ID.finditer(text)]
    tail = head.rstrip("/").rsplit("/", 1)[-1]
    refs.append(tail.replace("___", "."))  # ModelScope writes '.' as '___'
    out: list[str] = []
    for ref in refs:
        bare = ref.rsplit("/", 1)[-1]
        for name in (ref, bare):
            while name and name not in out:
                out.append(name)
                stripped = _SUFFIX.sub("", name)
                if stripped == name:
                    break
                name = stripped
    return [ref for ref in out if ref and not ref.startswith(("~", "."))]


def resolve_model(case: dict[str, Any]) -> ModelSpec | None:
    """The case's model through the catalog, else the matching shared config fixture."""
    from kvlint.model.catalog import lookup

    for ref in model_refs(str(case.get("model") or "")):
        try:
            spec = lookup(ref)
        except Exception:  # an entry kvlint does not size
            spec = None
        if spec is not None:
            return spec
        candidate = HF_CONFIGS / (ref.replace("/", "__") + ".json")
        if "/" in ref and candidate.exists():
            from kvlint.model.hf import load_config_file

            return load_config_file(candidate)
    return None


def gpu_name(case: dict[str, Any]) -> str:
    return str(case.get("gpu") or "")


def gpu_of(case: dict[str, Any]) -> GpuSpec | None:
    """The GPU as kvlint's catalog knows it, else one of the total the log prints."""
    gpu = lookup_gpu(gpu_name(case))
    if gpu is not None:
        return gpu
    total = case["logged"].get("total_gpu_gib")
    if total:
        return GpuSpec("logged", f"{total} GiB as logged", round(total * GiB))
    return None


# Cases run on a nightly wheel whose version the log does not print: the release line the
# nightly belongs to, from its install line and date (every release in the range named gives the
# same figures: the same memory line, sampler and start-up check).
NIGHTLY_RELEASE = {
    # vllm-project/recipes moonshotai/Kimi-K2-Think.md installs `uv pip install -U vllm --pre
    # --extra-index-url https://wheels.vllm.ai/nightly`; its logs are dated 11-06 (2025): main
    # between 0.11.0 (October 2025) and 0.11.1, after #26859 (2025-10-15).
    "vllm-kimi-k2-thinking-8xh200-tp8-recipes": "0.11.1",
    "vllm-kimi-k2-thinking-8xh200-tp8-dcp8-recipes": "0.11.1",
    # vllm-project/vllm#32105, comment of 2026-01-28 "On ...58996f3 (nightly)": after 0.14.0
    # (the whole-model PP check, #29431) and before its fix in 0.16 (#33698); #34076 of
    # 2026-02-08 shows the same check on 0.15.2rc1.dev93.
    "vllm-glm-4.7-fp8-pp8-a100-kv-error": "0.15.0",
}


# TensorRT-LLM cases that name no release: the release their evidence puts them in. TensorRT-LLM
# 0.5.0 was its first public release (branch release/0.5.0, 2023-10-19 to 10-31; Triton's
# tensorrtllm_backend tagged v0.5.0 on 2023-11-02), 0.6.0 the next (backend v0.6.0,
# 2023-12-01). Both threads fall between, run engines built by the per-model build.py
# scripts with flags 0.5.0's examples/llama/build.py has (--use_inflight_batching,
# --paged_kv_cache, --tokens_per_block), and print 0.5's C++ runtime lines.
TRTLLM_RELEASE = {
    # NVIDIA/TensorRT-LLM#224, 2023-10-31: Triton backend on an A10, "Using 10718 tokens in
    # paged KV cache" (the 0.5 batch manager's line; later releases print blocks).
    "trtllm-llama-2-7b-a10-fp16-issue224": "0.5.0",
    # NVIDIA/TensorRT-LLM#401, 2023-11-15: gptManagerBenchmark built under /code/tensorrt_llm
    # (the 0.5 development container's path); a main-branch build of the weeks after 0.5.0
    # is possible, and 0.5.0 is the release that window holds.
    "trtllm-llama-2-7b-a100-40gb-batch-192-oom-issue401": "0.5.0",
}


# What a case's full log shows of its environment beyond the corpus fields: the settings that
# give the same engine behaviour, with the log line that shows it (the corpus quotes only the
# figures). dennislee22/vLLM-benchmarking at b474d1e (README: `pip install vllm ... ray[default]
# flashinfer-python`): "Using FlashInfer for top-p & top-k sampling." is VLLM_USE_FLASHINFER_
# SAMPLER=1 with the package there; its same-node A100 pairs print "Custom allreduce is disabled
# because your platform lacks GPU P2P capability" (NCCL then takes host memory, as with
# NCCL_P2P_DISABLE=1), the Ray ones "... because this process group spans across nodes" (one
# GPU per pod: --nnodes = TP).
_FLASHINFER = {"VLLM_USE_FLASHINFER_SAMPLER": "1"}
_NO_P2P = {**_FLASHINFER, "NCCL_P2P_DISABLE": "1"}
LOGGED_ENVIRONMENT: dict[str, dict[str, Any]] = {
    "vllm-qwen2-7b-a100-80g-tp1-gmu025": {"env": _FLASHINFER},
    "vllm-qwen2-7b-a100-80g-tp1-gmu05": {"env": _FLASHINFER},
    "vllm-qwen2-7b-2xa100-80g-tp2-gmu025": {"env": _NO_P2P},
    "vllm-qwen2-7b-2xa100-80g-tp2-gmu05": {"env": _NO_P2P},
    # both Ray workers: "FlashInfer is not available. Falling back to the PyTorch-native ..."
    "vllm-qwen2-7b-2xa100-40g-tp2-gmu05-ray": {"nnodes": 2},
    "vllm-gpt-oss-120b-4xa100-80g-tp4-gmu08": {"env": _FLASHINFER, "nnodes": 4},
    # noonghunna/club-3090#642, "(2x RTX 3090 PCIe Gen4 x8/x8, no NVLink, ...)": the reporter's
    # run sets NCCL_P2P_DISABLE=1 (custom all-reduce off), as the corpus notes record.
    "vllm-qwen36-27b-int4-2x3090-pcie-club642": {"env": {"NCCL_P2P_DISABLE": "1"}},
    # club-3090's archived 4 x RTX 3090 PCIe compose files (4a29ab5, models/qwen3.6-27b/vllm/
    # compose/_archive/multi4/autoround-int4/{dflash,fp8-mtp}.yml) set `NCCL_P2P_DISABLE=1` and
    # `VLLM_USE_FLASHINFER_SAMPLER=1` in the service's environment (and
    # --disable-custom-all-reduce); the corpus quotes only the figures.
    "vllm-qwen3.6-27b-autoround-int4-4x3090-tp4-dflash-club3090": {"env": _NO_P2P},
    "vllm-qwen3.6-27b-autoround-int4-4x3090-tp4-fp8kv-mtp-club3090": {"env": _NO_P2P},
}


# Settings a case's source passes in its code where the log does not echo them. Unsloth's
# fast_inference loads vLLM with enable_lora=True and max_loras=1 (unslothai/unsloth-zoo@ce232d6
# unsloth_zoo/vllm_utils.py load_vllm) and max_lora_rank = the notebook's from_pretrained
# argument (`max_lora_rank = lora_rank`), else the loader's default of 64 (unslothai/
# unsloth@015bdef unsloth/models/loader.py FastModel.from_pretrained; the Qwen2.5-VL notebook
# passes none); each rank below is read off the notebook the case cites.
UNSLOTH_LORA_RANK: dict[str, int] = {
    "vllm-llama-3.2-3b-instruct-a100-40g-unsloth-advanced-llama3-1-3b-grpo-lora": 64,
    "vllm-meta-llama-3.1-8b-instruct-unsloth-bnb-4bit-t4-unsloth-llama3-1-8b-grpo": 32,
    "vllm-mistral-7b-instruct-v0.3-bnb-4bit-4090-unsloth-mistral-v0-3-7b-grpo": 32,
    "vllm-qwen2.5-vl-7b-instruct-unsloth-bnb-4bit-t4-unsloth-qwen2-5-7b-vl-grpo": 64,
    "vllm-qwen3-8b-fp8-l4-unsloth-qwen3-8b-fp8-grpo": 32,
    "vllm-llama-3.2-3b-instruct-t4-unsloth-advanced-llama3-2-3b-grpo-lora": 64,
    "vllm-deepseek-r1-0528-qwen3-8b-t4-unsloth-deepseek-r1-0528-qwen3-8b-grpo": 32,
    "vllm-llama-3.2-1b-instruct-fp8-block-l4-unsloth-llama-fp8-grpo": 32,
    "vllm-phi-4-bnb-4bit-t4-unsloth-phi-4-14b-grpo": 16,
    "vllm-qwen2.5-3b-instruct-unsloth-bnb-4bit-t4-unsloth-qwen2-5-3b-grpo": 64,
    "vllm-qwen3-4b-base-t4-unsloth-qwen3-4b-grpo": 32,
}


def _version(case: dict[str, Any]) -> str | None:
    if case["id"] in NIGHTLY_RELEASE:
        return NIGHTLY_RELEASE[case["id"]]
    if case["id"] in TRTLLM_RELEASE:
        return TRTLLM_RELEASE[case["id"]]
    version = case.get("engine_version")
    quotes = " ".join(case.get("quotes") or [])
    if version is None and any(marker in quotes for marker in _V0_MARKERS):
        return "0.7.3"  # the log shows the V0 engine
    return str(version) if version else None


def _kv_dtype(case: dict[str, Any]) -> tuple[str | None, str | None]:
    raw = case.get("kv_cache_dtype")
    if not raw:
        return None, None
    if raw.startswith("k="):
        parts = dict(item.split("=") for item in raw.split(","))
        return parts.get("k"), parts.get("v")
    return str(raw), None


def _quant(case: dict[str, Any]) -> str | None:
    """The weight quantisation as vLLM's ``--quantization`` names it."""
    raw = str(case.get("quantization") or "").lower()
    name = str(case.get("model") or "").lower()
    if not raw or raw.startswith(("gguf", "none")):
        return None
    if "nvfp4" in raw or "modelopt_mixed" in raw or "fp4" in raw:
        return "nvfp4"
    if raw.startswith("compressed-tensors") or raw.startswith("auto_round"):
        if "nvfp4" in name:  # an NVFP4 checkpoint by its name (RedHatAI/*-NVFP4)
            return "nvfp4"
        if re.search(r"w4a16|int4|4bit|awq", name + raw) or raw.startswith("auto_round"):
            return "w4a16"
        return "compressed-tensors"
    return raw.split(" ")[0]


def _model_dtype(case: dict[str, Any]) -> str | None:
    """The dtype the log's engine config line shows (``dtype=torch.float32``)."""
    text = " ".join([*(case.get("quotes") or []), str(case.get("notes") or "")])
    match = re.search(r"dtype=torch\.(float32|float16|bfloat16)", text)
    return match.group(1) if match else None


def deployment(case: dict[str, Any], *, kv_bytes: int | None = None) -> Deployment:
    """The logged settings as a Deployment (``kv_bytes`` pins the available memory)."""

    def s(value: Any) -> Any:
        return None if value is None else Sourced(value, SPAN)

    k, v = _kv_dtype(case)
    dep = Deployment(
        path="engine_logs.jsonl",
        span=SPAN,
        name=case["id"],
        carrier="log",
        engine=Sourced(case["engine"], SPAN),
    )
    facts = LOGGED_ENVIRONMENT.get(case["id"], {})
    dep.engine_version = s(_version(case))
    dep.gpu = s(case.get("gpu"))
    dep.gpu_count = s(case.get("gpu_count"))
    dep.tensor_parallel_size = s(case.get("tensor_parallel_size"))
    dep.pipeline_parallel_size = s(case.get("pipeline_parallel_size"))
    dep.memory_fraction = s(case.get("gpu_memory_utilization"))
    dep.max_model_len = s(case.get("max_model_len"))
    dep.max_num_seqs = s(case.get("max_num_seqs"))
    dep.max_num_batched_tokens = s(case.get("max_num_batched_tokens"))
    dep.kv_cache_dtype = s(k)
    dep.kv_cache_dtype_v = s(v)
    dep.quantization = s(_quant(case))
    dep.block_size = s(case.get("block_size"))
    dep.enforce_eager = s(case.get("enforce_eager"))
    dep.kv_cache_memory_bytes = s(kv_bytes)
    dep.dtype = s(_model_dtype(case))
    # Memory another resident of the GPU held when this engine sized its pool, as the source
    # states it (the case's co_resident items name the logged figures): what --reserved-memory
    # or a plan's reserved_memory tells kvlint on a user's file.
    held = sum(float(item["gib"]) for item in case.get("co_resident") or [])
    dep.reserved_memory = s(round(held * GiB) if held else None)
    if case.get("data_parallel_size"):
        dep.data_parallel_size = s(case["data_parallel_size"])
    dep.env = {**dep.env, **{key: s(value) for key, value in facts.get("env", {}).items()}}
    if case["id"] in UNSLOTH_LORA_RANK:
        lora = {"enable-lora": True, "max-lora-rank": UNSLOTH_LORA_RANK[case["id"]]}
        dep.settings = {**dep.settings, **{key: s(value) for key, value in lora.items()}}
    dep.nnodes = s(facts.get("nnodes"))
    command = " ".join(case.get("quotes") or [])
    if _V0_ENGINE in command:
        # The engine says it runs V0 on a V1 release: the environment's VLLM_USE_V1=0.
        dep.env = {**dep.env, "VLLM_USE_V1": Sourced("0", SPAN)}
    for key, value in _paging_settings(case, command).items():
        dep.settings = {**dep.settings, key: Sourced(value, SPAN)}
    speculative = dep.settings.get("speculative-config")
    if speculative is not None and isinstance(speculative.value, dict):
        named = speculative.value.get("model")
        if isinstance(named, str) and named.strip():
            # The draft model as `check` resolves it: by path or name, offline (the catalog).
            dep.speculative_model = s(named)
            dep.draft_spec = draft_spec(named, offline=True)
    dcp = re.search(r"(?:--decode-context-parallel-size|-dcp)[ =](\d+)", command)
    if dcp:
        dep.settings = {**dep.settings, "decode-context-parallel-size": s(int(dcp.group(1)))}
    if case["engine"] == "trtllm" and _TRT_ENGINE.search(command):
        # An engine built by trtllm-build (or the 2023 build.py), run by the C++ runtime.
        dep.settings = {**dep.settings, "backend": Sourced("tensorrt", SPAN)}
        cap = _CPP_MAX_TOKENS.search(command)
        if cap:
            # The C++ runtime's max_tokens_in_paged_kv_cache, as its warning prints it.
            dep.settings = {**dep.settings, "kv-cache-config.max-tokens": s(int(cap.group(1)))}
        built = _build_flags(command)
        if "max_input_len" in built:
            dep.settings = {**dep.settings, "max-input-len": s(built["max_input_len"])}
        if "max_output_len" in built and dep.max_model_len is None:
            # build.py's engines hold max_input_len + max_output_len tokens a sequence.
            total = built.get("max_input_len", BUILD_PY_MAX_INPUT_LEN) + built["max_output_len"]
            dep.max_model_len = s(total)
    if "--enable-dp-attention" in command:
        dep.settings = {**dep.settings, "enable-dp-attention": Sourced(True, SPAN)}
        dp = re.search(r"--dp(?:-size)? (\d+)", command)
        dep.data_parallel_size = s(int(dp.group(1)) if dp else None)
    return dep


# The settings vLLM's "non-default args" line prints that page a hybrid's state: the case's own
# fields first (a source that states them in prose or a compose file), else the logged line.
_ARG_PATTERNS = {
    "enable-prefix-caching": r"'enable_prefix_caching': (True|False)",
    "mamba-ssm-cache-dtype": r"'mamba_ssm_cache_dtype': '(\w+)'",
    "mamba-cache-dtype": r"'mamba_cache_dtype': '(\w+)'",
    "mamba-cache-mode": r"'mamba_cache_mode': '(\w+)'",
    # and the multimodal ones: no tower loaded, no images profiled
    "language-model-only": r"'language_model_only': (True|False)",
    "skip-mm-profiling": r"'skip_mm_profiling': (True|False)",
}


def _paging_settings(case: dict[str, Any], command: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, pattern in _ARG_PATTERNS.items():
        match = re.search(pattern, command)
        if match:
            text = match.group(1)
            found[key] = {"True": True, "False": False}.get(text, text)
    limits = re.search(r"'limit_mm_per_prompt': (\{[^{}]*\})", command)
    if limits:
        with contextlib.suppress(ValueError, SyntaxError):
            found["limit-mm-per-prompt"] = json.dumps(ast.literal_eval(limits.group(1)))
    spec = re.search(r"'speculative_config': (\{[^{}]*\})", command)
    if spec:
        with contextlib.suppress(ValueError, SyntaxError):  # a quote cut inside the dict
            found["speculative-config"] = ast.literal_eval(spec.group(1))
    if case.get("enable_prefix_caching") is not None:
        found["enable-prefix-caching"] = case["enable_prefix_caching"]
    if case.get("speculative_config") is not None:
        found["speculative-config"] = case["speculative_config"]
    return found


# What a TensorRT-LLM log or command shows of an engine built ahead (the C++ runtime, not the
# PyTorch backend): the build command, the engine it loads, the runtime's own lines of 2023-24.
_TRT_ENGINE = re.compile(
    r"trtllm-build|/build\.py|Loaded engine size|Engine version|--backend[ =]tensorrt|"
    r"gptManagerBenchmark|bytes for k/v cache|tokens in paged KV cache\.|tensorrt_llm_model_name"
)


# The C++ runtime's warning when both are set: "Both freeGpuMemoryFraction (aka
# kv_cache_free_gpu_mem_fraction) and maxTokens (aka max_tokens_in_paged_kv_cache) are set (to
# 0.500000 and 2560, respectively)". The PyTorch backend's "Both free_gpu_memory_fraction and
# max_tokens are set" is not read: it also prints the profiling pass's own estimate.
_CPP_MAX_TOKENS = re.compile(
    r"maxTokens \(aka max_tokens_in_paged_kv_cache\) are set \(to [\d.]+ and (\d+)"
)
# The build flags a quoted build.py or trtllm-build command writes.
_BUILD_FLAG = re.compile(r"--(max_input_len|max_output_len)[ =](\d+)")


def _build_flags(command: str) -> dict[str, int]:
    return {m.group(1): int(m.group(2)) for m in _BUILD_FLAG.finditer(command)}


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


# --- one case replayed --------------------------------------------------------------------


@dataclass
class Replay:
    """One case replayed: kvlint's figures beside the logged ones (None when not comparable)."""

    case: dict[str, Any]
    spec: ModelSpec | None
    free: EngineEstimate | None  # from GPU, settings and model
    pinned: EngineEstimate | None  # from the logged available memory
    settled: VllmSettled | None = None
    engine_settled: Settled | None = None  # any engine's (the other engines' band regimes)

    @property
    def logged(self) -> dict[str, Any]:
        return dict(self.case["logged"])

    @property
    def source(self) -> str:
        return source_key(str(self.case["source"]))

    def avail_error(self) -> float | None:
        logged = _number(self.logged.get("available_kv_gib"))
        if not self.stated():
            return None
        if self.free is None or self.free.available_kv_bytes is None or not logged:
            return None
        if self.case["engine"] != "vllm" or logged <= 0:
            return None
        return (self.free.available_kv_bytes / GiB - logged) / logged

    def budget_gib(self) -> float | None:
        """``total x gpu_memory_utilization``: what the band's residuals are a share of."""
        e = self.free
        if e is None or e.gpu_total_bytes is None or e.memory_fraction is None:
            return None
        return e.gpu_total_bytes * e.memory_fraction / GiB

    def residual(self) -> float | None:
        """(logged - predicted) available memory, as a share of the budget (the band's unit);
        None where the files leave the GPU or the version open (the band spans those
        readings instead)."""
        logged = _number(self.logged.get("available_kv_gib"))
        budget = self.budget_gib()
        if self.avail_error() is None or logged is None or not budget:
            return None
        if self.settled is None or self.settled.version_assumed:
            return None
        if len(gpu_variants(gpu_name(self.case))) > 1:
            return None
        assert self.free is not None and self.free.available_kv_bytes is not None
        return (logged - self.free.available_kv_bytes / GiB) / budget

    def tokens_error(self) -> float | None:
        """vLLM: from the logged memory. SGLang and TGI log no memory: from the GPU alone.
        Not scored where the inputs are not stated (INPUTS_NOT_STATED): r1-distill's memory is
        the reporter's reading of one worker, and V0 sizes the pool from the smallest worker's
        (the executor's determine_num_available_blocks takes the minimum)."""
        if self.case["id"] in INPUTS_NOT_STATED:
            return None
        logged = _number(self.logged.get("kv_cache_tokens"))
        source = self.pinned if self.case["engine"] == "vllm" else self.free
        if source is None or not logged or source.kv_cache_tokens is None:
            return None
        return (source.kv_cache_tokens - logged) / logged

    def trtllm_pinned_error(self) -> float | None:
        """TensorRT-LLM: blocks (else tokens) from the logged pool against the logged ones."""
        e, lg = self.pinned, self.logged
        if e is None:
            return None
        for predicted, logged in (
            (e.num_blocks, lg.get("gpu_blocks")),
            (e.kv_cache_tokens, lg.get("kv_cache_tokens")),
        ):
            if predicted is not None and _number(logged):
                return (predicted - float(logged)) / float(logged)
        return None

    def concurrency_error(self) -> float | None:
        logged = _number(self.logged.get("max_concurrency"))
        if self.pinned is None or not logged or self.pinned.max_concurrency is None:
            return None
        return (self.pinned.max_concurrency - logged) / logged

    def pool_error(self) -> float | None:
        """The pool predicted from the GPU, settings and model alone against the logged one:
        blocks when the log gives blocks, else tokens (vLLM, SGLang, TGI, TensorRT-LLM), else
        the KV buffer (llama.cpp, one device), else the maximum concurrency."""
        e, lg = self.free, self.logged
        if e is None:
            return None
        pairs = [
            (e.num_blocks, lg.get("gpu_blocks")),
            (e.kv_cache_tokens, lg.get("kv_cache_tokens")),
        ]
        if (self.case.get("gpu_count") or 1) == 1 and lg.get("kv_buffer_mib"):
            pairs.append((e.kv_buffer_bytes, lg["kv_buffer_mib"] * 2**20))
        pairs.append((e.max_concurrency, lg.get("max_concurrency")))
        for predicted, logged in pairs:
            if predicted is not None and _number(logged):
                return (predicted - float(logged)) / float(logged)
        return None

    def logged_pool_gib(self) -> float | None:
        """Engines other than vLLM: the memory per GPU the engine sized its pool from, as the
        log states it: TensorRT-LLM's "available" figure times the fraction, else the pool it
        allocated, else its tokens at kvlint's bytes per token (the paging the pinned replays
        check); None where a token cap may have sized the pool (``max_tokens``,
        ``--max-total-tokens``) and the log states no memory it sized from, or attention data
        parallelism spreads the tokens over ranks."""
        e, lg, s = self.free, self.logged, self.engine_settled
        if e is None or s is None or e.memory_fraction is None:
            return None
        if _number(lg.get("trtllm_available_gib")):
            return float(lg["trtllm_available_gib"]) * e.memory_fraction
        capped = getattr(s, "max_tokens", None) or getattr(s, "max_total_tokens", None)
        if capped or getattr(s, "attention_dp", False):
            return None
        if _number(lg.get("kv_pool_gib")):
            return float(lg["kv_pool_gib"])
        tokens = _number(lg.get("kv_cache_tokens"))
        if tokens is None and _number(lg.get("gpu_blocks")) and e.block_size:
            tokens = float(lg["gpu_blocks"]) * e.block_size
        if tokens is None or not e.bytes_per_token:
            return None
        return tokens * e.bytes_per_token / GiB

    def engine_residual(self) -> float | None:
        """Engines other than vLLM: (logged - predicted) pool memory per GPU as a share of the
        budget ``total x fraction``, the residual their band is built from; None where the case
        is not scored from the GPU (unified memory, HOST_SHARED_MEMORY), its inputs are not
        stated, its GPU name does not pin the memory, or it logs no memory its pool came from."""
        c, e = self.case, self.free
        if c["engine"] == "vllm" or engine_facts(c["engine"]).pool_is_cells:
            return None
        if c["id"] in HOST_SHARED_MEMORY or not self.stated() or e is None:
            return None
        if len(gpu_variants(gpu_name(c))) > 1 or e.fits is False:
            return None
        if e.available_kv_bytes is None or e.gpu_total_bytes is None or not e.memory_fraction:
            return None
        logged = self.logged_pool_gib()
        if logged is None:
            return None
        budget = e.gpu_total_bytes * e.memory_fraction / GiB
        return (logged - e.available_kv_bytes / GiB) / budget

    def in_band(self) -> bool | None:
        """The logged available memory inside the predicted band (None without a band)."""
        logged = _number(self.logged.get("available_kv_gib"))
        e = self.free
        if self.avail_error() is None or logged is None or e is None:
            return None
        if e.available_kv_bytes_low is None or e.available_kv_bytes_high is None:
            return None
        # The log rounds to 0.01 GiB.
        low, high = e.available_kv_bytes_low / GiB - 0.005, e.available_kv_bytes_high / GiB + 0.005
        return low <= logged <= high

    def stated(self) -> bool:
        """The case states what the prediction needs: a GPU kvlint can size (a name or the
        logged total), the parallel layout (TP, or one GPU), and a model it resolves."""
        c = self.case
        layout = c.get("gpu_count") == 1 or any(
            c.get(key) is not None for key in ("tensor_parallel_size", "pipeline_parallel_size")
        )
        layout = layout or (c.get("gpu_count") is None and "TP" not in " ".join(c["quotes"]))
        gpu = gpu_of(c) is not None or bool(gpu_variants(gpu_name(c)))
        return self.spec is not None and gpu and layout and c["id"] not in INPUTS_NOT_STATED

    def logged_refusal(self) -> bool | None:
        """True when the log shows a memory refusal, False when it started, None otherwise
        (also when the GPU was busy with another process: no file says that)."""
        if self.logged.get("non_memory_error") or self.case["id"] in NOT_A_MEMORY_REFUSAL:
            return None
        if self.case["id"] in OUTCOME_NOT_QUOTED:
            return None
        if not self.stated():
            return None
        busy = _BUSY.search(str(self.logged.get("error") or ""))
        if busy and float(busy.group(1)) < float(busy.group(2)) - 3:
            return None
        return bool(self.logged.get("error"))

    def start_verdict(self) -> tuple[bool, bool] | None:
        """(predicted refusal, logged refusal) at the point prediction."""
        logged = self.logged_refusal()
        if logged is None or self.free is None or self.free.fits is None:
            return None
        return (not self.free.fits, logged)

    def banded_verdict(self) -> tuple[str, bool] | None:
        """(starts / refuses / borderline, logged refusal)."""
        logged = self.logged_refusal()
        if logged is None or self.free is None or self.free.verdict is None:
            return None
        return (self.free.verdict, logged)

    def verdict(self) -> tuple[bool, bool] | None:
        """(predicted refusal, logged refusal) for cases that log a memory refusal."""
        v = self.start_verdict()
        return v if v is not None and v[1] else None


# vLLM's start-up check on a GPU another process holds: "Free memory on device (16.01/93.0 GiB)",
# from 0.2x with the device named: "Free memory on device cuda:0 (54.34/79.18 GiB)".
_BUSY = re.compile(r"Free memory on device (?:\S+ )?\(([\d.]+)/([\d.]+) GiB\)")


# Cases that log an error whose wording blames memory where the engine's source shows the
# message covers any failure; the verdict is not counted for them (the summary names them).
NOT_A_MEMORY_REFUSAL = {
    "tgi-llama-2-70b-8xa10g-16000-error": (
        "TGI 0.9.3 (the Args it prints, with `max_batch_total_tokens: 16000` unwrapped and the "
        "ngrok fields, are 0.9.1-0.9.3's; GQA for Llama 2 70B arrived in 0.9.3) wraps its whole "
        "warm-up in `except Exception` and reports any failure as 'Not enough memory' "
        "(server/text_generation_server/models/flash_causal_lm.py at tag v0.9.3, warmup()). "
        "'with 2 prefill tokens' is len(batch.input_ids) after generate_token() set it to the "
        "two warm-up requests' next tokens: the cache (1,010 blocks, 0.62 GiB per GPU) was "
        "allocated and the 4,096-token prefill had run when it failed. Per GPU: 16.06 GiB of "
        "weights + 0.62 GiB of cache + under 1 GiB of logits and activations, of the A10G's "
        "22.06 GiB; the exception itself is not in the issue"
    ),
}


# Cases whose log goes on past the quoted lines to an outcome the case does not quote: whether
# the engine started is not known, so no verdict is scored (the summary counts them).
OUTCOME_NOT_QUOTED = {
    "vllm-deepseek-coder-6.7b-2xt4-tp2-fp16": (
        "the notes say an error follows the '# GPU blocks: 507' line and do not quote it; that "
        "line is V0's (distributed_gpu_executor.py, 0.4.3-0.5), whose start-up raises 'The "
        "model's max seq len (65536) is larger than the maximum number of tokens that can be "
        "stored in KV cache (8112)' for 507 blocks of 16 (deepseek-coder-6.7b: 16,384 positions "
        "x linear RoPE factor 4): recorded as started, it most likely refused"
    ),
}


# Cases whose source leaves out an input the prediction needs although the fields above look
# complete; neither their memory nor their verdict is scored (the summary counts them).
INPUTS_NOT_STATED = {
    "vllm-qwen2.5-7b-rtx4060-8g-negative-kv": "the checkpoint is not shown; 5.20 GiB of weights "
    "for a 7B model is a ~4-bit one the case does not name",
    "llama31-405b-fp8-8xh100-weights": "8 ranks load weights, but the TP flag is not shown",
    "vllm-deepseek-v3-mi308-v1-issue15928": "several ranks print, the TP size is not shown",
    "r1-distill-qwen-14b-2x4090-tp2-error": "8.69 GiB is the reporter's reading, not an engine "
    "line; 81,536 tokens is only ~7.46 GiB at 96 KiB per token per rank (the case's notes)",
}


def banded_accounting(engine: str) -> ModuleType | None:
    """The accounting module of an engine other than vLLM whose estimate takes a band table
    (``estimate(s, band)`` and ``regime_keys(s)``), else None."""
    if engine == "vllm":
        return None
    module = importlib.import_module(f"kvlint.engines.{engine}.accounting")
    return module if hasattr(module, "regime_keys") else None


def replay(
    case: dict[str, Any],
    constants: MemoryConstants = CONSTANTS,
    band: vllm_band.BandTable | None = None,
    engine_bands: Mapping[str, engine_band.BandTable] | None = None,
) -> Replay:
    """One case replayed; ``constants`` and ``band`` are vLLM's, ``engine_bands`` the other
    engines' band tables (the shipped ones by default)."""
    spec = resolve_model(case)
    if spec is None:
        return Replay(case, None, None, None)
    gpu = gpu_of(case)
    dep = deployment(case)
    settled = None
    any_settled: Settled | None = None

    def account(s: Settled) -> EngineEstimate:
        if isinstance(s, VllmSettled):
            return vllm_accounting.estimate(s, constants, band)
        module = banded_accounting(s.engine) if engine_bands is not None else None
        if module is not None and engine_bands is not None:
            table = engine_bands.get(s.engine, engine_band.EMPTY)
            return module.estimate(s, table)  # type: ignore[no-any-return]
        return engine_account(s)

    if gpu is not None and gpu.key == "logged":
        # No GPU name the catalog knows: the log's own total, past the sizer's lookup.
        dep.gpu = None
        found = settle(dep, spec, gpu)
        free = account(found) if found is not None else estimate(dep, spec, gpu)
        settled = found if isinstance(found, VllmSettled) else None
        any_settled = found
    else:
        sizing = size(dep, spec, account=account)
        free = sizing.engine or estimate(dep, spec, gpu)  # an engine kvlint does not size
        settled = sizing.settled if isinstance(sizing.settled, VllmSettled) else None
        any_settled = sizing.settled
    pinned = None
    avail = case["logged"].get("available_kv_gib")
    if case["engine"] == "trtllm":
        budget = trtllm_budget(case)
        if budget is not None:  # the pool alone: no GPU, so only the budget sizes it
            pinned = estimate(deployment(case, kv_bytes=budget), spec, None)
    elif avail and avail > 0:
        pinned = estimate(deployment(case, kv_bytes=round(avail * GiB)), spec, gpu)
    return Replay(case, spec, free, pinned, settled, any_settled)


def trtllm_budget(case: dict[str, Any]) -> int | None:
    """TensorRT-LLM's pool as its log gives it: the allocated pool ("Allocated X GiB for max
    tokens in paged KV cache"), else the free memory it sized from ("available: Y GiB") times
    free_gpu_memory_fraction (0.9 when the case does not state it)."""
    logged = case["logged"]
    if _number(logged.get("kv_pool_gib")):
        return round(float(logged["kv_pool_gib"]) * GiB)
    if _number(logged.get("trtllm_available_gib")):
        fraction = case.get("gpu_memory_utilization") or 0.9
        return round(float(logged["trtllm_available_gib"]) * fraction * GiB)
    return None


def _figure(e: EngineEstimate | None, logged: Any, unit: str) -> str:
    if e is None or not logged:
        return "-"
    got = e.num_blocks if unit == "blocks" else e.kv_cache_tokens
    return "-" if got is None else f"{got:,} ({(got - logged) / logged:+.2%})"


def trtllm_report(replays: list[Replay]) -> None:
    """TensorRT-LLM's pool: tokens (or blocks) from the GPU and settings, and from the pool
    its log states (the per-token size and block rounding alone)."""
    rows = [r for r in replays if r.case["engine"] == "trtllm"]
    if not rows:
        return
    print(f"\nTensorRT-LLM: {len(rows)} cases, {sum(r.spec is not None for r in rows)} resolved")
    for r in rows:
        lg = r.logged
        logged = lg.get("gpu_blocks") or lg.get("kv_cache_tokens")
        unit = "blocks" if lg.get("gpu_blocks") else "tokens"

        shown = f"{logged:,} {unit}" if logged else "no pool logged"
        why = "" if r.spec is not None else "  (model not resolved)"
        print(
            f"  {r.case['id'][:60]:60} logged {shown}; from GPU {_figure(r.free, logged, unit)}; "
            f"given the logged memory {_figure(r.pinned, logged, unit)}{why}"
        )
    scored = [r for r in rows if r.case["id"] not in HOST_SHARED_MEMORY]
    gpu = [e for r in scored if (e := r.pool_error()) is not None]
    given = [e for r in rows if (e := r.trtllm_pinned_error()) is not None]
    print(f"  pool from GPU and settings: {_count(gpu, 0.10)} within 10%")
    for r in rows:
        if r.case["id"] in HOST_SHARED_MEMORY and r.pool_error() is not None:
            print(f"    not scored from GPU: {r.case['id']}: {HOST_SHARED_MEMORY[r.case['id']]}")
    print(f"  pool given the logged memory: {_count(given, 0.02)} within 2%")
    verdicts = [v for r in rows if (v := r.start_verdict()) is not None]
    right = sum(1 for predicted, logged in verdicts if predicted == logged)
    shown = f"{right}/{len(verdicts)}" if verdicts else "-"
    print(f"  start / refuse at the point prediction: {shown} right")
    for r in rows:
        v = r.start_verdict()
        if v is not None and v[0] != v[1]:
            said = "refuses" if v[0] else "starts"
            print(f"    wrong: {r.case['id']} (predicted it {said})")


# Cases on unified memory whose log shows the host holding memory the pool is sized around:
# TensorRT-LLM takes its fraction of cudaMemGetInfo's free memory, which on these parts is what
# the host's processes and page cache leave, a figure no deployment file states. The pool from
# the GPU and settings is printed but not scored; the pool given the logged memory still is.
HOST_SHARED_MEMORY = {
    "trtllm-gpt-oss-120b-dgx-spark-v110rc3-pytorch-fraction-0.9-jeansblog": (
        "GB10 unified memory: 'Memory used after loading model weights (outside torch) in memory "
        "usage profiling: 49.78 GiB' beside 63.52 GiB inside torch, of 119.70 GiB; the host's "
        "share of the unified memory is in no deployment file"
    ),
}


def _count(errors: list[float], limit: float) -> str:
    if not errors:
        return "-"
    return f"{sum(1 for e in errors if abs(e) <= limit)}/{len(errors)}"


# --- the fit --------------------------------------------------------------------------------


def _median(values: list[float], default: float) -> float:
    return statistics.median(values) if values else default


def _tp_class(s: VllmSettled) -> int:
    """0: TP 1 (and no PP), 1: TP >= 2 over peer links, 2: pipeline parallel alone. Tensor
    parallelism without peer links is charged as one GPU (memory.non_torch_bytes): class 0."""
    if s.tp > 1 and s.peer_links:
        return 1
    return 2 if s.pp > 1 else 0


def _native(s: VllmSettled) -> bool:
    vendor = s.gpu.vendor if s.gpu is not None else None
    return native_sampler(s.numbers, vendor, s.v0, s.flashinfer_sampler)


def _budget(r: Replay) -> float | None:
    s, gpu = r.settled, r.free.gpu_total_bytes if r.free is not None else None
    if s is None or gpu is None or s.kv_cache_memory_bytes is not None:
        return None
    return gpu * s.fraction


# What the source allows each activation constant to be (kvlint/engines/vllm/memory.py): a fit
# outside is a case the model does not describe, not a constant.
LOGIT_RANGE = (8.0, 24.0)  # FlashInfer: fp32 logits and probabilities at least, no sort
NATIVE_LOGIT_RANGE = (30.0, 48.0)  # the native path's 37 bytes, give or take its buffers
ACTIVATION_RANGE = (6.0, 16.0)  # gate_up and the activation's output at least (6 bytes)
# Non-torch memory per layout (TP 1, TP >= 2, PP alone): a CUDA context and cuBLAS at most on
# one GPU, NCCL and the custom all-reduce buffers beside them with TP.
NON_TORCH_RANGE = ((0.0, 1.0 * GiB), (0.0, 4.0 * GiB), (0.0, 2.0 * GiB))
MIN_CELL_CASES = 3  # a release line's own non-torch figure needs three logs


def _within(value: float, bounds: tuple[float, float]) -> float:
    return min(max(value, bounds[0]), bounds[1])


# Per fitted constant: the per-case values behind it, with each case's id and source.
FitDetails = dict[str, list[tuple[float, str, str]]]


def fit(
    replays: list[Replay], prior: MemoryConstants = PRIORS, details: FitDetails | None = None
) -> MemoryConstants:
    """The memory model's constants fitted on ``replays`` (each names what sets it):

    * bytes per logit: the dense single-stage cases with a >= 100k vocabulary whose log prints
      the torch peak (the sampler is the peak), peak / (vocab x rows);
    * bytes per MLP activation: the cases whose peak is the forward pass (pipeline stage 0, or
      a vocabulary under 40k), peak / (intermediate / tp x batched tokens);
    * non-torch per release line and layout: what the budget holds besides the logged weights,
      the logged KV memory and the modelled activations and graphs, the median per cell;
    * the CUDA-graph pool: least squares on the 0.19 estimator's own figure.
    """
    used: dict[str, int] = {}
    per_logit: list[float] = []
    per_native: list[float] = []
    per_act: list[float] = []
    found: FitDetails = details if details is not None else {}

    def note(name: str, value: float, r: Replay) -> None:
        found.setdefault(name, []).append((value, str(r.case["id"]), r.source))

    for r in replays:
        s, peak = r.settled, _number(r.logged.get("activation_peak_gib"))
        if s is None or r.spec is None or peak is None or s.version_assumed:
            continue
        spec, rows = r.spec, min(s.seqs, s.batched)
        # A vision-language model's profile run starts with its encoder, sized with the
        # forward pass's own constant (memory.encoder_bytes): its peak would fit that constant
        # on its own prediction (Qwen2-VL-2B's 2.65 GiB is the tower's), and where the sampler
        # is the peak the encoder cache's embeddings ride on it. Left out of both fits.
        vlm = bool(spec.vision_param_count)
        native = _native(s)
        forward = forward_bytes(spec, max_num_batched_tokens=s.batched, tp=s.tp, constants=prior)
        sampler = sampler_bytes(spec, rows=rows, native=native, constants=prior)
        if s.pp > 1 or forward > 2 * sampler:
            # the forward pass is the peak (a first pipeline stage runs no sampler)
            per_act.append(peak * GiB / (forward / prior.bytes_per_intermediate_token))
            note("bytes_per_intermediate_token", per_act[-1], r)
        elif sampler > 2 * forward and not spec.num_experts and rows >= 64 and not vlm:
            (per_native if native else per_logit).append(peak * GiB / (spec.vocab_size * rows))
            name = "bytes_per_logit_native" if native else "bytes_per_logit"
            note(name, (per_native if native else per_logit)[-1], r)
    constants = dc_replace(
        prior,
        bytes_per_logit=_within(_median(per_logit, prior.bytes_per_logit), LOGIT_RANGE),
        bytes_per_logit_native=_within(
            _median(per_native, prior.bytes_per_logit_native), NATIVE_LOGIT_RANGE
        ),
        bytes_per_intermediate_token=_within(
            _median(per_act, prior.bytes_per_intermediate_token), ACTIVATION_RANGE
        ),
    )
    used["bytes_per_logit"], used["bytes_per_logit_native"] = len(per_logit), len(per_native)
    used["bytes_per_intermediate_token"] = len(per_act)

    rows_g, ys_g = [], []
    for r in replays:
        s, estimated = r.settled, _number(r.logged.get("cuda_graph_estimated_gib"))
        if s is None or r.spec is None or estimated is None:
            continue
        from kvlint.arith.weights import pp_layer_ranges

        start, end = pp_layer_ranges(r.spec.num_layers, s.pp)[0]
        rows_g.append((1.0, graph_width(r.spec, tp=s.tp, layers_on_gpu=end - start)))
        ys_g.append(estimated * GiB)
        note("graph", estimated * GiB, r)
    if len(rows_g) >= 3:
        base, per = _least_squares(rows_g, ys_g)
        constants = dc_replace(constants, graph_base=base, graph_bytes_per_hidden_layer=per)
    used["graph"] = len(rows_g)

    cells: dict[tuple[str, int], dict[str, list[float]]] = {}
    for r in replays:
        s, budget = r.settled, _budget(r)
        weights = _number(r.logged.get("weights_gib"))
        avail = _number(r.logged.get("available_kv_gib"))
        if s is None or r.spec is None or budget is None or weights is None or avail is None:
            continue
        if r.logged.get("error") or s.version_assumed or not r.stated():
            continue
        if r.spec.vision_param_count:
            # Left out although the encoder profile is modelled now: a tower kvlint does not
            # profile (Llama 4's, Pixtral's) would count as non-torch memory, and so would the
            # 10 GiB the 0.11.2 Gemma 3 log on a B200 spends beyond every modelled term.
            continue
        if s.gpu is not None and s.gpu.memory_kind == "unified":
            # GB10 and other unified-memory parts: the free memory the profiler reads is the
            # host's too (page cache, other processes), so what is left over is not the
            # engine's non-torch memory (DGX Spark logs leave 0.5-3.7 GiB here).
            continue
        last = s.pp == 1  # the log prints stage 0's figures: the sampler runs on the last
        act = activation_bytes(
            r.spec,
            max_num_batched_tokens=s.batched,
            max_num_seqs=s.seqs,
            last_stage=last,
            tp=s.tp,
            native=_native(s),
            constants=constants,
        )
        graphs = r.free.cudagraph_bytes or 0 if r.free is not None else 0
        rest = budget - weights * GiB - avail * GiB - act - graphs
        cell = cells.setdefault((memory_line(s.numbers, s.v0), _tp_class(s)), {})
        cell.setdefault(r.source, []).append(rest)
        layout = ("tp1", "tp>1", "pp")[_tp_class(s)]
        note(f"non_torch {memory_line(s.numbers, s.v0)} {layout}", rest, r)
    table = dict(constants.non_torch)
    for line in LINES:
        row = list(table.get(line, table["v1-0.11"]))
        for k in range(3):
            values = [v for vs in cells.get((line, k), {}).values() for v in vs]
            if len(values) < MIN_CELL_CASES:
                # too few logs on this line: the same layout on every line
                values = [
                    v
                    for (_, kk), cell in cells.items()
                    if kk == k
                    for vs in cell.values()
                    for v in vs
                ]
            if values:
                row[k] = _within(statistics.median(values), NON_TORCH_RANGE[k])
            used[f"non_torch {line} {('tp1', 'tp>1', 'pp')[k]}"] = sum(
                len(vs) for vs in cells.get((line, k), {}).values()
            )
        table[line] = (row[0], row[1], row[2])
    constants = dc_replace(constants, non_torch=tuple((ln, table[ln]) for ln in LINES))
    return dc_replace(constants, fitted_on=tuple(sorted(used.items())))


def _least_squares(rows: list[tuple[float, float]], ys: list[float]) -> tuple[float, float]:
    """y = a*x1 + b*x2 with no intercept (normal equations)."""
    s11 = sum(x1 * x1 for x1, _ in rows)
    s12 = sum(x1 * x2 for x1, x2 in rows)
    s22 = sum(x2 * x2 for _, x2 in rows)
    t1 = sum(x1 * y for (x1, _), y in zip(rows, ys, strict=True))
    t2 = sum(x2 * y for (_, x2), y in zip(rows, ys, strict=True))
    det = s11 * s22 - s12 * s12
    return (t1 * s22 - t2 * s12) / det, (s11 * t2 - s12 * t1) / det


# --- in sample, out of sample ---------------------------------------------------------------


def in_sample(
    cases: list[dict[str, Any]], details: FitDetails | None = None
) -> tuple[MemoryConstants, list[Replay]]:
    """Constants fitted on every case; every case predicted with them (band: the shipped one).
    ``details`` receives the per-case values behind each constant."""
    first = [replay(case) for case in cases]
    constants = fit(first, details=details)
    return constants, [replay(case, constants) for case in cases]


def out_of_sample(cases: list[dict[str, Any]]) -> list[Replay]:
    """Each source predicted with constants fitted without it, and a band from the other
    sources' out-of-sample residuals (nested: no figure of the source enters its band)."""
    first = [replay(case) for case in cases]
    point = out_of_sample_point(cases, first)
    out: list[Replay] = list(first)
    for indices in _by_source(first).values():
        held = set(indices)
        table = build_band([r for i, r in enumerate(point) if i not in held])
        constants = fit([r for i, r in enumerate(first) if i not in held])
        others = build_engine_bands([r for i, r in enumerate(first) if i not in held], floor=False)
        for i in indices:
            out[i] = replay(cases[i], constants, table, others)
    return out


def out_of_sample_point(
    cases: list[dict[str, Any]], first: list[Replay] | None = None
) -> list[Replay]:
    """Each source predicted with constants fitted without it, no band (the band's residuals)."""
    first = first if first is not None else [replay(case) for case in cases]
    out: list[Replay] = list(first)
    for indices in _by_source(first).values():
        held = set(indices)
        constants = fit([r for i, r in enumerate(first) if i not in held])
        for i in indices:
            out[i] = replay(cases[i], constants, vllm_band.EMPTY)
    return out


def _by_source(replays: list[Replay]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for i, r in enumerate(replays):
        groups.setdefault(r.source, []).append(i)
    return groups


def build_band(replays: list[Replay]) -> vllm_band.BandTable:
    """The band table from out-of-sample residuals: per regime (release line x model class x
    TP), the 5th and 95th percentiles of (logged - predicted) / budget."""
    residuals: dict[str, list[tuple[float, str]]] = {}
    for r in replays:
        e = r.residual()
        if e is None or r.settled is None:
            continue
        for key in vllm_band.regime_keys(r.settled):
            residuals.setdefault(key, []).append((e, r.source))
    return vllm_band.BandTable.from_residuals(residuals)


def build_engine_bands(
    replays: list[Replay], *, floor: bool = True
) -> dict[str, engine_band.BandTable]:
    """The other engines' band tables from their residuals, per regime (the engine's
    ``regime_keys``: backend or line x model class x TP, as coarse as the sources allow). With
    ``floor`` (what ships), an engine whose residuals come from fewer than MIN_SOURCES sources
    gets no table; without it (a source held out), its every-case cell stands on what is left."""
    residuals: dict[str, dict[str, list[tuple[float, str]]]] = {}
    for r in replays:
        e = r.engine_residual()
        module = banded_accounting(r.case["engine"])
        if e is None or module is None or r.engine_settled is None:
            continue
        cells = residuals.setdefault(r.case["engine"], {})
        for key in module.regime_keys(r.engine_settled):
            cells.setdefault(key, []).append((e, r.source))
    tables = {}
    for engine, cells in residuals.items():
        table = engine_band.BandTable.from_residuals(cells)
        every = table.rows.get("*")
        if floor and (every is None or every[3] < engine_band.MIN_SOURCES):
            continue
        # A finer regime holding the very residuals of every case is no regime of its own (all
        # the logs are of one class and TP): the table keeps the one cell, named as what it is.
        rows = {key: row for key, row in table.rows.items() if key == "*" or row != every}
        tables[engine] = engine_band.BandTable(rows)
    return tables


# The logs print the memory they sized their pool from to 0.01 GiB.
_LOGGED_ROUNDING_GIB = 0.005


def _inside(r: Replay, table: engine_band.BandTable | None) -> bool | None:
    """The case's residual inside ``table``'s band for it (None: no residual or no band)."""
    e = r.engine_residual()
    module = banded_accounting(r.case["engine"])
    if e is None or table is None or module is None or r.engine_settled is None:
        return None
    found = table.band_of(module.regime_keys(r.engine_settled))
    if found is None or r.free is None or r.free.gpu_total_bytes is None:
        return None
    assert r.free.memory_fraction is not None
    tol = _LOGGED_ROUNDING_GIB / (r.free.gpu_total_bytes * r.free.memory_fraction / GiB)
    return found.low - tol <= e <= found.high + tol


Calibration = tuple[list[Replay], list[bool], list[bool]]


def engine_calibration(replays: list[Replay]) -> dict[str, Calibration]:
    """Per engine with residuals: (its residual cases, inside the band fitted on every source
    (in-sample), inside the band fitted without the case's source (leave-one-source-out))."""
    scored = [r for r in replays if r.engine_residual() is not None]
    everything = build_engine_bands(scored, floor=False)
    out: dict[str, Calibration] = {}
    for engine in sorted({r.case["engine"] for r in scored}):
        rows = [r for r in scored if r.case["engine"] == engine]
        in_sample = [_inside(r, everything.get(engine)) for r in rows]
        held_out = []
        for r in rows:
            others = build_engine_bands([q for q in scored if q.source != r.source], floor=False)
            held_out.append(_inside(r, others.get(engine)))
        out[engine] = (
            rows,
            [b for b in in_sample if b is not None],
            [b for b in held_out if b is not None],
        )
    return out


def _by_source_share(rows: list[Replay], inside: list[bool]) -> str:
    """The share inside, each source weighing one."""
    per: dict[str, list[bool]] = {}
    for r, b in zip(rows, inside, strict=True):
        per.setdefault(r.source, []).append(b)
    return _fraction_share(sum(sum(v) / len(v) for v in per.values()), len(per))


def print_engine_bands(replays: list[Replay]) -> None:
    """The other engines' residuals, their bands and the bands' calibration (the share of cases
    inside their 90% band), in-sample and leave-one-source-out, beside vLLM's above."""
    print(
        "\nOTHER ENGINES' BANDS (residual: (logged - predicted) pool memory per GPU / "
        "(total x fraction))"
    )
    shipped = build_engine_bands(replays)
    for engine, (rows, in_sample, held_out) in engine_calibration(replays).items():
        sources = len({r.source for r in rows})
        name = engine_facts(engine).display
        table = shipped.get(engine)
        if banded_accounting(engine) is None:
            verdict = "no band (its accounting takes none)"
        elif table is None:
            verdict = f"no band (a band needs {engine_band.MIN_SOURCES} sources)"
        else:
            cells = ", ".join(
                f"{key} {low:+.4f} {high:+.4f}" for key, (low, high, _, _) in table.rows.items()
            )
            verdict = f"band {cells}"
        print(f"  {name}: {len(rows)} logs from {sources} sources; {verdict}")
        for r in rows:
            e = r.engine_residual()
            assert e is not None
            print(f"    {r.case['id'][:64]:64} {e:+.4f}")
        if in_sample:
            print(
                f"    inside the 90% band, in-sample (fitted on every source): "
                f"{_share(sum(in_sample), len(in_sample))}, each source weighing one "
                f"{_by_source_share(rows, in_sample)}"
            )
            print(
                f"    inside the 90% band, leave-one-source-out: "
                f"{_share(sum(held_out), len(held_out))}, each source weighing one "
                f"{_by_source_share(rows, held_out)}"
            )


# --- reports --------------------------------------------------------------------------------


def _share(hits: int, total: int) -> str:
    return f"{hits}/{total} ({hits / total:.0%})" if total else "-"


@dataclass
class Figures:
    avail: list[float]
    tokens: list[float]
    verdicts: list[tuple[bool, bool]]
    banded: list[tuple[str, bool]]
    band: list[bool]
    band_sources: dict[str, list[bool]]  # the same, per source

    @classmethod
    def of(cls, replays: list[Replay]) -> Figures:
        return cls(
            avail=[e for r in replays if (e := r.avail_error()) is not None],
            tokens=[
                e
                for r in replays
                if r.case["engine"] == "vllm" and (e := r.tokens_error()) is not None
            ],
            verdicts=[v for r in replays if (v := r.start_verdict()) is not None],
            banded=[v for r in replays if (v := r.banded_verdict()) is not None],
            band=[b for r in replays if (b := r.in_band()) is not None],
            band_sources=_in_band_by_source(replays),
        )

    def rows(self) -> list[tuple[str, str]]:
        a, t = self.avail, self.tokens
        decided = [(v, logged) for v, logged in self.banded if v != "borderline"]
        right = sum(1 for v, logged in decided if (v == "refuses") == logged)
        return [
            (
                "available KV memory within 10% (vLLM, GPU + settings + model)",
                _share(sum(1 for e in a if abs(e) <= 0.10), len(a))
                + (f", median |error| {statistics.median(abs(e) for e in a):.1%}" if a else ""),
            ),
            (
                "pool tokens within 2% given the logged memory (vLLM)",
                _share(sum(1 for e in t if abs(e) <= 0.02), len(t)),
            ),
            (
                "start / refuse at the point prediction",
                _share(sum(1 for p, q in self.verdicts if p == q), len(self.verdicts)),
            ),
            (
                "verdicts outside the band (starts / refuses) right",
                _share(right, len(decided))
                + f"; borderline {len(self.banded) - len(decided)} of {len(self.banded)}",
            ),
            ("logged memory inside the 90% band", _share(sum(self.band), len(self.band))),
            (
                "the same, each source weighing one",
                _fraction_share(
                    sum(sum(v) / len(v) for v in self.band_sources.values()),
                    len(self.band_sources),
                ),
            ),
        ]


def _in_band_by_source(replays: list[Replay]) -> dict[str, list[bool]]:
    out: dict[str, list[bool]] = {}
    for r in replays:
        inside = r.in_band()
        if inside is not None:
            out.setdefault(r.source, []).append(inside)
    return out


def _fraction_share(hits: float, total: int) -> str:
    return f"{hits:.1f}/{total} ({hits / total:.0%})" if total else "-"


def print_table(title: str, replays: list[Replay]) -> None:
    print(f"\n{title}")
    for label, value in Figures.of(replays).rows():
        print(f"  {label:64} {value}")


def print_cases(replays: list[Replay]) -> None:
    print(f"\n{'case':58} {'eng':8} {'avail':>8} {'band':>17} {'tokens':>8} verdict")
    for r in replays:
        e = r.free
        band = ""
        if e is not None and e.available_kv_bytes_low is not None:
            assert e.available_kv_bytes_high is not None
            band = f"{e.available_kv_bytes_low / GiB:.1f}-{e.available_kv_bytes_high / GiB:.1f}"
        verdict = r.banded_verdict()
        shown = "" if verdict is None else f"{verdict[0]}/{'refused' if verdict[1] else 'ran'}"
        model = "" if r.spec is not None else "  (model not resolved)"
        print(
            f"{r.case['id'][:58]:58} {r.case['engine']:8} {_pct(r.avail_error()):>8} "
            f"{band:>17} {_pct(r.tokens_error()):>8} {shown}{model}"
        )


def _pct(value: float | None) -> str:
    return "" if value is None else f"{value * 100:+.1f}%"


def print_sources(replays: list[Replay]) -> None:
    groups: dict[str, list[Replay]] = {}
    for r in replays:
        groups.setdefault(r.source, []).append(r)
    print(f"\n{'source (out of sample)':56} {'cases':>5} {'avail<=10%':>10} {'in band':>8}")
    for key, rows in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        f = Figures.of(rows)
        within = sum(1 for e in f.avail if abs(e) <= 0.10)
        avail = f"{within}/{len(f.avail)}" if f.avail else "-"
        band = f"{sum(f.band)}/{len(f.band)}" if f.band else "-"
        print(f"{key[:56]:56} {len(rows):>5} {avail:>10} {band:>8}")


def print_fit(constants: MemoryConstants, replays: list[Replay]) -> None:
    print("\nconstants fitted on every case (in-sample), with the number of cases behind each:")
    print(f"  bytes_per_logit = {constants.bytes_per_logit:.2f}")
    print(f"  bytes_per_logit_native = {constants.bytes_per_logit_native:.2f}")
    print(f"  bytes_per_intermediate_token = {constants.bytes_per_intermediate_token:.2f}")
    print(f"  graph_base = {constants.graph_base / GiB:.3f} GiB")
    print(f"  graph_bytes_per_hidden_layer = {constants.graph_bytes_per_hidden_layer:.3f}")
    for line, row in constants.non_torch:
        print(f"  non_torch {line}: " + ", ".join(f"{v / GiB:.2f} GiB" for v in row))
    for name, count in constants.fitted_on:
        print(f"    {name}: {count} cases")


def print_band(table: vllm_band.BandTable) -> None:
    print(
        f"\nthe band (out-of-sample residuals, a share of the budget; regimes with fewer than "
        f"{vllm_band.MIN_SOURCES} sources borrow a coarser one):"
    )
    for key in sorted(table.rows):
        low, high, cases, sources = table.rows[key]
        print(f"  {key:22} {low:+.4f} {high:+.4f}  {cases:3} logs from {sources} sources")


def _spread(details: FitDetails) -> list[str]:
    """``SPREAD`` of fitted.py: per constant the cases, the sources and the range of the
    per-case values it was fitted on (bytes for memory, bytes per element for the rest)."""
    lines = [
        "",
        "# What each constant holds over: (cases, sources, lowest and highest per-case value)",
        "# of the logs it was fitted on (non-torch and graphs in bytes; the others in bytes per",
        "# element), and the sources, most cases first. A constant fitted on one source holds",
        "# for that source's setting only (the band says how far it carries).",
        "SPREAD: dict[str, tuple[int, int, float, float]] = {",
    ]
    for name in sorted(details):
        values = [v for v, _, _ in details[name]]
        sources = {src for _, _, src in details[name]}
        lines.append(
            f'    "{name}": ({len(values)}, {len(sources)}, {min(values):.4f}, {max(values):.4f}),'
        )
    lines += ["}", "", "SOURCES: dict[str, tuple[str, ...]] = {"]
    for name in sorted(details):
        counts: dict[str, int] = {}
        for _, _, src in details[name]:
            counts[src] = counts.get(src, 0) + 1
        ranked = sorted(counts, key=lambda src: (-counts[src], src))
        one = f'    "{name}": ("{ranked[0]} ({counts[ranked[0]]})",),'
        if len(ranked) == 1 and len(one) <= 100:
            lines.append(one)  # as the formatter writes a one-item tuple
            continue
        lines.append(f'    "{name}": (')
        lines += [f'        "{src} ({counts[src]})",' for src in ranked]
        lines.append("    ),")
    lines.append("}")
    return lines


def write_fitted(
    constants: MemoryConstants,
    table: vllm_band.BandTable,
    cases: int,
    details: FitDetails | None = None,
) -> None:
    """``kvlint/engines/vllm/fitted.py``: the constants fitted on every case and the band from
    the out-of-sample residuals, as plain data with the count of cases behind each."""
    lines = [
        '"""What the calibration logs set: generated by ``python benchmarks/fidelity.py '
        "--write-band``.",
        "",
        f"Fitted on {cases} real start-up logs of the shared and the repository corpora "
        "(RESERVED.md's sources",
        "never read). Do not edit: rerun the benchmark when the corpora grow. Each figure's "
        "cases are in",
        "CASES; what each means, the range the source allows it and why is in memory.py "
        "(constants) and",
        "band.py (the band).",
        '"""',
        "",
        "CONSTANTS: dict[str, float] = {",
    ]
    for name in (
        "bytes_per_logit",
        "bytes_per_logit_native",
        "bytes_per_intermediate_token",
        "graph_base",
        "graph_bytes_per_hidden_layer",
    ):
        lines.append(f'    "{name}": {getattr(constants, name):.4f},')
    lines += ["}", "", "# Non-torch memory per release line: (TP 1, TP >= 2, PP alone), bytes."]
    lines.append("NON_TORCH: dict[str, tuple[float, float, float]] = {")
    for line, row in constants.non_torch:
        lines.append(f'    "{line}": ({row[0]:.0f}, {row[1]:.0f}, {row[2]:.0f}),')
    lines += ["}", "", "# The cases each constant was fitted on."]
    lines.append("CASES: dict[str, int] = {")
    for name, count in constants.fitted_on:
        lines.append(f'    "{name}": {count},')
    lines += [
        "}",
        "",
        "# The band: regime -> (5th percentile, 95th percentile, residuals, sources)",
    ]
    lines.append("# of (logged - predicted) / budget, each source weighing one.")
    lines.append("BAND: dict[str, tuple[float, float, int, int]] = {")
    for key in sorted(table.rows):
        low, high, n, sources = table.rows[key]
        lines.append(f'    "{key}": ({low:.4f}, {high:.4f}, {n}, {sources}),')
    lines.append("}")
    if details:
        lines += _spread(details)
    FITTED.write_text("\n".join(lines) + "\n")
    print(f"wrote {FITTED.relative_to(REPO)}")


def pool_logs(replays: list[Replay]) -> dict[str, tuple[int, int]]:
    """Per engine but vLLM: the logs with a residual (their pool memory predicted from the GPU
    and settings alone, against the memory the log states), and their distinct sources."""
    from kvlint.engines import NAMES

    out: dict[str, tuple[int, int]] = {}
    for engine in NAMES:
        if engine == "vllm":
            continue
        scored = [
            r for r in replays if r.case["engine"] == engine and r.engine_residual() is not None
        ]
        out[engine] = (len(scored), len({r.source for r in scored}))
    return out


def write_band_logs(
    counts: dict[str, tuple[int, int]], tables: dict[str, engine_band.BandTable]
) -> None:
    """``kvlint/engines/band_logs.py``: every engine's residual count (what its "no band"
    says) and the band table of each engine whose residuals reach the floor."""
    lines = [
        '"""Start-up logs and bands of the engines other than vLLM: generated by ``python',
        "benchmarks/fidelity.py --write-band``. Do not edit: rerun it when the corpora grow.",
        "",
        "POOL_LOGS, (logs, sources): the logs of the shared and the repository corpora with a "
        "residual, the",
        "pool memory kvlint predicts from the GPU and settings alone against the one the log "
        "states.",
        "BANDS: per engine whose residuals come from at least MIN_SOURCES sources, regime -> (5th",
        "percentile, 95th percentile, residuals, sources) of (logged - predicted) / (total x "
        "fraction),",
        "each source weighing one (kvlint/engines/band.py).",
        '"""',
        "",
        "POOL_LOGS: dict[str, tuple[int, int]] = {",
    ]
    lines += [f'    "{engine}": ({n}, {s}),' for engine, (n, s) in counts.items()]
    lines += ["}", "", "BANDS: dict[str, dict[str, tuple[float, float, int, int]]] = {"]
    for engine in sorted(tables):
        lines.append(f'    "{engine}": {{')
        for key in sorted(tables[engine].rows):
            low, high, n, sources = tables[engine].rows[key]
            lines.append(f'        "{key}": ({low:.4f}, {high:.4f}, {n}, {sources}),')
        lines.append("    },")
    lines.append("}")
    POOL_LOGS.write_text("\n".join(lines) + "\n")
    print(f"wrote {POOL_LOGS.relative_to(REPO)}")
    for engine, (n, s) in counts.items():
        if engine_facts(engine).pool_is_cells:
            verdict = "no band: the cells the settings allocate, no prediction"
        elif engine in tables:
            verdict = "band: " + ", ".join(sorted(tables[engine].rows))
        elif s >= engine_band.MIN_SOURCES:
            verdict = "enough sources, but its accounting takes no band table"
        else:
            verdict = f"no band: fewer than {engine_band.MIN_SOURCES} sources"
        print(f"  {engine:9} {n:3} logs from {s} sources: {verdict}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=Path, default=LOGS)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--only", choices=("shared", "repo"), help="one corpus (default: both)")
    parser.add_argument("--cases", action="store_true", help="one row per case (out of sample)")
    parser.add_argument("--sources", action="store_true", help="one row per source")
    parser.add_argument("--fit", action="store_true", help="print the constants fitted")
    parser.add_argument("--write-band", action="store_true", help="regenerate the band table")
    args = parser.parse_args(argv)
    paths = {"shared": [args.logs], "repo": [args.corpus], None: [args.logs, args.corpus]}
    cases = load_corpora(paths[args.only])
    if not cases:
        print("no calibration logs found", file=sys.stderr)
        return 2
    sources = {source_key(str(c["source"])) for c in cases}
    print(f"{len(cases)} cases from {len(sources)} sources (none reserved)")
    details: FitDetails = {}
    constants, inside = in_sample(cases, details)
    outside = out_of_sample(cases)
    resolved = sum(1 for r in inside if r.spec is not None)
    print(f"model resolved for {resolved} of {len(cases)}")
    print_table("IN-SAMPLE (constants fitted on every case; the shipped band)", inside)
    print_table(
        "LEAVE-ONE-SOURCE-OUT (each source predicted without it; the figure quoted)", outside
    )
    trtllm_report(outside)
    print_engine_bands(inside)
    if args.cases:
        print_cases(outside)
    if args.sources:
        print_sources(outside)
    if args.fit:
        print_fit(constants, inside)
    if args.fit or args.write_band:
        table = build_band(out_of_sample_point(cases))
        print_band(table)
        if args.write_band:
            write_fitted(constants, table, len(cases), details)
            write_band_logs(pool_logs(inside), build_engine_bands(inside))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
