"""The GitHub Action's work: one check, three reports (log, SARIF, job summary), step outputs.

``scripts/action.sh run`` calls ``python -I -m kvlint.action``; the inputs arrive as the
``INPUT_*`` variables ``action.yml`` sets, the way GitHub passes them to a JavaScript action.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import sys
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from typing import TextIO

from kvlint.errors import KvlintError
from kvlint.finding import printable

if TYPE_CHECKING:
    from kvlint.linter import LintResult
    from kvlint.linter import Summary
    from kvlint.report.base import Reporter

LOG_FORMATS = ("github", "concise", "full", "json")


@dataclass(frozen=True)
class Inputs:
    """The action's inputs, read from the environment."""

    paths: tuple[str, ...]
    args: tuple[str, ...]
    format: str
    fail_on: str
    sarif_file: str | None
    summary: bool

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Inputs:
        def get(name: str, default: str = "") -> str:
            return env.get(f"INPUT_{name}", "").strip() or default

        try:
            paths = tuple(shlex.split(get("PATHS", ".")))
            args = tuple(shlex.split(get("ARGS")))
        except ValueError as exc:  # an unbalanced quote
            raise KvlintError(f"action input: {exc}") from None
        fmt = get("FORMAT", "github")
        if fmt not in LOG_FORMATS:
            known = ", ".join(LOG_FORMATS)
            raise KvlintError(f"action input `format`: unknown format `{fmt}` (use {known})")
        return cls(
            paths=paths or (".",),
            args=args,
            format=fmt,
            fail_on=get("FAIL_ON", "warning"),
            sarif_file=get("SARIF_FILE") or None,
            summary=get("SUMMARY", "true").lower() not in ("false", "0", "no", "off"),
        )


def expand_paths(paths: Sequence[str]) -> list[str]:
    """``paths`` with each glob (``deploy/*.yaml``, ``charts/**/values.yaml``) replaced by the
    files it matches, sorted: a workflow's ``with:`` passes them unexpanded, no shell between.
    A glob that matches nothing is an error (a typo must not check nothing)."""
    import glob

    out: list[str] = []
    for path in paths:
        if not any(char in path for char in "*?["):
            out.append(path)
            continue
        found = sorted(glob.glob(path, recursive=True))
        if not found:
            raise KvlintError(f"action input `paths`: `{path}` matches no file")
        out.extend(found)
    return out


def check_arguments(inputs: Inputs) -> argparse.Namespace:
    """The inputs parsed by ``kvlint check``'s own parser, so ``args`` means what it means on
    the command line; ``args`` comes last and so wins (``--fail-on`` given twice)."""
    from kvlint.commands import check

    parser = argparse.ArgumentParser(prog="kvlint check", exit_on_error=False)
    check.add_arguments(parser)
    argv = [*expand_paths(inputs.paths), "--fail-on", inputs.fail_on, *inputs.args]
    try:
        return parser.parse_args(argv)
    except argparse.ArgumentError as exc:
        raise KvlintError(f"action input: {exc}") from None
    except SystemExit:  # argparse has printed the usage error
        raise KvlintError(f"action input: cannot parse `kvlint check {shlex.join(argv)}`") from None


def feed(reporters: Sequence[Reporter], result: LintResult, summary: Summary) -> None:
    """Drive every reporter through the lifecycle over the one result."""
    for reporter in reporters:
        reporter.start()
    for deployment in result.deployments:
        for reporter in reporters:
            reporter.deployment(deployment)
    for finding in result.findings:
        for reporter in reporters:
            reporter.finding(finding)
    for reporter in reporters:
        reporter.finish(summary)


@contextlib.contextmanager
def _opened(
    path: str | None, result: LintResult, inputs: Inputs, *, append: bool = False
) -> Iterator[TextIO | None]:
    """A report file (the SARIF log; the step summary, appended to: other steps of the job
    write there too), never through a link in the workspace nor over a checked file."""
    from kvlint.writing import open_report

    if not path:
        yield None
        return
    checked = [Path(p) for p in result.files]
    handle = open_report(path, inputs=inputs.paths, checked=checked, append=append)
    try:
        with handle:
            yield handle
    except OSError as exc:
        raise KvlintError(f"cannot write: {exc.strerror or exc}", path=path) from None


def write_outputs(env: Mapping[str, str], values: Mapping[str, str]) -> None:
    """``name=value`` lines for ``$GITHUB_OUTPUT`` (every value here is a single line)."""
    from kvlint.writing import open_report

    path = env.get("GITHUB_OUTPUT")
    if not path:
        return
    with open_report(path, append=True) as out:
        for name, value in values.items():
            out.write(f"{name}={value}\n")


def run_action(env: Mapping[str, str], stdout: TextIO) -> int:
    from kvlint.commands.check import build_settings
    from kvlint.commands.check import build_tree
    from kvlint.linter import lint_paths
    from kvlint.linter import summarise
    from kvlint.report import reporter_class
    from kvlint.report.base import ReportOptions
    from kvlint.report.github import escape_data
    from kvlint.report.sarif import SarifReporter
    from kvlint.report.summary import SummaryReporter

    inputs = Inputs.from_env(env)
    args = check_arguments(inputs)
    tree = build_tree(args)
    result = lint_paths(args.paths, tree, force_exclude=args.force_exclude)
    settings = build_settings(args, tree)
    for error in result.plugin_errors:
        print(f"::warning title=kvlint plugin::{escape_data(printable(str(error)))}", file=stdout)
    summary = summarise(result, settings.fail_on)
    options = ReportOptions(statistics=args.statistics)
    step_summary = env.get("GITHUB_STEP_SUMMARY") if inputs.summary else None
    with (
        _opened(inputs.sarif_file, result, inputs) as sarif,
        _opened(step_summary, result, inputs, append=True) as markdown,
    ):
        if inputs.format == "github":  # errors first, and a word when GitHub would drop some
            from kvlint.report.github import ActionAnnotations

            log: Reporter = ActionAnnotations(stdout, options)
        else:
            log = reporter_class(inputs.format)(stdout, options)
        reporters: list[Reporter] = [log]
        if sarif is not None:
            reporters.append(SarifReporter(sarif))
        if markdown is not None:
            reporters.append(SummaryReporter(markdown))
        feed(reporters, result, summary)
    write_outputs(
        env,
        {
            "exit-code": str(summary.exit_code),
            "findings": str(summary.total),
            "errors": str(summary.by_severity.get("error", 0)),
            "warnings": str(summary.by_severity.get("warning", 0)),
            "sarif-file": inputs.sarif_file or "",
        },
    )
    return summary.exit_code


def main(env: Mapping[str, str] | None = None) -> int:
    environ = os.environ if env is None else env
    try:
        return run_action(environ, sys.stdout)
    except KvlintError as exc:
        # An annotation as well as the log line, so the pull request shows why nothing ran.
        from kvlint.report.github import escape_data

        for line in exc.lines():
            print(f"::error title=kvlint::{escape_data(line)}")
            print(f"kvlint: {line}", file=sys.stderr)
        write_outputs(environ, {"exit-code": "2", "findings": "0"})
        return 2


if __name__ == "__main__":
    sys.exit(main())
