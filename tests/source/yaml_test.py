"""Position-carrying YAML/JSON loading: values, spans, and every way a file can be broken."""

from __future__ import annotations

from typing import Any
from typing import ClassVar

import pytest

from kvlint.source.nodes import Mapping
from kvlint.source.nodes import Scalar
from kvlint.source.nodes import Sequence
from kvlint.source.text import decode
from kvlint.source.yaml import parse_documents


def _parse(text: str, *, json: bool = False):  # type: ignore[no-untyped-def]
    source, problems = decode("f.yaml", text.encode())
    assert source is not None and not problems
    return parse_documents(source, json=json)


def _messages(problems) -> list[str]:  # type: ignore[no-untyped-def]
    return [f"{p.code} {p.span.location()} {p.message}" for p in problems]


def test_values_and_spans() -> None:
    docs, problems = _parse("a: 1\nb:\n  - x\n  - 'y z'\nc: {d: 2.5, e: true, f: null}\n")
    assert problems == []
    root = docs[0].root
    assert isinstance(root, Mapping)
    assert root.plain() == {"a": 1, "b": ["x", "y z"], "c": {"d": 2.5, "e": True, "f": None}}
    quoted = root.dig("b")
    assert isinstance(quoted, Sequence)
    item = quoted.items[1]
    assert isinstance(item, Scalar)
    assert item.span[1:] == (4, 5, "$.b[1]", 10, None)
    assert item.raw == "'y z'"
    key_path = root.dig("c", "e")
    assert key_path is not None and key_path.span.key == "$.c.e"


def test_key_path_quotes_dotted_keys() -> None:
    docs, _ = _parse("limits:\n  nvidia.com/gpu: 8\n")
    node = docs[0].root.dig("limits", "nvidia.com/gpu")  # type: ignore[attr-defined]
    assert node.span.key == '$.limits["nvidia.com/gpu"]'
    assert (node.span.line, node.span.column) == (2, 19)


def test_multi_document_positions_and_isolation() -> None:
    text = "a: 1\n---\nb: [\n---\nc: 3\n"
    docs, problems = _parse(text)
    assert [d.root.plain() for d in docs] == [{"a": 1}, {"c": 3}]
    assert docs[1].root.span.line == 5
    assert len(problems) == 1 and problems[0].code == "KV901"
    assert problems[0].span.line == 4  # the broken flow sequence runs into the next marker


def test_duplicate_key_is_reported_and_last_wins() -> None:
    docs, problems = _parse("max-num-seqs: 8\nmax-num-seqs: 16\n")
    assert docs[0].root.plain() == {"max-num-seqs": 16}
    assert _messages(problems) == [
        "KV901 f.yaml:2:1 duplicate key `max-num-seqs` (first at line 1); "
        "the last one wins here, other tools may disagree"
    ]


def test_merge_keys() -> None:
    text = "x-common: &c\n  image: vllm/vllm-openai\n  tty: true\nsvc:\n  <<: *c\n  tty: false\n"
    docs, problems = _parse(text)
    assert problems == []
    assert docs[0].root.plain()["svc"] == {"tty": False, "image": "vllm/vllm-openai"}  # type: ignore[index]


def test_python_tag_is_refused_not_executed() -> None:
    docs, problems = _parse('a: !!python/object/apply:os.system ["echo pwned"]\n')
    assert docs[0].root.plain() == {"a": ["echo pwned"]}
    assert problems == []  # kept with the document: reported where it is a deployment
    assert _messages(list(docs[0].object_tags)) == [
        "KV901 f.yaml:1:4 tag `!!python/object/apply:os.system` would build a Python object: "
        "refused"
    ]


def test_billion_laughs_is_refused_quickly() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 9):
        prev, name = chr(96 + i), chr(97 + i)
        lines.append(f"{name}: &{name} [{','.join(['*' + prev] * 9)}]")
    docs, problems = _parse("\n".join(lines) + "\n")
    assert docs == []
    assert [p.code for p in problems] == ["KV901"]
    assert "billion laughs" in problems[0].message


def test_deep_nesting_does_not_escape() -> None:
    docs, problems = _parse("[" * 3000)
    assert docs == []
    assert [p.code for p in problems] == ["KV901"]
    assert problems[0].message.startswith(("YAML nesting is too deep", "nesting deeper"))


def test_tab_indentation_message() -> None:
    _, problems = _parse("spec:\n\tname: x\n")
    assert _messages(problems) == [
        "KV901 f.yaml:2:1 a TAB character where YAML allows only spaces: replace it with spaces"
    ]


def test_tab_after_a_value_is_whitespace() -> None:
    # The GKE vLLM-TPU sample's `type: LoadBalancer<TAB>`: libyaml and go-yaml read it.
    docs, problems = _parse("spec:\n  type: LoadBalancer\t\n  ports: [8000]\t # x\n")
    assert problems == []
    [doc] = docs
    assert isinstance(doc.root, Mapping)
    spec = doc.root.mapping("spec")
    assert spec is not None
    value = spec.scalar("type")
    assert value is not None and value.text == "LoadBalancer"
    assert (value.span.line, value.span.column) == (2, 9)


def test_conflict_markers() -> None:
    text = "a: 1\n<<<<<<< HEAD\nb: 2\n=======\nb: 3\n>>>>>>> main\n"
    docs, problems = _parse(text)
    assert docs == []
    assert _messages(problems) == [
        "KV901 f.yaml:2:1 unresolved git merge-conflict marker `<<<<<<< HEAD` "
        "(more markers at lines 4, 6): resolve the conflict"
    ]


def test_unfilled_placeholder_key() -> None:
    _, problems = _parse("data:\n  token: {{HF_TOKEN}}\n")
    assert _messages(problems) == [
        "KV901 f.yaml:2:10 unfilled template placeholder `{{HF_TOKEN}}`: "
        "render the template (or quote the value) first"
    ]


def test_a_placeholder_value_is_kept_as_its_text() -> None:
    # `max-model-len: {{ .Values.len }}` is a flow mapping to YAML: reported once, then read as
    # the text it stands for, so the setting is "set at run time", not a wrong-typed `{}`.
    docs, problems = _parse("model: m\nmax-model-len: {{ .Values.len }}\n")
    assert _messages(problems) == [
        "KV901 f.yaml:2:16 unfilled template placeholder `{{ .Values.len }}`: "
        "render the template (or quote the value) first"
    ]
    [doc] = docs
    assert isinstance(doc.root, Mapping)
    value = doc.root.scalar("max-model-len")
    assert value is not None and value.value == "{{ .Values.len }}"
    assert (value.span.line, value.span.column) == (2, 16)


@pytest.mark.parametrize("fast", [True, False])
def test_syntax_error_position(fast: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    import kvlint.source.yaml as module

    if not fast:
        monkeypatch.setattr(module, "_libyaml", lambda: None)
    _, problems = _parse("a: [1, 2\nb: 3\n")
    (problem,) = problems
    assert (problem.code, problem.span.location()) == ("KV901", "f.yaml:2:2")
    # libyaml says "did not find expected ',' or ']'", ruamel "expected ',' or ']', but got ':'"
    assert problem.message.startswith("invalid YAML: while parsing a flow sequence: ")


def test_json_with_tabs() -> None:
    docs, problems = _parse('{\n\t"max_model_len": 4096,\n\t"a": [1]\n}\n', json=True)
    assert problems == []
    node = docs[0].root.dig("max_model_len")  # type: ignore[attr-defined]
    assert (node.value, node.span.line, node.span.column) == (4096, 2, 19)


def test_binary_and_bad_utf8() -> None:
    source, problems = decode("b.bin", b"\x7fELF\x00\x00")
    assert source is None and _messages(problems) == [
        "KV901 b.bin:1:1 binary file (NUL bytes): not a YAML or JSON"
    ]
    source, problems = decode("u.yaml", b"a: 1\nb: caf\xe9\n")
    assert source is None and _messages(problems) == [
        "KV901 u.yaml:2:7 invalid UTF-8 (byte 0xe9): save the file as UTF-8"
    ]


def test_crlf_and_bom() -> None:
    source, problems = decode("w.yaml", b"\xef\xbb\xbfa: 1\r\nb: 2\r\n")
    assert source is not None and problems == []
    docs, _ = parse_documents(source)
    node = docs[0].root.dig("b")  # type: ignore[attr-defined]
    assert (node.value, node.span.line, node.span.column) == (2, 2, 4)


def test_both_composers_give_the_same_spans(monkeypatch: pytest.MonkeyPatch) -> None:
    """libyaml (when installed) and ruamel.yaml agree on values and character columns."""
    import kvlint.source.yaml as module

    text = "# café ☕\nname: ünïcode\nargs: [--max-model-len, 8192]\nflag: yes\n"
    fast, _ = _parse(text)
    monkeypatch.setattr(module, "_libyaml", lambda: None)
    slow, _ = _parse(text)
    for docs in (fast, slow):
        args = docs[0].root.dig("args")  # type: ignore[attr-defined]
        assert args.items[1].span[1:4] == (3, 25, "$.args[1]")
        name = docs[0].root.dig("name")  # type: ignore[attr-defined]
        assert (name.text, name.span.column, name.span.end_column) == ("ünïcode", 7, 14)


YAML11_SCALARS = """\
plain: text
octal: 017
hex: 0x1F
sexagesimal: 1:30
float: 1.5e3
inf: .inf
yes: yes
no: off
tilde: ~
null: null
empty:
stamp: 2001-12-14t21:59:43.10-05:00
quoted: "017"
single: 'yes'
merge: &base {a: 1}
other: {<<: *base, b: 2}
list: [1, two, 3.0, true]
block: |
  017
"""


def _tags(node: Any) -> list[tuple[str, str, object]]:
    found: list[tuple[str, str, object]] = []
    stack = [node]
    while stack:
        current = stack.pop()
        value = current.value
        found.append((type(current).__name__, str(current.tag), None))
        if isinstance(value, list):
            for item in value:
                stack.extend(item if isinstance(item, tuple) else (item,))
        else:
            found[-1] = (found[-1][0], found[-1][1], value)
    return found


def test_the_remembering_composer_tags_every_node_as_pyyaml_does() -> None:
    """libyaml with the resolver's answers remembered gives each node PyYAML's own tag, the
    second time as the first."""
    import kvlint.source.yaml as module
    from kvlint.source.pyyaml import import_yaml

    yaml = import_yaml()
    if getattr(yaml, "CSafeLoader", None) is None:
        pytest.skip("PyYAML without libyaml")
    ours = module._remembering(yaml.CSafeLoader)
    assert ours is not yaml.CSafeLoader
    theirs = _tags(yaml.compose(YAML11_SCALARS, Loader=yaml.CSafeLoader))
    assert _tags(yaml.compose(YAML11_SCALARS, Loader=ours)) == theirs
    assert _tags(yaml.compose(YAML11_SCALARS, Loader=ours)) == theirs
    assert ("ScalarNode", "tag:yaml.org,2002:int", "017") in theirs
    assert ("ScalarNode", "tag:yaml.org,2002:str", "017\n") in theirs


def test_a_loader_with_path_resolvers_is_used_as_it_is() -> None:
    import kvlint.source.yaml as module

    class WithPaths:
        yaml_path_resolvers: ClassVar[dict[tuple[str, ...], str]] = {("a",): "tag"}

    assert module._remembering(WithPaths) is WithPaths
