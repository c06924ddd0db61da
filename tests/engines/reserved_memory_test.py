"""``reserved_memory``: memory other residents hold, taken off before the pool by every engine,
as each engine meets it (vLLM's start-up free-memory check, SGLang's and TGI's free memory,
llama.cpp's device memory, MLX's working set), and said in the notes or the error."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.engines import estimate
from kvlint.estimate import Refusal
from kvlint.main import main
from kvlint.units import GiB
from testing.builders import catalog_gpu
from testing.builders import dense
from testing.builders import deployment

H100 = catalog_gpu("H100-80GB")
SPEC = dense()  # the Llama 3.1 8B shape
HELD = 16 * GiB


def test_vllm_refuses_when_the_residents_leave_less_than_its_share() -> None:
    free = estimate(deployment("vllm", max_model_len=8192), SPEC, H100)
    held = estimate(deployment("vllm", max_model_len=8192, reserved_memory=HELD), SPEC, H100)
    assert free.fits is True
    assert held.fits is False and held.refusal is Refusal.FREE_MEMORY
    assert held.error is not None
    assert "(16.00 GiB held by other residents) on startup is less than desired" in held.error


def test_vllm_with_room_for_the_residents_keeps_its_budget() -> None:
    # 0.75 x 79.19 GiB leaves 19.8 GiB: 16 GiB of residents fit beside vLLM's share.
    plain = estimate(deployment("vllm", max_model_len=8192, memory_fraction=0.75), SPEC, H100)
    held = estimate(
        deployment("vllm", max_model_len=8192, memory_fraction=0.75, reserved_memory=HELD),
        SPEC,
        H100,
    )
    assert held.fits is True and held.available_kv_bytes == plain.available_kv_bytes
    assert any(n.startswith("reserved_memory 16.00 GiB held by other") for n in held.notes)


def test_vllm_before_0_9_charges_the_residents_in_its_profile() -> None:
    old = dict(max_model_len=8192, memory_fraction=0.75, engine_version="0.8.5")
    plain = estimate(deployment("vllm", **old), SPEC, H100)
    held = estimate(deployment("vllm", reserved_memory=HELD, **old), SPEC, H100)
    assert plain.available_kv_bytes is not None and held.available_kv_bytes is not None
    assert plain.available_kv_bytes - held.available_kv_bytes == HELD


@pytest.mark.parametrize("engine", ["sglang", "llamacpp", "ollama"])
def test_free_memory_engines_lose_exactly_what_is_held(engine: str) -> None:
    fields = {"max_model_len": 8192, "max_num_seqs": 1}
    plain = estimate(deployment(engine, **fields), SPEC, H100)
    held = estimate(deployment(engine, reserved_memory=HELD, **fields), SPEC, H100)
    assert plain.available_kv_bytes is not None and held.available_kv_bytes is not None
    lost = plain.available_kv_bytes - held.available_kv_bytes
    # SGLang's pool is a fraction of the free memory before the model loads.
    assert lost == HELD if engine != "sglang" else 0 < lost <= HELD
    assert any("reserved_memory 16.00 GiB held by other residents" in n for n in held.notes)


def test_tgi_takes_it_off_the_free_memory() -> None:
    plain = estimate(deployment("tgi"), SPEC, H100)
    held = estimate(deployment("tgi", reserved_memory=HELD), SPEC, H100)
    assert plain.available_kv_bytes is not None and held.available_kv_bytes is not None
    assert 0 < plain.available_kv_bytes - held.available_kv_bytes <= HELD


PLAN = """kvlint: plan/v1
engine: vllm
model: meta-llama/Llama-3.1-8B-Instruct
gpu: H100-80GB
{reserved}settings: {{max-model-len: 8192}}
"""


def _check(tmp_path: Path, capsys: pytest.CaptureFixture[str], reserved: str, *argv: str) -> str:
    path = tmp_path / "plan.kvlint.yaml"
    path.write_text(PLAN.format(reserved=reserved))
    main(["check", str(path), "--offline", "--format", "concise", *argv])
    return capsys.readouterr().out.replace(str(tmp_path), "<tmp>")


def test_a_plan_states_it_with_units(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _check(tmp_path, capsys, "reserved_memory: 16 GB\n")
    assert "KV303" in out and "(14.90 GiB held by other residents)" in out, out


def test_the_command_line_states_it_for_files_that_do_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "KV303" not in _check(tmp_path, capsys, "")
    out = _check(tmp_path, capsys, "", "--reserved-memory", "16GiB")
    assert "(16.00 GiB held by other residents)" in out, out
    # The plan's own value wins over the command line's.
    out = _check(tmp_path, capsys, "reserved_memory: 1 GB\n", "--reserved-memory", "16GiB")
    assert "KV303" not in out, out


def test_a_bad_size_is_one_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "plan.kvlint.yaml"
    path.write_text(PLAN.format(reserved=""))
    code = main(["check", str(path), "--offline", "--reserved-memory", "lots"])
    assert code == 2
    assert "--reserved-memory: expected a size such as '320 KiB'" in capsys.readouterr().err


def test_trtllm_takes_its_fraction_of_what_is_left() -> None:
    fields = {"max_model_len": 8192}
    plain = estimate(deployment("trtllm", **fields), SPEC, H100)
    held = estimate(deployment("trtllm", reserved_memory=HELD, **fields), SPEC, H100)
    assert plain.available_kv_bytes is not None and held.available_kv_bytes is not None
    # free_gpu_memory_fraction 0.9 of the free memory, which the residents lessen.
    assert abs(plain.available_kv_bytes - held.available_kv_bytes - 0.9 * HELD) <= 1
    assert any("reserved_memory 16.00 GiB held by other residents" in n for n in held.notes)
