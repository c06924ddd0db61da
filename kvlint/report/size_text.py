"""The text output of ``kvlint size``: prints the reports it builds, tables with rich.

It only prints (``kvlint.commands.size`` builds the report dicts, the same ones ``--format json``
writes). ``rich`` is imported inside the functions: ``kvlint check`` never loads it.
"""

from __future__ import annotations

import sys
from typing import Any

_KIND_LABELS = {
    "full": "full attention",
    "full_kv_shared": "full attention, K = V shared",
    "sliding": "sliding window",
    "chunked": "chunked local attention",
    "mla": "MLA latent",
    "shared": "reuses another layer's cache",
    "state": "linear attention / Mamba state",
    "none": "no cache",
}


def _describe(group: dict[str, Any]) -> str:
    label = _KIND_LABELS.get(group["kind"], group["kind"])
    parts = [f"{group['count']} x {label}"]
    if "kv_heads" in group:
        dims = (
            f"{group['head_dim_k']}"
            if group["head_dim_v"] in (0, group["head_dim_k"])
            else f"{group['head_dim_k']}+{group['head_dim_v']}"
        )
        tensors = "K+V" if group["head_dim_v"] else "one tensor"
        parts.append(f"{group['kv_heads']} KV heads x {dims} ({tensors})")
    if "window" in group:
        parts.append(f"window {group['window']:,}")
    if "state_elements" in group:
        parts.append(f"{group['state_elements']:,} state values")
    return ", ".join(parts)


def _t(value: Any) -> str:
    """A value from a file or a config, printed as text: rich markup (`[bold]`, `[link=...]`)
    and control characters escaped, so a model or file name cannot restyle or move the output."""
    from rich.markup import escape

    from kvlint.finding import printable

    return str(escape(printable(str(value))))


def _console() -> Any:
    from rich.console import Console

    console = Console(highlight=False)
    if not console.is_terminal:  # piped or captured: whole rows, never an ellipsis in a number
        console = Console(highlight=False, width=max(console.width, 120))
    return console


def print_model(report: dict[str, Any]) -> None:
    """One model's report: the title, its layer kinds, the table, then the fixed part and notes."""
    from rich.table import Table

    from kvlint.units import format_bytes

    console = _console()
    title = f"{_t(report['model'])}: KV cache in {_t(report['kv_cache_dtype'])}"
    console.print(f"[bold]{title}[/bold]")
    about = f"{_t(report['detail'])}; {_t(report['attention'])}, {_t(report['dtype'])} model"
    console.print(f"[dim]{about}[/dim]")
    for group in report["layer_groups"]:
        console.print(f"  {_t(_describe(group))}")

    table = Table(show_header=True, header_style="bold")
    table.add_column("")
    table.add_column("tokens", justify="right")
    table.add_column("correct", justify="right")
    table.add_column("bytes", justify="right", no_wrap=True)
    table.add_column("cancelled formula", justify="right")
    per_token = report["per_token_bytes"]
    cancelled = report["cancelled_per_token_bytes"]
    table.add_row(
        "per token",
        "1",
        f"{format_bytes(per_token)}",
        f"{per_token:,}",
        format_bytes(cancelled),
    )
    for tokens, value in report["per_sequence_at"].items():
        n = int(tokens)
        table.add_row(
            "per sequence",
            f"{n:,}",
            format_bytes(value),
            f"{value:,}",
            format_bytes(cancelled * n),
        )
    ctx = report["context"]
    label = f"at {_t(report['context_from'])}"
    table.add_row(
        label,
        f"{ctx:,}",
        format_bytes(report["per_sequence_bytes"]),
        f"{report['per_sequence_bytes']:,}",
        format_bytes(report["cancelled_per_sequence_bytes"]),
    )
    if report["batch"] > 1:
        table.add_row(
            f"x {report['batch']} sequences",
            f"{ctx * report['batch']:,}",
            format_bytes(report["total_bytes"]),
            f"{report['total_bytes']:,}",
            format_bytes(report["cancelled_per_sequence_bytes"] * report["batch"]),
        )
    console.print(table)
    fixed = report["bounded_bytes"] + report["state_bytes"]
    if fixed:
        console.print(
            f"fixed per sequence at {ctx:,} tokens (windows, chunks, states): {format_bytes(fixed)}"
        )
    ratio = report["ratio"]
    if ratio is not None:
        console.print(
            f"the cancelled formula (head_dim = hidden_size / kv_heads, "
            f"2 x {report['num_layers']} layers x hidden_size) overstates the cache "
            f"{ratio:g}x per token"
        )
    for note in report["notes"]:
        console.print(f"[dim]note: {_t(note)}[/dim]")


def print_problem(problem: dict[str, Any]) -> None:
    """A problem in the file, on stderr as ``path:line:col: CODE message``."""
    from kvlint.finding import printable

    print(
        f"{printable(problem['path'])}:{problem['line']}:{problem['column']}: {problem['code']} "
        f"{printable(problem['message'])}",
        file=sys.stderr,
    )


def print_deployment(report: dict[str, Any]) -> None:
    """One deployment: a rule, the settings used, its model's table and the engine's line."""
    console = _console()
    console.rule(
        f"{_t(report['path'])}:{report['line']}: {_t(report['name'])} ({_t(report['engine_name'])})"
    )
    settings = report["settings"]
    if settings:
        used = ", ".join(
            f"{_t(name)}={_t(item['value'])}"
            + (" (default)" if item["default"] else f" (line {item['line']})")
            for name, item in settings.items()
        )
        console.print(f"[dim]settings: {used}[/dim]")
    if "error" in report:
        console.print(f"model not sized: {_t(report['error'])}")
        return
    if "per_token_bytes" not in report:
        console.print("no model named: nothing to size")
        return
    print_model(report)
    engine = report.get("engine")
    if engine:
        console.print(_t(_engine_line(engine)))


def _regime(engine: dict[str, Any]) -> str:
    """', regime v1-0.21/*/tp1 from 6 logs of 5 sources': where the band comes from."""
    regime, logs, sources = (engine.get(k) for k in ("band_regime", "band_logs", "band_sources"))
    if regime is None or logs is None:
        return ""
    return f" from {logs} logs of {sources} sources, regime {regime}"


def _engine_line(engine: dict[str, Any]) -> str:
    from kvlint.units import format_band
    from kvlint.units import format_bytes

    parts = [f"{engine['engine']} {engine['version']} accounting"]
    low, high = engine.get("available_kv_bytes_low"), engine.get("available_kv_bytes_high")
    if engine.get("available_kv_bytes") is not None:
        pool = f"KV pool {format_bytes(engine['available_kv_bytes'])} per GPU"
        if low is not None and high:  # none wholly at zero: the weights alone do not fit
            pool += f" (90% band {format_band(low, high)}{_regime(engine)})"
        elif engine.get("band_note"):
            pool += f" ({engine['band_note']})"
        parts.append(pool)
    if engine.get("kv_cache_tokens") is not None:
        tokens = f"{engine['kv_cache_tokens']:,} tokens"
        t_low, t_high = engine.get("kv_cache_tokens_low"), engine.get("kv_cache_tokens_high")
        if t_low is not None and t_high:
            tokens += f" ({t_low:,}-{t_high:,})"
        parts.append(tokens)
    if engine.get("max_concurrency") is not None:
        parts.append(
            f"max concurrency {engine['max_concurrency']:.2f}x at {engine['max_model_len']:,}"
        )
    verdict = engine.get("verdict")
    why = engine.get("refusal") or engine.get("band_refusal")
    why = getattr(why, "value", why)  # the enum as sized, its text as read from JSON
    reason = str(why).replace("-", " ") if why else ""
    if verdict == "borderline":
        straddles = "; ".join(filter(None, (reason, "the band straddles the limit")))
        parts.append(f"borderline: the engine may refuse to start ({straddles})")
    elif engine.get("fits") is False:
        parts.append(
            f"the engine would refuse to start ({reason})"
            if reason
            else "the engine would refuse to start"
        )
    if engine.get("version_doubt"):
        parts.append(str(engine["version_doubt"]))
    if engine.get("missing"):
        parts.append("missing: " + ", ".join(engine["missing"]))
    return "; ".join(parts)
