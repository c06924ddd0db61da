"""The family registry: every registered model_type reads through a Family, the decoders'
types without importing another family module."""

from __future__ import annotations

import subprocess
import sys

from kvlint.model.families import family_for
from kvlint.model.families import model_types


def test_every_registered_model_type_has_a_family() -> None:
    for model_type in sorted(model_types()):
        family = family_for(model_type)
        assert family is not None and callable(getattr(family, "architecture", None)), model_type
    assert family_for("no-such-model-type") is None


def test_a_llama_model_imports_no_other_family_module() -> None:
    probe = (
        "import sys\n"
        "from kvlint.model.resolve import resolve_model\n"
        "resolve_model('meta-llama/Llama-3.1-8B-Instruct', offline=True)\n"
        "print(' '.join(m for m in sys.modules if m.startswith('kvlint.model.families.')))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = {name.rsplit(".", 1)[-1] for name in done.stdout.split()}
    assert "llama" in loaded
    others = {"gemma", "gemma3n", "gemma4", "cohere", "llama4", "qwen3_next", "nemotron_nas"}
    others |= {"jamba", "falcon", "falcon_h1", "chatglm", "granite_hybrid"}
    assert loaded.isdisjoint(others), sorted(loaded & others)
