"""KV302: one sequence of max_model_len does not fit."""

from __future__ import annotations

from kvlint_rules.max_model_len_exceeds_kv_pool import MaxModelLenExceedsKvPool

from testing.builders import LLAMA_31_8B
from testing.builders import LLAMA_31_70B
from testing.builders import deployment
from testing.builders import model
from testing.builders import problems
from testing.builders import sized

L70 = model(LLAMA_31_70B, "meta-llama/Llama-3.1-70B-Instruct")


def test_full_context_on_two_h100s() -> None:
    dep = deployment(
        gpu="H100-80GB", tensor_parallel_size=2, max_model_len=131072, memory_fraction=0.95
    )
    engine = sized(dep, L70).engine
    assert engine is not None and engine.available_kv_bytes and engine.estimated_max_model_len
    assert engine.available_kv_bytes_low is not None and engine.available_kv_bytes_high
    # Per GPU at TP 2: 80 layers x 4 KV heads x 128 x 2 x 2 B = 160 KiB/token; x 131072 = 20 GiB,
    # beyond the band's high end: an error, whatever the version line.
    assert engine.available_kv_bytes_high < 20 * 2**30 and engine.version_doubt is None
    available = f"{engine.available_kv_bytes / 2**30:.2f} GiB"
    band = (
        f"{engine.available_kv_bytes_low / 2**30:.2f}-{engine.available_kv_bytes_high / 2**30:.2f}"
    )
    # the length offered fits the low end of the band of the line the figures are at
    low_end = engine.available_kv_bytes_low * 131072 // (20 * 2**30) // 16 * 16
    largest = min(low_end, engine.estimated_max_model_len)
    fits = "fits the band's low end" if low_end else "fits the prediction"
    [p] = problems(MaxModelLenExceedsKvPool, dep, L70)
    assert p.span.line == 3 and p.severity is None
    assert p.message.startswith(
        "`max_model_len` 131072 needs 20.00 GiB of KV cache for one request, more than the "
        f"{available} predicted available per GPU (90% band {band} GiB): vLLM will refuse to "
        f"start; the largest `max_model_len` that {fits}"
    )
    assert p.message.endswith(f" is {largest or engine.estimated_max_model_len}")
    assert p.fix is not None
    assert p.fix.title == f"Lower `max_model_len` to {largest or engine.estimated_max_model_len}"


def test_version_doubt_is_said_once_and_the_fix_is_the_lines_own() -> None:
    # Llama 3.1 8B on one L4 at 24,576 tokens (3.00 GiB a request): 0.10.2 starts across its
    # band, 0.33.0's band (2.95-4.53 GiB, it charges the CUDA graphs) straddles the request; the
    # file names no version.
    l8 = model(LLAMA_31_8B, "meta-llama/Llama-3.1-8B-Instruct")
    dep = deployment(gpu="L4", max_model_len=24576)
    engine = sized(dep, l8).engine
    assert engine is not None
    assert engine.version_doubt is not None
    [p] = problems(MaxModelLenExceedsKvPool, dep, l8)
    assert p.message.count("no vLLM version named") == 1 and "\n" not in p.message
    assert f"at vLLM {engine.version} (90% band" in p.message
    assert str(p.severity) == "warning"
    assert p.fix is not None
    assert engine.available_kv_bytes_low and engine.needed_bytes_one_sequence
    fits_low = engine.available_kv_bytes_low >= engine.needed_bytes_one_sequence
    # the line the figures are at fits across its band: nothing to shorten, name the version
    assert fits_low == p.fix.title.startswith("Name the vLLM version")


def test_shorter_context_fits() -> None:
    # 16,384 tokens need 2.5 GiB a GPU, under the predicted pool: never an error. Where the
    # band's low end lies below the request (an H100 pair at 0.95 leaves a few GiB, and the
    # newest line's band borrows pools across lines) the finding is a "may refuse" warning;
    # where the low end is no memory at all that is KV303's; otherwise nothing.
    dep = deployment(
        gpu="H100-80GB", tensor_parallel_size=2, max_model_len=16384, memory_fraction=0.95
    )
    engine = sized(dep, L70).engine
    assert engine is not None and engine.available_kv_bytes and engine.needed_bytes_one_sequence
    assert engine.needed_bytes_one_sequence < engine.available_kv_bytes
    found = problems(MaxModelLenExceedsKvPool, dep, L70)
    low = engine.available_kv_bytes_low
    if low is not None and 0 < low < engine.needed_bytes_one_sequence:
        [p] = found
        assert str(p.severity) == "warning" and "may refuse" in p.message
    else:
        assert found == []
