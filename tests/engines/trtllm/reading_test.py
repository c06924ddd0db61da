"""TensorRT-LLM as files write it: trtllm-serve flags, the LLM API YAML, trtllm-build, Dynamo's
worker and NIM containers, each setting at its own line and column."""

from __future__ import annotations

from kvlint.deploy.load import load_text


def one(text: str, name: str = "deploy.yaml"):  # type: ignore[no-untyped-def]
    result = load_text(text, display=name)
    (dep,) = result.deployments
    return dep


def test_trtllm_serve_underscored_flags_and_aliases() -> None:
    dep = one(
        """\
containers:
  - name: trt
    image: nvcr.io/nvidia/tensorrt-llm/release:1.0.0
    command: [trtllm-serve, serve, Qwen/Qwen3-8B, --tp_size, "2", --max_batch_size, "64",
              --kv_cache_free_gpu_memory_fraction, "0.8", --max_seq_len, "32768"]
""".replace("containers:", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:")
        .replace("\n  - name", "\n    - name")
        .replace("\n    image", "\n      image")
        .replace("\n    command", "\n      command")
        .replace("\n              --kv", "\n                --kv")
    )
    assert dep.engine.value == "trtllm"
    assert dep.engine_version is not None and dep.engine_version.value == "1.0.0"
    assert dep.model is not None and dep.model.value == "Qwen/Qwen3-8B"
    assert dep.tensor_parallel_size is not None and dep.tensor_parallel_size.value == 2
    assert dep.max_num_seqs is not None and dep.max_num_seqs.value == 64
    assert dep.memory_fraction is not None and dep.memory_fraction.value == 0.8
    assert dep.max_model_len is not None and dep.max_model_len.value == 32768
    assert not dep.unknown_flags


def test_llm_api_yaml_nested_kv_cache_config_keeps_its_lines() -> None:
    dep = one(
        """\
kv_cache_config:
  free_gpu_memory_fraction: 0.85
  dtype: fp8
  enable_block_reuse: false
cuda_graph_config:
  enable_padding: true
max_batch_size: 128
""",
        "extra-llm-api-options.yaml",
    )
    assert dep.engine.value == "trtllm"
    assert dep.memory_fraction is not None and dep.memory_fraction.value == 0.85
    assert (dep.memory_fraction.span.line, dep.memory_fraction.span.column) == (2, 29)
    assert dep.kv_cache_dtype is not None and dep.kv_cache_dtype.value == "fp8"
    assert (dep.kv_cache_dtype.span.line, dep.kv_cache_dtype.span.column) == (3, 10)
    assert dep.max_num_seqs is not None and dep.max_num_seqs.value == 128
    assert not [p for p in dep.problems if p.code == "KV501"]


def test_trtllm_build_limits_join_the_serve_that_serves_the_engine() -> None:
    dep = one(
        """\
services:
  trt:
    image: nvcr.io/nvidia/tensorrt-llm/release:0.19.0
    command: >
      sh -c "trtllm-build --checkpoint_dir /ckpt --output_dir /engine --max_batch_size 256
      --max_seq_len 4096 --tokens_per_block 64 &&
      trtllm-serve /engine --tokenizer meta-llama/Llama-3.1-8B-Instruct"
""",
        "compose.yaml",
    )
    assert dep.engine.value == "trtllm"
    assert dep.max_num_seqs is not None and dep.max_num_seqs.value == 256
    assert dep.max_model_len is not None and dep.max_model_len.value == 4096
    assert dep.block_size is not None and dep.block_size.value == 64
    # The engine directory is a path in the container; the tokenizer names its checkpoint.
    assert dep.model is not None and dep.model.value == "meta-llama/Llama-3.1-8B-Instruct"
    assert "checkpoint-dir" in dep.settings  # a built engine: the C++ runtime serves it


def test_nim_image_names_the_model_and_its_variables_set_the_engine() -> None:
    dep = one(
        """\
apiVersion: v1
kind: Pod
metadata: {name: nim}
spec:
  containers:
    - name: nim
      image: nvcr.io/nim/meta/llama-3.1-8b-instruct:1.8.4
      env:
        - {name: NIM_MAX_MODEL_LEN, value: "32768"}
        - {name: NIM_TENSOR_PARALLEL_SIZE, value: "2"}
        - {name: NIM_MAX_BATCH_SIZE, value: "32"}
        - {name: NIM_KVCACHE_PERCENT, value: "0.7"}
"""
    )
    assert dep.engine.value == "trtllm"
    assert dep.model is not None and dep.model.value == "meta/llama-3.1-8b-instruct"
    assert dep.max_model_len is not None and dep.max_model_len.value == 32768
    assert dep.max_model_len.span.line == 9
    assert dep.tensor_parallel_size is not None and dep.tensor_parallel_size.value == 2
    assert dep.max_num_seqs is not None and dep.max_num_seqs.value == 32
    assert dep.memory_fraction is not None and dep.memory_fraction.value == 0.7


def test_nim_profile_picks_the_engine_under_it() -> None:
    dep = one(
        """\
apiVersion: v1
kind: Pod
metadata: {name: nim}
spec:
  containers:
    - name: nim
      image: nvcr.io/nim/meta/llama-3.1-8b-instruct:1.8.4
      env:
        - {name: NIM_MODEL_PROFILE, value: vllm-bf16-tp1-pp1}
        - {name: NIM_MAX_MODEL_LEN, value: "16384"}
"""
    )
    assert dep.engine.value == "vllm"
    assert dep.max_model_len is not None and dep.max_model_len.value == 16384


def test_dynamo_trtllm_worker_dashed_flags() -> None:
    dep = one(
        """\
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata: {name: g}
spec:
  services:
    TRTLLMDecodeWorker:
      resources: {limits: {gpu: "2"}}
      extraPodSpec:
        mainContainer:
          image: nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.6.0
          command: [python3, -m, dynamo.trtllm]
          args: [--model-path, Qwen/Qwen3-8B, --disaggregation-mode, decode,
                 --tensor-parallel-size, "2", --kv-block-size, "64",
                 --free-gpu-memory-fraction, "0.75", --extra-engine-args, /e/decode.yaml]
"""
    )
    assert dep.engine.value == "trtllm"
    assert dep.model is not None and dep.model.value == "Qwen/Qwen3-8B"
    assert dep.tensor_parallel_size is not None and dep.tensor_parallel_size.value == 2
    assert dep.block_size is not None and dep.block_size.value == 64
    assert dep.memory_fraction is not None and dep.memory_fraction.value == 0.75
    assert dep.gpu_count is not None and dep.gpu_count.value == 2
    assert not dep.unknown_flags
