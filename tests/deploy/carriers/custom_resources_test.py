"""Any custom resource: the containers under it that run an engine are read, wherever they are.

One case per operator shape (written here after each project's API types and samples): AIBrix,
llm-d, llmaz, NVIDIA NIM, OME, Seldon, BentoML, KAITO, Argo and Flux wrappers.
"""

from __future__ import annotations

import pytest

from kvlint.deploy.load import load_text
from kvlint.deployment import Deployment

VLLM = """\
- name: vllm
  image: vllm/vllm-openai:v0.10.0
  command: [vllm, serve, Qwen/Qwen3-8B, --max-model-len, "16384"]
  resources: {limits: {nvidia.com/gpu: 1}}
"""


def _indent(text: str, spaces: int) -> str:
    return "".join(" " * spaces + line + "\n" for line in text.splitlines())


def _one(text: str) -> Deployment:
    result = load_text(text, display="cr.yaml")
    assert [p.message for p in result.problems] == []
    (dep,) = result.deployments
    return dep


def test_aibrix_storm_service_roles() -> None:
    text = (
        "apiVersion: orchestration.aibrix.ai/v1alpha1\nkind: StormService\n"
        "metadata: {name: pd}\nspec:\n  template:\n    spec:\n      roles:\n"
        "        - name: prefill\n          template:\n            spec:\n"
        "              containers:\n"
        + _indent(VLLM, 16)
        + "        - name: decode\n          template:\n            spec:\n"
        "              containers:\n" + _indent(VLLM.replace("16384", "32768"), 16)
    )
    result = load_text(text, display="storm.yaml")
    assert result.problems == []
    prefill, decode = result.deployments
    assert prefill.name == "StormService/pd prefill container vllm"
    assert decode.name == "StormService/pd decode container vllm"
    assert prefill.carrier == "custom-resource"
    assert prefill.max_model_len is not None and prefill.max_model_len.value == 16384
    assert decode.max_model_len is not None and decode.max_model_len.value == 32768
    assert decode.gpu_count is not None and decode.gpu_count.value == 1


def test_aibrix_ray_cluster_fleet_head_runs_the_engine_over_the_workers() -> None:
    text = (
        "apiVersion: orchestration.aibrix.ai/v1alpha1\nkind: RayClusterFleet\n"
        "metadata: {name: fleet}\nspec:\n  template:\n    spec:\n"
        "      headGroupSpec:\n        template:\n          spec:\n            containers:\n"
        "              - name: ray-head\n                image: vllm/vllm-openai:v0.7.1\n"
        "                command: [/bin/bash, -c]\n                args:\n"
        '                  - "ray start --head && vllm serve Qwen/Qwen2.5-7B-Instruct'
        ' --tensor-parallel-size 2 --distributed-executor-backend ray"\n'
        "                resources: {limits: {nvidia.com/gpu: 1}}\n"
        "      workerGroupSpecs:\n        - groupName: small\n          replicas: 1\n"
        "          template:\n            spec:\n              containers:\n"
        "                - name: ray-worker\n                  image: vllm/vllm-openai:v0.7.1\n"
        '                  command: [/bin/bash, -c, "ray start --address=$HEAD --block"]\n'
        "                  resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    dep = _one(text)
    assert dep.name == "RayClusterFleet/fleet head container ray-head"
    assert dep.tensor_parallel_size is not None and dep.tensor_parallel_size.value == 2
    assert dep.gpu_count is not None and dep.gpu_count.value == 1
    assert dep.group_gpus is not None and dep.group_gpus.value == 2  # head 1 + 1 worker x 1


@pytest.mark.parametrize("version", ["v1", "v1alpha1"])
def test_llm_d_disaggregated_set_roles_of_leader_worker_templates(version: str) -> None:
    # v1 nests each role's LeaderWorkerSet template under `spec`; v1alpha1 puts it on the role.
    nest = "spec:\n" if version == "v1" else ""
    pad = 4 if version == "v1" else 2

    def role(name: str, size: int) -> str:
        body = f"{nest}" + _indent(
            f"leaderWorkerTemplate:\n  size: {size}\n  workerTemplate:\n    spec:\n"
            "      containers:\n" + _indent(VLLM, 8),
            pad - 2 if version == "v1" else 0,
        )
        return f"  - name: {name}\n" + _indent(body, 4)

    text = (
        f"apiVersion: disaggregatedset.x-k8s.io/{version}\nkind: DisaggregatedSet\n"
        "metadata: {name: ds}\nspec:\n  roles:\n" + role("prefill", 1) + role("decode", 2)
    )
    result = load_text(text, display="ds.yaml")
    assert result.problems == []
    names = [dep.name for dep in result.deployments]
    assert names == [
        "DisaggregatedSet/ds prefill worker container vllm",
        "DisaggregatedSet/ds decode worker container vllm",
    ]


def test_a_group_leader_is_read_and_its_workers_are_its_other_ranks() -> None:
    worker = VLLM.replace("Qwen/Qwen3-8B,", "Qwen/Qwen3-8B, --headless,")
    text = (
        "apiVersion: disaggregatedset.x-k8s.io/v1\nkind: DisaggregatedSet\n"
        "metadata: {name: ds}\nspec:\n  roles:\n  - name: decode\n    spec:\n"
        "      leaderWorkerTemplate:\n        size: 2\n"
        "        leaderTemplate:\n          spec:\n            containers:\n"
        + _indent(VLLM, 14)
        + "        workerTemplate:\n          spec:\n            containers:\n"
        + _indent(worker, 14)
    )
    dep = _one(text)
    assert dep.name == "DisaggregatedSet/ds decode leader container vllm"
    assert dep.group_gpus is not None and dep.group_gpus.value == 2
    assert dep.group_gpus.span.line == 9  # `size: 2`


def test_llm_d_model_service_flags_are_vllm_and_the_uri_is_its_claim() -> None:
    text = (
        "apiVersion: llm-d.ai/v1alpha1\nkind: ModelService\nmetadata: {name: llama}\n"
        "spec:\n  modelArtifacts: {uri: 'hf://meta-llama/Llama-3.2-3B-Instruct'}\n"
        "  decode:\n    replicas: 1\n    containers:\n    - name: vllm\n"
        "      args: [--max-model-len, '65536']\n"
    )
    dep = _one(text)
    assert dep.engine.value == "vllm"
    assert dep.name == "ModelService/llama decode container vllm"
    assert dep.model is not None and dep.model.value == "meta-llama/Llama-3.2-3B-Instruct"
    assert dep.claimed_by == "ModelService/llama"
    assert dep.max_model_len is not None and dep.max_model_len.value == 65536


OPEN_MODEL = """\
apiVersion: llmaz.io/v1alpha1
kind: OpenModel
metadata: {name: qwen}
spec:
  source: {modelHub: {modelID: Qwen/Qwen2.5-7B-Instruct}}
  inferenceConfig:
    flavors:
      - name: l4
        limits: {nvidia.com/gpu: 2}
        nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
---
"""


def test_llmaz_playground_takes_its_model_and_gpus_from_the_open_model() -> None:
    text = OPEN_MODEL + (
        "apiVersion: inference.llmaz.io/v1alpha1\nkind: Playground\nmetadata: {name: pg}\n"
        "spec:\n  modelClaim: {modelName: qwen}\n  backendRuntimeConfig:\n"
        "    backendName: sglang\n    args: [--context-length, '8192']\n"
    )
    dep = _one(text)
    assert (dep.name, dep.carrier, dep.engine.value) == ("Playground/pg", "llmaz", "sglang")
    assert dep.model is not None and dep.model.value == "Qwen/Qwen2.5-7B-Instruct"
    assert dep.model.span.line == 5  # where the OpenModel names it
    assert dep.claimed_by == "OpenModel/qwen"
    assert dep.gpu is not None and dep.gpu.value == "nvidia-l4"
    assert dep.gpu_count is not None and dep.gpu_count.value == 2
    assert dep.max_model_len is not None and dep.max_model_len.value == 8192


def test_llmaz_playground_defaults_to_vllm_and_refuses_quietly_nothing() -> None:
    text = OPEN_MODEL + (
        "apiVersion: inference.llmaz.io/v1alpha1\nkind: Playground\nmetadata: {name: pg}\n"
        "spec:\n  modelClaim: {modelName: qwen}\n"
    )
    assert _one(text).engine.value == "vllm"
    trt = text + "  backendRuntimeConfig: {backendName: tensorrt-llm}\n"
    result = load_text(trt, display="pg.yaml")
    assert result.deployments == []
    (problem,) = result.problems
    assert problem.code == "KV905" and problem.severity.name == "WARNING"
    assert "`tensorrt-llm` backend" in problem.message


def test_llmaz_service_workload_template_claims_the_open_model() -> None:
    text = OPEN_MODEL + (
        "apiVersion: inference.llmaz.io/v1alpha1\nkind: Service\nmetadata: {name: svc}\n"
        "spec:\n  modelClaims:\n    models: [{name: qwen, role: main}]\n"
        "  workloadTemplate:\n    size: 1\n    workerTemplate:\n      spec:\n"
        "        containers:\n        - name: model-runner\n"
        "          image: vllm/vllm-openai:v0.8.5\n"
        "          args: [--model, '{{ .ModelPath }}', --max-model-len, '4096']\n"
    )
    dep = _one(text)
    assert dep.name == "Service/svc worker container model-runner"
    assert dep.model is not None and dep.model.value == "Qwen/Qwen2.5-7B-Instruct"
    assert "model" not in dep.runtime
    assert dep.gpu_count is not None and dep.gpu_count.value == 2  # the flavor's limits


def test_nim_service_is_a_server_kvlint_does_not_read() -> None:
    text = (
        "apiVersion: apps.nvidia.com/v1alpha1\nkind: NIMService\nmetadata: {name: llama}\n"
        "spec:\n  image: {repository: nvcr.io/nim/meta/llama-3.1-8b-instruct, tag: '1.3.3'}\n"
        "  replicas: 1\n"
    )
    result = load_text(text, display="nim.yaml")
    assert result.deployments == []
    (problem,) = result.problems
    assert (problem.code, problem.severity.name, problem.span.line) == ("KV905", "WARNING", 1)
    assert "NVIDIA NIM `nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3`" in problem.message


def test_ome_runtime_runner_and_the_base_model_its_service_claims() -> None:
    text = (
        "apiVersion: ome.io/v1beta1\nkind: ClusterBaseModel\nmetadata: {name: qwen3-8b}\n"
        "spec:\n  storage: {storageUri: 'hf://Qwen/Qwen3-8B', path: /raid/models/qwen3-8b}\n"
        "---\napiVersion: ome.io/v1beta1\nkind: InferenceService\nmetadata: {name: qwen}\n"
        "spec:\n  model: {name: qwen3-8b}\n  engine:\n    minReplicas: 1\n"
        "    nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n"
        "    runner:\n      name: ome-container\n      image: docker.io/lmsysorg/sglang:v0.5.5\n"
        "      command: [python3, -m, sglang.launch_server, --model-path, $(MODEL_PATH),"
        " --tp-size, '1']\n"
        "      resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    dep = _one(text)
    assert dep.name == "InferenceService/qwen engine container ome-container"
    assert dep.engine.value == "sglang"
    assert dep.model is not None and dep.model.value == "Qwen/Qwen3-8B"
    assert dep.claimed_by == "ClusterBaseModel/qwen3-8b"
    assert dep.gpu is not None and dep.gpu.value == "NVIDIA-H100-80GB-HBM3"


def test_seldon_deployment_predictor_component_specs() -> None:
    text = (
        "apiVersion: machinelearning.seldon.io/v1\nkind: SeldonDeployment\n"
        "metadata: {name: llm}\nspec:\n  predictors:\n  - name: default\n"
        "    componentSpecs:\n    - spec:\n        containers:\n" + _indent(VLLM, 8)
    )
    assert _one(text).name == "SeldonDeployment/llm default container vllm"


def test_bentoml_deployment_extra_pod_spec() -> None:
    text = (
        "apiVersion: serving.yatai.ai/v2alpha1\nkind: BentoDeployment\nmetadata: {name: b}\n"
        "spec:\n  bento: llm-service\n  extraPodSpec:\n    containers:\n" + _indent(VLLM, 4)
    )
    assert _one(text).name == "BentoDeployment/b container vllm"


def test_argo_rollout_and_workflow_steps() -> None:
    rollout = (
        "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: r}\n"
        "spec:\n  template:\n    metadata: {labels: {app: r}}\n    spec:\n      containers:\n"
        + _indent(VLLM, 6)
    )
    assert _one(rollout).name == "Rollout/r container vllm"
    workflow = (
        "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: w}\n"
        "spec:\n  templates:\n  - name: serve\n"
        "    nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n"
        "    container:\n      image: vllm/vllm-openai:v0.10.0\n"
        "      command: [vllm, serve, Qwen/Qwen3-8B]\n"
    )
    dep = _one(workflow)
    assert dep.name == "Workflow/w serve container ?"
    assert dep.gpu is not None and dep.gpu.value == "NVIDIA-L4"


def test_argo_application_helm_values_as_a_string() -> None:
    text = (
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: app}\n"
        "spec:\n  sources:\n  - chart: vllm\n    helm:\n      values: |\n"
        "        image: {repository: vllm/vllm-openai, tag: v0.9.0}\n"
        "        maxModelLen: 8192\n        model: Qwen/Qwen3-8B\n"
    )
    dep = _one(text)
    assert dep.carrier == "helm"
    assert dep.max_model_len is not None and dep.max_model_len.value == 8192
    assert dep.max_model_len.span.line == 10


def test_init_containers_that_run_an_engine_are_read() -> None:
    text = (
        "apiVersion: example.com/v1\nkind: Server\nmetadata: {name: s}\n"
        "spec:\n  podSpec:\n    initContainers:\n"
        + _indent(VLLM, 4)
        + "    containers:\n    - {name: proxy, image: nginx:1.27, ports: [{containerPort: 80}]}\n"
    )
    assert _one(text).name == "Server/s initContainer vllm"


def test_other_objects_and_other_images_say_nothing() -> None:
    text = (
        "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 80}]}\n---\n"
        "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t}\n"
        "spec:\n  template:\n    spec:\n      containers:\n"
        "      - {name: web, image: nginx:1.27, args: [-g, daemon off;]}\n"
        "      - name: bench\n        image: vllm/vllm-openai:v0.10.0\n"
        "        command: [vllm, bench, serve, --model, Qwen/Qwen3-8B]\n"
        "      - name: pull\n        image: ollama/ollama:0.6.0\n"
        "        command: [ollama, pull, llama3.1]\n"
    )
    result = load_text(text, display="other.yaml")
    assert result.deployments == [] and result.problems == []


@pytest.mark.parametrize(
    ("container", "expected"),
    [
        (
            "image: nvcr.io/nvidia/tritonserver:24.08-trtllm-python-py3\n"
            "command: [tritonserver, --model-repository=/models]\n",
            "it runs Triton's TensorRT-LLM backend (`tritonserver`), a server kvlint does not read",
        ),
        (
            "image: openmmlab/lmdeploy:latest\n",
            "the image `openmmlab/lmdeploy:latest` is LMDeploy, a server kvlint does not read",
        ),
        (
            "image: acme/llm-server:1.2\n"
            "args: [--model, Qwen/Qwen3-8B, --tensor-parallel-size, '2',"
            " --max-model-len, '8192']\n",
            "`args` are vLLM's flags (`--max-model-len`, `--tensor-parallel-size`), but kvlint "
            "does not know what the image `acme/llm-server:1.2` runs: name the program in "
            "`command`",
        ),
        (
            "image: vllm/vllm-openai:v0.10.0\ncommand: [/opt/start-server.sh]\n",
            "the image looks like vllm, but `/opt/start-server.sh` is not a program kvlint knows "
            "how to read",
        ),
        (
            "image: lmsysorg/sglang:v0.4.6\nargs: [--model-path, Qwen/Qwen3-8B]\n",
            "kvlint does not know what the SGLang image `lmsysorg/sglang:v0.4.6` starts by itself, "
            "and `args` name no program it reads",
        ),
        (
            "image: python:3.11\ncommand: [python, -m, llama_cpp.server, --model, m.gguf]\n",
            "it runs llama-cpp-python (`python -m llama_cpp.server`), a server kvlint does not "
            "read",
        ),
    ],
)
def test_a_server_kvlint_cannot_read_is_a_warning_naming_the_container(
    container: str, expected: str
) -> None:
    text = (
        "apiVersion: example.com/v1\nkind: Server\nmetadata: {name: s}\n"
        "spec:\n  template:\n    spec:\n      containers:\n      - name: llm\n"
        + _indent(container, 8)
    )
    result = load_text(text, display="server.yaml")
    assert result.deployments == []
    (problem,) = result.problems
    assert problem.code == "KV905" and problem.severity.name == "WARNING"
    assert problem.message == (
        f"Server/s container llm: {expected}, so its settings are not checked"
    )


def test_an_image_named_by_a_variable_is_said_not_guessed() -> None:
    text = (
        "apiVersion: example.com/v1\nkind: Server\nmetadata: {name: s}\n"
        "spec:\n  template:\n    spec:\n      containers:\n      - name: llm\n"
        "        image: ${VLLM_IMAGE}\n        args: [--model, Qwen/Qwen3-8B]\n"
    )
    result = load_text(text, display="server.yaml")
    (problem,) = result.problems  # no entrypoint kvlint knows: the args are not guessed at
    assert "the vLLM image `${VLLM_IMAGE}` starts by itself" in problem.message


def test_kaito_workspace_preset_is_a_warning() -> None:
    text = (
        "apiVersion: kaito.sh/v1beta1\nkind: Workspace\nmetadata: {name: phi}\n"
        "resource: {instanceType: Standard_NC24ads_A100_v4}\n"
        "inference: {preset: {name: phi-3-mini-128k-instruct}}\n"
    )
    (problem,) = load_text(text, display="ws.yaml").problems
    assert problem.code == "KV905" and problem.severity.name == "WARNING"
    assert "KAITO preset `phi-3-mini-128k-instruct`" in problem.message


def test_compose_defaults_are_read_and_bare_variables_left_to_run_time() -> None:
    text = (
        "services:\n  llm:\n    image: ${IMAGE:-vllm/vllm-openai:v0.8.5}\n"
        "    command: --model ${MODEL:-Qwen/Qwen3-8B} --max-model-len ${LEN:-8192}"
        " --max-num-seqs ${SEQS}\n"
        "  sg:\n    image: lmsysorg/sglang:v0.4.6\n"
        '    command: bash -c "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B'
        ' --context-length $${CTX:-4096}"\n'
    )
    result = load_text(text, display="compose.yaml")
    assert result.problems == []
    llm, sg = result.deployments
    assert llm.engine_version is not None and llm.engine_version.value == "0.8.5"
    assert llm.model is not None and llm.model.value == "Qwen/Qwen3-8B"
    assert llm.max_model_len is not None and llm.max_model_len.value == 8192
    assert (llm.max_model_len.span.line, llm.max_model_len.span.column) == (4, 69)
    assert llm.runtime["max_num_seqs"].value == "${SEQS}"
    assert sg.max_model_len is not None and sg.max_model_len.value == 4096
    assert sg.max_model_len.raw == "4096"


def test_a_shell_script_handed_its_arguments_runs_the_engine_with_them() -> None:
    # bash -c 'exec vllm serve "$@"' -- <flags>: the script's words after it are its $0, $1...
    text = (
        "services:\n  llm:\n    image: vllm/vllm-openai:v0.10.0\n"
        "    entrypoint: [/bin/bash, -c, 'exec vllm serve \"$$@\"', --]\n"
        "    command: [--model, Qwen/Qwen3-8B, --max-model-len, '${LEN:-${CTX:-16384}}']\n"
    )
    dep = _one(text)
    assert dep.model is not None and dep.model.value == "Qwen/Qwen3-8B"
    assert dep.max_model_len is not None and dep.max_model_len.value == 16384
    assert dep.max_model_len.raw == "16384"  # the innermost default's own characters


def test_bash_lc_with_an_end_of_options_marker() -> None:
    text = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n"
        "    spec:\n      containers:\n      - name: head\n"
        "        image: vllm/vllm-openai:v0.7.1\n"
        '        command: ["/bin/bash", "-lc", "--"]\n'
        '        args: ["ulimit -n 65536; vllm serve Qwen/Qwen3-8B --max-model-len 8192"]\n'
    )
    dep = _one(text)
    assert dep.max_model_len is not None and dep.max_model_len.value == 8192


def test_a_vllm_build_given_only_flags_runs_vllm() -> None:
    text = (
        "services:\n  llm:\n    image: opea/vllm-gaudi:1.4\n"
        "    command: --model Qwen/Qwen3-8B --max-num-seqs 256\n"
    )
    dep = _one(text)
    assert dep.engine.value == "vllm"
    assert dep.max_num_seqs is not None and dep.max_num_seqs.value == 256


def test_routers_and_simulators_are_not_servers() -> None:
    text = (
        "apiVersion: example.com/v1\nkind: Group\nmetadata: {name: g}\nspec:\n  template:\n"
        "    spec:\n      containers:\n      - name: router\n"
        "        image: lmsysorg/sglang:v0.5.0\n"
        "        command: [python3, -m, sglang_router.launch_router, --pd-disaggregation]\n"
        "      - name: sim\n        image: ghcr.io/llm-d/llm-d-inference-sim:v0.5.0\n"
        "        args: [--model, Qwen/Qwen3-8B, --max-num-seqs, '5', --max-model-len, '1024']\n"
        "      - name: epp\n        image: ghcr.io/llm-d/llm-d-inference-scheduler:v0.3.0\n"
        "        args: [--poolName, p, --grpcPort, '9002']\n"
        # The vLLM project's semantic router: an Envoy external processor, not vLLM.
        "      - name: semantic-router\n"
        "        image: ghcr.io/vllm-project/semantic-router/extproc:latest\n"
        "        args: ['--secure=true']\n"
    )
    result = load_text(text, display="g.yaml")
    assert result.deployments == [] and result.problems == []


def test_a_config_map_holds_an_engine_config() -> None:
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata:\n"
        "  vllm.yaml: |\n    model: Qwen/Qwen3-8B\n    max-model-len: 8192\n"
        "  nginx.conf: |\n    server { listen 80; }\n"
    )
    dep = _one(text)
    assert dep.carrier == "engine_yaml"
    assert dep.max_model_len is not None and dep.max_model_len.span.line == 7


def test_rayllm_model_config() -> None:
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\ndata:\n  falcon.yaml: |\n"
        "    deployment_config:\n"
        "      ray_actor_options: {resources: {accelerator_type_l4: 0.01}}\n"
        "    engine_config:\n      model_id: tiiuae/falcon-7b-instruct\n      type: VLLMEngine\n"
        "      engine_kwargs: {max_num_seqs: 64, gpu_memory_utilization: 0.9}\n"
        "    scaling_config: {num_workers: 1, num_gpus_per_worker: 2}\n"
    )
    dep = _one(text)
    assert (dep.carrier, dep.engine.value) == ("rayllm", "vllm")
    assert dep.model is not None and dep.model.value == "tiiuae/falcon-7b-instruct"
    assert dep.gpu is not None and dep.gpu.value == "l4"
    assert dep.gpu_count is not None and dep.gpu_count.value == 2
    assert dep.max_num_seqs is not None and dep.max_num_seqs.value == 64


def test_chart_values_that_run_an_engine_kvlint_does_not_read() -> None:
    text = (
        "vllm:\n  enabled: true\n  image: {repository: opea/vllm-gaudi}\n"
        "  resources: {limits: {habana.ai/gaudi: 1}}\n  extraCmdArgs: [--max-num-seqs, '256']\n"
    )
    (problem,) = load_text(text, display="values.yaml").problems
    assert (problem.code, problem.severity.name, problem.span.line) == ("KV905", "WARNING", 3)
    assert problem.message.startswith("`vllm.image.repository` runs vLLM (`opea/vllm-gaudi`)")
    # An operator chart's list of images deploys nothing: the usual info, no warning.
    operator = "backendRuntime:\n  llamacpp:\n    image: {repository: ghcr.io/ggml-org/llama.cpp}\n"
    (info,) = load_text(operator, display="values.yaml").problems
    assert info.severity.name == "INFO"


KTHENA_MULTINODE = """\
apiVersion: workload.serving.volcano.sh/v1alpha1
kind: ModelServing
metadata: {name: llama-multinode}
spec:
  template:
    roles:
      - name: llama-405b
        replicas: 2
        entryTemplate:
          spec:
            containers:
              - name: leader
                image: vllm/vllm-openai:v0.11.0
                command: [sh, -c, "bash multi-node-serving.sh leader --ray_cluster_size=2;
                  python3 -m vllm.entrypoints.openai.api_server --model
                  meta-llama/Llama-3.1-405B-Instruct --tensor-parallel-size 8
                  --pipeline_parallel_size 2"]
                resources: {limits: {nvidia.com/gpu: "8"}}
        workerReplicas: 1
        workerTemplate:
          spec:
            containers:
              - name: worker
                image: vllm/vllm-openai:v0.11.0
                command: [sh, -c, "bash multi-node-serving.sh worker --ray_address=$(ADDR)"]
                resources: {limits: {nvidia.com/gpu: "8"}}
"""


def test_a_kthena_role_is_one_group_of_an_entry_pod_and_its_workers() -> None:
    """Volcano kthena's multi-node example: TP 8 x PP 2 over the entry pod's 8 GPUs and one
    worker pod's 8 (KV306 said "the pod requests 8" before)."""
    result = load_text(KTHENA_MULTINODE, display="m.yaml")
    (dep,) = result.deployments
    assert dep.group_gpus is not None and dep.group_gpus.value == 16
    assert dep.group_gpus.span.location() == "m.yaml:19:25"  # workerReplicas


MODEL_BOOSTER = """\
apiVersion: workload.serving.volcano.sh/v1alpha1
kind: ModelBooster
metadata: {name: qwen}
spec:
  backend:
    type: vLLM
    modelURI: hf://Qwen/Qwen2.5-7B-Instruct
    workers:
      - type: server
        image: vllm/vllm-openai:v0.11.0
        config:
          tensor-parallel-size: 2
          max_model_len: 8192
          trust-remote-code: ""
        resources: {limits: {nvidia.com/gpu: "2"}}
"""


def test_a_kthena_model_booster_worker_reads_its_config_and_model_uri() -> None:
    """The controller turns `config` into `--key value` (`--key` alone for ""), and serves the
    backend's `modelURI`: kvlint read neither, so a TP 16 worker was "the default layout"."""
    result = load_text(MODEL_BOOSTER, display="b.yaml")
    assert result.problems == []
    (dep,) = result.deployments
    assert dep.model is not None and dep.model.value == "Qwen/Qwen2.5-7B-Instruct"
    assert dep.model.span.location() == "b.yaml:7:15"
    assert dep.tensor_parallel_size is not None and dep.tensor_parallel_size.value == 2
    assert dep.tensor_parallel_size.span.location() == "b.yaml:12:33"
    assert dep.max_model_len is not None and dep.max_model_len.value == 8192
    assert "trust-remote-code" in dep.settings


def test_sglang_serve_of_a_diffusion_model_is_no_kv_cache() -> None:
    """`sglang serve --backend=sglang --num-gpus=2` of FLUX (Google's inference reference
    architecture) runs SGLang's diffusion server, whose flags are not the LLM server's: two
    KV501 errors before; now one info that nothing of it is sized."""
    text = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: flux}\nspec:\n  template:\n"
        "    spec:\n      containers:\n      - name: server\n"
        "        image: lmsysorg/sglang:v0.5.5\n        command: [sglang, serve]\n"
        "        args: [--model-path=/gcs/flux, --backend=sglang, --num-gpus=2]\n"
    )
    result = load_text(text, display="f.yaml")
    assert result.deployments == []
    assert [(p.code, p.severity.name, p.span.location()) for p in result.problems] == [
        ("KV905", "INFO", "f.yaml:10:18")
    ]


def test_an_mpi_worker_without_a_command_runs_no_engine() -> None:
    """A Kubeflow MPIJob's workers run the operator's sshd; the launcher's mpirun starts the
    program (AWS's multi-node NCCL test on a Triton TensorRT-LLM image: KV306 "7 GPUs left
    idle" on each worker, which serves nothing)."""
    text = (
        "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: nccl}\nspec:\n"
        "  mpiReplicaSpecs:\n    Launcher:\n      replicas: 1\n      template:\n        spec:\n"
        "          containers:\n          - name: launcher\n"
        "            image: example/triton_trtllm_multinode:24.08.1\n"
        "            command: [mpirun, -np, '16', /opt/nccl-tests/build/all_reduce_perf]\n"
        "    Worker:\n      replicas: 2\n      template:\n        spec:\n          containers:\n"
        "          - name: worker\n            image: example/triton_trtllm_multinode:24.08.1\n"
        "            resources: {limits: {nvidia.com/gpu: 8}}\n"
    )
    result = load_text(text, display="n.yaml")
    assert result.deployments == []
    # The launcher's mpirun is not read (it could wrap trtllm-serve): said, not guessed.
    assert [(p.code, p.span.location()) for p in result.problems] == [("KV905", "n.yaml:13:22")]


@pytest.mark.parametrize(
    ("image", "what"),
    [
        ("ghcr.io/ikawrakow/ik-llama-cpp:cu13-server", "ik_llama.cpp, a fork of llama.cpp"),
        ("ghcr.io/anbeeld/beellama.cpp:server-cuda-v0.3.0", "BeeLlama, a fork of llama.cpp"),
    ],
)
def test_a_fork_of_an_engine_is_said_not_read_as_the_engine(image: str, what: str) -> None:
    """ik_llama.cpp's -khad / --merge-qkv and BeeLlama's options were KV501 errors "unknown
    flag for llamacpp" on a community repository's compose files."""
    text = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n"
        "    spec:\n      containers:\n      - name: s\n"
        f"        image: {image}\n"
        "        command: [/app/llama-server, -m, /models/m.gguf, -khad, -vhad, --merge-qkv]\n"
    )
    result = load_text(text, display="d.yaml")
    assert result.deployments == []
    assert [(p.code, p.severity.name, p.message) for p in result.problems] == [
        (
            "KV905",
            "WARNING",
            f"Deployment/d container s: `{image}` is {what} with options of its own, so its "
            "settings are not checked",
        )
    ]
