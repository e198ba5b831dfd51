"""Errors a user can cause.

Every exception derived from :class:`UserError` is shown by the CLI as one line (``error: ...``)
with exit code 1; anything else is a bug and exits with code 2. Messages say what is wrong and,
where it is not obvious, what to do about it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class UserError(Exception):
    """A problem with the user's input, options or environment (exit code 1)."""


class UserValueError(UserError, ValueError):
    """A value out of range or of the wrong form (``eps=5``, ``confidence=1.5``): also a
    :class:`ValueError`, which is what pandas and scikit-learn users catch."""


class UserTypeError(UserError, TypeError):
    """An argument of the wrong type (a path where a table belongs), or an unknown keyword
    option: also a :class:`TypeError`, as Python itself raises for a wrong call."""


class UserFileNotFoundError(UserError, FileNotFoundError):
    """An input that does not exist: also a :class:`FileNotFoundError`."""

    def __str__(self) -> str:  # OSError's own str() would show "[Errno None] ..." for some argument forms
        return str(self.args[0]) if self.args else ""


class IncompleteResults(UserValueError):
    """Sampled launches without a usable result (missing from the output, crashed, cut short).

    ``what`` says which (one line); ``advice`` what to do, which depends on the step: ``collect``
    can keep the partial table, ``estimate`` cannot use it."""

    def __init__(
        self, what: str, advice: str = "rerun them, or pass --allow-incomplete to keep the partial table"
    ) -> None:
        super().__init__(f"{what}; {advice}")
        self.what = what
        self.advice = advice


class FormatError(UserError, ValueError):
    """A file could not be parsed: names the file, the line or record, and what was expected."""

    def __init__(
        self,
        path: str | Path,
        message: str,
        *,
        line: int | None = None,
        record: str | None = None,
    ) -> None:
        where = str(path)
        if line is not None:
            where += f", line {line}"
        if record is not None:
            where += f", {record}"
        super().__init__(f"{where}: {message}")
        self.path = Path(path)
        self.line = line
        self.record = record


class PlanMismatchError(UserError, ValueError):
    """A plan is applied to a workload other than the one it was made for."""


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP (what ``timeout``, SLURM's time limit and a closed terminal send), raised
    in the main thread so that it unwinds like Ctrl-C: every ``finally`` and cleanup for an
    interrupt runs (temporaries removed, simulators stopped), then one line and exit 128+signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


#: the interrupt a signal raised in this process, if any: a library can swallow it (pyarrow's
#: lazy import of pandas, cut short by the signal, leaves a half-initialised ``pandas`` and no
#: exception), and the error that follows is then the signal's doing, not a bug
_RECEIVED: list[KeyboardInterrupt] = []


def received_interrupt() -> KeyboardInterrupt | None:
    """The interrupt (Ctrl-C, SIGTERM, SIGHUP) a signal raised in this process, if one did."""
    return _RECEIVED[0] if _RECEIVED else None


def release_interrupts() -> None:
    """Forget the recorded interrupts and collect what they kept alive, once the command is over.

    A signal that lands between a generator context manager's set-up and its ``with`` (inside
    contextlib's ``__enter__``, after the ``yield``) leaves the generator suspended, its clean-up
    not run. The recorded interrupt's traceback holds it until the interpreter shuts down, when
    the clean-up can no longer import anything: it then fails with a traceback and leaves its
    temporary folder. Released here, the clean-up runs while the interpreter is whole."""
    import gc

    _RECEIVED.clear()
    gc.collect()


def raise_terminated(signum: int, frame: object = None) -> None:
    """A signal handler: turn the signal into :class:`Terminated` (recorded first)."""
    exc = Terminated(signum)
    _RECEIVED.append(exc)
    raise exc


def raise_interrupted(signum: int, frame: object = None) -> None:
    """The SIGINT handler: Python's own ``KeyboardInterrupt``, recorded first."""
    exc = KeyboardInterrupt()
    _RECEIVED.append(exc)
    raise exc


def _handled_signals() -> list[tuple[int, object]]:
    """Ctrl-C, SIGTERM and SIGHUP where this platform has them, with their handlers now; one the
    process ignores (``nohup``) is left out, so that it stays ignored."""
    import signal

    out = []
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        handler = signal.getsignal(sig) if sig is not None else None
        if sig is not None and handler not in (signal.SIG_IGN, None):
            out.append((sig, handler))
    return out


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold Ctrl-C, SIGTERM and SIGHUP until the block ends, then act on them.

    A temporary made and then recorded for clean-up (``tmp = mkdtemp()``) leaks if the signal
    lands between the two: the name was never stored, so no ``finally`` can remove it. Inside
    this block a signal is only noted; when the block ends, the handler it would have met runs
    (raising ``KeyboardInterrupt`` or :class:`Terminated`), where the clean-up sees the name.
    Python runs signal handlers in the main thread only, so elsewhere this does nothing."""
    import os
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted: list[int] = []
    saved = dict(_handled_signals())
    for sig in saved:
        signal.signal(sig, lambda signum, frame: noted.append(signum))
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
        if noted:
            handler = saved[noted[0]]
            if callable(handler):
                handler(noted[0], None)
            else:  # SIG_DFL: the default action, now that the block is over
                os.kill(os.getpid(), noted[0])


#: the handlers :func:`settle_signals` replaced, to put back when the command returns
_SETTLED: list[tuple[int, object]] = []


def settle_signals() -> None:
    """The command's output is complete: from here until it returns, Ctrl-C, SIGTERM and SIGHUP
    are ignored, so that a signal in its last moments (the summary line, the return through
    click) cannot report a command that wrote its whole output as interrupted, with exit 128+signal
    and the output in place. :func:`unsettle_signals` puts the handlers back. Main thread only."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return
    for sig, handler in _handled_signals():
        _SETTLED.append((sig, handler))
        signal.signal(sig, signal.SIG_IGN)


def unsettle_signals() -> None:
    """Put back the handlers :func:`settle_signals` replaced (a command run in-process returns to
    a caller that still wants its Ctrl-C)."""
    import signal

    while _SETTLED:
        sig, handler = _SETTLED.pop()
        signal.signal(sig, handler)


def install_termination_handlers() -> None:
    """Handle SIGTERM and SIGHUP like Ctrl-C (see :class:`Terminated`), and record Ctrl-C itself;
    a signal the parent set to be ignored (``nohup``) stays ignored."""
    import signal

    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None and signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, raise_terminated)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, raise_interrupted)


#: longest error message shown, in characters (a message quoting a hostile file is cut with ``…``)
MESSAGE_LIMIT = 1000


def one_line(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """``text`` as one printable line: line breaks become spaces, other control characters
    (NUL bytes, escape sequences that would drive the terminal) ``?``, cut to ``limit`` in the
    middle with ``…`` (the end of a message says what to do).

    Messages quote what the user gave (a cell, a line of a log); a binary file or a huge line
    must not turn the one error line into pages of garbage.
    """
    out = []
    for ch in text:
        if ch in "\r\n\t":
            out.append(" ")
        elif not ch.isprintable():
            out.append("?")
        else:
            out.append(ch)
    line = " ".join("".join(out).split(" ")).strip()
    if len(line) <= limit:
        return line
    # Cut in the middle: the start says what is wrong, the end what to do (often a command to
    # copy); what is cut is the quoted input between them.
    tail = (limit - 1) * 2 // 5
    return line[: limit - 1 - tail] + "…" + line[len(line) - tail :]
