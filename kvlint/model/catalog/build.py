"""Catalog entries from config files: keep only the keys the family code reads, plus provenance.

Which keys matter is learned: the config is passed to ``spec_from_config`` through a mapping
that records every key read, and the entry keeps those (nested objects such as ``text_config`` or
``quantization_config`` likewise), plus the architecture keys any family may read (layer
patterns, windows, MLA and state sizes), so that an entry stays complete when a family learns a
key. The result is then checked: the kept keys must give the same ModelSpec as the whole file,
and the rebuild test compares every fixture's entry with its file.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import pathlib
import re
from collections.abc import Iterator
from collections.abc import Mapping
from typing import Any

from kvlint import reading
from kvlint.errors import KvlintError
from kvlint.errors import UnsizedArchitecture
from kvlint.model.layout import compact_quantization
from kvlint.model.spec import ModelSpec

# Architecture keys kept whenever present, read by the family code today or not: everything
# about layers, heads, windows, latent and state sizes, lengths, RoPE, dtype and quantisation.
_ARCH_KEY = re.compile(
    r"^(model_type|text_config|llm_config|language_config|(torch_)?dtype|vocab_size|"
    r"padded_vocab_size|tie_word_embeddings|quantization_config|hidden_size|d_model|n_embd|"
    r"intermediate_size|ffn_.*|head_dim|global_.*|kv_.*|qk_.*|v_head_dim|q_lora_rank|"
    r"index_.*|num_.*|n_.*|multi_query.*|new_decoder_architecture|layer_types|layers_.*|"
    r".*sliding_window.*|max_window_layers|attention_(?!dropout|bias).*|attn_(?!pdrop).*|no_rope_.*|"
    r".*rope_(scaling|"
    r"parameters|theta)|partial_rotary_factor|full_attention_interval|hybrid_override_pattern|"
    r"mamba_.*|ssm_.*|linear_.*|conv_kernel|expand|state_size|time_step_rank|moe_.*|expert_.*|"
    r"first_k_dense_replace|decoder_sparse_step|mlp_only_layers|interleave_moe_layer_step|"
    r"shared_expert_.*|top_k_experts|enable_moe_block|"
    r"max_position_embeddings|original_max_position_embeddings|n_positions|max_seq_len|"
    r"seq_length|model_max_length|max_sequence_length|max_seq_length|seq_len)$"
)
# Inside quantization_config, besides the keys read: what names the method and the cache scheme.
_QUANT_KEY = re.compile(r"^(quant_method|quant_algo|kv_cache_.*|bits|w_bit|weight_bits|fmt)$")


class _Recorder(Mapping[str, Any]):
    """A read-only view of a config that remembers which keys were asked for."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = data
        self.read: dict[str, Any] = {}  # key -> the value, or the _Recorder of a nested object

    def _note(self, key: str) -> Any:
        value = self._data[key]
        if isinstance(value, Mapping):
            recorded = self.read.get(key)
            if not isinstance(recorded, _Recorder):
                recorded = _Recorder(value)
                self.read[key] = recorded
            return recorded
        if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
            # a list of objects (Nemotron-NAS `block_configs`): each element recorded alike
            items = self.read.get(key)
            if not isinstance(items, list):
                items = [_Recorder(item) for item in value]
                self.read[key] = items
            return items
        self.read[key] = value
        return value

    def __getitem__(self, key: str) -> Any:
        return self._note(key)

    def get(self, key: str, default: Any = None) -> Any:
        return self._note(key) if key in self._data else default

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str) and key in self._data:
            self._note(key)
            return True
        return False

    def __iter__(self) -> Iterator[str]:  # iteration reads everything: keep everything
        for key in self._data:
            self._note(key)
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def kept(self, keep: re.Pattern[str] = _ARCH_KEY) -> dict[str, Any]:
        """The keys read or matching ``keep``, nested objects reduced likewise; nulls dropped."""
        for key in self._data:
            if keep.match(key) and key not in self.read:
                self._note(key)
        out: dict[str, Any] = {}
        for key in sorted(self.read):
            value = self.read[key]
            if isinstance(value, _Recorder):
                inner = _QUANT_KEY if key == "quantization_config" else keep
                value = value.kept(inner)
            elif isinstance(value, list) and value and isinstance(value[0], _Recorder):
                value = [item.kept(keep) for item in value]
            if value is not None:
                out[key] = value
        return out


def minimal_config(config: Mapping[str, Any], *, name: str) -> dict[str, Any]:
    """The subset of ``config`` the family code reads, checked to give the same ModelSpec.

    A config of an architecture kvlint does not size keeps its architecture keys (those
    ``_ARCH_KEY`` names), checked to be refused the same way: the entry is in the catalog, and a
    lookup says what is missing."""
    from kvlint.model.hf import spec_from_config

    recorder = _Recorder(config)
    try:
        full = spec_from_config(recorder, name=name)
    except UnsizedArchitecture as exc:
        kept = recorder.kept()
        if unsized_reason(kept, name=name) != exc.message:
            raise KvlintError(f"{name}: the keys kept do not give the same refusal") from None
        return kept
    kept = recorder.kept()
    quantization = kept.get("quantization_config")
    if isinstance(quantization, Mapping):
        # A layer map names every module (Nemotron 3 Super NVFP4: 41,100): kept folded by layer.
        kept["quantization_config"] = compact_quantization(quantization)
    again = spec_from_config(kept, name=name)
    if comparable(again) != comparable(full):
        raise KvlintError(
            f"{name}: the keys read ({', '.join(kept)}) do not rebuild the same ModelSpec"
        )
    return kept


def unsized_reason(config: Mapping[str, Any], *, name: str) -> str | None:
    """The refusal of a config kvlint does not size (its message), or None when it sizes it."""
    from kvlint.model.hf import spec_from_config

    try:
        spec_from_config(config, name=name)
    except UnsizedArchitecture as exc:
        return exc.message
    return None


def comparable(spec: ModelSpec) -> ModelSpec:
    """``spec`` without the fields that say where it came from (name and source)."""
    return dataclasses.replace(spec, name="", source="")


def sha256_of(path: pathlib.Path) -> str:
    return hashlib.sha256(reading.read_bytes(path, reading.MODEL_CONFIG)).hexdigest()


_FIXTURE_NAME = re.compile(r"^(?P<org>[^_]+(?:_[^_]+)*?)__(?P<name>.+)\.json$")
_MIRROR_NAME = re.compile(r"^(?P<org>[^-]+(?:-[^-]+)*?)--(?P<name>.+?)_config\.json$")
_CACHE_PART = re.compile(r"^models--(?P<org>[^-]+(?:-[^-]+)*?)--(?P<name>.+)$")


def id_from_path(path: pathlib.Path) -> str | None:
    """The Hub id a config file's name implies: ``org__name.json`` (the shared fixtures),
    ``org--name_config.json`` (aiconfigurator's mirror), or a Hugging Face cache snapshot."""
    for pattern in (_FIXTURE_NAME, _MIRROR_NAME):
        match = pattern.match(path.name)
        if match:
            return f"{match['org']}/{match['name']}"
    for part in path.parts:
        match = _CACHE_PART.match(part)
        if match:
            return f"{match['org']}/{match['name']}"
    return None


def config_entry(model_id: str, aliases: tuple[str, ...], config: dict[str, Any]) -> dict[str, Any]:
    """An entry's id, aliases and the keys of ``config`` the family code reads; ``unsized``
    with its reason where kvlint does not size the architecture (no source yet)."""
    record: dict[str, Any] = {"id": model_id}
    if aliases:
        record["aliases"] = list(aliases)
    record["config"] = minimal_config(config, name=model_id)
    refused = unsized_reason(record["config"], name=model_id)
    if refused is not None:
        record["unsized"] = refused.removeprefix("architecture kvlint does not size: ")
    return record


def build_entry(
    path: pathlib.Path,
    *,
    model_id: str,
    source: Mapping[str, str] | None = None,
    aliases: tuple[str, ...] = (),
    hf_quant_config: pathlib.Path | None = None,
) -> dict[str, Any]:
    """A catalog entry for the config file at ``path``.

    ``hf_quant_config`` is a ModelOpt checkpoint's ``hf_quant_config.json``: vLLM reads its
    ``quantization`` object as the checkpoint's quantisation (``quant_method: modelopt``) when
    ``config.json`` has no ``quantization_config``; its sha256 is recorded beside the config's.
    """
    data = reading.read_bytes(path, reading.MODEL_CONFIG)
    config = json.loads(data.decode("utf-8-sig"))
    if not isinstance(config, dict):
        raise KvlintError("the model config must be a JSON object", path=str(path))
    quant_sha = None
    if hf_quant_config is not None:
        quant_data = reading.read_bytes(hf_quant_config, reading.MODEL_CONFIG)
        quant_sha = hashlib.sha256(quant_data).hexdigest()
        quantization = json.loads(quant_data.decode("utf-8-sig")).get("quantization")
        if not isinstance(quantization, dict):
            raise KvlintError("no `quantization` object", path=str(hf_quant_config))
        if "quantization_config" not in config:
            config["quantization_config"] = {"quant_method": "modelopt", **quantization}
    record = config_entry(model_id, aliases, config)
    provenance = dict(source or {})
    provenance["sha256"] = hashlib.sha256(data).hexdigest()
    if quant_sha is not None:
        provenance["hf_quant_sha256"] = quant_sha
    record["source"] = provenance
    return record


def merge_entries(
    existing: list[dict[str, Any]], built: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``built`` entries replace those with the same id (keeping their aliases and any
    provenance the rebuild did not restate); new ones are appended."""
    by_id = {record["id"]: record for record in built}
    out: list[dict[str, Any]] = []
    for record in existing:
        new = by_id.pop(record["id"], None)
        if new is None:
            out.append(record)
            continue
        merged = dict(new)
        if "aliases" not in merged and record.get("aliases"):
            merged = {"id": new["id"], "aliases": record["aliases"], **new}
        merged["source"] = {**record.get("source", {}), **new.get("source", {})}
        out.append(merged)
    out.extend(by_id.values())
    return out


_TABLE_SOURCE = re.compile(
    r"`(?P<repo>[^`]+)`\s*@\s*`(?P<revision>[0-9a-f]{7,40})`\s*:\s*`(?P<path>[^`]+)`"
)


def provenance_table(markdown: str) -> dict[str, dict[str, str]]:
    """File name -> provenance from a SOURCES.md table whose rows read
    ``| `file.json` | `org/name` | `repo` @ `commit` : `path` | ...`` (a GitHub mirror), or
    ``huggingface.co `org/name` @ `commit` : `config.json` `` (the Hub file page); any other
    source cell is kept as a note beside the model's Hub page."""
    out: dict[str, dict[str, str]] = {}
    for line in markdown.splitlines():
        cells = [cell.strip() for cell in line.split("|")]
        if len(cells) < 4 or not cells[1].startswith("`") or not cells[1].endswith(".json`"):
            continue
        file_name = cells[1].strip("`")
        hub_id = cells[2].split("`")[1] if cells[2].count("`") >= 2 else ""
        match = _TABLE_SOURCE.search(cells[3])
        if match and "huggingface.co" in cells[3]:
            row = match.groupdict()
            out[file_name] = {
                "url": f"https://huggingface.co/{row['repo']}/blob/{row['revision']}/{row['path']}"
            }
        elif match:
            out[file_name] = match.groupdict()
        else:
            out[file_name] = {"note": cells[3].replace("`", "")}
            if hub_id:
                out[file_name]["url"] = f"https://huggingface.co/{hub_id}"
    return out


# --- the catalog on disk (layout.py): read every entry, write them back ---------------------

_CATALOG_FILE = reading.Kind("a catalog file", 16 * reading.MiB)


def read_catalog(root: pathlib.Path) -> list[dict[str, Any]]:
    """Every record of the catalog at ``root``, in index order."""
    from kvlint.model.catalog.layout import ENTRIES_DIR
    from kvlint.model.catalog.layout import INDEX_FILE
    from kvlint.model.catalog.layout import shard_of

    index = json.loads(reading.read_utf8(root / INDEX_FILE, _CATALOG_FILE))
    shards: dict[str, dict[str, dict[str, Any]]] = {}
    records = []
    for model_id in index["ids"]:
        name = shard_of(model_id)
        if name not in shards:
            text = reading.read_utf8(root / ENTRIES_DIR / f"{name}.json", _CATALOG_FILE)
            shards[name] = {r["id"]: r for r in json.loads(text)["models"]}
        records.append(shards[name][model_id])
    return records


def write_catalog(root: pathlib.Path, records: list[dict[str, Any]]) -> None:
    """Write ``records`` as the catalog at ``root``: entry files by organisation (ids sorted),
    the index, and no entry file left that no record needs."""
    from kvlint.model.catalog.layout import ENTRIES_DIR
    from kvlint.model.catalog.layout import INDEX_FILE
    from kvlint.model.catalog.layout import build_index
    from kvlint.model.catalog.layout import dump_index
    from kvlint.model.catalog.layout import dump_shard
    from kvlint.model.catalog.layout import shard_of

    ordered = sorted(records, key=lambda r: (r["id"].lower(), r["id"]))
    index = build_index(ordered)  # raises on a duplicate id or a name two entries claim
    ids = set(index["ids"])
    for record in ordered:
        base = record.get("base")
        if base and base not in ids:
            raise ValueError(f"{record['id']!r} names a base that is not in the catalog: {base!r}")
    shards: dict[str, list[dict[str, Any]]] = {}
    for record in ordered:
        shards.setdefault(shard_of(record["id"]), []).append(record)
    directory = root / ENTRIES_DIR
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.json"):
        if stale.stem not in shards:
            stale.unlink()
    for name, group in shards.items():
        (directory / f"{name}.json").write_text(dump_shard(group), encoding="utf-8")
    (root / INDEX_FILE).write_text(dump_index(index), encoding="utf-8")
