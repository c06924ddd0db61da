"""The house's floors, kept by its imports: records know nothing above them, the arithmetic
is pure, rules read records only (never the readers, the engines' homes or a printer), and no
module imports itself back through others.

Every import is read from the source (module level, inside functions and under
TYPE_CHECKING alike): a lazy import is still a dependency of the layer it sits in.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# The ground floor: records (data and the small pure helpers that describe them). The Sizing a
# rule receives sits one floor up: it holds first principles (kvlint.arith.kv) beside them.
RECORDS = frozenset(
    {
        "kvlint.codes",
        "kvlint.deployment",
        "kvlint.errors",
        "kvlint.estimate",
        "kvlint.finding",
        "kvlint.gpus",
        "kvlint.lazy_re",  # not a record: the standard library's patterns, compiled on first use
        "kvlint.model.spec",
        "kvlint.settled",
        "kvlint.storage",
        "kvlint.units",
        "kvlint.versions",
    }
)


def modules() -> dict[str, Path]:
    """Every module of the package and of the built-in rules, by import name (rules/ is
    installed as kvlint_rules)."""
    found: dict[str, Path] = {}
    for root, package in ((REPO / "kvlint", "kvlint"), (REPO / "rules", "kvlint_rules")):
        for path in sorted(root.rglob("*.py")):
            parts = [package, *path.relative_to(root).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = modules()


def imports(name: str, *, module_level_only: bool = False) -> Iterator[str]:
    """The kvlint modules ``name`` imports (``from kvlint.x import y`` counts ``kvlint.x.y``
    when that is a module, else ``kvlint.x``)."""
    path = MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    nodes = tree.body if module_level_only else list(ast.walk(tree))
    for node in nodes:
        if (
            module_level_only
            and isinstance(node, ast.If)
            and "TYPE_CHECKING" in ast.unparse(node.test)
        ):
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield from _known(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                yield from _known(f"{base}.{alias.name}") or _known(base)


def _known(name: str) -> list[str]:
    return [name] if name in MODULES else []


def _under(name: str, *prefixes: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_records_import_only_records(name: str) -> None:
    above = sorted(set(imports(name)) - RECORDS)
    assert above == [], f"{name} (a record) imports {above}"


@pytest.mark.parametrize("name", sorted(n for n in MODULES if _under(n, "kvlint.arith")))
def test_the_arithmetic_is_pure(name: str) -> None:
    allowed = RECORDS | {n for n in MODULES if _under(n, "kvlint.arith")}
    assert sorted(set(imports(name)) - allowed) == []


@pytest.mark.parametrize("name", sorted(n for n in MODULES if _under(n, "kvlint_rules")))
def test_rules_read_records_only(name: str) -> None:
    # Not the readers (deploy, source), the engines' homes, the model resolver, the linter or
    # a printer: what a rule needs reaches it as a Deployment, its Sizing and their records.
    allowed = (
        RECORDS
        | {n for n in MODULES if _under(n, "kvlint_rules", "kvlint.arith")}
        | {"kvlint.rule", "kvlint.options", "kvlint.sizing"}
    )
    assert sorted(set(imports(name)) - allowed) == []


def test_no_import_cycles() -> None:
    graph = {name: set(imports(name, module_level_only=True)) for name in MODULES}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(name: str, trail: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                cycles.append([*trail[trail.index(target) :], target])
            elif target not in state:
                visit(target, [*trail, target])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    # A package's __init__ that imports its own modules is a cycle by this reading; there is
    # none in kvlint, so any cycle found is a real one.
    assert cycles == []


# What a rule must not read: a Deployment's raw flags and environment (the settle step reads
# them once, per engine), and which engine it is (an engine's difference is an EngineFacts field).
RAW_READS = frozenset({"settings", "env"})


@pytest.mark.parametrize("name", sorted(n for n in MODULES if _under(n, "kvlint_rules")))
def test_rules_read_no_raw_flags_and_ask_no_engine_name(name: str) -> None:
    from kvlint.engines import HOMES

    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    raw = sorted(
        f"line {node.lineno}: .{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in RAW_READS
    )
    asked = sorted(
        f"line {node.lineno}: {ast.unparse(node)}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare)
        for operand in (node.left, *node.comparators)
        if isinstance(operand, ast.Constant) and operand.value in HOMES
    )
    assert raw == [] and asked == [], f"{name} reads {raw + asked}"
