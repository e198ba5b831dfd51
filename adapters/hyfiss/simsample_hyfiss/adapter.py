"""The ``hyfiss`` adapter: its metric declarations, apply and collect options (registered by :mod:`.plugin`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from simsample.sdk import Adapter, Param, Workload, count, ratio
from simsample_hyfiss.reader import load_app

if TYPE_CHECKING:
    import pandas as pd

    from simsample.sdk import Plan


class HyFiSSAdapter(Adapter):
    """HyFiSS: one simulator invocation per sampled kernel; results from the merged reports."""

    name = "hyfiss"
    description = (
        "HyFiSS (app folders: configs/app.config + sass/memory traces; results from outputs/kernel-K-summary.txt)"
    )
    title = "HyFiSS"

    metrics = (
        count("cycles", unit="cycles", doc="Simulated cycles of the kernel."),
        count("sm_active_cycles", unit="cycles", doc="Cycles the SMs were active, summed as HyFiSS reports them."),
        count("execution_time_ns", unit="ns", doc="The kernel's simulated execution time."),
        count("instructions", unit="warp instructions", doc="Warp instructions the kernel executed in the simulation."),
        ratio(
            "ipc",
            "instructions",
            "cycles",
            unit="warp instructions/cycle",
            doc="Warp instructions per cycle of the whole workload.",
        ),
    )
    apply_options = (
        Param("force", bool, False, "Replace OUT if it is not empty."),
        Param("copy", bool, False, "Copy configs and traces instead of linking them."),
        Param("prune", bool, False, "Link (or copy) only the sampled kernels' trace folders."),
        Param("np_ranks", int, 1, "MPI processes per kernel (NP in the script).", minimum=1),
        Param("hyfiss_home", Path, None, "The HyFiSS folder (else HYFISS_HOME when the script runs).", nullable=True),
        Param(
            "device_config", str, "./DEV-Def/QV100.config", "Device config, relative to the HyFiSS folder or absolute."
        ),
        Param(
            "app_config",
            Path,
            None,
            "Use this app.config (e.g. from 'simsample hyfiss pick-sm') instead of the app's.",
            nullable=True,
        ),
        Param("split", bool, False, "Not available for HyFiSS."),
    )

    def read(self, path: Path) -> Workload:
        return load_app(path).workload

    def check_apply(self, **options: Any) -> None:
        from simsample.sdk import UserError

        if options["split"]:
            raise UserError(
                "--split is not available for HyFiSS yet: the run script apply writes already runs one simulator "
                "call per sampled kernel (run its lines as separate jobs by hand); use apply without --split"
            )

    def apply(self, plan: Plan, traces: Path | None, out: Path, **options: Any) -> Path:
        """A run script that simulates only the plan's kernels, and an app view for it."""
        import shlex

        from simsample.sdk import UserError
        from simsample_hyfiss.apply import SCRIPT, apply_plan

        o = options
        if o["split"]:
            raise UserError(
                "--split is not available for HyFiSS yet: the run script apply writes already runs one simulator "
                "call per sampled kernel (run its lines as separate jobs by hand); use apply without --split"
            )
        if traces is None:
            raise UserError(
                "apply --sim hyfiss needs the HyFiSS application folder (--traces, with configs/app.config)"
            )
        home = str(o["hyfiss_home"].resolve()) if o["hyfiss_home"] is not None else ""
        plan_file = out / "simsample-plan.json"
        res = apply_plan(
            plan,
            out,
            traces=traces,
            force=o["force"],
            copy=o["copy"],
            prune=o["prune"],
            np_ranks=o["np_ranks"],
            hyfiss_home=home,
            device_config=o["device_config"],
            app_config=o["app_config"],
            plan_name=str(plan_file),
        )
        shown = ", ".join(str(k) for k in res.kernels[:10]) + (", ..." if len(res.kernels) > 10 else "")
        click.echo(f"{out}: {len(res.kernels)} kernel(s) to simulate ({shown})")
        hint = "" if home else " --hyfiss /path/to/HyFiSS"
        click.echo(
            f"  run:     simsample run --sim hyfiss --sampled {shlex.quote(str(out))}{hint}   (or: bash "
            f"{shlex.quote(str(out / SCRIPT))})"
        )
        click.echo(
            f"  collect: simsample collect --sim hyfiss --plan {shlex.quote(str(plan_file))} {shlex.quote(str(out))}"
        )
        return out

    def collect(
        self, outputs: Sequence[Path], plan: Plan | None = None, *, allow_incomplete: bool = False, **options: Any
    ) -> pd.DataFrame:
        """Per-kernel results from HyFiSS reports (kernel-K-summary.txt files, or folders holding them)."""
        from simsample_hyfiss.collect import collect

        df, details = collect(list(outputs), plan)
        df.attrs["details"] = details
        return df

    def full_run_results(self, outputs: Sequence[Path]) -> pd.DataFrame:
        """Every kernel of a full run's output(s), keyed by the trace folder's kernel ids."""
        return self.collect(list(outputs), None)

    def commands(self) -> Mapping[str, click.Command]:
        from simsample_hyfiss.commands import apply_cmd, features_cmd, run_cmd

        return {"apply": apply_cmd, "features": features_cmd, "run": run_cmd}


__all__ = ["HyFiSSAdapter"]
