"""config.json -> ModelSpec: pick the text config, find the family, read lengths, dtype, RoPE."""

from __future__ import annotations

import bisect
import json
import pathlib
from collections.abc import Mapping
from typing import Any

from kvlint import reading
from kvlint.errors import KvlintError
from kvlint.errors import UnsizedArchitecture
from kvlint.finding import Span
from kvlint.model import cancelling
from kvlint.model.drafters import dflash_layers
from kvlint.model.drafters import read_drafter
from kvlint.model.families import family_for
from kvlint.model.families.base import ConfigView
from kvlint.model.families.base import Family
from kvlint.model.families.base import Locator
from kvlint.model.families.unsized import unsized_reason
from kvlint.model.params import estimate_mtp_params
from kvlint.model.params import estimate_params
from kvlint.model.params import estimate_vision_params
from kvlint.model.quant import read_quantization
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec
from kvlint.model.spec import ModelSpec
from kvlint.model.spec import RopeScaling
from kvlint.model.vision import vision_encoder

# vllm/transformers_utils/model_arch_config_convertor.py `derive_max_model_len_and_key`:
# the minimum over the keys present.
MAX_LENGTH_KEYS = (
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "model_max_length",
    "max_target_positions",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
)

# The dtypes a cache can take from the model; anything else is read as float32 would be.
_DTYPE_NAMES = {
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float32": "float32",
    "fp32": "float32",
    "float": "float32",
}

# A config.json leaves tie_word_embeddings out when it equals both PretrainedConfig's default
# (True) and its class's (``to_diff_dict``), so absent means the class default. These classes
# tie by default, explicitly (Gemma, Gemma 2/3/3n, Cohere, Cohere 2: ``tie_word_embeddings=True``
# in transformers models/<type>/configuration_<type>.py) or by inheriting True (GPT-2, OPT,
# BLOOM, Falcon, GPT-BigCode, StarCoder2, MPT); Llama, Mistral, Qwen, DeepSeek ... say False.
_TIED_BY_DEFAULT = frozenset(
    {"gemma", "gemma2", "gemma3", "gemma3_text", "gemma3n", "gemma3n_text", "cohere", "cohere2",
     "gpt2", "opt", "bloom", "falcon", "gpt_bigcode", "starcoder2", "mpt"}
)  # fmt: skip

# vllm/config/model.py `_FLOAT16_NOT_SUPPORTED_MODELS`: float16 is refused for these.
_NO_FLOAT16 = frozenset({"gemma2", "gemma3", "gemma3_text", "plamo2", "glm4"})


def load_config_file(path: pathlib.Path, *, checkpoint: bool = False) -> ModelSpec:
    """Read a ``config.json`` (or a model directory holding one) into a ModelSpec.

    Raises KvlintError naming the file (and the key, with its line and column) on anything
    kvlint cannot read. ``checkpoint``: the file is a checkpoint's own (from the Hub or its
    cache), not one a deployment's author may have written.
    """
    file = path / "config.json" if path.is_dir() else path
    shown = str(file)
    try:
        data = reading.read_bytes(file, reading.MODEL_CONFIG)
    except OSError as exc:
        why = reading.describe(exc).removeprefix("cannot read: ")
        raise KvlintError(f"cannot read the model config: {why}", path=shown) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise KvlintError(
            f"the model config is not UTF-8 text (byte {exc.start})", path=shown
        ) from None
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        span = Span(shown, exc.lineno, exc.colno)
        raise KvlintError(f"the model config is not valid JSON: {exc.msg}", span) from None
    except RecursionError:
        raise KvlintError("the model config is nested too deeply", path=shown) from None
    except ValueError:  # an integer of more than 4,300 digits (sys.get_int_max_str_digits)
        raise KvlintError("the model config holds a number too long to read", path=shown) from None
    if not isinstance(config, dict):
        raise KvlintError(
            f"the model config must be a JSON object, got {type(config).__name__}", path=shown
        )
    positions = key_positions(text)
    name = config_name(file)
    spec = _build(config, name=name, source=shown, path=shown, locate=positions.get)

    def rebuild(head_dim: int) -> ModelSpec:
        return _build(
            _with_head_dim(config, head_dim),
            name=name,
            source=shown,
            path=shown,
            locate=positions.get,
        )

    # A config.json on disk may be hand-written (a calculator's): a head_dim that is the
    # cancelling formula is read back to the model's. A checkpoint's own config is as it is.
    return spec if checkpoint else cancelling.undo(spec, rebuild)


def _with_head_dim(config: Mapping[str, Any], head_dim: int) -> dict[str, Any]:
    """``config`` with ``head_dim`` replaced where it is written (the top or its text_config)."""
    copy = dict(config)
    for key in ("text_config", "llm_config"):
        part = copy.get(key)
        if isinstance(part, Mapping) and "head_dim" in part:
            copy[key] = {**part, "head_dim": head_dim}
    if "head_dim" in copy:
        copy["head_dim"] = head_dim
    return copy


def config_name(file: pathlib.Path) -> str:
    """A display name: the model directory, or a fixture's ``org__name.json`` as ``org/name``."""
    if file.name == "config.json" and file.parent.name:
        return file.parent.name
    return file.stem.replace("__", "/", 1)


def spec_from_config(
    config: Mapping[str, Any], *, name: str, source: str = "", path: str | None = None
) -> ModelSpec:
    """A ModelSpec from a parsed config dict (for multimodal checkpoints, its ``text_config``).

    Raises KvlintError naming ``path`` (or ``name``) and the key it cannot read.
    """
    return _build(config, name=name, source=source, path=path or source or name, locate=None)


def _build(
    config: Mapping[str, Any],
    *,
    name: str,
    source: str,
    path: str,
    locate: Locator | None,
) -> ModelSpec:
    top = ConfigView(config, path=path, locate=locate)
    cfg = _text_view(top)
    model_type = top.opt_str("model_type") or ""
    text_type = cfg.opt_str("model_type") or model_type
    notes: list[str] = []
    family = _family(top, cfg, model_type, text_type)
    arch = family.architecture(cfg)
    notes.extend(arch.notes)
    shape = arch.shape
    max_len, max_key = read_max_length(cfg)
    if max_len is None:
        notes.append(
            "no maximum length key in the config (vLLM assumes 2048: "
            "vllm/transformers_utils/model_arch_config_convertor.py)"
        )
    dtype, dtype_note = read_dtype(top, cfg, text_type)
    if dtype_note:
        notes.append(dtype_note)
    vocab = cfg.opt_int_of(("vocab_size", "padded_vocab_size"), minimum=1)
    if vocab is None:
        vocab = top.opt_int("vocab_size", minimum=1) or 0
    tie = cfg.opt_bool("tie_word_embeddings")
    if tie is None:
        tie = top.opt_bool("tie_word_embeddings")
    if tie is None:
        tie = text_type in _TIED_BY_DEFAULT or model_type in _TIED_BY_DEFAULT
    params = estimate_params(cfg, arch, text_type, vocab=vocab, tie=tie)
    is_mla = any(layer.kind is CacheKind.MLA for layer in arch.layers)
    drafter = read_drafter(top, shape.hidden_size)
    layers = arch.layers
    if drafter is not None and drafter.method == "dflash":
        layers = dflash_layers(top, layers)
    return ModelSpec(
        name=name,
        model_type=model_type or text_type,
        layers=layers,
        hidden_size=shape.hidden_size,
        num_attention_heads=shape.num_attention_heads,
        num_key_value_heads=1 if is_mla else shape.num_key_value_heads,
        head_dim=shape.head_dim,
        vocab_size=vocab,
        dtype=dtype,
        max_position_embeddings=max_len,
        max_length_key=max_key,
        rope_scaling=read_rope_scaling(cfg),
        quantization=read_quantization(cfg) or read_quantization(top),
        param_count=params.total,
        active_param_count=params.active,
        tie_word_embeddings=tie,
        num_experts=params.num_experts,
        intermediate_size=params.intermediate_size,
        expert_param_count=params.routed_experts,
        vision_param_count=estimate_vision_params(top, shape.hidden_size),
        vision_encoder=vision_encoder(top, shape.hidden_size),
        source=source,
        notes=tuple(notes),
        ssm_state_dtype=cfg.opt_str("mamba_ssm_dtype") or cfg.opt_str("mamba_ssm_cache_dtype"),
        mtp_layers=cfg.opt_int_of(("mtp_num_hidden_layers", "num_nextn_predict_layers")),
        mamba_chunk_size=cfg.opt_int_of(("mamba_chunk_size", "chunk_size"), minimum=1),
        mla_expanded=_mla_expanded(cfg, shape.num_attention_heads) if is_mla else None,
        layer_params=params.layers,
        mtp_param_count=estimate_mtp_params(cfg, arch, text_type, params.layers),
        drafter=drafter,
    )


def _mla_expanded(cfg: ConfigView, heads: int) -> LayerSpec | None:
    """What an MLA layer cached as plain attention holds: vLLM's deepseek_v2.py before 0.7.1
    ran ``Attention(num_heads, qk_nope_head_dim + qk_rope_head_dim, num_kv_heads=num_heads)``
    with V padded to the K width (vllm-project/vllm#10927 of December 2024, "Before": 5,373
    blocks in 35.42 GiB for DeepSeek-V2-Lite, 16 heads x 2 x 27 layers per token)."""
    nope = cfg.opt_int("qk_nope_head_dim", minimum=0)
    rope = cfg.opt_int("qk_rope_head_dim", minimum=0)
    if nope is None or rope is None or heads <= 0:
        return None
    return LayerSpec(CacheKind.FULL, kv_heads=heads, head_dim_k=nope + rope, head_dim_v=nope + rope)


def _text_view(top: ConfigView) -> ConfigView:
    """The config that describes the language model: ``text_config`` when there is one."""
    for key in ("text_config", "llm_config", "language_config"):
        sub = top.opt_mapping(key)
        if sub is not None:
            return top.child(sub, key)
    return top


def _family(top: ConfigView, cfg: ConfigView, model_type: str, text_type: str) -> Family:
    # A text config that names its own type decides: a wrapper kvlint reads (LLaVA) around a
    # language model it does not is refused, never sized as the wrapper's usual decoder.
    family = family_for(text_type)
    if family is None and not cfg.has("model_type"):
        family = family_for(model_type)
    if family is not None:
        return family
    # Never a generic reading: a cache kvlint does not model, read as plain attention, gives a
    # confident wrong figure (DeepSeek-V4 came to 0 bytes per growing token that way).
    view = cfg if cfg.has("model_type") else top
    if not text_type:
        raise UnsizedArchitecture(
            "architecture kvlint does not size: the config has no `model_type`, so no family "
            "module reads it",
            view.error("model_type", "").span,
            path=view.path,
        )
    reason = unsized_reason(text_type) or unsized_reason(model_type)
    shown = text_type if text_type == model_type or not model_type else f"{model_type}/{text_type}"
    what = f"not modelled: {reason}" if reason else "no family module reads it"
    raise UnsizedArchitecture(
        f"architecture kvlint does not size: model_type {shown!r} ({what})",
        view.error("model_type", "").span,
        path=view.path,
    )


def read_max_length(cfg: ConfigView) -> tuple[int | None, str | None]:
    """The model's maximum length as vLLM derives it: the minimum over the length keys.

    ``model_max_length`` overrides the minimum when set (Command-R / Cohere2), as in vLLM.
    """
    best: tuple[int, str] | None = None
    for key in MAX_LENGTH_KEYS:
        value = cfg.opt_int(key, minimum=1)
        if value is not None and (best is None or value < best[0]):
            best = (value, key)
    override = cfg.opt_int("model_max_length", minimum=1)
    if override is not None:
        best = (override, "model_max_length")
    if best is None:
        return None, None
    return best


def read_dtype(top: ConfigView, cfg: ConfigView, model_type: str) -> tuple[str, str | None]:
    """The dtype vLLM serves the model in with ``--dtype auto`` on a bfloat16-capable GPU.

    Mirrors vllm/config/model.py `_get_and_verify_dtype` / `_resolve_auto_dtype`: the config's
    ``dtype`` / ``torch_dtype`` (text config first, then the top level); absent means float32;
    a float32 model is served in the platform's preferred dtype (bfloat16 on CUDA sm80+).
    """
    raw: str | None = None
    for view in (cfg, top):
        for key in ("dtype", "torch_dtype"):
            value = view.raw(key)
            if isinstance(value, str) and value != "auto":
                raw = value
                break
        if raw:
            break
    name = _DTYPE_NAMES.get(raw.lower()) if raw else None
    if raw is None:
        # vLLM then reads the safetensors dtypes from the Hub, else assumes float32 and
        # downcasts it: bfloat16 either way for the 16-bit checkpoints this happens to.
        return "bfloat16", "no dtype in the config: assumed bfloat16, as vLLM serves it"
    if name is None:
        return "bfloat16", f"config dtype {raw!r}: assumed bfloat16 for the cache"
    if name == "float32":
        return "bfloat16", "config dtype float32: vLLM serves float32 models in bfloat16"
    if name == "float16" and model_type in _NO_FLOAT16:
        return "bfloat16", f"vLLM refuses float16 for {model_type}: served as bfloat16"
    return name, None


def read_rope_scaling(cfg: ConfigView) -> RopeScaling | None:
    """``rope_scaling`` or ``rope_parameters`` (a per-layer-type dict: its full-attention entry)."""
    for key in ("rope_scaling", "rope_parameters"):
        value = cfg.opt_mapping(key)
        if value is None:
            continue
        if "full_attention" in value and isinstance(value["full_attention"], Mapping):
            value = value["full_attention"]
        rope_type = value.get("rope_type", value.get("type"))
        factor = value.get("factor")
        original = value.get("original_max_position_embeddings")
        if not isinstance(rope_type, str):
            rope_type = "default"
        if isinstance(factor, bool) or not isinstance(factor, (int, float)):
            factor = None
        if isinstance(original, bool) or not isinstance(original, int):
            original = None
        if rope_type == "default" and factor is None:
            return None
        return RopeScaling(rope_type, float(factor) if factor is not None else None, original)
    return None


def key_positions(text: str) -> dict[tuple[str, ...], tuple[int, int]]:
    """(line, column) of every object key in a JSON text, by key path (lists add ``"[]"``).

    The last occurrence of a duplicated key wins, as in json.loads. A small scanner: json.loads
    keeps no positions.
    """
    line_starts = [0]
    line_starts.extend(i + 1 for i, char in enumerate(text) if char == "\n")
    positions: dict[tuple[str, ...], tuple[int, int]] = {}
    stack: list[tuple[bool, tuple[str, ...]]] = []  # (is_object, path) of open containers
    pending: tuple[str, ...] = ()
    index = 0
    length = len(text)
    while index < length:
        char = text[index]
        if char == '"':
            end = _string_end(text, index)
            after = end
            while after < length and text[after] in " \t\r\n":
                after += 1
            if stack and stack[-1][0] and after < length and text[after] == ":":
                try:
                    key = json.loads(text[index:end])
                except json.JSONDecodeError:
                    key = text[index + 1 : end - 1]
                pending = (*stack[-1][1], str(key))
                line = bisect.bisect_right(line_starts, index) - 1
                positions[pending] = (line + 1, index - line_starts[line] + 1)
            index = end
            continue
        if char in "{[":
            parent = stack[-1] if stack else None
            if parent is None:
                path: tuple[str, ...] = ()
            elif parent[0]:
                path = pending
            else:
                path = (*parent[1], "[]")
            stack.append((char == "{", path))
        elif char in "}]" and stack:
            stack.pop()
        index += 1
    return positions


def _string_end(text: str, start: int) -> int:
    """Index just past the JSON string that opens at ``start``."""
    index = start + 1
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == '"':
            return index + 1
        index += 1
    return len(text)
