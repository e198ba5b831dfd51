"""The ``hyfiss`` adapter's command line (``simsample apply|run --sim hyfiss``, ``simsample
profile features --sim hyfiss``) and ``simsample hyfiss pick-sm``; ``collect`` and ``estimate``
are the host's, built from the adapter's declarations. Each command parses its arguments and
calls the public API."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import click

from simsample.sdk import UserError

_PATH = click.Path(path_type=Path)


@click.command("apply")
@click.option("--plan", "plan_path", required=True, type=_PATH, help="The plan (plan.json).")
@click.option("--traces", required=True, type=_PATH, help="HyFiSS application folder (with configs/app.config).")
@click.option("--out", required=True, type=_PATH, help="New (or empty) folder for the sampled run.")
@click.option("--force", is_flag=True, help="Replace OUT if it is not empty.")
@click.option("--copy", is_flag=True, help="Copy configs and traces instead of linking them.")
@click.option("--prune", is_flag=True, help="Link (or copy) only the sampled kernels' trace folders.")
@click.option("--np", "np_ranks", default=1, show_default=True, help="MPI processes per kernel (NP in the script).")
@click.option(
    "--hyfiss",
    "hyfiss_home",
    type=_PATH,
    default=None,
    help="The HyFiSS folder (else HYFISS_HOME when the script runs).",
)
@click.option(
    "--device-config",
    default="./DEV-Def/QV100.config",
    show_default=True,
    help="Device config, relative to the HyFiSS folder or absolute.",
)
@click.option(
    "--app-config",
    type=_PATH,
    default=None,
    help="Use this app.config (e.g. from 'simsample hyfiss pick-sm') instead of the app's.",
)
@click.option("--split", is_flag=True, help="Not available for HyFiSS (see the message).")
def apply_cmd(
    plan_path: Path,
    traces: Path,
    out: Path,
    force: bool,
    copy: bool,
    prune: bool,
    np_ranks: int,
    hyfiss_home: Path | None,
    device_config: str,
    app_config: Path | None,
    split: bool,
) -> None:
    """Write a run script that simulates only the plan's kernels, and an app view for it."""
    import simsample

    simsample.apply(
        plan_path,
        traces,
        out,
        sim="hyfiss",
        force=force,
        copy=copy,
        prune=prune,
        np_ranks=np_ranks,
        hyfiss_home=hyfiss_home,
        device_config=device_config,
        app_config=app_config,
        split=split,
    )


@click.command("features")
@click.argument("traces", type=_PATH)
@click.option("-o", "--output", required=True, type=_PATH, help="Workload with trace features (parquet).")
def features_cmd(traces: Path, output: Path) -> None:
    """Per-kernel features of a HyFiSS app: dynamic warp instructions per execution-unit class."""
    import numpy as np

    from simsample.sdk import check_output_file, extras_path
    from simsample_hyfiss.app import parse_instn_config
    from simsample_hyfiss.picksm import kernel_class_counts
    from simsample_hyfiss.reader import load_app
    from simsample_hyfiss.units import CLASSES

    for written in (output, extras_path(output)):
        check_output_file(written, [traces], what="features table")
    folder = load_app(traces)
    instn = parse_instn_config(folder.paths.instn_config)
    ids = folder.workload.kernels["kernel_id"].tolist()
    counts = [kernel_class_counts(folder.paths, int(k), instn) for k in ids]
    k = folder.workload.kernels
    for cls in CLASSES:
        k[f"insts_{cls}"] = np.array([c.get(cls, 0) for c in counts], dtype=np.int64)
    folder.workload.to_parquet(output)
    click.echo(f"{output}: {len(k)} kernels, features {', '.join(folder.workload.feature_columns)}")


@click.command("run")
@click.option("--sampled", required=True, type=_PATH, help="Folder written by apply.")
@click.option(
    "--hyfiss", "hyfiss_home", type=_PATH, default=None, help="The HyFiSS folder (overrides the one given to apply)."
)
@click.option("--np", "np_ranks", type=int, default=None, help="MPI processes per kernel (overrides apply's --np).")
@click.option("--dry-run", is_flag=True, help="Print the command instead of running it.")
def run_cmd(sampled: Path, hyfiss_home: Path | None, np_ranks: int | None, dry_run: bool) -> None:
    """Run the script apply wrote (each sampled kernel once, then merge its reports)."""
    from simsample.sdk import check_input_folder

    check_input_folder(sampled, "folder written by 'simsample apply'")
    from simsample_hyfiss.apply import SCRIPT

    script = sampled / SCRIPT
    if not script.is_file():
        raise UserError(f"{sampled}: no {SCRIPT}; run 'simsample apply --sim hyfiss ...' first")
    env = dict(os.environ)
    extra = {}
    if hyfiss_home is not None:
        extra["HYFISS_HOME"] = str(hyfiss_home.resolve())
    if np_ranks is not None:
        extra["NP"] = str(np_ranks)
    if dry_run:
        click.echo(" ".join([*(f"{k}={shlex.quote(v)}" for k, v in extra.items()), "bash", shlex.quote(str(script))]))
        return
    env.update(extra)
    from simsample.sdk import run_in_group

    rc = run_in_group(["bash", str(script)], env=env)  # Ctrl-C ends mpirun and every rank too
    if rc != 0:
        raise UserError(f"{script} exited with status {rc}; see its messages above")
    click.echo(f"done; collect with: simsample collect --sim hyfiss --plan PLAN {shlex.quote(str(sampled))}")


@click.group("hyfiss")
def hyfiss_group() -> None:
    """HyFiSS's own tools."""


def _echo_json(doc: object) -> None:
    import json

    click.echo(json.dumps(doc, indent=2, default=str))


@hyfiss_group.command("pick-sm")
@click.argument("app", type=_PATH)
@click.option(
    "--device-config",
    "device_config",
    required=True,
    type=_PATH,
    help="HyFiSS device config (DEV-Def/<device>.config).",
)
@click.option(
    "-o", "--output", type=_PATH, default=None, help="Write a copy of app.config with -kernel_K_sampling_point set."
)
@click.option("--kernels", default=None, metavar="K,K,...", help="Only these kernels (1-based ids; default all).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output, with every SM's estimate.")
def pick_sm_cmd(app: Path, device_config: Path, output: Path | None, kernels: str | None, as_json: bool) -> None:
    """Per kernel, the SM whose CTA-set should run longest (HyFiSS's SM sampling by CTA-sets)."""
    from simsample.sdk import atomic_write_text
    from simsample_hyfiss.app import (
        find_app,
        parse_app_config,
        parse_instn_config,
        parse_issue_config,
        with_sampling_points,
    )
    from simsample_hyfiss.device import read_device
    from simsample_hyfiss.picksm import pick_kernel

    if output is not None:
        from simsample.sdk import check_output_file

        check_output_file(output, [app, device_config], what="app.config copy")
    paths = find_app(app)
    cfg = parse_app_config(paths.app_config)
    device = read_device(device_config)
    if kernels:
        try:
            chosen = [int(x) for x in kernels.split(",") if x.strip()]
        except ValueError:
            raise UserError(f"--kernels {kernels!r}: expected comma-separated kernel ids") from None
        for k in chosen:
            cfg.kernel(k)
    else:
        chosen = [k.id for k in cfg.kernels]
    if output is not None and output.resolve() == paths.app_config.resolve():
        raise UserError(f"{output}: is the app's own app.config; inputs are never modified: write the copy elsewhere")
    schedule = parse_issue_config(paths.issue_config)
    instn = parse_instn_config(paths.instn_config)
    picks = [pick_kernel(paths, k, schedule, instn, device) for k in chosen]
    if output is not None:
        atomic_write_text(output, with_sampling_points(cfg, {p.kernel: p.sm for p in picks}))
    if as_json:
        _echo_json(
            {
                "app_config": str(paths.app_config),
                "device_config": str(device_config),
                "issue_rate": device.issue_rate,
                "kernels": [
                    {
                        "kernel": p.kernel,
                        "name": cfg.kernel(p.kernel).name,
                        "sampling_point": p.sm,
                        "previous": cfg.kernel(p.kernel).sampling_point,
                        "sms": [
                            {"sm": s.sm, "ctas": s.ctas, "c_full_ir": s.c_full_ir, "counts": s.counts} for s in p.sms
                        ],
                    }
                    for p in picks
                ],
            }
        )
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=f"sampling points ({device.path.name}: IRate {device.issue_rate}, {device.sms} SMs)")
        for col in ("kernel", "name", "CTAs", "SMs", "SM", "C_fullIR", "mean C_fullIR", "was"):
            table.add_column(col, justify="left" if col == "name" else "right", overflow="fold")
        for p in picks:
            kern = cfg.kernel(p.kernel)
            mean = sum(s.c_full_ir for s in p.sms) / len(p.sms)
            was = kern.sampling_point
            table.add_row(
                str(p.kernel),
                kern.name,
                str(sum(s.ctas for s in p.sms)),
                str(len(p.sms)),
                str(p.sm),
                f"{p.best.c_full_ir:,.1f}",
                f"{mean:,.1f}",
                "-" if was is None else str(was),
            )
        Console(soft_wrap=True).print(table)
    if output is not None:
        click.echo(
            f"{output}: app.config with {len(picks)} sampling point(s); use it with 'simsample apply --sim hyfiss "
            f"--app-config {shlex.quote(str(output))}'",
            err=True,
        )
