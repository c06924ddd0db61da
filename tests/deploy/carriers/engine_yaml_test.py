"""``vllm serve --config`` files: dashes or underscores, human-readable ints, wrong types."""

from __future__ import annotations

from pathlib import Path

from kvlint.deploy.load import load_path
from kvlint.deploy.load import load_text

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "deployments"


def test_vllm_config_file() -> None:
    result = load_path(FIXTURES / "vllm-config.yaml", display="vllm-config.yaml")
    assert result.problems == []
    (dep,) = result.deployments
    assert (dep.carrier, dep.engine.value, dep.name) == ("engine_yaml", "vllm", "vllm config")
    got = {k: (v.value, v.span.line, v.span.column, v.raw) for k, v in dep.settings.items()}
    assert got == {
        "model": ("meta-llama/Llama-3.1-8B-Instruct", 2, 8, "meta-llama/Llama-3.1-8B-Instruct"),
        "max-model-len": (32000, 3, 16, "32k"),
        "max-num-seqs": (128, 4, 15, "128"),
        "max-num-batched-tokens": (8192, 5, 25, "8K"),
        "gpu-memory-utilization": (0.9, 6, 25, "0.9"),
        "kv-cache-dtype": ("fp8", 7, 17, "fp8"),
        "enforce-eager": (True, 8, 16, "true"),
        "tensor-parallel-size": (1, 9, 23, "1"),
        "served-model-name": ("llama", 10, 20, "llama"),
    }
    assert dep.max_num_seqs is not None and dep.max_num_seqs.span.key == "$.max_num_seqs"
    assert dep.max_num_batched_tokens is not None and dep.max_num_batched_tokens.value == 8192
    assert dep.served_model_name is not None and dep.served_model_name.value == "llama"


def test_human_ints_and_auto() -> None:
    text = (
        "model: m\nmax-model-len: auto\nmax-num-batched-tokens: 25.6k\nkv_cache_memory_bytes: 1K\n"
    )
    (dep,) = load_text(text, display="c.yaml").deployments
    assert dep.max_model_len is not None and dep.max_model_len.value == -1
    assert dep.max_num_batched_tokens is not None and dep.max_num_batched_tokens.value == 25600
    assert dep.kv_cache_memory_bytes is not None and dep.kv_cache_memory_bytes.value == 1024


def test_wrong_type_and_unknown_key() -> None:
    text = "model: m\nmax-model-len: lots\nmax-num-seqz: 4\ngpu-memory-utilization: 1.5\n"
    result = load_text(text, display="c.yaml")
    assert [(p.code, p.span.location(), p.message) for p in result.problems] == [
        (
            "KV502",
            "c.yaml:2:16",
            "`max-model-len` expects an integer such as 8192, 32k or 128K (or -1 / auto), "
            "got `lots`",
        ),
        (
            "KV501",
            "c.yaml:3:1",
            "unknown flag `max-num-seqz` for vllm; did you mean `--max-num-seqs`?",
        ),
        (
            "KV502",
            "c.yaml:4:25",
            "`gpu-memory-utilization` must be a fraction in (0, 1], got `1.5`",
        ),
    ]


def test_sglang_config() -> None:
    text = "model-path: Qwen/Qwen3-8B\ncontext-length: 32768\nmem-fraction-static: 0.85\ntp: 2\n"
    (dep,) = load_text(text, display="s.yaml").deployments
    assert dep.engine.value == "sglang"
    assert dep.model is not None and dep.model.value == "Qwen/Qwen3-8B"
    assert dep.max_model_len is not None and dep.max_model_len.value == 32768
    assert dep.memory_fraction is not None and dep.memory_fraction.value == 0.85
    assert dep.tensor_parallel_size is not None and dep.tensor_parallel_size.value == 2


def test_arbitrary_yaml_is_not_an_engine_config() -> None:
    result = load_text("owner: platform\nmodel_cards: [a, b]\nport: 80\n", display="ci.yaml")
    assert result.deployments == []
    assert [(p.code, p.span.location()) for p in result.problems] == [("KV905", "ci.yaml:1:1")]


def test_weight_format_as_cache_dtype_is_kept_for_kv201() -> None:
    # `awq` is no cache dtype vLLM lists: kept aside for KV201 (no KV502), the field unset so the
    # cache is sized at its default; a dtype vLLM lists, or one that is no weight format, is not.
    (dep,) = load_text("model: m\nkv-cache-dtype: awq\n", display="c.yaml").deployments
    assert dep.kv_cache_dtype is None and not dep.problems
    value = dep.weight_format_cache["kv_cache_dtype"]
    assert (value.value, value.span.location()) == ("awq", "c.yaml:2:17")
    result = load_text("model: m\nkv-cache-dtype: fp9\n", display="c.yaml")
    assert [p.code for p in result.problems] == ["KV502"]
    (dep,) = load_text("model: m\nkv-cache-dtype: fp8\n", display="c.yaml").deployments
    assert dep.kv_cache_dtype is not None and not dep.weight_format_cache


def test_dotted_json_options() -> None:
    from kvlint.deploy.argv import Token
    from kvlint.deploy.flags import dotted_json

    def word(text: str) -> Token:
        return Token(text, None)

    pieces = [
        ("head_dim", word("1024")),
        ("text_config.rope_theta", word("1e6")),
        ("architectures+", word("A,B")),
        ("name", word("llama")),
    ]
    assert dotted_json(pieces) == {
        "head_dim": 1024,
        "text_config": {"rope_theta": 1e6},
        "architectures": ["A", "B"],
        "name": "llama",
    }


def test_dotted_keys_of_a_json_option_in_a_config_file() -> None:
    # vLLM turns each key into `--key value`: a dotted key is one key of the JSON option.
    text = "model: m\nhf-overrides.head_dim: 1024\nhf-overrides.text_config.rope_theta: 1e6\n"
    (dep,) = load_text(text, display="c.yaml").deployments
    assert not dep.problems and not dep.unknown_flags
    assert dep.hf_overrides is not None
    assert dep.hf_overrides.value == {"head_dim": 1024, "text_config": {"rope_theta": 1e6}}
    assert dep.hf_overrides.span.location() == "c.yaml:2:1"


def test_a_negated_boolean_key_is_the_no_flag() -> None:
    """vLLM's config loader passes `no-enable-prefix-caching: true` as the flag
    `--no-enable-prefix-caching` (every boolean is a BooleanOptionalAction); the upstream
    recipes write it so. It was KV501 "unknown flag" on a correct file."""
    recipe = (
        "kv-cache-dtype: fp8\nasync-scheduling: true\nno-enable-prefix-caching: true\n"
        "max-num-batched-tokens: 8192\n"
    )
    result = load_text(recipe, display="r.yaml")
    assert result.problems == []
    (dep,) = result.deployments
    assert dep.carrier == "engine_yaml" and "enable-prefix-caching" in dep.settings
    text = "model: m\nno-enforce-eager: true\n"
    (dep,) = load_text(text, display="c.yaml").deployments
    assert dep.enforce_eager is not None and dep.enforce_eager.value is False
    assert dep.enforce_eager.span.location() == "c.yaml:2:19"
    # `no-x: false` is no flag at all: the loader drops a false boolean.
    (dep,) = load_text("model: m\nno-enforce-eager: false\n", display="c.yaml").deployments
    assert dep.enforce_eager is None
    # A negation of a flag that takes a value is still unknown.
    result = load_text("model: m\nmax-model-len: 4096\nno-max-num-seqs: true\n", display="c.yaml")
    assert [p.code for p in result.problems] == ["KV501"]
