"""KV402: a context past the model's derived maximum."""

from __future__ import annotations

from kvlint_rules.context_beyond_max_positions import ContextBeyondMaxPositions

from kvlint.finding import Severity
from testing.builders import LLAMA_31_70B
from testing.builders import QWEN25_7B
from testing.builders import deployment
from testing.builders import model
from testing.builders import problems

Q7 = model(QWEN25_7B, "Qwen/Qwen2.5-7B-Instruct")


def test_vllm_refuses_without_the_env_var() -> None:
    [p] = problems(ContextBeyondMaxPositions, deployment(max_model_len=131072), Q7)
    assert p.severity is None  # the rule's error
    assert p.message == (
        "`max_model_len` 131072 is greater than the derived maximum 32768 "
        "(max_position_embeddings=32768): vLLM will refuse to start unless "
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"
    )
    assert p.fix is not None and p.fix.edits[0].replacement == "32768"


def test_env_var_makes_it_a_warning() -> None:
    dep = deployment(max_model_len=131072, allow_long_max_model_len=True)
    [p] = problems(ContextBeyondMaxPositions, dep, Q7)
    assert p.severity is Severity.WARNING
    assert p.message.endswith(
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN lets it start, but RoPE positions past 32768 give NaN"
    )


def test_yarn_on_vllm_011_extends() -> None:
    # 0.11: derived = original_max_position_embeddings x factor = 32768 x 4 = 131072.
    rope = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
    dep = deployment(max_model_len=131072, rope_scaling=rope, engine_version="v0.11.0")
    assert problems(ContextBeyondMaxPositions, dep, Q7) == []


def test_linear_scaling_multiplies() -> None:
    rope = {"rope_type": "linear", "factor": 2.0}
    [p] = problems(
        ContextBeyondMaxPositions, deployment(max_model_len=131072, rope_scaling=rope), Q7
    )
    assert (
        "derived maximum 65536 (max_position_embeddings=32768 x the `linear` RoPE factor 2)"
        in p.message
    )


def test_claimed_context_past_llama3_scaling() -> None:
    l70 = model(LLAMA_31_70B, "meta-llama/Llama-3.1-70B-Instruct")
    [p] = problems(ContextBeyondMaxPositions, deployment(claims={"context": 262144}), l70)
    assert p.message == (
        "`context` 262144 is beyond the 131072 positions Llama-3.1-70B-Instruct supports "
        "(max_position_embeddings=131072, which the `llama3` RoPE factor 8 leaves as is), and no "
        "RoPE scaling in the config or the settings extends it"
    )
