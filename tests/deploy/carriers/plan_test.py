"""The kvlint plan format: settings as the engine spells them, claims with units, schema errors."""

from __future__ import annotations

from pathlib import Path

import jsonschema
from kvlint_schemas import load as load_schema

from kvlint.deploy.load import load_path
from kvlint.deploy.load import load_text

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "deployments"


def test_plan_fixture() -> None:
    result = load_path(FIXTURES / "plan-llama-70b.yaml", display="plan.yaml")
    assert result.problems == []
    (dep,) = result.deployments
    assert (dep.carrier, dep.name, dep.engine.value) == ("plan", "chat-70b", "vllm")
    assert dep.engine_version is not None and dep.engine_version.value == "0.11.0"
    assert dep.model is not None and dep.model.value == "meta-llama/Llama-3.1-70B-Instruct"
    assert dep.gpu is not None and dep.gpu.value == "H100-80GB"
    assert dep.gpu_count is not None and dep.gpu_count.value == 8
    assert dep.max_model_len is not None
    assert (dep.max_model_len.value, dep.max_model_len.span.location()) == (
        128000,
        "plan.yaml:10:18",
    )
    assert dep.max_num_seqs is not None and dep.max_num_seqs.value == 32
    claims = dep.claims
    assert claims.concurrency is not None and claims.concurrency.value == 32
    assert claims.context is not None and claims.context.value == 128000
    assert claims.kv_per_token is not None
    assert (claims.kv_per_token.value, claims.kv_per_token.raw) == (327680, "320 KiB")
    assert claims.kv_per_token.span.location() == "plan.yaml:17:17"
    assert claims.kv_per_sequence is not None and claims.kv_per_sequence.value == 41_940_000_000
    assert claims.kv_cache_dtype is not None and claims.kv_cache_dtype.value == "bf16"
    assert claims.gpus_needed is not None and claims.gpus_needed.value == 8


def test_plan_settings_for_other_engines() -> None:
    text = (
        "kvlint: plan/v1\nengine: llamacpp\nmodel: Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf\n"
        "settings:\n  ctx-size: 32768\n  parallel: 4\n  cache-type-v: q8_0\n"
        "claims:\n  kv_per_sequence: 2147483648\n  context: 32K\n"
    )
    (dep,) = load_text(text, display="p.yaml").deployments
    assert dep.max_model_len is not None and dep.max_model_len.value == 32768
    assert dep.max_num_seqs is not None and dep.max_num_seqs.value == 4
    assert dep.kv_cache_dtype_v is not None and dep.kv_cache_dtype_v.value == "q8_0"
    assert dep.claims.kv_per_sequence is not None
    assert dep.claims.kv_per_sequence.value == 2147483648
    assert dep.claims.context is not None and dep.claims.context.value == 32768
    text = "kvlint: plan/v1\nengine: ollama\nmodel: llama3.1:8b\nsettings:\n"
    text += "  OLLAMA_NUM_PARALLEL: 2\n  OLLAMA_CONTEXT_LENGTH: 8192\n"
    (dep,) = load_text(text, display="o.yaml").deployments
    assert dep.max_num_seqs is not None and dep.max_num_seqs.value == 2
    assert dep.max_model_len is not None and dep.max_model_len.value == 8192


def test_schema_errors_point_at_the_key_or_value() -> None:
    text = (
        "kvlint: plan/v2\nengine: vlm\nmodel: m\ngpus: two\nextra: 1\n"
        "claims:\n  concurrency: lots\n  kv_per_token: 320 KB/s\n  context: 128x\n"
    )
    result = load_text(text, display="p.yaml")
    assert result.deployments == []
    assert [(p.code, p.span.location(), p.message) for p in result.problems] == [
        ("KV904", "p.yaml:1:9", "`kvlint`: must be `plan/v1`, got 'plan/v2'"),
        (
            "KV904",
            "p.yaml:2:9",
            "`engine`: 'vlm' is not one of vllm, sglang, llamacpp, tgi, ollama, trtllm, mlx",
        ),
        ("KV904", "p.yaml:4:7", "`gpus`: 'two' is not of type 'integer'"),
        (
            "KV904",
            "p.yaml:5:1",
            "unknown key `extra` (known: claims, engine, engine_version, gpu, gpus, kvlint, "
            "model, name, reserved_memory, settings, workload)",
        ),
        ("KV904", "p.yaml:7:16", "`claims.concurrency`: 'lots' is not of type 'integer'"),
        (
            "KV904",
            "p.yaml:8:17",
            "`claims.kv_per_token`: expected a size such as `320 KiB` or `2.62 GB` "
            "(a bare number is bytes), got '320 KB/s'",
        ),
        (
            "KV904",
            "p.yaml:9:12",
            "`claims.context`: expected a token count such as 131072, 128k (128,000) or "
            "128K (131,072), got '128x'",
        ),
    ]


def test_plan_settings_are_checked_as_engine_flags() -> None:
    text = "kvlint: plan/v1\nengine: vllm\nmodel: m\nsettings:\n  max-model-len: lots\n"
    result = load_text(text, display="p.yaml")
    assert [(p.code, p.span.location()) for p in result.problems] == [("KV502", "p.yaml:5:18")]


def test_schema_is_valid_and_accepts_the_fixture() -> None:
    schema = load_schema("plan")
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["kvlint"]["const"] == "plan/v1"


def test_plan_workload() -> None:
    text = (
        "kvlint: plan/v1\nengine: vllm\nmodel: meta-llama/Llama-3.1-8B-Instruct\n"
        "workload:\n  prompt_tokens: 1800\n  output_tokens: 200\n  p95_tokens: 3k\n"
        "  p99.9_tokens: 12000\n"
    )
    (dep,) = load_text(text, display="p.yaml").deployments
    assert dep.workload is not None
    assert [(w.label, w.tokens) for w in dep.workload.lengths()] == [
        ("typical request", 2000),
        ("p95", 3000),
        ("p99.9", 12000),
    ]
    bad = "kvlint: plan/v1\nengine: vllm\nmodel: m\nworkload:\n  median_tokens: 5\n"
    result = load_text(bad, display="q.yaml")
    assert [p.message for p in result.problems if p.code == "KV904"] == [
        "`workload`: unknown key `median_tokens` (known: output_tokens, prompt_tokens)"
    ]
