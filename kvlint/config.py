"""The config file: ``[tool.kvlint]`` in pyproject.toml or ``.kvlint.yaml``, found walking up."""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import Literal

import pydantic
from pydantic import ConfigDict
from pydantic import Field

from kvlint.errors import KvlintError
from kvlint.finding import Severity
from kvlint.finding import Span
from kvlint.registry import Registry
from kvlint.selection import Selection
from kvlint.selection import build_selection

YAML_NAMES = (".kvlint.yaml", ".kvlint.yml")
PYPROJECT = "pyproject.toml"

SeverityName = Literal["error", "warning", "info"]


def _kebab(name: str) -> str:
    return name.replace("_", "-")


class Config(pydantic.BaseModel):
    """What a config file may say; any other key is an error with its position."""

    model_config = ConfigDict(extra="forbid", alias_generator=_kebab, populate_by_name=True)

    select: list[str] | None = Field(
        default=None,
        description="Rules to run: codes, prefixes (`KV3`), names or `ALL`; default all",
    )
    ignore: list[str] = Field(default=[], description="Rules not to run; the longest prefix wins")
    extend_select: list[str] = Field(default=[], description="Rules to add to `select`")
    per_file_ignores: dict[str, list[str]] = Field(
        default={},
        description="Glob pattern (relative to this file) -> rules not to run on those files",
    )
    severity: dict[str, SeverityName] = Field(
        default={}, description="Rule code or name -> the severity to report it at"
    )
    rules: dict[str, dict[str, Any]] = Field(
        default={},
        description="Rule code or name -> its options (`kvlint explain CODE` lists them)",
    )
    engine_version: str | dict[str, str] | None = Field(
        default=None,
        description="Engine version for files that give none: one for all, or per engine",
    )
    gpu: str | None = Field(
        default=None, description="GPU for deployments that name none (`H100-80GB`)"
    )
    fail_on: SeverityName = Field(
        default="warning", description="The lowest severity that makes `kvlint check` exit 1"
    )


SCHEMA_ID = "https://kvlint.dev/schemas/config.schema.json"


def config_schema() -> dict[str, Any]:
    """The JSON Schema of the config file (``schemas/config.schema.json`` is generated from it)."""
    schema = Config.model_json_schema(by_alias=True)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        **schema,
        "title": "kvlint configuration (.kvlint.yaml, or [tool.kvlint] in pyproject.toml)",
    }


@dataclass(frozen=True)
class LoadedConfig:
    config: Config
    path: Path | None = None  # None: no file (defaults)
    text: str = ""

    @property
    def base_dir(self) -> Path | None:
        return self.path.parent if self.path is not None else None

    def span(self, loc: Sequence[str | int]) -> Span | None:
        """Where the key at ``loc`` is written (best effort), for error messages."""
        if self.path is None:
            return None
        return _locate(self.path, self.text, loc)


@dataclass(frozen=True)
class Settings:
    """Everything the linter needs from the config file and the command line, resolved."""

    selection: Selection
    severities: dict[str, Severity] = field(default_factory=dict)  # code -> configured severity
    options: dict[str, pydantic.BaseModel] = field(default_factory=dict)  # code -> options
    engine_versions: dict[str, str] = field(default_factory=dict)  # engine ("*": any) -> version
    gpu: str | None = None
    fail_on: Severity = Severity.WARNING
    offline: bool = False
    config_path: Path | None = None


def find_config(start: Path) -> Path | None:
    """The nearest ``.kvlint.yaml`` or ``pyproject.toml`` with ``[tool.kvlint]``, walking up from
    ``start``; the walk stops at the repository root (a folder holding ``.git``)."""
    here = start if start.is_dir() else start.parent
    for folder in (here.resolve(), *here.resolve().parents):
        for name in YAML_NAMES:
            if (folder / name).is_file():
                return folder / name
        pyproject = folder / PYPROJECT
        if pyproject.is_file() and _has_tool_kvlint(pyproject):
            return pyproject
        if (folder / ".git").exists():
            return None
    return None


def _has_tool_kvlint(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return re.search(r"^\s*\[tool\.kvlint[\].]", text, re.MULTILINE) is not None


def load_config(path: Path | None) -> LoadedConfig:
    """Read and validate one config file (``None``: the defaults)."""
    if path is None:
        return LoadedConfig(Config())
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise KvlintError(f"cannot read config file: {exc}", path=str(path)) from None
    data = _parse_toml(path, text) if path.suffix == ".toml" else _parse_yaml(path, text)
    loaded = LoadedConfig(Config(), path, text)
    try:
        config = Config.model_validate(data)
    except pydantic.ValidationError as exc:
        raise _config_error(loaded, exc, prefix=()) from None
    return LoadedConfig(config, path, text)


def _parse_toml(path: Path, text: str) -> Any:
    try:  # tomllib is Python 3.11+; imported by name so mypy's 3.10 target accepts it
        tomllib: Any = importlib.import_module("tomllib")
    except ImportError:  # pragma: no cover
        raise KvlintError("reading pyproject.toml needs Python 3.11", path=str(path)) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise KvlintError(f"invalid TOML: {exc}", path=str(path)) from None
    return data.get("tool", {}).get("kvlint", {})


def _parse_yaml(path: Path, text: str) -> Any:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        data = YAML(typ="safe").load(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        span = Span(str(path), mark.line + 1, mark.column + 1) if mark is not None else None
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise KvlintError(f"invalid YAML: {problem}", span, path=str(path)) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise KvlintError("a kvlint config file must be a mapping of keys", Span(str(path), 1, 1))
    return data


def _config_error(
    loaded: LoadedConfig, exc: pydantic.ValidationError, prefix: tuple[str | int, ...]
) -> KvlintError:
    error = exc.errors()[0]
    loc = prefix + tuple(error["loc"])
    dotted = ".".join(str(part) for part in loc)
    if error["type"] == "extra_forbidden":
        message = f"unknown key `{dotted}` in the kvlint config"
        if not prefix:
            known = ", ".join(_kebab(name) for name in Config.model_fields)
            message += f" (known keys: {known})"
    else:
        message = f"`{dotted}`: {error['msg']}"
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
) -> Settings:
    """Settings from the file, with command-line values on top: ``--select`` replaces the file's
    ``select``; ``--ignore`` and ``--extend-select`` add to the file's lists; ``--fail-on``,
    ``--gpu`` and ``--engine-version`` replace the file's value."""
    config = loaded.config
    where = str(loaded.path) if loaded.path else ""
    selection = build_selection(
        registry,
        select=select if select is not None else config.select,
        ignore=[*config.ignore, *ignore],
        extend_select=[*config.extend_select, *extend_select],
        per_file_ignores=config.per_file_ignores,
        base_dir=loaded.base_dir,
        where=where or "the command line",
    )
    severities = {
        _rule_code(loaded, registry, key, ("severity", key)): Severity.parse(value)
        for key, value in config.severity.items()
    }
    options: dict[str, pydantic.BaseModel] = {}
    for key, raw in config.rules.items():
        code = _rule_code(loaded, registry, key, ("rules", key))
        rule = registry.rules[code]
        try:
            options[code] = rule.Options.model_validate(raw)
        except pydantic.ValidationError as exc:
            raise _config_error(loaded, exc, prefix=("rules", key)) from None
    return Settings(
        selection=selection,
        severities=severities,
        options=options,
        engine_versions=_engine_versions(config.engine_version, engine_version),
        gpu=gpu or config.gpu,
        fail_on=Severity.parse(fail_on or config.fail_on),
        offline=offline,
        config_path=loaded.path,
    )


def _rule_code(
    loaded: LoadedConfig, registry: Registry, key: str, loc: tuple[str | int, ...]
) -> str:
    rule = registry.get(key)
    if rule is None:
        raise KvlintError(
            f"`{'.'.join(map(str, loc))}`: no rule has the code or name `{key}`",
            loaded.span(loc),
            path=str(loaded.path),
        )
    return rule.code


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


def _locate(path: Path, text: str, loc: Sequence[str | int]) -> Span | None:
    """The line and column of the last key of ``loc`` (YAML: exact; TOML: by a text search)."""
    if path.suffix == ".toml":
        return _locate_toml(path, text, loc)
    try:
        from ruamel.yaml import YAML

        node: Any = YAML().load(text)
    except Exception:  # the text already parsed once; a failure here only loses the position
        return None
    position: tuple[int, int] | None = None
    for part in loc:
        key = _find_key(node, part)
        if key is None:
            break
        try:
            position = node.lc.key(key) if isinstance(part, str) else node.lc.item(key)
        except (AttributeError, KeyError, IndexError, TypeError):
            break
        node = node[key]
    if position is None:
        return Span(str(path), 1, 1)
    return Span(str(path), position[0] + 1, position[1] + 1)


def _find_key(node: Any, part: str | int) -> Any:
    if isinstance(node, dict):
        for key in node:
            if key == part or (isinstance(key, str) and _kebab(key) == _kebab(str(part))):
                return key
        return None
    if isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
        return part
    return None


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
