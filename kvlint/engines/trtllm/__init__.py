"""TensorRT-LLM: everything kvlint knows of this engine, in one home (a ``ServingEngine``).

Its modules, as in every home: ``facts`` (what rules may say of it), ``spelling`` (its CLI and
environment as data, from the table in ``flags``), ``defaults`` (what it does when a file is
silent), ``effective`` (its settle step: what it will run with) and ``accounting`` (what it
allocates). ``HOME`` imports ``spelling``, ``effective`` and ``accounting`` only when a
deployment that runs it is found.
"""

from __future__ import annotations

from kvlint.engines.engine_home import Home
from kvlint.engines.trtllm.facts import FACTS as FACTS

HOME = Home(__name__, FACTS)
