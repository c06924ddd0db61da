#!/usr/bin/env python3
"""Catalog entries from MaxText's Hugging Face configs
(``src/maxtext/checkpoint_conversion/utils/hf_model_configs.py``): the ``config.json`` of each
checkpoint it converts, kept as Python dict literals, read here without running the module
(``ast.literal_eval``) and checked by the family code like every entry.

    scripts/catalog_from_maxtext.py --git-mirrors DIR [--write]

A dict written as another one plus ``<name>["text_config"].update({...})`` (Gemma 4 E4B is
E2B's dict with its own sizes) is read the same way: the copy, then the update's literal. Only
the dicts in ``TAKEN`` are read; the others are models the catalog has from a config file, or
(the Qwen3 ``-Base`` names, which MaxText maps to the post-trained configs) not copies.
"""

from __future__ import annotations

import argparse
import ast
import copy
import pathlib
import subprocess
import sys
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from build_catalog import CATALOG
from build_catalog import emit
from build_catalog import repository
from build_catalog import table_entry

REPO = "AI-Hypercomputer/maxtext"
REVISION = "e591f30cbbf217ed67ef71263ec0538239f9c3b8"
PATH = "src/maxtext/checkpoint_conversion/utils/hf_model_configs.py"

# dict name -> (Hub id, aliases)
TAKEN: dict[str, tuple[str, tuple[str, ...]]] = {
    "gemma4_e2b_dict": ("google/gemma-4-E2B-it", ("google/gemma-4-E2B", "gemma4:e2b")),
    "gemma4_e4b_dict": ("google/gemma-4-E4B-it", ("google/gemma-4-E4B", "gemma4:e4b")),
    "qwen3_30b_a3b_base_config": ("Qwen/Qwen3-30B-A3B-Base", ()),
}


def dicts(text: str) -> dict[str, dict[str, Any]]:
    """Every ``name = {...}`` literal, ``name = transformers.XConfig(key=...)``, ``name =
    other.copy()``, ``name[key] = other[key].copy()`` and ``name[key].update({...})``
    statement of the module, in order."""
    found: dict[str, dict[str, Any]] = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            if isinstance(target, ast.Name) and isinstance(value, ast.Dict):
                try:
                    found[target.id] = literal(value)
                except ValueError:  # a dict built from expressions: not a copy of a file
                    continue
            elif isinstance(target, ast.Name) and _config_call(value):
                assert isinstance(value, ast.Call)
                try:  # transformers.XConfig(key=literal, ...): the same keys as keywords
                    found[target.id] = {str(k.arg): literal(k.value) for k in value.keywords}
                except ValueError:
                    continue
            elif isinstance(target, ast.Name) and (origin := _copy_of(value)) in found:
                found[target.id] = copy.deepcopy(found[str(origin)])
            elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                source = value.func.value if isinstance(value, ast.Call) else None  # type: ignore[attr-defined]
                if target.value.id in found and isinstance(source, ast.Subscript):
                    key = ast.literal_eval(target.slice)
                    origin = source.value.id  # type: ignore[attr-defined]
                    found[target.value.id][key] = copy.deepcopy(found[origin][key])
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            call = node.value
            func = call.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr == "update"
                and isinstance(func.value, ast.Subscript)
                and isinstance(func.value.value, ast.Name)
                and func.value.value.id in found
                and len(call.args) == 1
            ):
                key = ast.literal_eval(func.value.slice)
                found[func.value.value.id][key].update(literal(call.args[0]))
    return found


def literal(node: ast.expr) -> Any:
    """``ast.literal_eval`` plus the one expression these dicts use: a list repeated
    (``[...] * 7`` for a layer pattern)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        items, times = literal(node.left), literal(node.right)
        if isinstance(items, list) and isinstance(times, int) and not isinstance(times, bool):
            return items * times
        raise ValueError("not a repeated list")
    if isinstance(node, ast.Dict):
        if any(key is None for key in node.keys):
            raise ValueError("a ** in a dict")
        return {literal(k): literal(v) for k, v in zip(node.keys, node.values, strict=True)}  # type: ignore[arg-type]
    if isinstance(node, ast.List):
        return [literal(item) for item in node.elts]
    return ast.literal_eval(node)


def _config_call(value: ast.expr) -> bool:
    """``transformers.<Name>Config(...)`` called with keywords only, none of them ``**``."""
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and isinstance(value.func.value, ast.Name)
        and value.func.value.id == "transformers"
        and value.func.attr.endswith("Config")
        and not value.args
        and bool(value.keywords)
        and all(k.arg is not None for k in value.keywords)
    )


def _copy_of(value: ast.expr) -> str | None:
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "copy"
        and isinstance(value.func.value, ast.Name)
    ):
        return value.func.value.id
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git-mirrors", type=pathlib.Path, required=True)
    parser.add_argument("--catalog", type=pathlib.Path, default=CATALOG)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    clone = repository(args.git_mirrors, REPO)
    if clone is None:
        print(f"catalog_from_maxtext: no clone of {REPO} under {args.git_mirrors}", file=sys.stderr)
        return 1
    text = subprocess.run(
        ["git", "-C", str(clone), "show", f"{REVISION}:{PATH}"], capture_output=True, check=True
    ).stdout.decode("utf-8")
    table = dicts(text)
    built = []
    for name, (model_id, aliases) in TAKEN.items():
        if name not in table:
            print(f"catalog_from_maxtext: no dict {name!r}", file=sys.stderr)
            return 1
        source = {
            "repo": REPO,
            "revision": REVISION,
            "path": PATH,
            "url": f"https://huggingface.co/{model_id}/blob/main/config.json",
            "note": f"MaxText's {name!r} (the config.json of the checkpoint it converts)",
        }
        built.append(table_entry(model_id, aliases, table[name], source))
    return emit(built, args.catalog, write=args.write, tool="catalog_from_maxtext")


if __name__ == "__main__":
    sys.exit(main())
