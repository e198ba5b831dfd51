"""The console script: the smallest possible entry point, so that Ctrl-C is caught early.

``simsample`` starts by importing the CLI (click, rich, the plugin manager), which takes a good
fraction of a second; a Ctrl-C in that time would print Python's traceback. This module imports
nothing heavy itself, turns an interrupt during that import into the same one line and exit code
130 as an interrupt at any later moment (handled in :func:`simsample.cli.main`), then hands over.
"""

from __future__ import annotations

import sys

EXIT_INTERRUPTED = 130


def main() -> None:
    from simsample.errors import Terminated, install_termination_handlers

    try:
        install_termination_handlers()  # SIGTERM and SIGHUP end like Ctrl-C, from the start
        from simsample.cli import main as cli_main
    except KeyboardInterrupt as exc:
        signum = exc.signum if isinstance(exc, Terminated) else 2
        sys.stderr.write(("terminated" if signum != 2 else "interrupted") + "\n")
        sys.exit(128 + signum)
    cli_main()
