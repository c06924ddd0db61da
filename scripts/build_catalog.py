#!/usr/bin/env python3
"""Regenerate built-in catalog entries from config.json files: the keys the family code reads,
where the file came from, and its sha256.

    scripts/build_catalog.py CONFIG.json... [--id ORG/NAME]... [--repo R --revision REV --path P]
                             [--url URL] [--note TEXT] [--alias NAME]... [--write]
    scripts/build_catalog.py ../shared/fixtures/hf-configs/*.json \\
        --provenance-table ../shared/fixtures/hf-configs/SOURCES.md --write

Without ``--id`` the id comes from the file name (``org__name.json``, ``org--name_config.json``
or a Hugging Face cache path). ``--write`` merges the entries into the package's
``models.json`` (same id: replaced, keeping its aliases and unrestated provenance; new: appended);
without it the entries are printed.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from typing import Any

from kvlint.errors import KvlintError
from kvlint.model.catalog.build import build_entry
from kvlint.model.catalog.build import id_from_path
from kvlint.model.catalog.build import merge_entries
from kvlint.model.catalog.build import provenance_table

CATALOG = (
    pathlib.Path(__file__).resolve().parent.parent / "kvlint" / "model" / "catalog" / "models.json"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("configs", nargs="+", type=pathlib.Path, metavar="CONFIG.json")
    parser.add_argument(
        "--id", dest="ids", action="append", default=[], help="one per config, in order"
    )
    parser.add_argument(
        "--alias", action="append", default=[], help="another name (one config only)"
    )
    parser.add_argument("--repo", help="the repository the file was taken from")
    parser.add_argument("--revision", help="its commit")
    parser.add_argument("--path", dest="repo_path", help="the file's path in that repository")
    parser.add_argument("--url", help="where the file can be read")
    parser.add_argument("--note", help="anything else about the facts' origin")
    parser.add_argument(
        "--provenance-table", type=pathlib.Path, help="a SOURCES.md table by file name"
    )
    parser.add_argument("--catalog", type=pathlib.Path, default=CATALOG)
    parser.add_argument("--write", action="store_true", help="merge into the catalog file")
    args = parser.parse_args(argv)

    if args.ids and len(args.ids) != len(args.configs):
        parser.error(
            f"{len(args.ids)} --id for {len(args.configs)} configs: give one per config or none"
        )
    if args.alias and len(args.configs) != 1:
        parser.error("--alias applies to a single config")
    table = (
        provenance_table(args.provenance_table.read_text(encoding="utf-8"))
        if args.provenance_table
        else {}
    )
    given = {
        key: value
        for key, value in (
            ("repo", args.repo),
            ("revision", args.revision),
            ("path", args.repo_path),
            ("url", args.url),
            ("note", args.note),
        )
        if value
    }

    built: list[dict[str, Any]] = []
    for index, path in enumerate(args.configs):
        model_id = args.ids[index] if args.ids else id_from_path(path)
        if model_id is None:
            parser.error(f"{path}: cannot tell the model id from the file name; pass --id ORG/NAME")
        row = table.get(path.name, {})
        source = {**row, **given}
        if row.get("note") and given.get("note"):
            source["note"] = f"{row['note']}; {given['note']}"
        try:
            built.append(
                build_entry(path, model_id=model_id, source=source, aliases=tuple(args.alias))
            )
        except (KvlintError, OSError, ValueError) as exc:
            print(f"build_catalog: {path}: {exc}", file=sys.stderr)
            return 2

    if not args.write:
        json.dump(built, sys.stdout, indent=1)
        print()
        return 0
    data = json.loads(args.catalog.read_text(encoding="utf-8"))
    data["models"] = merge_entries(data["models"], built)
    args.catalog.write_text(dump_catalog(data), encoding="utf-8")
    print(f"build_catalog: {len(built)} entries written to {args.catalog}", file=sys.stderr)
    return 0


def dump_catalog(data: dict[str, Any]) -> str:
    """One entry per line group, short lists on one line: small diffs, readable by eye."""
    lines = [
        "{",
        f' "format": {json.dumps(data["format"])},',
        f' "about": {json.dumps(data["about"])},',
        ' "models": [',
    ]
    models = data["models"]
    for index, record in enumerate(models):
        comma = "," if index < len(models) - 1 else ""
        lines.append("  {")
        items = list(record.items())
        for item_index, (key, value) in enumerate(items):
            item_comma = "," if item_index < len(items) - 1 else ""
            lines.append(f"   {json.dumps(key)}: {json.dumps(value, sort_keys=False)}{item_comma}")
        lines.append("  }" + comma)
    lines.extend([" ]", "}"])
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
