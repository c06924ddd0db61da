"""Kubernetes workloads: engines, settings and their exact spans, GPU count and type."""

from __future__ import annotations

from pathlib import Path

from kvlint.deploy.load import load_path
from kvlint.deploy.load import load_text

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "deployments"


def _settings(dep):  # type: ignore[no-untyped-def]
    return {k: (v.value, v.span.line, v.span.column) for k, v in dep.settings.items()}


def test_sh_c_string_with_env_substitution() -> None:
    result = load_path(FIXTURES / "vllm-sh-c.yaml", display="vllm-sh-c.yaml")
    assert result.problems == []
    (dep,) = result.deployments
    assert dep.name == "Deployment/llama-70b container vllm"
    assert (dep.engine.value, dep.engine.span.line, dep.engine.span.column) == ("vllm", 23, 27)
    assert dep.engine_version is not None and dep.engine_version.value == "0.11.0"
    assert _settings(dep) == {
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN": (True, 28, 22),
        "model": ("meta-llama/Llama-3.1-70B-Instruct", 26, 22),
        "tensor-parallel-size": (4, 23, 105),
        "max-model-len": (32768, 23, 123),
        "max-num-seqs": (256, 23, 144),
        "gpu-memory-utilization": (0.92, 23, 173),
    }
    assert dep.max_model_len is not None
    assert dep.max_model_len.span.location() == "vllm-sh-c.yaml:23:123"
    assert dep.max_model_len.span.end_column == 128
    assert dep.max_model_len.span.key == "$.spec.template.spec.containers[0].args[0]"
    assert dep.memory_fraction is not None and dep.memory_fraction.raw == "0.92"
    assert dep.allow_long_max_model_len is not None and dep.allow_long_max_model_len.value
    assert dep.gpu is not None and (dep.gpu.value, dep.gpu.span.line) == ("nvidia-h100-80gb", 17)
    assert dep.gpu_count is not None and dep.gpu_count.value == 4


def test_bash_block_script_repeated_flag_and_affinity() -> None:
    result = load_path(FIXTURES / "vllm-args-block.yaml", display="b.yaml")
    (dep,) = result.deployments
    assert _settings(dep) == {
        "model": ("Qwen/Qwen2.5-7B-Instruct", 33, 31),
        "max-model-len": (32000, 34, 33),
        "max-num-seqs": (8, 37, 31),  # the later abbreviation wins, as argparse reads it
        "kv-cache-dtype": ("fp8", 36, 34),
    }
    assert dep.max_model_len is not None and dep.max_model_len.raw == "32k"
    assert dep.engine_version is None  # :latest states no version
    assert dep.gpu is not None and dep.gpu.value == "NVIDIA-A100-SXM4-80GB"
    assert dep.gpu_count is not None and dep.gpu_count.value == 1
    assert [(p.code, p.span.location(), p.message) for p in result.problems] == [
        (
            "KV501",
            "b.yaml:37:17",
            "unknown flag `--max-num-seq` for vllm; did you mean `--max-num-seqs`? "
            "(argparse takes it as an abbreviation of `--max-num-seqs` today)",
        )
    ]


MANIFEST = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
    - name: sidecar
      image: envoyproxy/envoy:v1.30
    - name: vllm
      image: vllm/vllm-openai:v0.8.5
      args: ["--model", "m", "--max-model-len", "lots", "--max-num-seq", "4", "--no-enforce-eager",
             "--swap-spcae", "4"]
      resources:
        limits:
          amd.com/gpu: 2
"""


def test_wrong_type_unknown_flag_and_negation() -> None:
    result = load_text(MANIFEST, display="pod.yaml")
    (dep,) = result.deployments
    assert dep.name == "Pod/p container vllm"
    assert dep.enforce_eager is not None and dep.enforce_eager.value is False
    assert dep.max_model_len is None
    assert dep.gpu_count is not None and dep.gpu_count.value == 2
    assert [(p.code, p.span.location(), p.message) for p in result.problems] == [
        (
            "KV501",
            "pod.yaml:12:14",
            "unknown flag `--swap-spcae` for vllm; did you mean `--swap-space`?",
        ),
        (
            "KV501",
            "pod.yaml:11:57",
            "unknown flag `--max-num-seq` for vllm; did you mean `--max-num-seqs`? "
            "(argparse takes it as an abbreviation of `--max-num-seqs` today)",
        ),
        (
            "KV502",
            "pod.yaml:11:49",
            "`--max-model-len` expects an integer such as 8192, 32k or 128K (or -1 / auto), "
            "got `lots`",
        ),
    ]
    assert [u.value for u in dep.unknown_flags] == ["--swap-spcae"]


def test_other_workloads_and_objects_are_silent() -> None:
    text = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n"
    text += "    spec:\n      containers: [{name: web, image: nginx:1.27}]\n"
    text += "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n"
    result = load_text(text, display="web.yaml")
    assert result.deployments == [] and result.problems == []


def test_values_set_at_run_time_are_kept_untyped() -> None:
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "    - name: v\n      image: vllm/vllm-openai:v0.11.0\n"
        "      args: [--model, $(MODEL), --max-model-len, $(MAX_LEN)]\n"
        "      env:\n        - name: MODEL\n"
        "          valueFrom: {configMapKeyRef: {name: c, key: model}}\n"
    )
    result = load_text(text, display="p.yaml")
    assert result.problems == []  # not "expects an integer, got `$(MAX_LEN)`"
    (dep,) = result.deployments
    assert dep.model is None and dep.max_model_len is None
    assert dep.settings["max-model-len"].value == "$(MAX_LEN)"
    assert dep.settings["model"].span.location() == "p.yaml:8:23"
    # Both are recorded as run-time values, for the sizing and KV907.
    assert {name: v.value for name, v in dep.runtime.items()} == {
        "model": "$(MODEL)",
        "max_model_len": "$(MAX_LEN)",
    }


def test_annotations_of_the_workload_then_of_the_pod_template() -> None:
    text = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  annotations:\n"
        "    kvlint.dev/ignore: KV301\n    team: infra\n"
        "spec:\n  template:\n    metadata:\n      annotations: {team: serving}\n"
        "    spec:\n      containers:\n        - name: v\n"
        "          image: vllm/vllm-openai:v0.11.0\n"
        "          args: [--model, meta-llama/Llama-3.1-8B-Instruct]\n"
    )
    (dep,) = load_text(text, display="d.yaml").deployments
    assert {k: (v.value, v.span.line) for k, v in dep.annotations.items()} == {
        "kvlint.dev/ignore": ("KV301", 6),
        "team": ("serving", 11),  # the pod template's, over the Deployment's
    }


def test_vllm_dotted_hf_overrides_merge_into_one_object() -> None:
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "    - name: vllm\n      image: vllm/vllm-openai:v0.11.0\n"
        '      args: ["--model", "m", "--hf-overrides", \'{"rope_theta": 1}\', '
        '"--hf-overrides.head_dim=1024", "--hf-overrides.text_config.head_dim", "336"]\n'
    )
    (dep,) = load_text(text, display="p.yaml").deployments
    assert not dep.problems and not dep.unknown_flags
    assert dep.hf_overrides is not None
    assert dep.hf_overrides.value == {
        "rope_theta": 1,
        "head_dim": 1024,
        "text_config": {"head_dim": 336},
    }
