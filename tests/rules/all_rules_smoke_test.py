"""Every KV1xx-KV4xx rule over every catalog model at awkward settings: findings or nothing,
never an exception (the linter would turn one into an internal-error finding)."""

from __future__ import annotations

from typing import Any

import pytest
from kvlint_rules import get_rules

from kvlint.deployment import Sourced
from kvlint.engines.sizer import size
from kvlint.finding import Span
from kvlint.model import catalog
from kvlint.rule import Rule
from testing.builders import deployment

RULES = [rule for rule in get_rules() if rule.code[2] in "1234"]
AT = Span("plan.yaml", 20, 5)
SETTINGS: list[dict[str, Any]] = [
    {
        "gpu": "H100-80GB",
        "tensor_parallel_size": 3,
        "max_model_len": 1_000_000,
        "max_num_seqs": 4096,
    },
    {
        "gpu": "L4",
        "max_model_len": -1,
        "kv_cache_dtype": "fp8",
        "disable_hybrid_kv_cache_manager": True,
    },
    {
        "gpu": "A100-80GB",
        "tensor_parallel_size": 64,
        "claims": {
            "concurrency": 64,
            "context": 131072,
            "kv_per_token": Sourced(1, AT, "1"),
            "kv_per_sequence": Sourced(10**12, AT, "1 TB"),
            "kv_pool_tokens": Sourced(10, AT),
            "kv_cache_dtype": Sourced("q4_k_m", AT),
            "gpus_needed": Sourced(1, AT),
        },
    },
]


@pytest.mark.parametrize("ref", catalog.sized_ids())
def test_rules_never_raise(ref: str) -> None:
    spec = catalog.lookup(ref)
    assert spec is not None
    for engine in ("vllm", "sglang", "llamacpp"):
        for fields in SETTINGS:
            dep = deployment(engine, model=ref, **fields)
            try:
                sizing = size(dep, spec)
            except Exception:
                continue
            for rule in RULES:
                instance: Rule = rule()
                for problem in instance.check(dep, sizing):
                    assert problem.message and "\n" not in problem.message
