"""mlx-lm's ``mlx_lm.server``: its flags, and the cache settings a plan may state beside them.

The server's options are read from ml-explore/mlx-lm@d78bf58 (0.32.0) ``mlx_lm/server.py``
``main()`` (argparse, abbreviations allowed). ``--max-kv-size``, ``--kv-bits``,
``--kv-group-size`` and ``--quantized-kv-start`` are ``mlx_lm.generate``'s (``generate.py``
``setup_arg_parser``), not the server's: a server given one exits with argparse's
"unrecognized arguments", so on a command line they are an error; a plan may state them for
a job that runs mlx-lm's generation loop. ``iogpu.wired_limit_mb`` is the macOS ``sysctl``
that raises the GPU working set (mlx-lm's README, "Large Models"); a plan states it the same
way.
"""

from __future__ import annotations

from decimal import Decimal
from decimal import InvalidOperation
from typing import Any

from kvlint import codes
from kvlint.deploy.flags import EngineSpec
from kvlint.deploy.flags import Setting
from kvlint.deploy.interpret import Engine
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.engines.mlx.facts import KV_BITS
from kvlint.finding import InputProblem
from kvlint.finding import Severity

# Settings a plan may state that mlx_lm.server's command line does not take.
GENERATION = ("max-kv-size", "kv-bits", "kv-group-size", "quantized-kv-start")
SYSCTL = "iogpu.wired_limit_mb"

SETTINGS = {
    s.name: s
    for s in (
        Setting("model", "str", "model"),
        Setting("draft-model", "str", "speculative_model"),
        Setting("decode-concurrency", "int", "max_num_seqs", minimum=1),
        Setting("prompt-concurrency", "int", minimum=1),
        Setting("prefill-step-size", "int", minimum=1),
        Setting("prompt-cache-size", "int", minimum=0),
        Setting("prompt-cache-bytes", "str"),
        Setting("max-tokens", "int"),
        Setting("num-draft-tokens", "int"),
        Setting("max-kv-size", "int", minimum=1),
        Setting("kv-bits", "str", "kv_cache_dtype", KV_BITS),
        Setting("kv-group-size", "int", minimum=1),
        Setting("quantized-kv-start", "int", minimum=0),
        Setting(SYSCTL, "int", minimum=0),
    )
}

# Every option of mlx_lm.server (server.py main()), with its arity: "0" for store_true.
KNOWN = {
    "model": "1",
    "adapter-path": "1",
    "host": "1",
    "port": "1",
    "allowed-origins": "1",
    "draft-model": "1",
    "num-draft-tokens": "1",
    "trust-remote-code": "0",
    "log-level": "1",
    "chat-template": "1",
    "use-default-chat-template": "0",
    "temp": "1",
    "top-p": "1",
    "top-k": "1",
    "min-p": "1",
    "max-tokens": "1",
    "chat-template-args": "1",
    "decode-concurrency": "1",
    "prompt-concurrency": "1",
    "prefill-step-size": "1",
    "prompt-cache-size": "1",
    "prompt-cache-bytes": "1",
    "pipeline": "0",
    **{name: "1" for name in (*GENERATION, SYSCTL)},
}


def parse_mlx_size(text: str) -> int:
    """``mlx_lm.utils._parse_size``: digits, then M / MB (10^6) or G / GB (10^9), any case."""
    stripped = text.strip()
    split = 0
    while split < len(stripped) and (stripped[split].isdigit() or stripped[split] == "."):
        split += 1
    units = {"M": 10**6, "G": 10**9, "MB": 10**6, "GB": 10**9, "": 1}
    unit = stripped[split:].strip().upper()
    if not stripped[:split] or unit not in units:
        raise ValueError(f"expected a size such as 12GB or 500M, got `{text}`")
    try:
        return int(Decimal(stripped[:split]) * units[unit])
    except InvalidOperation as exc:
        raise ValueError(f"expected a size such as 12GB or 500M, got `{text}`") from exc


def _prompt_cache_bytes(dep: Deployment, name: str, value: Sourced[Any]) -> None:
    try:
        size = parse_mlx_size(str(value.value))
    except ValueError as exc:
        message = f"`--prompt-cache-bytes` {exc}"
        dep.problems.append(
            InputProblem(codes.INVALID_SETTING, value.span, message, Severity.ERROR)
        )
        del dep.settings[name]
        return
    dep.settings[name] = Sourced(size, value.span, value.raw)


def _plan_only(dep: Deployment, name: str, value: Sourced[Any]) -> None:
    """A generation setting or the sysctl: a plan's to state, an error on the server's argv."""
    if dep.carrier == "plan":
        if name == "kv-bits":
            dep.kv_cache_dtype = value
        return
    del dep.settings[name]
    if name == SYSCTL:
        message = (
            f"`{name}` is a macOS sysctl (`sudo sysctl {name}=N`), not a flag of mlx_lm.server: "
            "the server exits with 'unrecognized arguments'"
        )
    else:
        message = (
            f"`--{name}` is a flag of mlx_lm.generate, not of mlx_lm.server: the server exits "
            "with 'unrecognized arguments'"
        )
    dep.problems.append(InputProblem(codes.UNKNOWN_FLAG, value.span, message, Severity.ERROR))


SPEC = EngineSpec(name="mlx", settings=SETTINGS, known=KNOWN, abbrev=True)

ENGINE = Engine(
    SPEC,
    hooks={
        "prompt-cache-bytes": _prompt_cache_bytes,
        **{name: _plan_only for name in (*GENERATION, SYSCTL)},
    },
)
