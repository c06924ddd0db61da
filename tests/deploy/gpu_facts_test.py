"""GPU facts wherever teams write them: node labels, instance types, DRA claims, extended
resources, KubeAI profiles; the catalog places each, and facts that disagree are KV504."""

from __future__ import annotations

import pytest

from kvlint.deploy.load import load_text
from kvlint.deployment import Deployment
from kvlint.gpus import instance_gpu_count
from kvlint.gpus import lookup_gpu

CONTAINER = """\
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          command: [vllm, serve, Qwen/Qwen3-8B]
          resources: {limits: {nvidia.com/gpu: 1}}
"""


def _pod(scheduling: str, container: str = CONTAINER, extra: str = "") -> Deployment:
    text = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: llm}\nspec:\n  template:\n"
        f"    spec:\n{scheduling}{container}{extra}"
    )
    result = load_text(text, display="deploy.yaml")
    (dep,) = result.deployments
    return dep


@pytest.mark.parametrize(
    ("label", "value", "gpu"),
    [
        ("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3", "H100-SXM-80GB"),
        ("nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB", "A100-SXM-40GB"),
        ("nvidia.com/gpu.product", "Tesla-T4", "T4-16GB"),
        ("nvidia.com/gpu.product", "NVIDIA-GeForce-RTX-4090", "RTX-4090-24GB"),
        ("cloud.google.com/gke-accelerator", "nvidia-a100-80gb", "A100-SXM-80GB"),
        ("cloud.google.com/gke-accelerator", "nvidia-h200-141gb", "H200-141GB"),
        ("cloud.google.com/gke-accelerator", "nvidia-tesla-a100", "A100-SXM-40GB"),
        ("cloud.google.com/gke-tpu-accelerator", "tpu-v6e-slice", "TPU-v6e"),
        ("karpenter.k8s.aws/instance-gpu-name", "l40s", "L40S-48GB"),
        ("k8s.amazonaws.com/accelerator", "nvidia-tesla-v100", "V100-16GB"),
        ("gpu.nvidia.com/class", "A100_NVLINK_80GB", "A100-SXM-80GB"),
        ("gpu.nvidia.com/class", "H100_NVLINK_80GB", "H100-SXM-80GB"),
        ("aliyun.accelerator/nvidia_name", "Tesla-V100-SXM2-16GB", "V100-16GB"),
        ("machine.cluster.vke.volcengine.com/gpu-name", "NVIDIA-L20", "L20-48GB"),
        ("amd.com/gpu.product-name", "AMD_Instinct_MI300X_OAM", "MI300X-192GB"),
        ("node.kubernetes.io/instance-type", "p5.48xlarge", "H100-SXM-80GB"),
        ("node.kubernetes.io/instance-type", "a3-ultragpu-8g", "H200-141GB"),
        ("node.kubernetes.io/instance-type", "Standard_ND96isr_H100_v5", "H100-SXM-80GB"),
        ("node.kubernetes.io/instance-type", "BM.GPU.A100-v2.8", "A100-SXM-80GB"),
        ("node.kubernetes.io/instance-type", "ml.g6e.12xlarge", "L40S-48GB"),
    ],
)
def test_each_label_names_its_gpu(label: str, value: str, gpu: str) -> None:
    dep = _pod(f"      nodeSelector:\n        {label}: {value}\n")
    assert dep.gpu is not None and dep.gpu.value == value
    found = lookup_gpu(dep.gpu.value)
    assert found is not None and found.key == gpu
    assert dep.problems == []


@pytest.mark.parametrize(
    ("instance", "gpus"),
    [
        ("g4dn.12xlarge", 4),
        ("g5.48xlarge", 8),
        ("g6e.xlarge", 1),
        ("p4de.24xlarge", 8),
        ("p5en.48xlarge", 8),
        ("p6-b200.48xlarge", 8),
        ("a2-ultragpu-4g", 4),
        ("a4-highgpu-8g", 8),
        ("g2-standard-96", 8),
        ("g4-standard-192", 4),
        ("Standard_NC24ads_A100_v4", 1),
        ("Standard_ND96isr_MI300X_v5", 8),
        ("VM.GPU.A10.2", 2),
        ("BM.GPU.L40S.4", 4),
        ("ml.p5.48xlarge", 8),
    ],
)
def test_instance_types_know_their_gpu_count(instance: str, gpus: int) -> None:
    assert instance_gpu_count(instance) == gpus
    assert lookup_gpu(instance) is not None


def test_karpenter_gpu_memory_sizes_a_name_that_gives_none() -> None:
    dep = _pod(
        "      nodeSelector:\n        karpenter.k8s.aws/instance-gpu-name: a100\n"
        "        karpenter.k8s.aws/instance-gpu-memory: '81920'\n"
    )
    assert dep.gpu is not None and dep.gpu.value == "a100"
    # The deployment keeps the name as written; the memory label is why the catalog's 80 GB
    # part is the fact checked for agreement (no KV504 against an 80 GB product label).
    assert dep.problems == []


def test_an_affinity_in_list_is_checked_on_the_smallest_gpu() -> None:
    affinity = (
        "      affinity:\n        nodeAffinity:\n"
        "          requiredDuringSchedulingIgnoredDuringExecution:\n"
        "            nodeSelectorTerms:\n            - matchExpressions:\n"
        "              - key: nvidia.com/gpu.product\n                operator: In\n"
        "                values: [NVIDIA-H100-80GB-HBM3, NVIDIA-A100-SXM4-40GB, NVIDIA-L40S]\n"
    )
    dep = _pod(affinity)
    assert dep.gpu is not None and dep.gpu.value == "NVIDIA-A100-SXM4-40GB"
    assert dep.problems == []  # a choice of GPUs is not a conflict


def test_mig_slices_are_gpus_of_their_own() -> None:
    slice_ = lookup_gpu("NVIDIA-A100-SXM4-80GB-MIG-3g.40gb")
    whole = lookup_gpu("NVIDIA-A100-SXM4-80GB")
    assert slice_ is not None and whole is not None
    assert slice_.total_bytes == whole.total_bytes // 2
    mig = CONTAINER.replace("nvidia.com/gpu: 1", "nvidia.com/mig-1g.10gb: 1")
    dep = _pod("", mig)
    assert dep.gpu is not None and dep.gpu.value == "mig-1g.10gb"
    assert dep.gpu_count is not None and dep.gpu_count.value == 1


def test_accelerators_that_are_not_gpus_are_named_not_sized() -> None:
    gaudi = CONTAINER.replace("nvidia.com/gpu: 1", "habana.ai/gaudi: 2")
    dep = _pod("", gaudi)
    assert dep.gpu is not None and dep.gpu.value == "Intel Gaudi"
    assert dep.gpu_count is not None and dep.gpu_count.value == 2
    spec = lookup_gpu(dep.gpu.value)
    assert spec is not None and spec.out_of_scope and spec.kind_phrase == "an HPU"
    ascend = CONTAINER.replace("nvidia.com/gpu: 1", "huawei.com/Ascend910: 8")
    dep = _pod("", ascend)
    assert dep.gpu is not None and dep.gpu.value == "Huawei Ascend"


DRA = """\
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: two-h100}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          allocationMode: ExactCount
          count: 2
          selectors:
          - cel:
              expression: device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"
"""


def test_dra_claims_give_the_gpu_count_and_product() -> None:
    container = (
        "      resourceClaims:\n      - {name: gpus, resourceClaimTemplateName: two-h100}\n"
        "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.11.0\n"
        "          command: [vllm, serve, Qwen/Qwen3-8B, --tensor-parallel-size, '2']\n"
        "          resources: {claims: [{name: gpus}]}\n"
    )
    dep = _pod("", container, DRA)
    assert dep.gpu_count is not None and dep.gpu_count.value == 2
    assert dep.gpu is not None and dep.gpu.value == "NVIDIA H100 80GB HBM3"
    assert dep.gpu_count.span.line == 26  # `count: 2` in the template
    gpu = lookup_gpu(dep.gpu.value)
    assert gpu is not None and gpu.key == "H100-SXM-80GB"


DRA_V1BETA1 = """\
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata: {name: two-h100}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        deviceClassName: gpu.nvidia.com
        count: 2
        selectors:
        - cel:
            expression: device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"
"""


def test_dra_v1beta1_request_and_a_disagreeing_label() -> None:
    container = (
        "      nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n"
        "      resourceClaims:\n      - {name: gpus, resourceClaimTemplateName: two-h100}\n"
        "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.11.0\n"
        "          command: [vllm, serve, Qwen/Qwen3-8B]\n"
    )
    dep = _pod("", container, DRA_V1BETA1)
    assert dep.gpu_count is not None and dep.gpu_count.value == 2
    (problem,) = dep.problems
    assert problem.code == "KV504"
    assert "a DRA device selector" in problem.message and "NVIDIA L4" in problem.message


@pytest.mark.parametrize(
    ("profile", "gpu", "count"),
    [
        ("nvidia-gpu-l4:8", "L4-24GB", 8),
        ("nvidia-gpu-h100:2", "H100-SXM-80GB", 2),
        ("nvidia-gpu-a100-80gb:1", "A100-SXM-80GB", 1),
        ("nvidia-gpu-gh200:1", "GH200-96GB", 1),
        ("amd-gpu-mi300x:8", "MI300X-192GB", 8),
        ("google-tpu-v5e-2x2:4", "TPU-v5e", 4),
    ],
)
def test_kubeai_resource_profiles(profile: str, gpu: str, count: int) -> None:
    text = (
        "apiVersion: kubeai.org/v1\nkind: Model\nmetadata: {name: m}\nspec:\n"
        "  url: hf://Qwen/Qwen3-8B\n  engine: VLLM\n"
        f"  resourceProfile: {profile}\n"
    )
    (dep,) = load_text(text, display="model.yaml").deployments
    assert dep.gpu is not None
    found = lookup_gpu(dep.gpu.value)
    assert found is not None and found.key == gpu
    assert dep.gpu_count is not None and dep.gpu_count.value == count
