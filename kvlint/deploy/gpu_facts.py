"""The GPU a pod runs on, from every place teams say it, and whether those places agree.

A pod names its GPU through node labels (in ``nodeSelector`` or required node affinity): the
GPU's product name (NVIDIA GPU feature discovery, GKE, Karpenter, Alibaba, Volcengine,
CoreWeave, AMD's node labeller), an instance type (AWS, GCP, Azure, OCI), the GPU memory; or
through a DRA resource claim whose device selector names the product; or through the extended
resource it requests (``habana.ai/gaudi``: an accelerator kvlint does not size). Every such
fact is kept; the most specific one that kvlint can place is the pod's GPU, and facts that
name different GPUs are a finding (KV504): no node has both labels, so the pod never schedules.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from kvlint import codes
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.finding import InputProblem
from kvlint.finding import Severity
from kvlint.gpus import GpuSpec
from kvlint.gpus import instance_gpu_count
from kvlint.gpus import lookup_gpu
from kvlint.lazy_re import lazy
from kvlint.source.nodes import Mapping
from kvlint.source.nodes import Node
from kvlint.source.nodes import Scalar
from kvlint.source.nodes import Sequence

# Node labels that name the GPU, most specific first (the order in which one is chosen).
PRODUCT_LABELS = (
    "nvidia.com/gpu.product",  # NVIDIA GPU feature discovery: NVIDIA-H100-80GB-HBM3
    "cloud.google.com/gke-accelerator",  # GKE: nvidia-h100-80gb
    # A GKE TPU slice (tpu-v6e-slice): kvlint knows it is a TPU and says so instead of asking
    # for a GPU the pod does not have.
    "cloud.google.com/gke-tpu-accelerator",
    "gpu.nvidia.com/class",  # CoreWeave: A100_NVLINK_80GB
    "gpu.nvidia.com/model",  # CoreWeave's newer clusters
    "aliyun.accelerator/nvidia_name",  # Alibaba ACK: Tesla-V100-SXM2-16GB
    "machine.cluster.vke.volcengine.com/gpu-name",  # Volcengine VKE: NVIDIA-L20
    "amd.com/gpu.product-name",  # AMD GPU operator's node labeller: AMD_Instinct_MI300X_OAM
    "beta.amd.com/gpu.product-name",
    "karpenter.k8s.aws/instance-gpu-name",  # EKS Karpenter: h100, a10g, l40s
    "k8s.amazonaws.com/accelerator",  # EKS cluster autoscaler: nvidia-tesla-v100
)
# Labels that name an instance type (whose GPU and GPU count kvlint's table knows).
INSTANCE_LABELS = (
    "node.kubernetes.io/instance-type",
    "beta.kubernetes.io/instance-type",
    "karpenter.k8s.aws/instance-type",
    "nvidia.com/gpu.machine",  # GPU feature discovery: the system's product name
)
# Labels giving the GPU's memory in MiB (feature discovery, Karpenter).
MEMORY_LABELS = ("nvidia.com/gpu.memory", "karpenter.k8s.aws/instance-gpu-memory")
GPU_LABELS = PRODUCT_LABELS + INSTANCE_LABELS
# Extended resources of accelerators that are not GPUs kvlint sizes: the name they stand for.
ACCELERATOR_RESOURCES = {
    "habana.ai/gaudi": "Intel Gaudi",
    "aws.amazon.com/neuron": "AWS Neuron",
    "aws.amazon.com/neuroncore": "AWS Neuron",
    "aws.amazon.com/neurondevice": "AWS Neuron",
    "google.com/tpu": "Google TPU",
}
_ASCEND_RE = lazy(r"^huawei\.com/ascend", re.IGNORECASE)
# DRA device classes that hand out whole GPUs (NVIDIA's and AMD's DRA drivers).
GPU_DEVICE_CLASSES = frozenset({"gpu.nvidia.com", "gpu.amd.com", "mig.nvidia.com"})
# `device.attributes["gpu.nvidia.com"].productName == "NVIDIA A100-SXM4-80GB"` in a CEL selector.
_CEL_PRODUCT_RE = lazy(r"""productName\s*==\s*["']([^"']+)["']""")


class GpuFact(NamedTuple):
    """One place a pod names its GPU: where (the label or claim), the name as written, and the
    catalog entry it resolves to (None when kvlint cannot place it)."""

    source: str  # "nvidia.com/gpu.product", "node.kubernetes.io/instance-type", "DRA claim gpu"
    value: Sourced[str]
    gpu: GpuSpec | None
    instance: bool = False  # an instance type: it also says how many GPUs a node has


def scheduling_facts(pod_spec: Mapping | None) -> list[GpuFact]:
    """Every GPU fact in a pod spec's ``nodeSelector`` and required node affinity."""
    if pod_spec is None:
        return []
    facts: list[GpuFact] = []
    selector = pod_spec.mapping("nodeSelector")
    memory = _memory_mib(selector)
    for label in GPU_LABELS:
        value = _scalar(selector.get(label)) if selector is not None else None
        if value is not None:
            facts.append(_fact(label, value, memory))
    terms = pod_spec.dig(
        "affinity",
        "nodeAffinity",
        "requiredDuringSchedulingIgnoredDuringExecution",
        "nodeSelectorTerms",
    )
    if not isinstance(terms, Sequence):
        terms = pod_spec.dig("nodeSelectorTerms")  # production-stack modelSpec
    if isinstance(terms, Sequence):
        for label in GPU_LABELS:
            choice = _affinity_choice(terms, label, memory)
            if choice is not None:
                facts.append(choice)
    return facts


def _fact(label: str, value: Sourced[str], memory_mib: int | None) -> GpuFact:
    gpu = lookup_gpu(value.value)
    if gpu is not None and memory_mib is not None and not _states_memory(value.value):
        # `instance-gpu-name: a100` with `instance-gpu-memory: 81920`: the 80 GB part.
        sized = lookup_gpu(f"{value.value}-{round(memory_mib / 1024)}gb")
        gpu = sized or gpu
    return GpuFact(label, value, gpu, instance=label in INSTANCE_LABELS)


def _affinity_choice(terms: Sequence, label: str, memory: int | None) -> GpuFact | None:
    """An ``In`` list of GPUs: the pod lands on any of them, so the checks must hold on the one
    with the least memory; that is the fact kept."""
    candidates: list[GpuFact] = []
    for term in terms.items:
        expressions = term.sequence("matchExpressions") if isinstance(term, Mapping) else None
        for expression in expressions.items if expressions is not None else []:
            if not isinstance(expression, Mapping) or expression.text_of("key") != label:
                continue
            if expression.text_of("operator") not in ("In", None):
                continue
            values = expression.sequence("values")
            for item in values.items if values is not None else []:
                value = _scalar(item)
                if value is not None:
                    candidates.append(_fact(label, value, memory))
    if not candidates:
        return None
    placed = [c for c in candidates if c.gpu is not None]
    if not placed:
        return candidates[0]
    return min(placed, key=lambda c: c.gpu.total_bytes if c.gpu is not None else 0)


def choose(facts: list[GpuFact]) -> Sourced[str] | None:
    """The pod's GPU: the first fact kvlint can place (in label order), else the first fact
    (a name KV903 then reports as unknown)."""
    for fact in facts:
        if fact.gpu is not None:
            return fact.value
    return facts[0].value if facts else None


def conflicts(facts: list[GpuFact], gpu_count: Sourced[int] | None) -> list[InputProblem]:
    """KV504 for facts that name different GPUs, and for a pod asking for more GPUs than the
    instance type it selects has: either way no node fits and the pod stays Pending."""
    problems: list[InputProblem] = []
    placed = [f for f in facts if f.gpu is not None]
    first = placed[0] if placed else None
    for other in placed[1:]:
        assert first is not None and first.gpu is not None and other.gpu is not None
        if _same_gpu(first, other):
            continue
        message = (
            f"`{other.source}` `{other.value.value}` is {other.gpu.display}, but "
            f"`{first.source}` `{first.value.value}` is {first.gpu.display}: no node has both, "
            f"so the pod never schedules"
        )
        problems.append(
            InputProblem(codes.CONFLICTING_GPU_FACTS, other.value.span, message, Severity.ERROR)
        )
    if gpu_count is not None:
        for fact in facts:
            if not fact.instance:
                continue
            per_node = instance_gpu_count(fact.value.value)
            if per_node is not None and gpu_count.value > per_node:
                message = (
                    f"the pod requests {gpu_count.value} GPUs, but `{fact.value.value}` has "
                    f"{per_node}: no node of that type fits it, so the pod never schedules"
                )
                problems.append(
                    InputProblem(
                        codes.CONFLICTING_GPU_FACTS, gpu_count.span, message, Severity.ERROR
                    )
                )
    return problems


def _same_gpu(a: GpuFact, b: GpuFact) -> bool:
    """Whether two facts can name one GPU: the same chip, and the same memory where both names
    state it (Karpenter's `a100` fits an `NVIDIA-A100-SXM4-80GB` node)."""
    assert a.gpu is not None and b.gpu is not None
    if a.gpu.key == b.gpu.key:
        return True
    if chip(a.gpu) != chip(b.gpu):
        return False
    stated = [f for f in (a, b) if f.instance or _states_memory(f.value.value)]
    return len(stated) < 2  # both state a memory size, and they differ


def chip(gpu: GpuSpec) -> str:
    """The chip, without form factor or memory: ``A100-SXM-80GB`` and ``A100-PCIe-40GB`` are
    both ``A100``."""
    words = [w for w in gpu.key.split("-") if not re.fullmatch(r"\d+GB|SXM|PCIe|NVL", w)]
    return "-".join(words)


def _states_memory(name: str) -> bool:
    return re.search(r"\d+\s*(gb|gib|g)\b", name, re.IGNORECASE) is not None


def _memory_mib(selector: Mapping | None) -> int | None:
    for label in MEMORY_LABELS:
        value = selector.get(label) if selector is not None else None
        if isinstance(value, Scalar) and str(value.value).strip().isdigit():
            return int(str(value.value).strip())
    return None


def _scalar(node: Node | None) -> Sourced[str] | None:
    if isinstance(node, Scalar) and node.value is not None and node.text != "":
        return Sourced(node.text, node.span, node.raw)
    return None


def resource_device(resources: Node | None) -> tuple[Sourced[str], Sourced[int] | None] | None:
    """A device named by the extended resource a container requests, and how many: a MIG slice
    (``nvidia.com/mig-1g.10gb``, a GPU of its own to the engine), or an accelerator kvlint does
    not size (Gaudi, Neuron, Ascend, TPU), as names the GPU catalog knows."""
    if not isinstance(resources, Mapping):
        return None
    for section in ("limits", "requests"):
        block = resources.mapping(section)
        for key, value in block.items if block is not None else []:
            name = ACCELERATOR_RESOURCES.get(key.text)
            if name is None and _ASCEND_RE.match(key.text):
                name = "Huawei Ascend"
            if name is None and key.text.startswith("nvidia.com/mig-"):
                name = key.text.removeprefix("nvidia.com/")
            if name is None:
                continue
            count = None
            if isinstance(value, Scalar) and str(value.value).strip().isdigit():
                count = Sourced(int(str(value.value).strip()), value.span, value.raw)
            return Sourced(name, key.span, key.raw), count
    return None


class DeviceRequest(NamedTuple):
    """What a DRA ResourceClaim (or the claim a template stamps out) asks for."""

    gpus: Sourced[int] | None
    product: Sourced[str] | None


def device_requests(roots: list[Node]) -> dict[str, DeviceRequest]:
    """Every ResourceClaimTemplate and ResourceClaim among a file's documents, by name: the GPU
    count and product their device requests ask for (``resource.k8s.io`` v1beta1 and v1)."""
    found: dict[str, DeviceRequest] = {}
    for root in roots:
        if not isinstance(root, Mapping) or not (root.text_of("apiVersion") or "").startswith(
            "resource.k8s.io/"
        ):
            continue
        kind = root.text_of("kind")
        metadata = root.mapping("metadata")
        name = metadata.text_of("name") if metadata is not None else None
        spec = root.dig("spec", "spec") if kind == "ResourceClaimTemplate" else root.get("spec")
        if name is None or not isinstance(spec, Mapping):
            continue
        request = _requests(spec)
        if request is not None:
            found[name] = request
    return found


def _requests(spec: Mapping) -> DeviceRequest | None:
    requests = spec.dig("devices", "requests")
    total = 0
    where: Scalar | None = None
    product: Sourced[str] | None = None
    for item in requests.items if isinstance(requests, Sequence) else []:
        if not isinstance(item, Mapping):
            continue
        # v1 puts the request under `exactly`; v1beta1 on the request itself.
        body = item.mapping("exactly") or item
        if body.text_of("deviceClassName") not in GPU_DEVICE_CLASSES:
            continue
        count = body.scalar("count")
        mode = body.text_of("allocationMode") or "ExactCount"
        if mode != "ExactCount":
            return DeviceRequest(None, product)  # `All`: every GPU of the node, count unknown
        total += int(count.value) if count is not None and isinstance(count.value, int) else 1
        where = count if count is not None else where
        selectors = body.sequence("selectors")
        for selector in selectors.items if selectors is not None else []:
            cel = selector.dig("cel", "expression") if isinstance(selector, Mapping) else None
            match = _CEL_PRODUCT_RE.search(cel.text) if isinstance(cel, Scalar) else None
            if match is not None and isinstance(cel, Scalar):
                product = Sourced(match.group(1), cel.span, cel.raw)
    if total == 0:
        return None
    span_of = where if where is not None else requests
    assert span_of is not None
    return DeviceRequest(Sourced(total, span_of.span, None), product)


def claimed_devices(
    pod_spec: Mapping | None, container: Mapping, devices: dict[str, DeviceRequest]
) -> DeviceRequest | None:
    """The DRA devices a container uses: the pod's ``resourceClaims`` it names in its
    ``resources.claims`` (every pod claim when it names none), resolved in this file."""
    claims = pod_spec.sequence("resourceClaims") if pod_spec is not None else None
    if claims is None or not devices:
        return None
    used = container.dig("resources", "claims")
    wanted = (
        {item.text_of("name") for item in used.items if isinstance(item, Mapping)}
        if isinstance(used, Sequence)
        else None
    )
    count = 0
    span = None
    product: Sourced[str] | None = None
    for claim in claims.items:
        if not isinstance(claim, Mapping):
            continue
        if wanted is not None and claim.text_of("name") not in wanted:
            continue
        ref = claim.text_of("resourceClaimTemplateName") or claim.text_of("resourceClaimName")
        request = devices.get(ref or "")
        if request is None:
            source = claim.mapping("source")  # the v1alpha2 spelling
            ref = source.text_of("resourceClaimTemplateName") if source is not None else None
            request = devices.get(ref or "")
        if request is None:
            continue
        if request.gpus is not None:
            count += request.gpus.value
            span = request.gpus.span
        product = product or request.product
    if span is None and product is None:
        return None
    return DeviceRequest(Sourced(count, span) if span is not None else None, product)


_VISIBLE_DEVICES = ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES")


def read_visible_gpus(dep: Deployment) -> None:
    """What a container's environment says about the GPUs its engine reaches: a device list in
    ``CUDA_VISIBLE_DEVICES`` / ``NVIDIA_VISIBLE_DEVICES`` (numbers only: ``all`` or UUIDs say
    nothing countable), and a Ray cluster it joins (``RAY_ADDRESS``)."""
    for var in _VISIBLE_DEVICES:
        visible = dep.env.get(var)
        if visible is None:
            continue
        devices = [d.strip() for d in visible.value.split(",") if d.strip()]
        if devices and all(d.isdigit() for d in devices):
            dep.visible_gpus = Sourced(len(devices), visible.span, visible.raw)
            dep.visible_gpus_from = var
            break
    dep.joins_ray_cluster = "RAY_ADDRESS" in dep.env
