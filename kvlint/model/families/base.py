"""The family interface: typed, located reads of a config and the generic decoder shape."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import NamedTuple
from typing import Protocol

from kvlint.errors import KvlintError
from kvlint.finding import Span
from kvlint.model.families.states import RecurrentState
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec
from kvlint.units import INT64_MAX

# (line, column) of a key path in the JSON text, when the text is known.
Locator = Callable[[tuple[str, ...]], "tuple[int, int] | None"]

# Old and family-specific spellings, first present wins (vLLM `CONFIG_FIELD_ALIASES`,
# vllm/transformers_utils/config.py, and transformers' per-model `attribute_map`s).
LAYER_KEYS = ("num_hidden_layers", "n_layer", "num_layers", "n_layers")
# The deepest published checkpoints have a few hundred layers; a config claiming more than this
# is hostile or broken, and would cost a LayerSpec per claimed layer.
MAX_LAYERS = 10_000
HEAD_KEYS = ("num_attention_heads", "n_head", "n_heads", "num_heads")
HIDDEN_KEYS = ("hidden_size", "n_embd", "d_model")
# vllm/config/model.py `get_total_num_kv_heads`: the first present of these, else the head count.
KV_HEAD_KEYS = (
    "n_head_kv",
    "num_kv_heads",
    "num_key_value_heads",
    "multi_query_group_num",
    "num_attention_groups",
)


class ConfigView:
    """One config mapping (the whole config, or its ``text_config``) read with key positions.

    Every read names the key it failed on: a missing key, a string where an int belongs and a
    negative count are ``KvlintError``s carrying ``path:line:col`` when the JSON text is known.
    """

    def __init__(
        self,
        data: Mapping[str, Any],
        *,
        path: str,
        prefix: tuple[str, ...] = (),
        locate: Locator | None = None,
    ) -> None:
        self.data = data
        self.path = path
        self.prefix = prefix
        self._locate = locate

    def child(self, data: Mapping[str, Any], key: str) -> ConfigView:
        """A view of the mapping under ``key``, with positions."""
        return ConfigView(data, path=self.path, prefix=(*self.prefix, key), locate=self._locate)

    def key_name(self, key: str) -> str:
        return ".".join((*self.prefix, key))

    def error(self, key: str, message: str) -> KvlintError:
        """A KvlintError at ``key`` (its position when known, else the file)."""
        position = self._locate((*self.prefix, key)) if self._locate else None
        if position is None and self.prefix and self._locate:
            position = self._locate(self.prefix)
        if position is None:
            return KvlintError(message, path=self.path)
        line, column = position
        return KvlintError(message, Span(self.path, line, column, self.key_name(key)))

    def has(self, key: str) -> bool:
        """True when ``key`` is present and not null."""
        return self.data.get(key) is not None

    def raw(self, key: str) -> Any:
        return self.data.get(key)

    def first_key(self, keys: Sequence[str]) -> str | None:
        return next((key for key in keys if self.has(key)), None)

    def opt_int(self, key: str, *, minimum: int = 0) -> int | None:
        value = self.data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(key, f"`{self.key_name(key)}` must be an integer, got {value!r}")
        if isinstance(value, float) and not value.is_integer():
            raise self.error(key, f"`{self.key_name(key)}` must be an integer, got {value!r}")
        if abs(value) > INT64_MAX:  # 1e308 or 400 digits: no config count is that large
            digits = len(str(int(value)))
            raise self.error(key, f"`{self.key_name(key)}` is out of range ({digits} digits)")
        number = int(value)
        if number < minimum:
            raise self.error(
                key, f"`{self.key_name(key)}` must be at least {minimum}, got {number}"
            )
        return number

    def int_of(self, keys: Sequence[str], *, minimum: int = 1, what: str = "") -> int:
        """The first present of ``keys`` as an int; a missing key is an error naming the first."""
        for key in keys:
            number = self.opt_int(key, minimum=minimum)
            if number is not None:
                return number
        names = " / ".join(f"`{self.key_name(key)}`" for key in keys)
        needed = f": kvlint needs {what}" if what else ""
        raise self.error(keys[0], f"{names} is missing{needed}")

    def opt_int_of(self, keys: Sequence[str], *, minimum: int = 0) -> int | None:
        for key in keys:
            number = self.opt_int(key, minimum=minimum)
            if number is not None:
                return number
        return None

    def opt_float(self, key: str) -> float | None:
        value = self.data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(key, f"`{self.key_name(key)}` must be a number, got {value!r}")
        return float(value)

    def opt_bool(self, key: str) -> bool | None:
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, bool):
            raise self.error(key, f"`{self.key_name(key)}` must be true or false, got {value!r}")
        return value

    def opt_str(self, key: str) -> str | None:
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.error(key, f"`{self.key_name(key)}` must be a string, got {value!r}")
        return value

    def opt_list(self, key: str) -> list[Any] | None:
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, list):
            raise self.error(key, f"`{self.key_name(key)}` must be a list, got {value!r}")
        return value

    def opt_mapping(self, key: str) -> Mapping[str, Any] | None:
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise self.error(key, f"`{self.key_name(key)}` must be an object, got {value!r}")
        return value


class Shape(NamedTuple):
    """The attention shape shared by a model's ordinary attention layers."""

    num_layers: int
    hidden_size: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int


class Architecture(NamedTuple):
    """What a family reads from a config: the shape, every layer's cache, and notes."""

    shape: Shape
    layers: tuple[LayerSpec, ...]
    notes: tuple[str, ...] = ()


class Family(Protocol):
    """One HF model family: turns a config into an Architecture."""

    name: str

    def architecture(self, cfg: ConfigView) -> Architecture: ...


def read_kv_heads(cfg: ConfigView, heads: int) -> int:
    """KV heads as vLLM reads them: aliases in order, ``multi_query: true`` = 1.

    Mirrors vllm/config/model.py `get_total_num_kv_heads` (Falcon's new decoder architecture
    is handled by the Falcon family, which ignores `multi_query`).
    """
    if cfg.opt_bool("multi_query"):
        return 1
    key = cfg.first_key(KV_HEAD_KEYS)
    if key is not None:
        return check_kv_heads(cfg, key, heads)
    attn = cfg.opt_mapping("attn_config")  # MPT / DBRX keep it here
    if attn is not None and attn.get("kv_n_heads") is not None:
        nested = cfg.child(attn, "attn_config")
        return check_kv_heads(nested, "kv_n_heads", heads)
    return heads


def check_kv_heads(cfg: ConfigView, key: str, heads: int) -> int:
    """The KV head count at ``key``: at least 1 and at most the attention head count."""
    kv = cfg.opt_int(key, minimum=0)
    assert kv is not None
    if kv == 0:
        raise cfg.error(key, f"`{cfg.key_name(key)}` is 0: a model needs at least one KV head")
    if kv > heads:
        raise cfg.error(
            key,
            f"`{cfg.key_name(key)}` {kv} is greater than the attention head count {heads}",
        )
    return kv


def read_head_dim(cfg: ConfigView, hidden: int, heads: int, keys: Sequence[str] = ()) -> int:
    """``head_dim`` when present and > 0, else ``hidden_size / num_attention_heads``.

    Never ``hidden_size / num_key_value_heads``: that is the cancelling error.
    Mirrors vllm/transformers_utils/model_arch_config_convertor.py `get_head_size`.
    """
    for key in (*keys, "head_dim", "hidden_size_per_head"):
        value = cfg.opt_int(key, minimum=0)
        if value:
            return value
    if hidden < heads:
        raise cfg.error(
            HIDDEN_KEYS[0]
            if cfg.has(HIDDEN_KEYS[0])
            else (cfg.first_key(HIDDEN_KEYS) or "head_dim"),
            f"hidden size {hidden} is smaller than the {heads} attention heads and there is no "
            "`head_dim`",
        )
    return hidden // heads


def read_shape(
    cfg: ConfigView, *, head_dim_keys: Sequence[str] = (), num_layers: int | None = None
) -> Shape:
    """The decoder shape, old key names included. ``num_layers`` is the layer count of a config
    that spells its layers out instead (Nemotron-H's ``layers_block_type``), used when no layer
    count key is present."""
    if num_layers is not None and cfg.first_key(LAYER_KEYS) is None:
        layers = num_layers
    else:
        layers = cfg.int_of(LAYER_KEYS, what="the layer count")
    if layers > MAX_LAYERS:  # every family builds one LayerSpec per layer: bound the memory
        key = cfg.first_key(LAYER_KEYS) or LAYER_KEYS[0]
        digits = len(str(layers))
        shown = str(layers) if digits <= 20 else f"a {digits}-digit number"
        raise cfg.error(
            key, f"`{cfg.key_name(key)}` is {shown}: no model has more than {MAX_LAYERS} layers"
        )
    hidden = cfg.int_of(HIDDEN_KEYS, what="the hidden size")
    heads = cfg.int_of(HEAD_KEYS, what="the attention head count")
    kv = read_kv_heads(cfg, heads)
    head_dim = read_head_dim(cfg, hidden, heads, head_dim_keys)
    return Shape(layers, hidden, heads, kv, head_dim)


def full_layer(shape: Shape) -> LayerSpec:
    return LayerSpec(CacheKind.FULL, shape.num_key_value_heads, shape.head_dim, shape.head_dim)


def windowed_layer(shape: Shape, kind: CacheKind, window: int) -> LayerSpec:
    return LayerSpec(kind, shape.num_key_value_heads, shape.head_dim, shape.head_dim, window)


def read_layer_types(cfg: ConfigView, num_layers: int) -> list[str] | None:
    """``layer_types`` as a list of strings, one per layer, or None when absent."""
    types = cfg.opt_list("layer_types")
    if types is None:
        return None
    if len(types) != num_layers or not all(isinstance(item, str) for item in types):
        raise cfg.error(
            "layer_types",
            f"`{cfg.key_name('layer_types')}` must list one string per layer "
            f"({num_layers} layers), got {len(types)} entries",
        )
    return [str(item) for item in types]


def require_window(cfg: ConfigView, key: str = "sliding_window") -> int:
    window = cfg.opt_int(key, minimum=1)
    if window is None:
        raise cfg.error(key, f"`{cfg.key_name(key)}` is missing: sliding layers need a window")
    return window


def layers_from_types(
    cfg: ConfigView,
    shape: Shape,
    types: Sequence[str],
    *,
    states: Mapping[str, RecurrentState] | None = None,
) -> list[LayerSpec]:
    """Layers named by transformers' ``layer_types`` (full / sliding / chunked attention).

    ``states`` maps the names a hybrid family gives its recurrent layers (``mamba``,
    ``linear_attention``) to the elements of one sequence's state.
    """
    layers: list[LayerSpec] = []
    for kind in types:
        if states is not None and kind in states:
            layers.append(states[kind].layer())
        elif kind in ("full_attention", "attention", "global_attention"):
            layers.append(full_layer(shape))
        elif kind in ("sliding_attention", "local_attention"):
            layers.append(windowed_layer(shape, CacheKind.SLIDING, require_window(cfg)))
        elif kind == "chunked_attention":
            window = require_window(cfg, "attention_chunk_size")
            layers.append(windowed_layer(shape, CacheKind.CHUNKED, window))
        else:
            raise cfg.error(
                "layer_types",
                f"`{cfg.key_name('layer_types')}` has a layer type kvlint does not know: {kind!r}",
            )
    return layers
