"""Tests for kvlint.suppress: comment directives, annotations, and unused suppressions."""

from __future__ import annotations

from kvlint.deployment import Sourced
from kvlint.finding import Finding
from kvlint.finding import Severity
from kvlint.finding import Span
from kvlint.suppress import apply
from kvlint.suppress import parse_annotations
from kvlint.suppress import parse_comments
from kvlint.suppress import unused

TEXT = """\
model: meta-llama/Llama-3.1-8B-Instruct
max-num-seqs: 256  # kvlint: disable=KV301 measured on the real pod
# kvlint: disable=max-model-len-exceeds-kv-pool, KV4 long context is offloaded

max-model-len: 131072
image: repo#tag
"""


def finding(code: str, line: int, name: str = "some-rule") -> Finding:
    return Finding(code, name, Severity.ERROR, Span("f.yaml", line, 3), "m")


def test_parse_trailing_and_standalone_comments() -> None:
    trailing, standalone = parse_comments("f.yaml", TEXT)
    assert (trailing.kind, trailing.codes, trailing.lines) == ("disable", ("KV301",), {2})
    assert trailing.reason == "measured on the real pod"
    assert trailing.span == Span("f.yaml", 2, 20, end_column=43)  # `# kvlint: disable=KV301`
    assert standalone.codes == ("max-model-len-exceeds-kv-pool", "KV4")
    assert standalone.lines == {3, 5}  # its own line and the next line that is not blank
    assert standalone.reason == "long context is offloaded"


def test_disable_file_and_bare_disable() -> None:
    directives = parse_comments("f.yaml", "# kvlint: disable-file\na: 1  # kvlint: disable\n")
    assert [(d.kind, d.codes, d.lines) for d in directives] == [
        ("disable-file", (), frozenset()),
        ("disable", (), {2}),
    ]


def test_not_a_comment() -> None:
    assert parse_comments("f.yaml", "a: x#kvlint: disable=KV301\n") == []


def test_apply_by_code_name_and_prefix() -> None:
    directives = parse_comments("f.yaml", TEXT)
    findings = [
        finding("KV301", 2),
        finding("KV302", 5, "max-model-len-exceeds-kv-pool"),
        finding("KV402", 5),
        finding("KV303", 5),
        finding("KV301", 6),
    ]
    kept, suppressed = apply(findings, directives)
    assert [(f.code, f.span.line) for f in kept] == [("KV303", 5), ("KV301", 6)]
    assert suppressed == 3
    assert unused(directives, lambda s: True) == []


def test_unused_directives_are_reported() -> None:
    directives = parse_comments(
        "f.yaml", "a: 1  # kvlint: disable=KV301,KV302\nb: 2  # kvlint: disable=KV999,KV301\n"
    )
    apply([finding("KV301", 1)], directives)

    def known(selector: str) -> bool | None:
        return None if selector == "KV999" else True

    assert [(u.span.line, u.message) for u in unused(directives, known)] == [
        (1, "`KV302` in `# kvlint: disable=KV301,KV302` suppresses nothing"),
        (2, "`# kvlint: disable=KV999,KV301` names no known rule: `KV999`"),
        (2, "`KV301` in `# kvlint: disable=KV999,KV301` suppresses nothing"),
    ]


def test_codes_of_rules_that_did_not_run_are_not_reported() -> None:
    directives = parse_comments("f.yaml", "a: 1  # kvlint: disable=KV301\n")
    assert unused(directives, lambda s: False) == []


def test_annotation() -> None:
    span = Span("k.yaml", 7, 25)
    directives = parse_annotations(
        {"kvlint.dev/ignore": Sourced("KV301, KV302: reviewed; KV907", span)}
    )
    assert [(d.codes, d.reason, d.lines) for d in directives] == [
        (("KV301", "KV302"), "reviewed", frozenset()),
        (("KV907",), "", frozenset()),
    ]
    kept, _ = apply([finding("KV301", 40), finding("KV303", 41)], directives)
    assert [f.code for f in kept] == ["KV303"]
    messages = [u.message for u in unused(directives, lambda s: True)]
    assert messages == [
        "`KV302` in `kvlint.dev/ignore: KV301, KV302` suppresses nothing",
        "`kvlint.dev/ignore: KV907` suppresses nothing",
    ]


MALFORMED = """\
a: 1  # kvlint: disable-next-line=KV301
b: 2  # kvlint: disable KV301 bursty traffic
c: 3  # kvlint: enable=KV301
"""


def test_a_malformed_comment_is_reported_and_suppresses_nothing() -> None:
    directives = parse_comments("f.yaml", MALFORMED)
    assert [d.kind for d in directives] == ["malformed"] * 3
    # `disable-next-line` is not read as a bare `disable` (which would hide every rule).
    kept, suppressed = apply([finding("KV301", 1), finding("KV301", 2)], directives)
    assert (len(kept), suppressed) == (2, 0)
    messages = [u.message for u in unused(directives, lambda _: True)]
    assert messages == [
        "`# kvlint: disable-next-line=KV301` is not understood: kvlint reads "
        "`# kvlint: disable=CODES reason` (this line, or the next when alone on its line) and "
        "`# kvlint: disable-file`",
        "`# kvlint: disable KV301 bursty traffic` is not understood: write "
        "`# kvlint: disable=KV301` to name the rule",
        "`# kvlint: enable=KV301` is not understood: kvlint reads "
        "`# kvlint: disable=CODES reason` (this line, or the next when alone on its line) and "
        "`# kvlint: disable-file`",
    ]
    assert directives[0].span == Span("f.yaml", 1, 7, end_column=40)


def test_an_annotation_without_the_colon_is_reported() -> None:
    value = Sourced("KV301 bursty traffic; KV302: measured", Span("f.yaml", 4, 25))
    bad, good = parse_annotations({"kvlint.dev/ignore": value})
    assert (good.kind, good.codes, good.reason) == ("annotation", ("KV302",), "measured")
    assert bad.kind == "malformed"
    (message,) = [u.message for u in unused([bad], lambda _: True)]
    assert message == (
        "`kvlint.dev/ignore` entry `KV301 bursty traffic` is not understood: write the codes, a "
        "colon and the reason (`KV301: bursty traffic`)"
    )
