"""LLM servers kvlint does not read: how a container is still known to run one.

A container that runs no engine kvlint reads is usually no LLM server at all (a router, a model
downloader, nginx), and says nothing. But one that does run a server whose settings kvlint
cannot read must say so (KV905, a warning), or the file would pass as checked: another serving
stack's image or program (NIM, TensorRT-LLM, LMDeploy, ...), an engine's image started by a
launcher of its own, or an engine's flags handed to an image kvlint does not know.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from kvlint.deploy.argv import Token
from kvlint.deploy.argv import commands
from kvlint.deploy.argv import nested_commands
from kvlint.deploy.detect import image_engine
from kvlint.deploy.detect import nim_llm
from kvlint.deploy.detect import nim_without_kv_cache
from kvlint.deploy.detect import simulator
from kvlint.deploy.search import image_text
from kvlint.lazy_re import lazy
from kvlint.source.nodes import Mapping
from kvlint.source.nodes import Node
from kvlint.source.nodes import Scalar
from kvlint.source.nodes import Sequence

# Serving stacks kvlint has no reader for, by image (the registries' own names). Servers of
# encoders only (Hugging Face's text-embeddings-inference) keep no KV cache: nothing to check.
_IMAGES: tuple[tuple[re.Pattern[str], str], ...] = (
    (lazy(r"(^|/)nim/|nvcr\.io/nim", re.IGNORECASE), "an NVIDIA NIM"),
    # Triton with the TensorRT-LLM backend is configured by its model repository's
    # config.pbtxt, which kvlint does not read (trtllm-serve, NIM and Dynamo's worker it does).
    (lazy(r"tritonserver", re.IGNORECASE), "Triton's TensorRT-LLM backend"),
    (lazy(r"lmdeploy", re.IGNORECASE), "LMDeploy"),
    (lazy(r"local-?ai", re.IGNORECASE), "LocalAI"),
    (lazy(r"aphrodite", re.IGNORECASE), "Aphrodite"),
    (lazy(r"mistral\.?rs", re.IGNORECASE), "mistral.rs"),
    (lazy(r"xinference", re.IGNORECASE), "Xinference"),
    (lazy(r"(^|/)lorax", re.IGNORECASE), "LoRAX"),
    (lazy(r"tabbyapi", re.IGNORECASE), "TabbyAPI"),
    (lazy(r"koboldcpp", re.IGNORECASE), "KoboldCpp"),
    (lazy(r"llamafile", re.IGNORECASE), "llamafile"),
    (lazy(r"mlc-?llm", re.IGNORECASE), "MLC LLM"),
    (lazy(r"openllm", re.IGNORECASE), "OpenLLM"),
    (lazy(r"ray-?llm", re.IGNORECASE), "RayLLM"),
    (lazy(r"deepspeed-?mii", re.IGNORECASE), "DeepSpeed-MII"),
    (lazy(r"kaito/kaito-base", re.IGNORECASE), "KAITO's transformers runtime"),
)
# Server programs of those stacks (the program's basename) and Python modules started with -m.
_PROGRAMS = {
    "tritonserver": "Triton's TensorRT-LLM backend",
    "lmdeploy": "LMDeploy",
    "local-ai": "LocalAI",
    "aphrodite": "Aphrodite",
    "mistralrs-server": "mistral.rs",
    "xinference-local": "Xinference",
    "lorax-launcher": "LoRAX",
    "llamafile": "llamafile",
    "koboldcpp": "KoboldCpp",
    "mlc_llm": "MLC LLM",
    "openllm": "OpenLLM",
}
_MODULES = {
    "llama_cpp.server": "llama-cpp-python",
    "lmdeploy": "LMDeploy",
    "aphrodite.endpoints.openai.api_server": "Aphrodite",
    "mlc_llm": "MLC LLM",
    "sglang_router.launch_server": "SGLang's router launcher",
    "fastchat.serve.vllm_worker": "FastChat's vLLM worker",
    "huggingfaceserver": "KServe's Hugging Face server",
}
# An engine's own program with a sub-command that is a client, not a server (`vllm bench`,
# `ollama pull` in an init container): no server runs, so nothing is missed.
_CLIENTS = {
    "vllm": frozenset({"bench", "chat", "complete", "collect-env", "run-batch"}),
    "sglang": frozenset({"bench", "version"}),
    "ollama": frozenset({"pull", "run", "create", "list", "show", "cp", "rm", "push", "ps"}),
    # A Ray worker (or head) joining a cluster: the engine is started elsewhere, on the head.
    "ray": frozenset({"start", "stop", "status", "job"}),
}
# Python modules that front engines without loading a model (SGLang's router).
_CLIENT_MODULES = frozenset({"sglang_router.launch_router", "sglang_router"})
_CLIENT_PROGRAMS = frozenset(
    {"llama-bench", "llama-cli", "llama-quantize", "huggingface-cli"}
    # Load generators run against a server elsewhere (often from the engine's own image).
    | {"genai-perf", "perf_analyzer", "guidellm"}
)
# Images of a serving stack that hold only its clients: Triton's `-sdk` tags ship perf_analyzer
# and genai-perf, not the server (NGC's tags: `24.06-py3-sdk`; the server is `24.06-py3`).
_CLIENT_IMAGES = (lazy(r"tritonserver:[^/\s]*-sdk\b", re.IGNORECASE),)
# Programs that only keep a container alive (a pod to `kubectl exec` into, a job's wait), and
# the shell words around them in a loop: `while true; do sleep 30; done`.
_IDLE_PROGRAMS = frozenset({"sleep", "tail", "true", "wait", "pause"})
_SHELL_WORDS = frozenset(
    {"while", "until", "do", "done", "then", "fi", "if", "else", "!", "{", "}"}
)
_ENGINE_NAMES = {
    "vllm": "vLLM",
    "sglang": "SGLang",
    "llamacpp": "llama.cpp",
    "tgi": "TGI",
    "ollama": "Ollama",
    "trtllm": "TensorRT-LLM",
}
# Flags that only an engine spells so: args made of them are an engine's, whatever the image.
_FLAGS = {
    "vllm": frozenset(
        {
            "--tensor-parallel-size",
            "--max-model-len",
            "--gpu-memory-utilization",
            "--max-num-seqs",
            "--served-model-name",
            "--kv-cache-dtype",
            "--enforce-eager",
        }
    ),
    "sglang": frozenset({"--model-path", "--tp-size", "--mem-fraction-static", "--context-length"}),
    "tgi": frozenset({"--model-id", "--num-shard", "--max-total-tokens", "--max-input-tokens"}),
    "llamacpp": frozenset({"--ctx-size", "--n-gpu-layers", "-ngl", "--parallel", "-ctk"}),
    "trtllm": frozenset(
        {"--kv_cache_free_gpu_memory_fraction", "--max_batch_size", "--extra_llm_api_options"}
    ),
}
# Environment variables only an engine reads (vLLM's VLLM_*, llama.cpp's LLAMA_ARG_*).
_ENV_PREFIXES = {"vllm": "VLLM_", "sglang": "SGLANG_", "llamacpp": "LLAMA_ARG_"}
_SHELLS = frozenset({"sh", "bash", "ash", "dash", "zsh"})
_WRAPPERS = frozenset({"exec", "nohup", "env", "time", "stdbuf", "numactl", "taskset"})


def engine_title(engine: str) -> str:
    return _ENGINE_NAMES.get(engine, engine)


def _basename(text: str) -> str:
    return text.rstrip("/").rsplit("/", 1)[-1]


def other_image(image: str) -> str | None:
    """The serving stack an image of another project ships, if any (None for servers that keep
    no KV cache: an embedding or speech NIM)."""
    if nim_without_kv_cache(image):
        return None
    for pattern, what in _IMAGES:
        if pattern.search(image):
            return what
    return None


def _programs(argv: list[Token]) -> list[list[Token]]:
    """The simple commands an argv runs: itself, or each command of an ``sh -c`` script."""
    words = [t for t in argv if not _is_wrapper(t.text)]
    if words and _basename(words[0].text) in _SHELLS:
        for i, token in enumerate(words[1:], start=1):
            text = token.text
            if text.startswith("-") and not text.startswith("--") and "c" in text[1:]:
                rest = [t for t in words[i + 1 :] if t.text != "--"]
                script = rest[0] if rest else None
                if script is None or script.node is None:
                    return []
                nested = script.aligner is not None
                found = nested_commands(script) if nested else commands(script.node)
                return [[t for t in command if not _is_wrapper(t.text)] for command in found]
    return [words] if words else []


def _is_wrapper(text: str) -> bool:
    return _basename(text) in _WRAPPERS or bool(re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", text))


def other_program(argv: list[Token]) -> str | None:
    """``(stack, program)`` text for the first command of another serving stack, if any."""
    for command in _programs(argv):
        for i, token in enumerate(command):
            base = _basename(token.text)
            if token.text == "-m" and i + 1 < len(command):
                module = command[i + 1].text
                for prefix, what in _MODULES.items():
                    if module == prefix or module.startswith(prefix + "."):
                        return f"{what} (`python -m {module}`)"
                break
            if base in _PROGRAMS:
                return f"{_PROGRAMS[base]} (`{base}`)"
            if i == 0 and not base.startswith("python"):
                break
    return None


def client_image(image: str) -> bool:
    """Whether ``image`` is a serving stack's client-only image (Triton's `-sdk` tags)."""
    return any(pattern.search(image) for pattern in _CLIENT_IMAGES)


def idles(argv: list[Token]) -> bool:
    """Whether every command ``argv`` runs only waits: ``sleep infinity``, ``tail -f
    /dev/null``, ``while true; do sleep 30; done``. Such a container serves nothing itself."""
    found = _programs(argv)
    if not found:
        return False
    for command in found:
        words = [t.text for t in command]
        while words and words[0] in _SHELL_WORDS:
            words = words[1:]
        if words and _basename(words[0]) not in _IDLE_PROGRAMS:
            return False
    return True


def is_client(argv: list[Token]) -> bool:
    """Whether the argv runs an engine's client sub-command (``vllm bench``, ``ollama pull``)."""
    for command in _programs(argv):
        if not command:
            continue
        base = _basename(command[0].text)
        if base in _CLIENT_PROGRAMS:
            return True
        for i, token in enumerate(command[:-1]):
            if token.text == "-m" and command[i + 1].text in _CLIENT_MODULES:
                return True
        sub = command[1].text if len(command) > 1 else ""
        if base in _CLIENTS and sub in _CLIENTS[base]:
            return True
    return False


def flags_engine(args: list[Token], env: Iterable[str] = ()) -> tuple[str, list[str]] | None:
    """The engine whose own flags ``args`` are, with the flags found: two such flags, or one
    and the engine's own environment variables (``VLLM_*``) beside it."""
    written = {t.text.partition("=")[0] for t in args}
    prefixes = {
        engine: [name for name in env if name.startswith(_ENV_PREFIXES.get(engine, "-"))]
        for engine in _FLAGS
    }
    best: tuple[str, list[str]] | None = None
    for engine, flags in _FLAGS.items():
        found = sorted(written & flags)
        if prefixes[engine] and found:
            found.append(f"{_ENV_PREFIXES[engine]}* env")
        if len(found) >= 2 and (best is None or len(found) > len(best[1])):
            best = (engine, found)
    return best


def unread_resource(root: Mapping) -> str | None:
    """Why a custom resource with no container kvlint reads still runs an LLM server, or None.

    The operators that start a server from fields of their own rather than a container: an
    NVIDIA ``NIMService`` (the NIM launcher picks TensorRT-LLM, vLLM or SGLang by profile) and
    a KAITO ``Workspace`` or ``InferenceSet`` running a preset (KAITO's own vLLM launcher)."""
    api = root.text_of("apiVersion") or ""
    kind = root.text_of("kind") or ""
    group = api.partition("/")[0]
    spec = root.mapping("spec")
    if group == "apps.nvidia.com" and kind == "NIMService" and spec is not None:
        image, _ = image_text(spec)
        if image and nim_without_kv_cache(image):
            return None
        shown = f" `{image}`" if image else ""
        return f"it runs an NVIDIA NIM{shown}, a server kvlint does not read"
    if group == "apps.nvidia.com" and kind == "NIMPipeline":
        return "it runs NVIDIA NIMs, servers kvlint does not read"
    if group == "kaito.sh" and kind in ("Workspace", "InferenceSet"):
        # A Workspace keeps `inference` at the top level; an InferenceSet under its template.
        for path in (("inference",), ("spec", "template", "inference"), ("spec", "inference")):
            preset = root.dig(*path, "preset", "name")
            if isinstance(preset, Scalar) and preset.value is not None:
                return (
                    f"it runs the KAITO preset `{preset.text}`, whose engine settings KAITO's "
                    f"own launcher chooses"
                )
    return None


def values_image(
    root: Node, depth: int = 0, parent: Mapping | None = None
) -> tuple[Scalar, str] | None:
    """The first LLM-serving image in a document no carrier reads (a chart's values for a
    subchart of its own: ``vllm: {image: {repository: opea/vllm-gaudi}}``): where it is, and
    what it runs. Only an image among a deployment's keys counts, not an operator chart's list
    of the images it may use."""
    if depth > 32:
        return None
    if isinstance(root, Sequence):
        for item in root.items:
            found = values_image(item, depth + 1, parent)
            if found is not None:
                return found
        return None
    if not isinstance(root, Mapping):
        return None
    for key, child in root.items:
        if key.text in ("image", "containerImage"):
            found = _serving_image(root, key.text)
            holders = (root, parent) if key.text == "containerImage" else (root,)
            if found is not None and any(h is not None and _deploys(h) for h in holders):
                return found
            if found is not None:
                continue
        found = values_image(child, depth + 1, root)
        if found is not None:
            return found
    return None


def _serving_image(holder: Mapping, key: str) -> tuple[Scalar, str] | None:
    if key == "image":
        text, where = image_text(holder)
    else:
        where = holder.scalar(key)
        text = where.text if where is not None and where.value is not None else ""
    if where is None or not text or simulator(text):
        return None
    engine = image_engine(text)
    what = engine_title(engine) if engine is not None else other_image(text)
    if nim_llm(text):
        what = "an NVIDIA NIM"  # a NIM chart's values: its own keys, not the engine's
    return (where, what) if what is not None else None


# Keys beside an image that make it a deployment's (what to run it with), rather than an
# operator chart's list of the images it may use.
_DEPLOYING = lazy(r"model|resources|args|command|env", re.IGNORECASE)


def _deploys(holder: Mapping) -> bool:
    return any(_DEPLOYING.search(key.text) for key, _ in holder.items if key.text != "image")
