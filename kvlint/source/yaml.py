"""YAML and JSON to position-carrying nodes, safely: no tag ever builds a Python object.

ruamel.yaml only *composes* here (a node graph with marks); values are resolved by our own
``_convert``, which knows nothing but str, int, float, bool and null. Each ``---`` document is
composed on its own, so a broken document (a conflict marker, a template placeholder, a TAB) is
one KV901 problem while the other documents of the file are still read. Aliases are expanded with
a budget (a "billion laughs" file is refused, not expanded) and nesting has a depth limit.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any
from typing import NamedTuple

from kvlint.finding import InputProblem
from kvlint.finding import Span
from kvlint.lazy_re import lazy
from kvlint.source.nodes import Mapping
from kvlint.source.nodes import Node
from kvlint.source.nodes import Scalar
from kvlint.source.nodes import ScalarValue
from kvlint.source.nodes import Sequence
from kvlint.source.nodes import child_path
from kvlint.source.text import SourceText
from kvlint.source.text import conflict_markers
from kvlint.source.text import find_placeholder
from kvlint.source.text import unreadable

MAX_DEPTH = 200
# Nodes an alias may add beyond the file's own: generous for compose anchors (x-common: &c),
# far below what a billion-laughs document needs.
ALIAS_BUDGET = 100_000
# Characters aliases may repeat: a 100 kB anchor aliased 10,000 times is only 10,000 nodes, but
# a flag value joined from it is 1 GB (the "quadratic blowup").
ALIAS_TEXT_BUDGET = 16 * 2**20

# Composed nodes cost about 500 bytes each: a 15 MiB file of one million `k: v` lines took more
# than 1 GiB and 24 s, 390,000 lines 640 MB and 15 s. The largest real deployment file seen holds
# about 300 keys and items; a bundle of Kubernetes CRDs tens of thousands.
MAX_ENTRIES = 100_000

_DOC_START_RE = lazy(r"^---(?=[ \t]|$)", re.MULTILINE)
_PLACEHOLDER_RE = lazy(r"\{\{[^}\n]*\}\}")
_ANCHOR_RE = lazy(r"&([^\s,\[\]{}]+)")
_TAG = "tag:yaml.org,2002:"


@dataclass(frozen=True)
class Document:
    """One YAML document of a file: its root node and its 0-based index in the file."""

    root: Node
    index: int
    # Tags that would build a Python object (`!!python/name:...`). kvlint builds none; they
    # are reported only where the document is a deployment (no engine or Kubernetes reads
    # them), not on an mkdocs.yml, where they are how Material's extensions are configured.
    object_tags: tuple[InputProblem, ...] = ()

    @property
    def span(self) -> Span:
        return self.root.source.span(self.root.start, key="$")


class _Refused(Exception):
    """Aborts converting one document; carries the problem to report."""

    def __init__(self, problem: InputProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


# The C composer (PyYAML over libyaml) recurses in C with no depth check, so a file that could
# nest deeper than this goes to ruamel.yaml, whose Python recursion ends in a RecursionError.
C_DEPTH_LIMIT = 2000
# Anchored at line starts: unanchored, every offset of a long line was a start to try.
_LONG_LINE_RE = lazy(r"^[^\n]{" + str(C_DEPTH_LIMIT // 2) + "}", re.MULTILINE)


class _Backend(NamedTuple):
    """A composer and the exceptions it raises."""

    compose: Any
    marked_error: type[Exception]
    error: type[Exception]


@cache
def _ruamel() -> _Backend:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError
    from ruamel.yaml.error import YAMLError

    return _Backend(YAML(typ="safe", pure=True).compose, MarkedYAMLError, YAMLError)


@cache
def _libyaml() -> _Backend | None:
    """PyYAML's libyaml composer when installed: ~30x faster than pure-Python composing."""
    from kvlint.source.pyyaml import import_yaml

    try:
        yaml = import_yaml()
    except ImportError:
        return None
    loader = getattr(yaml, "CSafeLoader", None)
    if loader is None:
        return None
    composer = _remembering(loader)

    def compose(text: str) -> Any:
        return yaml.compose(text, Loader=composer)

    return _Backend(compose, yaml.MarkedYAMLError, yaml.YAMLError)


# Tags remembered by the composer below: a run's keys and small values repeat (`name`, `image`,
# `- name: HF_HOME`); a file of unique scalars empties the memory when it is full.
_TAGS_KEPT = 4096
_NO_PATHS: dict[object, object] = {}  # no path resolver is ever added: nothing to look up


def _remembering(loader: Any) -> Any:
    """``loader`` (libyaml's) with its resolver's answers remembered.

    libyaml's composer asks PyYAML's Python resolver for the tag of every node, and tells it of
    every step down and up the tree (for path resolvers, which kvlint never adds): three Python
    calls per node, a sixth of reading a manifest. The tag depends only on the node's kind, its
    text and whether it was plain, so it is looked up once per text; the steps go to builtins
    that do nothing (``{}.get(parent, index)``, ``{}.clear()``), as PyYAML's own methods do when
    no path resolver is set. A loader that has path resolvers is used as it is."""
    if loader.yaml_path_resolvers:
        return loader
    tags: dict[tuple[Any, Any, Any], str] = {}
    resolve = loader.resolve

    def remembered(self: Any, kind: Any, value: Any, implicit: Any) -> str:
        key = (kind, value, implicit)
        tag = tags.get(key)
        if tag is None:
            tag = resolve(self, kind, value, implicit)
            if len(tags) >= _TAGS_KEPT:
                tags.clear()
            tags[key] = tag
        return tag

    namespace = {
        "resolve": remembered,
        "descend_resolver": _NO_PATHS.get,
        "ascend_resolver": _NO_PATHS.clear,
    }
    return type("RememberingLoader", (loader,), namespace)


# Each run of blanks after a line's content, whole (greedy, nothing after it to backtrack
# into: a pattern ending in a lookahead tried every split of a long run, 80 KB: seconds).
_BLANKS_AFTER_CONTENT_RE = lazy(r"(?<=\S)[ \t]+")


def _spaces_for_trailing_tabs(chunk: str) -> str:
    """``chunk`` with each run of blanks holding a TAB between a line's content and its end or
    its comment replaced by as many spaces (columns kept)."""

    def spaces(match: re.Match[str]) -> str:
        run = match.group()
        end = match.end()
        if "\t" in run and (
            end == len(chunk) or chunk[end] in "#\n" or chunk[end : end + 2] == "\r\n"
        ):
            return " " * len(run)
        return run

    return _BLANKS_AFTER_CONTENT_RE.sub(spaces, chunk)


def _backend(chunk: str) -> _Backend:
    fast = _libyaml()
    if fast is None or "\t" in chunk:
        # libyaml lets a TAB after a value through; ruamel.yaml reports it, as most tools do.
        return _ruamel()
    # Nesting is bounded by the flow brackets plus the longest line (block indentation and
    # `- - -` chains): cheap to count, and generous for real manifests.
    if chunk.count("[") + chunk.count("{") > C_DEPTH_LIMIT // 2 or _LONG_LINE_RE.search(chunk):
        return _ruamel()
    return fast


def parse_embedded(scalar: Scalar) -> tuple[list[Document], list[InputProblem]]:
    """YAML held in a literal block scalar (a RayService ``serveConfigV2: |``), with file spans.

    Everything outside the block's lines is blanked (same length, same newlines), so the inner
    YAML keeps its indentation and every node's offset is its offset in the file. Other scalar
    styles fold or escape characters; their content is not positioned and yields nothing.
    """
    if scalar.style != "|":
        return [], []
    source = scalar.source
    content_start = source.text.find("\n", scalar.start) + 1
    if content_start <= 0 or content_start >= scalar.end:
        return [], []
    masked = _blank(source.text[:content_start]) + source.text[content_start : scalar.end]
    masked += _blank(source.text[scalar.end :])
    return parse_documents(source, text=masked)


def _blank(text: str) -> str:
    return re.sub(r"[^\n]", " ", text)


class Head(NamedTuple):
    """What a loader may leave a document out by, read from the composed graph before any of
    our nodes is built: its top-level ``kind`` and ``apiVersion`` and the keys of its ``data``."""

    kind: str | None
    api_version: str | None
    data_keys: tuple[str, ...]


def parse_documents(
    source: SourceText,
    *,
    json: bool = False,
    text: str | None = None,
    skip: Callable[[Head], bool] | None = None,
) -> tuple[list[Document], list[InputProblem]]:
    """Every document of ``source`` as nodes, plus the problems found (never raises).

    ``text`` (same length and lines as the source) is what gets parsed, when given. A document
    ``skip`` says yes to is composed (so its syntax errors, conflict markers and placeholders
    are still reported) but not converted, unless converting it would report something (a
    duplicate key, an alias, a tag, a merge key): the result is the same, found sooner.
    """
    documents: list[Document] = []
    problems: list[InputProblem] = []
    body = source.text if text is None else text
    entries = _entries(body)
    if entries > MAX_ENTRIES:
        message = (
            f"about {entries:,} keys and items, more than any deployment file holds "
            f"(the limit is {MAX_ENTRIES:,}): not read"
        )
        return [], [unreadable(source.span(0), message)]
    for index, (start, end) in enumerate(_chunks(body, json=json)):
        chunk = body[start:end]
        if json:
            # JSON allows TAB as whitespace and a raw TAB cannot sit inside a JSON string, so
            # spaces keep every column and let the YAML composer read the file.
            chunk = chunk.replace("\t", " ")
        elif "\t" in chunk:
            # A TAB after a line's content is separation whitespace in YAML 1.2 (s-white), and
            # libyaml / go-yaml (kubectl, Helm) read it; only PyYAML and ruamel.yaml refuse it.
            # Spaces of the same width keep every column. Indentation TABs stay an error.
            chunk = _spaces_for_trailing_tabs(chunk)
        markers = conflict_markers(body, start, end)
        if markers:
            problems.append(_conflict_problem(source, markers))
            continue
        root, problem = _compose(source, chunk, start, what="JSON" if json else "YAML")
        if problem is not None:
            problems.append(problem)
            continue
        if root is None:
            continue
        if skip is not None:
            head = _head(root)
            if head is not None and skip(head) and _converts_quietly(chunk, root):
                continue
        # ruamel.yaml tags plain scalars by YAML 1.2: they are tagged again as PyYAML does.
        retag = "json" if json else "" if _backend(chunk) is _libyaml() else "yaml11"
        converter = _Converter(source, start, retag=retag, anchors="&" in chunk)
        try:
            node = converter.convert(root, "$", 0)
        except _Refused as refused:
            problems.append(refused.problem)
            continue
        problems.extend(converter.problems)
        documents.append(Document(node, index, tuple(converter.object_tags)))
    return documents, problems


def _scalar_text(node: Any) -> str | None:
    return str(node.value) if type(node).__name__ == "ScalarNode" else None


def _head(root: Any) -> Head | None:
    """The document's kind, apiVersion and data keys, if it is a mapping."""
    if type(root).__name__ != "MappingNode":
        return None
    kind = api_version = None
    data_keys: tuple[str, ...] = ()
    for key, value in root.value:
        name = _scalar_text(key)
        if name == "kind":
            kind = _scalar_text(value)
        elif name == "apiVersion":
            api_version = _scalar_text(value)
        elif name == "data" and type(value).__name__ == "MappingNode":
            data_keys = tuple(str(k.value) for k, _ in value.value)
    return Head(kind, api_version, data_keys)


# Text that makes the converter report a problem or keep a template's value: a document
# holding any of it is converted whatever its kind.
_CONVERTER_MATTERS = ("{{", "python/", "<<")


def _converts_quietly(chunk: str, root: Any) -> bool:
    """Whether converting ``root`` would report nothing: no placeholder, Python tag or merge
    key in its text; no alias, non-scalar key, duplicate key or nesting past MAX_DEPTH."""
    if any(marker in chunk for marker in _CONVERTER_MATTERS):
        return False
    seen: set[int] = set()
    stack: list[tuple[Any, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH or id(node) in seen:
            return False
        seen.add(id(node))
        kind = type(node).__name__
        if kind == "MappingNode":
            keys: set[str] = set()
            for key, value in node.value:
                name = _scalar_text(key)
                if name is None or name in keys:
                    return False
                keys.add(name)
                stack.append((value, depth + 1))
        elif kind == "SequenceNode":
            stack.extend((item, depth + 1) for item in node.value)
    return True


def _entries(text: str) -> int:
    """An upper estimate of the keys, items and documents in ``text``, counted without parsing.

    Every node but the first of a document follows an indicator and whitespace: a key's ``:``,
    an item's ``-`` (``- a`` and ``-\n  a`` alike), a flow ``,``, an explicit key's ``?``; a
    document follows ``---`` (counted by its ``-``). The text is newline-normalised."""
    count = text.count(",")
    for indicator in ":-?":
        count += text.count(indicator + " ") + text.count(indicator + "\n")
        count += text.count(indicator + "\t")
    return count + (text[-1:] in ":-?")


def _chunks(text: str, *, json: bool) -> list[tuple[int, int]]:
    """(start, end) offsets of each ``---`` document; the marker line stays with its document."""
    if json:
        return [(0, len(text))]
    starts = [m.start() for m in _DOC_START_RE.finditer(text)]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    ends = [*starts[1:], len(text)]
    return list(zip(starts, ends, strict=True))


def _conflict_problem(source: SourceText, markers: list[int]) -> InputProblem:
    first = markers[0]
    line, _ = source.position(first)
    marker = source.line_text(line).strip()
    others = ", ".join(str(source.position(m)[0]) for m in markers[1:])
    plural = "s" if len(markers) > 2 else ""
    where = f" (more markers at line{plural} {others})" if others else ""
    message = f"unresolved git merge-conflict marker `{marker}`{where}: resolve the conflict"
    return unreadable(source.span(first), message)


def _compose(
    source: SourceText, chunk: str, offset: int, *, what: str = "YAML"
) -> tuple[Any, InputProblem | None]:
    """The chunk's node graph, or the problem reading it. The graph's ``pyyaml`` attribute is
    not set: ``_backend(chunk) is _ruamel()`` says which resolver tagged it."""
    backend = _backend(chunk)
    try:
        return backend.compose(chunk), None
    except backend.marked_error as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        position = _offset(source, offset, mark) if mark is not None else offset
        message = _yaml_message(source, exc, position, what)
        return None, unreadable(source.span(position), message)
    except backend.error as exc:
        return None, _reader_problem(source, chunk, offset, exc, what)
    except RecursionError:
        message = "YAML nesting is too deep to read (more than a few hundred levels)"
        return None, unreadable(source.span(offset), message)


def _reader_problem(
    source: SourceText, chunk: str, offset: int, exc: Exception, what: str
) -> InputProblem:
    """An error with no mark (a reader error: a control character YAML refuses) at the
    character it names, not at the document's start."""
    character = getattr(exc, "character", None)
    reason = getattr(exc, "reason", None)
    if isinstance(character, int):
        character = chr(character)
    if isinstance(character, str) and character and isinstance(reason, str):
        found = chunk.find(character)
        at = offset + found if found >= 0 else offset
        message = f"invalid {what}: {reason} (character #x{ord(character):04x})"
        return unreadable(source.span(at), message)
    return unreadable(source.span(offset), f"invalid {what}: {exc}")


def _offset(source: SourceText, chunk_offset: int, mark: Any) -> int:
    """A mark's absolute offset, from its line and column (libyaml's ``index`` counts bytes)."""
    first_line = source.position(chunk_offset)[0] - 1
    line = min(first_line + int(mark.line), len(source.line_starts) - 1)
    return min(source.line_starts[line] + int(mark.column), len(source.text))


def _yaml_message(source: SourceText, exc: Any, position: int, what: str = "YAML") -> str:
    line, column = source.position(position)
    text = source.line_text(line)
    char = text[column - 1] if column - 1 < len(text) else ""
    if char == "\t" or "'\\t'" in str(exc.problem):
        return "a TAB character where YAML allows only spaces: replace it with spaces"
    placeholder = find_placeholder(text)
    if placeholder:
        found = text[placeholder[0] : placeholder[1]]
        return f"unfilled template placeholder `{found}`: render the template first"
    problem = (getattr(exc, "problem", None) or "").strip()
    context = (getattr(exc, "context", None) or "").strip()
    detail = f"{context}: {problem}" if context and problem else (problem or context or str(exc))
    return f"invalid {what}: {detail}"


_PROPERTIES = frozenset("&!")  # what a node's anchor or tag starts with


class _Converter:
    """Turns a composed ruamel node graph into our nodes, checking what YAML lets through."""

    def __init__(
        self, source: SourceText, offset: int, *, retag: str = "", anchors: bool = True
    ) -> None:
        self.source = source
        self.offset = offset
        self.retag = retag  # "": the composer's tags are PyYAML's; "yaml11" / "json": redo them
        self.first_line = source.position(offset)[0] - 1
        self.starts = source.line_starts
        self.last = len(source.line_starts) - 1
        self.length = len(source.text)
        # A document with no `&` has no anchor, so no alias (the composer refuses `*x` with no
        # anchor): no node can be met twice, and no node's identity needs remembering.
        self.anchors = anchors
        self.budget = ALIAS_BUDGET
        self.text_budget = ALIAS_TEXT_BUDGET
        self.seen: set[int] = set()
        self.problems: list[InputProblem] = []
        self.object_tags: list[InputProblem] = []

    def _bounds(self, node: Any) -> tuple[int, int]:
        # Offsets from line and column: libyaml's `index` counts bytes, not characters. Called
        # for every node: comparisons, not min() and max() (a tenth of the conversion).
        starts, last = self.starts, self.last
        mark = node.start_mark
        line = self.first_line + mark.line
        start = starts[line if line < last else last] + mark.column
        mark = node.end_mark
        line = self.first_line + mark.line
        end = starts[line if line < last else last] + mark.column
        if end > self.length:
            end = self.length
        return start, (end if end > start else start)

    def convert(self, node: Any, path: str, depth: int) -> Node:
        start, end = self._bounds(node)
        if depth > MAX_DEPTH:
            message = f"nesting deeper than {MAX_DEPTH} levels: not a deployment file"
            raise _Refused(unreadable(self.source.span(start), message))
        if self.anchors:
            self._charge_alias(node, start, end)
        tag = str(node.tag)
        if "python/" in tag:
            message = f"tag `{_short_tag(tag)}` would build a Python object: refused"
            self.object_tags.append(unreadable(self.source.span(start), message))
        kind = type(node).__name__
        if kind == "MappingNode":
            # Matched in place (a slice copied every mapping's text, nested ones again and
            # again), and only where the text opens like one.
            text = self.source.text
            if text.startswith("{{", start) and _PLACEHOLDER_RE.fullmatch(text, start, end):
                # `max-model-len: {{ .Values.len }}` is a mapping to YAML, a template's value to
                # its author: reported once (KV901), then kept as the text it stands for, so the
                # setting reads as set at run time rather than as a wrong-typed `{}`.
                return self._placeholder(path, start, end)
            return self._mapping(node, path, depth, start, end)
        if kind == "SequenceNode":
            items: list[Node] = []
            after = start
            for i, item in enumerate(node.value):
                converted = self._child(item, child_path(path, i), depth + 1, after, end)
                items.append(converted)
                after = converted.end
            return Sequence(self.source, path, start, end, items)
        text = str(node.value)
        style = node.style or ""
        # The value itself starts after its anchor and tag (`&seqs !!int 512`): a fix replaces
        # the value and keeps them.
        tagged = False
        if self.source.text[start : start + 1] in _PROPERTIES:
            start, tagged = self._value_start(start, end)
        if style:
            return Scalar(self.source, path, start, end, text, text, style, tag)
        if self.retag and not tagged:
            tag = implicit_tag(text, json=self.retag == "json")
        return Scalar(self.source, path, start, end, _resolve(tag, text), text, style, tag)

    def _charge_alias(self, node: Any, start: int, end: int) -> None:
        """An alias (a node met before) charged against the budget, so expansion cannot
        explode; a node met for the first time remembered."""
        if id(node) not in self.seen:
            self.seen.add(id(node))
            return
        self.budget -= 1
        self.text_budget -= end - start
        if self.budget < 0 or self.text_budget < 0:
            message = (
                "aliases expand too far (a YAML 'billion laughs' or quadratic-blowup "
                "bomb?): refused"
            )
            raise _Refused(unreadable(self.source.span(start), message))

    def _child(self, node: Any, path: str, depth: int, after: int, end: int) -> Node:
        """A mapping value or sequence item. An alias of a scalar (`*seqs`) is placed where the
        alias is written, not at its anchor: a finding on this use points here, and a fix
        replaces the alias in this place only, never the anchored value every use shares."""
        aliased = self.anchors and id(node) in self.seen
        converted = self.convert(node, path, depth)
        if not aliased or not isinstance(converted, Scalar):
            return converted
        anchor = _ANCHOR_RE.match(self.source.text, self._bounds(node)[0])
        if anchor is None:
            return converted
        token = "*" + anchor.group(1)
        found = self.source.text.find(token, after, end)
        if found < 0:
            return converted
        return Scalar(
            self.source,
            path,
            found,
            found + len(token),
            converted.value,
            converted.text,
            converted.style,  # a fix writes the value as the anchored one is written
            converted.tag,
        )

    def _value_start(self, start: int, end: int) -> tuple[int, bool]:
        """Where a scalar's value starts after its properties, and whether a tag is written."""
        text = self.source.text
        tagged = False
        at = start
        while at < end and text[at] in "&!":
            tagged = tagged or text[at] == "!"
            while at < end and not text[at].isspace():
                at += 1
            while at < end and text[at].isspace():
                at += 1
        return (at if at < end else start), tagged  # an empty value: the properties' place

    def _mapping(self, node: Any, path: str, depth: int, start: int, end: int) -> Mapping:
        items: list[tuple[Scalar, Node]] = []
        index: dict[str, int] = {}
        merged: list[Mapping] = []
        for key_node, value_node in node.value:
            if str(key_node.tag) == _MERGE:
                merged.extend(self._merge_sources(value_node, path, depth))
                continue
            if type(key_node).__name__ != "ScalarNode":
                self.problems.append(self._bad_key(key_node))
                continue
            key = self.convert(key_node, path, depth + 1)
            assert isinstance(key, Scalar)
            value = self._child(value_node, child_path(path, key.text), depth + 1, key.end, end)
            if key.text in index:
                first = items[index[key.text]][0]
                message = (
                    f"duplicate key `{key.text}` (first at line {first.line}); "
                    "the last one wins here, other tools may disagree"
                )
                self.problems.append(unreadable(key.span, message))
                items[index[key.text]] = (key, value)
            else:
                index[key.text] = len(items)
                items.append((key, value))
        # YAML merge keys: explicit keys win, then earlier merged mappings over later ones.
        for source_map in merged:
            for key, value in source_map.items:
                if key.text not in index:
                    index[key.text] = len(items)
                    items.append((key, value))
        return Mapping(self.source, path, start, end, items)

    def _merge_sources(self, node: Any, path: str, depth: int) -> list[Mapping]:
        converted = self.convert(node, path, depth + 1)
        candidates = converted.items if isinstance(converted, Sequence) else [converted]
        maps = [c for c in candidates if isinstance(c, Mapping)]
        if len(maps) != len(candidates):
            message = "a merge key `<<` must point at a mapping or a list of mappings"
            self.problems.append(unreadable(converted.span, message))
        return maps

    def _placeholder(self, path: str, start: int, end: int) -> Scalar:
        text = self.source.text[start:end]
        self.problems.append(unreadable(self.source.span(start), _placeholder_message(text)))
        return Scalar(self.source, path, start, end, text, text, "", _TAG + "str")

    def _bad_key(self, key_node: Any) -> InputProblem:
        start, end = self._bounds(key_node)
        text = self.source.text[start:end]
        line, _ = self.source.position(start)
        line_start = self.source.line_starts[line - 1]
        line_text = self.source.line_text(line)
        placeholder = find_placeholder(line_text)
        if placeholder and "{" in text:
            message = _placeholder_message(line_text[placeholder[0] : placeholder[1]])
            return unreadable(self.source.span(line_start + placeholder[0]), message)
        message = "a mapping key must be a scalar (this one is a mapping or a list)"
        return unreadable(self.source.span(start), message)


def _placeholder_message(placeholder: str) -> str:
    return (
        f"unfilled template placeholder `{placeholder}`: "
        "render the template (or quote the value) first"
    )


def _short_tag(tag: str) -> str:
    return "!!" + tag[len(_TAG) :] if tag.startswith(_TAG) else tag


# A value past this many bits has more than ~4,200 decimal digits: Python refuses to print it
# (sys.get_int_max_str_digits), so every message quoting it would fail. It is kept as its text,
# which the settings report as out of range.
_MAX_INT_BITS = 14_000
_BOOLS = {"yes": True, "no": False, "true": True, "false": False, "on": True, "off": False}
# JSON's own numbers (RFC 8259), for .json files: 1e3 is a number to json.loads, a string to
# PyYAML's YAML 1.1 resolver.
_JSON_INT_RE = lazy(r"-?(?:0|[1-9][0-9]*)")
_JSON_FLOAT_RE = lazy(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


@cache
def _yaml11_resolver() -> Any:
    """PyYAML's resolver (YAML 1.1, what vLLM's `yaml.safe_load` of a --config file uses)."""
    from kvlint.source.pyyaml import import_yaml

    return import_yaml().resolver.Resolver()


def implicit_tag(text: str, *, json: bool = False) -> str:
    """The tag of a plain scalar written without one, as PyYAML resolves it (JSON's rules in a
    .json file), whichever composer read the file: ruamel.yaml resolves by YAML 1.2, where
    `0o17` is 15 and `yes` a string, PyYAML the other way round."""
    if json:
        if text in ("true", "false"):
            return _TAG + "bool"
        if text == "null":
            return _TAG + "null"
        if _JSON_INT_RE.fullmatch(text):
            return _TAG + "int"
        return _TAG + ("float" if _JSON_FLOAT_RE.fullmatch(text) else "str")
    from kvlint.source.pyyaml import import_yaml

    tag: str = _yaml11_resolver().resolve(import_yaml().ScalarNode, text, (True, False))
    return tag


def _resolve(tag: str, text: str) -> ScalarValue:
    """A plain scalar's value from its tag, as PyYAML's SafeConstructor builds it (an octal
    `017` is 15, `1:30` is 90), kept as its text where PyYAML would fail or build something
    kvlint does not read (a timestamp)."""
    if tag == _STR:
        return text
    if tag == _NULL:
        return None
    if tag == _BOOL:
        return _BOOLS.get(text.lower(), text.lower() == "true")
    if tag == _INT:
        number = _int(text)
        if number is None or number.bit_length() > _MAX_INT_BITS:
            return text
        return number
    if tag == _FLOAT:
        return _float(text)
    return text


_STR, _NULL, _BOOL, _INT, _FLOAT = (_TAG + name for name in ("str", "null", "bool", "int", "float"))
_MERGE = _TAG + "merge"


def _signed(text: str) -> tuple[int, str]:
    value = text.replace("_", "")
    if value[:1] in ("-", "+"):
        return (-1 if value[0] == "-" else 1), value[1:]
    return 1, value


def _int(text: str) -> int | None:
    """PyYAML's construct_yaml_int: `0b` binary, `0x` hex, a leading 0 octal, `a:b` base 60."""
    sign, value = _signed(text)
    try:
        if value == "0":
            return 0
        if value.startswith("0b"):
            return sign * int(value[2:], 2)
        if value.startswith("0x"):
            return sign * int(value[2:], 16)
        if value.startswith("0"):
            return sign * int(value, 8)
        if ":" in value:
            number = 0
            for part in value.split(":"):
                number = number * 60 + int(part)
            return sign * number
        return sign * int(value)
    except ValueError:  # not an integer after all (an explicit !!int), or 4,300+ digits
        return None


def _float(text: str) -> ScalarValue:
    """PyYAML's construct_yaml_float: `.inf`, `.nan`, `a:b.c` base 60, `_` separators."""
    sign, value = _signed(text)
    value = value.lower()
    if value == ".inf":
        return sign * float("inf")
    if value == ".nan":
        return float("nan")
    try:
        if ":" in value:
            number = 0.0
            for part in value.split(":"):
                number = number * 60 + float(part)
            return sign * number
        return sign * float(value)
    except ValueError:
        return text
