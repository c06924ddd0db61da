"""Tests for kvlint.config: finding the file, validating it with positions, resolving settings."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import jsonschema
import pytest

from kvlint.config import config_schema
from kvlint.config import find_config
from kvlint.config import load_config
from kvlint.config import resolve
from kvlint.errors import KvlintError
from kvlint.finding import Severity
from kvlint.registry import default_registry
from testing.shared import REPO


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_find_config_walks_up_and_stops_at_the_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    deploy = write(repo / "deploy" / "prod" / "vllm.yaml", "a: 1\n")
    write(tmp_path / ".kvlint.yaml", "gpu: L4\n")  # outside the repository: never used
    assert find_config(deploy) is None
    write(repo / "pyproject.toml", "[project]\nname = 'x'\n")
    assert find_config(deploy) is None  # a pyproject.toml without [tool.kvlint]
    write(repo / "pyproject.toml", "[tool.kvlint]\ngpu = 'L4'\n")
    assert find_config(deploy) == (repo / "pyproject.toml").resolve()
    write(repo / "deploy" / ".kvlint.yaml", "gpu: L4\n")
    assert find_config(deploy.parent) == (repo / "deploy" / ".kvlint.yaml").resolve()


def test_yaml_config_values(tmp_path: Path) -> None:
    path = write(
        tmp_path / ".kvlint.yaml",
        "select: [KV]\nignore: [KV5]\nextend-select: [KV501]\n"
        "per-file-ignores:\n  'legacy/*': [KV907]\nseverity:\n  missing-fact: warning\n"
        "engine-version: {vllm: '0.11.0'}\ngpu: H100-80GB\nfail-on: error\n",
    )
    loaded = load_config(path)
    settings = resolve(loaded, default_registry())
    assert settings.selection.is_selected("KV501")
    assert not settings.selection.is_selected("KV502")
    assert not settings.selection.is_enabled("KV907", str(tmp_path / "legacy" / "a.yaml"))
    assert settings.severities == {"KV907": Severity.WARNING}
    assert settings.engine_versions == {"vllm": "0.11.0"}
    assert (settings.gpu, settings.fail_on, settings.config_path) == (
        "H100-80GB",
        Severity.ERROR,
        path,
    )


def test_command_line_overrides(tmp_path: Path) -> None:
    path = write(tmp_path / ".kvlint.yaml", "select: [KV9]\nignore: [KV906]\ngpu: L4\n")
    settings = resolve(
        load_config(path),
        default_registry(),
        select=["KV5", "KV9"],
        ignore=["KV907"],
        fail_on="info",
        gpu="A100-80GB",
        engine_version="vllm=0.10.1",
    )
    assert settings.selection.is_selected("KV501")
    assert not settings.selection.is_selected("KV906")  # the file's ignore still applies
    assert not settings.selection.is_selected("KV907")
    assert (settings.gpu, settings.fail_on) == ("A100-80GB", Severity.INFO)
    assert settings.engine_versions == {"vllm": "0.10.1"}
    everything = resolve(load_config(None), default_registry(), engine_version="0.11.0")
    assert everything.engine_versions == {"*": "0.11.0"}


def test_unknown_key_in_yaml_has_its_position(tmp_path: Path) -> None:
    path = write(tmp_path / ".kvlint.yaml", "select: [KV]\n  \nignroe: [KV5]\n")
    with pytest.raises(KvlintError) as info:
        load_config(path)
    assert str(info.value) == (
        f"{path}:3:1: unknown key `ignroe` in the kvlint config (known keys: select, ignore, "
        "extend-select, per-file-ignores, workload, severity, rules, engine-version, gpu, "
        "reserved-memory, "
        "fail-on, exclude, extend-exclude, respect-gitignore, offline, models)"
    )


def test_wrong_type_in_toml_has_its_position(tmp_path: Path) -> None:
    path = write(
        tmp_path / "pyproject.toml",
        "[project]\nname = 'x'\n\n[tool.kvlint]\nselect = ['KV']\nfail-on = 'sometimes'\n",
    )
    with pytest.raises(KvlintError) as info:
        load_config(path)
    assert str(info.value) == (
        f"{path}:6:1: `fail-on`: Input should be 'error', 'warning' or 'info'"
    )


def test_rule_options_checked_against_the_rule(tmp_path: Path) -> None:
    path = write(tmp_path / ".kvlint.yaml", "rules:\n  missing-fact:\n    ratio: 0.5\n")
    with pytest.raises(KvlintError) as info:
        resolve(load_config(path), default_registry())
    assert str(info.value) == (
        f"{path}:3:5: unknown key `rules.missing-fact.ratio` in the kvlint config"
    )


def test_unknown_rule_in_severity(tmp_path: Path) -> None:
    path = write(tmp_path / ".kvlint.yaml", "severity:\n  KV999: info\n")
    with pytest.raises(KvlintError) as info:
        resolve(load_config(path), default_registry())
    assert str(info.value) == (
        f"{path}:2:3: `severity.KV999`: no rule has that code or code prefix; did you mean "
        "`KV901`, `KV902` or `KV903`?"
    )


def test_invalid_yaml_and_non_mapping(tmp_path: Path) -> None:
    with pytest.raises(KvlintError) as info:
        load_config(write(tmp_path / "a" / ".kvlint.yaml", "select: [KV\n"))
    assert str(info.value).startswith(f"{tmp_path / 'a' / '.kvlint.yaml'}:2:1: invalid YAML")
    with pytest.raises(KvlintError) as info:
        load_config(write(tmp_path / "b" / ".kvlint.yaml", "- KV301\n"))
    assert str(info.value).endswith(":1:1: a kvlint config file must be a mapping of keys")


def test_bad_selector_in_config_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path / ".kvlint.yaml", "ignore: [max num seqs]\n")
    with pytest.raises(KvlintError) as info:
        resolve(load_config(path), default_registry())
    assert str(info.value) == (
        f"{path}:1:10: unknown rule selector `max num seqs` in `ignore` of the kvlint config: "
        "not a rule code, code prefix (`KV3`), rule name or `ALL` (`kvlint rules` lists them)"
    )


def test_schema_file_is_current() -> None:
    path = REPO / "schemas" / "config.schema.json"
    assert json.loads(path.read_text(encoding="utf-8")) == config_schema(), (
        "schemas/config.schema.json is stale: regenerate it with "
        "`python -c 'import json, kvlint.config as c; print(json.dumps(c.config_schema(), "
        "indent=2))' > schemas/config.schema.json`"
    )


def test_schema_accepts_and_rejects_like_the_model() -> None:
    validator = jsonschema.Draft202012Validator(config_schema())
    good = {"select": ["KV"], "per-file-ignores": {"a/*": ["KV907"]}, "fail-on": "error"}
    assert list(validator.iter_errors(good)) == []
    assert [e.message for e in validator.iter_errors({"ignroe": []})] == [
        "Additional properties are not allowed ('ignroe' was unexpected)"
    ]


def test_rule_options_by_code_or_name(tmp_path: Path) -> None:
    path = write(
        tmp_path / ".kvlint.yaml",
        "rules:\n  engine-pool-below-first-principles:\n    ratio: 0.25\n",
    )
    settings = resolve(load_config(path), default_registry())
    assert list(settings.options) == ["KV305"]
    assert dataclasses.asdict(settings.options["KV305"]) == {"ratio": 0.25}
    path = write(tmp_path / ".kvlint.yaml", "rules:\n  KV305: {ratio: 2}\n")
    with pytest.raises(KvlintError) as info:
        resolve(load_config(path), default_registry())
    assert str(info.value) == (
        f"{path}:2:11: `rules.KV305.ratio`: Input should be less than or equal to 1"
    )


def test_tool_kvlint_is_read_with_tomli_where_tomllib_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python 3.10 has no tomllib: the reader falls back to tomli (a dependency there)."""
    import sys

    path = write(
        tmp_path / "pyproject.toml",
        '[project]\nname = "x"\n\n[tool.kvlint]\nselect = ["KV3"]\ngpu = "H100-80GB"\n'
        'severity = { KV301 = "error" }\n',
    )
    monkeypatch.setitem(sys.modules, "tomllib", None)  # `import tomllib` raises ImportError
    import tomli

    loaded = load_config(path)
    assert (loaded.config.select, loaded.config.gpu) == (["KV3"], "H100-80GB")
    assert loaded.config.severity == {"KV301": "error"}
    from kvlint.config import toml_module

    assert toml_module() is tomli
    with pytest.raises(KvlintError, match=r"invalid TOML: "):
        load_config(write(tmp_path / "bad" / "pyproject.toml", "[tool.kvlint\n"))
    monkeypatch.setitem(sys.modules, "tomli", None)
    with pytest.raises(KvlintError, match=r"needs Python 3.11 or the tomli package"):
        load_config(path)


def test_a_schema_key_is_allowed_and_the_schema_describes_it(tmp_path: Path) -> None:
    url = "https://raw.githubusercontent.com/kvcache-lint/kvlint/main/schemas/config.schema.json"
    path = write(tmp_path / ".kvlint.yaml", f"$schema: {url}\nselect: [KV3]\n")
    assert load_config(path).config.select == ["KV3"]
    schema = config_schema()
    assert schema["$id"] == url
    data = {"$schema": url, "select": ["KV3"], "exclude": ["legacy/"]}
    jsonschema.Draft202012Validator(schema).validate(data)


def test_the_schemastore_entry_names_the_published_schema() -> None:
    import re

    from kvlint.config import SCHEMA_ID
    from kvlint.config import YAML_NAMES

    text = (REPO / "docs" / "schemastore.md").read_text(encoding="utf-8")
    entry = json.loads(re.findall(r"```json\n(.*?)```", text, re.DOTALL)[0])
    assert set(entry) == {"name", "description", "fileMatch", "url"}
    assert entry["url"] == SCHEMA_ID == config_schema()["$id"]
    assert tuple(entry["fileMatch"]) == YAML_NAMES
    assert SCHEMA_ID.endswith("/main/schemas/config.schema.json")


def test_workload_per_path(tmp_path: Path) -> None:
    path = write(
        tmp_path / ".kvlint.yaml",
        "workload:\n  'batch/*.yaml': {prompt-tokens: 1800, output_tokens: 200, p95-tokens: 3k}\n"
        "  'online/*': {p99-tokens: 16384}\n",
    )
    settings = resolve(load_config(path), default_registry())
    batch = settings.workload_for(str(tmp_path / "batch" / "a.yaml"))
    assert batch is not None
    assert [(w.label, w.tokens, w.detail) for w in batch.lengths()] == [
        ("typical request", 2000, "1,800 prompt + 200 output"),
        ("p95", 3000, ""),
    ]
    assert batch.lengths()[0].source.span.line == 2
    online = settings.workload_for(str(tmp_path / "online" / "b.yaml"))
    assert online is not None and [w.tokens for w in online.lengths()] == [16384]
    assert settings.workload_for(str(tmp_path / "other.yaml")) is None


def test_workload_figures_are_checked(tmp_path: Path) -> None:
    path = write(
        tmp_path / ".kvlint.yaml",
        "workload:\n  'a/*': {prompt-tokens: lots, median-tokens: 100, output-tokens: 0}\n",
    )
    with pytest.raises(KvlintError) as info:
        resolve(load_config(path), default_registry())
    text = str(info.value)
    assert "`workload.a/*.prompt-tokens` of the kvlint config: expected an integer" in text
    assert "`workload.a/*.median-tokens` of the kvlint config: not a workload figure" in text
    assert "`workload.a/*.output-tokens` of the kvlint config: expected a positive" in text
