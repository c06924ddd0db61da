"""KV504 conflicting-gpu-facts: node labels, instance types or DRA claims that name other GPUs."""

from __future__ import annotations

from kvlint.finding import Severity

from ._input_problem import InputProblemRule


class ConflictingGpuFacts(InputProblemRule):
    """## What it does
    Checks that the places a pod names its GPU agree. They are node labels
    (`nvidia.com/gpu.product`, `cloud.google.com/gke-accelerator`,
    `karpenter.k8s.aws/instance-gpu-name`, CoreWeave, Alibaba, Volcengine and AMD labels), the
    instance type it selects (`node.kubernetes.io/instance-type`: AWS, GCP, Azure, OCI) and
    the product a DRA device selector asks for; the pod must also ask for no more GPUs than
    that instance type has.

    ## Why is this bad?
    Every `nodeSelector` label must hold on the node at once: one that says `NVIDIA-L4` beside
    an instance type with A10Gs matches no node, and neither does a pod asking for 8 GPUs on a
    4-GPU instance type. The pod stays Pending with no error of its own, and kvlint's capacity
    checks would be about a GPU the pod can never get. A `nodeAffinity` `In` list of several
    GPUs is a choice, not a conflict: kvlint checks the one with the least memory.

    ## Example
    ```yaml
    # file: deploy.yaml
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: llm
    spec:
      template:
        spec:
          nodeSelector:
            node.kubernetes.io/instance-type: g5.12xlarge
            nvidia.com/gpu.product: NVIDIA-L4
          containers:
            - name: vllm
              image: vllm/vllm-openai:v0.11.0
              args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"]
              resources:
                limits:
                  nvidia.com/gpu: 1
    ```

    Use instead:
    ```yaml
    # file: deploy.yaml
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: llm
    spec:
      template:
        spec:
          nodeSelector:
            node.kubernetes.io/instance-type: g6.12xlarge
            nvidia.com/gpu.product: NVIDIA-L4
          containers:
            - name: vllm
              image: vllm/vllm-openai:v0.11.0
              args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"]
              resources:
                limits:
                  nvidia.com/gpu: 1
    ```
    """

    code = "KV504"
    name = "conflicting-gpu-facts"
    severity = Severity.ERROR
