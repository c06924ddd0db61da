"""KServe: InferenceService, ServingRuntime / ClusterServingRuntime, LLMInferenceService.

An ``InferenceService`` predictor has containers, or a ``model`` served by the Hugging Face
runtime (its own flags, then vLLM's); ``LLMInferenceService`` is llm-d's vLLM with
``parallelism``.
"""

from __future__ import annotations

from kvlint import codes
from kvlint.deploy.argv import Token
from kvlint.deploy.argv import from_node
from kvlint.deploy.carriers.base import Context
from kvlint.deploy.carriers.container import PodFacts
from kvlint.deploy.carriers.container import container_deployment
from kvlint.deploy.carriers.container import gpu_from_scheduling
from kvlint.deploy.carriers.container import int_sourced
from kvlint.deploy.carriers.kubernetes import kind_of
from kvlint.deploy.carriers.kubernetes import object_name
from kvlint.deploy.carriers.kubernetes import pod_deployments
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.source.nodes import Mapping
from kvlint.source.nodes import Node
from kvlint.source.nodes import Scalar

NAME = "kserve"

_KINDS = ("InferenceService", "ServingRuntime", "ClusterServingRuntime", "LLMInferenceService")
# The Hugging Face server's own flags (kserve python/huggingfaceserver/huggingfaceserver/
# __main__.py and kserve.model_server's parser); the rest of its argv goes to vLLM.
_HF_SERVER_FLAGS = frozenset(
    {
        "--model_name",
        "--model_id",
        "--model_dir",
        "--model_revision",
        "--tokenizer_revision",
        "--backend",
        "--task",
        "--disable_lower_case",
        "--disable_special_tokens",
        "--tensor_input_names",
        "--return_probabilities",
        "--return_token_type_ids",
        "--max_length",
        "--max_log_len",
        "--predictor_host",
        "--predictor_protocol",
        "--predictor_use_ssl",
        "--predictor_request_timeout_seconds",
        "--http_port",
        "--grpc_port",
        "--workers",
        "--max_threads",
        "--configure_logging",
        "--log_config_file",
    }
)


def matches(root: Node) -> bool:
    found = kind_of(root)
    return found is not None and "kserve.io" in found[0] and found[1] in _KINDS


def extract(root: Node, ctx: Context) -> list[Deployment]:
    assert isinstance(root, Mapping)
    kind = root.text_of("kind")
    label = object_name(root)
    spec = root.mapping("spec")
    if spec is None:
        return []
    if kind == "LLMInferenceService":
        found = _llm_inference_service(spec, label, ctx)
    elif kind == "InferenceService":
        found = _inference_service(spec, label, ctx)
    else:
        found = pod_deployments(spec, label=label, carrier=NAME, ctx=ctx, default_engine=None)
    if not found and kind != "ServingRuntime":
        ctx.unrecognised(root.span, f"{label}: no container runs an engine kvlint reads")
    return found


def _inference_service(spec: Mapping, label: str, ctx: Context) -> list[Deployment]:
    predictor = spec.mapping("predictor")
    if predictor is None:
        return []
    model = predictor.mapping("model")
    if model is None:
        return pod_deployments(predictor, label=label, carrier=NAME, ctx=ctx)
    fmt = model.dig("modelFormat", "name")
    if not (isinstance(fmt, Scalar) and fmt.text.lower() == "huggingface"):
        return []
    # The Hugging Face runtime: its own flags, then vLLM's (unless --backend=huggingface).
    tokens = from_node(model.get("args"))
    if any(t.text in ("--backend=huggingface", "huggingface") for t in tokens):
        return []
    dep = container_deployment(
        model,
        name=f"{label} predictor",
        carrier=NAME,
        problems=ctx.problems,
        pod=PodFacts(gpu=gpu_from_scheduling(predictor)),
        default_engine="vllm",
        command_key="command",
        args_key="__none__",
    )
    if dep is None:
        return []
    from kvlint.engines import ENGINES

    engine = ENGINES["vllm"]
    own = [t for t in tokens if t.text.partition("=")[0] in _HF_SERVER_FLAGS]
    rest = [t for t in tokens if t.text.partition("=")[0] not in _HF_SERVER_FLAGS]
    # The server reads its argv with parse_known_args: a flag neither it nor vLLM knows is
    # dropped silently rather than refused, so it is kept in `unknown_flags`, not reported.
    before = len(dep.problems)
    engine.apply_args(dep, rest)
    dep.problems[before:] = [p for p in dep.problems[before:] if p.code != codes.UNKNOWN_FLAG]
    for token in own:
        flag, _, value = token.text.partition("=")
        if not value:
            continue
        tail = token.tail(len(flag) + 1)
        if flag == "--model_id":
            dep.model = Sourced(tail.text, tail.span, tail.raw)
        elif flag == "--max_length":  # dest="max_model_len" in the server's parser
            engine.set(dep, "max-model-len", tail.text, tail, spelled=flag)
    storage = model.scalar("storageUri")
    if dep.model is None and storage is not None and storage.text.startswith("hf://"):
        tail = Token(storage.text, storage).tail(5)
        dep.model = Sourced(tail.text, tail.span, tail.raw)
    return [dep]


def _llm_inference_service(spec: Mapping, label: str, ctx: Context) -> list[Deployment]:
    template = spec.mapping("template")
    deployments: list[Deployment] = []
    if template is not None:
        deployments = pod_deployments(
            template, label=label, carrier=NAME, ctx=ctx, default_engine="vllm"
        )
    model = spec.mapping("model")
    name = model.scalar("name") if model is not None else None
    uri = model.scalar("uri") if model is not None else None
    parallelism = spec.mapping("parallelism")
    for dep in deployments:
        dep.name = f"{label} {dep.name.split(' ', 1)[1]}"
        if dep.model is None:
            if name is not None:
                dep.model = Sourced(name.text, name.span, name.raw)
            elif uri is not None and uri.text.startswith("hf://"):
                tail = Token(uri.text, uri).tail(5)
                dep.model = Sourced(tail.text, tail.span, tail.raw)
        if parallelism is not None:
            # The controller passes these to vLLM as --tensor-parallel-size and friends.
            tp = int_sourced(parallelism.get("tensor"), ctx.problems, "`parallelism.tensor`")
            dp = int_sourced(parallelism.get("data"), ctx.problems, "`parallelism.data`")
            pp = int_sourced(parallelism.get("pipeline"), ctx.problems, "`parallelism.pipeline`")
            dep.tensor_parallel_size = dep.tensor_parallel_size or tp
            dep.data_parallel_size = dep.data_parallel_size or dp
            dep.pipeline_parallel_size = dep.pipeline_parallel_size or pp
            local = int_sourced(parallelism.get("dataLocal"), ctx.problems, "`dataLocal`")
            dep.data_parallel_size_local = dep.data_parallel_size_local or local
    return deployments
