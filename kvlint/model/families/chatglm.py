"""ChatGLM / GLM-4 (remote-code configs): ``num_layers``, ``kv_channels``, query groups."""

from __future__ import annotations

from kvlint.model.families.base import Architecture
from kvlint.model.families.base import ConfigView
from kvlint.model.families.base import Shape
from kvlint.model.families.base import check_kv_heads
from kvlint.model.families.base import full_layer
from kvlint.model.families.base import read_shape


class ChatGlm:
    """KV heads are ``multi_query_group_num`` only with ``multi_query_attention: true``
    (vllm/model_executor/models/chatglm.py); the head size is ``kv_channels``."""

    name = "chatglm"

    def architecture(self, cfg: ConfigView) -> Architecture:
        base = read_shape(cfg, head_dim_keys=("kv_channels",))
        kv = base.num_attention_heads
        if cfg.opt_bool("multi_query_attention") and cfg.has("multi_query_group_num"):
            kv = check_kv_heads(cfg, "multi_query_group_num", base.num_attention_heads)
        shape = Shape(
            base.num_layers, base.hidden_size, base.num_attention_heads, kv, base.head_dim
        )
        return Architecture(shape, tuple(full_layer(shape) for _ in range(shape.num_layers)))


CHATGLM = ChatGlm()
