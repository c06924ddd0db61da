"""``python -m kvlint``: the command line, with the working directory taken off ``sys.path``.

``python -m`` puts the working directory first on ``sys.path``; inside a checkout that lets a
pull request's ``yaml.py`` or ``kvlint_rules/`` shadow what kvlint imports next (issue 15). By
the time this module runs, ``kvlint`` itself is imported, so the entry is dropped before
anything else is. (A checkout's own ``kvlint/`` folder would be imported instead of this one:
in an untrusted checkout, run the ``kvlint`` console script, as the pre-commit hook and the
GitHub Action do.)
"""

from __future__ import annotations

import os
import sys


def _drop_working_directory() -> None:
    if getattr(sys.flags, "safe_path", False) or not sys.path:
        return  # `python -P` / `-I`: Python left it out
    try:
        here = os.getcwd()
    except OSError:
        here = ""
    if sys.path[0] in ("", here):
        del sys.path[0]


_drop_working_directory()

from kvlint.main import main  # noqa: E402  (after sys.path is made safe)

raise SystemExit(main())
