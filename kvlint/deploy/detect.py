"""Which engine runs: by the program in ``command``/``args`` (also inside ``sh -c``), or the image.

Also the engine version an image tag states (``vllm/vllm-openai:v0.11.0`` -> ``0.11.0``).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from kvlint.deploy.argv import Token
from kvlint.deploy.argv import commands
from kvlint.deploy.argv import nested_commands
from kvlint.lazy_re import lazy

_SHELLS = frozenset({"sh", "bash", "ash", "dash", "zsh"})
# trtllm-llmapi-launch runs the command it is given under MPI (one process per rank).
_WRAPPERS = frozenset(
    {"exec", "nohup", "env", "time", "stdbuf", "numactl", "taskset", "trtllm-llmapi-launch"}
)
_ASSIGNMENT_RE = lazy(r"^[A-Za-z_][A-Za-z0-9_]*=")

# `python -m <module>` -> engine (NVIDIA Dynamo wraps the engines in dynamo.<engine>).
_MODULES = {
    "vllm.entrypoints.openai.api_server": "vllm",
    "vllm.entrypoints.api_server": "vllm",
    "vllm.entrypoints.cli.main": "vllm",
    "dynamo.vllm": "vllm",
    "sglang.launch_server": "sglang",
    "dynamo.sglang": "sglang",
    "dynamo.trtllm": "trtllm",
    "tensorrt_llm.commands.serve": "trtllm",
    "mlx_lm.server": "mlx",  # deprecated but still started so (mlx_lm/server.py __main__)
}
# `python -m <package> <sub-command>`: mlx-lm's cli dispatches `python -m mlx_lm server`.
_MODULE_COMMANDS = {("mlx_lm", "server"): "mlx"}
# program basename -> engine (with the sub-command it needs, if any)
_PROGRAMS = {
    "vllm": ("vllm", "serve"),
    "sglang": ("sglang", "serve"),
    "llama-server": ("llamacpp", None),
    "text-generation-launcher": ("tgi", None),
    "ollama": ("ollama", "serve"),
    "trtllm-serve": ("trtllm", None),  # also `trtllm-serve serve MODEL` (its click group)
    "trtllm-build": ("trtllm", None),  # the engine's limits, served by a later trtllm-serve
    "mlx_lm.server": ("mlx", None),  # mlx-lm's console scripts (setup.py)
    "mlx_lm": ("mlx", "server"),
}
# NVIDIA NIM for LLMs: nvcr.io/nim/<org>/<model>:<tag>, whose entrypoint is the server.
_NIM = lazy(r"(?:^|/)nim/([A-Za-z0-9._-]+)/([A-Za-z0-9._-]+)(?=[:@]|$)", re.IGNORECASE)

# The llm-d images that ship vLLM (ghcr.io/llm-d/llm-d, -cuda, -xpu, ...), not the project's
# scheduler, routing sidecar or simulator images (llm-d-inference-scheduler, ...).
_LLM_D = r"llm-d/llm-d(?:-(?:cuda|xpu|gaudi|hpu|cpu|rocm|aws|dev|cuda-dev))?(?=[:@]|$)"
# Simulators and mocks that answer like an engine but hold no model, and the vLLM project's
# router images (ghcr.io/vllm-project/semantic-router/extproc: an Envoy external processor
# whose `--secure` is its own flag): nothing to size.
_NOT_ENGINES = lazy(r"inference-sim|mock|vllm-project/semantic-router", re.IGNORECASE)
# Image name patterns -> engine.
_IMAGE_ENGINES = (
    (lazy(r"sglang", re.IGNORECASE), "sglang"),
    (lazy(r"llama\.?cpp|llama-cpp", re.IGNORECASE), "llamacpp"),
    (lazy(r"text-generation-inference", re.IGNORECASE), "tgi"),
    (lazy(r"(^|/)ollama(/|:|$)", re.IGNORECASE), "ollama"),
    (lazy(rf"vllm|{_LLM_D}", re.IGNORECASE), "vllm"),
    (lazy(r"tensorrt[-_]?llm|trtllm", re.IGNORECASE), "trtllm"),
)
# Images whose entrypoint is the server itself, so `args` alone are the engine's flags.
_SERVER_IMAGES = (
    (lazy(rf"vllm/vllm-openai|vllm-openai|rocm/vllm|{_LLM_D}", re.IGNORECASE), "vllm"),
    (lazy(r"llama\.cpp:server|llama-cpp.*server", re.IGNORECASE), "llamacpp"),
    (lazy(r"text-generation-inference", re.IGNORECASE), "tgi"),
    (lazy(r"(^|/)ollama/ollama", re.IGNORECASE), "ollama"),
)


class Invocation(NamedTuple):
    """An engine started by an argv: the engine, the tokens it parses, the program token."""

    engine: str
    args: list[Token]
    program: Token | None
    launcher: str = ""  # the module or program that starts it ("dynamo.vllm", "vllm serve")


def _basename(text: str) -> str:
    return text.rstrip("/").rsplit("/", 1)[-1]


def find_invocation(
    argv: list[Token], image: str | None = None, *, command_given: bool = True
) -> Invocation | None:
    """The engine an argv starts, looking inside ``sh -c`` scripts; else the image's entrypoint."""
    found = _scan(argv)
    if found is not None:
        return found
    if not command_given and image:
        engine = server_image_engine(image)
        if engine is not None:
            return Invocation(engine, argv, None, "image entrypoint")
    return None


def _scan(argv: list[Token]) -> Invocation | None:
    tokens = _strip_prefix(argv)
    if not tokens:
        return None
    if _basename(tokens[0].text) in _SHELLS:
        script = _script(tokens)
        if script is not None:
            return script
    for i, token in enumerate(tokens):
        text = token.text
        if text == "-m" and i + 1 < len(tokens) and tokens[i + 1].text in _MODULES:
            module = tokens[i + 1]
            return Invocation(_MODULES[module.text], tokens[i + 2 :], module, module.text)
        if text == "-m" and i + 2 < len(tokens):
            pair = (tokens[i + 1].text, tokens[i + 2].text)
            if pair in _MODULE_COMMANDS:
                launcher = " ".join(pair)
                return Invocation(_MODULE_COMMANDS[pair], tokens[i + 3 :], tokens[i + 1], launcher)
        base = _basename(text)
        if base in _PROGRAMS and (i == 0 or _basename(tokens[i - 1].text) not in ("-m",)):
            engine, sub = _PROGRAMS[base]
            if base == "trtllm-serve" and tokens[i + 1 : i + 2] and tokens[i + 1].text == "serve":
                return Invocation(engine, tokens[i + 2 :], token, "trtllm-serve serve")
            if sub is None:
                return Invocation(engine, tokens[i + 1 :], token, base)
            if i + 1 < len(tokens) and tokens[i + 1].text == sub:
                return Invocation(engine, tokens[i + 2 :], token, f"{base} {sub}")
        if i == 0 and not text.startswith("-") and not base.startswith("python"):
            return None  # another program (a wrapper script): only its own arguments follow
    return None


def _strip_prefix(tokens: list[Token]) -> list[Token]:
    i = 0
    while i < len(tokens) and (
        _ASSIGNMENT_RE.match(tokens[i].text) or _basename(tokens[i].text) in _WRAPPERS
    ):
        i += 1
    return tokens[i:]


def _script(tokens: list[Token]) -> Invocation | None:
    """``sh -c "<script>"``: each simple command of the script, in order."""
    for i, token in enumerate(tokens[1:], start=1):
        text = token.text
        if text.startswith("-") and not text.startswith("--") and "c" in text[1:]:
            rest = tokens[i + 1 :]
            while rest and rest[0].text == "--":  # `bash -lc -- "<script>"`
                rest = rest[1:]
            if not rest:
                return None
            script = rest[0]
            if script.node is None:
                return None
            nested = script.aligner is not None  # the script is one word of a string
            # `sh -c script $0 $1 ...`: the words after the script are its `$0`, `$1`, ...
            positional = rest[2:]
            build: Invocation | None = None
            for command in nested_commands(script) if nested else commands(script.node):
                found = _scan(command)
                if found is not None and found.launcher == "trtllm-build":
                    build = found  # its limits hold for the trtllm-serve that serves the engine
                    continue
                if found is not None:
                    if build is not None and found.engine == "trtllm":
                        found = found._replace(args=build.args + found.args)
                    return found._replace(args=_expand_all(found.args, positional))
            return build
    return None


def _expand_all(args: list[Token], positional: list[Token]) -> list[Token]:
    """``"$@"`` / ``$*`` in a script's command: the words handed to the script after it
    (``$$@`` in a compose file, whose ``$$`` is a literal ``$``)."""
    out: list[Token] = []
    for token in args:
        if token.text.replace("$$", "$") in ("$@", "$*", "${@}", "${*}"):
            out.extend(positional)
        else:
            out.append(token)
    return out


# Forks of an engine with options of their own: read as the engine they fork, their options were
# KV501 errors (ik_llama.cpp's -khad and --merge-qkv, BeeLlama's --spec-dflash-cross-ctx,
# vLLM-Omni's --omni).
_FORKS = (
    (lazy(r"ik[-_]llama", re.IGNORECASE), "ik_llama.cpp, a fork of llama.cpp"),
    (lazy(r"beellama", re.IGNORECASE), "BeeLlama, a fork of llama.cpp"),
    (
        lazy(r"(^|/)vllm-omni(:|@|$)", re.IGNORECASE),
        "vLLM-Omni (`--omni`), vLLM's omni-modal build",
    ),
)


def engine_fork(image: str) -> str | None:
    """What ``image`` is when it is a fork of an engine kvlint reads, else None."""
    for pattern, what in _FORKS:
        if pattern.search(image):
            return what
    return None


def simulator(image: str) -> bool:
    """An engine simulator or mock (llm-d-inference-sim, vllm-mock): no model is loaded."""
    return _NOT_ENGINES.search(image) is not None


def image_engine(image: str) -> str | None:
    """The engine an image ships (``vllm/vllm-openai``, ``lmsysorg/sglang``, ...), if any."""
    if _NOT_ENGINES.search(image):
        return None
    if nim_llm(image):
        return "trtllm"  # its launcher's TensorRT-LLM profile (kvlint.deploy.nim)
    for pattern, engine in _IMAGE_ENGINES:
        if pattern.search(image):
            return engine
    return None


# NIMs that serve no generative LLM (embedding, reranking, retrieval and vision models): no KV
# cache to size, so they stay servers kvlint does not read.
_NIM_NOT_LLM = lazy(r"embed|rerank|retriever|parse|ocr|cosmos|clip|asr|tts", re.IGNORECASE)
# The multi-LLM NIM serves the model NIM_MODEL_NAME names, not one of its own.
_NIM_ANY_MODEL = frozenset({"nvidia/llm-nim"})


def nim_llm(image: str) -> bool:
    """Whether ``image`` is an NVIDIA NIM for LLMs (a generative model's server)."""
    found = _NIM.search(image)
    return found is not None and _NIM_NOT_LLM.search(found.group(2)) is None


def nim_without_kv_cache(image: str) -> bool:
    """Whether ``image`` is an NVIDIA NIM of an encoder or a speech model (embedding,
    reranking, OCR, TTS): a server that keeps no KV cache, so there is nothing to check."""
    return _NIM.search(image) is not None and not nim_llm(image)


def nim_model(image: str) -> str | None:
    """The model an NVIDIA NIM for LLMs serves, as its image name states it
    (``meta/llama-3.1-8b-instruct`` from ``nvcr.io/nim/meta/llama-3.1-8b-instruct:1.8.4``); None
    for another image and for the multi-LLM NIM, whose model is NIM_MODEL_NAME's."""
    found = _NIM.search(image)
    if found is None or not nim_llm(image):
        return None
    name = f"{found.group(1)}/{found.group(2)}"
    return None if name.lower() in _NIM_ANY_MODEL else name


def server_image_engine(image: str) -> str | None:
    """The engine an image *starts* with no command (its entrypoint is the server)."""
    if _NOT_ENGINES.search(image):
        return None
    if nim_llm(image):
        return "trtllm"
    for pattern, engine in _SERVER_IMAGES:
        if pattern.search(image):
            return engine
    return None


# The engines' own images: only their tags state the engine's version.
_OFFICIAL_IMAGES = {
    # vLLM's own, AMD's ROCm builds, AIBrix's (vllm-openai:v0.6.2-distributed), Red Hat's UBI
    # builds (vllm-openai-ubi9:0.4.2) and NVIDIA's NGC container (its own YY.MM tags, mapped).
    "vllm": lazy(
        r"(^|/)vllm/vllm-(openai|tpu)|(^|/)rocm/vllm|(^|/)aibrix/vllm-openai|vllm-openai-ubi9"
        r"|nvcr\.io/nvidia/vllm",
        re.IGNORECASE,
    ),
    "sglang": lazy(r"(^|/)lmsysorg/sglang", re.IGNORECASE),
    "llamacpp": lazy(r"(^|/)(ggml-org|ggerganov)/llama\.cpp", re.IGNORECASE),
    "tgi": lazy(r"huggingface/text-generation-inference", re.IGNORECASE),
    "ollama": lazy(r"(^|/)ollama/ollama", re.IGNORECASE),
    # nvcr.io/nvidia/tensorrt-llm/release:1.2.1 (a NIM's tag is the NIM's release, not this)
    "trtllm": lazy(r"(^|/)nvidia/tensorrt-llm/release", re.IGNORECASE),
}
# A release tag: vLLM's four-part hot fixes (v0.9.0.1, v0.10.1.1), post releases and release
# candidates; after it a variant suffix (-cu126, _20250521, AIBrix's .self.post1).
_SEMVER_RE = lazy(
    r"^v?(\d+\.\d+(?:\.\d+){0,2}(?:\.post\d+|rc\d+)?)(?:$|[-+_]|\.(?=[a-z]))", re.IGNORECASE
)
_LLAMA_BUILD_RE = lazy(r"(?:^|-)(b\d{3,6})(?:$|-)")
_TGI_DLC_RE = lazy(r"text-generation-inference-cu\d+\.(\d+)-(\d+)(?:-(\d+))?")


# NVIDIA's NGC vLLM container (nvcr.io/nvidia/vllm:YY.MM-py3): the vLLM release each ships,
# from the container release notes (docs.nvidia.com/deeplearning/frameworks/vllm-release-notes,
# rel-25-10 ... rel-26-10) and, for 26.01, the version its own log prints
# ("0.13.0+faa43dbf.nv26.01"; the notes say 0.11.1, the same accounting line). A month between
# two known ones takes the earlier release when both are of one accounting line, else none.
NGC_VLLM = {
    (25, 10): "0.10.2",
    (26, 1): "0.13.0",
    (26, 3): "0.17.1",
    (26, 5): "0.20.1",
    (26, 10): "0.31.0",
}
_NGC_TAG_RE = lazy(r"^(\d{2})\.(\d{2})(?:$|[-.])")
_ROCM_TAG_RE = lazy(r"(?:^|_)vllm[_-]v?(\d+\.\d+(?:\.\d+)?)", re.IGNORECASE)
# The releases where vLLM's memory accounting changes (kvlint/engines/vllm/memory.py LINES).
_VLLM_LINES = ((0, 8), (0, 11), (0, 21))


def _vllm_line(version: str) -> int:
    numbers = tuple(int(part) for part in version.split(".")[:2])
    return sum(1 for since in _VLLM_LINES if numbers >= since)


def ngc_vllm_version(tag: str) -> str | None:
    """The vLLM release of an NGC container tag (``25.10-py3`` -> 0.10.2), or None."""
    match = _NGC_TAG_RE.match(tag)
    if match is None:
        return None
    month = (int(match.group(1)), int(match.group(2)))
    if month in NGC_VLLM:
        return NGC_VLLM[month]
    earlier = [m for m in NGC_VLLM if m < month]
    later = [m for m in NGC_VLLM if m > month]
    if not earlier or not later:
        return None
    before, after = NGC_VLLM[max(earlier)], NGC_VLLM[min(later)]
    return before if _vllm_line(before) == _vllm_line(after) else None


def version_from_image(image: str, engine: str) -> str | None:
    """The engine version an image tag states, or None (``latest``, a digest, a custom tag)."""
    if engine == "tgi":
        dlc = _TGI_DLC_RE.search(image)
        if dlc:  # Google's DLC images: ...-text-generation-inference-cu124.2-3.ubuntu2204
            return ".".join(part for part in dlc.groups() if part)
    if engine not in _OFFICIAL_IMAGES or not _OFFICIAL_IMAGES[engine].search(image):
        return None  # a third-party image (lmcache/vllm-openai, llm-d) versions itself
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    if ":" not in last:
        return None
    tag = last.split(":", 1)[1]
    if engine == "llamacpp":
        build = _LLAMA_BUILD_RE.search(tag)
        return build.group(1) if build else None
    if engine == "vllm" and "nvcr.io/nvidia/vllm" in name.lower():
        return ngc_vllm_version(tag)
    if engine == "vllm":
        rocm = _ROCM_TAG_RE.search(tag)  # rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521
        if rocm:
            return rocm.group(1)
    match = _SEMVER_RE.match(tag)
    return match.group(1) if match else None
