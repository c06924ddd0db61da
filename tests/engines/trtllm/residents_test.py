"""What else holds the GPU when TensorRT-LLM sizes its pool: a second engine on the same card
(the memory another resident holds, ``reserved_memory``) and the host on unified memory."""

from __future__ import annotations

from kvlint.engines import account
from kvlint.units import GiB
from testing.builders import catalog_gpu
from testing.builders import catalog_model
from testing.builders import settled

L4 = catalog_gpu("NVIDIA L4")
QWEN_05B = catalog_model("Qwen/Qwen2.5-0.5B-Instruct")

# clark-s-dev/triton-trtllm-text-io@a4faeda docs/lab-notebook/0001-m0-kv-memory.md: a
# trtllm-build 0.14 FP16 engine (max_batch_size 64, max_seq_len 8192, blocks of 64) at
# kv_cache_free_gpu_mem_fraction 0.25 allocated 2,979 blocks after a Qwen2.5-1.5B engine on the
# same L4 had taken its 7.31 GiB pool; docs/REPORT.md gives that engine as 3.4 GB (binary GB).
SECOND_ENGINE = dict(
    engine_version="0.14.0",
    extras={"backend": "tensorrt"},
    max_num_seqs=64,
    max_model_len=8192,
    block_size=64,
    memory_fraction=0.25,
)
FIRST_ENGINE_HOLDS = round((7.31 + 3.4) * GiB)
LOGGED_BLOCKS = 2979


def test_a_second_engine_sizes_its_pool_from_what_the_first_leaves() -> None:
    alone = account(settled("trtllm", spec=QWEN_05B, gpu=L4, **SECOND_ENGINE))
    held = FIRST_ENGINE_HOLDS
    beside = account(
        settled("trtllm", spec=QWEN_05B, gpu=L4, reserved_memory=held, **SECOND_ENGINE)
    )
    assert alone.available_kv_bytes is not None and beside.available_kv_bytes is not None
    # The fraction applies to the free memory, so the pool loses a quarter of what is held.
    lost = alone.available_kv_bytes - beside.available_kv_bytes
    assert abs(lost - 0.25 * FIRST_ENGINE_HOLDS) <= 1
    assert alone.num_blocks is not None and beside.num_blocks is not None
    # Alone it would have had more than twice the logged pool; beside the first engine it lands
    # within the 10% bar (the guardrail model and the first engine's own buffers, which
    # the source does not give in bytes, are not counted, so it stays above the log).
    assert alone.num_blocks > 2 * LOGGED_BLOCKS
    assert LOGGED_BLOCKS < beside.num_blocks <= 1.10 * LOGGED_BLOCKS


def test_on_unified_memory_the_note_says_the_host_share_is_not_counted() -> None:
    spark = catalog_gpu("DGX Spark")
    unified = account(settled("trtllm", spec=QWEN_05B, gpu=spark))
    dedicated = account(settled("trtllm", spec=QWEN_05B, gpu=L4))
    said = "unified memory: the pool is a share of what the host leaves free"
    assert any(note.startswith(said) for note in unified.notes)
    assert not any(note.startswith(said) for note in dedicated.notes)
