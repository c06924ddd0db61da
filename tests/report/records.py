"""Hand-made records for the reporter tests: Llama 3.1 8B on one H100, and its Sizing."""

from __future__ import annotations

from kvlint.arith.kv import kv_size
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.estimate import EngineEstimate
from kvlint.finding import Finding
from kvlint.finding import Fix
from kvlint.finding import Severity
from kvlint.finding import Span
from kvlint.gpus import GpuSpec
from kvlint.linter import DeploymentResult
from kvlint.linter import Summary
from kvlint.model.hf import spec_from_config
from kvlint.sizing import Sizing
from kvlint.units import GiB
from testing.builders import deployment

# The real config.json of meta-llama/Llama-3.1-8B, the keys the arithmetic reads.
LLAMA_31_8B = {
    "architectures": ["LlamaForCausalLM"],
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "max_position_embeddings": 131072,
    "model_type": "llama",
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "torch_dtype": "bfloat16",
    "vocab_size": 128256,
}

DEPLOY_YAML = """\
model: meta-llama/Llama-3.1-8B-Instruct
max-model-len: 32768
max-num-seqs: 256
gpu-memory-utilization: 0.9
"""

H100 = GpuSpec("H100-SXM-80GB", "NVIDIA H100 80GB HBM3", 85_045_510_144)


def vllm_config(path: str, *, max_num_seqs: int | None = 256) -> Deployment:
    """DEPLOY_YAML read from ``path``: its values where the file has them."""

    def at(line: int, column: int, key: str) -> Span:
        return Span(path, line, column, key)

    return deployment(
        Sourced("vllm", at(1, 1, "")),
        path=path,
        name="vllm config",
        carrier="engine_yaml",
        model=Sourced("meta-llama/Llama-3.1-8B-Instruct", at(1, 8, "model")),
        max_model_len=Sourced(32768, at(2, 16, "max-model-len")),
        max_num_seqs=(
            Sourced(max_num_seqs, at(3, 15, "max-num-seqs")) if max_num_seqs is not None else None
        ),
        gpu=Sourced("H100", at(1, 1, "gpu (configured)")),
    )


def sizing(*, with_engine: bool = True) -> Sizing:
    spec = spec_from_config(LLAMA_31_8B, name="meta-llama/Llama-3.1-8B-Instruct")
    kv = kv_size(spec)
    engine = None
    if with_engine:
        available = 60 * GiB  # 491,520 tokens of 128 KiB: 15 sequences of 32,768
        engine = EngineEstimate(
            engine="vllm",
            version="0.11",
            max_model_len=32768,
            gpu_total_bytes=H100.total_bytes,
            available_kv_bytes=available,
            kv_cache_tokens=available // kv.per_token_bytes,
            max_concurrency=available // kv.per_token_bytes / 32768,
            fits=True,
        )
    missing = () if with_engine else ("GPU type",)
    return Sizing(
        spec=spec, kv=kv, gpu=H100 if with_engine else None, engine=engine, missing=missing
    )


KV301 = Finding(
    code="KV301",
    name="max-num-seqs-over-kv-budget",
    severity=Severity.ERROR,
    span=Span("deploy.yaml", 3, 15, "max-num-seqs", end_column=18),
    message="`max_num_seqs` 256 sequences of 32,768 tokens need 1 TiB; the pool admits 15",
    fix=Fix("Lower `max_num_seqs` to 15"),
)


def result(path: str = "deploy.yaml", findings: tuple[Finding, ...] = (KV301,)) -> DeploymentResult:
    return DeploymentResult(vllm_config(path), sizing(), "catalog", "", findings)


def summary(by_severity: dict[str, int], files: int = 1, deployments: int = 1) -> Summary:
    total = sum(by_severity.values())
    return Summary(files, deployments, by_severity, (), Severity.WARNING, 1 if total else 0)
