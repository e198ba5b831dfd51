"""The console script: the smallest possible entry point, so that Ctrl-C is caught early.

``simsample`` starts by importing the CLI (click, rich, the plugin manager), which takes a good
fraction of a second; a Ctrl-C in that time would print Python's traceback. This module imports
nothing heavy itself, turns an interrupt during that import into the same one line and exit code
130 as an interrupt at any later moment (handled in :func:`simsample.cli.main`), then hands over.

It also owns what happens to standard output at the very end. Output is buffered, so a command
that prints a JSON document has usually written nothing when it returns; the bytes reach a file
or a pipe when the buffer is flushed, and that is where a full disk (``> /dev/full``, a quota)
shows. Python would report it after the exit code is decided, as a warning and exit code 120;
here it is flushed first, and a failure is one line and exit code 1: the output is incomplete.
"""

from __future__ import annotations

import os
import signal
import sys

EXIT_INTERRUPTED = 130
EXIT_USER = 1


def main() -> None:
    from simsample.errors import Terminated, install_termination_handlers

    if sys.stdout is None:  # started with standard output closed (>&-): the output goes nowhere, as asked
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115  (for the life of the process)
    if hasattr(
        signal, "SIGXFSZ"
    ):  # a file size limit (ulimit -f) fails the write with EFBIG, a refusal, not a core dump
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        install_termination_handlers()  # SIGTERM and SIGHUP end like Ctrl-C, from the start
        from simsample.cli import main as cli_main
    except KeyboardInterrupt as exc:
        signum = exc.signum if isinstance(exc, Terminated) else 2
        sys.stderr.write(("terminated" if signum != 2 else "interrupted") + "\n")
        sys.exit(128 + signum)
    try:
        cli_main()
        code: object = 0
    except SystemExit as exc:
        code = exc.code
    sys.exit(finish_stdout(code))


def finish_stdout(code: object) -> object:
    """Flush standard output and return the exit code: ``code``, or 1 when the flush fails (a full
    disk, a quota, a file size limit), after one line on standard error. A failed stdout is then
    pointed at ``/dev/null``, so that the interpreter's own flush at exit finds nothing to report."""
    if sys.stdout is None:  # started with standard output closed (>&-): nothing to flush
        return code
    try:
        sys.stdout.flush()
        return code
    except BrokenPipeError:  # the reader went away (``| head``): not an error of this command
        _silence_stdout()
        return code
    except OSError as exc:
        _silence_stdout()
        if code not in (0, None):  # the command failed already and said why
            return code
        from simsample.errors import one_line
        from simsample.io.files import write_error

        err = write_error(exc)
        why = str(err).split(": ", 1)[-1] if err is not None else (exc.strerror or str(exc))
        try:
            sys.stderr.write(f"error: {one_line('standard output: ' + why + '; the output is incomplete')}\n")
            sys.stderr.flush()
        except OSError:
            pass
        return EXIT_USER


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
