"""Plugin code run as untrusted input is read: every call caught whole, its prints kept off the
report, its time bounded.

Rules are plugins (the built-in ones come through the same entry point), and a rule is code
kvlint did not write: it can ``sys.exit(0)`` (the run would end with exit 0 and no report: a
passing CI), raise ``GeneratorExit`` or ``KeyboardInterrupt``, print into ``--format json``, or
loop forever. ``call`` runs one plugin call so that none of that escapes: whatever it raises
comes out as ``PluginFailure`` saying what happened (a ``KeyboardInterrupt`` only when no user
pressed Ctrl-C: a real one is re-raised), ``sys.stdout`` points at stderr meanwhile, and a
deadline (``KVLINT_RULE_TIMEOUT``, 10 s by default) ends it.

The deadline costs nothing measurable on the common path: no thread, no tracing, no system
call per rule. While a check runs (``session``), one process-wide interval timer
(``setitimer(ITIMER_REAL)``) ticks on the main thread, at most a second apart; a call notes
when it started, and a tick that finds the running call past its deadline raises
``RuleDeadline`` into it. A call outside a session (loading the plugins) arms the timer for
itself. Where neither can work (another thread, a platform without ``setitimer``), one
watchdog thread, started the first time it is needed, raises it with
``PyThreadState_SetAsyncExc``.

Limits (SECURITY.md): a rule inside one long C call that does not check for signals (a huge
integer power, a C extension's loop; regular expressions do check) is interrupted when the call
returns; in the watchdog fallback a blocking call (``time.sleep``) is too. A rule that swallows
the deadline is raised into again at every tick; after ``MAX_REFIRES`` times the run is stopped
(one line on stderr, exit 2) rather than left to hang.
"""

from __future__ import annotations

import _thread
import contextlib
import importlib
import os
import sys
import time
from collections.abc import Callable
from collections.abc import Iterator
from typing import Any
from typing import TypeVar

from kvlint.finding import printable

# `signal` builds its enums at import (~0.5 ms of a one-file check); `_signal`, the C module
# under it, is already imported by the interpreter and has everything needed here.
_signal: Any = importlib.import_module("_signal")

DEFAULT_TIMEOUT_S = 10.0
REFIRE_S = 1.0  # after the deadline, raised into the rule again this often
MAX_REFIRES = 5  # then the run stops: a rule that swallows its deadline would hang it

T = TypeVar("T")


class RuleDeadline(BaseException):
    """Raised into a plugin call that ran past its deadline (a BaseException: a rule's
    ``except Exception`` does not swallow it)."""


class PluginFailure(Exception):
    """A plugin call that did not return normally; ``reason`` says how, in one line."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def timeout() -> float:
    """The deadline of one plugin call, in seconds (``KVLINT_RULE_TIMEOUT``, read once: the
    environment lookup would be a third of what a guarded call costs)."""
    global _TIMEOUT
    if _TIMEOUT is None:
        try:
            _TIMEOUT = max(0.01, float(os.environ.get("KVLINT_RULE_TIMEOUT", DEFAULT_TIMEOUT_S)))
        except ValueError:
            _TIMEOUT = DEFAULT_TIMEOUT_S
    return _TIMEOUT


_TIMEOUT: float | None = None


def describe(exc: BaseException) -> str:
    """``ZeroDivisionError: division by zero``: the type and the first line of the text."""
    if isinstance(exc, SystemExit):
        return f"SystemExit: sys.exit({printable(repr(exc.code))})"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {printable(text[0])}" if text else type(exc).__name__


class _State:
    """The one timer's state: the call it guards, and whether a user pressed Ctrl-C (one
    instance with slots: writing a class attribute would invalidate the type's caches)."""

    __slots__ = (
        "active",
        "fires",
        "interrupted",
        "label",
        "limit",
        "main",
        "previous_int",
        "sigint_ignored",
        "started",
        "ticking",
    )  # fmt: skip

    def __init__(self) -> None:
        self.active = False  # a guarded call is running on the main thread
        self.started = 0.0  # time.monotonic() when it began
        self.limit = 0.0
        self.label = ""
        self.fires = 0  # ticks past the deadline so far
        self.ticking = False  # a session() keeps the timer running between calls
        self.interrupted = False
        self.main: int | None = None  # the main thread's ident, once the handlers are set
        self.previous_int: Any = None
        self.sigint_ignored = False  # SIG_IGN (a background job, nohup): no Ctrl-C can arrive


_state = _State()


def call(fn: Callable[[], T], *, label: str, seconds: float | None = None) -> T:
    """``fn()`` as plugin code; PluginFailure when it raises, exits or runs past ``seconds``
    (default: ``timeout()``). ``label`` names the plugin if the run has to be stopped."""
    limit = timeout() if seconds is None else seconds
    stdout = sys.stdout
    armed = ""
    try:
        sys.stdout = sys.stderr  # a plugin's print() must not land in --format json
        try:
            armed = _arm(label, limit)
            return fn()
        finally:
            _state.active = False  # first: a late tick now finds nothing to interrupt
            _disarm(armed)
            sys.stdout = stdout
    except PluginFailure:
        raise  # a failure already said (a rule's output checked inside the call)
    except RuleDeadline:
        raise PluginFailure(f"did not finish within {limit:g} s (KVLINT_RULE_TIMEOUT)") from None
    except KeyboardInterrupt:
        if _state.interrupted or not _can_tell_ctrl_c():
            raise  # the user pressed Ctrl-C (or kvlint cannot tell): stop, as asked
        raise PluginFailure("KeyboardInterrupt (raised by the plugin itself)") from None
    except BaseException as exc:  # SystemExit, GeneratorExit and every Exception
        raise PluginFailure(describe(exc)) from None


@contextlib.contextmanager
def session() -> Iterator[None]:
    """Keep the timer ticking for a run of many calls (a check's rules over every file), so
    each call costs a few attribute writes instead of two system calls."""
    if _state.ticking or not _on_main_thread():
        yield
        return
    _state.ticking = True
    _signal.setitimer(_signal.ITIMER_REAL, _tick(), _tick())
    try:
        yield
    finally:
        _signal.setitimer(_signal.ITIMER_REAL, 0, 0)
        _state.ticking = False


def _after_fork_in_child() -> None:
    # A forked worker (kvlint.parallel) goes on inside its parent's session, but timers are not
    # inherited across fork: start the child's own.
    if _state.ticking:
        _signal.setitimer(_signal.ITIMER_REAL, _tick(), _tick())


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _tick() -> float:
    """How often the timer looks at the running call: the deadline is kept within this."""
    return min(REFIRE_S, timeout() / 4)


def _can_tell_ctrl_c() -> bool:
    """Whether a KeyboardInterrupt without a SIGINT seen is the plugin's own: on the main
    thread when kvlint wraps Python's SIGINT handler; on any other thread always (Ctrl-C is
    delivered to the main thread only)."""
    if _state.main is None:
        return False
    if _state.sigint_ignored:
        return True  # no SIGINT is delivered, so every KeyboardInterrupt is raised by code
    return _thread.get_ident() != _state.main or _state.previous_int is not None


def _arm(label: str, seconds: float) -> str:
    """Start guarding a call; how it is guarded: by the ticking timer, a timer of its own
    (outside a session), or the watchdog (another thread)."""
    if _state.ticking and _thread.get_ident() == _state.main:
        how = "session"
    elif _on_main_thread():
        how = "timer"
        tick = min(REFIRE_S, seconds / 4)
        _signal.setitimer(_signal.ITIMER_REAL, tick, tick)
    else:
        _watchdog().arm(_thread.get_ident(), seconds)
        return "watchdog"
    _state.label, _state.limit, _state.fires = label, seconds, 0
    _state.started = time.monotonic()
    _state.active = True
    return how


def _disarm(how: str) -> None:
    if how == "timer":
        _signal.setitimer(_signal.ITIMER_REAL, 0, 0)
    elif how == "watchdog" and _WATCHDOG is not None:
        _WATCHDOG.disarm(_thread.get_ident())


def _on_main_thread() -> bool:
    """Whether the timer can serve this thread; installs its handlers the first time."""
    if _state.main is not None:
        return _thread.get_ident() == _state.main
    if not hasattr(_signal, "setitimer"):
        return False
    try:
        _signal.signal(_signal.SIGALRM, _on_alarm)
    except ValueError:  # not the main thread: only it may set handlers
        return False
    _state.main = _thread.get_ident()
    previous = _signal.getsignal(_signal.SIGINT)
    # A run started in the background (`cmd &` in a script, nohup, a CI step) inherits SIGINT
    # ignored: a plugin's KeyboardInterrupt ended such runs with exit 130 and no report.
    _state.sigint_ignored = previous is _signal.SIG_IGN
    if previous is _signal.default_int_handler:  # Python's own: wrap it to see a real Ctrl-C
        _state.previous_int = previous
        _signal.signal(_signal.SIGINT, _on_interrupt)
    return True


def _on_alarm(signum: int, frame: Any) -> None:
    if not _state.active or time.monotonic() - _state.started < _state.limit:
        return  # between calls, or a call still within its time
    _state.fires += 1
    if _state.fires > MAX_REFIRES:
        _stop()
    raise RuleDeadline


def _on_interrupt(signum: int, frame: Any) -> None:
    _state.interrupted = True
    _state.previous_int(signum, frame)  # raises KeyboardInterrupt


def _stop() -> None:
    """A plugin that ignored its deadline again and again: end the run rather than hang."""
    os.write(
        2,
        f"kvlint: {printable(_state.label)} ignored its deadline {MAX_REFIRES} times; the run "
        "is stopped\n".encode(),
    )
    os._exit(2)


class _Watchdog:
    """One thread raising the deadline into calls on other threads (the fallback)."""

    def __init__(self) -> None:
        import threading

        self.condition = threading.Condition()
        self.deadlines: dict[int, list[float]] = {}  # thread ident -> [due, fires]
        threading.Thread(target=self._run, name="kvlint-rule-deadline", daemon=True).start()

    def arm(self, ident: int, seconds: float) -> None:
        with self.condition:
            self.deadlines[ident] = [time.monotonic() + seconds, 0.0]
            self.condition.notify()

    def disarm(self, ident: int) -> None:
        with self.condition:
            self.deadlines.pop(ident, None)

    def _run(self) -> None:
        import ctypes

        raise_in = ctypes.pythonapi.PyThreadState_SetAsyncExc
        while True:
            with self.condition:
                now = time.monotonic()
                for ident, entry in self.deadlines.items():
                    if entry[0] <= now:
                        entry[0], entry[1] = now + REFIRE_S, entry[1] + 1
                        if entry[1] > MAX_REFIRES:
                            _stop()
                        raise_in(ctypes.c_ulong(ident), ctypes.py_object(RuleDeadline))
                due = min((entry[0] for entry in self.deadlines.values()), default=None)
                self.condition.wait(None if due is None else max(0.0, due - now))


_WATCHDOG: _Watchdog | None = None


def _watchdog() -> _Watchdog:
    global _WATCHDOG
    if _WATCHDOG is None:
        _WATCHDOG = _Watchdog()
    return _WATCHDOG
