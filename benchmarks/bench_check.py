"""Time ``kvlint check`` against ``yamllint``: on every real file, and on generated repositories.

    python benchmarks/bench_check.py --real                # each real file: ratio to yamllint
    python benchmarks/bench_check.py --hook                # the pre-commit hook vs --jobs 1
    python benchmarks/bench_check.py                       # N = 1, 100, 1000, 10000
    python benchmarks/bench_check.py --sizes 1,1000 --repeat 5
    python benchmarks/bench_check.py --importtime          # also summarise -X importtime

``--real`` checks every file of ``../shared/fixtures/deployments-real/`` and ``examples/`` one at
a time, kvlint and yamllint in turn for ``--rounds`` rounds (CPU time of each run from
``wait4``), and reports each file's ratio of the medians, then min / median / max of the ratio
and how many files are above the targets (1.2x median, 1.4x any file), plan files apart (1.5x),
and a file of Kubernetes objects that run nothing (a Service, a Role, a ConfigMap: 1.0x).

For each N it writes a repository of N deployment files (Kubernetes manifests of several
documents, vLLM ``--config`` files, Helm values of the vLLM production stack, docker-compose
files; every model in kvlint's offline catalog), then runs, on the same files and in the same
run: ``python -c pass`` (the interpreter floor), ``yamllint`` with its default config, ``kvlint
check`` cold (an empty bytecode cache: the first run after an install that compiled nothing),
``kvlint check`` warm (bytecode cached, as after ``pip install``; the default ``--jobs``, the
number of cores) and, for N > 1, warm with ``--jobs 1`` (serial) and ``--jobs`` the number of cores.
Each row gives the median wall time, CPU time (user + system of the process and the children it
waited for, from ``wait4``), ``ru_maxrss`` (the largest single process) and the sampled peak RSS
of the whole process tree (what the pool costs together).

Bytecode goes to a private ``PYTHONPYCACHEPREFIX`` so nothing is written into the work tree and
``PYTHONDONTWRITEBYTECODE`` (set in some shells) cannot make every run a cold one. See
``benchmarks/README.md`` for the figures and how to read them.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

BIN = Path(sys.executable).parent
PAGE = os.sysconf("SC_PAGE_SIZE")

# Catalog models (resolved offline), with a size class that decides GPUs and tensor parallelism.
MODELS: tuple[tuple[str, int], ...] = (
    ("meta-llama/Meta-Llama-3.1-8B-Instruct", 1),
    ("meta-llama/Llama-3.2-3B-Instruct", 1),
    ("mistralai/Mistral-7B-Instruct-v0.3", 1),
    ("Qwen/Qwen2-7B-Instruct", 1),
    ("google/gemma-2-9b-it", 1),
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", 1),
    ("mistralai/Mistral-Nemo-Instruct-2407", 1),
    ("meta-llama/Llama-3.3-70B-Instruct", 4),
    ("hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4", 2),
    ("mistralai/Mixtral-8x7B-Instruct-v0.1", 2),
    ("google/gemma-3-27b-it", 2),
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", 2),
)
# (Kubernetes node-selector value, kvlint's GPU name, a Helm nodeSelectorTerms product name)
GPUS: tuple[tuple[str, str, str], ...] = (
    ("nvidia-h100-80gb", "H100-SXM-80GB", "NVIDIA-H100-80GB-HBM3"),
    ("nvidia-a100-80gb", "A100-SXM-80GB", "NVIDIA-A100-SXM4-80GB"),
    ("nvidia-l4", "L4-24GB", "NVIDIA-L4"),
)
VLLM_TAGS = ("v0.8.5", "v0.10.1", "v0.11.0")
LENGTHS = (4096, 8192, 16384, 32768, 65536, 131072)
SEQS = (16, 32, 64, 128, 256, 512)
UTILISATIONS = ("0.85", "0.9", "0.92", "0.95")


@dataclass(frozen=True)
class Serving:
    """One model deployment's settings, drawn at random; every file kind renders it its way."""

    name: str
    model: str
    gpus: int
    gpu: tuple[str, str, str]
    tag: str
    max_model_len: int
    max_num_seqs: int
    utilisation: str


def draw(rng: random.Random, index: int) -> Serving:
    model, size = rng.choice(MODELS)
    gpu = rng.choice(GPUS)
    gpus = size * (2 if gpu[1].startswith("L4") and size > 1 else 1)
    short = model.rsplit("/", 1)[1].lower().replace(".", "-")[:40].strip("-")
    return Serving(
        name=f"{short}-{index}",
        model=model,
        gpus=gpus,
        gpu=gpu,
        tag=rng.choice(VLLM_TAGS),
        max_model_len=rng.choice(LENGTHS),
        max_num_seqs=rng.choice(SEQS),
        utilisation=rng.choice(UTILISATIONS),
    )


def kubernetes(rng: random.Random, index: int) -> str:
    """A Deployment (args list or an ``sh -c`` script), its Service, ConfigMap and HPA."""
    s = draw(rng, index)
    flags = [
        f"--model={s.model}",
        f"--max-model-len={s.max_model_len}",
        f"--max-num-seqs={s.max_num_seqs}",
        f"--gpu-memory-utilization={s.utilisation}",
    ]
    if s.gpus > 1:
        flags.append(f"--tensor-parallel-size={s.gpus}")
    if rng.random() < 0.5:
        args = "\n".join(f"            - {flag}" for flag in flags)
        command = "          args:\n" + args
    else:
        script = " ".join(flag.replace("=", " ") for flag in flags)
        command = (
            '          command: ["/bin/sh", "-c"]\n'
            "          args:\n"
            "            - >-\n"
            f"              vllm serve {script.replace('--model ', '', 1)}\n"
            "              --port 8000"
        )
    return f"""# {s.name}: {s.model} on {s.gpus} x {s.gpu[1]}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {s.name}
  namespace: inference
  labels:
    app.kubernetes.io/name: {s.name}
    app.kubernetes.io/part-of: llm-serving
spec:
  replicas: {rng.randint(1, 4)}
  selector:
    matchLabels:
      app.kubernetes.io/name: {s.name}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: {s.name}
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: {s.gpu[0]}
      containers:
        - name: vllm
          image: vllm/vllm-openai:{s.tag}
{command}
          env:
            - name: HF_HOME
              value: /models
            - name: HUGGING_FACE_HUB_TOKEN
              valueFrom:
                secretKeyRef:
                  name: hf-token
                  key: token
          ports:
            - containerPort: 8000
              name: http
          readinessProbe:
            httpGet:
              path: /health
              port: http
            periodSeconds: 10
          resources:
            requests:
              cpu: "8"
              memory: 64Gi
            limits:
              nvidia.com/gpu: {s.gpus}
          volumeMounts:
            - name: models
              mountPath: /models
            - name: shm
              mountPath: /dev/shm
      volumes:
        - name: models
          persistentVolumeClaim:
            claimName: models
        - name: shm
          emptyDir:
            medium: Memory
            sizeLimit: 16Gi
---
apiVersion: v1
kind: Service
metadata:
  name: {s.name}
  namespace: inference
spec:
  selector:
    app.kubernetes.io/name: {s.name}
  ports:
    - name: http
      port: 80
      targetPort: http
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {s.name}-router
  namespace: inference
data:
  route: /v1/{s.name}
  timeout: "600"
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {s.name}
  namespace: inference
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {s.name}
  minReplicas: 1
  maxReplicas: 8
  metrics:
    - type: Pods
      pods:
        metric:
          name: vllm_num_requests_waiting
        target:
          type: AverageValue
          averageValue: "10"
"""


def vllm_config(rng: random.Random, index: int) -> str:
    """A ``vllm serve --config`` file; its GPU comes from the repository's ``.kvlint.yaml``."""
    s = draw(rng, index)
    lines = [
        f"# vllm serve --config {s.name}.yaml",
        f"model: {s.model}",
        f"max-model-len: {s.max_model_len}",
        f"max-num-seqs: {s.max_num_seqs}",
        f"gpu-memory-utilization: {s.utilisation}",
        "host: 0.0.0.0",
        "port: 8000",
        f"served-model-name: {s.name}",
        "enable-prefix-caching: true",
    ]
    if s.gpus > 1:
        lines.append(f"tensor-parallel-size: {s.gpus}")
    if rng.random() < 0.3:
        lines.append("kv-cache-dtype: fp8")
    return "\n".join(lines) + "\n"


def helm_values(rng: random.Random, index: int) -> str:
    """vLLM production-stack values with two model entries."""
    entries = []
    for part in range(2):
        s = draw(rng, index * 2 + part)
        entries.append(f"""    - name: "{s.name}"
      repository: "vllm/vllm-openai"
      tag: "{s.tag}"
      modelURL: "{s.model}"
      replicaCount: {rng.randint(1, 3)}
      requestCPU: 8
      requestMemory: "64Gi"
      requestGPU: {s.gpus}
      nodeSelectorTerms:
        - matchExpressions:
            - key: nvidia.com/gpu.product
              operator: In
              values:
                - {s.gpu[2]}
      vllmConfig:
        maxModelLen: {s.max_model_len}
        gpuMemoryUtilization: {s.utilisation}
        extraArgs: ["--max-num-seqs", "{s.max_num_seqs}", "--disable-log-requests"]
""")
    return (
        "# helm install vllm vllm/vllm-stack -f values.yaml\n"
        "servingEngineSpec:\n"
        '  runtimeClassName: ""\n'
        "  modelSpec:\n" + "".join(entries) + "routerSpec:\n"
        "  replicaCount: 1\n"
        "  routingLogic: roundrobin\n"
    )


def compose(rng: random.Random, index: int) -> str:
    """docker-compose with a vLLM service, a web UI and a cache."""
    s = draw(rng, index)
    return f"""services:
  vllm:
    image: vllm/vllm-openai:{s.tag}
    command: >
      --model {s.model}
      --max-model-len {s.max_model_len}
      --max-num-seqs {s.max_num_seqs}
      --gpu-memory-utilization {s.utilisation}
    ports: ["8000:8000"]
    volumes: ["~/.cache/huggingface:/root/.cache/huggingface"]
    ipc: host
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: {s.gpus}
              capabilities: [gpu]
  webui:
    image: ghcr.io/open-webui/open-webui:main
    ports: ["3000:8080"]
    environment:
      OPENAI_API_BASE_URL: http://vllm:8000/v1
    depends_on: [vllm]
  redis:
    image: redis:7
"""


KINDS: tuple[tuple[str, Callable[[random.Random, int], str]], ...] = (
    ("k8s/{team}/{index:05d}-deployment.yaml", kubernetes),
    ("k8s/{team}/{index:05d}-deployment.yaml", kubernetes),
    ("vllm/{team}/{index:05d}.yaml", vllm_config),
    ("charts/{team}/{index:05d}-values.yaml", helm_values),
    ("compose/{team}/{index:05d}/docker-compose.yml", compose),
)


def generate(root: Path, count: int) -> None:
    """``count`` files under ``root``; file i is the same in every repository size."""
    root.mkdir(parents=True, exist_ok=True)
    (root / ".kvlint.yaml").write_text("# the team's default GPU\ngpu: L4-24GB\n")
    for index in range(count):
        rng = random.Random(index)
        pattern, render = KINDS[index % len(KINDS)]
        path = root / pattern.format(team=f"team-{index % 7}", index=index)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(rng, index), encoding="utf-8")


def first_file(repo: Path) -> str:
    """The one file of a one-file repository, relative to it (a Kubernetes manifest)."""
    files = sorted(p for p in repo.rglob("*.y*ml") if not p.name.startswith("."))
    return str(files[0].relative_to(repo))


# ---------------------------------------------------------------------------------------------
# Measuring one process.


@dataclass(frozen=True)
class Sample:
    wall: float  # seconds
    cpu: float  # user + system seconds of the process and its waited-for children
    maxrss: int  # KiB, the largest single process (ru_maxrss)
    tree_rss: int  # KiB, the largest sampled sum of RSS over the process tree
    status: int
    tree_pss: int = 0  # KiB, the largest sampled sum of PSS (shared pages divided among sharers)


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(part) for part in text.split()]


def _tree_pss(pid: int) -> int:
    """The process tree's proportional set size: a page shared by a fork is counted once in
    all, not once per process as RSS counts it."""
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        try:
            text = Path(f"/proc/{current}/smaps_rollup").read_text()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith("Pss:"):
                total += int(line.split()[1])
                break
        stack.extend(_children(current))
    return total


def _tree_rss(pid: int) -> int:
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        try:
            resident = int(Path(f"/proc/{current}/statm").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue
        total += resident * PAGE // 1024
        stack.extend(_children(current))
    return total


def measure(command: Sequence[str], env: dict[str, str], cwd: Path, *, pss: bool = False) -> Sample:
    """One run of ``command``; with ``pss`` the tree's PSS is sampled too (reading smaps costs
    the sampler more, so only where memory is the figure)."""
    peak = [0]
    peak_pss = [0]
    done = threading.Event()
    start = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )

    def sample() -> None:
        while not done.wait(0.02):
            peak[0] = max(peak[0], _tree_rss(process.pid))
            if pss:
                peak_pss[0] = max(peak_pss[0], _tree_pss(process.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    assert process.stderr is not None
    errors = process.stderr.read()  # drained before waiting, so a chatty run cannot block
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    process.returncode = os.waitstatus_to_exitcode(status)
    code = process.returncode
    if code not in (0, 1, 2) or b"Traceback" in errors:
        sys.exit(f"{' '.join(command)} failed ({code}):\n{errors.decode(errors='replace')}")
    return Sample(
        wall=wall,
        cpu=usage.ru_utime + usage.ru_stime,
        maxrss=usage.ru_maxrss,
        tree_rss=max(peak[0], usage.ru_maxrss),
        status=code,
        tree_pss=peak_pss[0],
    )


@dataclass(frozen=True)
class Row:
    label: str
    samples: tuple[Sample, ...]

    def median(self, attribute: str) -> float:
        return float(statistics.median(float(getattr(s, attribute)) for s in self.samples))


def run(
    label: str,
    command: Sequence[str],
    env: dict[str, str],
    cwd: Path,
    repeat: int,
    *,
    warm_up: Sequence[str] | None = None,
    pss: bool = False,
) -> Row:
    """``repeat`` timed runs of ``command``, after one untimed run of ``warm_up`` (the same tool
    on one file: it fills the bytecode cache without paying for a whole large repository)."""
    if warm_up is not None:
        measure(warm_up, env, cwd)
    return Row(label, tuple(measure(command, env, cwd, pss=pss) for _ in range(repeat)))


def environment(pycache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    env["HF_HUB_OFFLINE"] = "1"
    env.pop("GITHUB_ACTIONS", None)
    return env


def bench_size(count: int, workdir: Path, repeat: int, jobs: str | None) -> list[Row]:
    repo = workdir / f"repo-{count}"
    if not repo.exists():
        generate(repo, count)
    target = "." if count > 1 else first_file(repo)
    pycache = workdir / "pycache"
    env = environment(pycache)
    python = str(BIN / "python")
    kvlint = [str(BIN / "kvlint"), "check", "--format", "concise", target]
    if jobs is not None:
        kvlint[2:2] = ["--jobs", jobs]
    one = first_file(repo)

    def on_one(command: list[str]) -> list[str]:
        return [*command[:-1], one]

    pass_command = [python, "-c", "pass"]
    yamllint = [str(BIN / "yamllint"), target]
    if count == 1:
        return _one_file(pass_command, yamllint, kvlint, env, repo, pycache, repeat)
    rows = [
        run("python -c pass", pass_command, env, repo, repeat, warm_up=pass_command),
        run("yamllint", yamllint, env, repo, repeat, warm_up=on_one(yamllint)),
    ]
    shutil.rmtree(pycache, ignore_errors=True)  # cold: nothing compiled yet, kvlint's or not
    rows.append(run("kvlint check (cold)", kvlint, env, repo, 1))
    rows.append(run("kvlint check (warm)", kvlint, env, repo, repeat, warm_up=on_one(kvlint)))
    if count > 1:
        cores = str(os.cpu_count() or 1)
        for jobs_value in dict.fromkeys(("1", cores)):
            explicit = [*kvlint[:2], "--jobs", jobs_value, *kvlint[2:]]
            label = f"kvlint check --jobs {jobs_value}"
            rows.append(run(label, explicit, env, repo, repeat, pss=True))
    return rows


def _one_file(
    pass_command: list[str],
    yamllint: list[str],
    kvlint: list[str],
    env: dict[str, str],
    repo: Path,
    pycache: Path,
    repeat: int,
) -> list[Row]:
    """One file takes a tenth of a second, and the ratio to yamllint is the target: the three
    commands run in turn, at least 21 times each, so a change in the machine's other work
    between two blocks of runs cannot move the ratio (a median of 3 runs moved it by 10%)."""
    shutil.rmtree(pycache, ignore_errors=True)  # cold: nothing compiled yet, kvlint's or not
    cold = run("kvlint check (cold)", kvlint, env, repo, 1)
    commands = {"python -c pass": pass_command, "yamllint": yamllint, "kvlint check (warm)": kvlint}
    for command in commands.values():
        measure(command, env, repo)  # warm: compiled, in the page cache
    samples: dict[str, list[Sample]] = {label: [] for label in commands}
    for _ in range(max(repeat, 21)):
        for label, command in commands.items():
            samples[label].append(measure(command, env, repo))
    rows = [Row(label, tuple(found)) for label, found in samples.items()]
    return [rows[0], rows[1], cold, rows[2]]


def report(count: int, rows: list[Row]) -> None:
    print(f"\n## N = {count:,} file{'s' if count != 1 else ''}\n")
    print("| command | wall s | CPU s | ru_maxrss MiB | tree RSS MiB | tree PSS MiB | exit |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        pss = row.median("tree_pss") / 1024
        print(
            f"| {row.label} | {row.median('wall'):.3f} | {row.median('cpu'):.3f} | "
            f"{row.median('maxrss') / 1024:.1f} | {row.median('tree_rss') / 1024:.1f} | "
            f"{f'{pss:.1f}' if pss else '-'} | {row.samples[-1].status} |"
        )
    by_label = {row.label: row for row in rows}
    yamllint = by_label["yamllint"]
    for label, row in by_label.items():
        if label.startswith("kvlint check") and "cold" not in label:
            print(
                f"\n{label} / yamllint: wall {row.median('wall') / yamllint.median('wall'):.2f}x,"
                f" CPU {row.median('cpu') / yamllint.median('cpu'):.2f}x"
            )
    sys.stdout.flush()


def importtime(workdir: Path) -> None:
    """The costliest imports of ``kvlint check`` on one file (cumulative, then self)."""
    repo = workdir / "repo-1"
    if not repo.exists():
        generate(repo, 1)
    target = first_file(repo)
    env = environment(workdir / "pycache")
    command = [str(BIN / "python"), "-X", "importtime", "-m", "kvlint", "check", target]
    subprocess.run(command, cwd=repo, env=env, capture_output=True, check=False)  # warm
    result = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, check=False)
    rows: list[tuple[int, int, str]] = []
    for line in result.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line or "imported package" in line:
            continue
        own_us, cumulative_us, module = line[len("import time:") :].split("|")
        rows.append((int(own_us), int(cumulative_us), module.rstrip()))
    total = sum(own for own, _, _ in rows)
    print(f"\n## python -X importtime -m kvlint check {target}\n")
    print(f"{len(rows)} modules, {total / 1000:.0f} ms of imports in all (importtime's own clock)")
    print("\nTop-level imports by cumulative time:\n")
    top = [r for r in rows if not r[2].startswith("  ")]
    for _, cumulative, name in sorted(top, key=lambda r: -r[1])[:12]:
        print(f"  {cumulative / 1000:7.1f} ms  {name.strip()}")
    heavy = ("pydantic", "jsonschema", "rich", "huggingface_hub", "yaml", "ruamel")
    loaded = {name.strip().split(".")[0] for _, _, name in rows}
    print("\nHeavy packages imported: " + (", ".join(h for h in heavy if h in loaded) or "none"))


# ---------------------------------------------------------------------------------------------
# Every real file, one at a time.

REPO = Path(__file__).resolve().parent.parent
REAL = REPO.parent / "shared" / "fixtures" / "deployments-real"
SUFFIXES = (".yaml", ".yml", ".json")
TARGET_MEDIAN, TARGET_ANY, TARGET_PLAN, TARGET_OTHER = 1.2, 1.4, 1.5, 1.0
# Kubernetes objects that run nothing: what a commit touching only a Service checks.
NO_WORKLOAD = """\
apiVersion: v1
kind: Service
metadata: {name: llama}
spec:
  selector: {app: llama}
  ports: [{name: http, port: 80, targetPort: 8000}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader}
rules: [{apiGroups: [""], resources: [pods], verbs: [get, list]}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: router}
data: {route: /v1/llama, timeout: "600"}
"""


def real_files() -> list[Path]:
    """Every YAML and JSON file of the real corpus and of ``examples/`` (no build output)."""
    found = [p for p in sorted(REAL.glob("*")) if p.suffix in SUFFIXES] if REAL.is_dir() else []
    for path in sorted((REPO / "examples").rglob("*")):
        if path.suffix in SUFFIXES and "build" not in path.parts and path.is_file():
            found.append(path)
    return found


def is_plan(path: Path) -> bool:
    return re.search(r"^kvlint:\s*plan/v1", path.read_text(errors="replace"), re.M) is not None


def _median_cpu(samples: list[Sample]) -> float:
    return float(statistics.median(s.cpu for s in samples))


def bench_real(workdir: Path, rounds: int) -> None:
    """kvlint and yamllint on each file in turn, ``rounds`` times; the ratio of median CPU."""
    env = environment(workdir / "pycache")
    other = workdir / "no-workload.yaml"
    other.write_text(NO_WORKLOAD)
    files = [*real_files(), other]
    kvlint = [str(BIN / "kvlint"), "check", "--format", "concise"]
    yamllint = [str(BIN / "yamllint")]
    for path in files[:1]:  # warm: compiled, in the page cache
        measure([*kvlint, str(path)], env, workdir)
        measure([*yamllint, str(path)], env, workdir)
    ratios: dict[Path, tuple[float, float, float]] = {}
    for path in files:
        ours: list[Sample] = []
        theirs: list[Sample] = []
        for _ in range(rounds):
            ours.append(measure([*kvlint, str(path)], env, workdir))
            theirs.append(measure([*yamllint, str(path)], env, workdir))
        mine, yours = _median_cpu(ours), _median_cpu(theirs)
        ratios[path] = (mine, yours, mine / yours)
    print(f"\n## Each real file, {rounds} rounds (median CPU s; ratio kvlint / yamllint)\n")
    print("| file | yamllint | kvlint | ratio |")
    print("| --- | ---: | ---: | ---: |")
    for path, (mine, yours, ratio) in ratios.items():
        name = path.name if path != other else "(a Service, a Role and a ConfigMap)"
        print(f"| {name[-70:]} | {yours:.3f} | {mine:.3f} | {ratio:.2f} |")
    plans = {p: r for p, r in ratios.items() if p != other and is_plan(p)}
    deployments = {p: r for p, r in ratios.items() if p != other and p not in plans}
    _summary("deployment files", [r[2] for r in deployments.values()], TARGET_ANY, TARGET_MEDIAN)
    _summary("plan files", [r[2] for r in plans.values()], TARGET_PLAN, TARGET_PLAN)
    _summary("no-workload file", [ratios[other][2]], TARGET_OTHER, TARGET_OTHER)


def _summary(label: str, ratios: list[float], most: float, median: float) -> None:
    if not ratios:
        print(f"\n{label}: none")
        return
    middle = statistics.median(ratios)
    above = sum(r > most for r in ratios)
    print(
        f"\n{label} ({len(ratios)}): ratio min {min(ratios):.2f}, median {middle:.2f} "
        f"(target <= {median}), max {max(ratios):.2f}; {above} above {most}"
    )


# ---------------------------------------------------------------------------------------------
# The pre-commit hook: pre-commit's own xargs runs `kvlint check` on chunks, a process per core.

HOOK = """\
import os, sys
from pre_commit.xargs import xargs
os.environ["PRE_COMMIT"] = "1"  # as pre-commit sets it for every hook
code, _ = xargs(tuple(sys.argv[1:2]) + ("check", "--format", "concise"), sys.argv[2:],
                target_concurrency=os.cpu_count() or 1)
sys.exit(min(code, 2))
"""


def bench_hook(workdir: Path, count: int, repeat: int) -> None:
    repo = workdir / f"repo-{count}"
    if not repo.exists():
        generate(repo, count)
    env = environment(workdir / "pycache")
    env.pop("PRE_COMMIT", None)
    files = [str(p.relative_to(repo)) for p in sorted(repo.rglob("*.y*ml"))]
    files = [f for f in files if not Path(f).name.startswith(".")]
    kvlint = str(BIN / "kvlint")
    hook = [str(BIN / "python"), "-c", HOOK, kvlint, *files]
    serial = [kvlint, "check", "--format", "concise", "--jobs", "1", *files]
    measure(serial[:6] + files[:1], env, repo)  # warm
    samples: dict[str, list[Sample]] = {"hook": [], "jobs 1": []}
    for _ in range(repeat):
        samples["hook"].append(measure(hook, env, repo, pss=True))
        samples["jobs 1"].append(measure(serial, env, repo, pss=True))
    rows = [Row(label, tuple(found)) for label, found in samples.items()]
    print(f"\n## The pre-commit hook (pre-commit's xargs, PRE_COMMIT=1) on {count:,} files\n")
    print("| command | wall s | CPU s | tree PSS MiB |")
    print("| --- | ---: | ---: | ---: |")
    for row in rows:
        print(
            f"| {row.label} | {row.median('wall'):.3f} | {row.median('cpu'):.3f} | "
            f"{row.median('tree_pss') / 1024:.1f} |"
        )
    print(f"\nhook / --jobs 1: wall {rows[0].median('wall') / rows[1].median('wall'):.2f}x")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,100,1000,10000", help="comma-separated file counts")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per command (median)")
    parser.add_argument("--jobs", help="pass --jobs to kvlint (default: kvlint's own default)")
    parser.add_argument("--workdir", type=Path, help="keep the repositories here (default: temp)")
    parser.add_argument("--importtime", action="store_true", help="summarise -X importtime")
    parser.add_argument("--generate-only", action="store_true", help="write the repositories")
    parser.add_argument("--real", action="store_true", help="each real file against yamllint")
    parser.add_argument("--rounds", type=int, default=11, help="rounds per real file (median)")
    parser.add_argument("--hook", action="store_true", help="the pre-commit hook vs --jobs 1")
    parser.add_argument("--hook-files", type=int, default=1000, help="files for --hook")
    args = parser.parse_args(argv)
    sizes = [int(part) for part in args.sizes.split(",") if part.strip()]
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="kvlint-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"# kvlint check vs yamllint ({os.cpu_count()} cores, {sys.version.split()[0]})")
    print(f"\nrepositories under {workdir}")
    try:
        if args.real or args.hook:
            if args.real:
                bench_real(workdir, args.rounds)
            if args.hook:
                bench_hook(workdir, args.hook_files, args.repeat)
            return 0
        for count in sizes:
            if args.generate_only:
                generate(workdir / f"repo-{count}", count)
                continue
            # Large repositories take minutes per run: one timed run is enough there.
            repeat = args.repeat if count <= 1000 else 1
            report(count, bench_size(count, workdir, repeat, args.jobs))
        if args.importtime:
            importtime(workdir)
    finally:
        if args.workdir is None and not args.generate_only:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
