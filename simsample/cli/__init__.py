"""The ``simsample`` command line.

Errors a user can cause end as one line on standard error and exit code 1; click usage errors
also exit 1; anything unexpected is a bug: exit code 2, with the traceback only when
``SIMSAMPLE_DEBUG=1``.
"""

from __future__ import annotations

import os
import signal
import sys
import traceback

import click

from simsample._version import __version__
from simsample.errors import (
    Terminated,
    UserError,
    install_termination_handlers,
    one_line,
    received_interrupt,
    release_interrupts,
    unsettle_signals,
)

EXIT_OK, EXIT_USER, EXIT_BUG = 0, 1, 2


class _LazyGroup(click.Group):
    """The top-level group; its commands are attached on first need.

    ``--version`` is answered while the arguments are parsed, before any command is looked up,
    so it never imports a plugin; ``--help`` and every command attach the built-in and plugin
    commands first (plugins import no heavy library until a command uses it).
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        build_cli()
        return super().list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        build_cli()
        return super().get_command(ctx, cmd_name)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="simsample")
def cli() -> None:
    """Kernel sampling for GPU cycle-level simulation.

    \b
    simsample plan PROFILE -o plan.json                 (sampler: margin)
    simsample apply --sim accelsim --plan plan.json --traces TRACES --out SAMPLED
    simsample estimate --sim accelsim --plan plan.json SIM.LOG
    """


def _register_builtin_commands() -> None:
    """Attach the built-in commands: each module lists its own in ``COMMANDS`` (none of them
    imports this package, so the command line has no import cycle)."""
    from simsample.cli import commands, delegate, evaluate
    from simsample.report import command  # matplotlib is imported only when it runs

    for module in (commands, evaluate, delegate, command):
        for c in module.COMMANDS:
            cli.add_command(c)


_registered = False


def build_cli() -> click.Group:
    """The top-level group with built-in and plugin commands attached (once)."""
    global _registered
    if not _registered:
        _registered = True
        _register_builtin_commands()
        from simsample.manager import get_host

        get_host().add_commands(cli)
    return cli


EXIT_INTERRUPTED = 130  # 128 + SIGINT, what shells report for a command ended by Ctrl-C


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the CLI and map failures to exit codes.

    Ctrl-C is caught here, around everything (plugin loading at start-up included), so that it
    always ends in one line and exit code 130, never a traceback.
    """
    try:
        install_termination_handlers()  # SIGTERM, SIGHUP: as Ctrl-C, exit 128+signal
        code = _run(argv)  # a command that settled its signals (its output complete) keeps them settled
    except KeyboardInterrupt as exc:
        code = _interrupted(exc)
    # The command is over and its outputs are complete: a Ctrl-C during the interpreter's
    # teardown (freeing large tables can take a moment) must not turn it into a killed process.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
    if code >= 128 or received_interrupt() is not None:
        release_interrupts()  # clean-ups an interrupt left suspended run now, not at shutdown
    sys.exit(code)


def _interrupted(exc: BaseException | None = None) -> int:
    terminated = isinstance(exc, Terminated)
    try:
        click.echo("terminated" if terminated else "interrupted", err=True)
    except Exception:  # stderr closed: the exit code still says it
        pass
    return 128 + exc.signum if terminated else EXIT_INTERRUPTED


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code instead of exiting."""
    try:
        return _run(argv)
    finally:
        unsettle_signals()


def _run(argv: list[str] | None = None) -> int:
    try:
        rv = cli.main(args=argv, prog_name="simsample", standalone_mode=False)
        return rv if isinstance(rv, int) else EXIT_OK
    except UserError as exc:
        click.echo(f"error: {one_line(str(exc))}", err=True)
        return EXIT_USER
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort as exc:
        if isinstance(exc.__cause__, EOFError):  # click turns EOFError into Abort: a file ended early
            click.echo(
                f"error: unexpected end of input ({exc.__cause__ or 'truncated file'}); check that the input files "
                "are complete",
                err=True,
            )
            return EXIT_USER
        return _interrupted(exc.__cause__)
    except click.ClickException as exc:
        msg = one_line(exc.format_message())
        ctx = getattr(exc, "ctx", None)
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        click.echo(f"error: {msg}{hint}", err=True)
        return EXIT_USER
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt as exc:
        return _interrupted(exc)
    except RecursionError:
        click.echo(
            "error: input nested too deeply to read (a JSON or other document with thousands of nested levels); "
            "check the file",
            err=True,
        )
        return EXIT_USER
    except MemoryError:
        click.echo(
            "error: out of memory reading the input; give a smaller input, or lower the limits in docs/limits.md "
            "(SIMSAMPLE_MAX_...) so that it is refused early",
            err=True,
        )
        return EXIT_USER
    except OSError as exc:  # a full disk, a quota, a file size limit, a long name: the user's to fix
        from simsample.io.files import write_error

        err = write_error(exc)
        if err is None:
            return _bug(exc)
        click.echo(f"error: {one_line(str(err))}", err=True)
        return EXIT_USER
    except Exception as exc:  # a bug
        return _bug(exc)


def _interrupt_behind(exc: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C (or SIGTERM/SIGHUP) that ``exc`` was raised while handling, if any.

    An import cut short by a signal can leave a library half-initialised (``import pandas``
    interrupted under ``lazy_loader`` leaves a ``pandas`` without ``__version__``), and the clean-up
    that runs while the interrupt unwinds may trip over it: that error is the interrupt's doing,
    not a bug, and ends like the interrupt itself."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, KeyboardInterrupt):
            return cur
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return None


def _bug(exc: BaseException) -> int:
    """An unexpected exception: one line naming it, exit code 2 (the traceback with SIMSAMPLE_DEBUG=1)."""
    interrupt = _interrupt_behind(exc) or received_interrupt()
    if interrupt is not None:
        return _interrupted(interrupt)
    if os.environ.get("SIMSAMPLE_DEBUG"):
        traceback.print_exc()
    click.echo(
        f"internal error: {type(exc).__name__}: {one_line(str(exc), 300)} (this is a bug; rerun with "
        "SIMSAMPLE_DEBUG=1 for a traceback)",
        err=True,
    )
    return EXIT_BUG
