"""The plan for one settled deployment: the layout, context and notes it starts from, and the
levers as the engine's facts offer them (the engine's own accounting throughout)."""

from __future__ import annotations

import pytest

from kvlint.arith.parallel import Layout
from kvlint.engines import account
from kvlint.model.spec import ModelSpec
from kvlint.settled import Settled
from kvlint.solve.levers import Lever
from kvlint.solve.levers import levers
from kvlint.solve.plan import Plan
from kvlint.solve.plan import solve
from testing.builders import catalog_gpu
from testing.builders import catalog_model
from testing.builders import settled


@pytest.fixture(scope="module")
def llama8b() -> ModelSpec:
    return catalog_model("meta-llama/Meta-Llama-3.1-8B")


def plan(
    deployment: Settled,
    *,
    from_file: bool = False,
    context: int | None = None,
    concurrency: int | None = None,
) -> Plan:
    """The plan without the levers and the engine table (each its own test)."""
    return solve(
        deployment,
        label="plan.yaml",
        from_file=from_file,
        context=context,
        concurrency=concurrency,
        max_gpus=8,
        with_levers=False,
    )


def lever(rows: list[Lever], label: str) -> Lever:
    (found,) = (r for r in rows if r.group == "cache dtype" and r.label == label)
    return found


def test_a_tgi_pod_is_solved_on_the_shards_tgi_runs() -> None:
    # No --num-shard: TGI shards over the pod's 2 GPUs, and that is the layout the file runs.
    deployment = settled(
        "tgi",
        spec=catalog_model("meta-llama/Meta-Llama-3.1-70B"),
        gpu=catalog_gpu("H100-80GB"),
        gpu_count=2,
    )
    assert deployment.tensor_parallel_size.value == 2
    answer = plan(deployment, from_file=True)
    assert (answer.layout, answer.layout_reason) == (Layout(2), "the deployment's own")
    assert answer.base.weights_bytes is not None
    # A model named on the command line has no layout of its own: the smallest that holds it.
    bare = plan(settled("tgi", spec=deployment.model, gpu=deployment.gpu))
    assert bare.layout_reason == "the smallest that holds the weights and one sequence"


def test_a_llamacpp_file_is_planned_per_slot(llama8b: ModelSpec) -> None:
    # -c 131072 -np 4: four slots of 32,768 tokens, not four sequences of 131,072.
    deployment = settled(
        "llamacpp", spec=llama8b, gpu=catalog_gpu("RTX-4090"), max_model_len=131_072, max_num_seqs=4
    )
    assert account(deployment).max_model_len == 32_768
    answer = plan(deployment, from_file=True)
    assert (answer.context, answer.concurrency) == (32_768, 4)
    assert answer.seqs.max_model_len == 32_768


def test_a_context_past_the_model_names_the_engines_own_switch(llama8b: ModelSpec) -> None:
    # Llama 3.1 derives 131,072; 200,000 needs each engine's own long-context switch.
    h100 = catalog_gpu("H100-80GB")
    notes = {
        engine: plan(settled(engine, spec=llama8b, gpu=h100), context=200_000).notes
        for engine in ("vllm", "sglang")
    }
    assert any("(VLLM_ALLOW_LONG_MAX_MODEL_LEN)" in note for note in notes["vllm"])
    assert any("(SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN)" in note for note in notes["sglang"])
    allowed = settled("vllm", spec=llama8b, gpu=h100, allow_long_max_model_len=True)
    assert any("lets the engine start" in note for note in plan(allowed, context=200_000).notes)
    # TGI has no such switch: past the positions the output degrades.
    tgi = plan(settled("tgi", spec=llama8b, gpu=h100), context=200_000)
    assert any("were never trained" in note for note in tgi.notes)


def test_the_model_limit_is_the_engines_own_derivation() -> None:
    # Gemma 3's linear factor 8: vLLM skips RoPE scaling for gemma3, SGLang applies it.
    gemma = catalog_model("google/gemma-3-27b-it")
    h100 = catalog_gpu("H100-80GB")
    for engine in ("vllm", "sglang"):
        deployment = settled(engine, spec=gemma, gpu=h100)
        answer = plan(deployment, context=8192, concurrency=1)
        assert answer.model_limit == deployment.derived_max_model_len
    assert settled("vllm", spec=gemma, gpu=h100).derived_max_model_len == 131_072
    assert settled("sglang", spec=gemma, gpu=h100).derived_max_model_len == 1_048_576


def test_llamacpp_cache_levers_quantise_v_too(llama8b: ModelSpec) -> None:
    # -ctk q8_0 -ctv q8_0: the lever row of the deployment's own q8_0 is the deployment.
    deployment = settled(
        "llamacpp",
        spec=llama8b,
        gpu=catalog_gpu("RTX-4090"),
        max_model_len=32_768,
        max_num_seqs=1,
        kv_cache_dtype="q8_0",
        kv_cache_dtype_v="q8_0",
        n_gpu_layers=99,
    )
    rows = levers(deployment, context=32_768, concurrency=1, layout=Layout(), gpu_choices=())
    own = lever(rows, "q8_0")
    assert own.current and own.estimate is not None
    assert own.estimate.bytes_per_token == account(deployment).bytes_per_token
    f16 = lever(rows, "f16").estimate
    assert f16 is not None and f16.bytes_per_token is not None
    assert own.estimate.bytes_per_token is not None
    # 32 layers x 8 KV heads x 128 values, K and V: 34 bytes per 32 values against 2 a value.
    assert own.estimate.bytes_per_token * 64 == f16.bytes_per_token * 34


def test_a_cache_the_release_lacks_is_not_offered(llama8b: ModelSpec) -> None:
    # kvlint's vLLM tables: nvfp4 came after the 0.11 line, so 0.10 has none either.
    b200 = catalog_gpu("B200")
    for version, offered in (("0.10.2", False), ("0.11.0", False), ("0.33.0", True)):
        deployment = settled("vllm", spec=llama8b, gpu=b200, engine_version=version)
        rows = levers(
            deployment, context=8192, concurrency=1, layout=Layout(), gpu_choices=(), max_gpus=1
        )
        nvfp4 = lever(rows, "nvfp4")
        assert nvfp4.offered is offered, version
        if not offered:
            assert nvfp4.note == f"vLLM {version[:4]} has no nvfp4 cache"


def test_without_flash_attention_no_quantised_v_cache_is_offered(llama8b: ModelSpec) -> None:
    l4 = catalog_gpu("L4")
    for engine, flash in (("llamacpp", "off"), ("ollama", False)):
        deployment = settled(
            engine, spec=llama8b, gpu=l4, max_model_len=4096, flash_attention=flash
        )
        rows = levers(deployment, context=4096, concurrency=1, layout=Layout(), gpu_choices=())
        assert [r.offered for r in rows if r.group == "cache dtype"] == [True, False, False]
        switch = "flash_attn" if engine == "llamacpp" else "OLLAMA_FLASH_ATTENTION"
        assert lever(rows, "q4_0").note == f"a quantised V cache needs flash attention ({switch})"


def test_flash_attention_off_by_default_comes_with_the_cache_lever(llama8b: ModelSpec) -> None:
    # Ollama 0.11 leaves flash attention off for a llama model: the q8_0 lever turns it on too.
    deployment = settled(
        "ollama", spec=llama8b, gpu=catalog_gpu("L4"), max_model_len=4096, engine_version="0.11.4"
    )
    rows = levers(deployment, context=4096, concurrency=1, layout=Layout(), gpu_choices=())
    assert [r.offered for r in rows if r.group == "cache dtype"] == [True, True, True]
    assert lever(rows, "q8_0").note == "with OLLAMA_FLASH_ATTENTION on"
