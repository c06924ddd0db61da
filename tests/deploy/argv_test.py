"""argv tokens: positions of words inside shell strings of every YAML scalar style."""

from __future__ import annotations

from kvlint.deploy.argv import Token
from kvlint.deploy.argv import commands
from kvlint.deploy.argv import from_node
from kvlint.deploy.argv import substitute
from kvlint.source.nodes import Mapping
from kvlint.source.nodes import Scalar
from kvlint.source.text import decode
from kvlint.source.yaml import parse_documents


def _root(text: str) -> Mapping:
    source, _ = decode("f.yaml", text.encode())
    assert source is not None
    docs, problems = parse_documents(source)
    assert problems == []
    root = docs[0].root
    assert isinstance(root, Mapping)
    return root


def _where(tokens: list[Token]) -> list[tuple[str, int, int, int | None]]:
    return [(t.text, t.span.line, t.span.column, t.span.end_column) for t in tokens]


def test_list_items_point_at_items() -> None:
    root = _root("args:\n  - --max-model-len=4096\n  - '--max-num-seqs'\n  - 256\n")
    tokens = from_node(root.get("args"))
    assert _where(tokens) == [
        ("--max-model-len=4096", 2, 5, 25),
        ("--max-num-seqs", 3, 5, 21),
        ("256", 4, 5, 8),
    ]
    value = tokens[0].tail(len("--max-model-len="))
    assert (value.text, value.span.line, value.span.column, value.span.end_column) == (
        "4096",
        2,
        21,
        25,
    )
    assert value.raw == "4096"


def test_double_quoted_multiline_script() -> None:
    text = (
        "cmd:\n"
        '  - "bash start.sh leader;\n'
        '     python3 -m vllm.entrypoints.openai.api_server --max-model-len 4096"\n'
    )
    node = _root(text).get("cmd")
    assert node is not None
    item = node.items[0]  # type: ignore[attr-defined]
    assert isinstance(item, Scalar)
    first, second = commands(item)
    assert [t.text for t in first] == ["bash", "start.sh", "leader"]
    assert _where(second)[-2:] == [("--max-model-len", 3, 52, 67), ("4096", 3, 68, 72)]


def test_literal_block_with_continuations_and_comments() -> None:
    text = (
        "script: |\n"
        "  # start the server\n"
        "  exec vllm serve Qwen/Qwen2.5-7B \\\n"
        "    --max-num-seqs 64 \\\n"
        "    --kv-cache-dtype 'fp8'\n"
    )
    node = _root(text).get("script")
    assert isinstance(node, Scalar)
    (command,) = commands(node)
    assert _where(command) == [
        ("exec", 3, 3, 7),
        ("vllm", 3, 8, 12),
        ("serve", 3, 13, 18),
        ("Qwen/Qwen2.5-7B", 3, 19, 34),
        ("--max-num-seqs", 4, 5, 19),
        ("64", 4, 20, 22),
        ("--kv-cache-dtype", 5, 5, 21),
        ("fp8", 5, 22, 27),
    ]


def test_folded_block_compose_command() -> None:
    text = "command: >\n  --host 0.0.0.0\n  --ctx-size 40000\n  -fa on\n"
    node = _root(text).get("command")
    tokens = from_node(node)
    assert _where(tokens)[2:4] == [("--ctx-size", 3, 3, 13), ("40000", 3, 14, 19)]


def test_operators_split_commands_and_keep_substitutions() -> None:
    node = _root('s: "cd /x && vllm serve $(MODEL) --port ${PORT}; echo done"\n').get("s")
    assert isinstance(node, Scalar)
    assert [[t.text for t in c] for c in commands(node)] == [
        ["cd", "/x"],
        ["vllm", "serve", "$(MODEL)", "--port", "${PORT}"],
        ["echo", "done"],
    ]


def test_substitution_takes_the_env_value_span() -> None:
    root = _root("env:\n  MODEL: meta-llama/Llama-3.1-8B\nargs: [--model, $(MODEL), x$(MODEL)]\n")
    model = root.get("env").get("MODEL")  # type: ignore[union-attr]
    assert isinstance(model, Scalar)
    env = {"MODEL": Token(model.text, model)}
    tokens = [substitute(t, env) for t in from_node(root.get("args"))]
    assert [t.text for t in tokens] == [
        "--model",
        "meta-llama/Llama-3.1-8B",
        "xmeta-llama/Llama-3.1-8B",
    ]
    assert tokens[1].span.line == 2
    assert tokens[2].span.line == 3
    unknown = substitute(Token("$(NOPE)", None, fallback=tokens[0].span), env)
    assert unknown.text == "$(NOPE)"
