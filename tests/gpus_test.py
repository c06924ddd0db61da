"""The GPU catalog: CUDA totals with their sources, and the names people write."""

from __future__ import annotations

import pytest

from kvlint.gpus import catalog
from kvlint.gpus import instance_gpu_count
from kvlint.gpus import known_gpu_names
from kvlint.gpus import lookup_gpu
from kvlint.gpus import normalise_gpu_name
from kvlint.units import GiB
from kvlint.units import MiB


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("H100-80GB", "H100-SXM-80GB"),
        ("nvidia-h100-80gb", "H100-SXM-80GB"),  # GKE accelerator label
        ("NVIDIA-H100-80GB-HBM3", "H100-SXM-80GB"),  # nvidia.com/gpu.product
        ("NVIDIA H100 80GB HBM3", "H100-SXM-80GB"),  # the driver's name
        ("h100", "H100-SXM-80GB"),  # Karpenter instance-gpu-name
        ("nvidia-h100-mega-80gb", "H100-SXM-80GB"),
        ("NVIDIA H100 PCIe", "H100-PCIe-80GB"),
        ("NVIDIA-H100-NVL", "H100-NVL-94GB"),
        ("nvidia-tesla-a100", "A100-SXM-40GB"),  # GKE: the 40 GB part
        ("nvidia-a100-80gb", "A100-SXM-80GB"),
        ("NVIDIA A100-SXM4-80GB", "A100-SXM-80GB"),
        ("NVIDIA-A100-80GB-PCIe", "A100-PCIe-80GB"),
        ("nvidia-l4", "L4-24GB"),
        ("NVIDIA-L40S", "L40S-48GB"),
        ("Tesla-T4", "T4-16GB"),
        ("nvidia-tesla-v100", "V100-16GB"),
        ("NVIDIA-H200-SXM5-141GB", "H200-141GB"),
        ("nvidia-h200-141gb", "H200-141GB"),
        ("NVIDIA GH200 480GB", "GH200-96GB"),
        ("nvidia-b200", "B200-180GB"),
        ("B300", "B300-288GB"),
        ("nvidia-gb200", "GB200-186GB"),
        ("NVIDIA GeForce RTX 4090", "RTX-4090-24GB"),
        ("rtx3090", "RTX-3090-24GB"),
        ("RTX 5090", "RTX-5090-32GB"),
        ("nvidia-gpu-rtx4070-8gb", "RTX-4070-8GB"),  # KubeAI resourceProfile
        ("RTX 4070", "RTX-4070-12GB"),
        ("NVIDIA RTX A6000", "RTX-A6000-48GB"),
        ("RTX 6000 Ada", "RTX-6000-Ada-48GB"),
        ("amd-gpu-mi300x", "MI300X-192GB"),  # KubeAI resourceProfile
        ("MI325X", "MI325X-256GB"),
        ("MI250X", "MI250X-64GB"),
        ("DGX Spark", "GB10-128GB"),
        ("NVIDIA-A10G", "A10G-24GB"),
        ("A10", "A10-24GB"),
        ("L40", "L40-48GB"),
        ("H20", "H20-96GB"),
        ("V100-32GB", "V100-32GB"),
        ("NVIDIA RTX A5000", "RTX-A5000-24GB"),  # LMCache/LMCache#3430's card
        ("Quadro A4000", "RTX-A4000-16GB"),  # NVIDIA/TensorRT-LLM#1188's card
        ("NVIDIA GeForce RTX 5060 Ti", "RTX-5060-Ti-16GB"),
    ],
)
def test_names_people_write(name: str, key: str) -> None:
    gpu = lookup_gpu(name)
    assert gpu is not None and gpu.key == key


@pytest.mark.parametrize(
    ("instance", "key", "count"),
    [
        ("p5.48xlarge", "H100-SXM-80GB", 8),
        ("g5.xlarge", "A10G-24GB", 1),
        ("g5.48xlarge", "A10G-24GB", 8),
        ("g6e.12xlarge", "L40S-48GB", 4),
        ("p4d.24xlarge", "A100-SXM-40GB", 8),
        ("a3-highgpu-8g", "H100-SXM-80GB", 8),
        ("a2-ultragpu-1g", "A100-SXM-80GB", 1),
        ("g2-standard-24", "L4-24GB", 2),
        ("Standard_ND96asr_v4", "A100-SXM-40GB", 8),
        ("Standard_ND96amsr_A100_v4", "A100-SXM-80GB", 8),
        ("Standard_ND96isr_H100_v5", "H100-SXM-80GB", 8),
    ],
)
def test_instance_types(instance: str, key: str, count: int) -> None:
    gpu = lookup_gpu(instance)
    assert gpu is not None and gpu.key == key
    assert instance_gpu_count(instance) == count


def test_cuda_totals_are_the_runtime_figures() -> None:
    # torch total_memory=81090MB for 'NVIDIA H100 80GB HBM3'; vLLM logs print 79.19 GiB.
    h100 = lookup_gpu("H100")
    assert h100 is not None and h100.total_bytes == 81090 * MiB
    assert f"{h100.total_bytes / GiB:.2f}" == "79.19"
    # deviceQuery: 22518 MBytes for the L4, not the 24 GB of the box.
    l4 = lookup_gpu("L4")
    assert l4 is not None and l4.total_bytes == 22518 * MiB
    h200 = lookup_gpu("H200")
    assert h200 is not None and h200.total_bytes == 143156 * MiB


def test_workstation_and_consumer_cards_named_by_the_corpus() -> None:
    # torch total_memory=24138MB for 'NVIDIA RTX A5000'; the A4000 and the 5060 Ti have no
    # NVLink connector, so their pairs are charged as one GPU's non-torch memory.
    a5000, a4000 = lookup_gpu("RTX A5000"), lookup_gpu("RTX A4000")
    ti = lookup_gpu("RTX 5060 Ti")
    assert a5000 is not None and a5000.total_bytes == 24138 * MiB and a5000.nvlink
    assert a4000 is not None and not a4000.nvlink
    assert ti is not None and not ti.nvlink and ti.compute_capability == "12.0"
    assert lookup_gpu("RTX 5060") is None  # the 8 GB card is another part


def test_every_entry_records_its_source() -> None:
    for gpu in catalog():
        assert gpu.source, gpu.key
        assert gpu.total_bytes > 0, gpu.key


def test_unknown_names() -> None:
    assert lookup_gpu("") is None
    assert lookup_gpu("banana-9000") is None
    assert lookup_gpu("H100-40GB") is None  # a size the H100 never had


def test_tpus_are_recognised_but_out_of_scope() -> None:
    tpu = lookup_gpu("tpu-v6e-slice")
    assert tpu is not None and tpu.out_of_scope and tpu.key == "TPU-v6e"
    gpu = lookup_gpu("L4")
    assert gpu is not None and not gpu.out_of_scope


def test_apple_unified_memory() -> None:
    m3 = lookup_gpu("Apple M3 Ultra 96GB")
    assert m3 is not None and m3.memory_kind == "unified" and m3.total_bytes == 96 * GiB
    m4 = lookup_gpu("M4 Max")  # no size: the smallest configuration
    assert m4 is not None and m4.total_bytes == 36 * GiB


def test_fp8_support() -> None:
    assert lookup_gpu("L4").supports_fp8 is True  # type: ignore[union-attr]
    assert lookup_gpu("A100").supports_fp8 is False  # type: ignore[union-attr]
    assert lookup_gpu("MI300X").supports_fp8 is True  # type: ignore[union-attr]


def test_known_names_for_the_finding() -> None:
    names = known_gpu_names()
    assert "H100-SXM-80GB" in names and "L4-24GB" in names
    assert len(names) == len(set(names))


def test_normalise() -> None:
    assert normalise_gpu_name("NVIDIA-H100-80GB-HBM3") == "h100-80gb-hbm3"
    assert normalise_gpu_name("  nvidia tesla T4 ") == "t4"


def test_apple_chips_in_the_configurations_they_shipped_in() -> None:
    studio = lookup_gpu("M3-Ultra-96GB")
    assert studio is not None and studio.key == "M3-Ultra-96GB" and studio.vendor == "apple"
    assert studio.wired_limit_bytes == 72 * GiB  # 3/4: no log of a 96 GB Mac's working set
    assert lookup_gpu("M3 Ultra 128GB") is None  # the M3 Ultra came in 96, 256 and 512 GB
    assert lookup_gpu("M2-Ultra-192GB") is not None and lookup_gpu("M1-Max-96GB") is None
    measured = lookup_gpu("M3-Max-64GB")
    assert measured is not None and measured.wired_limit_bytes == 55_662_790_000
    assert measured.device_bytes == measured.wired_limit_bytes
    h100 = lookup_gpu("H100-80GB")
    assert h100 is not None and h100.wired_limit_bytes is None
    assert h100.device_bytes == h100.total_bytes


@pytest.mark.parametrize(
    ("name", "keys"),
    [
        ("NVIDIA A100", ("A100-SXM-40GB", "A100-SXM-80GB")),
        ("A100", ("A100-SXM-40GB", "A100-SXM-80GB")),
        ("NVIDIA H20", ("H20-96GB", "H20-141GB")),
        ("A800", ("A800-40GB", "A800-80GB")),
        ("V100", ("V100-16GB", "V100-32GB")),
        ("RTX 6000", ("Quadro-RTX-6000-24GB", "RTX-6000-Ada-48GB", "RTX-PRO-6000-96GB")),
        # names that pin the memory: one card
        ("NVIDIA A100-SXM4-80GB", ("A100-SXM-80GB",)),
        ("nvidia-tesla-a100", ("A100-SXM-40GB",)),  # GKE's label for the 40 GB part
        ("H20-141GB", ("H20-141GB",)),
        ("NVIDIA H800", ("H800-80GB",)),
        ("AMD Instinct MI308", ("MI300X-192GB",)),
        ("NVIDIA GeForce RTX 4080", ("RTX-4080-16GB",)),
        ("NVIDIA GeForce RTX 5070 Ti", ("RTX-5070-Ti-16GB",)),
        ("NVIDIA GeForce GTX 1650 SUPER", ("GTX-1650-SUPER-4GB",)),
        ("L40", ("L40-48GB",)),
        ("L40S", ("L40S-48GB",)),
        # GPU feature discovery's product label without its memory suffix
        ("NVIDIA-A100-SXM4", ("A100-SXM-40GB", "A100-SXM-80GB")),
        ("NVIDIA-A100-SXM4-40GB", ("A100-SXM-40GB",)),
        ("A800-SXM4", ("A800-40GB", "A800-80GB")),
        ("V100-PCIE", ("V100-16GB", "V100-32GB")),
        ("Tesla-V100-PCIE-16GB", ("V100-16GB",)),
        ("H1000", ()),
    ],
)
def test_a_name_that_does_not_pin_the_memory_has_every_variant(
    name: str, keys: tuple[str, ...]
) -> None:
    from kvlint.gpus import gpu_variants

    variants = gpu_variants(name)
    assert tuple(g.key for g in variants) == keys
    totals = [g.total_bytes for g in variants]
    assert totals == sorted(totals)  # smallest first: the figures a finding leads with
