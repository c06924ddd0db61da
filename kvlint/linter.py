"""The check pipeline: files, deployments, model, sizing, rules, findings; pure, no printing."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import NamedTuple
from typing import Protocol

from kvlint import codes
from kvlint import isolation
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.deployment import Workload
from kvlint.errors import KvlintError
from kvlint.errors import ModelNotResolved
from kvlint.files import collect_files as collect_files  # re-exported: kvlint.fix uses it
from kvlint.finding import NOT_CHECKED
from kvlint.finding import Finding
from kvlint.finding import Fix
from kvlint.finding import InputProblem
from kvlint.finding import Problem
from kvlint.finding import Severity
from kvlint.finding import Span
from kvlint.finding import message_text
from kvlint.finding import printable
from kvlint.isolation import PluginFailure
from kvlint.sizing_cache import SizingCache
from kvlint.suppress import Directive
from kvlint.suppress import apply as apply_suppressions
from kvlint.suppress import parse_annotations
from kvlint.suppress import parse_comments
from kvlint.suppress import unused as find_unused

if TYPE_CHECKING:
    from collections.abc import Callable

    from kvlint.config import Settings
    from kvlint.config_tree import ConfigTree
    from kvlint.deploy.load import LoadResult
    from kvlint.estimate import EngineEstimate
    from kvlint.model.resolve import ResolvedModel
    from kvlint.model.spec import ModelSpec
    from kvlint.registry import PluginError
    from kvlint.registry import Registry
    from kvlint.rule import Rule
    from kvlint.settled import Settled
    from kvlint.sizing import Sizing


@dataclass(frozen=True)
class DeploymentResult:
    """One deployment as checked: what the files say, the numbers, and what was found in it."""

    deployment: Deployment
    sizing: Sizing | None  # None when sizing could not run (an internal error, reported)
    model_origin: str | None = None  # "path", "catalog", "hf-cache", "hub", "gguf"
    model_detail: str = ""
    findings: tuple[Finding, ...] = ()  # this deployment's findings, after selection, sorted


class CodeCount(NamedTuple):
    """One rule's line of ``--statistics``."""

    code: str
    name: str
    found: int  # findings
    severity: Severity = Severity.WARNING  # the highest its findings were reported at
    safe_fixes: int = 0  # findings whose fix `--fix` applies
    unsafe_fixes: int = 0  # findings whose fix needs `--unsafe-fixes` too


@dataclass(frozen=True)
class Summary:
    """Counts for the end of a report; computed by the linter, never by a reporter."""

    files: int
    deployments: int
    by_severity: dict[str, int]  # "error" / "warning" / "info" -> count
    by_code: tuple[CodeCount, ...]  # in code order
    fail_on: Severity
    exit_code: int
    plugin_errors: tuple[PluginError, ...] = ()

    @property
    def total(self) -> int:
        return sum(self.by_severity.values())


@dataclass(frozen=True)
class LintResult:
    """Everything one run found, in report order."""

    files: tuple[str, ...]  # display paths of every file read
    deployments: tuple[DeploymentResult, ...]
    findings: tuple[Finding, ...]  # every finding, sorted (path, line, column, code)
    plugin_errors: tuple[PluginError, ...] = field(default=())
    fail_on: Mapping[str, Severity] = field(default_factory=dict)  # display path -> its config's
    # What the run says once on stderr (the Hub stopped being asked); never a finding.
    notices: tuple[str, ...] = ()


# ---------------------------------------------------------------------------------------------
# The pipeline. Imports of the heavier layers happen inside the functions: `kvlint rules` and
# `kvlint explain` load this module for its records without paying for YAML and models.


class Loader(Protocol):
    """Reads one file's deployments (``kvlint.deploy.load``); ``data`` is text held in memory."""

    def __call__(self, path: Path, display: str, data: bytes | None) -> LoadResult: ...


class Resolver(Protocol):
    """Resolves a model reference (``kvlint.model.resolve.resolve_model``)."""

    def __call__(self, ref: str, *, offline: bool, base_dir: Path, hub: Any) -> ResolvedModel: ...


class Sizer(Protocol):
    """Sizes one deployment (``kvlint.engines.sizer.size``), its accounting through ``account``."""

    def __call__(
        self,
        dep: Deployment,
        spec: ModelSpec | None,
        *,
        account: Callable[[Settled], EngineEstimate],
    ) -> Sizing: ...


def load_file(path: Path, display: str, data: bytes | None) -> LoadResult:
    """The real loader, imported when the first file is read."""
    from kvlint.deploy.load import load_bytes
    from kvlint.deploy.load import load_path

    if data is None:
        return load_path(path, display=display)
    return load_bytes(data, display=display, json=path.suffix.lower() == ".json")


def resolve_reference(ref: str, *, offline: bool, base_dir: Path, hub: Any) -> ResolvedModel:
    """The real model resolver, imported when the first model is resolved."""
    from kvlint.model.resolve import resolve_model

    return resolve_model(ref, offline=offline, base_dir=base_dir, hub=hub)


def size_deployment(
    dep: Deployment,
    spec: ModelSpec | None,
    *,
    account: Callable[[Settled], EngineEstimate],
) -> Sizing:
    """The real sizer (settle, first principles, the engine's accounting), imported lazily."""
    from kvlint.engines.sizer import size

    return size(dep, spec, account=account)


class Seams(NamedTuple):
    """What a run reads files, resolves models and sizes deployments with."""

    load: Loader = load_file
    resolve: Resolver = resolve_reference
    size: Sizer = size_deployment


REAL = Seams()


@dataclass
class Run:
    """Per-run state: rule instances, the model resolutions (each reference resolved once) and
    the engine accounting (each settled deployment sized once). ``load``, ``resolve`` and
    ``size`` are the seams a test replaces; by default the real ones, imported on first use."""

    registry: Registry
    settings: Settings  # the file being linted's (``per_file``), else the run's
    models: dict[tuple[str, str], Any] = field(default_factory=dict)
    instances: dict[tuple[int, str], Rule] = field(default_factory=dict)  # per Settings and code
    sizings: SizingCache = field(default_factory=SizingCache)
    hub: Any = None  # the run's kvlint.model.resolve.HubBudget, made by the first lookup
    # Files read ahead of their turn to find the models to look up at once (used, then dropped).
    preloaded: dict[Path, Any] = field(default_factory=dict)
    # Each file's own Settings, from the nearest config (kvlint.config_tree); absent: `settings`.
    per_file: Mapping[Path, Settings] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)  # code -> "rule X of 'package'"
    # (folder, reference) -> whether a file or folder of that name is there: a repository names
    # a few models from many files in a few folders (a stat each, twice a deployment).
    on_disk: dict[tuple[Path, str], bool] = field(default_factory=dict)
    load: Loader = load_file
    resolve: Resolver = resolve_reference
    size: Sizer = size_deployment

    def notices(self) -> tuple[str, ...]:
        """What the run says once on stderr (the Hub stopped being asked); never a finding."""
        return tuple(getattr(self.hub, "notices", ()))

    def with_seams(self, seams: Seams) -> Run:
        self.load, self.resolve, self.size = seams
        return self

    def rule(self, cls: type[Rule]) -> Rule:
        key = (id(self.settings), cls.code)  # a rule's options may differ between configs
        instance = self.instances.get(key)
        if instance is None:
            instance = self.instances[key] = cls(self.settings.options.get(cls.code))
        return instance

    @contextlib.contextmanager
    def file_settings(self, path: Path) -> Iterator[None]:
        """The Settings of ``path``'s config while it is linted; the caches stay the run's."""
        own = self.per_file.get(path)
        if own is None or own is self.settings:
            yield
            return
        before, self.settings = self.settings, own
        try:
            yield
        finally:
            self.settings = before

    def stamp(self, cls: type[Rule], problem: Problem) -> Finding:
        severity = self.settings.severities.get(cls.code)
        if severity is None:
            severity = problem.severity if problem.severity is not None else cls.severity
        return Finding(
            cls.code,
            cls.name,
            severity,
            problem.span,
            message_text(problem.message),  # values quoted from the file: no control characters
            _printable_fix(problem.fix),
            problem.numbers,
        )

    def input_problem(self, problem: InputProblem) -> Finding:
        cls = self.registry.rules.get(problem.code)
        if cls is None:  # a code no rule documents: keep it rather than lose it
            return Finding(
                problem.code,
                "input-problem",
                problem.severity,
                problem.span,
                message_text(problem.message),
            )
        # The reader's severity, as the deployment-level route keeps it (rules/_input_problem.py);
        # a severity configured for the rule still wins.
        return self.stamp(cls, Problem(problem.span, problem.message, severity=problem.severity))


def _printable_fix(fix: Fix | None) -> Fix | None:
    """The fix with its title escaped as messages are (every report prints the title); the
    edits' replacements are the file's new text, written as they are."""
    if fix is None or printable(fix.title) == fix.title:
        return fix
    return fix._replace(title=printable(fix.title))


# One file's deployments and findings, as lint_file returns them.
FileResult = tuple[list[DeploymentResult], list[Finding]]


def lint_paths(
    paths: Sequence[str],
    settings: Settings | ConfigTree,
    registry: Registry | None = None,
    *,
    jobs: int = 1,
    force_exclude: bool = False,
    seams: Seams = REAL,
) -> LintResult:
    """Check every file under ``paths``; findings sorted by (path, line, column, code).

    ``settings`` serves every file, or a ConfigTree gives each file its nearest config's (every
    config is resolved first, so all their errors are reported together). With ``jobs`` > 1
    and many files, the files are linted across a process pool (``kvlint.parallel``); the
    result is the same as a serial run's, in the same order. ``seams`` replaces the loader, the
    model resolver or the sizer (tests do)."""
    run, targets = prepare(paths, settings, registry, force_exclude=force_exclude, seams=seams)
    return lint_targets(run, targets, jobs=jobs)


def prepare(
    paths: Sequence[str],
    settings: Settings | ConfigTree,
    registry: Registry | None = None,
    *,
    force_exclude: bool = False,
    seams: Seams = REAL,
) -> tuple[Run, list[tuple[Path, str]]]:
    """The run and the files to check (``kvlint.fix`` lints its rounds with the same)."""
    from kvlint.config import Settings
    from kvlint.registry import default_registry

    if isinstance(settings, Settings):
        fixed = settings
        targets = collect_files(paths, lambda _: fixed, force_exclude=force_exclude)
        run = Run(registry if registry is not None else default_registry(), fixed)
        return run.with_seams(seams), targets
    targets = collect_files(paths, settings.settings_for, force_exclude=force_exclude)
    per_file = settings.settings_of(path for path, _ in targets)
    first = next(iter(per_file.values()), None) or settings.settings_for(Path.cwd())
    return Run(settings.registry, first, per_file=per_file).with_seams(seams), targets


def lint_stdin(
    data: bytes,
    display: str,
    settings: Settings | ConfigTree,
    registry: Registry | None = None,
) -> LintResult:
    """Text read from stdin, checked as if it were the file ``display`` (``--stdin-filename``,
    else ``-``): its positions, its config, the folder its model paths are relative to."""
    from kvlint.config import Settings
    from kvlint.registry import default_registry

    path = Path(display)
    if isinstance(settings, Settings):
        run = Run(registry if registry is not None else default_registry(), settings)
    else:
        per_file = settings.settings_of([path])
        run = Run(settings.registry, per_file[path], per_file=per_file)
    deployments, findings = lint_file(run, path, display, data)
    findings.sort(key=Finding.sort_key)
    return LintResult(
        (display,),
        tuple(deployments),
        tuple(findings),
        run.registry.loaded_errors(),
        {display: run.settings.fail_on},
    )


def lint_targets(run: Run, targets: Sequence[tuple[Path, str]], *, jobs: int = 1) -> LintResult:
    """``lint_file`` over (path, display) pairs, in order; the run's result."""
    prefetch_models(run, targets)  # the Hub's lookups at once, before any file is checked
    with isolation.session():  # the rules' deadline timer ticks for the whole run
        if jobs > 1:
            from kvlint.parallel import lint_files

            per_file = lint_files(run, targets, jobs)
        else:
            per_file = [lint_file(run, path, display) for path, display in targets]
    files = [display for _, display in targets]
    deployments: list[DeploymentResult] = []
    findings: list[Finding] = []
    for file_deployments, file_findings in per_file:
        deployments.extend(file_deployments)
        findings.extend(file_findings)
    findings.sort(key=Finding.sort_key)
    # Each file fails the run at its own config's `fail-on` (a --fail-on flag is in them all).
    fail_on = {
        display: run.per_file[path].fail_on for path, display in targets if path in run.per_file
    }
    return LintResult(
        tuple(files),
        tuple(deployments),
        tuple(findings),
        run.registry.loaded_errors(),
        fail_on,
        run.notices(),
    )


def lint_file(run: Run, path: Path, display: str, data: bytes | None = None) -> FileResult:
    """One file's deployments and findings, under its own config's Settings; ``data`` lints
    text held in memory as if it were the file's (``--fix`` re-checks each round of edits
    before anything is written, and stdin is read so)."""
    with run.file_settings(path):
        return _lint_file(run, path, display, data)


def _lint_file(run: Run, path: Path, display: str, data: bytes | None) -> FileResult:
    if data is None:
        from kvlint.files import helm_template

        chart = helm_template(path)
        if chart is not None:  # Go template source, not YAML: one info finding, not exit 2
            message = (
                f"a Helm template of the chart `{chart}`: not read; check what it renders "
                f"(`helm template {chart} | kvlint check -`)"
            )
            problem = InputProblem(
                codes.UNRECOGNISED_DOCUMENT, Span(display, 1, 1), message, Severity.INFO
            )
            return [], _enabled(run, [run.input_problem(problem)], display)
    try:
        preloaded = run.preloaded.pop(path, None) if data is None else None
        loaded = preloaded if preloaded is not None else run.load(path, display, data)
    except KvlintError as exc:
        span = exc.span or Span(display, 1, 1)
        problem = InputProblem(codes.UNREADABLE_FILE, span, exc.message, Severity.ERROR)
        return [], _enabled(run, [run.input_problem(problem)], display)
    except Exception as exc:  # a loader bug must not end the run: report it on this file
        message = f"internal error while reading the file: {_crash(exc)}"
        return [], [
            Finding(
                codes.INTERNAL_ERROR,
                "internal-error",
                Severity.ERROR,
                Span(display, 1, 1),
                message_text(message),
            )
        ]

    # The loader may also list each deployment's own problems at file level: those reach the
    # rules through the deployment, so only the rest are routed here.
    owned = {p for dep in loaded.deployments for p in dep.problems}
    file_problems = [run.input_problem(p) for p in loaded.problems if p not in owned]
    tagged: list[tuple[Finding, int | None]] = [
        (f, None) for f in _enabled(run, file_problems, display)
    ]
    annotations: list[Directive] = []
    results: list[tuple[Deployment, Sizing | None, Any]] = []
    for index, dep in enumerate(loaded.deployments):
        dep = with_configured_facts(
            dep,
            run.settings.gpu,
            run.settings.engine_versions,
            run.settings.workload_for(dep.path),
            reserved_memory=run.settings.reserved_memory,
        )
        dep, resolved = _resolve_model(run, dep, path.parent)
        dep = _with_draft(run, dep, path.parent)
        sizing, dep_findings = _check_deployment(run, dep, resolved)
        dep_findings = _enabled(run, dep_findings, display)
        directives = parse_annotations(dep.annotations)
        dep_findings, _ = apply_suppressions(dep_findings, directives)
        annotations.extend(directives)
        tagged.extend((f, index) for f in dep_findings)
        results.append((dep, sizing, resolved))

    comments = parse_comments(display, loaded.text)
    kept = _suppress_tagged(tagged, comments)
    kept.extend((f, None) for f in _unused(run, [*comments, *annotations], display))
    kept.sort(key=lambda item: item[0].sort_key())
    deployment_results = [
        DeploymentResult(
            deployment=dep,
            sizing=sizing,
            model_origin=getattr(resolved, "origin", None),
            model_detail=getattr(resolved, "detail", ""),
            findings=tuple(f for f, owner in kept if owner == index),
        )
        for index, (dep, sizing, resolved) in enumerate(results)
    ]
    return deployment_results, [f for f, _ in kept]


def _enabled(run: Run, findings: Iterable[Finding], display: str) -> list[Finding]:
    selection = run.settings.selection
    return [
        f
        for f in findings
        if (
            _failure_shown(selection, f.code)
            if f.code in _FAILURES
            else selection.is_enabled(f.code, display)
        )
    ]


# A check that did not run to its end (a rule's failure, kvlint's own internal error) is
# reported whatever `--select` names: hidden, it would be a silent pass.
_FAILURES = frozenset({codes.RULE_FAILURE, codes.INTERNAL_ERROR})


def _failure_shown(selection: Any, code: str) -> bool:
    """Shown unless it is ignored itself (`--ignore KV9` hides it)."""
    return selection.is_selected(code) or not any(code.startswith(p) for p in selection.ignore)


def _suppress_tagged(
    tagged: list[tuple[Finding, int | None]], directives: list[Directive]
) -> list[tuple[Finding, int | None]]:
    kept_findings, _ = apply_suppressions([f for f, _ in tagged], directives)
    kept_ids = {id(f) for f in kept_findings}
    return [(f, owner) for f, owner in tagged if id(f) in kept_ids]


def _unused(run: Run, directives: list[Directive], display: str) -> list[Finding]:
    if not directives:
        return []  # nothing to be unused (and the rules need not be loaded to say so)
    cls = run.registry.rules.get(codes.UNUSED_SUPPRESSION)
    if cls is None or not run.settings.selection.is_enabled(cls.code, display):
        return []

    def is_known(selector: str) -> bool | None:
        rule = run.registry.get(selector)
        codes = (
            [rule.code]
            if rule is not None
            else [c for c in run.registry.rules if c.startswith(selector.upper())]
        )
        if not codes:
            return None
        return any(run.settings.selection.is_enabled(c, display) for c in codes)

    return [run.stamp(cls, Problem(u.span, u.message)) for u in find_unused(directives, is_known)]


def with_configured_facts(
    dep: Deployment,
    gpu: str | None,
    engine_versions: Mapping[str, str],
    workload: Workload | None = None,
    reserved_memory: int | None = None,
) -> Deployment:
    """Fill the GPU, engine version and reserved memory a file leaves out from the config or
    command line (``check`` and ``size`` alike, so they size the same deployment), and the
    workload the config states for the file when a plan states none."""
    changes: dict[str, Any] = {}
    if dep.workload is None and workload is not None:
        changes["workload"] = workload
    if dep.reserved_memory is None and reserved_memory:
        span = dep.span._replace(key="reserved-memory (configured)")
        changes["reserved_memory"] = Sourced(reserved_memory, span)
    if dep.gpu is None and gpu:
        changes["gpu"] = Sourced(gpu, dep.span._replace(key="gpu (configured)"))
    if dep.engine_version is None:
        version = engine_versions.get(str(dep.engine.value))
        version = version or engine_versions.get("*")
        if version:
            span = dep.span._replace(key="engine-version (configured)")
            changes["engine_version"] = Sourced(version, span)
    return dataclasses.replace(dep, **changes) if changes else dep


def _model_reference(run: Run, ref: str, base_dir: Path) -> tuple[str, Path, tuple[str, str]]:
    """The reference to resolve, the folder it is relative to, and its key in ``run.models``."""
    mapped = run.settings.models.get(ref) or run.settings.models.get(ref.rstrip("/"))
    if mapped is not None and run.settings.base_dir is not None:
        # `models:` of the config file names the model behind a container path or private id
        ref, base_dir = mapped, run.settings.base_dir
    elif mapped is not None:
        ref = mapped
    # A hub id resolves the same from every folder; a relative path depends on the file's folder.
    local = ref.startswith((".", "/", "~")) or ref.endswith((".json", ".gguf"))
    if not local:
        there = run.on_disk.get((base_dir, ref))
        if there is None:
            there = run.on_disk[(base_dir, ref)] = _exists(base_dir / ref)
        local = there
    return ref, base_dir, (ref, str(base_dir) if local else "")


# Hub lookups sent at once: each is a HEAD and a GET of a few KB, so the run waits about one
# round trip for all of them, not one per model; the circuit breaker stops those still queued.
HUB_LOOKUPS_AT_ONCE = 8
# The files read ahead to find the models to look up together, each kept for its turn: a run
# over a whole monorepo neither holds every parsed file at once nor parses any twice; the models
# of later files are looked up in their turn (the breaker and the one deadline still hold).
PRELOAD_LIMIT = 256


def prefetch_models(run: Run, targets: Sequence[tuple[Path, str]]) -> None:
    """Resolve together, before any file is checked, the models only the Hub can give: a run
    that meets ten unknown ids waits for about one answer, not ten. Local paths, catalog models
    and offline files are left to their turn, which resolves them without the Hub."""
    wanted: dict[tuple[str, str], tuple[str, Path]] = {}
    offline: bool | None = None  # the environment's word, asked at the first model found
    for path, display in targets:
        if len(run.preloaded) >= PRELOAD_LIMIT:
            break
        with run.file_settings(path):
            if run.settings.offline:
                continue  # nothing of this file's is asked of the Hub
            try:
                loaded = run.preloaded[path] = run.load(path, display, None)
            except Exception:  # reported in the file's turn
                continue
            for dep in loaded.deployments:
                if dep.model is None:
                    continue
                if offline is None:
                    from kvlint.model.resolve import hub_offline

                    offline = hub_offline()
                if offline:
                    # HF_HUB_OFFLINE: no model is asked of the Hub, so nothing is gained by
                    # reading more files ahead (a worker pool forks only after this).
                    return
                ref, base_dir, key = _model_reference(run, str(dep.model.value), path.parent)
                if key in run.models or key in wanted or key[1] or _in_catalog(ref):
                    continue
                wanted[key] = (ref, base_dir)
    if len(wanted) < 2:
        return  # one lookup gains nothing from being sent early
    if run.hub is None:
        from kvlint.model.resolve import HubBudget

        run.hub = HubBudget()  # one Hub deadline for the whole run, not one per model
    results = _in_parallel(list(wanted.values()), lambda item: _resolve_now(run, *item))
    run.models.update(zip(wanted, results, strict=True))


def _in_catalog(ref: str) -> bool:
    from kvlint.model import catalog

    return catalog.find_entry(ref) is not None


def _resolve_now(run: Run, ref: str, base_dir: Path) -> Any:
    """``ref`` resolved, or the error that says why not (as ``_resolve_model`` keeps it)."""
    try:
        return run.resolve(ref, offline=False, base_dir=base_dir, hub=run.hub)
    except KvlintError as exc:
        return exc
    except Exception as exc:  # a resolver bug: this model is unknown, no crash
        return KvlintError(f"internal error while resolving the model: {type(exc).__name__}: {exc}")


def _in_parallel(items: list[Any], work: Callable[[Any], Any]) -> list[Any]:
    """``work`` over ``items`` on up to HUB_LOOKUPS_AT_ONCE threads, results in order.

    Plain threads rather than concurrent.futures, whose import (logging) costs ~12 ms of start-up
    on every run that meets two unknown models."""
    import threading

    results: list[Any] = [None] * len(items)
    indices = iter(range(len(items)))
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                index = next(indices, None)
            if index is None:
                return
            results[index] = work(items[index])

    threads = [
        threading.Thread(target=worker, name="kvlint-hub", daemon=True)
        for _ in range(min(HUB_LOOKUPS_AT_ONCE, len(items)))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()  # each lookup ends by the run's Hub deadline (KVLINT_HUB_TIMEOUT)
    return results


def _resolve_model(run: Run, dep: Deployment, base_dir: Path) -> tuple[Deployment, Any]:
    """The deployment's model, resolved once per run per reference; a failure becomes KV902."""
    if dep.model is None:
        return dep, None
    ref, base_dir, key = _model_reference(run, str(dep.model.value), base_dir)
    if key not in run.models:
        try:
            if run.hub is None:
                from kvlint.model.resolve import HubBudget

                run.hub = HubBudget()  # one Hub deadline for the whole run, not one per model
            run.models[key] = run.resolve(
                ref, offline=run.settings.offline, base_dir=base_dir, hub=run.hub
            )
        except KvlintError as exc:
            run.models[key] = exc
        except Exception as exc:  # a resolver bug: this deployment's model is unknown, no crash
            message = f"internal error while resolving the model: {type(exc).__name__}: {exc}"
            run.models[key] = KvlintError(message)
    resolved = run.models[key]
    if isinstance(resolved, KvlintError):
        # str() names the model file (and line:col) when the error lies in it, not in this file.
        # A model kvlint cannot resolve here is a warning and the run goes on; an unreadable
        # model file is bad input, an error (exit 2).
        severity = Severity.WARNING if isinstance(resolved, ModelNotResolved) else Severity.ERROR
        message = str(resolved) + _not_checked(run, dep)
        problem = InputProblem(codes.UNKNOWN_MODEL, dep.model.span, message, severity)
        return dataclasses.replace(dep, problems=[*dep.problems, problem]), None
    by_name = getattr(resolved, "by_name", "")
    if by_name:
        message = (
            f"model {ref!r} resolved by name as {by_name}: the checks use that architecture "
            "(give the checkpoint's config.json to check the checkpoint itself)"
        )
        problem = InputProblem(codes.MODEL_BY_NAME, dep.model.span, message, Severity.INFO)
        return dataclasses.replace(dep, problems=[*dep.problems, problem]), resolved
    return dep, resolved


def _with_draft(run: Run, dep: Deployment, base_dir: Path) -> Deployment:
    """``dep`` with its draft model's shape when it names one (``speculative_model``) that
    resolves, looked up as its model is (once per run per reference, the ``models:`` map
    applied). One that does not resolve adds no finding: the engine's estimate says what it
    leaves uncounted."""
    if dep.speculative_model is None or not str(dep.speculative_model.value).strip():
        return dep
    ref, base_dir, key = _model_reference(run, str(dep.speculative_model.value), base_dir)
    if key not in run.models:
        if run.hub is None:
            from kvlint.model.resolve import HubBudget

            run.hub = HubBudget()
        try:
            run.models[key] = run.resolve(
                ref, offline=run.settings.offline, base_dir=base_dir, hub=run.hub
            )
        except KvlintError as exc:
            run.models[key] = exc
        except Exception as exc:  # a resolver bug: the draft model is unknown, no crash
            run.models[key] = KvlintError(f"internal error while resolving the model: {exc}")
    spec = getattr(run.models[key], "spec", None)
    return dataclasses.replace(dep, draft_spec=spec) if spec is not None else dep


def _not_checked(run: Run, dep: Deployment) -> str:
    """The tail of a KV902 message: the selected checks that need the model, which a
    deployment without one does not get."""
    engine = str(dep.engine.value)
    codes = [
        cls.code
        for cls in run.registry
        if cls.needs_model
        and cls.applies_to(engine)
        and run.settings.selection.is_selected(cls.code)
        and run.settings.selection.is_enabled(cls.code, dep.path)
    ]
    return f"{NOT_CHECKED}{', '.join(codes)}" if codes else ""


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except (OSError, ValueError):  # a reference too long or odd to be a path is not one
        return False


def _check_deployment(
    run: Run, dep: Deployment, resolved: Any
) -> tuple[Sizing | None, list[Finding]]:
    from kvlint.sizing import Sizing

    spec = getattr(resolved, "spec", None)
    findings: list[Finding] = []
    try:
        sizing = run.size(dep, spec, account=run.sizings.account)
        sized = True
    except Exception as exc:  # an arithmetic bug must not end the run
        message = f"internal error while sizing `{dep.name}`: {_crash(exc)}"
        findings.append(
            Finding(
                codes.INTERNAL_ERROR,
                "internal-error",
                Severity.ERROR,
                dep.span,
                message_text(message),
            )
        )
        sizing, sized = Sizing(spec=spec, kv=None, gpu=None, engine=None), False
    engine = str(dep.engine.value)
    for cls in run.registry:
        if not run.settings.selection.is_selected(cls.code):
            continue
        try:
            problems = _run_rule(run, cls, dep, sizing, engine, sized=spec is not None and sized)
        except PluginFailure as failure:  # one broken rule must not hide the others' findings
            if not run.settings.selection.is_enabled(cls.code, dep.span.path):
                continue  # its findings would have been dropped for this file
            package = run.registry.packages.get(cls.code, "?")
            message = (
                f"rule {cls.code} `{cls.name}` of {package!r} failed, so its findings on this "
                f"deployment are missing: {failure.reason}"
            )
            findings.append(
                Finding(
                    codes.RULE_FAILURE,
                    "rule-failure",
                    Severity.ERROR,
                    dep.span,
                    message_text(message),
                )
            )
            continue
        findings.extend(run.stamp(cls, p) for p in problems)
    return (sizing if sized else None), findings


def _run_rule(
    run: Run, cls: type[Rule], dep: Deployment, sizing: Sizing, engine: str, *, sized: bool
) -> list[Problem]:
    """The rule's problems on ``dep``, run as plugin code (kvlint.isolation): anything it
    raises, a deadline passed or a yield that is not a valid Problem is a PluginFailure."""
    from kvlint.rule import checked_problems

    def work() -> list[Problem]:
        if not cls.applies_to(engine) or (cls.needs_model and not sized):
            return []
        return checked_problems(run.rule(cls).check(dep, sizing))

    label = run.labels.get(cls.code)
    if label is None:
        label = run.labels[cls.code] = (
            f"rule {cls.code} of {run.registry.packages.get(cls.code, '?')!r}"
        )
    return isolation.call(work, label=label)


def _crash(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {printable(str(exc))}"


def exit_code(
    findings: Iterable[Finding], fail_on: Severity, per_file: Mapping[str, Severity] | None = None
) -> int:
    """0 clean (or only findings below ``fail_on``, or below their file's own in
    ``per_file``), 1 findings at or above it, 2 when a file or model could not be read (an
    error-severity KV9xx input problem)."""
    findings = list(findings)
    if any(f.severity is Severity.ERROR and f.code.startswith("KV9") for f in findings):
        return 2
    per_file = per_file or {}
    return 1 if any(f.severity >= per_file.get(f.span.path, fail_on) for f in findings) else 0


class Tally:
    """The summary's counts, added to as each file finishes, so a report written as it goes
    keeps no finding once it is written (issue 20: memory flat in the number of files)."""

    def __init__(self) -> None:
        self.files = 0
        self.deployments = 0
        self.by_severity = {str(s): 0 for s in sorted(Severity, reverse=True)}
        self._counts: dict[tuple[str, str], CodeCount] = {}
        self._unreadable = False  # an error-severity KV9xx finding: exit 2
        self._fails = False  # a finding at or above its file's own `fail-on`
        self._worst: Severity | None = None  # of findings in files without a `fail-on` of their own

    def add_file(
        self, deployments: int, findings: Iterable[Finding], fail_on: Severity | None = None
    ) -> None:
        """One file's deployment count and findings; ``fail_on`` its config's, if it has one."""
        self.files += 1
        self.deployments += deployments
        for f in findings:
            self.add(f, fail_on)

    def add(self, f: Finding, fail_on: Severity | None = None) -> None:
        from kvlint.finding import Applicability

        self.by_severity[str(f.severity)] += 1
        key = (f.code, f.name)
        entry = self._counts.get(key) or CodeCount(f.code, f.name, 0, f.severity)
        fixable = f.fix is not None and bool(f.fix.edits)
        safe = fixable and f.fix is not None and f.fix.applicability is Applicability.SAFE
        self._counts[key] = entry._replace(
            found=entry.found + 1,
            severity=max(entry.severity, f.severity),
            safe_fixes=entry.safe_fixes + safe,
            unsafe_fixes=entry.unsafe_fixes + (fixable and not safe),
        )
        if f.severity is Severity.ERROR and f.code.startswith("KV9"):
            self._unreadable = True
        if fail_on is not None:
            self._fails = self._fails or f.severity >= fail_on
        elif self._worst is None or f.severity > self._worst:
            self._worst = f.severity

    def exit_code(self, fail_on: Severity) -> int:
        """As ``exit_code`` over the findings added: 2, 1 or 0."""
        if self._unreadable:
            return 2
        return 1 if self._fails or (self._worst is not None and self._worst >= fail_on) else 0

    def summary(self, fail_on: Severity, plugin_errors: tuple[PluginError, ...] = ()) -> Summary:
        return Summary(
            files=self.files,
            deployments=self.deployments,
            by_severity=dict(self.by_severity),
            by_code=tuple(entry for _, entry in sorted(self._counts.items())),
            fail_on=fail_on,
            exit_code=self.exit_code(fail_on),
            plugin_errors=plugin_errors,
        )


def summarise(result: LintResult, fail_on: Severity) -> Summary:
    tally = Tally()
    for f in result.findings:
        tally.add(f, result.fail_on.get(f.span.path))
    tally.files = len(result.files)
    tally.deployments = len(result.deployments)
    return tally.summary(fail_on, result.plugin_errors)


def lint_each(
    run: Run, targets: Sequence[tuple[Path, str]], *, jobs: int = 1
) -> Iterator[tuple[int, list[Finding]]]:
    """Each file's deployment count and findings, in the order of ``targets``, as it is
    checked: what a report written as it goes needs, and nothing kept (the pool's workers send
    back only these)."""
    prefetch_models(run, targets)  # the Hub's lookups at once, before any file is checked
    with isolation.session():
        if jobs > 1:
            from kvlint.parallel import each_file

            yield from each_file(run, targets, jobs, shape=compact)
        else:
            for path, display in targets:
                yield compact(lint_file(run, path, display))


def compact(result: FileResult) -> tuple[int, list[Finding]]:
    """A file's result without its deployments: their count and the findings."""
    deployments, findings = result
    return len(deployments), findings
