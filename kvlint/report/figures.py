"""The numbers a report shows for one deployment, read from its Sizing as `kvlint size` does."""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import NamedTuple

from kvlint.units import format_band
from kvlint.units import format_bytes

if TYPE_CHECKING:
    from kvlint.linter import DeploymentResult


class Figures(NamedTuple):
    """One deployment's budget. Byte figures are first principles for the whole model
    (``kvlint size``'s ``per_token_bytes`` / ``per_sequence_bytes``); pool figures are the
    engine's own accounting (``kvlint size``'s ``engine`` object)."""

    label: str  # "deploy/vllm.yaml: Deployment/vllm container vllm"
    model: str | None
    engine: str  # "vllm 0.11"
    gpu: str | None  # "2 x H100-SXM-80GB", or the name as written when unknown
    max_model_len: int | None
    per_token_bytes: int | None
    per_sequence_bytes: int | None  # at max_model_len
    available_kv_bytes: int | None  # per GPU, as the engine logs it
    pool_tokens: int | None  # "GPU KV cache size: N tokens"
    admitted: float | None  # "Maximum concurrency for max_model_len tokens per request: Xx"
    requested: int | None  # max_num_seqs (or the engine's spelling of it)
    requested_default: bool = False  # the engine's default, not written in the file
    fits: bool | None = None  # False: the engine refuses to start
    model_gpus: int = 1  # GPUs holding one copy of the model: tensor x pipeline parallel
    # The 90% band on the available memory (per GPU) and the pool tokens, and the verdict
    # with it (starts, refuses, borderline); None where the engine gives none.
    available_kv_bytes_low: int | None = None
    available_kv_bytes_high: int | None = None
    pool_tokens_low: int | None = None
    pool_tokens_high: int | None = None
    verdict: str | None = None

    @property
    def pool_bytes(self) -> int | None:
        """KV memory of one model copy: the per-GPU pool on every GPU that holds a shard
        (what KV301 calls the pool)."""
        if self.available_kv_bytes is None:
            return None
        return self.available_kv_bytes * self.model_gpus

    def pool_text(self) -> str | None:
        """``55.2 GiB`` on one GPU, ``87.8 GiB (22 GiB per GPU x 4)`` on several."""
        pool = self.pool_bytes
        if pool is None or self.available_kv_bytes is None:
            return None
        band = ""
        low, high = self.available_kv_bytes_low, self.available_kv_bytes_high
        if low is not None and high:  # no band wholly at zero (the weights alone do not fit)
            band = f", 90% band {format_band(low * self.model_gpus, high * self.model_gpus)}"
        if self.model_gpus == 1:
            return format_bytes(pool) + band
        per_gpu = format_bytes(self.available_kv_bytes)
        return f"{format_bytes(pool)} ({per_gpu} per GPU x {self.model_gpus}{band})"


def deployment_figures(result: DeploymentResult) -> Figures:
    dep = result.deployment
    sizing = result.sizing
    estimate = sizing.engine if sizing is not None else None
    kv = sizing.kv if sizing is not None else None
    spec = sizing.spec if sizing is not None else None

    model = dep.model.value if dep.model is not None else (spec.name if spec else None)
    engine = dep.engine.value
    version = estimate.version if estimate is not None else None
    if version is None and dep.engine_version is not None:
        version = dep.engine_version.value
    if version:
        engine = f"{engine} {version}"

    gpu = None
    if sizing is not None and sizing.gpu is not None:
        gpu = sizing.gpu.key
    elif dep.gpu is not None:
        gpu = dep.gpu.value
    if gpu is not None and dep.gpu_count is not None and dep.gpu_count.value > 1:
        gpu = f"{dep.gpu_count.value} x {gpu}"

    max_len = estimate.max_model_len if estimate is not None else None
    if max_len is None and dep.max_model_len is not None:
        max_len = dep.max_model_len.value

    per_sequence = None
    if kv is not None and max_len is not None:
        per_sequence = kv.per_sequence_bytes(max_len)

    requested = dep.max_num_seqs.value if dep.max_num_seqs is not None else None
    tp = dep.tensor_parallel_size.value if dep.tensor_parallel_size is not None else 1
    pp = dep.pipeline_parallel_size.value if dep.pipeline_parallel_size is not None else 1
    return Figures(
        label=f"{dep.path}: {dep.name}",
        model=model,
        engine=engine,
        gpu=gpu,
        max_model_len=max_len,
        per_token_bytes=kv.per_token_bytes if kv is not None else None,
        per_sequence_bytes=per_sequence,
        available_kv_bytes=estimate.available_kv_bytes if estimate is not None else None,
        pool_tokens=estimate.kv_cache_tokens if estimate is not None else None,
        admitted=estimate.max_concurrency if estimate is not None else None,
        requested=requested,
        requested_default=dep.max_num_seqs.default if dep.max_num_seqs is not None else False,
        fits=estimate.fits if estimate is not None else None,
        model_gpus=max(1, tp) * max(1, pp),
        available_kv_bytes_low=estimate.available_kv_bytes_low if estimate is not None else None,
        available_kv_bytes_high=estimate.available_kv_bytes_high if estimate is not None else None,
        pool_tokens_low=estimate.kv_cache_tokens_low if estimate is not None else None,
        pool_tokens_high=estimate.kv_cache_tokens_high if estimate is not None else None,
        verdict=estimate.verdict if estimate is not None else None,
    )


def format_concurrency(value: float) -> str:
    """vLLM logs ``Maximum concurrency ... : 14.19x`` with two decimals."""
    return f"{value:,.2f}x"


def admitted_text(fig: Figures) -> str:
    """``14.19x of 256 requested`` (or ``14.19x`` when no cap is known)."""
    if fig.verdict == "borderline":
        admitted = "borderline: the engine may refuse to start"
        if fig.admitted is not None and fig.fits is not False:
            admitted = f"{format_concurrency(fig.admitted)} ({admitted})"
    elif fig.fits is False:
        admitted = "none: the engine refuses to start"
    elif fig.admitted is None:
        admitted = "unknown"
    else:
        admitted = format_concurrency(fig.admitted)
    if fig.requested is None:
        return admitted
    default = " (engine default)" if fig.requested_default else ""
    return f"{admitted} of {fig.requested:,} requested{default}"


def number_rows(fig: Figures) -> list[tuple[str, str]]:
    """The four numbers behind a capacity finding, formatted; unknown ones left out. Units as
    `kvlint size` and the rules print them: binary throughout (128 KiB per token, GiB per
    sequence and pool), as the engines' logs print memory."""
    rows: list[tuple[str, str]] = []
    if fig.per_token_bytes is not None:
        rows.append(("KV per token", format_bytes(fig.per_token_bytes)))
    if fig.per_sequence_bytes is not None and fig.max_model_len is not None:
        rows.append(
            (
                "KV per sequence",
                f"{format_bytes(fig.per_sequence_bytes)} at {fig.max_model_len:,} tokens",
            )
        )
    if fig.pool_tokens is not None:
        pool = f"{fig.pool_tokens:,} tokens"
        if fig.pool_tokens_low is not None and fig.pool_tokens_high is not None:
            pool += f" ({fig.pool_tokens_low:,}-{fig.pool_tokens_high:,})"
        memory = fig.pool_text()
        if memory is not None:
            pool += f" in {memory}"
        rows.append(("KV pool", pool))
    if fig.admitted is not None or fig.fits is False:
        rows.append(("admitted sequences", admitted_text(fig)))
    return rows


def counted(count: int, noun: str) -> str:
    """``1 error``, ``2 errors``, ``3 info`` (a mass noun), ``2 files``, ``1 deployment``."""
    plural = "" if count == 1 or noun == "info" else "s"
    return f"{count:,} {noun}{plural}"


def scope_text(files: int, deployments: int) -> str:
    return f"{counted(files, 'file')}, {counted(deployments, 'deployment')}"


def admitted_at(result: DeploymentResult, fig: Figures, context: int) -> float | None:
    """Sequences of ``context`` tokens the engine's pool admits: its own figure at
    ``max_model_len`` (vLLM's "Maximum concurrency"), scaled by what one sequence costs at each
    length from first principles (a sliding window or a Mamba state stops growing, so the
    count does not simply halve when the context doubles)."""
    kv = result.sizing.kv if result.sizing is not None else None
    if kv is None or fig.admitted is None or fig.max_model_len is None or context < 1:
        return None
    at_max = kv.per_sequence_bytes(fig.max_model_len)
    here = kv.per_sequence_bytes(context)
    if at_max <= 0 or here <= 0:
        return None
    return fig.admitted * at_max / here


def longest_context_for(result: DeploymentResult, fig: Figures, sequences: int) -> int | None:
    """The longest context at which ``sequences`` sequences are admitted (where the curve of
    ``admitted_at`` crosses the requested count), up to ``max_model_len``; None when not even
    one token's worth fits or nothing is known."""
    if fig.max_model_len is None or sequences < 1:
        return None
    first = admitted_at(result, fig, 1)
    if first is None or first < sequences:
        return None
    low, high = 1, fig.max_model_len  # admitted_at falls as the context grows
    while low < high:
        middle = (low + high + 1) // 2
        value = admitted_at(result, fig, middle)
        if value is not None and value >= sequences:
            low = middle
        else:
            high = middle - 1
    return low
