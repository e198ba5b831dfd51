"""The ``collect`` and ``estimate`` commands of adapters whose output needs no extra options.

An adapter hands in its ``collect(outputs, plan) -> (results, details)`` function, the metric
columns it produces and its ratio metrics; the commands, options and output are then the same
for every such simulator, so that switching simulator means changing ``--sim`` only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from simsample.adapter_support.results import emit_results, results_for_estimate, results_options
from simsample.io.files import check_output_file
from simsample.planfile import Plan

_PATH = click.Path(path_type=Path)
CollectFn = Callable[[Sequence[Path], "Plan | None"], Any]


def collect_command(title: str, collect: CollectFn, help_text: str) -> click.Command:
    """``collect [--plan P] OUTPUT... [-o results.csv] [--json] [--allow-incomplete]``."""

    @click.command("collect", help=help_text)
    @click.option("--plan", "plan_path", type=_PATH, default=None, help="The plan the runs were made for (ids and missing kernels).")
    @click.argument("outputs", nargs=-1, required=True, type=_PATH)
    @results_options
    def cmd(plan_path: Path | None, outputs: tuple[Path, ...], output: Path | None, as_json: bool, allow_incomplete: bool) -> None:
        if output is not None:
            check_output_file(output, [*outputs, plan_path], what="results table")
        plan = Plan.read(plan_path) if plan_path is not None else None
        df, details = collect(outputs, plan)
        emit_results(df, output=output, as_json=as_json, allow_incomplete=allow_incomplete, title=f"{title} results", details=details,
                     inputs=[*outputs, plan_path])

    return cmd


def estimate_command(
    title: str, collect: CollectFn, metrics: Sequence[str], ratios: Mapping[str, tuple[str, str]], help_text: str
) -> click.Command:
    """``estimate --plan P OUTPUT... [--confidence C] [--json]`` (outputs or ``collect -o`` tables)."""

    @click.command("estimate", help=help_text)
    @click.option("--plan", "plan_path", required=True, type=_PATH, help="The plan the runs were made for.")
    @click.argument("outputs", nargs=-1, required=True, type=_PATH)
    @click.option("--confidence", default=None, type=float, help="Confidence level of the interval (default: the plan's).")
    @click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
    def cmd(plan_path: Path, outputs: tuple[Path, ...], confidence: float | None, as_json: bool) -> None:
        from simsample.cli.commands import print_estimates
        from simsample.sampling.estimate import estimate_results

        plan = Plan.read(plan_path)
        df = results_for_estimate(outputs, plan, collect, metrics)
        ests = estimate_results(plan, df, metrics=list(metrics), ratios=ratios, confidence=confidence)
        header = f"{title}: {len(df)} simulated kernel(s) standing for {plan.workload.get('launches')} launches"
        print_estimates(ests, plan, as_json, header=header)

    return cmd
