"""``kvlint check PATH...``: lint deployment files; exit 0 clean, 1 findings, 2 bad input."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import sys
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from typing import TextIO

from kvlint.errors import ClosedPipe
from kvlint.errors import KvlintError

if TYPE_CHECKING:
    from collections.abc import Callable

    from kvlint.config import Settings
    from kvlint.config_tree import ConfigTree
    from kvlint.finding import Finding
    from kvlint.linter import LintResult
    from kvlint.linter import Summary
    from kvlint.report.base import Reporter

FORMATS = ("concise", "full", "json", "github", "sarif", "gitlab", "junit")
SEVERITIES = ("error", "warning", "info")


def _codes(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        default=["."],
        metavar="PATH",
        help="files or folders (default: .); - reads one file from stdin",
    )
    parser.add_argument(
        "--stdin-filename",
        metavar="PATH",
        help="the path of what stdin holds: its positions, config lookup and reports",
    )
    select = parser.add_argument_group("rule selection (codes, prefixes such as KV3, or names)")
    select.add_argument(
        "--select", type=_codes, action="append", metavar="CODES", help="replaces the config's"
    )
    select.add_argument(
        "--ignore", type=_codes, action="append", metavar="CODES", help="adds to the config's"
    )
    select.add_argument(
        "--extend-select", type=_codes, action="append", metavar="CODES", help="adds to select"
    )
    facts = parser.add_argument_group("facts the files may not give")
    facts.add_argument("--gpu", metavar="NAME", help="the GPU of deployments that name none")
    facts.add_argument(
        "--engine-version", metavar="V", help="engine version when a file gives none (or ENGINE=V)"
    )
    facts.add_argument(
        "--reserved-memory",
        metavar="SIZE",
        help="memory of each GPU other residents hold (`16 GB`), for deployments that state none",
    )
    facts.add_argument(
        "--offline", action="store_true", help="never download a model's config.json"
    )
    parser.add_argument(
        "--jobs",
        "-j",
        type=_positive_int,
        metavar="N",
        help="check files in N processes when there are many "
        "(default: the idle cores; 1 under pre-commit)",
    )
    config = parser.add_mutually_exclusive_group()
    config.add_argument(
        "--config", metavar="FILE", help="use this config file for every file, no discovery"
    )
    config.add_argument("--no-config", action="store_true", help="ignore every config file")
    parser.add_argument(
        "--force-exclude",
        action="store_true",
        help="apply exclude patterns and .gitignore to files named here too (pre-commit)",
    )
    output = parser.add_argument_group("output")
    output.add_argument(
        "--format",
        choices=FORMATS,
        help="default: github under GITHUB_ACTIONS, full on a terminal, concise otherwise",
    )
    output.add_argument("--output-file", metavar="FILE", help="write the report here")
    output.add_argument(
        "--statistics",
        action="store_true",
        help="counts per rule (with severity and fix mark) instead of each finding",
    )
    output.add_argument(
        "--quiet", "-q", action="store_true", help="leave info findings out of the report"
    )
    output.add_argument(
        "--exit-zero",
        action="store_true",
        help="exit 0 even with findings (unreadable input still exits 2)",
    )
    output.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    output.add_argument(
        "--fail-on", choices=SEVERITIES, help="lowest severity that fails the run (default warning)"
    )
    fixes = parser.add_argument_group("fixes (kvlint.fix)")
    fixes.add_argument("--fix", action="store_true", help="apply safe fixes, then report the rest")
    fixes.add_argument(
        "--unsafe-fixes", action="store_true", help="with --fix or --diff, unsafe fixes too"
    )
    fixes.add_argument(
        "--diff", action="store_true", help="print the fixes as a diff; write nothing"
    )
    fixes.add_argument(
        "--show-fixes",
        action="store_true",
        help="with --fix, list each fix made and what it changed",
    )


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of processes, got {text!r}")
    return value


def _flat(values: Sequence[Sequence[str]] | None) -> list[str] | None:
    return None if values is None else [code for group in values for code in group]


def build_tree(args: argparse.Namespace) -> ConfigTree:
    """Each file's config (its nearest, the one ``--config`` names, or none) with the
    command-line values on top."""
    from kvlint.config_tree import ConfigTree
    from kvlint.config_tree import Overrides
    from kvlint.registry import default_registry

    overrides = Overrides(
        select=_flat(args.select),
        ignore=_flat(args.ignore) or [],
        extend_select=_flat(args.extend_select) or [],
        fail_on=args.fail_on,
        gpu=args.gpu,
        engine_version=args.engine_version,
        offline=args.offline,
        reserved_memory=args.reserved_memory,
    )
    if args.no_config:
        return ConfigTree(default_registry(), overrides, config=None)
    if args.config:
        path = Path(args.config)
        if not path.exists():  # a FIFO or a device is refused by the reader, with its reason
            raise KvlintError("config file not found", path=args.config)
        return ConfigTree(default_registry(), overrides, config=path)
    return ConfigTree(default_registry(), overrides)


def build_settings(args: argparse.Namespace, tree: ConfigTree | None = None) -> Settings:
    """The run's Settings: those of the first path's config (its ``fail-on`` is the summary's;
    each file still fails the run at its own config's)."""
    tree = tree if tree is not None else build_tree(args)
    first = args.paths[0] if args.paths else "."
    if first == "-":
        first = getattr(args, "stdin_filename", None) or "-"
    return tree.settings_for(Path(first))


def _jobs(args: argparse.Namespace) -> int:
    jobs = getattr(args, "jobs", None)
    if jobs is not None:
        return int(jobs)
    from kvlint.parallel import default_jobs

    return default_jobs()


def choose_format(requested: str | None, stream: TextIO) -> str:
    if requested:
        return requested
    if os.environ.get("GITHUB_ACTIONS") == "true":
        return "github"
    return "full" if _isatty(stream) else "concise"


def use_color(mode: str, stream: TextIO) -> bool:
    if mode != "auto":
        return mode == "always"
    return _isatty(stream) and "NO_COLOR" not in os.environ


def _isatty(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


@contextlib.contextmanager
def _output(path: str, inputs: Sequence[str], checked: Sequence[str]) -> Iterator[TextIO]:
    """The ``--output-file``: never written through a link in the tree nor over a checked
    file (kvlint.writing); a failed write (``/dev/full``) is one line, not a traceback."""
    from kvlint.writing import open_report

    checked_files = [Path(p) for p in checked]
    handle = open_report(path, inputs=inputs, checked=checked_files, what="the report")
    try:
        with handle:
            yield handle
    except OSError as exc:
        raise KvlintError(f"cannot write the report: {exc.strerror or exc}", path=path) from None


def run(args: argparse.Namespace) -> int:
    from kvlint.linter import lint_paths
    from kvlint.linter import summarise

    tree = build_tree(args)
    if "-" in args.paths and (args.fix or args.diff or len(args.paths) > 1):
        raise KvlintError("`-` (stdin) is checked alone, and without --fix or --diff")
    if args.fix or args.diff:
        from kvlint.fix import run as run_fixes

        status = run_fixes(args, tree)
        if status is not None:
            return status
    sources: dict[str, str] = {}
    if "-" not in args.paths and args.output_file is None:
        chosen = choose_format(args.format, sys.stdout)
        if chosen in STREAMED:
            return _streamed(args, tree, chosen)
    if "-" in args.paths:
        result, sources = _lint_stdin(args, tree)
    else:
        result = lint_paths(args.paths, tree, jobs=_jobs(args), force_exclude=args.force_exclude)
    settings = build_settings(args, tree)  # resolved already, with every file's config
    for error in result.plugin_errors:
        print(f"kvlint: warning: {error}", file=sys.stderr)
    for notice in result.notices:
        print(f"kvlint: {notice}", file=sys.stderr)
    summary = summarise(result, settings.fail_on)
    if args.quiet:
        # The report leaves info findings out; the exit code still counts them (--fail-on info).
        result = without_info(result)
        summary = dataclasses.replace(
            summarise(result, settings.fail_on), exit_code=summary.exit_code
        )
    code = 0 if args.exit_zero and summary.exit_code == 1 else summary.exit_code
    if args.output_file is not None:
        # The file gets the report asked for; the terminal still gets its default one (ruff).
        with _output(args.output_file, args.paths, result.files) as stream:
            _report(stream, choose_format(args.format, stream), args, result, summary, sources)
    with closed_pipe_keeps(code):
        stream_format = None if args.output_file is not None else args.format
        _report(
            sys.stdout, choose_format(stream_format, sys.stdout), args, result, summary, sources
        )
        sys.stdout.flush()  # here, not at exit: a closed pipe is seen while the code is known
    return code


# Formats written one finding at a time, each file's as soon as it is checked: nothing of a
# file is kept once it is written, so memory stays flat however many files are checked.
STREAMED = ("concise", "github")


def _streamed(args: argparse.Namespace, tree: ConfigTree, name: str) -> int:
    """``check`` with a report written as each file finishes, the summary from counters.

    The files are checked in the report's order (by display path, as the sorted findings of a
    whole run are), so each file's findings are written as soon as it is done and the output
    is byte for byte that of the report made at the end."""
    from kvlint.finding import Severity
    from kvlint.linter import Tally
    from kvlint.linter import lint_each
    from kvlint.linter import prepare

    run, targets = prepare(args.paths, tree, force_exclude=args.force_exclude)
    targets.sort(key=lambda target: target[1])
    settings = build_settings(args, tree)
    fail_on = {d: run.per_file[p].fail_on for p, d in targets if p in run.per_file}
    reporter = _reporter(sys.stdout, name, args)
    out = _Guarded()
    every, shown = Tally(), Tally()
    out.call(reporter.start)
    for (_, display), (deployments, findings) in zip(
        targets, lint_each(run, targets, jobs=_jobs(args)), strict=True
    ):
        every.add_file(deployments, findings, fail_on.get(display))
        if args.quiet:
            # The report leaves info findings out; the exit code still counts them.
            findings = [f for f in findings if f.severity is not Severity.INFO]
        shown.add_file(deployments, findings, fail_on.get(display))
        for finding in findings:
            out.call(reporter.finding, finding)
    errors = run.registry.loaded_errors()
    for error in errors:
        print(f"kvlint: warning: {error}", file=sys.stderr)
    for notice in run.notices():
        print(f"kvlint: {notice}", file=sys.stderr)
    summary = dataclasses.replace(
        shown.summary(settings.fail_on, errors), exit_code=every.exit_code(settings.fail_on)
    )
    code = 0 if args.exit_zero and summary.exit_code == 1 else summary.exit_code
    out.call(reporter.finish, summary)
    out.call(sys.stdout.flush)
    if out.closed:
        raise ClosedPipe(code)  # `kvlint check | head`: the verdict the run reached
    return code


class _Guarded:
    """Calls that write to stdout; once the reader has gone (a closed pipe), none is made, and
    the run goes on to its verdict."""

    def __init__(self) -> None:
        self.closed = False

    def call(self, write: Callable[..., object], *args: object) -> None:
        if self.closed:
            return
        try:
            write(*args)
        except BrokenPipeError:
            from kvlint.writing import silence_stdout

            silence_stdout()  # the interpreter's flush at exit too
            self.closed = True


@contextlib.contextmanager
def closed_pipe_keeps(code: int) -> Iterator[None]:
    """``kvlint check | head -1``: the reader went away. The verdict stays the verdict (a
    finding is still exit 1, not the 0 a bare BrokenPipeError would end in)."""
    try:
        yield
    except BrokenPipeError:
        from kvlint.writing import silence_stdout

        silence_stdout()  # the interpreter's flush at exit too
        raise ClosedPipe(code) from None


def _lint_stdin(args: argparse.Namespace, tree: ConfigTree) -> tuple[LintResult, dict[str, str]]:
    """``kvlint check -``: rendered output (``helm template``, ``kustomize build``) read from
    stdin, at most a deployment file's cap, checked as ``--stdin-filename`` (else ``-``)."""
    from kvlint import reading
    from kvlint.linter import lint_stdin

    data = sys.stdin.buffer.read(reading.DEPLOYMENT.limit + 1)  # more is refused as too large
    from kvlint.files import shown_name

    display = shown_name(args.stdin_filename) if args.stdin_filename else "-"
    result = lint_stdin(data, display, tree)
    return result, {display: data.decode("utf-8", errors="replace")}


def without_info(result: LintResult) -> LintResult:
    """The result with its info findings left out, everywhere a reporter reads them."""
    from kvlint.finding import Severity

    def kept(findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
        return tuple(f for f in findings if f.severity is not Severity.INFO)

    deployments = tuple(
        dataclasses.replace(d, findings=kept(d.findings)) for d in result.deployments
    )
    return dataclasses.replace(result, deployments=deployments, findings=kept(result.findings))


def _reporter(
    stream: TextIO, name: str, args: argparse.Namespace, sources: Mapping[str, str] | None = None
) -> Reporter:
    from kvlint.report import reporter_class
    from kvlint.report.base import ReportOptions

    return reporter_class(name)(
        stream,
        ReportOptions(
            color=use_color(args.color, stream),
            statistics=args.statistics,
            unsafe_fixes=args.unsafe_fixes,
            sources=sources or {},
        ),
    )


def _report(
    stream: TextIO,
    name: str,
    args: argparse.Namespace,
    result: LintResult,
    summary: Summary,
    sources: Mapping[str, str] | None = None,
) -> None:
    reporter = _reporter(stream, name, args, sources)
    reporter.start()
    for deployment in result.deployments:
        reporter.deployment(deployment)
    for finding in result.findings:
        reporter.finding(finding)
    reporter.finish(summary)
