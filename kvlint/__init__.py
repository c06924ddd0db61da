"""kvlint: check LLM-serving deployments against the KV-cache arithmetic of their model."""

from __future__ import annotations

__version__ = "0.1.0"

# The distribution on the package index: `pip install kvcache-lint`. The index's `kvlint` is a
# different tool (a prefix-cache log analyser with the same import package and command), so the
# name kvlint is installed under differs from the one it is imported and run under.
DISTRIBUTION = "kvcache-lint"
# Where the source, the rule documentation and the issues live (pyproject.toml's [project.urls]).
REPOSITORY = "https://github.com/kvcache-lint/kvlint"


def _install_record_code() -> None:
    # Before any record is defined: kvlint's records get their methods precompiled, and
    # dataclasses finds inspect deferred.
    from kvlint.record_code import defer_inspect
    from kvlint.record_code import install

    defer_inspect()
    install()


_install_record_code()


def rule_anchor(code: str, name: str) -> str:
    """The heading anchor of a rule in ``docs/rules.md``: ``kv301-max-num-seqs-over-kv-budget``."""
    return f"{code.lower()}-{name}"


def rule_doc_url(code: str, name: str) -> str:
    """A built-in rule's documentation on the repository's ``docs/rules.md``."""
    return f"{REPOSITORY}/blob/main/docs/rules.md#{rule_anchor(code, name)}"
