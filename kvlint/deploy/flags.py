"""One engine's CLI as data (flags, aliases, env vars) and the argv interpreter they share."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Literal

from kvlint import codes
from kvlint.deploy.argv import Token
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.finding import InputProblem
from kvlint.finding import Severity
from kvlint.lazy_re import lazy
from kvlint.source.text import find_placeholder
from kvlint.storage import is_weight_format
from kvlint.units import INT64_MAX
from kvlint.units import parse_human_int

# The arithmetic walks each pipeline stage (quadratically in the stage count) and rank: a
# parallel size of 6e16 in a hostile file ran out of memory, 16,384 stages took 26 s. The
# largest real deployments span a few hundred GPUs in a handful of stages.
MAX_PARALLEL = {
    "tensor_parallel_size": 16_384,
    "data_parallel_size": 16_384,
    "pipeline_parallel_size": 1_024,
}

# How many tokens a flag takes: "0" never, "bool" none (``--no-x`` negates), "1" one,
# "?" one when the next token is a value, "+" every following non-flag token.
Arity = str


@dataclass(frozen=True)
class Setting:
    """A flag kvlint interprets: its value type and the Deployment field it sets."""

    name: str  # canonical long name without dashes: "max-num-seqs"
    kind: str  # int, human_int, max_model_len, float, fraction, str, bool, json, size
    field: str | None = None
    choices: tuple[str, ...] = ()
    minimum: int | None = None  # the engine refuses smaller values
    refused: tuple[int, ...] = ()  # values the engine refuses although above the minimum


@dataclass(frozen=True)
class EngineSpec:
    """An engine's command line as data: its settings, options, aliases and spellings."""

    name: str
    settings: Mapping[str, Setting]
    known: Mapping[str, Arity]  # every real option, canonical long name -> arity
    aliases: Mapping[str, str] = field(default_factory=dict)  # "-tp", "tp" -> canonical
    env: Mapping[str, str] = field(default_factory=dict)  # env var -> canonical flag
    underscores: bool = False  # vLLM reads --max_num_seqs as --max-num-seqs
    negatable: bool = False  # bool flags take --no-<name>
    model_flag: str = "model"  # the canonical flag that names the model
    abbrev: bool = False  # argparse's allow_abbrev: a unique prefix names the option
    releases_read: tuple[str, ...] = ()  # releases whose flags were read, oldest first
    first_seen: Mapping[str, str] = field(default_factory=dict)  # flag -> first release read
    last_seen: Mapping[str, str] = field(default_factory=dict)  # flag -> last release read
    # JSON options that also take one key at a time (vLLM's `--hf-overrides.head_dim=1024`,
    # `--compilation-config.level 3`): canonical names.
    dotted: frozenset[str] = frozenset()
    # Options naming a YAML file of the engine's own settings (TensorRT-LLM's
    # --extra_llm_api_options, vLLM's and SGLang's --config): canonical names.
    config_files: tuple[str, ...] = ()
    # How the engine layers that file on its command line: "over" (TensorRT-LLM updates the
    # arguments the flags built with the file's, so the file wins) or "under" (vLLM and SGLang
    # put the file's keys into argv before the command line's flags, so a flag given on the
    # command line wins).
    config_layer: Literal["over", "under"] = "over"

    def absent_in(self, name: str, version: str) -> str | None:
        """Why ``--name`` is not a flag of ``version`` (from the releases read), else None.

        A flag last seen in release L is gone from every release from the next one read; a
        flag first seen in F is missing from every release up to the one read before F.
        """
        current = _version_tuple(version)
        if current is None or not self.releases_read:
            return None
        releases = list(self.releases_read)
        last = self.last_seen.get(name)
        if last is not None:
            gone = releases[releases.index(last) + 1]
            if current >= _version_tuple(gone):  # type: ignore[operator]
                return f"removed after {last} (absent from {gone})"
        first = self.first_seen.get(name)
        if first is not None:
            before = releases[releases.index(first) - 1]
            if current <= _version_tuple(before):  # type: ignore[operator]
                return f"added after {before} (present from {first})"
        return None

    def canonical(self, spelled: str) -> str | None:
        """The canonical name of ``--max_num_seqs``/``-tp``/``ctx-size``, or None if unknown."""
        if spelled in self.aliases:
            return self.aliases[spelled]
        name = spelled.lstrip("-")
        if self.underscores:
            name = name.replace("_", "-")
        if name in self.known or name in self.settings:
            return name
        dashed = "-" * (len(spelled) - len(name)) + name
        return self.aliases.get(dashed) or self.aliases.get(name)

    def negated(self, spelled: str) -> str | None:
        """The boolean flag ``--no-<name>`` turns off (argparse's BooleanOptionalAction, which
        vLLM gives every boolean), or None when ``spelled`` is no such negation."""
        if not self.negatable or not spelled.startswith(("--no-", "--no_")):
            return None
        base = self.canonical("--" + spelled[5:])
        return base if base is not None and self.arity(base) in ("0", "bool") else None

    def expand_abbreviation(self, spelled: str) -> str | None:
        """The option argparse takes an unambiguous prefix for (``--tp`` -> ``tp-size``)."""
        name = spelled.lstrip("-")
        if self.underscores:
            name = name.replace("_", "-")
        if not self.abbrev or not spelled.startswith("--") or not name:
            return None
        # argparse matches the prefix against every option string, aliases included
        # (SGLang's `--nccl-init` is `--nccl-init-addr`, an alias of `--dist-init-addr`).
        matches = {k for k in self.known if k.startswith(name)}
        matches |= {
            target
            for alias, target in self.aliases.items()
            if alias.startswith("--") and alias[2:].startswith(name)
        }
        # One option however many of its spellings the prefix matches (an option and its alias).
        return next(iter(matches)) if len(matches) == 1 else None

    def predates_table(self, version: str | None) -> bool:
        """Whether ``version`` is older than every release whose flags were read: a flag the
        table lacks may have been one of its own (retired since)."""
        if not version or not self.releases_read:
            return False
        current, oldest = _version_tuple(version), _version_tuple(self.releases_read[0])
        return current is not None and oldest is not None and current < oldest

    def arity(self, name: str) -> Arity:
        setting = self.settings.get(name)
        if setting is not None and setting.kind == "bool":
            return self.known.get(name, "bool")
        return self.known.get(name, "1")

    def suggest(self, spelled: str) -> str | None:
        """The closest real flag (difflib), as the user would write it."""
        import difflib  # only for an unknown flag: off the start-up path

        name = spelled.lstrip("-")
        if self.underscores:
            name = name.replace("_", "-")
        pool = list(self.known) + [a.lstrip("-") for a in self.aliases]
        match = difflib.get_close_matches(name, pool, n=1, cutoff=0.75)
        if not match:
            return None
        best = match[0]
        return best if best.startswith("-") else ("--" if len(best) > 2 else "-") + best


@dataclass
class Parsed:
    """An argv read against an engine: options in order (last wins), positionals, unknowns."""

    options: list[tuple[str, Token, Token | None]] = field(default_factory=list)
    positionals: list[Token] = field(default_factory=list)
    unknown: list[Token] = field(default_factory=list)
    abbreviated: list[tuple[Token, str]] = field(default_factory=list)  # (token, expanded name)
    # One key of a JSON option (`--hf-overrides.text_config.head_dim 336`): (option, key path,
    # the flag, its value).
    dotted: list[tuple[str, str, Token, Token | None]] = field(default_factory=list)


def _version_tuple(version: str) -> tuple[int, ...] | None:
    parts = version.lstrip("v").split("+")[0].split(".")
    numbers: list[int] = []
    for part in parts[:3]:
        digits = "".join(c for c in part if c.isdigit()) if part[:1].isdigit() else ""
        if not digits or len(digits) > 9:  # no version has a part this long
            return None
        numbers.append(int(digits))
    return tuple(numbers)


def _is_flag(text: str) -> bool:
    if not text.startswith("-") or text in ("-", "--"):
        return False
    try:
        float(text)
    except ValueError:
        return True
    return False  # a negative number is a value (argparse reads `--max-model-len -1` so)


def parse_argv(spec: EngineSpec, tokens: list[Token]) -> Parsed:
    parsed = Parsed()
    i = 0
    while i < len(tokens):
        token = tokens[i]
        text = token.text
        i += 1
        if not _is_flag(text):
            parsed.positionals.append(token)
            continue
        spelled, eq, _ = text.partition("=")
        value: Token | None = token.tail(len(spelled) + 1) if eq else None
        name = spec.canonical(spelled)
        negated = False
        if name is not None and name.startswith("no:"):
            name, negated = name[3:], True  # llama.cpp's `-no-kvu`
        elif name is None and (base := spec.negated(spelled)) is not None:
            name, negated = base, True
        if name is None and spec.dotted and spelled.startswith("--") and "." in spelled:
            option, _, path = spelled[2:].partition(".")
            base = spec.canonical("--" + option)
            if base in spec.dotted and path:
                if value is None and i < len(tokens) and not _is_flag(tokens[i].text):
                    value = tokens[i]
                    i += 1
                parsed.dotted.append((base, path, token, value))
                continue
        if name is None:
            name = spec.expand_abbreviation(spelled)
            if name is not None:
                parsed.abbreviated.append((token, name))
        if name is None:
            parsed.unknown.append(token)
            if value is None and i < len(tokens) and not _is_flag(tokens[i].text):
                # Unknown arity: assume the next word is its value, as most options take one.
                i += 1
            continue
        arity = spec.arity(name)
        if negated:
            parsed.options.append((name, token, _literal(token, "false")))
            continue
        if value is None:
            if arity in ("1", "?"):
                setting = spec.settings.get(name)
                wants = i < len(tokens) and (arity == "1" or not _is_flag(tokens[i].text))
                if wants and arity == "?" and setting is not None and setting.choices:
                    wants = tokens[i].text in setting.choices
                if wants:
                    value = tokens[i]
                    i += 1
            elif arity == "+":
                values = []
                while i < len(tokens) and not _is_flag(tokens[i].text):
                    values.append(tokens[i])
                    i += 1
                if values:
                    # The span is the first value's; the text is every value, space-joined.
                    value = _literal(values[0], " ".join(v.text for v in values))
        parsed.options.append((name, token, value))
    return parsed


# The Deployment fields that hold a cache dtype.
_CACHE_FIELDS = ("kv_cache_dtype", "kv_cache_dtype_v")


def _weight_format_as_cache(setting: Setting, raw: Any) -> bool:
    """A weight quantisation given where the engine reads a cache dtype, which it does not list
    (vLLM's `awq`, llama.cpp's `q4_K_M`): the mistake KV201 names, not a generic KV502."""
    if setting.field not in _CACHE_FIELDS or not setting.choices or not isinstance(raw, str):
        return False
    return raw not in setting.choices and is_weight_format(raw)


def dotted_json(pieces: list[tuple[str, Token | None]]) -> dict[str, Any]:
    """The JSON object a run of `--option.key.sub VALUE` flags spells, as vLLM's argument
    parser builds it: each value decoded as JSON when it is JSON (`1024` is a number), a
    string otherwise; a key ending in `+` appends to a list."""
    result: dict[str, Any] = {}
    for path, token in pieces:
        text = token.text if token is not None else "true"
        try:
            value: Any = json.loads(text)
        except ValueError:
            value = text
        *parents, last = path.split(".")
        node = result
        for key in parents:
            child = node.get(key)
            if not isinstance(child, dict):
                child = node[key] = {}
            node = child
        if last.endswith("+"):
            items = node.setdefault(last[:-1], [])
            if isinstance(items, list):
                items.extend(value.split(",") if isinstance(value, str) else [value])
        else:
            node[last] = value
    return result


def _literal(token: Token, text: str) -> Token:
    return Token(text, token.node, token.aligner, token.start, token.end, token.fallback)


def unknown_flag_problem(
    spec: EngineSpec, token: Token, version: str | None = None
) -> InputProblem:
    spelled = token.text.partition("=")[0]
    hint = spec.suggest(spelled)
    message = f"unknown flag `{spelled}` for {spec.name}"
    if hint and hint.lstrip("-") != spelled.lstrip("-"):
        message += f"; did you mean `{hint}`?"
    if spec.predates_table(version):
        # SGLang v0.5.5's `--cuda-graph-max-bs` (renamed since): an error would be a guess.
        read = " and ".join(spec.releases_read)
        message += f" (flags read from {spec.name} {read}; {version} is older and may have it)"
        return InputProblem(codes.UNKNOWN_FLAG, token.span, message, Severity.WARNING)
    return InputProblem(codes.UNKNOWN_FLAG, token.span, message, Severity.ERROR)


def abbreviation_problem(spec: EngineSpec, token: Token, name: str) -> InputProblem:
    """A prefix argparse expands today, and would reject once another option shares it."""
    spelled = token.text.partition("=")[0]
    message = (
        f"unknown flag `{spelled}` for {spec.name}; did you mean `--{name}`? "
        f"(argparse takes it as an abbreviation of `--{name}` today)"
    )
    return InputProblem(codes.UNKNOWN_FLAG, token.span, message, Severity.WARNING)


def convert(setting: Setting, raw: Any, spelled: str) -> tuple[Any, str | None]:
    """(value, None) or (None, message) for a KV502 problem."""
    kind = setting.kind
    try:
        if kind == "bool":
            return _bool(raw), None
        if kind in ("int", "human_int", "max_model_len", "size"):
            if isinstance(raw, bool):
                raise ValueError
            if isinstance(raw, float) and raw.is_integer():
                raw = int(raw)
            if kind == "max_model_len" and str(raw).strip().lower() in ("auto", "-1"):
                return -1, None
            if kind == "int":
                value = int(str(raw).strip())
            else:
                value = parse_human_int(raw if isinstance(raw, int) else str(raw))
            if kind != "int" and value <= 0:
                return None, f"`{spelled}` must be a positive integer, got `{raw}`"
            if abs(value) > INT64_MAX:  # no engine stores it (C / torch int64); bounds arithmetic
                return None, f"`{spelled}` is out of range: {_digits(value)}"
            limit = MAX_PARALLEL.get(setting.field or "")
            if limit is not None and value > limit:
                return None, f"`{spelled}` is {_digits(value)}: above any deployment ({limit:,})"
            if (
                setting.minimum is not None and value < setting.minimum
            ) or value in setting.refused:
                return None, f"`{spelled}` {_range(setting)}, got `{raw}`"
            return value, None
        if kind in ("float", "fraction"):
            if isinstance(raw, bool):
                raise ValueError
            number = float(raw)
            if not math.isfinite(number):
                raise ValueError
            if abs(number) > INT64_MAX:
                return None, f"`{spelled}` is out of range: {_digits(raw)}"
            if kind == "fraction" and not 0 < number <= 1:
                return None, f"`{spelled}` must be a fraction in (0, 1], got `{raw}`"
            return number, None
        if kind == "json":
            if isinstance(raw, (dict, list)):
                return raw, None
            return json.loads(str(raw)), None
    except (ValueError, TypeError, OverflowError):  # float() of a 400-digit int overflows
        if kind in ("int", "human_int", "max_model_len", "size") and _long_integer(raw):
            # An integer past what Python prints (4,300 digits), kept as its text by the reader.
            return None, f"`{spelled}` is out of range: {_digits(raw)}"
        return None, _type_message(setting, spelled, raw)
    text = str(raw)
    if setting.choices and text not in setting.choices:
        allowed = ", ".join(setting.choices)
        return None, f"`{spelled}` must be one of {allowed}; got `{text}`"
    return text, None


_LONG_INTEGER_RE = lazy(r"[-+]?(?:0x[0-9a-fA-F_]+|0b[01_]+|[0-9][0-9_]*)")


def _long_integer(raw: Any) -> bool:
    return isinstance(raw, str) and len(raw) > 24 and bool(_LONG_INTEGER_RE.fullmatch(raw.strip()))


def _digits(value: Any) -> str:
    text = str(value)
    return f"`{text}`" if len(text) <= 24 else f"a number of {len(text)} characters"


def _range(setting: Setting) -> str:
    if setting.minimum == 1 and not setting.refused:
        return "must be a positive integer"
    if setting.minimum is None:
        return "cannot be " + " or ".join(str(v) for v in setting.refused)
    text = f"must be at least {setting.minimum}"
    if setting.refused:
        text += " and not " + " or ".join(str(v) for v in setting.refused)
    return text


def _type_message(setting: Setting, spelled: str, raw: Any) -> str:
    expected = {
        "bool": "true or false",
        "int": "an integer",
        "human_int": "an integer such as 8192, 32k or 128K",
        "size": "an integer such as 8192, 32k or 128K",
        "max_model_len": "an integer such as 8192, 32k or 128K (or -1 / auto)",
        "float": "a number",
        "fraction": "a fraction such as 0.9",
        "json": "a JSON object",
    }.get(setting.kind, "a value")
    return f"`{spelled}` expects {expected}, got `{raw}`"


def _bool(raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("true", "1", "yes", "on", ""):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise ValueError(text)


# A value set at run time: a shell or Kubernetes variable, or a template placeholder (found by
# kvlint.source.text.find_placeholder: as a pattern it backtracked on a long line of `{`).
# Zarf packages' `###ZARF_VAR_GPU_LIMIT###` (also _CONST_ and _PKG_TMPL_) are filled in when the
# package is deployed (defenseunicorns' LeapfrogAI charts).
_VARIABLE_RE = lazy(
    r"\$(\(|\{)?[A-Za-z_][A-Za-z0-9_]*|###ZARF_(?:VAR|CONST|PKG_TMPL)_[A-Z0-9_]+###"
)


def is_run_time_value(text: str) -> bool:
    """Whether ``text`` holds a value filled in at deploy or run time (`$(MAX_LEN)`, `$LEN`,
    `{{ .Values.len }}`, `###ZARF_VAR_LEN###`)."""
    return _VARIABLE_RE.search(text) is not None or find_placeholder(text) is not None


# Post-processing hook of an engine: turns a setting's value into a Deployment field value
# (e.g. vLLM's --speculative-config JSON into the draft model's name).
FieldHook = Callable[[Deployment, str, Sourced[Any]], None]


def apply_setting(
    dep: Deployment,
    spec: EngineSpec,
    name: str,
    raw: Any,
    where: Token,
    *,
    spelled: str,
    raw_text: str | None = None,
    hooks: Mapping[str, FieldHook] | None = None,
) -> None:
    """Record ``name = raw`` in ``dep.settings`` (and its Deployment field), or a KV502."""
    setting = spec.settings.get(name)
    span = where.span
    text = raw_text if raw_text is not None else where.raw
    if setting is None or (isinstance(raw, str) and is_run_time_value(raw)):
        # An unknown setting, or a value set at run time (`$(MAX_LEN)` from a Secret or the
        # operator): kept as written, not typed, so no wrong-type finding on a placeholder.
        dep.settings[name] = Sourced(raw, span, text)
        if setting is not None and setting.field is not None:
            dep.runtime[setting.field] = Sourced(str(raw), span, text)
        return
    if _weight_format_as_cache(setting, raw):
        dep.weight_format_cache[str(setting.field)] = Sourced(str(raw), span, text)
        return
    value, error = convert(setting, raw, spelled)
    if error is not None:
        dep.problems.append(InputProblem(codes.INVALID_SETTING, span, error, Severity.ERROR))
        return
    sourced: Sourced[Any] = Sourced(value, span, text)
    dep.settings[name] = sourced
    if hooks and name in hooks:
        hooks[name](dep, name, sourced)
    elif setting.field is not None:
        setattr(dep, setting.field, sourced)
