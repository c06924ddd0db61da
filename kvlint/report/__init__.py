"""The reporters by name; each is imported only when chosen (``rich`` costs start-up time)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from kvlint.errors import KvlintError

if TYPE_CHECKING:
    from kvlint.report.base import Reporter

# Format name -> "module:Class". The full, github and sarif reporters are engineer "report"'s.
REPORTERS: dict[str, str] = {
    "concise": "kvlint.report.concise:ConciseReporter",
    "full": "kvlint.report.full:FullReporter",
    "json": "kvlint.report.json:JsonReporter",
    "github": "kvlint.report.github:GithubReporter",
    "sarif": "kvlint.report.sarif:SarifReporter",
    "gitlab": "kvlint.report.gitlab:GitlabReporter",
    "junit": "kvlint.report.junit:JunitReporter",
}


def reporter_class(name: str) -> type[Reporter]:
    """The Reporter class for a ``--format`` name; a clear error when it is not available."""
    try:
        target = REPORTERS[name]
    except KeyError:
        known = ", ".join(REPORTERS)
        raise KvlintError(f"unknown output format `{name}` (use one of {known})") from None
    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
        cls: type[Reporter] = getattr(module, class_name)
    except (ImportError, AttributeError) as exc:
        raise KvlintError(f"output format `{name}` is not available: {exc}") from None
    return cls
