"""The ``simsample report`` command.

Only this command pays for matplotlib: the figures module is imported inside the command's body,
so registering the command (every start of the CLI) imports nothing heavy.
"""

from __future__ import annotations

from pathlib import Path

import click

from simsample.cli.common import profile_options, reader_options


@click.command("report")
@click.argument("plan_path", metavar="PLAN", type=click.Path(path_type=Path))
@click.option(
    "--estimate",
    "estimate_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Output of 'simsample estimate ... --json'.",
)
@click.option(
    "--evaluate",
    "evaluate_paths",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Output of 'simsample evaluate ... --json' (repeatable: one curve per file, e.g. one per sampler).",
)
@click.option(
    "--profile",
    "profile_paths",
    multiple=True,
    type=click.Path(path_type=Path),
    help="The profile the plan was made from (repeatable for several files of one run): top kernels and distributions.",
)
@profile_options
@click.option("-o", "--output", required=True, type=click.Path(path_type=Path), help="HTML file to write.")
def report_cmd(
    plan_path: Path,
    estimate_path: Path | None,
    evaluate_paths: tuple[Path, ...],
    profile_paths: tuple[Path, ...],
    fmt: str | None,
    rank: int | None,
    output: Path,
) -> None:
    """Write one self-contained HTML page: workload, plan, clusters, distributions, estimate, evaluation.

    \b
    simsample report plan.json --profile run.sqlite --estimate est.json -o report.html
    simsample report plan.json --evaluate stem.json --evaluate root.json -o report.html

    The page needs no network to view (inline SVG and CSS) and prints.
    """
    from simsample.io.files import atomic_write_text, check_output_file
    from simsample.planfile import Plan
    from simsample.report.inputs import (
        check_estimate_plan,
        check_evaluation_plan,
        read_estimate,
        read_evaluation,
    )

    check_output_file(output, [plan_path, estimate_path, *evaluate_paths, *profile_paths], what="report")
    plan = Plan.read(plan_path)
    estimate = read_estimate(estimate_path) if estimate_path is not None else None
    evaluations = [(p.name, read_evaluation(p)) for p in evaluate_paths]
    if estimate is not None:
        check_estimate_plan(estimate, plan, estimate_path, plan_path)
    for p, (_, doc) in zip(evaluate_paths, evaluations):
        check_evaluation_plan(doc, plan, p, plan_path)
    workload = None
    if profile_paths:
        from simsample.library import read

        options = reader_options(rank)
        workload = read(*profile_paths, format=fmt, rank=options.get("rank"), columns=options.get("columns"))
        if workload.shape_fingerprint != plan.workload.get("shape_fingerprint"):
            plan.check_workload(workload, what="profile")

    from simsample.report.content import build
    from simsample.report.render import render

    report = build(
        plan,
        plan_path,
        workload=workload,
        profile_path=profile_paths[0] if profile_paths else None,
        estimate=estimate,
        estimate_path=estimate_path,
        evaluations=evaluations,
    )
    text = render(report)
    atomic_write_text(output, text)
    click.echo(f"{output}: report of {len(plan.workload_clusters):,} clusters, {len(text) / 1e6:.2f} MB")


#: what this module adds to the top-level group (:func:`simsample.cli.build_cli`)
COMMANDS = (report_cmd,)
