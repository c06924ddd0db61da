#!/usr/bin/env python3
"""Regenerate built-in catalog entries from config.json files, and check them against their
sources: the keys the family code reads, where the file came from, and its sha256.

    scripts/build_catalog.py CONFIG.json... [--id ORG/NAME]... [--repo R --revision REV --path P]
                             [--url URL] [--note TEXT] [--alias NAME]...
                             [--hf-quant-config FILE] [--write]
    scripts/build_catalog.py ../shared/fixtures/hf-configs/*.json \\
        --provenance-table ../shared/fixtures/hf-configs/SOURCES.md --write
    scripts/build_catalog.py --manifest NEW.jsonl --git-mirrors DIR --write
    scripts/build_catalog.py --check --git-mirrors DIR

Without ``--id`` the id comes from the file name (``org__name.json``, ``org--name_config.json``
or a Hugging Face cache path). ``--write`` merges the entries into the catalog (same id:
replaced, keeping its aliases and unrestated provenance; new: added) and rewrites its index;
without it the entries are printed.

``--manifest`` builds many entries at once: one JSON object per line with ``id``, the config
as ``file`` (a path) or as ``repo`` + ``revision`` + ``path`` read from a git clone of that
repository under ``--git-mirrors`` (``DIR/owner/name`` or ``DIR/owner+name``, bare or not),
and optionally ``aliases``, ``note``, ``url`` and ``hf_quant_config`` (the checkpoint's
``hf_quant_config.json``, by path or by repository path, merged into ``quantization_config`` as
vLLM reads ModelOpt checkpoints).

``--check`` re-reads every entry whose source repository is under ``--git-mirrors`` and fails
when a file's sha256 or the kept keys no longer match the catalog; an entry whose commit the
clone does not hold (an older snapshot) is skipped and said so.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
from typing import Any

from kvlint.errors import KvlintError
from kvlint.model.catalog.build import build_entry
from kvlint.model.catalog.build import config_entry
from kvlint.model.catalog.build import id_from_path
from kvlint.model.catalog.build import merge_entries
from kvlint.model.catalog.build import provenance_table
from kvlint.model.catalog.build import read_catalog
from kvlint.model.catalog.build import write_catalog

CATALOG = pathlib.Path(__file__).resolve().parent.parent / "kvlint" / "model" / "catalog"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("configs", nargs="*", type=pathlib.Path, metavar="CONFIG.json")
    parser.add_argument(
        "--id", dest="ids", action="append", default=[], help="one per config, in order"
    )
    parser.add_argument(
        "--alias", action="append", default=[], help="another name (one config only)"
    )
    parser.add_argument("--repo", help="the repository the file was taken from")
    parser.add_argument("--revision", help="its commit")
    parser.add_argument("--path", dest="repo_path", help="the file's path in that repository")
    parser.add_argument("--url", help="where the file can be read")
    parser.add_argument("--note", help="anything else about the facts' origin")
    parser.add_argument(
        "--hf-quant-config", type=pathlib.Path, help="a ModelOpt hf_quant_config.json to merge"
    )
    parser.add_argument(
        "--provenance-table", type=pathlib.Path, help="a SOURCES.md table by file name"
    )
    parser.add_argument("--manifest", type=pathlib.Path, help="a JSON-lines list of entries")
    parser.add_argument(
        "--git-mirrors", type=pathlib.Path, help="a directory of git clones, owner/name"
    )
    parser.add_argument("--check", action="store_true", help="re-read entries from the clones")
    parser.add_argument(
        "--refresh", action="store_true", help="with --check: rewrite the entries that differ"
    )
    parser.add_argument("--catalog", type=pathlib.Path, default=CATALOG)
    parser.add_argument("--write", action="store_true", help="merge into the catalog")
    args = parser.parse_args(argv)

    if args.check:
        if args.git_mirrors is None:
            parser.error("--check needs --git-mirrors")
        return check(args.catalog, args.git_mirrors, refresh=args.refresh)
    if not args.configs and not args.manifest:
        parser.error("give config files or --manifest")
    if args.ids and len(args.ids) != len(args.configs):
        parser.error(
            f"{len(args.ids)} --id for {len(args.configs)} configs: give one per config or none"
        )
    if (args.alias or args.hf_quant_config) and len(args.configs) != 1:
        parser.error("--alias and --hf-quant-config apply to a single config")
    try:
        built = _from_arguments(args, parser) + _from_manifest(args)
    except (KvlintError, OSError, ValueError, subprocess.CalledProcessError) as exc:
        print(f"build_catalog: {exc}", file=sys.stderr)
        return 2

    if not args.write:
        json.dump(built, sys.stdout, indent=1)
        print()
        return 0
    try:
        write_catalog(args.catalog, merge_entries(read_catalog(args.catalog), built))
    except ValueError as exc:  # a duplicate id, or a name two entries claim
        print(f"build_catalog: {exc}", file=sys.stderr)
        return 2
    print(f"build_catalog: {len(built)} entries written to {args.catalog}", file=sys.stderr)
    return 0


def _from_arguments(args: argparse.Namespace, parser: argparse.ArgumentParser) -> list[Any]:
    table = (
        provenance_table(args.provenance_table.read_text(encoding="utf-8"))
        if args.provenance_table
        else {}
    )
    given = {
        key: value
        for key, value in (
            ("repo", args.repo),
            ("revision", args.revision),
            ("path", args.repo_path),
            ("url", args.url),
            ("note", args.note),
        )
        if value
    }
    built: list[dict[str, Any]] = []
    for index, path in enumerate(args.configs):
        model_id = args.ids[index] if args.ids else id_from_path(path)
        if model_id is None:
            parser.error(f"{path}: cannot tell the model id from the file name; pass --id ORG/NAME")
        row = table.get(path.name, {})
        source = {**row, **given}
        if row.get("note") and given.get("note"):
            source["note"] = f"{row['note']}; {given['note']}"
        built.append(
            build_entry(
                path,
                model_id=model_id,
                source=source,
                aliases=tuple(args.alias),
                hf_quant_config=args.hf_quant_config,
            )
        )
    return built


def _from_manifest(args: argparse.Namespace) -> list[dict[str, Any]]:
    if args.manifest is None:
        return []
    built = []
    with tempfile.TemporaryDirectory() as scratch:
        for number, line in enumerate(args.manifest.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            item = json.loads(line)
            where = f"{args.manifest}:{number}"
            config = _materialise(item, "path", args.git_mirrors, scratch, where)
            quant = None
            if item.get("hf_quant_config") or item.get("hf_quant_config_file"):
                quant = _materialise(item, "hf_quant_config", args.git_mirrors, scratch, where)
            keys = ("repo", "revision", "path", "url", "note", "hf_quant_config")
            source = {k: item[k] for k in keys if k in item}
            built.append(
                build_entry(
                    config,
                    model_id=item["id"],
                    source=source,
                    aliases=tuple(item.get("aliases", ())),
                    hf_quant_config=quant,
                )
            )
    return built


def _materialise(
    item: dict[str, Any], key: str, mirrors: pathlib.Path | None, scratch: str, where: str
) -> pathlib.Path:
    """The file an item names: ``<key>_file`` (``file`` for the config) on disk, or ``<key>``
    in the item's repository at its revision, copied out of a clone under ``mirrors``."""
    local = item.get("file" if key == "path" else f"{key}_file")
    if local:
        return pathlib.Path(local)
    if not item.get(key) or "repo" not in item or "revision" not in item or mirrors is None:
        raise ValueError(f"{where}: needs `file`, or `repo`, `revision`, `path` and --git-mirrors")
    out = pathlib.Path(scratch) / f"{len(list(pathlib.Path(scratch).iterdir()))}.json"
    out.write_bytes(git_show(mirrors, item["repo"], item["revision"], item[key]))
    return out


def table_entry(
    model_id: str, aliases: tuple[str, ...], config: dict[str, Any], source: dict[str, Any]
) -> dict[str, Any]:
    """An entry from a config read out of another project's table (litgpt, mlc-llm, MaxText):
    the keys the family code reads, refused with its reason where kvlint does not size it."""
    record = config_entry(model_id, aliases, config)
    record["source"] = source
    return record


def emit(built: list[dict[str, Any]], catalog: pathlib.Path, *, write: bool, tool: str) -> int:
    """Print the entries, or merge them into the catalog (``--write``)."""
    if not write:
        json.dump(built, sys.stdout, indent=1)
        print()
        return 0
    write_catalog(catalog, merge_entries(read_catalog(catalog), built))
    print(f"{tool}: {len(built)} entries written to {catalog}", file=sys.stderr)
    return 0


def git_show(mirrors: pathlib.Path, repo: str, revision: str, path: str) -> bytes:
    """The bytes of ``path`` at ``revision`` in the clone of ``repo`` under ``mirrors``."""
    clone = repository(mirrors, repo)
    if clone is None:
        raise ValueError(f"no clone of {repo} under {mirrors}")
    return subprocess.run(
        ["git", "-C", str(clone), "show", f"{revision}:{path}"], capture_output=True, check=True
    ).stdout


def has_commit(mirrors: pathlib.Path, repo: str, revision: str) -> bool:
    """Whether the clone of ``repo`` under ``mirrors`` holds the commit ``revision``."""
    clone = repository(mirrors, repo)
    if clone is None:
        return False
    probe = ["git", "-C", str(clone), "cat-file", "-e", f"{revision}^{{commit}}"]
    return subprocess.run(probe, capture_output=True, check=False).returncode == 0


def repository(mirrors: pathlib.Path, repo: str) -> pathlib.Path | None:
    owner, _, name = repo.partition("/")
    for candidate in (mirrors / owner / name, mirrors / f"{owner}+{name}"):
        for directory in (candidate, candidate / "repo"):
            if (directory / "HEAD").is_file() or (directory / ".git").exists():
                return directory
    return None


def check(root: pathlib.Path, mirrors: pathlib.Path, *, refresh: bool = False) -> int:
    """Rebuild every entry read from a repository held under ``mirrors``; report mismatches
    (``refresh``: write the rebuilt entries instead)."""
    failures = checked = 0
    records = read_catalog(root)
    rebuilt_records: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as scratch:
        for record in records:
            source = record.get("source", {})
            if record.get("base") or not (
                source.get("repo") and source.get("revision") and source.get("path")
            ):
                continue  # a variant of another entry, or facts not read from a repository
            if repository(mirrors, source["repo"]) is None or not source["path"].endswith(".json"):
                continue  # not held here, or facts read out of a document (a block of Markdown)
            item = {"id": record["id"], **source}
            if not has_commit(mirrors, source["repo"], source["revision"]):
                # a clone older than the entry (read from a newer snapshot or a code index):
                # nothing here to compare with, which is not a mismatch
                print(f"{record['id']}: {source['revision']} is not in the clone, skipped")
                continue
            try:
                path = _materialise(item, "path", mirrors, scratch, record["id"])
                quant = None
                if source.get("hf_quant_config"):
                    quant = _materialise(item, "hf_quant_config", mirrors, scratch, record["id"])
            except subprocess.CalledProcessError:
                print(f"{record['id']}: {source['path']} is not at {source['revision']}")
                failures += 1
                continue
            kept = {k: v for k, v in source.items() if k not in ("sha256", "hf_quant_sha256")}
            rebuilt = build_entry(path, model_id=record["id"], source=kept, hf_quant_config=quant)
            checked += 1
            same = rebuilt["config"] == record.get("config") and rebuilt.get(
                "unsized"
            ) == record.get("unsized")
            if same and rebuilt["source"] == source:
                continue
            if refresh:
                rebuilt_records.append(rebuilt)
                continue
            what = "the kept keys" if not same else "the sha256"
            print(f"{record['id']}: {what} differ from {source['repo']}:{source['path']}")
            failures += 1
    if refresh and rebuilt_records:
        write_catalog(root, merge_entries(records, rebuilt_records))
    done = f"{len(rebuilt_records)} rewritten" if refresh else f"{failures} mismatches"
    print(f"build_catalog: {checked} entries re-read, {done}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
