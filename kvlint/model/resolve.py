"""Model references -> ModelSpec: a path, a GGUF file or name, the catalog, the HF cache, the Hub.

The order is fixed (DESIGN.md, "Resolution order"): a local ``config.json`` or model directory;
a ``.gguf`` file or a GGUF name; the built-in catalog (so ``kvlint check`` works offline on a
fresh machine); the local Hugging Face cache; and only then, when online and allowed, a download
of ``config.json`` (plus ``model.safetensors.index.json`` for the weight size). Never weights,
never code, never ``trust_remote_code``; an ``HF_TOKEN`` is used by huggingface_hub and never
printed.
"""

from __future__ import annotations

import _thread
import dataclasses
import json
import os
import pathlib
import re
import time
from typing import Any
from typing import NamedTuple

from kvlint import reading
from kvlint.errors import KvlintError
from kvlint.errors import ModelNotResolved
from kvlint.lazy_re import lazy
from kvlint.model import catalog
from kvlint.model.spec import ModelSpec
from kvlint.units import INT64_MAX

CONFIG_FILE = "config.json"
INDEX_FILE = "model.safetensors.index.json"
# The whole download (both files, huggingface_hub's own retries included) gives up after this
# many seconds; KVLINT_HUB_TIMEOUT overrides it.
DOWNLOAD_TIMEOUT_S = 15.0

# huggingface_hub's `validate_repo_id`: letters, digits, '-', '_', '.', at most one '/', no '--'
# or '..', not starting or ending with '-' or '.', at most 96 characters.
_REPO_ID = lazy(r"^(?:[A-Za-z0-9][A-Za-z0-9_.-]*/)?[A-Za-z0-9][A-Za-z0-9_.-]*$")
_TRUTHY = {"1", "true", "yes", "on"}


class ResolvedModel(NamedTuple):
    """A ModelSpec and where it came from (``origin``: path, gguf, catalog, hf-cache, hub)."""

    spec: ModelSpec
    origin: str
    detail: str
    # When the model was matched by its name, not read: what it was taken as (KV908 says so).
    by_name: str = ""


class HubBudget:
    """The time one run may wait for the Hub, every model together (``KVLINT_HUB_TIMEOUT``).

    A deadline per model let 20 unknown models against a silent Hub take 20 timeouts; with one
    budget per run the first lookup starts the clock, and a model looked up after it ran out is
    not asked at all (its KV902 says why)."""

    def __init__(self, seconds: float | None = None) -> None:
        self.seconds = seconds if seconds is not None else _timeout()
        self.deadline: float | None = None
        # The circuit breaker: why the Hub stopped being asked (it timed out or could not be
        # reached), and the one line the CLI prints on stderr about it.
        self.tripped: str | None = None
        self.notices: list[str] = []
        # Lookups run in parallel (kvlint.linter.prefetch_models); threading.Lock is this lock,
        # and importing threading for it was ~1 ms of every check.
        self._lock = _thread.allocate_lock()

    def trip(self, reason: str) -> None:
        """Ask the Hub nothing more in this run (the first unreachable answer decides)."""
        with self._lock:
            if self.tripped is None:
                self.tripped = reason
                self.notices.append(
                    f"the Hugging Face Hub did not answer ({reason}): no further model is "
                    "looked up there in this run (KV902 names each one)"
                )

    def start(self) -> float:
        """The run's deadline, set by its first lookup."""
        with self._lock:
            if self.deadline is None:
                self.deadline = time.monotonic() + self.seconds
            return self.deadline

    @property
    def spent(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline


def resolve_model(
    ref: str,
    *,
    offline: bool = False,
    base_dir: pathlib.Path | None = None,
    hub: HubBudget | None = None,
) -> ResolvedModel:
    """The ModelSpec ``ref`` names. ``base_dir`` anchors relative paths (a deployment file's
    directory); ``hub`` is the run's Hub budget (a fresh one when None). Raises KvlintError
    saying how to make the model known."""
    text = ref.strip()
    if not text:
        raise KvlintError(
            "empty model reference: name a Hub id, a config.json or a model directory"
        )
    local = _local_path(text, base_dir)
    if local is not None:
        return _from_path(local, text)
    # Every GGUF reference names `gguf` or a `:QUANT` tag: the module (its tables and patterns)
    # is imported only for those.
    if ":" in text or "gguf" in text.lower():
        from kvlint.model import gguf

        if gguf.is_gguf_reference(text):
            return gguf.resolve_gguf_name(text)
    entry = catalog.find_entry(text)
    if entry is not None:
        return ResolvedModel(catalog.entry_spec(entry.id), "catalog", _catalog_detail(entry))
    if _looks_like_path(text):
        found = _catalog_by_path_tail(text)
        if found is not None:
            return found
        raise _missing_path_error(text, base_dir)
    # The checkpoint's own config.json, when the cache has it, before a reading of its name.
    cached = _from_cache(text) if _is_repo_id(text) else None
    if cached is not None:
        return cached
    derived = None if catalog.ambiguous(text) else _by_name(text)
    if derived is not None:
        return derived
    repo_id = _repo_id(text)
    if offline or hub_offline():
        raise ModelNotResolved(_unknown_offline_message(repo_id, offline))
    return _from_hub(repo_id, hub if hub is not None else HubBudget())


def draft_spec(
    ref: str, *, offline: bool = False, base_dir: pathlib.Path | None = None
) -> ModelSpec | None:
    """A speculative draft model's shape, or None when it cannot be resolved here (no error:
    the engine's estimate says it does not count what it does not know)."""
    try:
        return resolve_model(ref, offline=offline, base_dir=base_dir).spec
    except KvlintError:
        return None


# --- local files ------------------------------------------------------------------------


def _looks_like_path(text: str) -> bool:
    return (
        text.startswith(("/", "./", "../", "~", "\\"))
        or text.endswith(".json")
        or bool(re.match(r"^[A-Za-z]:[\\/]", text))
        or text.count("/") > 1
    )


def _local_path(text: str, base_dir: pathlib.Path | None) -> pathlib.Path | None:
    """``text`` as an existing model directory, config file or GGUF file, else None."""
    if "\0" in text:
        return None
    raw = pathlib.Path(text).expanduser()
    candidates = [raw]
    if base_dir is not None and not raw.is_absolute():
        candidates.insert(0, base_dir / raw)
    for path in candidates:
        try:
            # exists(), not is_file(): a config.json that is a FIFO or a device is the model's,
            # and kvlint.reading refuses it with a clear line rather than "no config.json".
            if path.is_dir() and (path / CONFIG_FILE).exists():
                return path
            if path.is_file() and path.suffix.lower() in (".json", ".gguf"):
                return path
            if path.is_dir() and _looks_like_path(text):
                raise KvlintError(
                    f"model directory {text!r} has no {CONFIG_FILE}: "
                    "kvlint reads the model's shape from it"
                )
        except OSError:
            continue
    return None


def _missing_path_error(text: str, base_dir: pathlib.Path | None) -> KvlintError:
    """A path that exists but is no model is bad input; one that is not on this machine is a
    model kvlint cannot resolve here (a finding, not a failed run)."""
    raw = pathlib.Path(text).expanduser()
    where = base_dir / raw if base_dir is not None and not raw.is_absolute() else raw
    try:
        exists = where.exists()
    except OSError:
        exists = False
    if exists:
        return KvlintError(
            f"{text!r} is not a model: kvlint reads a config.json, a model directory holding "
            "one, or a .gguf file"
        )
    relative = f" (relative to {base_dir})" if where is not raw else ""
    return ModelNotResolved(
        f"model path {text!r} does not exist{relative}: point at a config.json or a directory "
        "holding one, or name a Hub id"
    )


def _from_path(path: pathlib.Path, shown: str) -> ResolvedModel:
    from kvlint.model.hf import load_config_file

    if path.suffix.lower() == ".gguf":
        from kvlint.model import gguf

        return gguf.resolve_gguf_file(path)
    spec = load_config_file(path)
    directory = path if path.is_dir() else path.parent
    weight_bytes = _index_total_size(directory / INDEX_FILE)
    if weight_bytes is not None:
        spec = dataclasses.replace(spec, weight_bytes=weight_bytes)
    return ResolvedModel(spec, "path", f"read from {shown}")


def _index_total_size(index: pathlib.Path) -> int | None:
    """``metadata.total_size`` of a safetensors index: the checkpoint's real weight bytes."""
    try:
        data = json.loads(reading.read_utf8(index, reading.SAFETENSORS_INDEX))
    except FileNotFoundError:
        return None  # single-file checkpoints have none
    except OSError as exc:  # a FIFO, a device, a file past the cap: refused, said once
        raise KvlintError(reading.describe(exc), path=str(index)) from None
    except (ValueError, RecursionError):  # bad JSON or UTF-8, 4,300+ digits: size unknown
        return None
    metadata = data.get("metadata") if isinstance(data, dict) else None
    total = metadata.get("total_size") if isinstance(metadata, dict) else None
    if isinstance(total, bool) or not isinstance(total, (int, float)):
        return None
    # `1e400` reads as infinity; no checkpoint holds more bytes than an int64 counts.
    if not 0 < total <= INT64_MAX:
        return None
    return int(total)


def _catalog_by_path_tail(text: str) -> ResolvedModel | None:
    """A local path that does not exist here but ends in a known model name
    (``/models/deepseek-ai/deepseek-r1``, ``/models/Qwen2.5-7B-Instruct-AWQ``): the catalog
    entry, or the derivative its name states, saying so."""
    parts = [part for part in re.split(r"[\\/]+", text.rstrip("/\\")) if part]
    for tail in ("/".join(parts[-2:]), parts[-1] if parts else ""):
        entry = catalog.find_entry(tail) if tail else None
        if entry is not None:
            detail = (
                f"{text} is not on this machine; its name matches the built-in catalog entry "
                f"{entry.id}"
            )
            return ResolvedModel(catalog.entry_spec(entry.id), "catalog", detail, by_name=entry.id)
    for tail in ("/".join(parts[-2:]), parts[-1] if parts else ""):
        derived = _by_name(tail) if tail else None
        if derived is not None:
            return derived._replace(detail=f"{text} is not on this machine; {derived.detail}")
    return None


def _by_name(text: str) -> ResolvedModel | None:
    """A mirror, quantisation or release of a catalog entry, read from its name
    (``kvlint.model.derive``), or None."""
    from kvlint.model import derive

    found = derive.derive(text)
    if found is None:
        return None
    what = derive.describe(found)
    detail = f"{text} resolved by name as {what}"
    return ResolvedModel(derive.spec_of(found), "catalog", detail, by_name=what)


def _catalog_detail(entry: catalog.CatalogEntry) -> str:
    return f"built-in catalog entry {entry.id}"


# --- Hub ids, the cache and the download -----------------------------------------------


def _is_repo_id(text: str) -> bool:
    return (
        "/" in text
        and len(text) <= 96
        and bool(_REPO_ID.match(text))
        and ".." not in text
        and "--" not in text
        and not text.endswith((".", "-"))
    )


def _repo_id(text: str) -> str:
    """``text`` as a Hub repository id, or a KvlintError saying why it cannot be one."""
    candidates = catalog.ambiguous(text)
    if candidates:
        raise KvlintError(
            f"model name {text!r} is ambiguous in the built-in catalog: "
            f"write one of {', '.join(candidates)}"
        )
    if (
        len(text) > 96
        or not _REPO_ID.match(text)
        or ".." in text
        or "--" in text
        or text.endswith((".", "-"))
    ):
        raise KvlintError(
            f"{text!r} is not a model kvlint can look up: a Hugging Face id is ORG/NAME of "
            "letters, digits, '-', '_' and '.' (no '..' or '--'); or pass a config.json path "
            "or a model directory"
        )
    return text


def hub_offline() -> bool:
    """Whether the environment keeps the Hub from being asked (HF_HUB_OFFLINE,
    TRANSFORMERS_OFFLINE), as huggingface_hub and transformers read it."""
    return any(
        os.environ.get(name, "").strip().lower() in _TRUTHY
        for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


def hub_cache_dir() -> pathlib.Path:
    """The cache huggingface_hub uses, read from the environment now (not at import):
    ``HF_HUB_CACHE``, else ``HF_HOME``/hub, else ``$XDG_CACHE_HOME``/huggingface/hub."""
    explicit = os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE")
    if explicit:
        return pathlib.Path(explicit).expanduser()
    home = os.environ.get("HF_HOME")
    if home:
        return pathlib.Path(home).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(pathlib.Path("~/.cache").expanduser())
    return pathlib.Path(xdg).expanduser() / "huggingface" / "hub"


def _from_cache(repo_id: str) -> ResolvedModel | None:
    """``config.json`` of ``repo_id`` in the local Hugging Face cache, without the network."""
    if "/" not in repo_id:
        return None
    from huggingface_hub import try_to_load_from_cache

    cache = hub_cache_dir()
    if not cache.is_dir():
        return None
    found: Any = try_to_load_from_cache(repo_id, CONFIG_FILE, cache_dir=str(cache))
    if not isinstance(found, str):
        return None
    config = pathlib.Path(found)
    spec = _load_named(config, repo_id, f"Hugging Face cache {config}")
    index: Any = try_to_load_from_cache(repo_id, INDEX_FILE, cache_dir=str(cache))
    if isinstance(index, str):
        spec = _with_weights(spec, pathlib.Path(index))
    return ResolvedModel(spec, "hf-cache", f"config.json from the Hugging Face cache: {config}")


def _from_hub(repo_id: str, hub: HubBudget) -> ResolvedModel:
    """Download ``config.json`` (and the safetensors index) of ``repo_id`` into the cache."""
    if hub.tripped is not None:  # said first: it is why the time ran out, when both are so
        raise ModelNotResolved(_download_message(repo_id, HubUnreachable(hub.tripped)))
    if hub.spent:
        raise ModelNotResolved(_download_message(repo_id, HubBudgetSpent(hub.seconds)))
    cache = hub_cache_dir()
    deadline = hub.start()
    try:
        found = _download(repo_id, CONFIG_FILE, cache, deadline, reading.MODEL_CONFIG)
    except Exception as exc:  # network, auth, missing repo: one line, never the token
        if _unreachable(exc):
            hub.trip(_short_reason(exc))
        raise ModelNotResolved(_download_message(repo_id, exc)) from None
    config = pathlib.Path(found)
    spec = _load_named(config, repo_id, f"Hugging Face Hub {repo_id} (cached at {config})")
    try:
        index: str | None = _download(
            repo_id, INDEX_FILE, cache, deadline, reading.SAFETENSORS_INDEX
        )
    except Exception:  # single-file checkpoints have no index; the weight size stays unknown
        index = None
    if index:
        spec = _with_weights(spec, pathlib.Path(index))
    return ResolvedModel(
        spec, "hub", f"config.json downloaded from the Hugging Face Hub: {repo_id}"
    )


class HubUnreachable(ConnectionError):
    """An earlier lookup of this run found the Hub unreachable: this one was not sent."""


# Answers that say something about the repository: the Hub is up, keep asking it.
_DEFINITE = frozenset(
    {"RepositoryNotFoundError", "GatedRepoError", "EntryNotFoundError",
     "RemoteEntryNotFoundError", "RevisionNotFoundError", "HubAnswerTooLarge"}
)  # fmt: skip


def _unreachable(exc: BaseException) -> bool:
    """A timeout or a failure to reach the Hub at all (connection refused, DNS, a proxy, a 5xx
    that huggingface_hub retried): the circuit breaker trips on it."""
    if type(exc).__name__ in _DEFINITE or isinstance(exc, HubBudgetSpent):
        return False
    status = getattr(getattr(exc, "response", None), "status_code", None)
    return not (isinstance(status, int) and status < 500)  # a 4xx is an answer


def _short_reason(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return str(exc)
    return type(exc).__name__


class HubBudgetSpent(TimeoutError):
    """The run's time for the Hub ran out before this model's turn."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"{seconds:g} s")
        self.seconds = seconds


class HubAnswerTooLarge(ValueError):
    """The Hub announced a file larger than kvlint reads of its kind: not downloaded."""

    def __init__(self, size: int, kind: reading.Kind) -> None:
        super().__init__(reading.describe(reading.FileTooLarge(size, kind)))


def _timeout() -> float:
    try:
        return max(0.1, float(os.environ.get("KVLINT_HUB_TIMEOUT", DOWNLOAD_TIMEOUT_S)))
    except ValueError:
        return DOWNLOAD_TIMEOUT_S


def _download(
    repo_id: str, filename: str, cache: pathlib.Path, deadline: float, kind: reading.Kind
) -> str:
    """``hf_hub_download`` of one small file, given up at ``deadline``.

    huggingface_hub retries connection errors with backoff (about 30 s in all) and logs each
    retry; a linter must answer sooner and print one line, so the call runs in a daemon thread
    with its logger quietened, and a deadline ends the wait. The file's size is asked first
    (a HEAD request): a file the Hub says is larger than ``kind`` allows is not downloaded.
    """
    # Imported here, with huggingface_hub: only a download needs a thread and the logger.
    import logging
    import queue
    import threading

    from huggingface_hub import get_hf_file_metadata
    from huggingface_hub import hf_hub_download
    from huggingface_hub import hf_hub_url

    outcome: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=1)
    timeout = max(0.1, deadline - time.monotonic())

    def work() -> None:
        try:
            metadata = get_hf_file_metadata(hf_hub_url(repo_id, filename), timeout=timeout)
            if metadata.size is not None and metadata.size > kind.limit:
                raise HubAnswerTooLarge(metadata.size, kind)
            path = hf_hub_download(repo_id, filename, cache_dir=str(cache), etag_timeout=timeout)
            outcome.put((True, path))
        except BaseException as exc:  # handed to the caller
            outcome.put((False, exc))

    hub_logger = logging.getLogger("huggingface_hub")
    level = hub_logger.level
    hub_logger.setLevel(logging.ERROR)
    threading.Thread(target=work, name=f"kvlint-hub-{filename}", daemon=True).start()
    try:
        ok, value = outcome.get(timeout=max(0.1, deadline - time.monotonic()))
    except queue.Empty:  # the thread may still retry: its logger stays quiet
        raise TimeoutError(f"no answer within {_timeout():g} s") from None
    hub_logger.setLevel(level)
    if not ok:
        raise value
    return str(value)


def _load_named(config: pathlib.Path, repo_id: str, source: str) -> ModelSpec:
    from kvlint.model.hf import load_config_file

    spec = load_config_file(config, checkpoint=True)
    return dataclasses.replace(spec, name=repo_id, source=source)


def _with_weights(spec: ModelSpec, index: pathlib.Path) -> ModelSpec:
    total = _index_total_size(index)
    return dataclasses.replace(spec, weight_bytes=total) if total is not None else spec


def _unknown_offline_message(repo_id: str, flag: bool) -> str:
    why = "--offline" if flag else "HF_HUB_OFFLINE is set"
    return (
        f"model {repo_id!r} is not in the built-in catalog (`kvlint models` lists it) nor in "
        f"the Hugging Face cache at {hub_cache_dir()}, and {why}, so its config.json was not "
        "downloaded: pass a config.json path or a model directory, or point HF_HOME / "
        "HF_HUB_CACHE at a cache that holds it"
    )


def _download_message(repo_id: str, exc: Exception) -> str:
    kind = type(exc).__name__
    if kind in ("GatedRepoError",):
        reason = "the repository is gated: accept its licence on the Hub and set HF_TOKEN"
    elif kind in ("RepositoryNotFoundError",):
        reason = "no such repository on the Hub (or it is private: set HF_TOKEN)"
    elif kind in ("EntryNotFoundError", "RemoteEntryNotFoundError"):
        reason = "the repository has no config.json"
    elif isinstance(exc, HubBudgetSpent):
        reason = (
            f"not looked up: this run's {exc.seconds:g} s for the Hugging Face Hub "
            "(KVLINT_HUB_TIMEOUT) were spent on the models before it"
        )
    elif isinstance(exc, HubUnreachable):
        reason = (
            f"not looked up: the Hugging Face Hub did not answer an earlier lookup of this run "
            f"({exc})"
        )
    elif isinstance(exc, TimeoutError):
        reason = f"the Hugging Face Hub did not answer ({exc})"
    elif isinstance(exc, HubAnswerTooLarge):
        reason = f"the Hub's config.json {exc}"
    elif isinstance(getattr(getattr(exc, "response", None), "status_code", None), int):
        # The status only: the exception's text can quote the request, headers included.
        reason = f"the Hugging Face Hub answered HTTP {exc.response.status_code}"  # type: ignore[attr-defined]
    elif isinstance(exc, OSError) and exc.strerror:
        # The system's words for it (no path, no request: the error's text could hold either).
        reason = f"the download failed ({kind}: {exc.strerror})"
    else:
        reason = f"the download failed ({kind})"
    return (
        f"model {repo_id!r}: {reason}; it is not in the built-in catalog or the cache at "
        f"{hub_cache_dir()}: pass a config.json path or a model directory, or use --offline "
        "to stay off the network"
    )
