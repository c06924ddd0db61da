"""The adversarial corpus through the real CLI: each input ends in findings or one clear exit-2
message naming the file and position, never a traceback, a hang (60 s guard) or more than 1 GiB.

Small inputs are files under ``corpus/``; big or special ones (a 50 MiB file, 10,000-level
nesting, a quadratic blowup, a symlink loop, a FIFO, an unreadable file) are made here.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hostile.runner import FINDING_RE
from tests.hostile.runner import Outcome
from tests.hostile.runner import run_kvlint
from tests.hostile.runner import run_python

CORPUS = Path(__file__).parent / "corpus"
ARGS = ("check", "--offline", "--no-config", "--format", "concise", "--color", "never")
REMOTE_CODE = "open('PWNED-remote-code', 'w').close()\n"

# Every case: (argument, exit code, the output lines as prefixes, in order). A prefix holds the
# position and code and enough of the message to say the answer is the right one.
NEWLINE_NAME = "x\n::error::injected.yaml"

CASES: dict[str, tuple[int, list[str]]] = {
    "billion-laughs.yaml": (
        2,
        ["billion-laughs.yaml:2:57: KV901 [error] aliases expand too far (a YAML 'billion laughs'"],
    ),
    "quadratic-blowup.yaml": (
        2,
        ["quadratic-blowup.yaml:3:19: KV901 [error] aliases expand too far"],
    ),
    "nesting-10000-flow-sequences.yaml": (
        2,
        ["nesting-10000-flow-sequences.yaml:1:1: KV901 [error] YAML nesting is too deep to read"],
    ),
    "nesting-10000-flow-mappings.yaml": (
        2,
        ["nesting-10000-flow-mappings.yaml:1:1: KV901 [error] YAML nesting is too deep to read"],
    ),
    "nesting-10000-block-sequences.yaml": (
        2,
        ["nesting-10000-block-sequences.yaml:1:1: KV901 [error] YAML nesting is too deep to read"],
    ),
    "nesting-1000-block-mappings.yaml": (
        2,
        ["nesting-1000-block-mappings.yaml:1:1: KV901 [error] YAML nesting is too deep to read"],
    ),
    "big-50mib.yaml": (
        2,
        [
            "big-50mib.yaml:1:1: KV901 [error] 50 MiB is too large for a deployment file "
            "(the limit is 16 MiB): not read"
        ],
    ),
    "keys-one-million.yaml": (
        2,
        [
            "keys-one-million.yaml:1:1: KV901 [error] about 1,000,001 keys and items, more than "
            "any "
            "deployment file holds (the limit is 100,000): not read"
        ],
    ),
    "parallel-sizes.yaml": (
        1,
        [
            "parallel-sizes.yaml:2:1: KV907 [info] ",
            "parallel-sizes.yaml:3:25: KV502 [error] `pipeline-parallel-size` is "
            "`63309765128058904`: "
            "above any deployment (1,024)",
            "parallel-sizes.yaml:4:23: KV502 [error] `tensor-parallel-size` is `1000000`: above "
            "any "
            "deployment (16,384)",
            "parallel-sizes.yaml:5:21: KV502 [error] `data-parallel-size` is `16385`: above any "
            "deployment (16,384)",
        ],
    ),
    "binary.yaml": (
        2,
        ["binary.yaml:1:1: KV901 [error] binary file (NUL bytes): not a YAML or JSON"],
    ),
    "invalid-utf8.yaml": (
        2,
        ["invalid-utf8.yaml:2:23: KV901 [error] invalid UTF-8 (byte 0xe9): save the file as UTF-8"],
    ),
    "utf16-bom.yaml": (
        2,
        ["utf16-bom.yaml:1:1: KV901 [error] UTF-16 text (byte-order mark): save the file as UTF-8"],
    ),
    # An empty YAML stream and a stream of comments hold no document: nothing to check.
    "empty.yaml": (0, []),
    "only-comments.yaml": (0, []),
    "duplicate-keys.yaml": (
        2,
        [
            "duplicate-keys.yaml:1:1: KV907 [info] the files do not give the GPU type",
            "duplicate-keys.yaml:4:1: KV901 [error] duplicate key `max-model-len` (first at line "
            "2)",
        ],
    ),
    "tab-indent.yaml": (
        2,
        ["tab-indent.yaml:3:1: KV901 [error] a TAB character where YAML allows only spaces"],
    ),
    "nan-infinity.yaml": (
        1,
        [
            "nan-infinity.yaml:1:1: KV907 [info] ",
            "nan-infinity.yaml:2:16: KV502 [error] `max-model-len` expects an integer such as "
            "8192, "
            "32k or 128K (or -1 / auto), got `nan`",
            "nan-infinity.yaml:3:15: KV502 [error] `max-num-seqs` expects an integer, got `inf`",
            "nan-infinity.yaml:4:25: KV502 [error] `gpu-memory-utilization` expects a fraction "
            "such as "
            "0.9, got `-inf`",
            "nan-infinity.yaml:5:23: KV502 [error] `tensor-parallel-size` expects an integer, got "
            "`nan`",
        ],
    ),
    "negative-zero-sizes.yaml": (
        1,
        [
            "negative-zero-sizes.yaml:1:1: KV907 [info] ",
            "negative-zero-sizes.yaml:2:16: KV502 [error] `max-model-len` must be a positive "
            "integer, "
            "got `-4096`",
            "negative-zero-sizes.yaml:3:15: KV502 [error] `max-num-seqs` must be a positive "
            "integer, "
            "got `0`",
            "negative-zero-sizes.yaml:4:25: KV502 [error] `gpu-memory-utilization` must be a "
            "fraction "
            "in (0, 1], got `0`",
            "negative-zero-sizes.yaml:5:23: KV502 [error] `tensor-parallel-size` must be a "
            "positive "
            "integer, got `-2`",
            "negative-zero-sizes.yaml:6:13: KV502 [error] `block-size` must be a positive integer, "
            "got `0`",
            "negative-zero-sizes.yaml:7:24: KV502 [error] `kv-cache-memory-bytes` must be a "
            "positive "
            "integer, got `-1`",
        ],
    ),
    "integers-400-digits.yaml": (
        1,
        [
            "integers-400-digits.yaml:1:1: KV907 [info] ",
            "integers-400-digits.yaml:2:16: KV502 [error] `max-model-len` is out of range: a "
            "number of "
            "400 characters",
            "integers-400-digits.yaml:3:15: KV502 [error] `max-num-seqs` is out of range: a number "
            "of "
            "401 characters",
            "integers-400-digits.yaml:4:24: KV502 [error] `kv-cache-memory-bytes` is out of range: "
            "a "
            "number of 400 characters",
            "integers-400-digits.yaml:5:25: KV502 [error] `gpu-memory-utilization` expects a "
            "fraction "
            "such as 0.9, got `9999",
            # --cpu-offload-gb is read as a number (the offload counts in args and YAML alike).
            "integers-400-digits.yaml:6:17: KV502 [error] `cpu-offload-gb` expects a number, "
            "got `9999",
        ],
    ),
    "max-model-len-1e309.yaml": (
        1,
        [
            "max-model-len-1e309.yaml:1:1: KV907 [info] ",
            "max-model-len-1e309.yaml:2:16: KV502 [error] `max_model_len` expects an integer such "
            "as "
            "8192, 32k or 128K (or -1 / auto), got `1e309`",
        ],
    ),
    "plan-extreme-claims.yaml": (
        2,
        [
            "plan-extreme-claims.yaml:6:7: KV502 [error] `gpus` must be a GPU count from 0 to "
            "4,096, "
            "got `a number of 400 characters`",
            "plan-extreme-claims.yaml:8:18: KV502 [error] `max-model-len` expects an integer",
            "plan-extreme-claims.yaml:10:16: KV502 [error] `claims.concurrency`: out of range: a "
            "number "
            "of 400 digits",
            "plan-extreme-claims.yaml:11:12: KV502 [error] `claims.context`: expected an integer",
            "plan-extreme-claims.yaml:12:17: KV502 [error] `claims.kv_per_token`: expected a "
            "non-negative finite size",
            "plan-extreme-claims.yaml:13:20: KV502 [error] `claims.kv_per_sequence`: expected a "
            "non-negative finite size, got 'inf'",
            "plan-extreme-claims.yaml:14:19: KV904 [error] `claims.kv_pool_tokens`: expected a "
            "token count",
        ],
    ),
    # context 0 once divided by zero in KV301; the schema's KV904 now says it, once.
    "plan-zero-claims.yaml": (
        2,
        [
            "plan-zero-claims.yaml:5:7: KV904 [error] `gpus`: 0 is less than the minimum of 1",
            "plan-zero-claims.yaml:7:16: KV904 [error] `claims.concurrency`: 0 is less than the "
            "minimum",
            "plan-zero-claims.yaml:8:12: KV904 [error] `claims.context`: expected a token count",
        ],
    ),
    # Escapes in YAML strings decode to a newline, ESC and BEL: printed escaped, on one line.
    "control-characters.yaml": (
        1,
        [
            "control-characters.yaml:1:1: KV907 [info] ",
            "control-characters.yaml:2:15: KV502 [error] `max-num-seqs` expects an integer, got "
            "`1\\n::error file=x::injected`",
            "control-characters.yaml:3:16: KV502 [error] `max-model-len` expects an integer such "
            "as 8192, "
            "32k or 128K (or -1 / auto), got `4096\\x1b]0;title\\x07\\x1b[2J`",
        ],
    ),
    # A file name holding a newline and a GitHub workflow command.
    NEWLINE_NAME: (0, ["x\\n::error::injected.yaml:1:1: KV907 [info] "]),
    "python-object-tags.yaml": (
        2,
        [
            "python-object-tags.yaml:2:1: KV907 [info] ",
            "python-object-tags.yaml:2:8: KV901 [error] tag `!!python/object/apply:os.system` "
            "would "
            "build a Python object: refused",
            "python-object-tags.yaml:2:8: KV902 [error] 'touch PWNED-os-system' is not a model",
            "python-object-tags.yaml:3:16: KV502 [error] `max-model-len` expects an integer",
            "python-object-tags.yaml:3:16: KV901 [error] tag "
            "`!!python/object/new:subprocess.check_output` would build a Python object",
            "python-object-tags.yaml:4:15: KV502 [error] `max-num-seqs` expects an integer",
            "python-object-tags.yaml:4:15: KV901 [error] tag `!!python/name:os.system` would build",
            "python-object-tags.yaml:5:25: KV502 [error] `gpu-memory-utilization` expects a "
            "fraction",
            "python-object-tags.yaml:5:25: KV901 [error] tag `!!python/object/apply:builtins.eval` "
            "would build a Python object: refused",
        ],
    ),
    "not-json.json": (
        2,
        ["not-json.json:1:69: KV901 [error] invalid JSON: while parsing a flow node"],
    ),
    "model-etc-passwd.yaml": (
        1,  # a model kvlint cannot find is a KV902 warning; the run goes on
        [
            "model-etc-passwd.yaml:1:1: KV907 [info] ",
            "model-etc-passwd.yaml:1:8: KV902 [warning] model path '../../etc/passwd' does not "
            "exist (relative to .): point at a config.json or a directory holding one",
        ],
    ),
    "model-etc-passwd-absolute.yaml": (
        2,
        [
            "model-etc-passwd-absolute.yaml:1:1: KV907 [info] ",
            "model-etc-passwd-absolute.yaml:1:8: KV902 [error] '/etc/passwd' is not a model: "
            "kvlint "
            "reads a config.json, a model directory holding one, or a .gguf file",
        ],
    ),
    "model-kv-heads-zero.yaml": (
        2,
        [
            "model-kv-heads-zero.yaml:1:1: KV907 [info] ",
            "model-kv-heads-zero.yaml:1:8: KV902 [error] models/kv-heads-zero/config.json:10:3: "
            "`num_key_value_heads` is 0: a model needs at least one KV head",
        ],
    ),
    "model-kv-heads-over.yaml": (
        2,
        [
            "model-kv-heads-over.yaml:1:1: KV907 [info] ",
            "model-kv-heads-over.yaml:1:8: KV902 [error] models/kv-heads-over/config.json:10:3: "
            "`num_key_value_heads` 64 is greater than the attention head count 32",
        ],
    ),
    "model-config-not-json.yaml": (
        2,
        [
            "model-config-not-json.yaml:1:1: KV907 [info] ",
            "model-config-not-json.yaml:1:8: KV902 [error] models/not-json/config.json:4:3: the "
            "model "
            "config is not valid JSON: Expecting ',' delimiter",
        ],
    ),
    "model-layers-1e308.yaml": (
        2,
        [
            "model-layers-1e308.yaml:1:1: KV907 [info] ",
            "model-layers-1e308.yaml:1:8: KV902 [error] models/layers-1e308/config.json:8:3: "
            "`num_hidden_layers` is out of range (309 digits)",
        ],
    ),
    "model-layers-million.yaml": (
        2,
        [
            "model-layers-million.yaml:1:1: KV907 [info] ",
            "model-layers-million.yaml:1:8: KV902 [error] models/layers-million/config.json:1:",
        ],
    ),
    "model-digits-5000.yaml": (
        2,
        [
            "model-digits-5000.yaml:1:1: KV907 [info] ",
            "model-digits-5000.yaml:1:8: KV902 [error] models/digits-5000/config.json: the model "
            "config "
            "holds a number too long to read",
        ],
    ),
    # The model directory ships code (auto_map): it is never imported; the shape is read as data.
    # An architecture no family module reads is refused (never sized as a generic decoder).
    "trust-remote-code.yaml": (
        1,
        [
            "trust-remote-code.yaml:2:1: KV907 [info] ",
            "trust-remote-code.yaml:2:8: KV902 [warning] models/remote-code/config.json:5:3: "
            "architecture kvlint does not size: model_type 'evil' (no family module reads it)",
        ],
    ),
    "fifo.yaml": (
        2,
        ["fifo.yaml:1:1: KV901 [error] not a regular file (a pipe, socket or device)"],
    ),
    "/dev/zero": (
        2,
        ["/dev/zero:1:1: KV901 [error] not a regular file (a pipe, socket or device)"],
    ),
    "loop-a.yaml": (2, ["kvlint: loop-a.yaml: a symlink that loops or points nowhere"]),
    "loops": (
        2,
        [
            "loops/a.yaml:1:1: KV901 [error] cannot read: Too many levels of symbolic links",
            "loops/b.yaml:1:1: KV901 [error] cannot read: Too many levels of symbolic links",
        ],
    ),
    # A directory named like a file is a folder: walked, its files checked.
    "dir-named-like.yaml": (0, ["dir-named-like.yaml/inner.yaml:1:1: KV907 [info] "]),
    "missing.yaml": (2, ["kvlint: missing.yaml: no such file or directory"]),
}

UNREADABLE = "unreadable.yaml"
UNKNOWN_FLAGS = 20_000
MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: hostile}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: [ARGS]
"""


def _nest(n: int, open_: str, close: str, leaf: str = "x") -> str:
    return "model: " + open_ * n + leaf + close * n + "\n"


def build(root: Path) -> None:
    """Copy the committed corpus and make the inputs too big or too odd to commit."""
    shutil.copytree(CORPUS, root, dirs_exist_ok=True)
    (root / "quadratic-blowup.yaml").write_text(
        "model: meta-llama/Llama-3.1-8B-Instruct\nmax-model-len: 4096\n"
        + 'allowed-origins: [&a "'
        + "x" * 100_000
        + '"'
        + ", *a" * 10_000
        + "]\n"
    )
    (root / "nesting-10000-flow-sequences.yaml").write_text(_nest(10_000, "[", "]"))
    (root / "nesting-10000-flow-mappings.yaml").write_text(_nest(10_000, "{a: ", "}"))
    (root / "nesting-10000-block-sequences.yaml").write_text("- " * 10_000 + "x\n")
    (root / "nesting-1000-block-mappings.yaml").write_text(
        "".join("  " * i + f"k{i}:\n" for i in range(1000)) + "  " * 1000 + "leaf\n"
    )
    with open(root / "big-50mib.yaml", "wb") as handle:
        handle.write(b"model: meta-llama/Llama-3.1-8B-Instruct\n")
        line = b"# " + b"x" * 61 + b"\n"
        handle.write(line * ((50 * 2**20 - handle.tell()) // len(line)))
        handle.write(b"#" * (50 * 2**20 - handle.tell() - 1) + b"\n")
    with open(root / "keys-one-million.yaml", "w") as handle:  # 14 MiB: under the size limit
        handle.write("model: meta-llama/Llama-3.1-8B-Instruct\n")
        handle.writelines(f"k{i}: {i}\n" for i in range(1_000_000))
    flags = ", ".join(f'"--max-num-seqz{i}"' for i in range(UNKNOWN_FLAGS))
    (root / "unknown-flags.yaml").write_text(
        MANIFEST.replace("ARGS", f'"--model", "meta-llama/Llama-3.1-8B-Instruct", {flags}')
    )
    (root / NEWLINE_NAME).write_text("model: meta-llama/Llama-3.1-8B-Instruct\n")
    passwd = "model: /etc/passwd\nmax-model-len: 4096\n"
    (root / "model-etc-passwd-absolute.yaml").write_text(passwd)
    config = json.loads((CORPUS / "models/kv-heads-zero/config.json").read_text())
    _model(root, "layers-million", {**config, "num_key_value_heads": 8, "num_hidden_layers": 10**6})
    text = json.dumps({**config, "num_key_value_heads": 8}).replace(
        '"vocab_size": 128256', '"vocab_size": ' + "9" * 5000
    )
    _model(root, "digits-5000", None, text)
    for name in ("layers-million", "digits-5000"):
        (root / f"model-{name}.yaml").write_text(f"model: ./models/{name}\nmax-model-len: 4096\n")
    for module in ("configuration_evil.py", "modeling_evil.py", "__init__.py"):
        (root / "models/remote-code" / module).write_text(REMOTE_CODE)
    os.mkfifo(root / "fifo.yaml")
    os.symlink("loop-b.yaml", root / "loop-a.yaml")
    os.symlink("loop-a.yaml", root / "loop-b.yaml")
    (root / "loops").mkdir()
    os.symlink("b.yaml", root / "loops/a.yaml")
    os.symlink("a.yaml", root / "loops/b.yaml")
    (root / "dir-named-like.yaml").mkdir()
    (root / "dir-named-like.yaml/inner.yaml").write_text(
        "model: meta-llama/Llama-3.1-8B-Instruct\nmax-model-len: 4096\n"
    )
    unreadable = root / UNREADABLE
    unreadable.write_text("model: meta-llama/Llama-3.1-8B-Instruct\nmax-model-len: 4096\n")
    unreadable.chmod(0)


def _model(root: Path, name: str, config: object, text: str | None = None) -> None:
    folder = root / "models" / name
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(text if text is not None else json.dumps(config))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("hostile")
    build(root)
    yield root
    (root / UNREADABLE).chmod(stat.S_IRUSR | stat.S_IWUSR)


def assert_well_behaved(outcome: Outcome, *, concise: bool = True) -> None:
    """What every input must give: no traceback, no internal error, exit 0/1/2; with the
    concise format, an exit 2 comes with a line naming the file (and position)."""
    assert "Traceback" not in outcome.text, outcome.text
    assert "internal error" not in outcome.text, outcome.text
    assert outcome.code in (0, 1, 2), outcome
    if outcome.code == 2 and concise:
        assert outcome.lines(), outcome
        named = [s for s in outcome.lines() if FINDING_RE.match(s) or s.startswith("kvlint: ")]
        assert named, outcome


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_input(corpus: Path, name: str) -> None:
    code, expected = CASES[name]
    outcome = run_kvlint([*ARGS, name], corpus)
    assert_well_behaved(outcome)
    lines = outcome.lines()
    assert len(lines) == len(expected), "\n".join(lines)
    for line, prefix in zip(lines, expected, strict=True):
        assert line.startswith(prefix), f"{line!r} does not start with {prefix!r}"
    assert outcome.code == code, outcome
    assert not list(corpus.glob("PWNED*")), "input ran code"


def test_unreadable_file(corpus: Path) -> None:
    """chmod 000: a user gets `permission denied`; root (CI containers) reads it anyway."""
    outcome = run_kvlint([*ARGS, UNREADABLE], corpus)
    assert_well_behaved(outcome)
    if os.access(corpus / UNREADABLE, os.R_OK):  # root ignores the mode bits
        assert outcome.lines() == [
            "unreadable.yaml:1:1: KV907 [info] the files do not give the GPU type: the checks that "
            "need "
            "it did not run (name the GPU with `--gpu` or `gpu` in the kvlint config)"
        ]
        assert outcome.code == 0
    else:
        assert outcome.lines() == ["unreadable.yaml:1:1: KV901 [error] permission denied"]
        assert outcome.code == 2


def test_twenty_thousand_unknown_flags(corpus: Path) -> None:
    """Each is reported (linear, not a difflib search apiece past the first 100)."""
    outcome = run_kvlint([*ARGS, "unknown-flags.yaml"], corpus)
    assert_well_behaved(outcome)
    assert outcome.code == 1
    lines = outcome.lines()
    assert len(lines) == UNKNOWN_FLAGS + 1  # and KV907: no GPU named
    assert lines[1] == (
        "unknown-flags.yaml:10:65: KV501 [error] unknown flag `--max-num-seqz0` for vllm; did you "
        "mean "
        "`--max-num-seqs`?"
    )
    assert lines[-1].endswith(": KV501 [error] unknown flag `--max-num-seqz19999` for vllm")


def test_whole_corpus_in_one_run(corpus: Path) -> None:
    """Every input at once, walked as a folder: one bad file never hides the others."""
    outcome = run_kvlint([*ARGS, "."], corpus)
    assert_well_behaved(outcome)
    assert outcome.code == 2
    files = {m.group("path") for m in map(FINDING_RE.match, outcome.lines()) if m}
    for name in ("billion-laughs.yaml", "fifo.yaml", "loops/a.yaml", "big-50mib.yaml"):
        assert name in files, outcome.text
    assert not list(corpus.glob("PWNED*"))


AUDIT = """
import os, sys
BANNED = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
          "os.startfile", "pty.spawn")
def hook(event, args):
    if event.startswith(BANNED):
        os.write(2, f"AUDIT {event} {args!r}\\n".encode())
        os._exit(99)
    if event == "import" and args[0] in ("configuration_evil", "modeling_evil"):
        os.write(2, f"AUDIT import {args[0]}\\n".encode())
        os._exit(99)
    if event == "open" and (
        (isinstance(args[1], str) and any(c in args[1] for c in "wax+"))
        or (args[1] is None and args[2] & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
    ):
        os.write(2, f"AUDIT write {args[0]!r}\\n".encode())
        os._exit(99)
sys.addaudithook(hook)
from kvlint.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_no_process_no_import_no_write_on_any_input(corpus: Path) -> None:
    """An audit hook in the child ends it (exit 99) if kvlint starts a process, imports the
    model's code or opens any file for writing while reading the whole corpus."""
    # --jobs 1: worker processes are kvlint's own, not something the input started.
    argv = ["-c", AUDIT, *ARGS, "--jobs", "1", "."]
    outcome = run_python(argv, corpus, {"PYTHONDONTWRITEBYTECODE": "1"})
    assert "AUDIT" not in outcome.err, outcome.err
    assert outcome.code == 2, outcome
