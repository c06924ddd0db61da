"""llama.cpp's ``llama-server``: short and long flags, and the LLAMA_ARG_* env vars."""

from __future__ import annotations

from typing import Any

from kvlint import codes
from kvlint.deploy.flags import EngineSpec
from kvlint.deploy.flags import Setting
from kvlint.deploy.interpret import Engine
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.engines.llamacpp import defaults as D
from kvlint.engines.llamacpp import flags as llamacpp_flags
from kvlint.engines.llamacpp.facts import CACHE_TYPES
from kvlint.finding import InputProblem
from kvlint.finding import Severity

# What `-fa` takes, as the flash-attention mode it names (common/arg.cpp; the numbers and
# enabled/disabled are aliases, ggml-org/llama.cpp#15746).
FLASH_ATTN_VALUES = {
    "on": "on",
    "off": "off",
    "auto": "auto",
    "enabled": "on",
    "disabled": "off",
    "1": "on",
    "0": "off",
    "-1": "auto",
}

SETTINGS = {
    s.name: s
    for s in (
        Setting("model", "str", "model"),
        Setting("hf-repo", "str"),
        Setting("alias", "str", "served_model_name"),
        # -c 0 means the model's training context (common/arg.cpp); -np -1 is auto and
        # 0 is refused ("invalid value for n_parallel").
        Setting("ctx-size", "int", "max_model_len", minimum=0),
        Setting("parallel", "int", "max_num_seqs", minimum=-1, refused=(0,)),
        Setting("cache-type-k", "str", "kv_cache_dtype", CACHE_TYPES),
        Setting("cache-type-v", "str", "kv_cache_dtype_v", CACHE_TYPES),
        # `-fa` alone (older releases) means on; newer ones take on/off/auto (and aliases).
        Setting("flash-attn", "str", "flash_attention", tuple(FLASH_ATTN_VALUES)),
        Setting("kv-unified", "bool", "kv_unified"),
        Setting("swa-full", "bool", "swa_full"),
        Setting("n-gpu-layers", "str", "n_gpu_layers"),
        Setting("batch-size", "int"),
        Setting("ubatch-size", "int"),
    )
}

KNOWN = {**llamacpp_flags.KNOWN, "flash-attn": "?"}


def _model(dep: Deployment, name: str, value: Sourced[Any]) -> None:
    dep.model = value


def _hf_repo(dep: Deployment, name: str, value: Sourced[Any]) -> None:
    # -hf owner/repo[:quant]: the model unless -m names a file.
    if "model" not in dep.settings:
        dep.model = value


def _flash_attn(dep: Deployment, name: str, value: Sourced[Any]) -> None:
    version = str(dep.engine_version.value) if dep.engine_version is not None else None
    # Only on a named build: an image that names none may be an old one (llmaz's examples
    # pass a bare -fa to the image their runtime pins), where -fa is a switch.
    if value.value is True and version is not None and D.flash_attn_takes_value(version):
        # llama-server reads the next argument as the value ("unknown value for --flash-attn:
        # '--port'") or finds none ("expected value for argument") and exits.
        message = (
            f"`{value.raw}` takes a value (on, off or auto) from llama.cpp build "
            f"b{D.LLAMACPP_FA_VALUE_SINCE_BUILD} on, and this is {version}: given alone, "
            f"llama-server takes the next argument for it and exits"
        )
        dep.problems.append(
            InputProblem(codes.INVALID_SETTING, value.span, message, Severity.ERROR)
        )
        return
    text = "on" if value.value is True else FLASH_ATTN_VALUES[str(value.value)]
    dep.flash_attention = Sourced(text, value.span, value.raw)
    dep.settings[name] = dep.flash_attention


def _gpu_layers(dep: Deployment, name: str, value: Sourced[Any]) -> None:
    # -ngl also takes "auto" / "all" in newer releases; only a number fills the field.
    try:
        dep.n_gpu_layers = Sourced(int(str(value.value)), value.span, value.raw)
    except ValueError:
        if str(value.value) not in ("auto", "all"):
            message = f"`--n-gpu-layers` expects a number, auto or all, got `{value.value}`"
            dep.problems.append(
                InputProblem(codes.INVALID_SETTING, value.span, message, Severity.ERROR)
            )


SPEC = EngineSpec(
    name="llamacpp",
    settings=SETTINGS,
    known=KNOWN,
    aliases=llamacpp_flags.ALIASES,
    env=llamacpp_flags.ENV,
)

ENGINE = Engine(
    SPEC,
    hooks={
        "model": _model,
        "hf-repo": _hf_repo,
        "flash-attn": _flash_attn,
        "n-gpu-layers": _gpu_layers,
    },
)
