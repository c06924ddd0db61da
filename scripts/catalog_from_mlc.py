#!/usr/bin/env python3
"""Catalog entries from mlc-llm's model presets (``python/mlc_llm/model/model_preset.py``):
copies of published ``config.json`` files kept as Python dict literals, read here without
running the module (``ast.literal_eval``) and checked by the family code like every entry.

    scripts/catalog_from_mlc.py --git-mirrors DIR [--write]

Some presets are older snapshots or edited (mlc's Llama 2 presets keep the 2048-token
``max_position_embeddings`` the Hub's Llama 2 configs had before they were corrected to 4096,
its Qwen1.5-1.8B preset a 4096 context): only the presets in ``TAKEN``, each compared by hand
with the published config it names, are read.
"""

from __future__ import annotations

import argparse
import ast
import pathlib
import subprocess
import sys
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from build_catalog import CATALOG
from build_catalog import emit
from build_catalog import repository
from build_catalog import table_entry

REPO = "mlc-ai/mlc-llm"
REVISION = "79d603f085f50500e9509fa01785ffa7ecfaaa93"
PATH = "python/mlc_llm/model/model_preset.py"

# preset name -> (Hub id, aliases)
TAKEN: dict[str, tuple[str, tuple[str, ...]]] = {
    "gpt2": ("openai-community/gpt2", ("gpt2",)),
    "gpt2_medium": ("openai-community/gpt2-medium", ("gpt2-medium",)),
    "gpt_bigcode": ("bigcode/gpt_bigcode-santacoder", ()),
    "redpajama_3b_v1": ("togethercomputer/RedPajama-INCITE-Chat-3B-v1", ()),
    "phi-3_5": ("microsoft/Phi-3.5-mini-instruct", ("phi3.5:3.8b",)),
    "phi-3_5-vision": ("microsoft/Phi-3.5-vision-instruct", ()),
    "phi-4": ("microsoft/Phi-4-mini-instruct", ("phi4-mini:3.8b",)),
    "qwen": ("Qwen/Qwen-1_8B-Chat", ("Qwen/Qwen-1_8B",)),
    "gemma2_2b-jpn": ("google/gemma-2-2b-jpn-it", ()),
    "snowflake-arctic-embed-m": ("Snowflake/snowflake-arctic-embed-m", ()),
    "stablelm-2-zephyr-1_6b": ("stabilityai/stablelm-2-zephyr-1_6b", ()),
    "qwen2_0_5b": ("Qwen/Qwen2-0.5B-Instruct", ("qwen2:0.5b",)),
    "qwen2_1_5b": ("Qwen/Qwen2-1.5B-Instruct", ("qwen2:1.5b",)),
    "internlm2_5_7b": ("internlm/internlm2_5-7b-chat", ()),
    "starcoder2": ("bigcode/starcoder2-7b", ("starcoder2:7b",)),
    "smollm_360m": ("HuggingFaceTB/SmolLM-360M", ("HuggingFaceTB/SmolLM-360M-Instruct",)),
    "smollm_135m": ("HuggingFaceTB/SmolLM-135M", ("HuggingFaceTB/SmolLM-135M-Instruct",)),
    "aya-23": ("CohereForAI/aya-23-8B", ("aya:8b",)),
    "minicpm_2b_sft_bf16": ("openbmb/MiniCPM-2B-sft-bf16", ()),
    "minicpm-moe-8x2b": ("openbmb/MiniCPM-MoE-8x2B", ()),
    "deepseek": ("deepseek-ai/deepseek-moe-16b-chat", ("deepseek-ai/deepseek-moe-16b-base",)),
    "gpt_j": ("EleutherAI/gpt-j-6b", ()),
    "olmo2_32b": ("allenai/OLMo-2-0325-32B-Instruct", ("allenai/OLMo-2-0325-32B",)),
    # no quantization_config: the BF16 release (the plain -2512 repository holds FP8 weights)
    "ministral3_3b_2512": ("mistralai/Ministral-3-3B-Instruct-2512-BF16", ()),
}


def presets(mirrors: pathlib.Path) -> dict[str, Any]:
    clone = repository(mirrors, REPO)
    if clone is None:
        raise SystemExit(f"catalog_from_mlc: no clone of {REPO} under {mirrors}")
    text = subprocess.run(
        ["git", "-C", str(clone), "show", f"{REVISION}:{PATH}"], capture_output=True, check=True
    ).stdout.decode("utf-8")
    for node in ast.parse(text).body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict):
            table: dict[str, Any] = ast.literal_eval(node.value)
            return table
    raise SystemExit(f"catalog_from_mlc: no preset table in {PATH}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git-mirrors", type=pathlib.Path, required=True)
    parser.add_argument("--catalog", type=pathlib.Path, default=CATALOG)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    table = presets(args.git_mirrors)
    built = []
    for preset, (model_id, aliases) in TAKEN.items():
        if preset not in table:
            print(f"catalog_from_mlc: no preset {preset!r}", file=sys.stderr)
            return 1
        source = {
            "repo": REPO,
            "revision": REVISION,
            "path": PATH,
            "url": f"https://huggingface.co/{model_id}/blob/main/config.json",
            "note": f"mlc-llm preset {preset!r} (a copy of the published config.json)",
        }
        built.append(table_entry(model_id, aliases, table[preset], source))
    return emit(built, args.catalog, write=args.write, tool="catalog_from_mlc")


if __name__ == "__main__":
    sys.exit(main())
