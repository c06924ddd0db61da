"""Documents of kinds that hold no workload are left out before nodes are built, with the
same findings as when they were read: their syntax errors and what converting them would
report (duplicate keys, aliases, placeholders) still come out."""

from __future__ import annotations

import pytest

from kvlint.deploy.load import holds_no_workload
from kvlint.deploy.load import load_text
from kvlint.source.text import SourceText
from kvlint.source.yaml import Head
from kvlint.source.yaml import parse_documents

SERVICE = "apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec: {ports: [{port: 80}]}\n"


@pytest.mark.parametrize(
    ("head", "skipped"),
    [
        (Head("Service", "v1", ()), True),
        (Head("Role", "rbac.authorization.k8s.io/v1", ()), True),
        (Head("HorizontalPodAutoscaler", "autoscaling/v2", ()), True),
        (Head("ConfigMap", "v1", ("route",)), True),
        (Head("ConfigMap", "v1", ("config.yaml",)), False),  # an engine config mounted
        (Head("Service", "serving.knative.dev/v1", ()), False),  # runs containers
        (Head("Service", "inference.llmaz.io/v1alpha1", ()), False),
        (Head("Deployment", "apps/v1", ()), False),
        (Head(None, "v1", ()), False),
        (Head("Service", None, ()), False),
    ],
)
def test_which_kinds_are_left_out(head: Head, skipped: bool) -> None:
    assert holds_no_workload(head) is skipped


@pytest.mark.parametrize(
    "text",
    [
        SERVICE,
        SERVICE + "metadata: {name: b}\n",  # a duplicate key
        SERVICE.replace("{name: a}", "&m {name: a}") + "status: *m\n",  # an alias
        SERVICE.replace("a}", "{{ .Values.name }}}"),  # a template placeholder
        SERVICE + "extra: !!python/object:os.system x\n",
        SERVICE + "---\n" + SERVICE.replace("80", "[80"),  # broken YAML
    ],
)
def test_leaving_a_document_out_changes_no_problem(text: str) -> None:
    source = SourceText.of("s.yaml", text)
    read, read_problems = parse_documents(source)
    left, left_problems = parse_documents(source, skip=holds_no_workload)
    assert left_problems == read_problems
    assert len(left) <= len(read)
    assert load_text(text, display="s.yaml").deployments == []


def test_a_clean_service_is_not_converted() -> None:
    documents, problems = parse_documents(SourceText.of("s.yaml", SERVICE), skip=holds_no_workload)
    assert (documents, problems) == ([], [])


MKDOCS = """\
site_name: Recipes
markdown_extensions:
  - toc:
      slugify: !!python/object/apply:pymdownx.slugs.slugify {kwds: {case: lower}}
  - pymdownx.emoji:
      emoji_index: !!python/name:material.extensions.emoji.twemoji
"""


def test_python_tags_are_reported_only_in_a_deployment() -> None:
    """An mkdocs.yml configures Material's extensions with `!!python/name:` tags: kvlint builds
    no Python object from any tag, and a file that runs no engine is no place for an error (a
    `kvlint check .` over vLLM's recipes exited 2 on its mkdocs.yml). In a deployment the tag is
    still KV901: no engine or Kubernetes reads it."""
    result = load_text(MKDOCS, display="mkdocs.yml")
    assert [p.code for p in result.problems] == ["KV905"]
    deployment = "model: m\nmax-model-len: !!python/name:os.system 4096\n"
    result = load_text(deployment, display="c.yaml")
    assert [(p.code, p.span.location()) for p in result.problems] == [("KV901", "c.yaml:2:16")]
