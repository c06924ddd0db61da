"""The GPU catalog: total memory as the CUDA runtime reports it, and the names people write."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GpuSpec:
    """One GPU model. ``total_bytes`` is what ``torch.cuda.mem_get_info()[1]`` reports: the figure
    engines multiply by their memory fraction (not the marketing GB)."""

    key: str  # canonical name: "H100-SXM-80GB"
    display: str  # "NVIDIA H100 80GB HBM3"
    total_bytes: int
    vendor: str = "nvidia"  # nvidia, amd, apple
    compute_capability: str | None = None  # "9.0"; fp8 caches need >= 8.9 on NVIDIA
    aliases: tuple[str, ...] = ()
    source: str = ""
