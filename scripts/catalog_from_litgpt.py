#!/usr/bin/env python3
"""Catalog entries from litgpt's table of model configs (``litgpt/config.py``), for models whose
``config.json`` is not mirrored anywhere we read, written as the ``config.json`` keys they stand
for and checked by the family code like every other entry.

    scripts/catalog_from_litgpt.py --git-mirrors DIR [--write]

litgpt's table is another project's transcription, not a copy: its ``block_size`` is the
context litgpt trains with, which for some models is not the config's
``max_position_embeddings`` (Phi-3.5-mini: 4096 for 131072, QwQ-32B: 131072 for 40960), and it
keeps no ``rope_scaling`` of the long-context kinds. Only the models listed in ``TAKEN`` are
read, each compared by hand with its published config; what was left out and why is in
``kvlint/model/catalog/COVERAGE.md``.
"""

from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys
import types
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from build_catalog import CATALOG
from build_catalog import emit
from build_catalog import repository

from kvlint.model.catalog.build import minimal_config
from kvlint.model.catalog.build import unsized_reason

REPO = "Lightning-AI/litgpt"
REVISION = "26857050fe3ff627cd714fe92f5838f51a3d5efa"
PATH = "litgpt/config.py"

# Hub id -> (model_type, torch_dtype, tie_word_embeddings), as the published configs give them.
TAKEN: dict[str, tuple[str, str, bool]] = {
    **{
        f"EleutherAI/pythia-{size}{dedup}": ("gpt_neox", "float16", False)
        for size in ("70m", "160m", "410m", "1b", "1.4b", "2.8b", "6.9b", "12b")
        for dedup in ("", "-deduped")
    },
    **{
        f"stabilityai/{name}": ("gpt_neox", "float16", False)
        for name in (
            "stablelm-base-alpha-3b",
            "stablelm-base-alpha-7b",
            "stablelm-tuned-alpha-3b",
            "stablelm-tuned-alpha-7b",
            "stablecode-completion-alpha-3b",
            "stablecode-completion-alpha-3b-4k",
            "stablecode-instruct-alpha-3b",
        )
    },
    "stabilityai/stablelm-zephyr-3b": ("stablelm", "bfloat16", False),
    "stabilityai/stable-code-3b": ("stablelm", "bfloat16", False),
    **{
        f"tiiuae/Falcon3-{size}-{kind}": ("llama", "bfloat16", False)
        for size in ("1B", "3B", "7B", "10B")
        for kind in ("Base", "Instruct")
    },
    **{
        f"openlm-research/open_llama_{size}": ("llama", "float16", False)
        for size in ("3b", "7b", "13b")
    },
    "nvidia/Llama-3.1-Nemotron-70B-Instruct-HF": ("llama", "bfloat16", False),
    "allenai/OLMo-1B-hf": ("olmo", "float32", True),
    "allenai/OLMo-7B-hf": ("olmo", "float32", False),
    "allenai/OLMo-7B-Instruct-hf": ("olmo", "float32", False),
    **{
        f"allenai/OLMo-2-1124-{size}{kind}": ("olmo2", "float32", False)
        for size in ("7B", "13B")
        for kind in ("", "-SFT", "-DPO", "-Instruct")
    },
    "stabilityai/FreeWilly2": ("llama", "float32", False),
    **{
        f"codellama/CodeLlama-{name}-hf": ("llama", "bfloat16", False)
        for name in ("13b", "34b", "7b-Python", "13b-Python", "34b-Python", "34b-Instruct")
    },
    "garage-bAInd/Platypus-30B": ("llama", "float16", False),
    "garage-bAInd/Platypus2-7B": ("llama", "float16", False),
    "garage-bAInd/Platypus2-13B": ("llama", "float16", False),
    "garage-bAInd/Camel-Platypus2-13B": ("llama", "float16", False),
    "garage-bAInd/Camel-Platypus2-70B": ("llama", "float16", False),
    "garage-bAInd/Stable-Platypus2-13B": ("llama", "float16", False),
    "garage-bAInd/Platypus2-70B-instruct": ("llama", "float16", False),
    "microsoft/phi-1_5": ("phi", "float16", False),
    "microsoft/Phi-4-reasoning": ("phi3", "bfloat16", False),
    "microsoft/Phi-4-reasoning-plus": ("phi3", "bfloat16", False),
    "unsloth/Mistral-7B-v0.2": ("mistral", "bfloat16", False),
    "TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T": ("llama", "float32", False),
    "TinyLlama/TinyLlama-1.1B-Chat-v1.0": ("llama", "bfloat16", False),
    "keeeeenw/MicroLlama": ("llama", "float32", False),
    "Trelis/Llama-2-7b-chat-hf-function-calling-v2": ("llama", "float16", False),
    "Qwen/Qwen2.5-Coder-0.5B": ("qwen2", "bfloat16", True),
    "Qwen/Qwen2.5-Coder-0.5B-Instruct": ("qwen2", "bfloat16", True),
    "Qwen/Qwen2.5-Coder-3B": ("qwen2", "bfloat16", True),
    "Qwen/Qwen2.5-Coder-3B-Instruct": ("qwen2", "bfloat16", True),
    "Qwen/Qwen2.5-Coder-14B": ("qwen2", "bfloat16", False),
    "Qwen/Qwen2.5-Coder-14B-Instruct": ("qwen2", "bfloat16", False),
    "Qwen/Qwen2.5-Math-1.5B": ("qwen2", "bfloat16", True),
    "Qwen/Qwen2.5-Math-1.5B-Instruct": ("qwen2", "bfloat16", True),
    "Qwen/Qwen2.5-Math-7B": ("qwen2", "bfloat16", False),
    "Qwen/Qwen2.5-Math-7B-Instruct": ("qwen2", "bfloat16", False),
    "Qwen/Qwen2.5-Math-72B": ("qwen2", "bfloat16", False),
    "Qwen/Qwen2.5-Math-72B-Instruct": ("qwen2", "bfloat16", False),
    "Qwen/Qwen2.5-7B-Instruct-1M": ("qwen2", "bfloat16", False),
    "Qwen/Qwen2.5-14B-Instruct-1M": ("qwen2", "bfloat16", False),
    "Qwen/QwQ-32B-Preview": ("qwen2", "bfloat16", False),
    "Qwen/Qwen3-235B-A22B-Thinking-2507": ("qwen3_moe", "bfloat16", False),
    "Qwen/Qwen3-235B-A22B-Instruct-2507": ("qwen3_moe", "bfloat16", False),
    "Qwen/Qwen3-30B-A3B-Thinking-2507": ("qwen3_moe", "bfloat16", False),
    "Qwen/Qwen3-30B-A3B-Instruct-2507": ("qwen3_moe", "bfloat16", False),
    "Qwen/Qwen3-4B-Thinking-2507": ("qwen3", "bfloat16", True),
    "Qwen/Qwen3-4B-Instruct-2507": ("qwen3", "bfloat16", True),
    **{
        f"BSC-LT/salamandra-{size}{kind}": ("llama", "bfloat16", False)
        for size in ("2b", "7b")
        for kind in ("", "-instruct")
    },
    **{
        f"HuggingFaceTB/SmolLM2-{size}{kind}": ("llama", "bfloat16", True)
        for size in ("135M", "360M", "1.7B")
        for kind in ("", "-Instruct")
    },
}


def litgpt_table(mirrors: pathlib.Path) -> tuple[list[dict[str, Any]], Any]:
    """litgpt's ``configs`` list and its ``Config`` class (the module is data: dicts, no I/O)."""
    clone = repository(mirrors, REPO)
    if clone is None:
        raise SystemExit(f"catalog_from_litgpt: no clone of {REPO} under {mirrors}")
    text = subprocess.run(
        ["git", "-C", str(clone), "show", f"{REVISION}:{PATH}"], capture_output=True, check=True
    ).stdout.decode("utf-8")
    module = types.ModuleType("litgpt_config")  # dataclasses look their module up
    sys.modules[module.__name__] = module
    exec(compile(text, PATH, "exec"), module.__dict__)  # a table of dicts, read once
    return module.configs, module.Config


def as_hf_config(c: Any, model_type: str, dtype: str, tie: bool) -> dict[str, Any]:
    """The ``config.json`` keys litgpt's fields stand for (transformers' names)."""
    config: dict[str, Any] = {
        "model_type": model_type,
        "num_hidden_layers": c.n_layer,
        "hidden_size": c.n_embd,
        "num_attention_heads": c.n_head,
        "num_key_value_heads": c.n_query_groups,
        "intermediate_size": c.intermediate_size,
        "max_position_embeddings": c.block_size,
        "rope_theta": c.rope_base,
        "vocab_size": c.padded_vocab_size,  # the embedding's rows, as config.json counts them
        "torch_dtype": dtype,
        "tie_word_embeddings": tie,
    }
    if c.head_size != c.n_embd // c.n_head or model_type.startswith("qwen3"):
        config["head_dim"] = c.head_size
    if c.rotary_percentage != 1.0:
        key = "rotary_pct" if model_type == "gpt_neox" else "partial_rotary_factor"
        config[key] = c.rotary_percentage
    if c.sliding_window_size:
        config["sliding_window"] = c.sliding_window_size
    if model_type.startswith("qwen2"):
        config["use_sliding_window"] = False
    if c.n_expert:
        config["num_experts"] = c.n_expert
        config["num_experts_per_tok"] = c.n_expert_per_token
        config["moe_intermediate_size"] = c.moe_intermediate_size
    adj = c.rope_adjustments
    if adj and "low_freq_factor" in adj:
        config["rope_scaling"] = {
            "rope_type": "llama3",
            "factor": adj["factor"],
            "low_freq_factor": adj["low_freq_factor"],
            "high_freq_factor": adj["high_freq_factor"],
            "original_max_position_embeddings": adj["original_max_seq_len"],
        }
    return config


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git-mirrors", type=pathlib.Path, required=True)
    parser.add_argument("--catalog", type=pathlib.Path, default=CATALOG)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    configs, config_class = litgpt_table(args.git_mirrors)
    built = []
    found = set()
    for raw in configs:
        hub = raw.get("hf_config", {})
        model_id = f"{hub.get('org')}/{hub.get('name')}"
        if model_id not in TAKEN:
            continue
        found.add(model_id)
        c = config_class(**raw)
        model_type, dtype, tie = TAKEN[model_id]
        config = as_hf_config(c, model_type, dtype, tie)
        record: dict[str, Any] = {"id": model_id, "config": minimal_config(config, name=model_id)}
        refused = unsized_reason(record["config"], name=model_id)
        if refused is not None:
            raise SystemExit(f"catalog_from_litgpt: {model_id} is not sized: {refused}")
        record["source"] = {
            "repo": REPO,
            "revision": REVISION,
            "path": PATH,
            "url": f"https://huggingface.co/{model_id}/blob/main/config.json",
            "note": (
                f"litgpt {raw['name']!r} (n_layer {c.n_layer}, n_embd {c.n_embd}, n_head "
                f"{c.n_head}, n_query_groups {c.n_query_groups}, head_size {c.head_size}, "
                f"block_size {c.block_size}), written as config.json keys; model_type, "
                "torch_dtype and tie_word_embeddings from the published config"
            ),
        }
        built.append(record)
    missing = sorted(set(TAKEN) - found)
    if missing:
        print(f"catalog_from_litgpt: not in litgpt's table: {', '.join(missing)}", file=sys.stderr)
        return 1
    return emit(built, args.catalog, write=args.write, tool="catalog_from_litgpt")


if __name__ == "__main__":
    sys.exit(main())
