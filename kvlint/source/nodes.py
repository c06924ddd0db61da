"""The position-carrying tree every carrier reads: Scalar, Mapping, Sequence, each with its Span."""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

from kvlint.finding import Span
from kvlint.lazy_re import lazy
from kvlint.source.text import SourceText

ScalarValue = str | int | float | bool | None

_SIMPLE_KEY = lazy(r"^[A-Za-z_][A-Za-z0-9_-]*$")


# Remembered: a repository's files repeat the same paths (`$.spec.template.spec.containers[0]`),
# and the key test is a pattern match per key of every file.
@lru_cache(maxsize=4096)
def child_path(parent: str, key: str | int) -> str:
    """JSONPath-style key path: ``$.spec.containers[0].args[4]``, ``$.limits["nvidia.com/gpu"]``."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    if _SIMPLE_KEY.match(key):
        return f"{parent}.{key}"
    escaped = key.replace("\\", "\\\\").replace('"', '\\"')
    return f'{parent}["{escaped}"]'


class Node:
    """A YAML/JSON node: where it starts and ends in the file (absolute character offsets)."""

    __slots__ = ("end", "path", "source", "start")

    def __init__(self, source: SourceText, path: str, start: int, end: int) -> None:
        self.source = source
        self.path = path
        self.start = start
        self.end = end

    @property
    def span(self) -> Span:
        return self.source.span(self.start, self.end, self.path)

    @property
    def line(self) -> int:
        return self.source.position(self.start)[0]

    def plain(self) -> object:
        """The node as plain Python data (dicts, lists, scalars)."""
        raise NotImplementedError


class Scalar(Node):
    """A scalar: its resolved value, its text as parsed, and its style ('', '"', "'", '|', '>')."""

    __slots__ = ("style", "tag", "text", "value")

    def __init__(
        self,
        source: SourceText,
        path: str,
        start: int,
        end: int,
        value: ScalarValue,
        text: str,
        style: str,
        tag: str,
    ) -> None:
        # Node's four fields set here, not through super().__init__: one call fewer for each
        # of the tens of thousands of nodes a repository's files hold.
        self.source = source
        self.path = path
        self.start = start
        self.end = end
        self.value = value
        self.text = text
        self.style = style
        self.tag = tag

    @property
    def raw(self) -> str:
        """The characters of the scalar as written in the file (quotes included)."""
        return self.source.text[self.start : self.end]

    def plain(self) -> ScalarValue:
        return self.value

    def __repr__(self) -> str:
        return f"Scalar({self.value!r} at {self.path})"


class Mapping(Node):
    """A mapping with scalar keys, in file order (duplicates already reported and dropped)."""

    __slots__ = ("items",)

    def __init__(
        self,
        source: SourceText,
        path: str,
        start: int,
        end: int,
        items: list[tuple[Scalar, Node]],
    ) -> None:
        self.source = source  # Node's fields, as Scalar sets them
        self.path = path
        self.start = start
        self.end = end
        self.items = items

    def get(self, key: str) -> Node | None:
        for k, v in self.items:
            if k.text == key:
                return v
        return None

    def key_node(self, key: str) -> Scalar | None:
        for k, _ in self.items:
            if k.text == key:
                return k
        return None

    def keys(self) -> list[str]:
        return [k.text for k, _ in self.items]

    def mapping(self, key: str) -> Mapping | None:
        node = self.get(key)
        return node if isinstance(node, Mapping) else None

    def sequence(self, key: str) -> Sequence | None:
        node = self.get(key)
        return node if isinstance(node, Sequence) else None

    def scalar(self, key: str) -> Scalar | None:
        node = self.get(key)
        return node if isinstance(node, Scalar) else None

    def text_of(self, key: str) -> str | None:
        """The scalar at ``key`` as text, or None when absent, null or not a scalar."""
        node = self.scalar(key)
        if node is None or node.value is None:
            return None
        return node.text

    def dig(self, *keys: str) -> Node | None:
        node: Node | None = self
        for key in keys:
            if not isinstance(node, Mapping):
                return None
            node = node.get(key)
        return node

    def plain(self) -> dict[str, object]:
        return {k.text: v.plain() for k, v in self.items}

    def __iter__(self) -> Iterator[tuple[Scalar, Node]]:
        return iter(self.items)

    def __repr__(self) -> str:
        return f"Mapping({self.keys()} at {self.path})"


class Sequence(Node):
    __slots__ = ("items",)

    def __init__(
        self, source: SourceText, path: str, start: int, end: int, items: list[Node]
    ) -> None:
        self.source = source  # Node's fields, as Scalar sets them
        self.path = path
        self.start = start
        self.end = end
        self.items = items

    def plain(self) -> list[object]:
        return [item.plain() for item in self.items]

    def __iter__(self) -> Iterator[Node]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __repr__(self) -> str:
        return f"Sequence({len(self.items)} items at {self.path})"
