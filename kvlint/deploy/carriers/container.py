"""A container (image, command, args, env, GPU resources) -> a Deployment, for every carrier.

Kubernetes pods, KServe, Dynamo, compose services and chart values all end here: the argv is
``command`` + ``args`` with Kubernetes ``$(VAR)`` expansion, the engine is found by its program
(also inside ``sh -c``) or by an image whose entrypoint is the server, and env vars the engine
reads are applied before flags (flags win, as in every engine).
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field

from kvlint import codes
from kvlint.deploy import nim
from kvlint.deploy.argv import Token
from kvlint.deploy.argv import from_node
from kvlint.deploy.argv import substitute
from kvlint.deploy.argv import words
from kvlint.deploy.compose_vars import shell_defaults
from kvlint.deploy.detect import Invocation
from kvlint.deploy.detect import engine_fork
from kvlint.deploy.detect import find_invocation
from kvlint.deploy.detect import image_engine
from kvlint.deploy.detect import nim_llm
from kvlint.deploy.detect import nim_model
from kvlint.deploy.detect import simulator
from kvlint.deploy.detect import version_from_image
from kvlint.deploy.flags import is_run_time_value
from kvlint.deploy.flags import parse_argv
from kvlint.deploy.gpu_facts import DeviceRequest
from kvlint.deploy.gpu_facts import GpuFact
from kvlint.deploy.gpu_facts import choose
from kvlint.deploy.gpu_facts import claimed_devices
from kvlint.deploy.gpu_facts import conflicts
from kvlint.deploy.gpu_facts import resource_device
from kvlint.deploy.gpu_facts import scheduling_facts
from kvlint.deploy.interpret import Engine
from kvlint.deploy.mounted import ConfigFiles
from kvlint.deploy.mounted import mounted_file
from kvlint.deploy.mounted import projections
from kvlint.deploy.search import image_text
from kvlint.deploy.serving import client_image
from kvlint.deploy.serving import engine_title
from kvlint.deploy.serving import flags_engine
from kvlint.deploy.serving import idles
from kvlint.deploy.serving import is_client
from kvlint.deploy.serving import other_image
from kvlint.deploy.serving import other_program
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.engines import ENGINES
from kvlint.finding import InputProblem
from kvlint.finding import Severity
from kvlint.finding import Span
from kvlint.gpus import lookup_gpu
from kvlint.source.nodes import Mapping
from kvlint.source.nodes import Node
from kvlint.source.nodes import Scalar
from kvlint.source.nodes import Sequence

GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu", "gpu")

# NVIDIA Dynamo's own dynamo.vllm flags (components/src/dynamo/vllm/args.py ``parse_args``),
# removed before vLLM reads the rest: flag -> whether it takes values.
DYNAMO_FLAGS = {
    "--is-prefill-worker": False,
    "--is-decode-worker": False,
    "--disaggregation-mode": True,
    "--migration-limit": True,
    "--connector": True,  # nargs="*"
    "--dyn-tool-call-parser": True,
    "--dyn-reasoning-parser": True,
    "--dyn-endpoint-types": True,
    "--custom-jinja-template": True,
    "--multimodal-processor": False,
    "--multimodal-encode-worker": False,
    "--multimodal-worker": False,
    "--multimodal-decode-worker": False,
    "--multimodal-encode-prefill-worker": False,
    "--enable-multimodal": False,
    "--mm-prompt-template": True,
    "--store-kv": True,
    "--request-plane": True,
    "--use-vllm-tokenizer": False,
    "--dump-config-to": True,
    "--endpoint": True,
}


@dataclass
class PodFacts:
    """What the pod around a container says: GPU type from scheduling, labels, and what the
    GPU facts were (for KV504) and the DRA claims it can use."""

    gpu: Sourced[str] | None = None
    annotations: dict[str, Sourced[str]] = field(default_factory=dict)
    gpu_facts: list[GpuFact] = field(default_factory=list)
    pod_spec: Mapping | None = None
    devices: dict[str, DeviceRequest] = field(default_factory=dict)
    # The file's ConfigMap YAML files, and where to note the ones a container reads.
    config_files: ConfigFiles = field(default_factory=dict)
    mounted: set[tuple[int, int]] = field(default_factory=set)


def scalar_sourced(node: Node | None) -> Sourced[str] | None:
    if isinstance(node, Scalar) and node.value is not None and node.text != "":
        return Sourced(node.text, node.span, node.raw)
    return None


# A GPU count or parallel size above this is no deployment (and would cost a loop per stage).
MAX_COUNT = 4096


def _sglang_diffusion(invocation: Invocation) -> bool:
    return invocation.engine == "sglang" and any(
        token.text.partition("=")[0] == "--num-gpus" for token in invocation.args
    )


def int_sourced(node: Node | None, problems: list[InputProblem], what: str) -> Sourced[int] | None:
    if not isinstance(node, Scalar) or node.value is None or is_run_time_value(node.text):
        return None  # unset, or filled in at deploy time (`$(GPUS)`, `###ZARF_VAR_GPUS###`)
    try:
        value = int(str(node.value).strip())
    except ValueError:
        message = f"{what} must be a whole number, got `{node.text}`"
        problems.append(InputProblem(codes.INVALID_SETTING, node.span, message, Severity.ERROR))
        return None
    if not 0 <= value <= MAX_COUNT:  # GPU counts and parallel sizes: the arithmetic loops on them
        shown = node.text if len(node.text) <= 24 else f"a number of {len(node.text)} characters"
        message = f"{what} must be a GPU count from 0 to {MAX_COUNT:,}, got `{shown}`"
        problems.append(InputProblem(codes.INVALID_SETTING, node.span, message, Severity.ERROR))
        return None
    return Sourced(value, node.span, node.raw)


def env_tokens(node: Node | None) -> dict[str, Token]:
    """Kubernetes ``env`` (a list of name/value), or a mapping, or compose ``KEY=value`` items."""
    env: dict[str, Token] = {}
    if isinstance(node, Sequence):
        for item in node.items:
            if isinstance(item, Mapping):
                name = item.text_of("name")
                value = item.scalar("value")
                if name and value is not None and value.value is not None:
                    env[name] = Token(value.text, value)
            elif isinstance(item, Scalar) and "=" in item.text:
                var = item.text.partition("=")[0]
                env[var.strip()] = Token(item.text, item).tail(len(var) + 1)
    elif isinstance(node, Mapping):
        for key_node, value_node in node.items:
            if isinstance(value_node, Scalar) and value_node.value is not None:
                env[key_node.text] = Token(value_node.text, value_node)
    return env


def gpu_from_resources(resources: Node | None, problems: list[InputProblem]) -> Sourced[int] | None:
    """GPUs per pod: ``limits`` first (what the scheduler enforces), then ``requests``."""
    if not isinstance(resources, Mapping):
        return None
    for section in ("limits", "requests"):
        block = resources.mapping(section)
        if block is None:
            continue
        for key in GPU_RESOURCES:
            count = int_sourced(block.get(key), problems, f"`{key}`")
            if count is not None:
                return count
    return None


def gpu_from_scheduling(pod_spec: Mapping | None) -> Sourced[str] | None:
    """The GPU named by ``nodeSelector`` or required node affinity, as written
    (``kvlint.deploy.gpu_facts`` says which label wins and which disagree)."""
    return choose(scheduling_facts(pod_spec))


def container_deployment(
    container: Mapping,
    *,
    name: str,
    carrier: str,
    problems: list[InputProblem],
    pod: PodFacts | None = None,
    command_key: str = "command",
    args_key: str = "args",
    env_key: str = "env",
    extra_env: Iterable[tuple[str, Token]] = (),
    default_engine: str | None = None,
    interpolate: Callable[[Token], Token] | None = None,
) -> Deployment | None:
    """The Deployment a container runs, or None when it runs no engine kvlint knows.

    ``interpolate`` rewrites every token first (compose's ``${VAR:-default}``)."""
    image, image_node = image_text(container)
    env = dict(extra_env)
    env.update(env_tokens(container.get(env_key)))
    command_node = container.get(command_key)
    command = from_node(command_node)
    args = from_node(container.get(args_key))
    if interpolate is not None:
        if image_node is not None and image == image_node.text:
            image = interpolate(Token(image, image_node)).text
        env = {key: interpolate(token) for key, token in env.items()}
        command = [interpolate(t) for t in command]
        args = [interpolate(t) for t in args]
    command = [substitute(t, env) for t in command]
    args = [substitute(t, env) for t in args]
    invocation = find_invocation(command + args, image, command_given=command_node is not None)
    if invocation is None and command_node is None and args and _vllm_entrypoint(image, args):
        # A vLLM build of someone else's (vllm-gaudi, a platform's own tag) given only vLLM's
        # flags: the container runs only if its entrypoint is the server, as vLLM's images are.
        invocation = Invocation("vllm", args, None, "the image's entrypoint")
    # Flags alone, for an operator that supplies the engine's image and entrypoint (llm-d's
    # ModelService, KServe's LLMInferenceService): they are that engine's.
    if invocation is None and command_node is None and args and default_engine is not None:
        known = image_engine(image)
        if known in (None, default_engine) and other_image(image) is None:
            invocation = Invocation(default_engine, args, None, "the operator's entrypoint")
    fork = engine_fork(image) if invocation is not None and image else None
    if fork is not None:
        message = (
            f"{name}: `{image}` is {fork} with options of its own, so its settings are not checked"
        )
        fork_at = image_node.span if image_node is not None else container.span
        problems.append(
            InputProblem(codes.UNRECOGNISED_DOCUMENT, fork_at, message, Severity.WARNING)
        )
        return None
    if invocation is not None and _sglang_diffusion(invocation):
        # `sglang serve` of an image or video model hands its flags to SGLang's diffusion
        # server (`--num-gpus`, `--backend`): it holds no KV cache, nothing of it is sized.
        message = f"{name}: SGLang's diffusion server (`--num-gpus`) holds no KV cache to check"
        where_node = command_node or container.get(args_key) or container
        problems.append(
            InputProblem(codes.UNRECOGNISED_DOCUMENT, where_node.span, message, Severity.INFO)
        )
        return None
    engine_name = invocation.engine if invocation is not None else None
    if engine_name is None and command_node is None and not args:
        # No argv at all: the image's own entrypoint, or settings carried in env vars only.
        engine_name = image_engine(image) if image else None
        if engine_name is None and any(key.startswith("OLLAMA_") for key in env):
            engine_name = "ollama"
        engine_name = engine_name or default_engine
    is_nim = bool(image) and nim_llm(image)
    if is_nim and engine_name is not None:
        engine_name = nim.profile_engine(image, env)
    if engine_name is None:
        reason = unread_server(
            image, command, args, command_given=command_node is not None, env=list(env)
        )
        if reason is not None:
            found = (command_node, container.get(args_key), image_node)
            where = next((node for node in found if node is not None), container)
            message = f"{name}: {reason}, so its settings are not checked"
            problems.append(
                InputProblem(codes.UNRECOGNISED_DOCUMENT, where.span, message, Severity.WARNING)
            )
        return None
    engine = ENGINES[engine_name]
    if invocation is not None and invocation.program is not None:
        engine_span: Span = invocation.program.span
        engine_raw = invocation.program.raw
    elif isinstance(image_node, Scalar):
        engine_span, engine_raw = image_node.span, image_node.raw
    else:
        engine_span, engine_raw = container.span, None
    dep = Deployment(
        path=container.source.path,
        span=container.span,
        name=name,
        carrier=carrier,
        engine=Sourced(engine_name, engine_span, engine_raw),
    )
    if isinstance(image_node, Scalar):
        version = version_from_image(image, engine_name)
        if version is not None:
            dep.engine_version = Sourced(version, image_node.span, image_node.raw)
    dep.env = {key: Sourced(token.text, token.span, token.raw) for key, token in env.items()}
    engine.apply_env(dep, env)
    if is_nim:
        served = nim_model(image)
        served_at = image_node.span if image_node is not None else container.span
        nim.apply(dep, engine, env, Sourced(served, served_at) if served else None)
    argvs: list[list[Token]] = []
    for var in engine.args_env:
        token = env.get(var)
        if token is not None and token.node is not None:
            argvs.append(words(token.node))
    if invocation is not None:
        tokens = invocation.args
        if interpolate is not None:
            tokens = [interpolate(t) for t in tokens]
        tokens = [shell_defaults(t, env) if t.aligner is not None else t for t in tokens]
        tokens = [substitute(t, env, shell=t.aligner is not None) for t in tokens]
        if invocation.launcher.startswith("dynamo."):
            tokens = _drop_flags(tokens, DYNAMO_FLAGS)
        argvs.append(tokens)
    files = _mounted_configs(dep, engine, argvs, container, pod)
    under = engine.spec.config_layer == "under"
    for root in files if under else ():
        engine.apply_mapping(dep, root)  # the command line read next overrides what it sets
    for tokens in argvs:
        engine.apply_args(dep, tokens)
    for root in files if not under else ():
        engine.apply_mapping(dep, root)  # the file updates what the command line set
    dep.gpu_count = gpu_from_resources(container.get("resources"), problems)
    facts: list[GpuFact] = []
    if pod is not None:
        dep.gpu = pod.gpu
        dep.annotations = dict(pod.annotations)
        facts = list(pod.gpu_facts)
        claimed = claimed_devices(pod.pod_spec, container, pod.devices)
        if claimed is not None:  # DRA: the claim's devices stand for `nvidia.com/gpu`
            dep.gpu_count = dep.gpu_count or claimed.gpus
            if claimed.product is not None:
                gpu = lookup_gpu(claimed.product.value)
                facts.append(GpuFact("a DRA device selector", claimed.product, gpu))
                dep.gpu = dep.gpu or claimed.product
    device = resource_device(container.get("resources"))
    if device is not None:  # a MIG slice, or an accelerator that is no GPU
        named, count = device
        dep.gpu = named if named.value.startswith("mig-") or dep.gpu is None else dep.gpu
        dep.gpu_count = dep.gpu_count or count
    dep.problems.extend(conflicts(facts, dep.gpu_count))
    return dep


def _mounted_configs(
    dep: Deployment,
    engine: Engine,
    argvs: list[list[Token]],
    container: Mapping,
    pod: PodFacts | None,
) -> list[Mapping]:
    """The engine's own config files (``--extra_llm_api_options /etc/x.yaml``, ``vllm serve
    --config /etc/vllm/config.yaml``) the pod mounts from a ConfigMap of the same file: their
    YAML, whose keys are read with their spans there. Found before the flags are applied, as
    an engine that layers the file under its command line reads it first. A file kvlint cannot
    see is said (KV905 info): its settings are not checked, which a clean result must not hide."""
    if pod is None or pod.pod_spec is None or not engine.spec.config_files:
        return []
    named: dict[str, tuple[Token, Token]] = {}  # option -> (flag, path) of its last occurrence
    for tokens in argvs:
        for name, flag, value in parse_argv(engine.spec, tokens).options:
            if name in engine.spec.config_files and value is not None:
                named[name] = (flag, value)
    found: list[Mapping] = []
    for option in engine.spec.config_files:
        if option not in named:
            continue
        flag, path = named[option]
        root = mounted_file(path.text, pod.pod_spec, container, pod.config_files)
        if root is not None:
            found.append(root)
            pod.mounted.add((root.span.line, root.span.column))
            continue
        if is_run_time_value(path.text):
            continue  # `--config $(CONFIG)`: the value itself is unknown, said elsewhere
        spelled = f"`{flag.text.partition('=')[0]} {path.text}`"
        projected = projections(path.text, pod.pod_spec, container)
        if projected:
            config_map, key = projected[0]
            where = f"the key `{key}` of the ConfigMap `{config_map}`"
            if config_map in pod.config_files:
                where, hint = f"{where}, which holds no such YAML key here", ""
            else:
                where += ", which is not in this file"
                hint = (
                    " (check the manifests in one stream: `kubectl kustomize DIR | kvlint check -`)"
                )
        else:
            where, hint = "a file in the container that no ConfigMap of this file is mounted at", ""
        message = (
            f"{dep.name}: {spelled} reads {where}, so the settings in it are not checked{hint}"
        )
        dep.problems.append(
            InputProblem(codes.UNRECOGNISED_DOCUMENT, path.span, message, Severity.INFO)
        )
    return found


def unread_server(
    image: str,
    command: list[Token],
    args: list[Token],
    *,
    command_given: bool,
    env: Iterable[str] = (),
) -> str | None:
    """Why a container that runs no engine kvlint reads still runs an LLM server (for KV905),
    or None when nothing says it serves a model."""
    argv = command + args
    if image and simulator(image):
        return None
    program = other_program(argv)
    if program is not None:
        return f"it runs {program}, a server kvlint does not read"
    if is_client(argv) or (command_given and idles(argv)):
        return None
    stack = other_image(image) if image and not client_image(image) else None
    if stack is not None:
        return f"the image `{image}` is {stack}, a server kvlint does not read"
    suspected = image_engine(image) if image else None
    if suspected is not None and command_given:
        shell = _shell(command)
        if shell is not None:
            return (
                f"the image looks like {suspected}, but its `{shell}` script runs no engine "
                f"command kvlint can read"
            )
        return (
            f"the image looks like {suspected}, but `{_program(command)}` is not a program "
            f"kvlint knows how to read"
        )
    if suspected is not None and args:
        return (
            f"kvlint does not know what the {engine_title(suspected)} image `{image}` starts by "
            f"itself, and `args` name no program it reads"
        )
    found = flags_engine(args, env) if not command_given else None
    if found is not None:
        engine, flags = found
        shown = ", ".join(f"`{flag}`" for flag in flags)
        if not image:  # Kubernetes requires an image: this is a patch of a manifest elsewhere
            return (
                f"`args` are {engine_title(engine)}'s flags ({shown}) in a container that names "
                "no image (a kustomize patch of a manifest kvlint does not see: check the "
                "rendered manifests, `kustomize build DIR | kvlint check -`)"
            )
        return (
            f"`args` are {engine_title(engine)}'s flags ({shown}), but kvlint does not know what "
            f"the image `{image or '?'}` runs: name the program in `command`"
        )
    return None


def _vllm_entrypoint(image: str, args: list[Token]) -> bool:
    """A vLLM image handed ``--flags`` (or a model then vLLM's own flags) with no program."""
    if not image or "$" in image or "{{" in image or image_engine(image) != "vllm":
        return False  # an image filled in at deploy time may be anything: said, not guessed
    if args[0].text.startswith("-"):
        return True
    found = flags_engine(args)
    return found is not None and found[0] == "vllm"


def _program(command: list[Token]) -> str:
    return command[0].text if command else "?"


def _shell(command: list[Token]) -> str | None:
    """``/bin/bash -c`` when the command is a shell running a script."""
    if len(command) < 2 or command[0].text.rsplit("/", 1)[-1] not in _SHELL_NAMES:
        return None
    flag = command[1].text
    return f"{command[0].text} {flag}" if flag.startswith("-") and "c" in flag else None


_SHELL_NAMES = frozenset({"sh", "bash", "ash", "dash", "zsh"})


def _drop_flags(tokens: list[Token], flags: dict[str, bool]) -> list[Token]:
    """Remove a wrapper's own flags (and their values) before the engine reads the rest."""
    out: list[Token] = []
    skipping = False
    for token in tokens:
        name, eq, _ = token.text.partition("=")
        if name in flags:
            skipping = flags[name] and not eq
            continue
        if skipping and not token.text.startswith("-"):
            continue
        skipping = False
        out.append(token)
    return out
