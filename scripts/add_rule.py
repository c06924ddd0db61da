"""Scaffold a new built-in rule: its module, its case file, and the lines to add to get_rules().

Usage: python scripts/add_rule.py KV308 some-mistake --severity warning [--engines vllm,sglang]
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

MODULE = '''"""{code} {name}: TODO one line naming the mistake."""

from __future__ import annotations

from collections.abc import Iterator

from kvlint.deployment import Deployment
from kvlint.finding import Problem
from kvlint.finding import Severity
from kvlint.rule import Rule
from kvlint.sizing import Sizing


class {cls}(Rule):
    """## What it does
    Checks that TODO.

    ## Why is this bad?
    TODO: what goes wrong at start-up or under load, with the numbers.

    ## Example
    ```yaml
    # file: vllm.yaml
    TODO: a complete deployment file that triggers {code}
    ```

    Use instead:
    ```yaml
    # file: vllm.yaml
    TODO: the same file, corrected
    ```
    """

    code = "{code}"
    name = "{name}"
    severity = Severity.{severity}
    engines = frozenset({engines})

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        return iter(())
'''

CASES = """rule: {code}
cases:
  - name: passes
    filename: vllm.yaml
    file: |
      TODO
    findings: []
  - name: fails
    filename: vllm.yaml
    file: |
      TODO
    findings:
      - {{line: 1, column: 1, message: "TODO"}}
"""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("code", help="KV + three digits, in its family (KV3xx capacity, ...)")
    parser.add_argument("name", help="kebab-case, naming the mistake (not the remedy)")
    parser.add_argument("--severity", choices=("error", "warning", "info"), default="warning")
    parser.add_argument("--engines", default="", help="comma-separated; empty: every engine")
    args = parser.parse_args(argv)
    if not re.fullmatch(r"KV[0-9]{3}", args.code):
        parser.error(f"{args.code}: built-in codes are KV + three digits")
    if not re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", args.name):
        parser.error(f"{args.name}: names are kebab-case")
    module_name = args.name.replace("-", "_")
    cls = "".join(part.capitalize() for part in args.name.split("-"))
    engines = sorted(e.strip() for e in args.engines.split(",") if e.strip())
    module = REPO / "rules" / f"{module_name}.py"
    cases = REPO / "tests" / "rules" / "cases" / f"{args.code}.yaml"
    for path in (module, cases):
        if path.exists():
            print(f"{path} exists; nothing written", file=sys.stderr)
            return 1
    module.write_text(
        MODULE.format(
            code=args.code,
            name=args.name,
            cls=cls,
            severity=args.severity.upper(),
            engines="{" + ", ".join(f'"{e}"' for e in engines) + "}" if engines else "",
        ),
        encoding="utf-8",
    )
    cases.write_text(CASES.format(code=args.code), encoding="utf-8")
    print(f"wrote {module.relative_to(REPO)} and {cases.relative_to(REPO)}")
    print("now add to rules/__init__.py, in get_rules():")
    print(f"    from .{module_name} import {cls}")
    print(f"    ... and {cls} in the returned list, in code order")
    print("then: write the doc and cases, and `kvlint rules --format markdown > docs/rules.md`")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
