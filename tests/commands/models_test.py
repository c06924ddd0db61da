"""``kvlint models``: the catalog as a table and as JSON."""

from __future__ import annotations

import json

import pytest

from kvlint.model import catalog
from testing.cli import run_cli


def test_json_lists_every_catalog_entry_with_its_facts(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(["models", "--format", "json"], capsys)
    assert result.code == 0, result.err
    rows = json.loads(result.out)
    assert [row["id"] for row in rows] == catalog.catalog_ids()
    by_id = {row["id"]: row for row in rows}
    llama = by_id["meta-llama/Meta-Llama-3.1-70B"]
    assert llama["attention"] == "GQA" and llama["layers"] == 80
    assert llama["kv_heads"] == 8 and llama["head_dim"] == 128
    assert llama["per_token_bytes"] == 327_680 and llama["dtype"] == "bfloat16"
    assert llama["source"]["repo"] == "ai-dynamo/aiconfigurator"
    deepseek = by_id["deepseek-ai/DeepSeek-V3"]
    assert deepseek["attention"] == "MLA" and deepseek["head_dim"] == 576
    assert deepseek["per_token_bytes"] == 61 * 576 * 2


def test_text_is_a_table_and_a_filter_narrows_it(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(["models", "gemma-3"], capsys)
    assert result.code == 0, result.err
    assert "google/gemma-3-27b-it" in result.out
    assert "meta-llama" not in result.out
    assert "bytes/token" in result.out
