"""MLX (``mlx_lm.server`` on Apple silicon): everything kvlint knows of it, in one home.

Its modules, as in every home: ``facts`` (what rules may say of it), ``spelling`` (its CLI as
data), ``defaults`` (what it does when a command line is silent), ``effective`` (its settle
step) and ``accounting`` (what it holds in unified memory). ``HOME`` imports ``spelling``,
``effective`` and ``accounting`` only when a deployment that runs it is found.
"""

from __future__ import annotations

from kvlint.engines.engine_home import Home
from kvlint.engines.mlx.facts import FACTS as FACTS

HOME = Home(__name__, FACTS)
