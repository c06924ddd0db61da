"""The JSON reporter: one object, the contract in ``schemas/report.schema.json``."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING
from typing import Any
from typing import TextIO

from kvlint.report.base import Reporter
from kvlint.report.base import ReportOptions
from kvlint.report.base import json_text

if TYPE_CHECKING:
    from kvlint.finding import Finding
    from kvlint.finding import Span
    from kvlint.linter import DeploymentResult
    from kvlint.linter import Summary

VERSION = 1  # bump only on an incompatible change (and in schemas/report.schema.json)


def span_json(span: Span) -> dict[str, Any]:
    return {
        "path": span.path,
        "line": span.line,
        "column": span.column,
        "end_line": span.end_line if span.end_line is not None else span.line,
        "end_column": span.end_column,
        "key": span.key,
    }


def finding_json(finding: Finding) -> dict[str, Any]:
    fix = finding.fix
    return {
        "code": finding.code,
        "name": finding.name,
        "severity": str(finding.severity),
        **span_json(finding.span),
        "message": finding.message,
        "fix": None
        if fix is None
        else {
            "title": fix.title,
            "applicability": fix.applicability.value,
            "edits": [
                {**span_json(edit.span), "replacement": edit.replacement} for edit in fix.edits
            ],
        },
        "numbers": [{"label": label, "value": value} for label, value in finding.numbers],
    }


def _plain(value: Any) -> Any:
    """A JSON-ready copy of a record (dataclasses, enums, tuples); unknown objects as text."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    enum_value = getattr(value, "value", None)
    if isinstance(enum_value, (str, int)):
        return enum_value
    return str(value)


def _sourced(value: Any) -> Any:
    return None if value is None else _plain(value.value)


def deployment_json(result: DeploymentResult) -> dict[str, Any]:
    dep = result.deployment
    sizing = result.sizing
    out: dict[str, Any] = {
        **{k: v for k, v in span_json(dep.span).items() if k in ("path", "line", "column")},
        "name": dep.name,
        "carrier": dep.carrier,
        "engine": _sourced(dep.engine),
        "engine_version": _sourced(dep.engine_version),
        "model": _sourced(dep.model),
        "model_origin": result.model_origin,
        "gpu": _sourced(dep.gpu),
        "gpu_count": _sourced(dep.gpu_count),
        "max_model_len": _sourced(dep.max_model_len),
        "max_num_seqs": _sourced(dep.max_num_seqs),
        "kv_cache_dtype": _sourced(dep.kv_cache_dtype),
        "tensor_parallel_size": _sourced(dep.tensor_parallel_size),
        "findings": len(result.findings),
        "sizing": None,
    }
    if sizing is not None:
        out["sizing"] = {
            "model": sizing.spec.name if sizing.spec is not None else None,
            "gpu": sizing.gpu.key if sizing.gpu is not None else None,
            "gpu_total_bytes": sizing.gpu.total_bytes if sizing.gpu is not None else None,
            "kv_cache_dtype": sizing.kv.types.label if sizing.kv is not None else None,
            "kv_bytes_per_token": sizing.kv.per_token_bytes if sizing.kv is not None else None,
            "engine": _plain(sizing.engine),
            "missing": list(sizing.missing),
        }
    return out


class JsonReporter(Reporter):
    """Holds everything and writes one JSON document at ``finish``."""

    def __init__(self, stream: TextIO, options: ReportOptions | None = None) -> None:
        super().__init__(stream, options)
        self._findings: list[dict[str, Any]] = []
        self._deployments: list[dict[str, Any]] = []

    def deployment(self, result: DeploymentResult) -> None:
        self._deployments.append(deployment_json(result))

    def finding(self, finding: Finding) -> None:
        self._findings.append(finding_json(finding))

    def finish(self, summary: Summary) -> None:
        document = {
            "version": VERSION,
            "findings": self._findings,
            "deployments": self._deployments,
            "summary": {
                "files": summary.files,
                "deployments": summary.deployments,
                "findings": summary.total,
                "by_severity": summary.by_severity,
                "by_code": [
                    {"code": row.code, "name": row.name, "count": row.found}
                    for row in summary.by_code
                ],
                "fail_on": str(summary.fail_on),
                "exit_code": summary.exit_code,
            },
            "plugin_errors": [
                {"package": e.package, "entry_point": e.entry_point, "message": e.message}
                for e in summary.plugin_errors
            ],
        }
        self.stream.write(json_text(document))
        self.stream.write("\n")
