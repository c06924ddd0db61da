"""The kvlint plan format (``kvlint: plan/v1``): a team's intent and claims about the KV cache.

Validated against ``schemas/plan.schema.json``, every schema error at its line and column.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kvlint import codes
from kvlint.deploy.carriers.base import Context
from kvlint.deploy.carriers.container import int_sourced
from kvlint.deploy.carriers.container import scalar_sourced
from kvlint.deployment import Claims
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.deployment import Workload
from kvlint.engines import ENGINES
from kvlint.finding import InputProblem
from kvlint.finding import Severity
from kvlint.lazy_re import lazy
from kvlint.source.nodes import Mapping
from kvlint.source.nodes import Node
from kvlint.source.nodes import Scalar
from kvlint.units import INT64_MAX
from kvlint.units import parse_human_int
from kvlint.units import parse_size

NAME = "plan"


def matches(root: Node) -> bool:
    return isinstance(root, Mapping) and root.get("kvlint") is not None


def extract(root: Node, ctx: Context) -> list[Deployment]:
    import kvlint_schemas  # type: ignore[import-not-found]  # installed name of schemas/

    from kvlint.source.schema import validate

    assert isinstance(root, Mapping)
    ctx.problems.extend(validate(root, kvlint_schemas.load("plan")))
    engine_node = root.scalar("engine")
    engine_name = engine_node.text if engine_node is not None else ""
    if engine_name not in ENGINES:
        return []  # the schema error already says which engines exist
    assert engine_node is not None
    engine = ENGINES[engine_name]
    label = root.text_of("name") or "plan"
    dep = Deployment(
        path=ctx.path,
        span=root.span,
        name=label,
        carrier=NAME,
        engine=Sourced(engine_name, engine_node.span, engine_node.raw),
    )
    dep.engine_version = scalar_sourced(root.get("engine_version"))
    dep.gpu = scalar_sourced(root.get("gpu"))
    gpus = root.scalar("gpus")
    if gpus is not None and isinstance(gpus.value, int) and not isinstance(gpus.value, bool):
        dep.gpu_count = int_sourced(gpus, ctx.problems, "`gpus`")
    dep.reserved_memory = _reserved(root.get("reserved_memory"), dep.problems)
    settings = root.mapping("settings")
    if settings is not None:
        engine.apply_mapping(dep, settings)
    model = scalar_sourced(root.get("model"))
    if model is not None:
        dep.model = model
        dep.settings.setdefault(engine.spec.model_flag, model)
    claims = root.mapping("claims")
    if claims is not None:
        dep.claims = _claims(claims, dep.problems)
    workload = root.mapping("workload")
    if workload is not None:
        dep.workload = read_workload(workload, dep.problems, "workload")
    return [dep]


_PERCENTILE = lazy(r"^(p[0-9]{1,2}(?:\.[0-9]+)?)_tokens$")


def read_workload(node: Mapping, problems: list[InputProblem], where: str) -> Workload | None:
    """A ``workload`` mapping (a plan's, or a config's for a path): its token counts, each a
    KV502 at its value when it is not a positive count; None when it states no length."""

    def tokens(key: str) -> Sourced[int] | None:
        value = node.get(key)
        if not isinstance(value, Scalar) or value.value is None or isinstance(value.value, bool):
            return None
        try:
            count = parse_human_int(
                value.value if isinstance(value.value, int) else str(value.value)
            )
        except ValueError as exc:
            message = f"`{where}.{key}`: {exc}"
            problems.append(InputProblem("KV502", value.span, message, Severity.ERROR))
            return None
        if not 0 < count <= INT64_MAX:
            return None  # the schema's minimum (KV904) says so
        return Sourced(count, value.span, value.raw)

    percentiles = []
    for key, _ in node:
        match = _PERCENTILE.match(key.text)
        if match is not None:
            value = tokens(key.text)
            if value is not None:
                percentiles.append((match.group(1), value))
    workload = Workload(tokens("prompt_tokens"), tokens("output_tokens"), tuple(percentiles))
    return workload if workload.lengths() else None


def _reserved(node: Node | None, problems: list[InputProblem]) -> Sourced[int] | None:
    """``reserved_memory: 16 GB``: bytes other residents hold (the schema checks the form)."""
    if not isinstance(node, Scalar) or node.value is None or isinstance(node.value, bool):
        return None
    try:
        size = parse_size(node.value if isinstance(node.value, (int, float)) else str(node.value))
    except ValueError as exc:
        message = f"`reserved_memory`: {exc}"
        problems.append(InputProblem(codes.INVALID_SETTING, node.span, message, Severity.ERROR))
        return None
    return Sourced(size, node.span, node.raw)


class _SchemaReported(ValueError):
    """A claim the plan schema refuses (a count below 1): not read, not reported twice."""


def _claims(node: Mapping, problems: list[InputProblem]) -> Claims:
    def read(key: str, parse: Callable[[Any], Any]) -> Sourced[Any] | None:
        value = node.get(key)
        if not isinstance(value, Scalar) or value.value is None:
            return None
        try:
            parsed = parse(value.value)
            if isinstance(parsed, int) and abs(parsed) > INT64_MAX:  # keeps the arithmetic finite
                raise ValueError(f"out of range: a number of {len(str(parsed))} digits")
        except _SchemaReported:  # below the schema's minimum: its KV904 points at it
            return None
        except (ValueError, TypeError) as exc:
            message = f"`claims.{key}`: {exc}"
            problems.append(
                InputProblem(codes.INVALID_SETTING, value.span, message, Severity.ERROR)
            )
            return None
        return Sourced(parsed, value.span, value.raw)

    def count(text: Any) -> int:
        if isinstance(text, bool) or not isinstance(text, int):
            raise ValueError(f"expected a whole number, got {text!r}")
        return text

    def tokens(text: Any) -> int:
        value = parse_human_int(text if isinstance(text, int) else str(text))
        if value < 1:  # a context of 0 tokens would divide by zero downstream
            if isinstance(text, int):
                raise _SchemaReported
            raise ValueError(f"expected a positive token count, got {text!r}")
        return value

    def positive(text: Any) -> int:
        value = count(text)
        if value < 1:
            raise _SchemaReported
        return value

    return Claims(
        concurrency=read("concurrency", positive),
        context=read("context", tokens),
        kv_per_token=read("kv_per_token", parse_size),
        kv_per_sequence=read("kv_per_sequence", parse_size),
        kv_pool_tokens=read("kv_pool_tokens", tokens),
        kv_cache_dtype=read("kv_cache_dtype", str),
        gpus_needed=read("gpus_needed", positive),
    )
