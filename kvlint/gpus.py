"""The GPU catalog: total memory as the CUDA runtime reports it, and the names people write."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kvlint.lazy_re import lazy
from kvlint.units import GiB
from kvlint.units import MiB


@dataclass(frozen=True)
class GpuSpec:
    """One GPU model. ``total_bytes`` is what ``torch.cuda.mem_get_info()[1]`` reports: the figure
    engines multiply by their memory fraction (not the marketing GB)."""

    key: str  # canonical name: "H100-SXM-80GB"
    display: str  # "NVIDIA H100 80GB HBM3"
    total_bytes: int
    vendor: str = "nvidia"  # nvidia, amd, apple, google
    compute_capability: str | None = None  # "9.0"; fp8 caches need >= 8.9 on NVIDIA
    aliases: tuple[str, ...] = ()
    source: str = ""
    # "dedicated" (device memory), "unified" (shared with the host: Apple, GB10, Jetson), or an
    # accelerator kvlint recognises but does not size ("tpu", "hpu", "npu", "neuron": out of
    # scope for its GPU arithmetic).
    memory_kind: str = "dedicated"
    # Unified memory: what the GPU may wire by default (macOS's recommendedMaxWorkingSetSize),
    # the ceiling Metal engines plan within; None for dedicated memory.
    wired_limit_bytes: int | None = None

    @property
    def device_bytes(self) -> int:
        """The memory an engine on this GPU may plan with: the default wired limit on unified
        memory that has one, else the total."""
        return self.wired_limit_bytes if self.wired_limit_bytes is not None else self.total_bytes

    @property
    def nvlink(self) -> bool:
        """False for a card that has no NVLink at all (L4, L40S, T4, A10G, RTX 4090, RTX PRO
        6000, ...): its GPUs reach each other only over PCIe. True for everything else,
        boards that may be joined by NVLink, NVSwitch, a bridge or xGMI (SXM and OAM parts,
        A100/H100 PCIe, RTX 3090/A6000 pairs) and GPUs the catalog does not know."""
        return self.key not in _PCIE_ONLY

    @property
    def nvlink_group(self) -> int | None:
        """The most GPUs of this card that can all reach each other over NVLink: 2 for cards
        whose NVLink is a two-way bridge (RTX 3090, RTX A6000/A5000, A40, A100/H100 PCIe, H100
        NVL), None where a switch or a mesh joins every GPU of the board (SXM, OAM, xGMI)."""
        return 2 if self.key in _BRIDGED_PAIRS else None

    @property
    def out_of_scope(self) -> bool:
        return self.memory_kind in _NOT_SIZED

    @property
    def kind_phrase(self) -> str:
        """What the accelerator is, for "... is a TPU: out of scope"."""
        return _NOT_SIZED.get(self.memory_kind, "a GPU")

    @property
    def supports_fp8(self) -> bool | None:
        """Native fp8 (Ada, Hopper, Blackwell; MI300 on AMD). None when not known."""
        if self.vendor == "amd":
            return self.key.startswith(("MI300", "MI325", "MI355"))
        if self.compute_capability is None:
            return None
        major, minor = (int(part) for part in self.compute_capability.split("."))
        return (major, minor) >= (8, 9)


_NOT_SIZED = {
    "tpu": "a TPU",
    "hpu": "an HPU",
    "npu": "an NPU",
    "neuron": "a Neuron accelerator",
}

# Sources. "gpus.md" is ../shared/research/gpus.md (each figure there is quoted with its
# origin); "(derived)" marks a figure computed from a sourced one, with the rule used.
_SMI_GAP = "derived: the nvidia-smi total minus the ~0.5 GiB smi/CUDA gap measured on H100/H200"


def _mib(value: int) -> int:
    return value * MiB


def _gib(value: float) -> int:
    return round(value * GiB)


_CATALOG: tuple[GpuSpec, ...] = (
    # --- NVIDIA Hopper / Blackwell data-centre parts ---
    GpuSpec(
        "H100-SXM-80GB",
        "NVIDIA H100 80GB HBM3",
        _mib(81090),
        compute_capability="9.0",
        aliases=(
            "h100",
            "h100-80gb",
            "h100-sxm",
            "h100-sxm5",
            "h100-sxm-80gb",
            "h100-sxm5-80gb",
            "h100-80gb-hbm3",
            "h100-mega-80gb",
            "h100-mega",
        ),
        source="torch total_memory=81090MB for 'NVIDIA H100 80GB HBM3' (gpus.md); vLLM 0.19 logs "
        "print total_memory=79.19GiB (llm-d-planner accuracy logs)",
    ),
    GpuSpec(
        "H100-PCIe-80GB",
        "NVIDIA H100 PCIe",
        _mib(81008),
        compute_capability="9.0",
        aliases=("h100-pcie", "h100-pcie-80gb", "h100-80gb-pcie"),
        source="torch total_memory=81008MB for 'NVIDIA H100 PCIe' (gpus.md)",
    ),
    GpuSpec(
        "H100-NVL-94GB",
        "NVIDIA H100 NVL",
        _mib(95830 - 469),
        compute_capability="9.0",
        aliases=("h100-nvl", "h100-nvl-94gb", "h100-94gb", "h100-96gb-nvl"),
        source=f"nvidia-smi 95830 MiB (gpus.md); {_SMI_GAP} (469 MiB on H100 SXM)",
    ),
    GpuSpec(
        "H200-141GB",
        "NVIDIA H200",
        _mib(143156),
        compute_capability="9.0",
        aliases=("h200", "h200-141gb", "h200-sxm", "h200-sxm5", "h200-sxm5-141gb"),
        source="torch total_memory=143156MB for 'NVIDIA H200'; OOM lines 139.80 GiB (gpus.md)",
    ),
    GpuSpec(
        "H200-NVL-141GB",
        "NVIDIA H200 NVL",
        _mib(143156),
        compute_capability="9.0",
        aliases=("h200-nvl", "h200-nvl-141gb"),
        source="derived: nvidia-smi 143771 MiB, the same as H200 SXM, so the H200's CUDA total "
        "(gpus.md)",
    ),
    GpuSpec(
        "H20-96GB",
        "NVIDIA H20",
        _mib(97285),
        compute_capability="9.0",
        aliases=("h20", "h20-96gb"),
        source="torch total_memory=97285MB for 'NVIDIA H20' (gpus.md)",
    ),
    GpuSpec(
        "H20-141GB",
        "NVIDIA H20 (141 GB)",
        _mib(143156),
        compute_capability="9.0",
        aliases=("h20-141gb", "h20-3e", "h20-141g", "h20e"),
        source="derived: the 141 GB HBM3e H20 (H20-3e) taken as the H200's CUDA total 143156 "
        "MiB (the same six HBM3e stacks; gpus.md)",
    ),
    GpuSpec(
        "H800-80GB",
        "NVIDIA H800",
        _mib(81090),
        compute_capability="9.0",
        aliases=("h800", "h800-80gb", "h800-sxm", "h800-sxm5", "h800-80gb-hbm3", "h800-pcie"),
        source="derived: the H100 SXM's CUDA total 81090 MiB (the same 80 GB HBM3; the export "
        "part differs in interconnect only; gpus.md)",
    ),
    GpuSpec(
        "GH200-96GB",
        "NVIDIA GH200 480GB",
        _mib(97285),
        compute_capability="9.0",
        aliases=("gh200", "gh200-96gb", "gh200-480gb", "gh200-120gb", "gh200-superchip"),
        source="derived: nvidia-smi 97871 MiB, the same as H20, so H20's CUDA total 97285 MiB "
        "(gpus.md); the GPU's HBM only, not the Grace LPDDR",
    ),
    GpuSpec(
        "B200-180GB",
        "NVIDIA B200",
        _mib(182631),
        compute_capability="10.0",
        aliases=("b200", "b200-180gb", "b200-192gb", "hgx-b200", "dgx-b200"),
        source="torch total_memory=182631MB / 182642MB for 'NVIDIA B200' (the lower kept); OOM "
        "178.35 GiB (gpus.md)",
    ),
    GpuSpec(
        "B300-288GB",
        "NVIDIA B300",
        _mib(182631 * 3 // 2),
        compute_capability="10.3",
        aliases=("b300", "b300-288gb", "b300-sxm6", "hgx-b300", "dgx-b300", "blackwell-ultra"),
        source="derived: not found in any source; B200's CUDA total x 1.5 (288 GB vs 192 GB of "
        "HBM3e, same stack reserve)",
    ),
    GpuSpec(
        "GB200-186GB",
        "NVIDIA GB200",
        _mib(182631),
        compute_capability="10.0",
        aliases=("gb200", "gb200-nvl72", "gb200-nvl4", "gb200-186gb"),
        source="derived: not found in any source; taken as B200's CUDA total (same Blackwell die "
        "and HBM3e stacks)",
    ),
    GpuSpec(
        "GB300-288GB",
        "NVIDIA GB300",
        _mib(182631 * 3 // 2),
        compute_capability="10.3",
        aliases=("gb300", "gb300-nvl72"),
        source="derived: not found in any source; taken as B300's figure",
    ),
    # --- NVIDIA Ampere / Ada / Turing / Volta data-centre parts ---
    GpuSpec(
        "A100-SXM-80GB",
        "NVIDIA A100-SXM4-80GB",
        _mib(81162),
        compute_capability="8.0",
        aliases=(
            "a100-80gb",
            "a100-sxm4-80gb",
            "a100-sxm-80gb",
            "a100-80g",
            "a100-sxm4",
            "pg509-210",
            "a100-80",
            "a100-nvlink-80gb",  # CoreWeave's gpu.nvidia.com/class
        ),
        source="derived: 79.26 GiB from the gpu_memory_utilization 0.25/0.5 sweep of "
        "dennislee22/vLLM-benchmarking (A100 80GB, vLLM 0.10.1.1: (24.83-5.01)/0.25 and "
        "(31.83-12.02)/0.25 GiB); vLLM lines naming no GPU print 79.15 GiB (gpus.md)",
    ),
    GpuSpec(
        "A100-PCIe-80GB",
        "NVIDIA A100 80GB PCIe",
        _mib(81162),
        compute_capability="8.0",
        aliases=("a100-80gb-pcie", "a100-pcie-80gb"),
        source="derived: nvidia-smi 81920 MiB, as the SXM4 80GB, so the same CUDA total (gpus.md)",
    ),
    GpuSpec(
        "A100-SXM-40GB",
        "NVIDIA A100-SXM4-40GB",
        _gib(39.56),
        compute_capability="8.0",
        aliases=(
            "a100",
            "a100-40gb",
            "a100-sxm4-40gb",
            "a100-sxm-40gb",
            "a100-40g",
            "a100-40",
            "a100-nvlink",  # CoreWeave's gpu.nvidia.com/class (the 40 GB part)
        ),
        source="vLLM's init snapshot total_memory 39.56 GiB on an 'NVIDIA A100-SXM4-40GB' "
        "(unslothai/notebooks Llama3.2_(1B_and_3B)-Conversational, vLLM 0.8.1) and 39.50 GiB "
        "(vllm-project/vllm#12330); deviceQuery 40339 MBytes on an older driver "
        "(bottlerocket-os/bottlerocket#3873, gpus.md)",
    ),
    GpuSpec(
        "A100-PCIe-40GB",
        "NVIDIA A100-PCIE-40GB",
        _mib(40339),
        compute_capability="8.0",
        aliases=("a100-pcie", "a100-pcie-40gb", "a100-40gb-pcie"),
        source="derived: nvidia-smi 40960/40536 MiB, as the SXM4 40GB (gpus.md)",
    ),
    GpuSpec(
        "A800-80GB",
        "NVIDIA A800-SXM4-80GB",
        _mib(81162),
        compute_capability="8.0",
        aliases=("a800-80gb", "a800-sxm4-80gb", "a800-80gb-pcie", "a800-pcie-80gb", "a800-sxm4"),
        source="derived: the A100 80GB's CUDA total (the export part of the A100: the same HBM2e)",
    ),
    GpuSpec(
        "A800-40GB",
        "NVIDIA A800 40GB Active",
        _gib(39.56),
        compute_capability="8.0",
        aliases=("a800-40gb", "a800-40gb-active", "a800-pcie-40gb"),
        source="derived: the A100 40GB's CUDA total (the export part of the A100)",
    ),
    GpuSpec(
        "A10G-24GB",
        "NVIDIA A10G",
        _mib(22587),
        compute_capability="8.6",
        aliases=("a10g", "a10g-24gb"),
        source="torch total_memory=22587MB (newer driver; 22723MB on older) for 'NVIDIA A10G' "
        "(gpus.md)",
    ),
    GpuSpec(
        "A10-24GB",
        "NVIDIA A10",
        _mib(22516),
        compute_capability="8.6",
        aliases=("a10", "a10-24gb"),
        source="deviceQuery 22516 MBytes (23609475072 bytes) for 'NVIDIA A10' (gpus.md)",
    ),
    GpuSpec(
        "L4-24GB",
        "NVIDIA L4",
        _mib(22518),
        compute_capability="8.9",
        aliases=("l4", "l4-24gb"),
        source="deviceQuery 22518 MBytes (23612293120 bytes) for 'NVIDIA L4' (gpus.md)",
    ),
    GpuSpec(
        "L40S-48GB",
        "NVIDIA L40S",
        _mib(45589),
        compute_capability="8.9",
        aliases=("l40s", "l40s-48gb"),
        source="torch total_memory=45589MB for 'NVIDIA L40S'; OOM 44.53 GiB (gpus.md)",
    ),
    GpuSpec(
        "L40-48GB",
        "NVIDIA L40",
        _gib(44.40),
        compute_capability="8.9",
        aliases=("l40", "l40-48gb"),
        source="OOM 'total capacity of 44.40 GiB' on a single L40, QwenLM/Qwen3-VL#2097 (gpus.md)",
    ),
    GpuSpec(
        "A40-48GB",
        "NVIDIA A40",
        _mib(46068 - 479),
        compute_capability="8.6",
        aliases=("a40", "a40-48gb"),
        source="derived: nvidia-smi 46068 MiB as the L40S (gpus.md), minus the L40S's 479 MiB "
        "smi/CUDA gap",
    ),
    GpuSpec(
        "L20-48GB",
        "NVIDIA L20",
        _mib(46068 - 479),
        compute_capability="8.9",
        aliases=("l20", "l20-48gb"),
        source="derived: not found; a 48 GB GDDR6 Ada card taken as the L40S's CUDA total",
    ),
    GpuSpec(
        "T4-16GB",
        "Tesla T4",
        _mib(15079),
        compute_capability="7.5",
        aliases=("t4", "tesla-t4", "t4-16gb"),
        source="torch total_memory 15079-15109MB for 'Tesla T4' (the lowest kept; gpus.md)",
    ),
    GpuSpec(
        "V100-16GB",
        "Tesla V100-SXM2-16GB",
        _mib(16130),
        compute_capability="7.0",
        aliases=("v100", "tesla-v100", "v100-16gb", "v100-sxm2-16gb", "v100-pcie-16gb"),
        source="torch total_memory 16130-16160MB for 'Tesla V100-SXM2-16GB' (lowest kept; gpus.md)",
    ),
    GpuSpec(
        "V100-32GB",
        "Tesla V100-SXM2-32GB",
        _mib(16130 * 2),
        compute_capability="7.0",
        aliases=("v100-32gb", "v100-sxm2-32gb", "v100-pcie-32gb", "v100s", "v100s-32gb"),
        source="derived: not found; twice the V100-16GB CUDA total",
    ),
    # --- NVIDIA workstation and consumer cards ---
    GpuSpec(
        "RTX-3090-24GB",
        "NVIDIA GeForce RTX 3090",
        _mib(24259),
        compute_capability="8.6",
        aliases=("rtx-3090", "3090", "rtx3090", "rtx-3090-ti", "3090-ti", "rtx3090ti"),
        source="torch total_memory=24259MB for 'NVIDIA GeForce RTX 3090' (Linux, 3 files; gpus.md)",
    ),
    GpuSpec(
        "RTX-4090-24GB",
        "NVIDIA GeForce RTX 4090",
        _mib(24563),
        compute_capability="8.9",
        aliases=("rtx-4090", "4090", "rtx4090", "rtx-4090-24gb"),
        source="torch total_memory=24563MB for 'NVIDIA GeForce RTX 4090' (one printout, OS not "
        "stated; gpus.md)",
    ),
    GpuSpec(
        "RTX-5090-32GB",
        "NVIDIA GeForce RTX 5090",
        _mib(32089),
        compute_capability="12.0",
        aliases=("rtx-5090", "5090", "rtx5090", "rtx-5090-32gb"),
        source="torch total 32089 MiB ('total capacity of 31.34 GiB') for the RTX 5090 (gpus.md)",
    ),
    GpuSpec(
        "RTX-4080-16GB",
        "NVIDIA GeForce RTX 4080",
        _mib(16376 - 300),
        compute_capability="8.9",
        aliases=("rtx-4080", "4080", "rtx4080", "rtx-4080-super", "rtx-4080-16gb"),
        source="derived: not found; 16 GB card (nvidia-smi 16376 MiB) minus the ~0.3 GiB "
        "smi/CUDA gap of the 24 GB consumer cards",
    ),
    GpuSpec(
        "RTX-5070-Ti-16GB",
        "NVIDIA GeForce RTX 5070 Ti",
        _mib(16303 - 300),
        compute_capability="12.0",
        aliases=("rtx-5070-ti", "5070-ti", "rtx5070ti", "rtx-5070ti", "rtx-5080", "5080"),
        source="derived: not found; 16 GB GDDR7 card (nvidia-smi 16303 MiB) minus the ~0.3 GiB "
        "smi/CUDA gap",
    ),
    GpuSpec(
        "RTX-3060-12GB",
        "NVIDIA GeForce RTX 3060",
        _mib(12288 - 300),
        compute_capability="8.6",
        aliases=("rtx-3060", "3060", "rtx3060", "rtx-3060-12gb"),
        source="derived: not found; 12 GB card minus the ~0.3 GiB smi/CUDA gap",
    ),
    GpuSpec(
        "RTX-3060-Laptop-6GB",
        "NVIDIA GeForce RTX 3060 Laptop GPU",
        _mib(6144 - 300),
        compute_capability="8.6",
        aliases=("rtx-3060-laptop", "rtx-3060-laptop-gpu", "rtx-3060-mobile"),
        source="derived: not found; 6 GB laptop part minus the ~0.3 GiB smi/CUDA gap",
    ),
    GpuSpec(
        "GTX-1650-SUPER-4GB",
        "NVIDIA GeForce GTX 1650 SUPER",
        _mib(4096),
        compute_capability="7.5",
        aliases=("gtx-1650-super", "gtx-1650", "1650-super", "gtx1650"),
        source="vLLM 0.27.1's start-up on one (Sergey-Kit/Local-inference-benchmark-Ollama-vs-"
        "llama.cpp-vs-vLLM@0b2f7ed results/vllm_longctx.log, WSL2): 'Free memory on device "
        "(3.2/4.0 GiB) ... Desired GPU memory utilization is (0.8, 3.2 GiB)', and its 1.92 GiB "
        "of KV memory is 3.2 less 1.23 consumed and 0.05 of activation: the whole 4,096 MiB "
        "(Ollama's log there: total_vram 4.0 GiB); native Linux drivers may report less",
    ),
    GpuSpec(
        "Quadro-RTX-6000-24GB",
        "Quadro RTX 6000",
        _mib(24576 - 300),
        compute_capability="7.5",
        aliases=("quadro-rtx-6000", "quadro-rtx6000"),
        source="derived: not found; the Turing workstation card's 24 GB minus the ~0.3 GiB "
        "smi/CUDA gap",
    ),
    GpuSpec(
        "RTX-4070-12GB",
        "NVIDIA GeForce RTX 4070",
        _mib(12282 - 300),
        compute_capability="8.9",
        aliases=(
            "rtx-4070",
            "4070",
            "rtx4070",
            "rtx-4070-12gb",
            "rtx4070-12gb",
            "4070-12gb",
            "rtx-4070-super",
            "rtx-4070-ti",
        ),
        source="derived: not found; 12 GB card (nvidia-smi 12282 MiB) minus the ~0.3 GiB "
        "smi/CUDA gap of the 24 GB consumer cards",
    ),
    GpuSpec(
        "RTX-4070-8GB",
        "NVIDIA GeForce RTX 4070 Laptop GPU",
        _mib(8188 - 300),
        compute_capability="8.9",
        aliases=(
            "rtx-4070-8gb",
            "rtx4070-8gb",
            "4070-8gb",
            "rtx-4070-laptop",
            "rtx-4070-laptop-gpu",
            "rtx-4070-mobile",
        ),
        source="derived: not found; 8 GB laptop part (nvidia-smi 8188 MiB) minus the ~0.3 GiB "
        "smi/CUDA gap",
    ),
    GpuSpec(
        "RTX-4060-8GB",
        "NVIDIA GeForce RTX 4060",
        _gib(8.00),
        compute_capability="8.9",
        aliases=("rtx-4060", "4060", "rtx4060", "rtx-4060-8gb"),
        source="vLLM V0 log 'total_gpu_memory (8.00GiB)' on an RTX 4060, vllm-project/vllm#13882",
    ),
    GpuSpec(
        "RTX-2060-12GB",
        "NVIDIA GeForce RTX 2060 12GB",
        _gib(12.00),
        compute_capability="7.5",
        aliases=("rtx-2060-12gb", "rtx-2060", "2060", "rtx2060"),
        source="vLLM V0 log 'total_gpu_memory (12.00GiB)', Q07K/langgraph-mcp-example README",
    ),
    GpuSpec(
        "RTX-A6000-48GB",
        "NVIDIA RTX A6000",
        _mib(48676),
        compute_capability="8.6",
        aliases=("rtx-a6000", "a6000", "rtxa6000"),
        source="torch total_memory=48676MB for 'NVIDIA RTX A6000' (gpus.md)",
    ),
    GpuSpec(
        "RTX-A5000-24GB",
        "NVIDIA RTX A5000",
        _mib(24138),
        compute_capability="8.6",
        aliases=("rtx-a5000", "a5000", "rtxa5000", "quadro-a5000", "rtx-a5000-24gb"),
        source="torch total_memory=24138MB for 'NVIDIA RTX A5000' (two public printouts of "
        "torch.cuda.get_device_properties, one at 24114MB; nvidia-smi 24564 MiB); the card of "
        "LMCache/LMCache#3430's log",
    ),
    GpuSpec(
        "RTX-A4000-16GB",
        "NVIDIA RTX A4000",
        _gib(15.61),
        compute_capability="8.6",
        aliases=("rtx-a4000", "a4000", "rtxa4000", "quadro-a4000", "rtx-a4000-16gb"),
        source="torch 'GPU 0 has a total capacity of 15.61 GiB' on 'an NVIDIA RTX A4000 GPU with "
        "16GB of memory' (DengKaiCQ/VGGT-Long#6; nvidia-smi prints 16376 MiB); the card of "
        "NVIDIA/TensorRT-LLM#1188's log ('Quadro A4000')",
    ),
    GpuSpec(
        "RTX-5060-Ti-16GB",
        "NVIDIA GeForce RTX 5060 Ti",
        _mib(16311 - 300),
        compute_capability="12.0",
        aliases=("rtx-5060-ti", "5060-ti", "rtx5060ti", "rtx-5060ti", "rtx-5060-ti-16gb"),
        source="derived: not found; nvidia-smi 16311 MiB for the 16 GB GDDR7 card (a public "
        "hardware note) minus the ~0.3 GiB smi/CUDA gap; the card of javiercancela's "
        "TensorRT-LLM post",
    ),
    GpuSpec(
        "RTX-6000-Ada-48GB",
        "NVIDIA RTX 6000 Ada Generation",
        _mib(48676),
        compute_capability="8.9",
        aliases=("rtx-6000-ada", "rtx-6000-ada-generation", "6000-ada", "rtx6000-ada"),
        source="derived: not found; taken as the RTX A6000's figure (same 48 GB GDDR6)",
    ),
    GpuSpec(
        "RTX-PRO-6000-96GB",
        "NVIDIA RTX PRO 6000 Blackwell",
        _gib(94.97),
        compute_capability="12.0",
        aliases=(
            "rtx-pro-6000",
            "rtx-pro-6000-blackwell",
            "rtx-pro-6000-blackwell-server-edition",
            "rtx-pro-6000-blackwell-workstation-edition",
            "pro-6000",
        ),
        source="weak: OOM 94.97 GiB in unnamed '96GB' logs; torch printout '102.0 GB' decimal "
        "(gpus.md)",
    ),
    # --- unified memory ---
    GpuSpec(
        "GB10-128GB",
        "NVIDIA GB10 (DGX Spark)",
        _gib(119.61),
        compute_capability="12.1",
        aliases=("gb10", "dgx-spark", "spark", "gx10", "ascent-gx10"),
        source="OOM 'total capacity of 119.61 GiB' (ASUS GX10) / 119.70 GiB (GB10); varies by "
        "boot; the lowest kept (gpus.md)",
        memory_kind="unified",
    ),
    GpuSpec(
        "Jetson-AGX-Orin-32GB",
        "Orin",
        _mib(30622),
        compute_capability="8.7",
        aliases=("jetson-agx-orin", "agx-orin", "orin", "jetson-orin"),
        source="torch total_memory=30622MB for 'Orin' (one YOLO log; gpus.md)",
        memory_kind="unified",
    ),
    # --- AMD Instinct (HIP totals from OOM lines) ---
    GpuSpec(
        "MI300X-192GB",
        "AMD Instinct MI300X",
        _gib(191.98),
        vendor="amd",
        aliases=("mi300x", "mi300", "instinct-mi300x", "mi300x-192gb", "mi308x", "mi308"),
        source="HIP OOM 'total capacity of 191.98 GiB' on MI300X, the same on MI308X (gpus.md)",
    ),
    GpuSpec(
        "MI325X-256GB",
        "AMD Instinct MI325X",
        _gib(255.98),
        vendor="amd",
        aliases=("mi325x", "mi325", "mi325x-256gb"),
        source="HIP OOM 'total capacity of 255.98 GiB' (card identified by capacity; gpus.md)",
    ),
    GpuSpec(
        "MI355X-288GB",
        "AMD Instinct MI355X",
        _gib(287.98),
        vendor="amd",
        aliases=("mi355x", "mi355", "mi350x"),
        source="HIP OOM 'total capacity of 287.98 GiB' on gfx950, ROCm/TheRock#2118 (gpus.md)",
    ),
    GpuSpec(
        "MI250X-64GB",
        "AMD Instinct MI250X (one GCD)",
        _gib(63.98),
        vendor="amd",
        aliases=("mi250x", "mi250", "mi210", "instinct-mi250x", "instinct-mi250"),
        source="weak: HIP OOM 'total capacity of 63.98 GiB' (card not named); each MI250(X) GCD "
        "is one 64 GB device (gpus.md)",
    ),
    # --- Google TPUs: recognised, out of scope ---
    GpuSpec(
        "TPU-v5e",
        "Google TPU v5e",
        16 * GiB,
        vendor="google",
        aliases=("tpu-v5e", "v5e", "tpu-v5-lite", "tpu-v5-lite-podslice", "tpu-v5-lite-device"),
        source="16 GiB HBM per chip (Cloud TPU documentation); TPU memory is out of scope",
        memory_kind="tpu",
    ),
    GpuSpec(
        "TPU-v5p",
        "Google TPU v5p",
        95 * GiB,
        vendor="google",
        aliases=("tpu-v5p", "v5p", "tpu-v5p-slice"),
        source="95 GiB HBM per chip (Cloud TPU documentation); TPU memory is out of scope",
        memory_kind="tpu",
    ),
    GpuSpec(
        "TPU-v6e",
        "Google TPU v6e (Trillium)",
        32 * GiB,
        vendor="google",
        aliases=("tpu-v6e", "v6e", "trillium", "tpu-v6e-slice"),
        source="32 GiB HBM per chip (Cloud TPU documentation); TPU memory is out of scope",
        memory_kind="tpu",
    ),
    GpuSpec(
        "TPU-v4",
        "Google TPU v4",
        32 * GiB,
        vendor="google",
        aliases=("tpu-v4", "v4", "tpu-v4-podslice"),
        source="32 GiB HBM per chip (Cloud TPU documentation); TPU memory is out of scope",
        memory_kind="tpu",
    ),
    GpuSpec(
        "TPU",
        "Google TPU",
        16 * GiB,
        vendor="google",
        aliases=("google-tpu",),
        source="the `google.com/tpu` resource names no generation: the smallest chip's 16 GiB "
        "(v5e); TPU memory is out of scope",
        memory_kind="tpu",
    ),
    # --- other accelerators: recognised (their extended resources, their node labels), not
    # sized: their engines' memory accounting is not kvlint's GPU arithmetic ---
    GpuSpec(
        "Gaudi",
        "Intel Gaudi",
        96 * GiB,
        vendor="intel",
        aliases=("intel-gaudi", "gaudi2", "gaudi-2", "habana-gaudi", "hl-225"),
        source="96 GB HBM2e per Gaudi 2 (Intel's product brief); the `habana.ai/gaudi` resource "
        "names no generation; out of scope",
        memory_kind="hpu",
    ),
    GpuSpec(
        "Gaudi3",
        "Intel Gaudi 3",
        128 * GiB,
        vendor="intel",
        aliases=("gaudi3", "gaudi-3", "hl-325l"),
        source="128 GB HBM2e per Gaudi 3 (Intel's product brief); out of scope",
        memory_kind="hpu",
    ),
    GpuSpec(
        "Ascend",
        "Huawei Ascend",
        64 * GiB,
        vendor="huawei",
        aliases=("huawei-ascend", "ascend-910b", "ascend910b", "ascend910"),
        source="64 GB HBM per Ascend 910B (Huawei's product page); out of scope",
        memory_kind="npu",
    ),
    GpuSpec(
        "Neuron",
        "AWS Neuron",
        32 * GiB,
        vendor="aws",
        aliases=("aws-neuron", "inferentia2", "inferentia", "trainium", "trainium2"),
        source="32 GB HBM per Inferentia2 / Trainium chip (AWS's instance pages); out of scope",
        memory_kind="neuron",
    ),
)

# Cards with no NVLink connector or bridge (NVIDIA's product pages: Ada and Blackwell GeForce
# and workstation cards, L4/L40/L40S/L20, T4, A10/A10G): multi-GPU traffic goes over PCIe,
# where NCCL runs a few channels (vLLM's memory: memory.non_torch_bytes).
_PCIE_ONLY = frozenset(
    {
        "A10G-24GB",
        "A10-24GB",
        "L4-24GB",
        "L40S-48GB",
        "L40-48GB",
        "L20-48GB",
        "T4-16GB",
        "RTX-4090-24GB",
        "RTX-5090-32GB",
        "RTX-4080-16GB",
        "RTX-5070-Ti-16GB",
        "RTX-3060-12GB",
        "RTX-3060-Laptop-6GB",
        "GTX-1650-SUPER-4GB",
        "RTX-4070-12GB",
        "RTX-4070-8GB",
        "RTX-4060-8GB",
        "RTX-2060-12GB",
        "RTX-6000-Ada-48GB",
        "RTX-PRO-6000-96GB",
        "RTX-A4000-16GB",
        "RTX-5060-Ti-16GB",
    }
)

# Cards whose NVLink is a bridge between two boards (NVIDIA's product pages: the GeForce RTX 3090
# and the Ampere workstation cards take a 2-slot/3-slot two-way bridge; A100 and H100 PCIe and
# H100 NVL are bridged in pairs): a tensor-parallel group of more than two has pairs that talk
# over PCIe, so vLLM turns its custom all-reduce off ("Custom allreduce is disabled because it's
# not supported on more than two PCIe-only GPUs": custom_all_reduce.py asks NVML whether every
# pair is NVLink-connected) and NCCL's ring runs at the PCIe pair's few channels.
_BRIDGED_PAIRS = frozenset(
    {
        "RTX-3090-24GB",
        "RTX-A6000-48GB",
        "RTX-A5000-24GB",
        "Quadro-RTX-6000-24GB",
        "A40-48GB",
        "A100-PCIe-80GB",
        "A100-PCIe-40GB",
        "H100-PCIe-80GB",
        "H100-NVL-94GB",
    }
)

# Cloud instance types: (GPU key, GPUs per instance). AWS, GCP and Azure names as their APIs
# write them; the families are general knowledge (gpus.md "Names used in Kubernetes and clouds").
_SINGLE = ("xlarge", "2xlarge", "4xlarge", "8xlarge", "16xlarge")  # one-GPU sizes
_INSTANCES: dict[str, tuple[str, int]] = {
    # AWS
    **{f"g4dn.{s}": ("T4-16GB", 1) for s in _SINGLE},
    "g4dn.12xlarge": ("T4-16GB", 4),
    "g4dn.metal": ("T4-16GB", 8),
    **{f"g5.{s}": ("A10G-24GB", 1) for s in _SINGLE},
    "g5.12xlarge": ("A10G-24GB", 4),
    "g5.24xlarge": ("A10G-24GB", 4),
    "g5.48xlarge": ("A10G-24GB", 8),
    **{f"g6.{s}": ("L4-24GB", 1) for s in _SINGLE},
    "g6.12xlarge": ("L4-24GB", 4),
    "g6.24xlarge": ("L4-24GB", 4),
    "g6.48xlarge": ("L4-24GB", 8),
    **{f"g6e.{s}": ("L40S-48GB", 1) for s in _SINGLE},
    "g6e.12xlarge": ("L40S-48GB", 4),
    "g6e.24xlarge": ("L40S-48GB", 4),
    "g6e.48xlarge": ("L40S-48GB", 8),
    "p3.2xlarge": ("V100-16GB", 1),
    "p3.8xlarge": ("V100-16GB", 4),
    "p3.16xlarge": ("V100-16GB", 8),
    "p3dn.24xlarge": ("V100-32GB", 8),
    "p4d.24xlarge": ("A100-SXM-40GB", 8),
    "p4de.24xlarge": ("A100-SXM-80GB", 8),
    "p5.4xlarge": ("H100-SXM-80GB", 1),
    "p5.48xlarge": ("H100-SXM-80GB", 8),
    "p5e.48xlarge": ("H200-141GB", 8),
    "p5en.48xlarge": ("H200-141GB", 8),
    "p6-b200.48xlarge": ("B200-180GB", 8),
    "p6-b300.48xlarge": ("B300-288GB", 8),
    "p6e-gb200.36xlarge": ("GB200-186GB", 4),
    # GCP machine types
    "a2-highgpu-1g": ("A100-SXM-40GB", 1),
    "a2-highgpu-2g": ("A100-SXM-40GB", 2),
    "a2-highgpu-4g": ("A100-SXM-40GB", 4),
    "a2-highgpu-8g": ("A100-SXM-40GB", 8),
    "a2-megagpu-16g": ("A100-SXM-40GB", 16),
    "a2-ultragpu-1g": ("A100-SXM-80GB", 1),
    "a2-ultragpu-2g": ("A100-SXM-80GB", 2),
    "a2-ultragpu-4g": ("A100-SXM-80GB", 4),
    "a2-ultragpu-8g": ("A100-SXM-80GB", 8),
    "a3-highgpu-1g": ("H100-SXM-80GB", 1),
    "a3-highgpu-2g": ("H100-SXM-80GB", 2),
    "a3-highgpu-4g": ("H100-SXM-80GB", 4),
    "a3-highgpu-8g": ("H100-SXM-80GB", 8),
    "a3-megagpu-8g": ("H100-SXM-80GB", 8),
    "a3-edgegpu-8g": ("H100-SXM-80GB", 8),
    "a3-ultragpu-8g": ("H200-141GB", 8),
    "a4-highgpu-8g": ("B200-180GB", 8),
    "a4x-highgpu-4g": ("GB200-186GB", 4),
    "g2-standard-4": ("L4-24GB", 1),
    "g2-standard-8": ("L4-24GB", 1),
    "g2-standard-12": ("L4-24GB", 1),
    "g2-standard-16": ("L4-24GB", 1),
    "g2-standard-32": ("L4-24GB", 1),
    "g2-standard-24": ("L4-24GB", 2),
    "g2-standard-48": ("L4-24GB", 4),
    "g2-standard-96": ("L4-24GB", 8),
    # Azure VM sizes
    "standard_nd96asr_v4": ("A100-SXM-40GB", 8),
    "standard_nd96asr_a100_v4": ("A100-SXM-40GB", 8),
    "standard_nd96amsr_a100_v4": ("A100-SXM-80GB", 8),
    "standard_nc24ads_a100_v4": ("A100-PCIe-80GB", 1),
    "standard_nc48ads_a100_v4": ("A100-PCIe-80GB", 2),
    "standard_nc96ads_a100_v4": ("A100-PCIe-80GB", 4),
    "standard_nd96isr_h100_v5": ("H100-SXM-80GB", 8),
    "standard_nd96isr_h200_v5": ("H200-141GB", 8),
    "standard_nc40ads_h100_v5": ("H100-NVL-94GB", 1),
    "standard_nc80adis_h100_v5": ("H100-NVL-94GB", 2),
    "standard_nd96isr_mi300x_v5": ("MI300X-192GB", 8),
    "standard_nc4as_t4_v3": ("T4-16GB", 1),
    "standard_nc8as_t4_v3": ("T4-16GB", 1),
    "standard_nc16as_t4_v3": ("T4-16GB", 1),
    "standard_nc64as_t4_v3": ("T4-16GB", 4),
    "standard_nc6s_v3": ("V100-16GB", 1),
    "standard_nc12s_v3": ("V100-16GB", 2),
    "standard_nc24s_v3": ("V100-16GB", 4),
    "standard_nc24rs_v3": ("V100-16GB", 4),
    "standard_nd40rs_v2": ("V100-32GB", 8),
    "standard_nv36ads_a10_v5": ("A10-24GB", 1),
    "standard_nv72ads_a10_v5": ("A10-24GB", 2),
    "standard_ncc40ads_h100_v5": ("H100-NVL-94GB", 1),
    "standard_nd128isr_ndr_gb200_v6": ("GB200-186GB", 4),
    # OCI shapes (node.kubernetes.io/instance-type on OKE)
    "vm.gpu.a10.1": ("A10-24GB", 1),
    "vm.gpu.a10.2": ("A10-24GB", 2),
    "bm.gpu.a10.4": ("A10-24GB", 4),
    "vm.gpu3.1": ("V100-16GB", 1),
    "vm.gpu3.2": ("V100-16GB", 2),
    "vm.gpu3.4": ("V100-16GB", 4),
    "bm.gpu3.8": ("V100-16GB", 8),
    "bm.gpu4.8": ("A100-SXM-40GB", 8),
    "bm.gpu.a100-v2.8": ("A100-SXM-80GB", 8),
    "bm.gpu.h100.8": ("H100-SXM-80GB", 8),
    "bm.gpu.h200.8": ("H200-141GB", 8),
    "bm.gpu.l40s.4": ("L40S-48GB", 4),
    "bm.gpu.l40s-nc.4": ("L40S-48GB", 4),
    "bm.gpu.mi300x.8": ("MI300X-192GB", 8),
    "bm.gpu.b200.8": ("B200-180GB", 8),
    "bm.gpu.gb200.4": ("GB200-186GB", 4),
    # GCP G4 (RTX PRO 6000 Blackwell)
    "g4-standard-48": ("RTX-PRO-6000-96GB", 1),
    "g4-standard-96": ("RTX-PRO-6000-96GB", 2),
    "g4-standard-192": ("RTX-PRO-6000-96GB", 4),
    "g4-standard-384": ("RTX-PRO-6000-96GB", 8),
    # AWS Inferentia2 / Trainium: Neuron accelerators, recognised and not sized
    "inf2.xlarge": ("Neuron", 1),
    "inf2.8xlarge": ("Neuron", 1),
    "inf2.24xlarge": ("Neuron", 6),
    "inf2.48xlarge": ("Neuron", 12),
    "trn1.2xlarge": ("Neuron", 1),
    "trn1.32xlarge": ("Neuron", 16),
    "trn1n.32xlarge": ("Neuron", 16),
    "trn2.48xlarge": ("Neuron", 16),
}
# SageMaker spells the same instance types with an `ml.` prefix (ml.g5.2xlarge).
_INSTANCES.update({f"ml.{name}": entry for name, entry in list(_INSTANCES.items()) if "." in name})

# Words that only say who makes the card or which product line it belongs to.
_NOISE_PREFIXES = ("nvidia", "tesla", "geforce", "amd", "instinct", "radeon", "google", "gpu")

# Apple silicon: the unified-memory configurations each chip ships in (Apple's technical
# specifications of the Macs that carry it; "GB" there are GiB: hw.memsize of a "96GB" Mac is
# 96 x 2^30). The first is the smallest, used when a name gives no size (a conservative
# choice); a size the chip never had names no Apple GPU. M5 Pro / Max / Ultra are left out: no
# configuration of theirs was found in a source kvlint could cite.
_APPLE_CONFIGS_GB: dict[str, tuple[int, ...]] = {
    "m1": (8, 16),
    "m1-pro": (16, 32),
    "m1-max": (32, 64),
    "m1-ultra": (64, 128),
    "m2": (8, 16, 24),
    "m2-pro": (16, 32),
    "m2-max": (32, 64, 96),
    "m2-ultra": (64, 128, 192),
    "m3": (8, 16, 24),
    "m3-pro": (18, 36),
    "m3-max": (36, 48, 64, 96, 128),
    "m3-ultra": (96, 256, 512),
    "m4": (16, 24, 32),
    "m4-pro": (24, 48, 64),
    "m4-max": (36, 48, 64, 128),
    "m5": (16, 24, 32),
}
_APPLE_RE = lazy(r"^(?:apple-)?(m[1-5](?:-(?:pro|max|ultra))?)(?:-(\d+)(?:gb?)?)?$")

# The GPU working set macOS lets Metal wire by default (``recommendedMaxWorkingSetSize``, which
# llama.cpp's Metal backend logs in MB of 10^6 bytes and MLX reads as
# ``mx.device_info()["max_recommended_working_set_size"]``), by configuration, where a public
# start-up log gives it. ``sudo sysctl iogpu.wired_limit_mb=N`` replaces it with N MiB.
_APPLE_WIRED_MEASURED: dict[int, tuple[int, str]] = {
    16: (
        12_123 * MiB,
        "12123 MiB free on a 16 GB M4 (acdtrx/llama-runner@bd0f47d llama-server.log)",
    ),
    18: (14_302_250_000, "14302.25 MB on an 18 GB M3 Pro (a public llama.cpp Metal log)"),
    32: (26_800_600_000, "26800.60 MB on a 32 GB M4 (a public Ollama Metal log)"),
    36: (30_150_670_000, "30150.67 MB on a 36 GB Mac (a public llama.cpp Metal log)"),
    64: (55_662_790_000, "55662.79 MB on a 64 GB M3 Max (a public llama.cpp Metal log, 2026)"),
}
# Elsewhere: 3/4 of the memory, below every ratio measured on current macOS (0.74 at 16 and
# 18 GB, 0.78 at 32 and 36 GB, 0.81 at 64 GB) and the figure macOS 14 gave above 36 GB
# (51539.61 MB = 3/4 of a 64 GB M2 Max): the conservative reading. A box whose limit was
# raised states iogpu.wired_limit_mb.
APPLE_WIRED_FRACTION = 0.75


def apple_default_wired_bytes(memory_gib: int) -> tuple[int, str]:
    """macOS's default GPU working set for a Mac of ``memory_gib``, and where it comes from."""
    if memory_gib in _APPLE_WIRED_MEASURED:
        return _APPLE_WIRED_MEASURED[memory_gib]
    wired = round(memory_gib * GiB * APPLE_WIRED_FRACTION)
    return wired, f"3/4 of {memory_gib} GiB (no log of this configuration found)"


def normalise_gpu_name(name: str) -> str:
    """Lower case, one ``-`` between alphanumeric runs, vendor words dropped:
    ``NVIDIA-H100-80GB-HBM3`` and ``nvidia h100 80gb hbm3`` both become ``h100-80gb-hbm3``."""
    words = [w for w in re.split(r"[^a-z0-9]+", name.lower()) if w]
    while words and words[0] in _NOISE_PREFIXES:
        words = words[1:]
    # "rtx4090" and "rtx-4090" alike; a trailing "gpu" says nothing.
    if words and words[-1] == "gpu" and len(words) > 1:
        words = words[:-1]
    return "-".join(words)


def _build_index() -> dict[str, GpuSpec]:
    index: dict[str, GpuSpec] = {}
    for gpu in _CATALOG:
        for alias in (gpu.key, gpu.display, *gpu.aliases):
            index.setdefault(normalise_gpu_name(alias), gpu)
    return index


_BY_KEY = {gpu.key: gpu for gpu in _CATALOG}
_INDEX = _build_index()
_INSTANCE_INDEX = {normalise_gpu_name(k): v for k, v in _INSTANCES.items()}


def lookup_gpu(name: str) -> GpuSpec | None:
    """The catalog entry for a GPU as people write it, or None when the name is unknown.

    Accepts marketing names (``H100-80GB``), driver names (``NVIDIA-H100-80GB-HBM3``, the
    ``nvidia.com/gpu.product`` label), GKE accelerators (``nvidia-tesla-a100``), Karpenter
    GPU names (``h100``), cloud instance types (``p5.48xlarge``, ``a3-highgpu-8g``,
    ``Standard_ND96asr_v4``) and Apple chips (``M3 Ultra 96GB``).
    """
    key = normalise_gpu_name(name)
    if not key:
        return None
    if key in _INDEX:
        return _INDEX[key]
    mig = _MIG_RE.search(key)
    if mig is not None:
        return _mig_slice(key[: mig.start()], int(mig.group(1)), int(mig.group(2)))
    if key in _INSTANCE_INDEX:
        return _BY_KEY[_INSTANCE_INDEX[key][0]]
    apple = _apple(key)
    if apple is not None:
        return apple
    # "NVIDIA-H100-80GB-HBM3-MIG-..." style suffixes and memory sizes the alias list lacks:
    # drop trailing words one at a time ("h100-sxm5-80gb-hbm3" -> "h100-sxm5-80gb" -> ...).
    words = key.split("-")
    sizes = _Sizes(words)
    for end in range(min(len(words) - 1, _MAX_WORDS), 0, -1):
        candidate = "-".join(words[:end])
        if candidate in _INDEX and not sizes.conflict(_INDEX[candidate], 0, end):
            return _INDEX[candidate]
    return _within(words, sizes)


# The most words of any known name: a longer run of words names nothing, so none is tried
# (trying every run of a 4 KB node label's words was cubic: 283 s, issue 15).
_MAX_WORDS = max(len(name.split("-")) for name in (*_INDEX, *_INSTANCE_INDEX))
_SIZE_WORD_RE = lazy(r"(\d+)gb?")
_DIGIT_RE = lazy(r"\d")


class _Sizes:
    """The memory sizes the words state (``80gb``), so that a name is refused when a word
    outside it states a size the entry does not have, in constant time per candidate."""

    def __init__(self, words: list[str]) -> None:
        self.numbers = [
            match.group(1) if (match := _SIZE_WORD_RE.fullmatch(word)) else None for word in words
        ]
        self._foreign: dict[str, int] = {}  # entry key -> size words not of that entry

    def _count(self, numbers: list[str | None], key: str) -> int:
        return sum(1 for number in numbers if number is not None and number not in key)

    def conflict(self, gpu: GpuSpec, start: int, end: int) -> bool:
        """Whether a word outside ``words[start:end]`` states a size ``gpu`` does not have."""
        key = gpu.key.lower()
        total = self._foreign.get(key)
        if total is None:
            total = self._foreign[key] = self._count(self.numbers, key)
        return total - self._count(self.numbers[start:end], key) > 0


def _within(words: list[str], sizes: _Sizes) -> GpuSpec | None:
    """A known name inside free text (``AWS g5.48xlarge (8x NVIDIA A10G 24GB)``): the longest
    run of words that names an instance type or a GPU, and holds a digit (every GPU name does),
    so that words such as ``single`` or ``with`` never match."""
    for length in range(min(len(words) - 1, _MAX_WORDS), 0, -1):
        for start in range(len(words) - length + 1):
            candidate = "-".join(words[start : start + length])
            if not _DIGIT_RE.search(candidate):
                continue
            if candidate in _INSTANCE_INDEX:
                return _BY_KEY[_INSTANCE_INDEX[candidate][0]]
            gpu = _INDEX.get(candidate)
            if gpu is not None and not sizes.conflict(gpu, start, start + length):
                return gpu
    return None


# A MIG slice: `NVIDIA-A100-SXM4-80GB-MIG-3g.40gb` (the feature discovery label under the mixed
# strategy), `mig-1g.10gb` (the extended resource nvidia.com/mig-1g.10gb).
_MIG_RE = lazy(r"(?:^|-)mig-(\d)g-(\d+)gb$")


def _mig_slice(parent_name: str, compute: int, memory_gb: int) -> GpuSpec:
    """A MIG instance is a GPU of its own to the engine: its memory is its share of the card's
    (the profile's GB out of the card's; the CUDA reserve scales with it)."""
    parent = lookup_gpu(parent_name) if parent_name else None
    nominal = re.search(r"(\d+)GB", parent.key) if parent is not None else None
    if parent is not None and nominal is not None:
        total = parent.total_bytes * memory_gb // int(nominal.group(1))
        how = f"{memory_gb}/{nominal.group(1)} of the {parent.key}'s CUDA total"
        key, capability = f"{parent.key}-MIG-{compute}g.{memory_gb}gb", parent.compute_capability
    else:
        total = round(memory_gb * GiB * 0.98)
        how = f"{memory_gb} GiB less the 2% a whole card's CUDA reserve takes"
        key, capability = f"MIG-{compute}g.{memory_gb}gb", None
    return GpuSpec(
        key,
        f"{parent.display if parent else 'NVIDIA GPU'} MIG {compute}g.{memory_gb}gb",
        total,
        compute_capability=capability,
        source=f"derived: a MIG {compute}g.{memory_gb}gb slice, {how}",
    )


def _apple(key: str) -> GpuSpec | None:
    match = _APPLE_RE.match(key)
    if match is None:
        return None
    chip, size = match.group(1), match.group(2)
    configs = _APPLE_CONFIGS_GB.get(chip)
    if configs is None:
        return None
    gb = int(size) if size else configs[0]
    if gb not in configs:
        return None  # a size this chip never shipped with (an M3 Ultra has no 128 GB)
    label = chip.replace("-", " ").title()
    source = "the configured unified memory (Apple's GB are GiB)"
    if not size:
        source = f"no size in the name: the smallest {label} configuration ({gb} GB)"
    wired, wired_source = apple_default_wired_bytes(gb)
    return GpuSpec(
        f"{label.replace(' ', '-')}-{gb}GB",
        f"Apple {label} {gb}GB",
        gb * GiB,
        vendor="apple",
        source=f"{source}; default GPU working set {wired_source}",
        memory_kind="unified",
        wired_limit_bytes=wired,
    )


def apple_configurations() -> dict[str, tuple[int, ...]]:
    """Each Apple chip kvlint knows and the memory sizes (GB) it ships in."""
    return dict(_APPLE_CONFIGS_GB)


# Names that do not pin the memory: every card they can mean, smallest first. Keyed by the name
# with only the vendor word dropped, so a GKE label that does pin it (`nvidia-tesla-a100`, the
# 40 GB part of a2-highgpu) is not taken for the bare `A100`.
_AMBIGUOUS: dict[str, tuple[str, ...]] = {
    "a100": ("A100-SXM-40GB", "A100-SXM-80GB"),
    "a100-sxm": ("A100-SXM-40GB", "A100-SXM-80GB"),
    "a100-sxm4": ("A100-SXM-40GB", "A100-SXM-80GB"),  # GFD's product label without the memory
    "a100-pcie": ("A100-PCIe-40GB", "A100-PCIe-80GB"),
    "a800": ("A800-40GB", "A800-80GB"),
    "a800-sxm4": ("A800-40GB", "A800-80GB"),
    "h20": ("H20-96GB", "H20-141GB"),
    "v100": ("V100-16GB", "V100-32GB"),
    "v100-sxm2": ("V100-16GB", "V100-32GB"),
    "v100-pcie": ("V100-16GB", "V100-32GB"),
    "rtx-6000": ("Quadro-RTX-6000-24GB", "RTX-6000-Ada-48GB", "RTX-PRO-6000-96GB"),
}


def _bare_name(name: str) -> str:
    words = [w for w in re.split(r"[^a-z0-9]+", name.lower()) if w]
    while words and words[0] in ("nvidia", "geforce", "gpu"):
        words = words[1:]
    return "-".join(words)


def gpu_variants(name: str) -> tuple[GpuSpec, ...]:
    """Every card ``name`` can mean, smallest first: one for a name that pins the memory (or
    none for an unknown name), several for ``A100`` (40 or 80 GB), ``H20`` (96 or 141 GB),
    ``A800``, ``V100``, ``RTX 6000`` (Quadro, Ada or PRO)."""
    keys = _AMBIGUOUS.get(_bare_name(name))
    if keys is not None:
        return tuple(_BY_KEY[key] for key in keys)
    gpu = lookup_gpu(name)
    return (gpu,) if gpu is not None else ()


def instance_gpu_count(name: str) -> int | None:
    """GPUs per instance for a cloud instance type (``p5.48xlarge`` -> 8), else None."""
    entry = _INSTANCE_INDEX.get(normalise_gpu_name(name))
    return entry[1] if entry else None


def known_gpu_names() -> list[str]:
    """The canonical catalog names, for the unknown-GPU finding."""
    return [gpu.key for gpu in _CATALOG] + ["Apple-M<n>[-Pro|-Max|-Ultra]-<GB>"]


def catalog() -> tuple[GpuSpec, ...]:
    return _CATALOG
