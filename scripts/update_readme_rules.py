"""Regenerate the rules table in README.md from the rule registry (``--check``: only compare).

The table is the one ``kvlint rules --format markdown`` puts at the top of ``docs/rules.md``,
with its links pointing into that file.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
_BLOCK = re.compile(r"(<!-- rules:start -->\n)(.*?)(<!-- rules:end -->)", re.DOTALL)


def rules_table() -> str:
    from kvlint import explain
    from kvlint.registry import default_registry

    markdown = explain.rules_markdown(default_registry())
    table = [line for line in markdown.split("\n## ")[0].splitlines() if line.startswith("|")]
    return "\n".join(line.replace("](#", "](docs/rules.md#") for line in table) + "\n"


def updated(readme: str) -> str:
    if not _BLOCK.search(readme):
        raise SystemExit("README.md has no <!-- rules:start --> ... <!-- rules:end --> block")
    return _BLOCK.sub(lambda m: m.group(1) + rules_table() + m.group(3), readme)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if the table is stale")
    args = parser.parse_args(argv)
    text = README.read_text(encoding="utf-8")
    new = updated(text)
    if args.check:
        if new != text:
            print("README.md rules table is stale: run scripts/update_readme_rules.py")
            return 1
        return 0
    README.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
