"""``kvlint check --fix`` / ``--diff``: rule fixes spliced into the file text, value by value.

Each ``Edit`` replaces exactly the characters of one value (a YAML scalar, an ``args`` item, a
token of an ``sh -c`` string, an env value, a plan figure) at the offsets the loader recorded;
nothing else of the file is re-serialised, so comments, blank lines, key order, flow or block
style, indentation, CRLF line ends, a BOM and the other documents keep their bytes. A quoted
value stays quoted with the same quote. Like ruff, fixes are applied in rounds: the file is
re-checked after each round (a lowered ``max_model_len`` changes how many sequences fit) until
no fix applies, and a fix whose edits overlap an earlier one waits for the next round. Where an
edit goes and how it is written is ``kvlint.fix_text``; this module runs the rounds over the
files and writes them, or prints the diff.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import stat
from collections.abc import Callable
from collections.abc import Hashable
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

from kvlint import codes
from kvlint import isolation
from kvlint import reading
from kvlint.finding import FIXABLE
from kvlint.finding import UNSAFE_FIX
from kvlint.finding import Applicability
from kvlint.finding import Finding
from kvlint.finding import Fix
from kvlint.finding import Span
from kvlint.finding import fix_marker
from kvlint.finding import printable
from kvlint.fix_text import Range
from kvlint.fix_text import Refused
from kvlint.fix_text import Scalars
from kvlint.fix_text import Text
from kvlint.fix_text import edit_range
from kvlint.fix_text import parse_scalars
from kvlint.lazy_re import lazy
from kvlint.writing import fix_refusal

if TYPE_CHECKING:
    import argparse

    from kvlint.config import Settings
    from kvlint.config_tree import ConfigTree
    from kvlint.linter import Run
    from kvlint.registry import Registry

    # A file's text -> its findings, each with the index of the deployment it belongs to.
    Lint = Callable[[str], list[tuple[Finding, int | None]]]

MAX_ROUNDS = 20

_LINE = lazy(r"[^\n]*\n|[^\n]+\Z")


def applicable(fix: Fix | None, *, unsafe_fixes: bool) -> bool:
    return fix_marker(fix, unsafe_fixes=unsafe_fixes) == FIXABLE


# ---------------------------------------------------------------------------------------------
# One round on one file: the findings' fixes, without overlaps, spliced into the text.


@dataclass(frozen=True)
class Applied:
    """A fix kvlint made: the finding it answers (as found before the fix) and its title."""

    code: str
    span: Span
    title: str
    applicability: Applicability
    changes: tuple[tuple[str, str], ...] = ()  # each edit's text before and after


@dataclass(frozen=True)
class Skipped:
    """A fix with edits that kvlint would apply but could not, and why."""

    code: str
    span: Span
    title: str
    reason: str


@dataclass(frozen=True)
class Round:
    """One pass of fixes over a text: the new text, the fixes applied and skipped."""

    text: str
    applied: tuple[Applied, ...]
    skipped: tuple[Skipped, ...]


def apply_fixes(
    raw: str,
    findings: Iterable[Finding],
    *,
    display: str,
    unsafe_fixes: bool,
    json_file: bool,
    owner: Callable[[Finding], Hashable] | None = None,
) -> Round:
    """Splice the applicable fixes of ``findings`` on file ``display`` into ``raw``.

    Fixes are taken in code order (then position): of the findings with one ``owner`` (a
    deployment) only the first fix is taken, because every fix of a deployment is computed on
    its settings as they were (a cache dtype changes how many sequences fit); the rest wait for
    the re-check. A fix whose edits overlap an edit already taken waits too. A fix's edits go
    in together or not at all; edits that change nothing are dropped.
    """
    text = Text(raw)
    scalars: Scalars | None = None
    normalised_starts = [0, *(m.end() for m in re.finditer("\n", text.normalised()))]
    taken: list[Range] = []
    applied: list[Applied] = []
    skipped: list[Skipped] = []
    owners: set[Hashable] = set()
    for finding in sorted(findings, key=_fix_order):
        fix = finding.fix
        if fix is None or not applicable(fix, unsafe_fixes=unsafe_fixes):
            continue
        key = owner(finding) if owner is not None else None
        if key is not None and key in owners:
            continue
        if scalars is None:
            scalars = parse_scalars(text, display, json_file)
        try:
            ranges = [
                edit_range(text, scalars, normalised_starts, e, display, json_file)
                for e in fix.edits
            ]
        except Refused as refused:
            skipped.append(Skipped(finding.code, finding.span, fix.title, str(refused)))
            continue
        ranges = [r for r in ranges if text.raw[r.start : r.end] != r.text]
        if not ranges or any(_overlaps(r, t) for r in ranges for t in taken):
            continue  # nothing to change, or another fix changes the same value this round
        taken.extend(ranges)
        if key is not None:
            owners.add(key)
        changes = tuple((text.raw[r.start : r.end], r.text) for r in ranges)
        applied.append(Applied(finding.code, finding.span, fix.title, fix.applicability, changes))
    out = text.raw
    for r in sorted(taken, key=lambda r: r.start, reverse=True):
        out = out[: r.start] + r.text + out[r.end :]
    return Round(out, tuple(applied), tuple(skipped))


def _fix_order(finding: Finding) -> tuple[str, str, int, int, str]:
    title = finding.fix.title if finding.fix is not None else ""
    return (finding.code, finding.span.path, finding.span.line, finding.span.column, title)


def _overlaps(a: Range, b: Range) -> bool:
    return a.start < b.end and b.start < a.end


# ---------------------------------------------------------------------------------------------
# Rounds over a file, re-checked in memory; the run over every path.


@dataclass(frozen=True)
class FileFix:
    """One file's fixing: the bytes read, the text after every round, what was done."""

    path: Path
    display: str
    original: bytes
    text: str  # the fixed text ("" when the file could not be decoded)
    applied: tuple[Applied, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    note: str = ""  # why the file was left as it was, when it was
    refusal: str = ""  # why kvlint must not write this file at all (kvlint.writing)
    unreadable: tuple[Finding, ...] = ()  # the KV901/KV900 errors of reading it

    @property
    def fixed(self) -> bytes:
        return self.text.encode("utf-8")

    @property
    def changed(self) -> bool:
        return bool(self.text) and self.fixed != self.original and not self.refusal

    def refused(self) -> tuple[Skipped, ...]:
        """Each fix made in memory that is not written, with the file's refusal as reason."""
        if not self.refusal or not self.text or self.fixed == self.original:
            return ()
        return tuple(Skipped(a.code, a.span, a.title, self.refusal) for a in self.applied)


@dataclass(frozen=True)
class FixRun:
    """What ``--fix`` did to each file."""

    files: tuple[FileFix, ...] = field(default=())

    @property
    def changed(self) -> tuple[FileFix, ...]:
        return tuple(f for f in self.files if f.changed)


def fix_paths(
    paths: Sequence[str],
    settings: Settings | ConfigTree,
    *,
    unsafe_fixes: bool = False,
    registry: Registry | None = None,
    force_exclude: bool = False,
) -> FixRun:
    """Every file under ``paths`` fixed in memory, round after round; nothing is written."""
    from kvlint import linter

    # The linter's per-run state (rule instances, each model resolved once, each file's own
    # config) serves every round.
    run, targets = linter.prepare(paths, settings, registry, force_exclude=force_exclude)
    files: list[FileFix] = []
    with isolation.session():
        for path, display in targets:
            files.append(_fix_path(run, path, display, paths, unsafe_fixes=unsafe_fixes))
    return FixRun(tuple(files))


def _fix_path(
    run: Run, path: Path, display: str, paths: Sequence[str], *, unsafe_fixes: bool
) -> FileFix:
    """One file fixed in memory, or why it was not: unreadable, or not to be written."""
    from kvlint import linter

    try:
        data = reading.read_bytes(path, reading.DEPLOYMENT)
    except OSError:
        # Nothing to fix; the check's own reading says why, at its position (KV901).
        _, findings = linter.lint_file(run, path, display)
        return FileFix(path, display, b"", "", unreadable=_errors(findings))

    def lint(text: str) -> list[tuple[Finding, int | None]]:
        deployments, findings = linter.lint_file(run, path, display, text.encode("utf-8"))
        owners = {id(f): i for i, dep in enumerate(deployments) for f in dep.findings}
        return [(f, owners.get(id(f))) for f in findings]

    fixed = fix_file(path, display, data, lint, unsafe_fixes=unsafe_fixes)
    if not fixed.text and data:  # not text (binary, UTF-16, invalid UTF-8): say where
        _, findings = linter.lint_file(run, path, display, data)
        fixed = dataclasses.replace(fixed, unreadable=_errors(findings))
    refusal = fix_refusal(path, paths) if fixed.text and fixed.fixed != data else None
    return dataclasses.replace(fixed, refusal=refusal) if refusal else fixed


def _errors(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    return tuple(
        f
        for f in findings
        if f.code in (codes.UNREADABLE_FILE, codes.INTERNAL_ERROR) and f.severity.name == "ERROR"
    )


def fix_file(
    path: Path,
    display: str,
    data: bytes,
    lint: Lint,
    *,
    unsafe_fixes: bool,
) -> FileFix:
    """Rounds of ``apply_fixes`` and ``lint`` until no fix applies (at most ``MAX_ROUNDS``)."""
    try:
        raw = data.decode("utf-8")
    except UnicodeDecodeError:
        return FileFix(path, display, data, "")  # not text: fix_paths reports it (KV901)
    json_file = path.suffix.lower() == ".json"
    applied: list[Applied] = []
    skipped: tuple[Skipped, ...] = ()
    found = lint(raw)
    broken = _unreadable(f for f, _ in found)
    errors = _errors(f for f, _ in found)
    for _ in range(MAX_ROUNDS):
        owners = {id(f): index for f, index in found}
        step = apply_fixes(
            raw,
            [f for f, _ in found],
            display=display,
            unsafe_fixes=unsafe_fixes,
            json_file=json_file,
            owner=lambda f: owners.get(id(f)),  # noqa: B023  (used within this iteration)
        )
        skipped = step.skipped
        if not step.applied:
            break
        after = lint(step.text)
        if (
            _unreadable(f for f, _ in after) > broken
        ):  # a fix that breaks the file is a kvlint bug: stop
            note = "a fix would have made the file unreadable; left as it was"
            return FileFix(
                path, display, data, raw, tuple(applied), skipped, note, unreadable=errors
            )
        raw, found = step.text, after
        applied.extend(step.applied)
    return FileFix(path, display, data, raw, tuple(applied), skipped, unreadable=errors)


def _unreadable(findings: Iterable[Finding]) -> int:
    return sum(1 for f in findings if f.code in (codes.UNREADABLE_FILE, codes.INTERNAL_ERROR))


# ---------------------------------------------------------------------------------------------
# Output: a unified diff, or an atomic write that never overwrites a file changed meanwhile.


def unified_diff(fixed: FileFix) -> str:
    """The change as a unified diff with the display path on both sides (``patch -p0``)."""
    import difflib

    before = fixed.original.decode("utf-8")
    out: list[str] = []
    name = diff_name(fixed.display)
    lines = difflib.unified_diff(_LINE.findall(before), _LINE.findall(fixed.text), name, name)
    for line in lines:
        out.append(line)
        if not line.endswith("\n"):
            out.append("\n\\ No newline at end of file\n")
    return "".join(out)


_C_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def diff_name(path: str) -> str:
    """A file name for a ``---`` / ``+++`` header: as it is, or C-quoted as git writes a name
    holding a quote, a backslash or a control character (GNU patch reads that form). A newline
    in a name cannot start a line of its own, so it cannot inject a header or a hunk."""
    if not any(char in _C_ESCAPES or ord(char) < 0x20 or ord(char) == 0x7F for char in path):
        return path
    quoted = "".join(
        _C_ESCAPES.get(char)
        or (f"\\{ord(char):03o}" if ord(char) < 0x20 or ord(char) == 0x7F else char)
        for char in path
    )
    return f'"{quoted}"'


class StaleFile(Exception):
    """The file changed on disk after kvlint read it."""


def write_fixed(fixed: FileFix) -> None:
    """Replace the file with its fixed text atomically, keeping its permissions.

    The new bytes go to a temporary file in the same folder, which then replaces the file (the
    target of a symbolic link, not the link). When the file no longer holds the bytes kvlint
    read, it is left alone (``StaleFile``).
    """
    import tempfile

    real = Path(os.path.realpath(fixed.path))
    if reading.read_bytes(real, reading.DEPLOYMENT) != fixed.original:
        raise StaleFile(fixed.display)
    mode = stat.S_IMODE(real.stat().st_mode)
    handle, temporary = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(fixed.fixed)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        # changed while the new text was written
        if reading.read_bytes(real, reading.DEPLOYMENT) != fixed.original:
            raise StaleFile(fixed.display)
        os.replace(temporary, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


# ---------------------------------------------------------------------------------------------
# The `kvlint check` step.


def run(args: argparse.Namespace, settings: Settings | ConfigTree) -> int | None:
    """``--diff``: print what ``--fix`` would change and return the exit code (1 when anything
    would change, 2 when a file could not be read). ``--fix``: write the fixed files and return
    None, so the check goes on and reports what remains. Progress goes to stderr; stdout keeps
    the diff or the report. A file kvlint must not write (``kvlint.writing.fix_refusal``) is
    neither written nor in the diff: each of its fixes is reported as not applied, and why."""
    import sys

    outcome = fix_paths(
        args.paths,
        settings,
        unsafe_fixes=args.unsafe_fixes,
        force_exclude=getattr(args, "force_exclude", False),
    )
    for fixed in outcome.files:
        for skip in (*fixed.skipped, *fixed.refused()):
            print(
                f"kvlint: {skip.span.location()}: {skip.code} fix not applied: {skip.reason}",
                file=sys.stderr,
            )
        if fixed.note:
            print(f"kvlint: {printable(fixed.display)}: {fixed.note}", file=sys.stderr)
    changed = outcome.changed
    if args.diff:
        unreadable = [f for fixed in outcome.files for f in fixed.unreadable]
        if unreadable:
            from kvlint.report.concise import concise_line

        for finding in unreadable:  # as the check would report them, then exit 2
            print(concise_line(finding), file=sys.stderr)
        for fixed in changed:
            sys.stdout.write(unified_diff(fixed))
        sys.stdout.flush()
        if changed:
            print(f"kvlint: --fix would fix {_counted(changed)}", file=sys.stderr)
        return 2 if unreadable else 1 if changed else 0
    written: list[FileFix] = []
    for fixed in changed:
        try:
            write_fixed(fixed)
        except StaleFile:
            message = "changed on disk while kvlint read it; not written"
        except OSError as exc:
            message = f"cannot write: {exc.strerror or exc}"
        else:
            written.append(fixed)
            continue
        print(f"kvlint: {printable(fixed.display)}: {message}", file=sys.stderr)
    if written:
        print(f"kvlint: fixed {_counted(written)}", file=sys.stderr)
        if getattr(args, "show_fixes", False):
            for line in fixed_lines(written):
                print(line, file=sys.stderr)
    return None


def fixed_lines(files: Sequence[FileFix]) -> list[str]:
    """``--show-fixes``: each fix made, at the finding it answers, with what it changed::

    deploy.yaml:39:30: KV301 [~] Lower `max_num_seqs` to 13: `512` -> `13`
    """
    from kvlint.finding import printable

    lines = []
    for fixed in files:
        for done in fixed.applied:
            mark = FIXABLE if done.applicability is Applicability.SAFE else UNSAFE_FIX
            change = ", ".join(
                f"`{printable(before)}` -> `{printable(after)}`" for before, after in done.changes
            )
            line = f"  {done.span.location()}: {done.code} {mark} {printable(done.title)}"
            lines.append(f"{line}: {change}" if change else line)
    return lines


def _counted(files: Sequence[FileFix]) -> str:
    """``3 findings in 2 files``."""
    count = sum(len(f.applied) for f in files)
    findings = f"{count} finding{'s' if count != 1 else ''}"
    return f"{findings} in {len(files)} file{'s' if len(files) != 1 else ''}"
