"""NVIDIA's NIMService custom resource read as the NIM it runs: image, env, resources, and the
multi-node parallelism the operator turns into NIM_TENSOR/PIPELINE_PARALLEL_SIZE."""

from __future__ import annotations

from kvlint.deploy.load import load_text

MULTI_NODE = """\
apiVersion: apps.nvidia.com/v1alpha1
kind: NIMService
metadata:
  name: deepseek-r1
spec:
  image:
    repository: nvcr.io/nim/deepseek-ai/deepseek-r1
    tag: "1.7.2"
  resources:
    limits:
      nvidia.com/gpu: 8
  multiNode:
    parallelism:
      pipeline: 2
      tensor: 8
"""


def test_multi_node_parallelism_sets_the_layout_and_the_groups_gpus() -> None:
    (dep,) = load_text(MULTI_NODE, display="nim.yaml").deployments
    assert dep.engine.value == "trtllm" and dep.model is not None
    assert dep.tensor_parallel_size is not None and dep.tensor_parallel_size.value == 8
    assert (dep.tensor_parallel_size.span.line, dep.tensor_parallel_size.span.column) == (15, 15)
    assert dep.pipeline_parallel_size is not None and dep.pipeline_parallel_size.value == 2
    assert dep.gpu_count is not None and dep.gpu_count.value == 8  # the pod's own
    assert dep.group_gpus is not None and dep.group_gpus.value == 16  # two pods of eight
    assert dep.layout_picked_by is None


def test_the_services_env_wins_over_the_parallelism() -> None:
    text = MULTI_NODE.replace(
        "  resources:\n",
        '  env:\n    - name: NIM_TENSOR_PARALLEL_SIZE\n      value: "4"\n  resources:\n',
    )
    (dep,) = load_text(text, display="nim.yaml").deployments
    assert dep.tensor_parallel_size is not None and dep.tensor_parallel_size.value == 4


def test_without_a_stated_layout_the_launcher_picks_it() -> None:
    text = MULTI_NODE.split("  multiNode:")[0]
    (dep,) = load_text(text, display="nim.yaml").deployments
    assert dep.tensor_parallel_size is None
    assert dep.layout_picked_by is not None and "NIM launcher" in dep.layout_picked_by
