"""InputProblemRule: the shared ``check`` of the KV5xx/KV9xx rules that report reading problems."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from kvlint.finding import Problem
from kvlint.rule import Rule

if TYPE_CHECKING:
    from kvlint.deployment import Deployment
    from kvlint.sizing import Sizing


class InputProblemRule(Rule):
    """Yields the deployment's InputProblems of this rule's code (found while reading the files).

    Problems of a file that belong to no deployment reach the same rule class through the
    linter, so select, ignore, severity and suppression treat them like any finding.
    """

    needs_model = False

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        for problem in dep.problems:
            if problem.code == self.code:
                # The reader's severity where it knows better than the rule's default (a
                # flag argparse still takes as an abbreviation is a KV501 warning, not an
                # error); a severity configured for the rule still wins.
                yield Problem(problem.span, problem.message, severity=problem.severity)
