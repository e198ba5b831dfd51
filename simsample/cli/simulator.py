"""``simsample collect --sim NAME`` and ``simsample estimate --sim NAME`` for every adapter, and
``simsample apply --sim NAME`` for an adapter without an ``apply`` command of its own.

The commands are built from what the adapter declares (its ``collect_options`` and
``apply_options`` become command options, its metric declarations tell the estimate what to sum
and what to divide) and call the public API: ``simsample.apply``, ``simsample.collect`` and
``simsample.estimate(plan, simsample.collect(...))``. A script and a shell session therefore give
the same table and the same numbers, for any adapter.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from simsample.errors import IncompleteResults, UserError
from simsample.plugin_base import Adapter

if TYPE_CHECKING:
    from simsample.plugin_base import Param

_PATH = click.Path(path_type=Path)
_CTX = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def param_option(p: Param) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The click option of an adapter's option declaration (``traces`` → ``--traces``)."""
    flag = "--" + p.name.replace("_", "-")
    if p.type is bool and not p.multiple:
        return click.option(flag, p.name, is_flag=True, default=bool(p.default), help=p.help)
    kind: Any = (
        _PATH if p.type is Path else (click.Choice(list(p.choices)) if p.choices else str if p.type is str else None)
    )
    kwargs: dict[str, Any] = {"help": p.help, "multiple": p.multiple, "show_default": p.default not in (None, (), "")}
    if kind is not None:
        kwargs["type"] = kind
    return click.option(flag, p.name, default=p.default if not p.multiple else (), **kwargs)


#: the host's own options of the commands it builds: an adapter's option may not take their names
_RESERVED = {
    "apply": {"plan", "plan_path", "traces", "out"},
    "collect": {"plan", "plan_path", "outputs", "output", "as_json", "json", "as_csv", "csv", "allow_incomplete"},
    "estimate": {"plan", "plan_path", "outputs", "confidence", "as_json", "json", "as_csv", "csv"},
}


def _declared(adapter: Adapter, verb: str, params: tuple[Param, ...]) -> tuple[Param, ...]:
    clash = sorted({p.name for p in params} & _RESERVED[verb])
    if clash:
        raise UserError(
            f"adapter {adapter.name}: its {verb} option {clash[0]!r} has the name of the command's own option; "
            "the adapter must rename it"
        )
    return params


def _options(adapter: Adapter, given: dict[str, Any]) -> dict[str, Any]:
    """The adapter's options as given on the command line (None and empty ones left to their defaults)."""
    names = {p.name for p in adapter.collect_options}
    return {k: v for k, v in given.items() if k in names and v is not None and v != ()}


def _plan_path(adapter: Adapter, plan: Path | None, outputs: tuple[Path, ...]) -> Path | None:
    from simsample.library import find_plan

    return plan if plan is not None else find_plan(list(outputs), sim=adapter.name)


def collect_command(adapter: Adapter) -> click.Command:
    """``collect [--plan P] OUTPUT... [-o results.csv] [--json|--csv] [--allow-incomplete]`` and the adapter's
    options."""

    def cmd(
        plan_path: Path | None,
        outputs: tuple[Path, ...],
        output: Path | None,
        as_json: bool,
        as_csv: bool,
        allow_incomplete: bool,
        **opts: Any,
    ) -> None:
        from simsample.cli.results import emit_results
        from simsample.cli.tables import one_of
        from simsample.io.files import check_output_file
        from simsample.library import collect
        from simsample.planfile import Plan

        one_of(as_json, as_csv)
        options = _options(adapter, opts)
        inputs = [*outputs, plan_path, *[v for v in options.values() if isinstance(v, Path)]]
        if output is not None:
            if output.is_dir():
                raise UserError(f"{output}: is a folder; give a file name for the results table (e.g. results.csv)")
            check_output_file(output, inputs, what="results table")
        found = _plan_path(adapter, plan_path, outputs)
        plan = Plan.read(found) if found is not None else None
        df = collect(list(outputs), sim=adapter.name, plan=plan, allow_incomplete=allow_incomplete, **options)
        emit_results(
            df,
            output=output,
            as_json=as_json,
            as_csv=as_csv,
            allow_incomplete=True,
            title=f"{adapter.title or adapter.name} results",
            details=df.attrs.get("details"),
            table_columns=_table_columns(adapter, df),
            inputs=inputs,
        )

    from simsample.cli.results import results_options

    cmd = results_options(cmd)
    cmd = click.option("--csv", "as_csv", is_flag=True, help="The table as CSV on standard output.")(cmd)
    for p in reversed(_declared(adapter, "collect", adapter.collect_options)):
        cmd = param_option(p)(cmd)
    cmd = click.argument("outputs", nargs=-1, required=True, type=_PATH)(cmd)
    cmd = click.option(
        "--plan",
        "plan_path",
        type=_PATH,
        default=None,
        help=(
            "The plan the run was made for (one row per sampled launch; default: the plan a folder written by apply "
            "holds)."
        ),
    )(cmd)
    return click.command(
        "collect",
        context_settings=_CTX,
        help=f"Per-launch results from {adapter.name} output "
        "(files or folders, and/or results tables written by collect -o).",
    )(cmd)


def _table_columns(adapter: Adapter, df: Any) -> list[str]:
    """The printed table's columns: kernel_id, status and the declared counts and ratios (CSV and JSON have every
    column)."""
    shown = [m.name for m in adapter.metrics if m.kind != "none" and m.name in df.columns]
    return ["kernel_id", "status", *shown]


def estimate_command(adapter: Adapter) -> click.Command:
    """``estimate [--plan P] OUTPUT... [--confidence C] [--json|--csv]`` and the adapter's options."""

    def cmd(
        plan_path: Path | None,
        outputs: tuple[Path, ...],
        confidence: float | None,
        as_json: bool,
        as_csv: bool,
        **opts: Any,
    ) -> None:
        from simsample.cli.commands import print_estimates
        from simsample.cli.tables import one_of
        from simsample.library import collect, estimate
        from simsample.planfile import Plan

        one_of(as_json, as_csv)
        found = _plan_path(adapter, plan_path, outputs)
        if found is None:
            raise UserError("estimate needs --plan PLAN (the plan the run was made for)")
        plan = Plan.read(found)
        try:
            results = collect(list(outputs), sim=adapter.name, plan=plan, **_options(adapter, opts))
        except IncompleteResults as exc:  # the same refusal as the API's, with the advice of this step
            raise UserError(f"cannot estimate: {exc.what}; simulate them, then estimate again") from None
        est = estimate(plan, results, confidence=confidence)
        launches = plan.workload.get("launches")
        header = f"{adapter.title or adapter.name}: {est.launches:,} simulated launch(es) standing for " + (
            f"{launches:,}" if isinstance(launches, int) else "the plan's launches"
        )
        if est.projected:
            header += f" ({est.projected} projected)"
        if est.left_out:
            header += f"; not reported for every launch, left out: {', '.join(est.left_out)}"
        print_estimates(est, plan, as_json, header=header, as_csv=as_csv)

    cmd = click.option("--csv", "as_csv", is_flag=True, help="The table as CSV on standard output.")(cmd)
    cmd = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")(cmd)
    cmd = click.option(
        "--confidence", default=None, type=float, help="Confidence level of the intervals (default: the plan's)."
    )(cmd)
    for p in reversed(_declared(adapter, "estimate", adapter.collect_options)):
        cmd = param_option(p)(cmd)
    cmd = click.argument("outputs", nargs=-1, required=True, type=_PATH)(cmd)
    cmd = click.option(
        "--plan",
        "plan_path",
        type=_PATH,
        default=None,
        help="The plan the run was made for (default: the plan a folder written by apply holds).",
    )(cmd)
    return click.command(
        "estimate",
        context_settings=_CTX,
        help="Whole-workload estimates with their intervals from "
        f"{adapter.name} output (or results tables written by collect -o): counts summed, "
        "ratios such as IPC as the ratio of two estimated totals.",
    )(cmd)


def apply_command(adapter: Adapter) -> click.Command:
    """``apply --plan P [--traces T] --out OUT`` and the adapter's ``apply_options``, for an
    adapter without an ``apply`` command of its own."""

    def cmd(plan_path: Path, traces: Path | None, out: Path, **opts: Any) -> None:
        from simsample.library import apply
        from simsample.planfile import Plan

        names = {p.name for p in adapter.apply_options}
        options = {k: v for k, v in opts.items() if k in names and v is not None and v != ()}
        plan = Plan.read(plan_path)
        done = apply(plan_path, traces, out, sim=adapter.name, **options)
        click.echo(
            f"{done}: the simulator inputs of {len(plan.sampled_ids):,} sampled launch(es), with the plan and its "
            "weights"
        )

    for p in reversed(_declared(adapter, "apply", adapter.apply_options)):
        cmd = param_option(p)(cmd)
    cmd = click.option("--out", required=True, type=_PATH, help="New (or empty) folder for the sampled inputs.")(cmd)
    cmd = click.option(
        "--traces", type=_PATH, default=None, help="The simulator's trace folder the plan was made for."
    )(cmd)
    cmd = click.option("--plan", "plan_path", required=True, type=_PATH, help="The plan (plan.json).")(cmd)
    return click.command(
        "apply",
        context_settings=_CTX,
        help=f"Write the {adapter.title or adapter.name} inputs that run only the plan's launches into a new folder.",
    )(cmd)


def adapter_command(adapter: Adapter, verb: str) -> click.Command | None:
    """The click command of ``verb`` for ``adapter``: its own if it has one, else the host's
    ``apply``/``collect``/``estimate`` built from its declarations (None: it has no such step)."""
    own = dict(adapter.commands())
    if verb in own:
        return own[verb]
    if verb == "apply" and type(adapter).apply is not Adapter.apply:
        return apply_command(adapter)
    if verb == "collect":
        return collect_command(adapter)
    if verb == "estimate":
        return estimate_command(adapter)
    return None
