"""mlx_lm.server as files start it: the programs and modules, its flags, what it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.main import main


def check(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str], name: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    main(["check", str(path), "--offline", "--format", "concise", "--gpu", "M3-Ultra-96GB"])
    return capsys.readouterr().out.replace(str(tmp_path), "<tmp>")


COMPOSE = """services:
  gemma:
    image: python:3.12
    command: {command}
"""


@pytest.mark.parametrize(
    "command",
    [
        "mlx_lm.server --model mlx-community/gemma-4-31b-it-8bit --decode-concurrency 64",
        "python -m mlx_lm server --model mlx-community/gemma-4-31b-it-8bit --decode-concurrency 64",
        "python -m mlx_lm.server --model mlx-community/gemma-4-31b-it-8bit --decode-concurrency 64",
        "mlx_lm server --model mlx-community/gemma-4-31b-it-8bit --decode-concurrency=64",
    ],
)
def test_the_server_is_found_and_its_cap_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    out = check(tmp_path, COMPOSE.format(command=command), capsys, "compose.yaml")
    # 64 sessions of the model's 262,144 tokens (20.78 GiB each) in an M3 Ultra's 72 GiB
    # working set beside 30.37 GiB of weights: one fits, and the server does not check.
    assert "KV301 [warning] [~] `decode_concurrency` 64 needs 1.3 TiB of KV cache" in out, out
    assert "enough for 1" in out


def test_generation_flags_on_the_server_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    command = (
        "mlx_lm.server --model mlx-community/gemma-4-31b-it-8bit --kv-bits 8 --max-kv-size 4096"
    )
    out = check(tmp_path, COMPOSE.format(command=command), capsys, "compose.yaml")
    assert (
        "KV501 [error] `--kv-bits` is a flag of mlx_lm.generate, not of mlx_lm.server: the "
        "server exits with 'unrecognized arguments'" in out
    ), out
    assert "`--max-kv-size` is a flag of mlx_lm.generate" in out


def test_prompt_cache_bytes_is_read_as_mlx_lm_parses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    command = "mlx_lm.server --model mlx-community/gemma-4-31b-it-8bit --prompt-cache-bytes 12X"
    out = check(tmp_path, COMPOSE.format(command=command), capsys, "compose.yaml")
    assert "KV502" in out and "expected a size such as 12GB or 500M, got `12X`" in out, out
