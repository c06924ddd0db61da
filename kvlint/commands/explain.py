"""``kvlint explain CODE [--file PATH]``: a rule's doc, and the arithmetic behind its findings."""

from __future__ import annotations

import argparse
import sys

from kvlint import codes
from kvlint.errors import KvlintError
from kvlint.finding import Severity


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rule", metavar="CODE", help="a rule code (KV301) or name")
    parser.add_argument(
        "--file", metavar="PATH", help="also show the numbers behind each finding of it in PATH"
    )
    parser.add_argument("--gpu", metavar="NAME", help="with --file: the GPU when PATH names none")
    parser.add_argument("--offline", action="store_true", help="never download a config.json")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto")


def run(args: argparse.Namespace) -> int:
    from kvlint import explain
    from kvlint.commands.check import use_color
    from kvlint.registry import default_registry

    registry = default_registry()
    rule = registry.get(args.rule)
    if rule is None:
        raise KvlintError(f"no rule has the code or name `{args.rule}` (see `kvlint rules`)")
    if use_color(args.color, sys.stdout):
        from rich.console import Console
        from rich.markdown import Markdown

        console = Console(file=sys.stdout, force_terminal=True)
        console.print(Markdown(explain.markdown(rule)))
    else:
        sys.stdout.write(explain.plain(rule))
    if args.file:
        from pathlib import Path

        from kvlint.config import find_config
        from kvlint.config import load_config
        from kvlint.config import resolve
        from kvlint.files import shown_name
        from kvlint.linter import lint_paths

        settings = resolve(
            load_config(find_config(Path(args.file))),
            registry,
            select=[
                rule.code,
                codes.UNREADABLE_FILE,
            ],  # and the file's reading: a file not read is no pass
            gpu=args.gpu,
            offline=args.offline,
        )
        found = lint_paths([args.file], settings).findings
        findings = [f for f in found if f.code == rule.code]
        count = f"{len(findings)} finding{'' if len(findings) == 1 else 's'}"
        sys.stdout.write(f"\n{count} of {rule.code} in {shown_name(args.file)}\n\n")
        sys.stdout.write(explain.arithmetic(findings))
        unread = [f for f in found if f.code.startswith("KV9") and f.severity is Severity.ERROR]
        if unread:
            from kvlint.report.concise import concise_line

            sys.stdout.flush()
            for finding in unread:  # why there is nothing to explain: exit 2, as check does
                print(concise_line(finding), file=sys.stderr)
            return 2
    return 0
