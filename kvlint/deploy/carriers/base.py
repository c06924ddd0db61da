"""The Carrier protocol (where settings live) and the context a carrier reads a document with."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import TYPE_CHECKING
from typing import Protocol

from kvlint import codes
from kvlint.deployment import Deployment
from kvlint.finding import InputProblem
from kvlint.finding import Severity
from kvlint.finding import Span
from kvlint.source.nodes import Mapping
from kvlint.source.nodes import Node
from kvlint.source.text import SourceText

if TYPE_CHECKING:
    from kvlint.deploy.gpu_facts import DeviceRequest
    from kvlint.deploy.mounted import ConfigFiles


@dataclass
class Context:
    """One file being read: its text and the problems found so far."""

    source: SourceText
    problems: list[InputProblem] = field(default_factory=list)
    # The file's DRA ResourceClaims and ResourceClaimTemplates, by name (a pod's claims).
    devices: dict[str, DeviceRequest] = field(default_factory=dict)
    # The file's ConfigMap YAML files (kvlint.deploy.mounted), and the (line, column) of each
    # one a container reads through its flags: read there, not again on its own.
    config_files: ConfigFiles = field(default_factory=dict)
    mounted: set[tuple[int, int]] = field(default_factory=set)

    @property
    def path(self) -> str:
        return self.source.path

    def unrecognised(self, span: Span, message: str) -> None:
        # Info: nothing says this document serves a model, so a hook over every YAML file in a
        # repository must not fail on it (container.py warns when an engine image is seen).
        self.problems.append(
            InputProblem(codes.UNRECOGNISED_DOCUMENT, span, message, Severity.INFO)
        )


class Carrier(Protocol):
    """A module that knows one kind of document (a Kubernetes manifest, compose, Helm values)."""

    NAME: str

    def matches(self, root: Node) -> bool:
        """Whether this carrier owns the document (cheap: looks at top-level keys only)."""
        ...

    def extract(self, root: Node, ctx: Context) -> list[Deployment]:
        """Every deployment the document describes; problems go to ``ctx`` or the deployment."""
        ...


def kind_of(root: Node) -> tuple[str, str] | None:
    """(apiVersion, kind) of a Kubernetes object, or None."""
    if not isinstance(root, Mapping):
        return None
    api = root.text_of("apiVersion")
    kind = root.text_of("kind")
    if api is None or kind is None:
        return None
    return api, kind
