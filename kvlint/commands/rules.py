"""``kvlint rules [--format text|markdown|json]``: every rule, with its code, name and summary."""

from __future__ import annotations

import argparse
import json
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=("text", "markdown", "json"), default="text")


def run(args: argparse.Namespace) -> int:
    from kvlint import explain
    from kvlint.registry import default_registry

    registry = default_registry()
    for error in registry.errors:
        print(f"kvlint: warning: {error}", file=sys.stderr)
    rows = explain.rules_table(registry)
    if args.format == "markdown":
        sys.stdout.write(explain.rules_markdown(registry))
    elif args.format == "json":
        records = [
            {
                "code": rule.code,
                "name": rule.name,
                "severity": str(rule.severity),
                "engines": sorted(rule.engines),
                "fixable": rule.fix_availability.value,
                "summary": rule.doc().summary,
                "package": registry.packages[rule.code],
            }
            for rule in registry
        ]
        json.dump(records, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        widths = [max(len(row[i]) for row in rows) if rows else 0 for i in range(5)]
        for row in rows:
            cells = [cell.ljust(width) for cell, width in zip(row[:5], widths, strict=True)]
            sys.stdout.write("  ".join([*cells, row[5]]).rstrip() + "\n")
    return 0
