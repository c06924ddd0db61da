"""What ``kvlint check`` imports: heavy packages and the fixer only on the paths that use them.

Each case runs the real CLI in a fresh interpreter and lists the packages (and kvlint modules) in
``sys.modules`` afterwards: a structural test, not a timing one. The positive cases (a plan,
``--format full``, a model outside the catalog) show the test sees an import when it happens.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kvlint import parallel
from testing.shared import REPO

HEAVY = ("huggingface_hub", "jsonschema", "rich", "multiprocessing", "pydantic", "ruamel")
PROBE = """
import json, sys
from kvlint.main import main
code = main(sys.argv[1:])
sys.stdout.flush()
print(json.dumps([code, sorted(sys.modules)]), file=sys.stderr)
"""

VLLM_CONFIG = """\
# vllm serve --config serve.yaml
model: meta-llama/Llama-3.1-8B-Instruct
max-model-len: 32768
max-num-seqs: 64
gpu-memory-utilization: 0.9
"""
KUBERNETES = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: llama}
spec:
  selector: {matchLabels: {app: llama}}
  template:
    metadata: {labels: {app: llama}}
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: [--model=meta-llama/Llama-3.1-8B-Instruct, --max-model-len=131072]
          resources: {limits: {nvidia.com/gpu: 1}}
---
apiVersion: v1
kind: Service
metadata: {name: llama}
spec: {ports: [{port: 80}]}
"""


SERVICE_ONLY = """\
apiVersion: v1
kind: Service
metadata: {name: llama}
spec: {ports: [{port: 80}]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader}
rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: router}
data: {route: /v1/llama}
"""


def imported(tmp_path: Path, *args: str) -> tuple[int, set[str]]:
    """Run ``kvlint`` with ``args`` in ``tmp_path``; its exit code and imported packages."""
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "NO_COLOR")}
    env["HF_HUB_OFFLINE"] = "1"
    env["HF_HOME"] = str(tmp_path / "hf-home")  # an empty cache: nothing found there
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    code, names = json.loads(done.stderr.strip().splitlines()[-1])
    # Top-level packages, and kvlint's own modules by their full names.
    return code, {n.split(".")[0] for n in names} | {n for n in names if n.startswith("kvlint")}


@pytest.mark.parametrize(
    ("name", "text"), [("serve.yaml", VLLM_CONFIG), ("deploy.yaml", KUBERNETES)]
)
def test_check_on_a_small_file_imports_no_heavy_package(
    tmp_path: Path, name: str, text: str
) -> None:
    (tmp_path / name).write_text(text)
    code, modules = imported(tmp_path, "check", "--format", "concise", "--gpu", "L4", name)
    assert code == 1  # findings were reported: the whole pipeline ran
    assert "kvlint_rules" in modules and "yaml" in modules
    assert modules.isdisjoint(HEAVY), sorted(modules.intersection(HEAVY))
    # The fixer, and the text layer it splices with, only with --fix or --diff.
    assert modules.isdisjoint({"kvlint.fix", "kvlint.fix_text"})


def test_a_config_of_plain_values_is_read_without_pydantic_or_ruamel(tmp_path: Path) -> None:
    (tmp_path / "serve.yaml").write_text(VLLM_CONFIG)
    (tmp_path / ".kvlint.yaml").write_text(
        "gpu: L4\nignore: [KV907]\nengine-version: {vllm: 0.11.0}\nfail-on: info\n"
    )
    code, modules = imported(tmp_path, "check", "--format", "concise", "serve.yaml")
    assert code == 1
    assert modules.isdisjoint(HEAVY), sorted(modules.intersection(HEAVY))


def test_rule_options_are_validated_by_pydantic(tmp_path: Path) -> None:
    (tmp_path / "serve.yaml").write_text(VLLM_CONFIG)
    (tmp_path / ".kvlint.yaml").write_text("gpu: L4\nrules: {KV305: {ratio: 0.25}}\n")
    code, modules = imported(tmp_path, "check", "--format", "concise", "serve.yaml")
    assert code == 1
    assert "pydantic" in modules


def test_json_output_imports_no_heavy_package(tmp_path: Path) -> None:
    (tmp_path / "serve.yaml").write_text(VLLM_CONFIG)
    code, modules = imported(tmp_path, "check", "--format", "json", "serve.yaml")
    assert code in (0, 1)
    assert modules.isdisjoint(HEAVY), sorted(modules.intersection(HEAVY))


def test_a_valid_plan_is_checked_without_jsonschema(tmp_path: Path) -> None:
    plan = REPO / "examples" / "deploy.yaml"
    code, modules = imported(tmp_path, "check", "--format", "concise", str(plan))
    assert code == 1
    assert "kvlint.source.conforms" in modules  # the plan was checked against its schema
    assert modules.isdisjoint({"jsonschema", "huggingface_hub", "rich"})


def test_an_invalid_plan_imports_jsonschema_to_word_its_errors(tmp_path: Path) -> None:
    text = (REPO / "examples" / "deploy.yaml").read_text()
    (tmp_path / "plan.yaml").write_text(text + "colour: blue\n")  # a key the schema refuses
    code, modules = imported(tmp_path, "check", "--format", "concise", "plan.yaml")
    assert code == 2
    assert "jsonschema" in modules


def test_the_full_format_imports_rich(tmp_path: Path) -> None:
    (tmp_path / "serve.yaml").write_text(VLLM_CONFIG)
    code, modules = imported(tmp_path, "check", "--format", "full", "serve.yaml")
    assert code in (0, 1)
    assert "rich" in modules
    assert modules.isdisjoint({"huggingface_hub", "jsonschema"})


def test_a_model_outside_the_catalog_looks_in_the_hugging_face_cache(tmp_path: Path) -> None:
    (tmp_path / "serve.yaml").write_text("model: example-org/not-a-catalog-model\n")
    code, modules = imported(tmp_path, "check", "--format", "concise", "serve.yaml")
    assert code == 1  # KV902: unknown offline, a warning
    assert "huggingface_hub" in modules


def test_fix_imports_the_fixer(tmp_path: Path) -> None:
    (tmp_path / "serve.yaml").write_text(VLLM_CONFIG)
    code, modules = imported(tmp_path, "check", "--diff", "--format", "concise", "serve.yaml")
    assert code in (0, 1)
    assert {"kvlint.fix", "kvlint.fix_text"} <= modules


def test_many_files_with_jobs_import_multiprocessing(tmp_path: Path) -> None:
    for index in range(2 * parallel.MIN_FILES_PER_WORKER):
        (tmp_path / f"serve-{index:02d}.yaml").write_text(VLLM_CONFIG)
    code, modules = imported(tmp_path, "check", "--format", "concise", "--jobs", "2", ".")
    assert code in (0, 1)
    if sys.platform.startswith("linux"):
        assert "multiprocessing" in modules
    assert modules.isdisjoint({"huggingface_hub", "jsonschema", "rich"})


def test_a_file_of_objects_that_run_nothing_imports_no_rule_sizing_or_engine(
    tmp_path: Path,
) -> None:
    (tmp_path / "service.yaml").write_text(SERVICE_ONLY)
    code, modules = imported(tmp_path, "check", "--format", "concise", "service.yaml")
    assert code == 0
    assert modules.isdisjoint(HEAVY), sorted(modules.intersection(HEAVY))
    loaded = {
        m
        for m in modules
        if m == "kvlint_rules"
        or m.startswith(("kvlint.engines", "kvlint.deploy.carriers", "kvlint.model"))
        or m in {"kvlint.sizing", "kvlint.settled", "kvlint.rule", "kvlint.estimate"}
    }
    assert not loaded, sorted(loaded)


def test_a_service_with_a_broken_line_is_still_reported(tmp_path: Path) -> None:
    # Left out before kvlint's nodes are built, but still composed: its errors are reported.
    (tmp_path / "service.yaml").write_text(SERVICE_ONLY + "---\nkind: Service\n  bad: [\n")
    code, modules = imported(tmp_path, "check", "--format", "concise", "service.yaml")
    assert code == 2
    assert "kvlint_rules" in modules  # the finding is stamped by its rule (KV901)


@pytest.mark.parametrize("output", ["text", "json"])
def test_solve_without_plot_imports_no_xml_or_ssl(tmp_path: Path, output: str) -> None:
    (tmp_path / "serve.yaml").write_text(VLLM_CONFIG)
    code, modules = imported(tmp_path, "solve", "--gpu", "L4", "--format", output, "serve.yaml")
    assert code in (0, 1)
    assert "kvlint.solve.plan" in modules  # the plan was made
    assert modules.isdisjoint({"xml", "ssl", "http", "jsonschema"})
    # The tables are rich's and the text chart is drawn by kvlint.solve.plot; JSON is written
    # with neither (its chart is the data of kvlint.solve.chart).
    assert ("rich" in modules) is (output == "text")
    assert ("kvlint.solve.plot" in modules) is (output == "text")
    assert "kvlint.solve.chart" in modules


def test_solve_plot_imports_the_drawing(tmp_path: Path) -> None:
    (tmp_path / "serve.yaml").write_text(VLLM_CONFIG)
    args = ("solve", "--gpu", "L4", "--format", "json", "--plot", "kv.svg", "serve.yaml")
    code, modules = imported(tmp_path, *args)
    assert code in (0, 1) and (tmp_path / "kv.svg").is_file()
    assert "kvlint.solve.plot" in modules and "rich" not in modules


@pytest.mark.parametrize("output", ["text", "json"])
def test_size_imports_rich_only_for_text_and_nothing_of_solve(tmp_path: Path, output: str) -> None:
    (tmp_path / "serve.yaml").write_text(VLLM_CONFIG)
    code, modules = imported(tmp_path, "size", "--gpu", "L4", "--format", output, "serve.yaml")
    assert code in (0, 1)
    assert "kvlint.sizing" in modules  # the deployment was sized
    assert ("rich" in modules) is (output == "text")
    assert not {m for m in modules if m.startswith("kvlint.solve")}
    assert modules.isdisjoint({"xml", "ssl", "http", "jsonschema"})


def test_a_vllm_deployment_imports_no_other_engine(tmp_path: Path) -> None:
    (tmp_path / "deploy.yaml").write_text(KUBERNETES)
    code, modules = imported(tmp_path, "check", "--format", "concise", "--gpu", "L4", "deploy.yaml")
    assert code == 1
    engines = {
        m.split(".")[2] for m in modules if m.startswith("kvlint.engines.") and m.count(".") >= 3
    }
    assert "vllm" in engines
    assert engines.isdisjoint({"sglang", "tgi", "llamacpp", "ollama"}), sorted(engines)


@pytest.mark.skipif(
    sys.version_info >= (3, 12), reason="dataclasses reads annotations with inspect from 3.12"
)
@pytest.mark.parametrize("name", ["deploy.yaml", "plan.yaml"])
def test_a_check_never_imports_inspect(tmp_path: Path, name: str) -> None:
    text = KUBERNETES if name == "deploy.yaml" else (REPO / "examples" / "deploy.yaml").read_text()
    (tmp_path / name).write_text(text)
    code, modules = imported(tmp_path, "check", "--format", "concise", "--gpu", "L4", name)
    assert code == 1
    assert modules.isdisjoint({"inspect", "dis", "ast", "tokenize"})


@pytest.mark.parametrize("name", ["deploy.yaml", "plan.yaml"])
def test_a_check_of_one_file_starts_no_thread_machinery_or_pkgutil(
    tmp_path: Path, name: str
) -> None:
    # The catalog's data is read through its package's loader, and the Hub budget's lock is a
    # plain lock: a check that asks the Hub nothing imports neither threading nor pkgutil.
    text = KUBERNETES if name == "deploy.yaml" else (REPO / "examples" / "deploy.yaml").read_text()
    (tmp_path / name).write_text(text)
    code, modules = imported(tmp_path, "check", "--format", "concise", "--gpu", "L4", name)
    assert code == 1
    assert "kvlint.model.catalog" in modules  # the model was resolved from the catalog
    assert modules.isdisjoint({"threading", "pkgutil", "tempfile", "zipfile"})


def test_an_undocumented_dataclass_still_gets_its_signature_as_doc(tmp_path: Path) -> None:
    # dataclasses' `inspect` is deferred, not gone: a plugin's record without a docstring
    # loads it and reads its signature as before.
    probe = (
        "import kvlint, dataclasses\n"
        "@dataclasses.dataclass\n"
        "class Point:\n"
        "    x: int\n"
        "    y: str = ''\n"
        "print(Point.__doc__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "Point(x: int, y: str = '')"


def _run(tmp_path: Path, probe: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_a_check_never_compiles_pyyamls_printable_character_pattern(tmp_path: Path) -> None:
    (tmp_path / "deploy.yaml").write_text(KUBERNETES)
    probe = (
        "import re, sys\n"
        "from kvlint.main import main\n"
        "main(['check', '--format', 'concise', '--gpu', 'L4', 'deploy.yaml'])\n"
        "from yaml.reader import Reader\n"
        "print(isinstance(Reader.NON_PRINTABLE, re.Pattern), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and "KV" in done.stdout
    assert done.stderr.strip().splitlines()[-1] == "False"


def test_the_deferred_pattern_is_pyyamls_and_still_refuses_what_it_refused(
    tmp_path: Path,
) -> None:
    # Without kvlint, PyYAML compiles exactly the text kvlint defers (else it is not deferred).
    probe = (
        "from yaml.reader import Reader\n"
        "from kvlint.source.pyyaml import NON_PRINTABLE\n"
        "print(Reader.NON_PRINTABLE.pattern == NON_PRINTABLE)\n"
    )
    assert _run(tmp_path, probe) == "True"
    # Deferred, the pure-Python reader refuses a control character as before, and the
    # compiled pattern takes the stand-in's place.
    probe = (
        "import re\n"
        "from kvlint.source.pyyaml import import_yaml\n"
        "yaml = import_yaml()\n"
        "print(isinstance(yaml.reader.Reader.NON_PRINTABLE, re.Pattern))\n"
        "try:\n"
        "    yaml.load('a: \\x07', Loader=yaml.SafeLoader)\n"
        "except yaml.reader.ReaderError as error:\n"
        "    print(error.character == 7)\n"
        "print(isinstance(yaml.reader.Reader.NON_PRINTABLE, re.Pattern))\n"
    )
    assert _run(tmp_path, probe).split() == ["False", "True", "True"]


def test_a_check_compiles_few_of_kvlints_patterns(tmp_path: Path) -> None:
    # Every module-level pattern of kvlint is compiled at its first use: a vLLM manifest never
    # needs the images of the servers kvlint cannot read, nor the suppression annotations.
    (tmp_path / "deploy.yaml").write_text(KUBERNETES)
    probe = (
        "import sys\n"
        "from kvlint.main import main\n"
        "main(['check', '--format', 'concise', '--gpu', 'L4', 'deploy.yaml'])\n"
        "from kvlint.lazy_re import _Deferred\n"
        "from kvlint.deploy import serving\n"
        "from kvlint import suppress\n"
        "waiting = [p for p, _ in serving._IMAGES] + [suppress._ANNOTATION_ENTRY]\n"
        "print(all(type(p) is _Deferred and 'match' not in vars(p) for p in waiting),"
        " file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and "KV" in done.stdout
    assert done.stderr.strip().splitlines()[-1] == "True"


@pytest.mark.parametrize(
    ("name", "text", "carrier"),
    [("deploy.yaml", KUBERNETES, "kubernetes"), ("serve.yaml", VLLM_CONFIG, "engine_yaml")],
)
def test_only_the_carrier_a_document_could_be_is_imported(
    tmp_path: Path, name: str, text: str, carrier: str
) -> None:
    (tmp_path / name).write_text(text)
    code, modules = imported(tmp_path, "check", "--format", "concise", "--gpu", "L4", name)
    assert code == 1
    prefix = "kvlint.deploy.carriers."
    loaded = {m.removeprefix(prefix) for m in modules if m.startswith(prefix)}
    assert carrier in loaded
    others = {"plan", "kserve", "kubeai", "dynamo", "ray", "llmaz", "custom", "compose", "rayllm"}
    others |= {"kubernetes", "engine_yaml"} - {carrier}
    assert loaded.isdisjoint(others), sorted(loaded & others)
