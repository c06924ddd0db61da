"""Records built directly for unit tests (no file parsing): deployments, requests and settled
deployments, model specs (from config.json subsets, a dense shape or the catalog), GPUs and
sizings.

The one place tests make these: a Deployment's values are given plain, each on its own line of
``plan.yaml`` in the order given (the spans a file would give them), or as Sourced values kept
as they are.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kvlint.deployment import Claims
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.engines import home
from kvlint.engines.sizer import size
from kvlint.finding import Problem
from kvlint.finding import Span
from kvlint.gpus import GpuSpec
from kvlint.gpus import lookup_gpu
from kvlint.model.catalog import lookup
from kvlint.model.hf import spec_from_config
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec
from kvlint.model.spec import ModelSpec
from kvlint.rule import Rule
from kvlint.settled import Request
from kvlint.settled import Settled
from kvlint.sizing import Sizing

PATH = "plan.yaml"

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


class Lines:
    """Hands out spans on successive lines of one file, as a deployment file would have them."""

    def __init__(self, path: str = PATH) -> None:
        self.path = path
        self.line = 0

    def __call__(self, value: Any, raw: str | None = None, column: int = 3) -> Sourced[Any]:
        self.line += 1
        return Sourced(value, Span(self.path, self.line, column), raw)

    def sourced(self, value: Any) -> Sourced[Any]:
        """``value`` as it is when already Sourced, else on the next line."""
        return value if isinstance(value, Sourced) else self(value)


def deployment(
    engine: str | Sourced[str] = "vllm",
    *,
    path: str = PATH,
    name: str = "plan",
    carrier: str = "plan",
    claims: dict[str, Any] | None = None,
    env: dict[str, Any] | None = None,
    settings: dict[str, Any] | None = None,
    **fields: Any,
) -> Deployment:
    """A Deployment of ``path`` whose fields are given as plain values (or Sourced ones);
    ``claims`` (a plan's), ``env`` and ``settings`` (as the engine spells them) as dicts of
    them. Each plain value gets its own line, in the order given."""
    at = Lines(path)
    values = {key: at.sourced(value) for key, value in fields.items()}
    stated = {key: at.sourced(value) for key, value in (claims or {}).items()}
    return Deployment(
        path=path,
        span=Span(path, 1, 1),
        name=name,
        carrier=carrier,
        engine=engine if isinstance(engine, Sourced) else Sourced(engine, Span(path, 1, 9)),
        claims=Claims(**stated),
        env={key: at.sourced(value) for key, value in (env or {}).items()},
        settings={key: at.sourced(value) for key, value in (settings or {}).items()},
        **values,
    )


def request(engine: str = "vllm", **fields: Any) -> Request:
    """What a deployment asks of ``engine``, as ``deployment`` gives its fields; ``extras``
    (the engine's settings without a field, keyed as it spells them) as a dict of them."""
    at = Lines()
    extras = {key: at.sourced(value) for key, value in fields.pop("extras", {}).items()}
    values = {key: at.sourced(value) for key, value in fields.items()}
    return Request(engine=engine, span=Span(PATH, 1, 1), extras=extras, **values)


def settled(
    engine: str = "vllm", *, spec: ModelSpec, gpu: GpuSpec | None, **fields: Any
) -> Settled:
    """What ``engine`` will run with for the request ``fields`` make, serving ``spec`` on
    ``gpu`` (the engine's own settle step)."""
    return home(engine).resolve(request(engine, **fields), spec, gpu)


def catalog_model(ref: str) -> ModelSpec:
    """A model of kvlint's built-in catalog (no network)."""
    spec = lookup(ref)
    assert spec is not None, ref
    return spec


def catalog_gpu(name: str) -> GpuSpec:
    """A GPU of kvlint's catalog, as a file names it."""
    found = lookup_gpu(name)
    assert found is not None, name
    return found


def model(config: dict[str, Any], name: str) -> ModelSpec:
    """The ModelSpec of a config.json subset (one of the dicts above, or changed from one)."""
    return spec_from_config(config, name=name, source="test")


def dense(
    *,
    layers: int = 32,
    kv_heads: int = 8,
    head_dim: int = 128,
    hidden: int = 4096,
    heads: int = 32,
    vocab: int = 128256,
    max_len: int = 131072,
    dtype: str = "bfloat16",
    param_count: int | None = 8_030_261_248,
) -> ModelSpec:
    """A dense GQA model; the defaults are Llama-3.1-8B's shape."""
    layer = LayerSpec(CacheKind.FULL, kv_heads, head_dim, head_dim)
    return ModelSpec(
        name="synthetic/dense",
        model_type="llama",
        layers=(layer,) * layers,
        hidden_size=hidden,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        head_dim=head_dim,
        vocab_size=vocab,
        dtype=dtype,
        max_position_embeddings=max_len,
        param_count=param_count,
        intermediate_size=14336,
    )


def with_layers(spec: ModelSpec, layers: tuple[LayerSpec, ...], **changes: Any) -> ModelSpec:
    """``spec`` with other layers (a hybrid, windows) and any other field changed."""
    return replace(spec, layers=layers, **changes)


def sized(dep: Deployment, spec: ModelSpec) -> Sizing:
    return size(dep, spec)


def problems(rule: type[Rule], dep: Deployment, spec: ModelSpec) -> list[Problem]:
    """What one rule finds in ``dep`` serving ``spec``, sized as the linter sizes it."""
    return list(rule().check(dep, size(dep, spec)))
