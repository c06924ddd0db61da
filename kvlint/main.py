"""The command line: ``kvlint check | size | explain | rules | models | solve``; exit 0 / 1 / 2."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Protocol

from kvlint import __version__

# Sub-command name -> module under kvlint.commands, imported only when chosen, so that
# `kvlint check` never pays for what `kvlint size` needs.
COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("kvlint.commands.check", "lint deployment files against the KV-cache arithmetic"),
    "size": ("kvlint.commands.size", "size the KV cache of a model or of a deployment file"),
    "solve": (
        "kvlint.commands.solve",
        "answer planning questions: GPUs, max_model_len, max_num_seqs",
    ),
    "explain": ("kvlint.commands.explain", "print a rule's documentation"),
    "rules": ("kvlint.commands.rules", "list every rule"),
    "models": ("kvlint.commands.models", "list the built-in model catalog"),
}


class Command(Protocol):
    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


def _load(name: str) -> Command:
    module: Command = importlib.import_module(COMMANDS[name][0])
    return module


def build_parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kvlint", description=__doc__)
    parser.add_argument("--version", action="version", version=f"kvlint {__version__}")
    parser.add_argument(
        "--traceback", action="store_true", help="show a Python traceback on internal errors"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    # Only the chosen command's module is imported; the others get a bare parser for --help.
    chosen = next((a for a in argv if a in COMMANDS), None)
    for name, (_, help_text) in COMMANDS.items():
        command_parser = sub.add_parser(name, help=help_text, description=help_text)
        if name == chosen:
            _load(name).add_arguments(command_parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from kvlint.errors import KvlintError

    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(args_list)
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return _load(args.command).run(args)
    except KvlintError as exc:
        print(f"kvlint: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Output piped into `head`: nothing more to say. Silence the interpreter's own flush error.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:
        if getattr(args, "traceback", False):
            raise
        print(
            f"kvlint: internal error: {type(exc).__name__}: {exc} "
            "(please report it; --traceback shows where)",
            file=sys.stderr,
        )
        return 2
