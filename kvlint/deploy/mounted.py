"""Engine config files a container reads from a ConfigMap of the same manifest.

``trtllm-serve --extra_llm_api_options /etc/trtllm/extra.yaml`` (or Dynamo's TensorRT-LLM
worker's ``--extra-engine-args``) names a file; when the pod mounts a ConfigMap volume there and
the ConfigMap is in the same file, that file's YAML is the one the engine reads. Kubernetes
projects a ConfigMap volume as one file per ``data`` key (or per ``items`` entry, at its
``path``), and a ``subPath`` mount puts one of them at the mount path itself.
"""

from __future__ import annotations

import posixpath

from kvlint.source.nodes import Mapping
from kvlint.source.nodes import Node
from kvlint.source.nodes import Scalar
from kvlint.source.yaml import parse_embedded

# ConfigMap name -> data key -> the YAML file's top-level mapping (spans into the ConfigMap).
ConfigFiles = dict[str, dict[str, Mapping]]


def config_map_files(roots: list[Node]) -> ConfigFiles:
    """The YAML files of the file's ``v1`` ConfigMaps, by ConfigMap name and key."""
    found: ConfigFiles = {}
    for root in roots:
        if not isinstance(root, Mapping) or root.text_of("kind") != "ConfigMap":
            continue
        if root.text_of("apiVersion") != "v1":
            continue
        metadata = root.mapping("metadata")
        name = metadata.text_of("name") if metadata is not None else None
        data = root.mapping("data")
        if name is None or data is None:
            continue
        for key, value in data.items:
            if not isinstance(value, Scalar) or not key.text.endswith((".yaml", ".yml")):
                continue
            documents, _ = parse_embedded(value)  # a broken file is reported where it is read
            mappings = [d.root for d in documents if isinstance(d.root, Mapping)]
            if mappings:
                found.setdefault(name, {})[key.text] = mappings[0]
    return found


def mounted_file(
    path: str, pod_spec: Mapping | None, container: Mapping, files: ConfigFiles
) -> Mapping | None:
    """The YAML of the ConfigMap key the container sees at ``path``, if the file holds it."""
    if not files:
        return None
    for name, key in projections(path, pod_spec, container):
        if name in files and key in files[name]:
            return files[name][key]
    return None


def projections(path: str, pod_spec: Mapping | None, container: Mapping) -> list[tuple[str, str]]:
    """(ConfigMap name, key) of every ConfigMap volume the container mounts over ``path``."""
    if pod_spec is None or not path.startswith("/"):
        return []
    wanted = posixpath.normpath(path)
    found: list[tuple[str, str]] = []
    mounts = container.sequence("volumeMounts")
    for mount in mounts.items if mounts is not None else []:
        if not isinstance(mount, Mapping):
            continue
        at, volume = mount.text_of("mountPath"), mount.text_of("name")
        if at is None or volume is None:
            continue
        config_map = _config_map_volume(pod_spec, volume)
        if config_map is None:
            continue
        name, items = config_map
        sub_path = mount.text_of("subPath")
        at = posixpath.normpath(at)
        if sub_path:
            # One projected file, placed at the mount path itself.
            relative = sub_path if wanted == at else None
        elif wanted.startswith(at.rstrip("/") + "/"):
            relative = wanted[len(at.rstrip("/")) + 1 :]
        else:
            relative = None
        if relative is None:
            continue
        key = items.get(relative) if items else relative
        if key is not None:
            found.append((name, key))
    return found


def _config_map_volume(pod_spec: Mapping, volume: str) -> tuple[str, dict[str, str]] | None:
    """(ConfigMap name, projected path -> key for ``items``) of the pod's volume ``volume``."""
    volumes = pod_spec.sequence("volumes")
    for entry in volumes.items if volumes is not None else []:
        if not isinstance(entry, Mapping) or entry.text_of("name") != volume:
            continue
        source = entry.mapping("configMap")
        name = source.text_of("name") if source is not None else None
        if source is None or name is None:
            return None
        items: dict[str, str] = {}
        listed = source.sequence("items")
        for item in listed.items if listed is not None else []:
            if isinstance(item, Mapping):
                key, at = item.text_of("key"), item.text_of("path")
                if key is not None and at is not None:
                    items[posixpath.normpath(at)] = key
        return name, items
    return None
