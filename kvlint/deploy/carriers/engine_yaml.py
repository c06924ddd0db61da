"""An engine's own config file: ``vllm serve --config file.yaml`` (and SGLang's ``--config``,
TensorRT-LLM's ``--extra_llm_api_options`` / ``--config`` YAML of LLM API fields).

Keys are CLI long names, dashes or underscores (vllm/utils/argparse_utils.py
``FlexibleArgumentParser.load_config_file``: every key becomes ``--key``).
"""

from __future__ import annotations

from kvlint.deploy.carriers.base import Context
from kvlint.deploy.flags import EngineSpec
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.engines import ENGINES
from kvlint.source.nodes import Mapping
from kvlint.source.nodes import Node

NAME = "engine_yaml"

# Keys only one engine spells so: they decide between vLLM and SGLang config files.
_SGLANG_ONLY = frozenset({"model-path", "context-length", "mem-fraction-static", "tp-size"})
# LLM API sections only TensorRT-LLM's YAML has (tensorrt_llm/llmapi/llm_args.py).
_TRTLLM_ONLY = frozenset(
    {"kv-cache-config", "cuda-graph-config", "moe-config", "disable-overlap-scheduler"}
)


def _keys(root: Node) -> list[str]:
    if not isinstance(root, Mapping):
        return []
    return [key.replace("_", "-") for key in root.keys()]  # noqa: SIM118


def engine_of(root: Node) -> str | None:
    """The engine whose flags most of the top-level keys are, when they are nearly all flags."""
    keys = _keys(root)
    if not keys or "apiVersion" in keys or "kvlint" in keys:
        return None
    engine = "sglang" if _SGLANG_ONLY.intersection(keys) else "vllm"
    if _TRTLLM_ONLY.intersection(keys):
        engine = "trtllm"
    spec = ENGINES[engine].spec
    # `hf-overrides.head_dim: 1024` is a key of the JSON option it names (vLLM's dotted form).
    # `no-enable-prefix-caching: true` is `--no-enable-prefix-caching` (vLLM's recipes write it).
    names = [_flag(spec, key) for key in keys]
    known = sum(1 for name in names if name is not None)
    # Most keys must be real flags, and one must be a setting kvlint checks (not only `model`,
    # `host`, `port`), so an application's own config is not taken for an engine's.
    # (A file of flags only, even `model:` alone, is a config.)
    relevant = any(name in spec.settings and name != spec.model_flag for name in names)
    relevant = relevant or (engine == "trtllm" and "kv-cache-config" in keys)
    if known == len(keys) or (relevant and known >= (len(keys) * 2 + 2) // 3):
        return engine
    return None


def _flag(spec: EngineSpec, key: str) -> str | None:
    spelled = "--" + _dotted_option(spec, key)
    return spec.canonical(spelled) or spec.negated(spelled)


def _dotted_option(spec: EngineSpec, key: str) -> str:
    option, _, path = key.partition(".")
    return option if path and spec.canonical("--" + option) in spec.dotted else key


def matches(root: Node) -> bool:
    return engine_of(root) is not None


def extract(root: Node, ctx: Context) -> list[Deployment]:
    assert isinstance(root, Mapping)
    engine_name = engine_of(root) or "vllm"
    engine = ENGINES[engine_name]
    dep = Deployment(
        path=ctx.path,
        span=root.span,
        name=f"{engine_name} config",
        carrier=NAME,
        engine=Sourced(engine_name, root.source.span(root.start, key="$")),
    )
    engine.apply_mapping(dep, root)
    return [dep]
