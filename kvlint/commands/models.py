"""``kvlint models``: the built-in catalog, one row per model, with where its facts came from."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument(
        "filter", nargs="?", metavar="TEXT", help="only models whose id or alias contains TEXT"
    )


def catalog_rows(text_filter: str | None = None) -> list[dict[str, Any]]:
    """One record per catalog entry (this builds every entry's ModelSpec: a listing, not a hot
    path)."""
    from kvlint.arith.kv import kv_size
    from kvlint.model import catalog

    needle = (text_filter or "").lower()
    rows: list[dict[str, Any]] = []
    for entry in catalog.entries():
        names = (entry.id, *entry.aliases)
        if needle and not any(needle in name.lower() for name in names):
            continue
        if entry.unsized:  # in the catalog so that a lookup says what is missing
            rows.append(_unsized_row(entry))
            continue
        spec = catalog.entry_spec(entry.id)
        kv = kv_size(spec)
        growing = [layer for layer in spec.layers if layer.kind.grows]
        head_dim = growing[0].head_dim_k if growing else spec.head_dim
        rows.append(
            {
                "id": entry.id,
                "aliases": list(entry.aliases),
                "model_type": spec.model_type,
                "attention": spec.attention_kind,
                "layers": spec.num_layers,
                "layer_kinds": spec.layer_counts(),
                "kv_heads": spec.num_key_value_heads,
                "head_dim": head_dim,
                "dtype": spec.dtype,
                "per_token_bytes": kv.per_token_bytes,
                "max_position_embeddings": spec.max_position_embeddings,
                "quantization": spec.quantization.method if spec.quantization else None,
                "base": entry.base,
                "source": dict(entry.source),
            }
        )
    return rows


def _unsized_row(entry: Any) -> dict[str, Any]:
    """An entry kvlint does not size: its config's type, and the refusal instead of figures."""
    config = entry.config.get("text_config") or entry.config
    return {
        "id": entry.id,
        "aliases": list(entry.aliases),
        "model_type": config.get("model_type") or entry.config.get("model_type"),
        "unsized": entry.unsized,
        "base": entry.base,
        "source": dict(entry.source),
    }


def _kinds(counts: dict[str, int]) -> str:
    return " ".join(f"{kind}:{count}" for kind, count in counts.items())


def _source(row: dict[str, Any]) -> str:
    src = row["source"]
    if src.get("repo"):
        return f"{src['repo']}@{src.get('revision', '')[:7]}"
    if row["base"]:
        return f"= {row['base']}"
    if src.get("url"):
        return "model card / Hub config"
    return ""


def run(args: argparse.Namespace) -> int:
    rows = catalog_rows(args.filter)
    if args.format == "json":
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    from rich.console import Console
    from rich.table import Table

    from kvlint.units import format_binary

    table = Table(title=f"kvlint built-in catalog: {len(rows)} models", header_style="bold")
    for name, justify in (
        ("model", "left"),
        ("attention", "left"),
        ("layers", "left"),
        ("KV heads", "right"),
        ("head_dim", "right"),
        ("bytes/token", "right"),
        ("dtype", "left"),
        ("source", "left"),
    ):
        table.add_column(name, justify=justify, no_wrap=name == "model")  # type: ignore[arg-type]
    for row in rows:
        if row.get("unsized"):
            table.add_row(row["id"], "not sized", f"({row['model_type']})", "", "", "", "",
                          _source(row))  # fmt: skip
            continue
        attention = row["attention"]
        if row["quantization"]:
            attention += f" ({row['quantization']})"
        table.add_row(
            row["id"],
            attention,
            f"{row['layers']} ({_kinds(row['layer_kinds'])})",
            str(row["kv_heads"]),
            str(row["head_dim"]),
            format_binary(row["per_token_bytes"]),
            row["dtype"],
            _source(row),
        )
    console = Console(highlight=False)
    if not console.is_terminal:  # piped or captured: room for the whole row, as `ls -l` would
        console = Console(highlight=False, width=max(console.width, 200))
    console.print(table)
    return 0
