"""Applying an engine's argv, env vars and config-file keys to a Deployment."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from kvlint import codes
from kvlint.deploy.argv import Token
from kvlint.deploy.flags import EngineSpec
from kvlint.deploy.flags import FieldHook
from kvlint.deploy.flags import abbreviation_problem
from kvlint.deploy.flags import apply_setting
from kvlint.deploy.flags import dotted_json
from kvlint.deploy.flags import parse_argv
from kvlint.deploy.flags import unknown_flag_problem
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.finding import InputProblem
from kvlint.finding import Severity
from kvlint.source.nodes import Mapping as MappingNode
from kvlint.source.nodes import Scalar
from kvlint.source.nodes import Sequence

SUGGEST_UNKNOWN_FLAGS = 100


# The words YAML 1.1 (PyYAML, Helm, Kubernetes) reads as booleans, by what they say.
_YAML_BOOLEAN_WORDS = {"on": "on", "off": "off", "yes": "on", "no": "off"}


def _yaml_boolean_word(spec: EngineSpec, name: str, value: Scalar) -> str | None:
    """The word an unquoted `flash-attn: off` was written as, where the setting takes words
    (on/off/auto) and YAML made a boolean of it; None otherwise."""
    setting = spec.settings.get(name)
    if setting is None or "off" not in setting.choices or not isinstance(value.value, bool):
        return None
    if value.style:
        return None
    return _YAML_BOOLEAN_WORDS.get(value.text.strip().lower())


def _yaml_boolean_problem(spelled: str, value: Scalar, word: str) -> InputProblem:
    flag = "true" if value.value else "false"
    message = (
        f"`{spelled}: {value.text}` is unquoted: YAML reads the boolean {flag}, which written "
        f"into the engine's flags is `{flag}`, a value it refuses (on, off or auto); read here "
        f"as `{word}`: quote it"
    )
    return InputProblem(codes.INVALID_SETTING, value.span, message, Severity.WARNING)


def _deep_merge(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in extra.items():
        old = merged.get(key)
        both = isinstance(old, Mapping) and isinstance(value, Mapping)
        merged[key] = _deep_merge(old, value) if both else value  # type: ignore[arg-type]
    return merged


@dataclass(frozen=True)
class Engine:
    """An engine: its CLI as data plus the hooks that turn some settings into fields."""

    spec: EngineSpec
    hooks: Mapping[str, FieldHook] = field(default_factory=dict)
    args_env: tuple[str, ...] = ()  # env vars that hold extra argv (VLLM_ADDITIONAL_ARGS)
    positional_model: bool = False  # `vllm serve MODEL`
    extra_known: frozenset[str] = frozenset()
    # Pairs the engine refuses together (TGI: `max_input_tokens` and the legacy
    # `max_input_length`): (first, second, why).
    exclusive: tuple[tuple[str, str, str], ...] = ()

    def check_exclusive(self, dep: Deployment) -> None:
        for first, second, why in self.exclusive:
            if first in dep.settings and second in dep.settings:
                later = dep.settings[second]
                message = f"`{first}` and `{second}` are both set: {why}"
                problem = InputProblem(codes.INVALID_SETTING, later.span, message, Severity.ERROR)
                if problem not in dep.problems:
                    dep.problems.append(problem)

    @property
    def name(self) -> str:
        return self.spec.name

    def apply_args(self, dep: Deployment, tokens: list[Token]) -> None:
        """Flags in order; a repeated flag overrides the earlier one, as argparse/clap do."""
        parsed = parse_argv(self.spec, tokens)
        for token in parsed.unknown:
            if token.text.partition("=")[0] in self.extra_known:
                continue
            self._unknown(dep, token, Sourced(token.text, token.span, token.raw))
        for token, expanded in parsed.abbreviated:
            dep.problems.append(abbreviation_problem(self.spec, token, expanded))
        if self.positional_model and parsed.positionals:
            model = parsed.positionals[0]
            self.set(dep, self.spec.model_flag, model.text, model, spelled="model")
        version = dep.engine_version.value if dep.engine_version is not None else None
        for name, flag, value in parsed.options:
            spelled = flag.text.partition("=")[0]
            why = self.spec.absent_in(name, version) if version else None
            if why is not None:
                message = f"`{spelled}` is not a flag of {self.spec.name} {version}: {why}"
                dep.problems.append(
                    InputProblem(codes.UNKNOWN_FLAG, flag.span, message, Severity.ERROR)
                )
            if value is None:
                if self.spec.arity(name) in ("1", "+"):
                    message = f"`{spelled}` expects a value"
                    dep.problems.append(
                        InputProblem(codes.INVALID_SETTING, flag.span, message, Severity.ERROR)
                    )
                    continue
                setting = self.spec.settings.get(name)
                if setting is not None and "on" in setting.choices and name in self.hooks:
                    # A switch that newer releases give a value (llama.cpp `-fa`): the engine
                    # says what a bare one means in the deployment's release.
                    self.hooks[name](dep, name, Sourced(True, flag.span, spelled))
                    continue
                bare: Any = "on" if setting and "on" in setting.choices else True
                self.set(dep, name, bare, flag, spelled=spelled)
            else:
                self.set(dep, name, value.text, value, spelled=spelled)
        self._apply_dotted(dep, parsed.dotted)
        self.check_exclusive(dep)

    def _apply_dotted(
        self, dep: Deployment, dotted: list[tuple[str, str, Token, Token | None]]
    ) -> None:
        """`--hf-overrides.head_dim=1024` and its kin: the keys of one JSON option merged into
        the object it spells (over a whole `--hf-overrides '{...}'` given too), set once."""
        names = list(dict.fromkeys(name for name, _, _, _ in dotted))
        for name in names:
            pieces = [(path, value) for option, path, _, value in dotted if option == name]
            merged = dotted_json(pieces)
            given = dep.settings.get(name)
            if given is not None and isinstance(given.value, dict):
                merged = _deep_merge(given.value, merged)
            first = next(flag for option, _, flag, _ in dotted if option == name)
            self.set(dep, name, merged, first, spelled=first.text.partition(".")[0])

    def _unknown(self, dep: Deployment, token: Token, flag: Sourced[str]) -> None:
        """A KV501 per unknown flag; past a cap without the `did you mean`: each suggestion is a
        difflib search, and a hostile file of 20,000 unknown flags took 20 s."""
        dep.unknown_flags.append(flag)
        if len(dep.unknown_flags) <= SUGGEST_UNKNOWN_FLAGS:
            version = dep.engine_version.value if dep.engine_version is not None else None
            dep.problems.append(unknown_flag_problem(self.spec, token, version))
        else:
            spelled = token.text.partition("=")[0]
            message = f"unknown flag `{spelled}` for {self.spec.name}"
            dep.problems.append(
                InputProblem(codes.UNKNOWN_FLAG, token.span, message, Severity.ERROR)
            )

    def apply_env(self, dep: Deployment, env: Mapping[str, Token]) -> None:
        """Settings an engine reads from env vars (OLLAMA_*, LLAMA_ARG_*, MAX_TOTAL_TOKENS)."""
        for var, token in env.items():
            name = self.spec.env.get(var)
            if name is not None:
                self.set(dep, name, token.text, token, spelled=var)
        self.check_exclusive(dep)

    def apply_mapping(self, dep: Deployment, node: MappingNode) -> None:
        """A config file's keys (``vllm serve --config``, a plan's ``settings``)."""
        dotted: list[tuple[str, str, Token, Token | None]] = []
        for key, value in node.items:
            spelled = key.text
            name = self.spec.canonical("--" + spelled) or self.spec.env.get(spelled)
            option, _, path = spelled.partition(".")
            base = self.spec.canonical("--" + option) if name is None and path else None
            if base is not None and base in self.spec.dotted and isinstance(value, Scalar):
                # `hf-overrides.head_dim: 1024`: vLLM turns each key into `--key value`, and
                # reads a dotted one as one key of the JSON option.
                text = str(value.value) if not isinstance(value.value, bool) else value.text
                dotted.append((base, path, Token(spelled, key), Token(text, value)))
                continue
            negated = self.spec.negated("--" + spelled) if name is None else None
            if negated is not None and isinstance(value, Scalar) and value.value is True:
                # `no-enable-prefix-caching: true`: vLLM's config loader passes the key as the
                # flag `--no-enable-prefix-caching`, which turns the boolean off.
                self.set(dep, negated, False, Token(value.text, value), spelled=spelled)
                continue
            if negated is not None and isinstance(value, Scalar) and value.value is False:
                continue  # `no-x: false` is no flag at all: the loader drops a false boolean
            if name is None:
                name = self.spec.expand_abbreviation("--" + spelled)
                if name is not None:
                    problem = abbreviation_problem(self.spec, Token(spelled, key), name)
                    dep.problems.append(problem)
            if name is None:
                token = Token(spelled, key)
                self._unknown(dep, token, Sourced(spelled, key.span, key.raw))
                continue
            version = dep.engine_version.value if dep.engine_version is not None else None
            why = self.spec.absent_in(name, version) if version else None
            if why is not None:
                message = f"`{spelled}` is not a flag of {self.spec.name} {version}: {why}"
                dep.problems.append(
                    InputProblem(codes.UNKNOWN_FLAG, key.span, message, Severity.ERROR)
                )
            raw: Any
            if isinstance(value, Scalar):
                raw = value.value if value.value is not None else ""
                where = Token(value.text, value)
                word = _yaml_boolean_word(self.spec, name, value)
                if word is not None:
                    raw = word
                    dep.problems.append(_yaml_boolean_problem(spelled, value, word))
            else:
                raw = value.plain()
                if isinstance(value, Sequence) and name != "served-model-name":
                    raw = " ".join(str(v) for v in raw)
                elif isinstance(value, Sequence):
                    raw = str(raw[0]) if raw else ""
                where = Token(str(raw), None, fallback=value.span)
                self.set(
                    dep,
                    name,
                    raw,
                    where,
                    spelled=spelled,
                    raw_text=value.source.text[value.start : value.end],
                )
                continue
            self.set(dep, name, raw, where, spelled=spelled)
        self._apply_dotted(dep, dotted)

    def set(
        self,
        dep: Deployment,
        name: str,
        raw: Any,
        where: Token,
        *,
        spelled: str,
        raw_text: str | None = None,
    ) -> None:
        apply_setting(
            dep, self.spec, name, raw, where, spelled=spelled, raw_text=raw_text, hooks=self.hooks
        )
