"""Any bytes end in a LoadResult (deployments and problems), never an exception or a hang."""

from __future__ import annotations

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from kvlint.deploy.load import load_bytes

PIECES = [*list("abc:-[]{}&*!|>'\"#%@`,?\n\t =0123456789."), "kind: ", "args: ", "\n  ", "---\n"]
YAMLISH = st.lists(st.sampled_from(PIECES), max_size=120).map("".join)
MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: x}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: [--model, m, --max-model-len, "4096"]
"""


@settings(max_examples=150, deadline=None)
@given(YAMLISH)
def test_yamlish_text_never_raises(text: str) -> None:
    result = load_bytes(text.encode(), display="f.yaml")
    assert all(p.span.line >= 1 and p.span.column >= 1 for p in result.problems)


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=0, max_value=len(MANIFEST) - 1), st.text(max_size=3))
def test_a_damaged_manifest_never_raises(position: int, insert: str) -> None:
    text = MANIFEST[:position] + insert + MANIFEST[position + 1 :]
    result = load_bytes(text.encode(), display="m.yaml")
    for dep in result.deployments:
        for value in dep.settings.values():
            assert value.span.path == "m.yaml"


@settings(max_examples=50, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_never_raise(data: bytes) -> None:
    load_bytes(data, display="b.bin")


def test_deep_block_nesting_and_long_dash_chains() -> None:
    deep = "".join(" " * i + "k:\n" for i in range(600)) + " " * 600 + "v: 1\n"
    assert load_bytes(deep.encode(), display="d.yaml").problems
    chain = "- " * 20000 + "x\n"
    result = load_bytes(chain.encode(), display="c.yaml")
    assert [p.code for p in result.problems] == ["KV901"]
