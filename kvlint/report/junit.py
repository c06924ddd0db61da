"""JUnit XML: one test suite per file, one test case per finding and per clean deployment.

A finding at or above ``fail-on`` is a ``<failure>`` (so the report fails exactly when the run
does); one below it is a passing test case whose ``<system-out>`` holds it. CI systems (GitLab's
``artifacts:reports:junit``, Jenkins, Azure Pipelines) show the failures per file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import PurePath
from typing import TYPE_CHECKING
from typing import TextIO
from xml.etree import ElementTree as ET

from kvlint.finding import Finding
from kvlint.finding import printable
from kvlint.report.base import Reporter
from kvlint.report.base import ReportOptions

if TYPE_CHECKING:
    from kvlint.linter import DeploymentResult
    from kvlint.linter import Summary


def _path(path: str) -> str:
    # A file name can hold control characters XML cannot (an ESC): written escaped, as text.
    path = printable(path)
    return path if os.path.isabs(path) else PurePath(os.path.normpath(path)).as_posix()


def _xml_text(text: str) -> str:
    """XML 1.0 cannot hold most C0 controls even escaped, and DEL and the C1 controls (the
    8-bit CSI among them) must not reach a terminal that shows the report: all become U+FFFD."""
    return "".join(
        c if c in "\t\n\r" or 0x20 <= ord(c) < 0x7F or ord(c) >= 0xA0 else "\ufffd" for c in text
    )


class JunitReporter(Reporter):
    """The whole run as one ``<testsuites>`` document, written at the end."""

    def __init__(self, stream: TextIO, options: ReportOptions | None = None) -> None:
        super().__init__(stream, options)
        self._findings: list[Finding] = []
        self._deployments: list[DeploymentResult] = []

    def deployment(self, result: DeploymentResult) -> None:
        self._deployments.append(result)

    def finding(self, finding: Finding) -> None:
        self._findings.append(finding)

    def finish(self, summary: Summary) -> None:
        by_file: dict[str, list[ET.Element]] = {}
        failures: dict[str, int] = {}
        for finding in sorted(self._findings, key=Finding.sort_key):
            path = _path(finding.span.path)
            failed = finding.severity >= summary.fail_on
            by_file.setdefault(path, []).append(_case(finding, path, failed))
            failures[path] = failures.get(path, 0) + failed
        for result in self._deployments:
            if not result.findings:
                path = _path(result.deployment.path)
                case = ET.Element(
                    "testcase", classname=path, name=_xml_text(result.deployment.name)
                )
                case.set("file", path)
                by_file.setdefault(path, []).append(case)
        root = ET.Element("testsuites", name="kvlint")
        total = sum(len(cases) for cases in by_file.values())
        failed_total = sum(failures.values())
        root.set("tests", str(total))
        root.set("failures", str(failed_total))
        root.set("errors", "0")
        for path in sorted(by_file):
            root.append(_suite(path, by_file[path], failures.get(path, 0)))
        ET.indent(root)
        self.stream.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        self.stream.write(ET.tostring(root, encoding="unicode"))
        self.stream.write("\n")


def _case(finding: Finding, path: str, failed: bool) -> ET.Element:
    span = finding.span
    case = ET.Element(
        "testcase",
        classname=path,
        name=_xml_text(f"{finding.code} {finding.name} at {span.line}:{span.column}"),
    )
    case.set("file", path)
    case.set("line", str(span.line))
    text = f"{path}:{span.line}:{span.column}: {finding.code} [{finding.severity}] "
    text = _xml_text(text + finding.message)
    if finding.fix is not None:
        text += _xml_text(f"\nfix: {finding.fix.title}")
    if failed:
        failure = ET.SubElement(
            case, "failure", message=_xml_text(finding.message), type=str(finding.severity)
        )
        failure.text = text
    else:
        ET.SubElement(case, "system-out").text = text
    return case


def _suite(path: str, cases: Iterable[ET.Element], failures: int) -> ET.Element:
    listed = list(cases)
    suite = ET.Element("testsuite", name=path)
    suite.set("tests", str(len(listed)))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", "0")
    suite.extend(listed)
    return suite
