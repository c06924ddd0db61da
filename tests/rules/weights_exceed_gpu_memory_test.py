"""KV303: weights that leave nothing for the cache."""

from __future__ import annotations

from kvlint_rules import _numbers as n
from kvlint_rules.weights_exceed_gpu_memory import WeightsExceedGpuMemory

from kvlint.finding import Severity
from testing.builders import LLAMA_31_70B
from testing.builders import deployment
from testing.builders import model
from testing.builders import problems
from testing.builders import sized

L70 = model(LLAMA_31_70B, "meta-llama/Llama-3.1-70B-Instruct")


def test_bf16_70b_on_one_h100() -> None:
    # 70,553,706,496 parameters x 2 B = 131.4 GiB; 0.92 x 85,029,027,840 B = 72.9 GiB.
    [p] = problems(WeightsExceedGpuMemory, deployment(gpu="H100-80GB", tensor_parallel_size=1), L70)
    assert p.message == (
        "the weights need 131.4 GiB per GPU (Llama-3.1-70B-Instruct, `tensor_parallel_size` 1), "
        "more than `gpu_memory_utilization` 0.92 of the NVIDIA H100 80GB HBM3 (72.9 GiB): loading "
        "runs out of memory"
    )
    assert p.fix is not None and p.fix.title == "Raise `tensor_parallel_size` to 4"


def test_weights_fit_but_activations_leave_nothing() -> None:
    # 65.7 GiB of weights per GPU against 0.86 x 79.2 GiB = 68.1 GiB: the profile run's
    # activations and NCCL take the rest, by more than the 90% band's high end.
    dep = deployment(
        gpu="H100-80GB",
        tensor_parallel_size=2,
        max_model_len=131072,
        memory_fraction=0.86,
        engine_version="0.11.0",
    )
    [p] = problems(WeightsExceedGpuMemory, dep, L70)
    assert p.severity is None  # the rule's own: an error
    assert p.message.startswith("the weights take 65.7 GiB per GPU")
    assert p.message.endswith(
        'no memory is left for the KV cache ("No available memory for the cache blocks")'
    )


def test_inside_the_band_it_is_a_warning_that_says_may_refuse() -> None:
    # The same at 0.9: the point prediction leaves nothing, the band's high end leaves some.
    dep = deployment(
        gpu="H100-80GB",
        tensor_parallel_size=2,
        max_model_len=8192,
        memory_fraction=0.9,
        engine_version="0.11.0",
    )
    [p] = problems(WeightsExceedGpuMemory, dep, L70)
    assert p.severity is Severity.WARNING
    assert "90% band" in p.message and p.message.endswith("vLLM may refuse to start")
    assert ("available KV memory, 90% band", n.band(sized(dep, L70).engine)) in p.numbers


def test_four_gpus_fit() -> None:
    assert (
        problems(WeightsExceedGpuMemory, deployment(gpu="H100-80GB", tensor_parallel_size=4), L70)
        == []
    )
