"""The config file: ``[tool.kvlint]`` in pyproject.toml or ``.kvlint.yaml``, found walking up."""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import Literal

from kvlint import options as option_models
from kvlint import reading
from kvlint.deployment import Sourced
from kvlint.deployment import Workload
from kvlint.errors import KvlintError
from kvlint.errors import raise_all
from kvlint.finding import Severity
from kvlint.finding import Span
from kvlint.lazy_re import lazy
from kvlint.selection import PerFileIgnore
from kvlint.selection import Selection
from kvlint.selection import matches_pattern
from kvlint.selection import normalise
from kvlint.selection import why_unknown
from kvlint.source.nodes import Mapping as NodeMapping
from kvlint.source.nodes import Node
from kvlint.source.nodes import Scalar
from kvlint.source.nodes import Sequence as NodeSequence
from kvlint.source.text import SourceText
from kvlint.source.yaml import parse_documents
from kvlint.units import parse_human_int

if TYPE_CHECKING:
    from kvlint.registry import Registry

YAML_NAMES = (".kvlint.yaml", ".kvlint.yml")
PYPROJECT = "pyproject.toml"

SeverityName = Literal["error", "warning", "info"]


def _kebab(name: str) -> str:
    return name.replace("_", "-")


def _about(text: str) -> dict[str, str]:
    """A field's description, for the JSON Schema (``kvlint.options`` hands it to pydantic)."""
    return {"description": text}


@dataclass(frozen=True)
class Config:
    """What a config file may say; any other key is an error with its position."""

    select: list[str] | None = field(
        default=None,
        metadata=_about("Rules to run: codes, prefixes (`KV3`), names or `ALL`; default all"),
    )
    ignore: list[str] = field(
        default_factory=list, metadata=_about("Rules not to run; the longest prefix wins")
    )
    extend_select: list[str] = field(
        default_factory=list, metadata=_about("Rules to add to `select`")
    )
    per_file_ignores: dict[str, list[str]] = field(
        default_factory=dict,
        metadata=_about("Glob pattern (relative to this file) -> rules not to run on those files"),
    )
    workload: dict[str, dict[str, int | str]] = field(
        default_factory=dict,
        metadata=_about(
            "Glob pattern (relative to this file) -> the requests those files' deployments serve, "
            "in tokens: `prompt-tokens` and `output-tokens` of a typical request and/or "
            "percentiles of prompt + output (`p95-tokens: 3000`); a plan's own `workload` wins"
        ),
    )
    severity: dict[str, SeverityName] = field(
        default_factory=dict, metadata=_about("Rule code or name -> the severity to report it at")
    )
    rules: dict[str, dict[str, Any]] = field(
        default_factory=dict,
        metadata=_about("Rule code or name -> its options (`kvlint explain CODE` lists them)"),
    )
    engine_version: str | dict[str, str] | None = field(
        default=None,
        metadata=_about("Engine version for files that give none: one for all, or per engine"),
    )
    gpu: str | None = field(
        default=None, metadata=_about("GPU for deployments that name none (`H100-80GB`)")
    )
    reserved_memory: str | int | None = field(
        default=None,
        metadata=_about(
            "Memory of each GPU (or unified memory) that other residents hold, for deployments "
            "that state none: `16 GB`, `12GiB` (a bare number is bytes)"
        ),
    )
    fail_on: SeverityName = field(
        default="warning", metadata=_about("The lowest severity that makes `kvlint check` exit 1")
    )
    exclude: list[str] | None = field(
        default=None,
        metadata=_about(
            "gitwildmatch patterns (relative to this file) of files and folders a folder walk "
            "skips; replaces the default: hidden files and folders, node_modules, __pycache__ "
            "and the JavaScript tools' JSON (package.json, package-lock.json, tsconfig*.json, "
            "jsconfig*.json)"
        ),
    )
    extend_exclude: list[str] = field(
        default_factory=list, metadata=_about("Patterns to skip as well as `exclude`")
    )
    respect_gitignore: bool = field(
        default=True, metadata=_about("Skip what .gitignore files ignore in a folder walk")
    )
    offline: bool = field(
        default=False,
        metadata=_about(
            "Never ask the Hugging Face Hub for a model's config.json (as `--offline`): models "
            "come from paths, the built-in catalog, their names and the local cache"
        ),
    )
    models: dict[str, str] = field(
        default_factory=dict,
        metadata=_about(
            "Model reference as a file writes it (a container path, a private id) -> the model "
            "it is: a Hub or catalog id, or a config.json path relative to this file"
        ),
    )


# What a folder walk skips unless `exclude` says otherwise (ruff's default keeps hidden folders,
# virtual environments and caches out the same way); `.git` is never walked. The JavaScript
# tools' JSON files hold no deployment, and tsconfig.json is JSON with comments: a `kvlint
# check .` over a repository with a web front end reported it as unreadable (KV901, exit 2).
DEFAULT_EXCLUDE = (
    ".*",
    "node_modules",
    "__pycache__",
    "package.json",
    "package-lock.json",
    "tsconfig*.json",
    "jsconfig*.json",
)


# Where the schema is published: the file in the repository, as SchemaStore's catalog fetches it.
SCHEMA_ID = "https://raw.githubusercontent.com/kvcache-lint/kvlint/main/schemas/config.schema.json"


def config_schema() -> dict[str, Any]:
    """The JSON Schema of the config file (``schemas/config.schema.json`` is generated from it)."""
    schema = option_models.pydantic_model(Config, _kebab).model_json_schema(by_alias=True)
    # An editor's `$schema: ...` line (yaml-language-server, SchemaStore) is allowed and ignored.
    schema["properties"] = {
        "$schema": {"description": "The schema of this file, for editors", "type": "string"},
        **schema["properties"],
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        **schema,
        "title": "kvlint configuration (.kvlint.yaml, or [tool.kvlint] in pyproject.toml)",
    }


@dataclass(frozen=True)
class LoadedConfig:
    """A configuration as read: the settings, the file they came from and its text."""

    config: Config
    path: Path | None = None  # None: no file (defaults)
    text: str = ""
    root: Node | None = None  # a YAML file's nodes, for the positions of its keys

    @property
    def base_dir(self) -> Path | None:
        return self.path.parent if self.path is not None else None

    def span(self, loc: Sequence[str | int]) -> Span | None:
        """Where the key at ``loc`` is written (best effort), for error messages."""
        if self.path is None:
            return None
        if self.root is None:
            return _locate_toml(self.path, self.text, loc)
        return _locate(self.root, loc)


@dataclass(frozen=True)
class Settings:
    """Everything the linter needs from the config file and the command line, resolved."""

    selection: Selection
    severities: dict[str, Severity] = field(default_factory=dict)  # code -> configured severity
    options: dict[str, Any] = field(default_factory=dict)  # code -> the rule's Options instance
    engine_versions: dict[str, str] = field(default_factory=dict)  # engine ("*": any) -> version
    gpu: str | None = None
    reserved_memory: int | None = None  # bytes other residents hold on each GPU
    fail_on: Severity = Severity.WARNING
    offline: bool = False
    models: dict[str, str] = field(default_factory=dict)  # reference -> the model it is
    config_path: Path | None = None
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE  # gitwildmatch, relative to base_dir
    respect_gitignore: bool = True
    # (glob pattern, the workload of the files it matches), in the file's order: the first wins
    workloads: tuple[tuple[str, Workload], ...] = ()

    def workload_for(self, path: str) -> Workload | None:
        """The configured workload of the file at ``path`` (the first pattern matching it)."""
        for pattern, workload in self.workloads:
            if matches_pattern(pattern, path, self.base_dir):
                return workload
        return None

    @property
    def base_dir(self) -> Path | None:
        """The folder the config's patterns are relative to (None: no config file)."""
        return self.config_path.parent if self.config_path is not None else None


def find_config(start: Path) -> Path | None:
    """The nearest ``.kvlint.yaml`` or ``pyproject.toml`` with ``[tool.kvlint]``, walking up from
    ``start``; the walk stops at the repository root (a folder holding ``.git``)."""
    here = start if start.is_dir() else start.parent
    for folder in (here.resolve(), *here.resolve().parents):
        found = config_in(folder)
        if found is not None:
            return found
        if is_repository_root(folder):
            return None
    return None


def config_in(folder: Path) -> Path | None:
    """``folder``'s own config: a ``.kvlint.yaml`` (``.yml``), else a ``pyproject.toml`` with
    ``[tool.kvlint]``; None when it has neither."""
    for name in YAML_NAMES:
        if (folder / name).is_file():
            return folder / name
    pyproject = folder / PYPROJECT
    if pyproject.is_file() and _has_tool_kvlint(pyproject):
        return pyproject
    return None


def is_repository_root(folder: Path) -> bool:
    """Where the search for a config stops: a folder holding ``.git``."""
    return (folder / ".git").exists()


def _has_tool_kvlint(path: Path) -> bool:
    """Whether the file has a ``[tool.kvlint]`` table. Searched in the bytes: a pyproject.toml
    that is not UTF-8 but holds one is kvlint's to report (load_config says where), not to skip."""
    try:
        data = reading.read_bytes(path, reading.CONFIG_FILE)
    except OSError:
        return False
    return re.search(rb"^\s*\[tool\.kvlint[\].]", data, re.MULTILINE) is not None


def _read_config_text(path: Path) -> str:
    """The config file's text: a regular file, at most ``reading.CONFIG_FILE``, UTF-8."""
    try:
        data = reading.read_bytes(path, reading.CONFIG_FILE)
    except OSError as exc:
        raise KvlintError(f"config file: {reading.describe(exc)}", path=str(path)) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        before = data[: exc.start].decode("utf-8", errors="replace")
        line = before.count("\n") + 1
        column = len(before) - (before.rfind("\n") + 1) + 1
        message = f"invalid UTF-8 (byte 0x{data[exc.start]:02x}): save the file as UTF-8"
        raise KvlintError(message, Span(str(path), line, column)) from None


def load_config(path: Path | None) -> LoadedConfig:
    """Read and validate one config file (``None``: the defaults); every mistake in it is
    reported (``KvlintErrors``), not only the first."""
    if path is None:
        return LoadedConfig(Config())
    text = _read_config_text(path)
    if path.suffix == ".toml":
        data, root = _parse_toml(path, text), None
    else:
        root = _parse_yaml(path, text)
        data = root.plain() if root is not None else {}
    loaded = LoadedConfig(Config(), path, text, root)
    if isinstance(data, dict) and isinstance(data.get("$schema"), str):
        data = {k: v for k, v in data.items() if k != "$schema"}
    try:
        config = option_models.validate(Config, data, alias=_kebab)
    except option_models.OptionsError as exc:
        raise_all([_config_error(loaded, one, prefix=()) for one in _each(exc)])
        raise AssertionError("unreachable") from None  # raise_all raised
    return LoadedConfig(config, path, text, root)


def _each(exc: option_models.OptionsError) -> list[option_models.OptionsError]:
    return [option_models.OptionsError(loc, kind, message) for loc, kind, message in exc.errors]


def toml_module() -> Any:
    """``tomllib`` (Python 3.11+), else ``tomli``, the package it was taken from (a dependency
    on Python < 3.11). Imported by name so mypy's 3.10 target accepts both."""
    try:
        return importlib.import_module("tomllib")
    except ImportError:
        pass
    try:
        return importlib.import_module("tomli")
    except ImportError:
        raise KvlintError(
            "reading [tool.kvlint] needs Python 3.11 or the tomli package (pip install tomli)"
        ) from None


def _parse_toml(path: Path, text: str) -> Any:
    tomllib = toml_module()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _toml_error(path, text, str(exc)) from None
    except RecursionError:  # tomllib recurses once per level of `[[[...` or `{a={a=...`
        raise KvlintError("invalid TOML: nested too deeply to read", path=str(path)) from None
    return data.get("tool", {}).get("kvlint", {})


def _toml_error(path: Path, text: str, message: str) -> KvlintError:
    """tomllib's error at its line and column (it writes them into the message)."""
    where = re.search(r" \(at line (\d+), column (\d+)\)$", message)
    if where is not None:
        span = Span(str(path), int(where.group(1)), int(where.group(2)))
        return KvlintError(f"invalid TOML: {message[: where.start()]}", span)
    if message.endswith(" (at end of document)"):
        lines = text.split("\n")
        span = Span(str(path), len(lines), len(lines[-1]) + 1)
        return KvlintError(f"invalid TOML: {message.removesuffix(' (at end of document)')}", span)
    return KvlintError(f"invalid TOML: {message}", path=str(path))


def _parse_yaml(path: Path, text: str) -> NodeMapping | None:
    """The file's one document as nodes (None when empty), read as deployment files are."""
    source = SourceText.of(str(path), text)
    documents, problems = parse_documents(source)
    if problems:
        raise KvlintError(problems[0].message, problems[0].span, path=str(path))
    if not documents:
        return None
    if len(documents) > 1:
        span = documents[1].root.span
        raise KvlintError("a kvlint config file holds one YAML document", span, path=str(path))
    root = documents[0].root
    if isinstance(root, Scalar) and root.value is None:
        return None
    if not isinstance(root, NodeMapping):
        raise KvlintError("a kvlint config file must be a mapping of keys", Span(str(path), 1, 1))
    return root


def _config_error(
    loaded: LoadedConfig, exc: option_models.OptionsError, prefix: tuple[str | int, ...]
) -> KvlintError:
    loc = prefix + exc.loc
    dotted = ".".join(str(part) for part in loc)
    if exc.kind == "extra_forbidden":
        message = f"unknown key `{dotted}` in the kvlint config"
        if not prefix:
            known = ", ".join(_kebab(f.name) for f in fields(Config))
            message += f" (known keys: {known})"
    else:
        message = f"`{dotted}`: {exc.message}"
    return KvlintError(message, loaded.span(loc), path=str(loaded.path))


def resolve(
    loaded: LoadedConfig,
    registry: Registry,
    *,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] = (),
    extend_select: Sequence[str] = (),
    fail_on: str | None = None,
    gpu: str | None = None,
    engine_version: str | None = None,
    offline: bool = False,
    reserved_memory: str | None = None,
) -> Settings:
    """Settings from the file, with command-line values on top: ``--select`` replaces the file's
    ``select``; ``--ignore`` and ``--extend-select`` add to the file's lists; ``--fail-on``,
    ``--gpu`` and ``--engine-version`` replace the file's value. Every unknown rule code, name
    or prefix, and every bad rule option, is reported (``KvlintErrors``), each at its key."""
    config = loaded.config
    errors: list[KvlintError] = []
    name = _kebab

    def from_file(key: str, values: Sequence[str], *inner: str | int) -> tuple[str, ...]:
        return normalise(
            values,
            registry,
            where=f"`{'.'.join(map(str, (key, *inner)))}`" + _in_file(loaded),
            errors=errors,
            locate=lambda i: loaded.span((key, *inner, i)),
        )

    def from_cli(flag: str, values: Sequence[str]) -> tuple[str, ...]:
        return normalise(values, registry, where=flag, errors=errors)

    if select is not None:
        selected: tuple[str, ...] | None = from_cli("--select", select)
    elif config.select is not None:
        selected = from_file("select", config.select)
    else:
        selected = None
    selection = Selection(
        select=selected,
        ignore=(*from_file("ignore", config.ignore), *from_cli("--ignore", ignore)),
        extend_select=(
            *from_file(name("extend_select"), config.extend_select),
            *from_cli("--extend-select", extend_select),
        ),
        per_file_ignores=[
            PerFileIgnore(pattern, from_file(name("per_file_ignores"), codes, pattern))
            for pattern, codes in config.per_file_ignores.items()
        ],
        base_dir=loaded.base_dir,
    )
    severities: dict[str, Severity] = {}
    for key, value in config.severity.items():
        code = _rule_code(loaded, registry, key, ("severity", key), errors)
        if code is not None:
            severities[code] = Severity.parse(value)
    options: dict[str, Any] = {}
    for key, raw in config.rules.items():
        code = _rule_code(loaded, registry, key, ("rules", key), errors)
        if code is None:
            continue
        try:
            options[code] = option_models.validate(registry.rules[code].Options, raw)
        except option_models.OptionsError as exc:
            errors.extend(_config_error(loaded, one, prefix=("rules", key)) for one in _each(exc))
    workloads = _workloads(loaded, errors)
    reserved = _reserved(loaded, config.reserved_memory, reserved_memory, errors)
    raise_all(errors)
    return Settings(
        selection=selection,
        severities=severities,
        options=options,
        engine_versions=_engine_versions(config.engine_version, engine_version),
        gpu=gpu or config.gpu,
        reserved_memory=reserved,
        fail_on=Severity.parse(fail_on or config.fail_on),
        offline=offline or config.offline,
        models=dict(config.models),
        config_path=loaded.path,
        exclude=(
            *(config.exclude if config.exclude is not None else DEFAULT_EXCLUDE),
            *config.extend_exclude,
        ),
        respect_gitignore=config.respect_gitignore,
        workloads=workloads,
    )


def _workloads(loaded: LoadedConfig, errors: list[KvlintError]) -> tuple[tuple[str, Workload], ...]:
    """``workload`` per pattern, each count Sourced at its key in the config file."""
    found: list[tuple[str, Workload]] = []
    for pattern, figures in loaded.config.workload.items():
        prompt = output = None
        percentiles: list[tuple[str, Sourced[int]]] = []
        for key, raw in figures.items():
            name = key.replace("-", "_")
            loc = ("workload", pattern, key)
            where = f"`workload.{pattern}.{key}`{_in_file(loaded)}"
            match = _PERCENTILE.match(name)
            if name not in ("prompt_tokens", "output_tokens") and match is None:
                errors.append(
                    KvlintError(
                        f"{where}: not a workload figure (prompt-tokens, output-tokens, or a "
                        "percentile such as p95-tokens)",
                        loaded.span(loc),
                        path=str(loaded.path),
                    )
                )
                continue
            try:
                count = raw if isinstance(raw, int) else parse_human_int(str(raw))
            except ValueError as exc:
                problem = KvlintError(f"{where}: {exc}", loaded.span(loc), path=str(loaded.path))
                errors.append(problem)
                continue
            if count < 1:
                errors.append(
                    KvlintError(
                        f"{where}: expected a positive token count, got {raw!r}",
                        loaded.span(loc),
                        path=str(loaded.path),
                    )
                )
                continue
            span = loaded.span(loc) or Span(str(loaded.path), 1, 1)
            value = Sourced(count, span._replace(key=f"workload {key} (configured)"), str(raw))
            if name == "prompt_tokens":
                prompt = value
            elif name == "output_tokens":
                output = value
            elif match is not None:
                percentiles.append((match.group(1), value))
        workload = Workload(prompt, output, tuple(percentiles))
        if workload.lengths():
            found.append((pattern, workload))
    return tuple(found)


_PERCENTILE = lazy(r"^(p[0-9]{1,2}(?:\.[0-9]+)?)_tokens$")


def _reserved(
    loaded: LoadedConfig,
    from_file: str | int | None,
    cli: str | None,
    errors: list[KvlintError],
) -> int | None:
    """``reserved-memory`` in bytes: ``--reserved-memory`` over the file's value."""
    from kvlint.units import parse_size

    value = cli if cli is not None else from_file
    if value is None:
        return None
    try:
        return parse_size(value)
    except ValueError as exc:
        if cli is not None:
            errors.append(KvlintError(f"--reserved-memory: {exc}"))
        else:
            where = loaded.span(("reserved-memory",))
            errors.append(KvlintError(f"`reserved-memory`: {exc}", where, path=str(loaded.path)))
        return None


def _in_file(loaded: LoadedConfig) -> str:
    return " of the kvlint config" if loaded.path is not None else ""


def _rule_code(
    loaded: LoadedConfig,
    registry: Registry,
    key: str,
    loc: tuple[str | int, ...],
    errors: list[KvlintError],
) -> str | None:
    rule = registry.get(key)
    if rule is None:
        dotted = ".".join(map(str, loc))
        errors.append(
            KvlintError(
                f"`{dotted}`: {why_unknown(key, registry)}",
                loaded.span(loc),
                path=str(loaded.path),
            )
        )
        return None
    return rule.code


def configured_facts(
    path: Path, *, gpu: str | None = None, engine_version: str | None = None
) -> tuple[str | None, dict[str, str]]:
    """The GPU and engine versions that the nearest config of ``path`` (and the command line,
    which wins) give deployments that name none: what ``kvlint size`` fills in as ``check``
    does."""
    config = load_config(find_config(path)).config
    return gpu or config.gpu, _engine_versions(config.engine_version, engine_version)


def configured_reserved(path: Path, cli: str | None = None) -> int | None:
    """The ``reserved-memory`` the nearest config of ``path`` (or the command line) gives."""
    loaded = load_config(find_config(path))
    errors: list[KvlintError] = []
    reserved = _reserved(loaded, loaded.config.reserved_memory, cli, errors)
    raise_all(errors)
    return reserved


def _engine_versions(from_file: str | Mapping[str, str] | None, cli: str | None) -> dict[str, str]:
    versions: dict[str, str] = {}
    if isinstance(from_file, str):
        versions["*"] = from_file
    elif from_file:
        versions.update(from_file)
    if cli:
        # `--engine-version 0.11.0` for every engine, or `--engine-version vllm=0.11.0`.
        engine, eq, version = cli.partition("=")
        if eq:
            versions[engine.strip()] = version.strip()
        else:
            versions = {"*": cli.strip()}
    return versions


def _locate(root: Node, loc: Sequence[str | int]) -> Span:
    """Where the last key of ``loc`` that the file holds is written (its first line otherwise)."""
    node: Node | None = root
    span = root.source.span(0)
    for part in loc:
        if isinstance(node, NodeMapping) and isinstance(part, str):
            key = next((k for k, _ in node if _kebab(k.text) == _kebab(part)), None)
            if key is None:
                break
            span = key.source.span(key.start)
            node = node.get(key.text)
        elif isinstance(node, NodeSequence) and isinstance(part, int) and part < len(node.items):
            node = node.items[part]
            span = node.source.span(node.start)
        else:
            break
    return span


def _locate_toml(path: Path, text: str, loc: Sequence[str | int]) -> Span:
    lines = text.splitlines()
    start = next(
        (i for i, line in enumerate(lines) if re.match(r"\s*\[tool\.kvlint[\].]", line)), 0
    )
    names = [str(part) for part in loc if isinstance(part, str)]
    for name in reversed(names):
        pattern = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])")
        for number in range(start, len(lines)):
            match = pattern.search(lines[number].split("#", 1)[0])
            if match:
                return Span(str(path), number + 1, match.start() + 1)
    return Span(str(path), start + 1, 1)
