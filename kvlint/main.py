"""The command line: ``kvlint check | size | explain | rules | models | solve``; exit 0 / 1 / 2."""

from __future__ import annotations

import argparse
import gc
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


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, sized without importing shutil.

    argparse builds a formatter for every ``add_argument`` (to check the metavar), and the base
    class imports shutil for the terminal width: with bz2, lzma and fnmatch that is ~3 ms of a
    one-file ``kvlint check`` (issue 9). The width is found the way shutil finds it: ``COLUMNS``,
    else the terminal, else 80.
    """

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        if width is None:
            width = _columns() - 2  # the margin argparse keeps
        super().__init__(prog, indent_increment, max_help_position, width)


def _columns() -> int:
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    stream = sys.__stdout__
    if stream is None:
        return 80
    try:
        return os.get_terminal_size(stream.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


def build_parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kvlint", description=__doc__, formatter_class=HelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"kvlint {__version__}")
    parser.add_argument(
        "--traceback", action="store_true", help="show a Python traceback on internal errors"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    # Only the chosen command's module is imported; the others get a bare parser for --help.
    chosen = next((a for a in argv if a in COMMANDS), None)
    for name, (_, help_text) in COMMANDS.items():
        command_parser = sub.add_parser(
            name, help=help_text, description=help_text, formatter_class=HelpFormatter
        )
        if name == chosen:
            _load(name).add_arguments(command_parser)
    return parser


# The collector's first threshold for the command line. Start-up creates tens of thousands of
# objects that live as long as the process (modules, classes, tables, the catalog): at the
# default (700 allocations) the collector ran 44 times in a one-file check and found nothing
# to free, 6 ms of the run (issue 20). Cycles are still collected, this many allocations apart.
GC_THRESHOLD = 50_000


def main(argv: Sequence[str] | None = None) -> int:
    if gc.get_threshold()[0] < GC_THRESHOLD:
        gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
    code = _command(list(sys.argv[1:] if argv is None else argv))
    if argv is None:
        # This process's own command line (the console script, `python -m kvlint`): it ends
        # when main returns, and the interpreter's exit runs the collector over every object
        # start-up made (modules, classes, tables, the catalog: ~29,000 in a one-file check,
        # 565 of them garbage the process's end frees anyway) more than once: 12 ms, a seventh
        # of the run (issue 20). Frozen, they are left out of it; the exit still runs atexit
        # hooks, flushes and closes files and frees what reference counts free. A caller that
        # passes argv (tests, a program embedding kvlint) keeps its collector as it was.
        gc.freeze()
    return code


def _command(args_list: list[str]) -> int:
    from kvlint.errors import ClosedPipe
    from kvlint.errors import KvlintError

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
        for line in exc.lines():
            print(f"kvlint: {line}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Output piped into `head`: nothing more to say. Silence the interpreter's own flush error.
        from kvlint.writing import silence_stdout

        silence_stdout()
        return 0
    except ClosedPipe as closed:
        return closed.code  # `kvlint check | head`: the verdict the run had reached
    except Exception as exc:
        if getattr(args, "traceback", False):
            raise
        print(
            f"kvlint: internal error: {type(exc).__name__}: {exc} "
            "(please report it; --traceback shows where)",
            file=sys.stderr,
        )
        return 2
