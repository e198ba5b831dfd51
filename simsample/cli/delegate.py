"""Commands that hand their work to the simulator adapter named by ``--sim``.

``simsample apply --sim accelsim ...`` finds the adapter and runs the click command it returns
for ``apply`` with the rest of the command line, so every adapter defines its own options
while the host keeps one entry point per verb.
"""

from __future__ import annotations

import click

from simsample.cli.commands import generic_estimate, profile_group
from simsample.errors import UserError

_PASS = {"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []}


def _split_sim(args: list[str]) -> tuple[str | None, list[str]]:
    """Pull ``--sim NAME`` / ``--sim=NAME`` out of a raw argument list."""
    rest: list[str] = []
    sim = None
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--sim":
            if i + 1 >= len(args):
                raise UserError("--sim needs a simulator name")
            sim = args[i + 1]
            i += 2
            continue
        if a.startswith("--sim="):
            sim = a.split("=", 1)[1]
            i += 1
            continue
        rest.append(a)
        i += 1
    return sim, rest


def _dispatch(verb: str, prog: str, args: list[str], fallback: click.Command | None = None) -> None:
    from simsample.manager import get_host

    sim, rest = _split_sim(args)
    if sim is None:
        if fallback is not None:
            fallback.main(args=rest, prog_name=prog, standalone_mode=False)
            return
        if any(a in ("-h", "--help") for a in rest) or not rest:
            installed = ", ".join(sorted(get_host().adapters())) or "none"
            click.echo(
                f"Usage: {prog} --sim NAME [OPTIONS] ...\n\n  Runs the {verb} step of the named simulator adapter "
                f"(installed: {installed}).\n  '{prog} --sim NAME --help' shows that adapter's options."
            )
            if not rest:
                raise UserError(f"{prog} needs --sim NAME (installed adapters: {installed})")
            return
        raise UserError(
            f"{prog} needs --sim NAME (installed adapters: {', '.join(sorted(get_host().adapters())) or 'none'})"
        )
    from simsample.cli.common import request_csv

    own = verb in _CSV_VERBS and verb in get_host().adapter(sim).commands()
    wants_csv = own and "--csv" in rest  # an adapter's own collect/estimate: the shared table printers answer --csv
    request_csv(wants_csv)
    if wants_csv:
        rest = [a for a in rest if a != "--csv"]
    from simsample.cli.simulator import adapter_command
    from simsample.plugin_base import Adapter

    adapter = get_host().adapter(sim)
    cmd = adapter_command(adapter, verb)
    if cmd is None:
        has = sorted(
            {
                *adapter.commands(),
                "collect",
                "estimate",
                *(["apply"] if type(adapter).apply is not Adapter.apply else []),
            }
        )
        raise UserError(f"adapter {sim} has no '{verb}' step (it has: {', '.join(has)})")
    cmd.main(args=rest, prog_name=f"{prog} --sim {sim}", standalone_mode=False)


#: verbs whose table an adapter prints through the host's shared printers, which take ``--csv``
_CSV_VERBS = ("estimate", "collect")


class _Verbatim(click.Command):
    """A command that hands its arguments on exactly as given.

    click drops the first ``--`` while parsing, which the adapter's own command then never sees:
    ``run --sim accelsim ... -- -pkp_enable 1`` would reach it as ``... -pkp_enable 1`` and fail
    on ``-p``. The arguments are kept before parsing and passed on untouched.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["simsample.verbatim_args"] = list(args)
        return super().parse_args(ctx, args)


def _make(
    verb: str,
    help_text: str,
    fallback: click.Command | None = None,
    group: click.Group | None = None,
    prog: str | None = None,
) -> None:
    @click.command(verb, cls=_Verbatim, context_settings=_PASS, help=help_text, add_help_option=False)
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    @click.pass_context
    def cmd(ctx: click.Context, args: tuple[str, ...]) -> None:
        _dispatch(verb, prog or f"simsample {verb}", ctx.meta.get("simsample.verbatim_args", list(args)), fallback)

    if group is not None:
        group.add_command(cmd)
    else:
        COMMANDS.append(cmd)


#: what this module adds to the top-level group (:func:`simsample.cli.build_cli`)
COMMANDS: list[click.Command] = []

_make("apply", "Write the simulator inputs that run only the plan's launches (--sim NAME).")
_make("collect", "Parse simulator output into per-launch results (--sim NAME).")
_make("run", "Run the simulator on sampled inputs (--sim NAME).")
_make(
    "estimate",
    "Whole-workload estimate with its interval: from simulator output (--sim NAME ...) or "
    "from a CSV of kernel_id,value (--plan PLAN VALUES.csv).",
    fallback=generic_estimate,
)
_make(
    "features",
    "Derive per-launch features from simulator traces (--sim NAME).",
    group=profile_group,
    prog="simsample profile features",
)
