"""SGLang: ``python -m sglang.launch_server`` / ``sglang serve`` and its flags."""

from __future__ import annotations

from kvlint.deploy.flags import EngineSpec
from kvlint.deploy.flags import Setting
from kvlint.deploy.interpret import Engine
from kvlint.engines.sglang import flags as sglang_flags
from kvlint.engines.sglang.facts import KV_CACHE_DTYPES

SETTINGS = {
    s.name: s
    for s in (
        Setting("model-path", "str", "model"),
        Setting("served-model-name", "str", "served_model_name"),
        Setting("dtype", "str", "dtype"),
        Setting("quantization", "str", "quantization"),
        Setting("kv-cache-dtype", "str", "kv_cache_dtype", KV_CACHE_DTYPES),
        Setting("context-length", "human_int", "max_model_len"),
        Setting("max-running-requests", "int", "max_num_seqs", minimum=1),
        Setting("chunked-prefill-size", "int", "max_num_batched_tokens"),
        Setting("mem-fraction-static", "fraction", "memory_fraction"),
        Setting("tp-size", "int", "tensor_parallel_size", minimum=1),
        Setting("pp-size", "int", "pipeline_parallel_size", minimum=1),
        Setting("dp-size", "int", "data_parallel_size", minimum=1),
        Setting("enable-dp-attention", "bool", "enable_dp_attention"),
        Setting("nnodes", "int", "nnodes", minimum=1),
        Setting("page-size", "int", "block_size", minimum=1),
        Setting("disable-cuda-graph", "bool", "enforce_eager"),
        Setting("speculative-draft-model-path", "str", "speculative_model"),
        Setting("json-model-override-args", "json", "hf_overrides"),
        Setting("max-total-tokens", "int"),
        # sglang/srt/server_args.py: SWA tokens per full-attention token, in (0, 1].
        Setting("swa-full-tokens-ratio", "fraction"),
        Setting("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN", "bool", "allow_long_max_model_len"),
    )
}

# SGLang's own docs and launch examples write `--tp 2` / `--dp 2`: argparse expands the prefix,
# and the project treats them as the spellings, so they are not reported as abbreviations.
ALIASES = {**sglang_flags.ALIASES, "--tp": "tp-size", "--dp": "dp-size"}

SPEC = EngineSpec(
    name="sglang",
    settings=SETTINGS,
    known=sglang_flags.KNOWN,
    aliases=ALIASES,
    env={"SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN": "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"},
    abbrev=True,  # argparse default: `--tp 2` is `--tp-size 2`
    model_flag="model-path",
    releases_read=sglang_flags.RELEASES_READ,
    last_seen=sglang_flags.LAST_SEEN,
    # prepare_server_args hands argv with `--config` to ConfigArgumentMerger
    # (python/sglang/srt/server_args_config_parser.py, sgl-project/sglang 03bd2f16), which
    # returns the file's `--key value` pairs followed by the command line: a flag on the
    # command line wins ("CLI > Config > Defaults").
    config_files=("config",),
    config_layer="under",
)

ENGINE = Engine(SPEC)
