"""Build Deployments, ModelSpecs and Sizings directly, for unit tests of single rules."""

from __future__ import annotations

from typing import Any

from kvlint.deployment import Claims
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.engines.sizer import size
from kvlint.finding import Problem
from kvlint.finding import Span
from kvlint.model.hf import spec_from_config
from kvlint.model.spec import ModelSpec
from kvlint.rule import Rule
from kvlint.sizing import Sizing

# Minimal config.json subsets of the models the seeds work through (values from the models'
# published config.json files).
LLAMA_31_70B: dict[str, Any] = {
    "model_type": "llama",
    "hidden_size": 8192,
    "intermediate_size": 28672,
    "num_hidden_layers": 80,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
    "rope_scaling": {
        "rope_type": "llama3",
        "factor": 8.0,
        "original_max_position_embeddings": 8192,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
    },
}
LLAMA_31_8B: dict[str, Any] = {
    **LLAMA_31_70B,
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
}
MISTRAL_7B_V01: dict[str, Any] = {
    "model_type": "mistral",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 32000,
    "max_position_embeddings": 32768,
    "sliding_window": 4096,
    "torch_dtype": "bfloat16",
}
QWEN25_7B: dict[str, Any] = {
    "model_type": "qwen2",
    "hidden_size": 3584,
    "intermediate_size": 18944,
    "num_hidden_layers": 28,
    "num_attention_heads": 28,
    "num_key_value_heads": 4,
    "vocab_size": 152064,
    "max_position_embeddings": 32768,
    "sliding_window": 131072,
    "use_sliding_window": False,
    "torch_dtype": "bfloat16",
}
GEMMA3_27B: dict[str, Any] = {
    "model_type": "gemma3_text",
    "hidden_size": 5376,
    "intermediate_size": 21504,
    "num_hidden_layers": 62,
    "num_attention_heads": 32,
    "num_key_value_heads": 16,
    "head_dim": 128,
    "vocab_size": 262208,
    "max_position_embeddings": 131072,
    "sliding_window": 1024,
    "sliding_window_pattern": 6,
    "torch_dtype": "bfloat16",
}
AWQ = {"quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128}}


def model(config: dict[str, Any], name: str) -> ModelSpec:
    return spec_from_config(config, name=name, source="test")


class Lines:
    """Hands out spans on successive lines of one file, as a deployment file would have them."""

    def __init__(self, path: str = "plan.yaml") -> None:
        self.path = path
        self.line = 0

    def __call__(self, value: Any, raw: str | None = None, column: int = 3) -> Sourced[Any]:
        self.line += 1
        return Sourced(value, Span(self.path, self.line, column), raw)


def deployment(engine: str = "vllm", **fields: Any) -> Deployment:
    """A Deployment whose fields are given as plain values (or Sourced ones); ``claims`` as a
    dict of plain values. Each value gets its own line, in the order given."""
    at = Lines()
    claims = fields.pop("claims", {})
    values: dict[str, Any] = {
        key: value if isinstance(value, Sourced) else at(value) for key, value in fields.items()
    }
    stated: dict[str, Any] = {
        key: value if isinstance(value, Sourced) else at(value) for key, value in claims.items()
    }
    return Deployment(
        path="plan.yaml",
        span=Span("plan.yaml", 1, 1),
        name="plan",
        carrier="plan",
        engine=Sourced(engine, Span("plan.yaml", 1, 9)),
        claims=Claims(**stated),
        **values,
    )


def sized(dep: Deployment, spec: ModelSpec) -> Sizing:
    return size(dep, spec)


def problems(rule: type[Rule], dep: Deployment, spec: ModelSpec) -> list[Problem]:
    return list(rule().check(dep, size(dep, spec)))
