"""The check pipeline: files, deployments, model, sizing, rules, findings; pure, no printing."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import TYPE_CHECKING

from kvlint.finding import Finding
from kvlint.finding import Severity

if TYPE_CHECKING:
    from kvlint.deploy.model import Deployment
    from kvlint.sizing import Sizing


@dataclass(frozen=True)
class PluginError:
    """A rule plugin that could not be loaded, or a rule class the registry refused."""

    package: str  # the distribution that declared the entry point ("kvlint-plugin-example")
    entry_point: str  # "acme = kvlint_plugin_example"
    message: str

    def __str__(self) -> str:
        return f"plugin {self.package!r} ({self.entry_point}): {self.message}"


@dataclass(frozen=True)
class DeploymentResult:
    """One deployment as checked: what the files say, the numbers, and what was found in it."""

    deployment: Deployment
    sizing: Sizing | None  # None when sizing could not run (an internal error, reported)
    model_origin: str | None = None  # "path", "catalog", "hf-cache", "hub", "gguf"
    model_detail: str = ""
    findings: tuple[Finding, ...] = ()  # this deployment's findings, after selection, sorted


@dataclass(frozen=True)
class Summary:
    """Counts for the end of a report; computed by the linter, never by a reporter."""

    files: int
    deployments: int
    by_severity: dict[str, int]  # "error" / "warning" / "info" -> count
    by_code: tuple[tuple[str, str, int], ...]  # (code, name, count), in code order
    fail_on: Severity
    exit_code: int
    plugin_errors: tuple[PluginError, ...] = ()

    @property
    def total(self) -> int:
        return sum(self.by_severity.values())


@dataclass(frozen=True)
class LintResult:
    """Everything one run found, in report order."""

    files: tuple[str, ...]  # display paths of every file read
    deployments: tuple[DeploymentResult, ...]
    findings: tuple[Finding, ...]  # every finding, sorted (path, line, column, code)
    plugin_errors: tuple[PluginError, ...] = field(default=())
