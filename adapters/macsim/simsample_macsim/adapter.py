"""The ``macsim`` adapter: its metric declarations, apply and collect options (registered by :mod:`.plugin`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from simsample.sdk import Adapter, Param, Workload, count, ratio
from simsample_macsim.reader import load_trace_folder
from simsample_macsim.warmup import DEFAULT_COVERAGE, DEFAULT_HORIZON, DEFAULT_WARMUP

if TYPE_CHECKING:
    import pandas as pd

    from simsample.sdk import Plan


class MacSimAdapter(Adapter):
    """MacSim: NVBit trace folders in, sampled trace folders out, per-kernel cycles back."""

    name = "macsim"
    description = "MacSim (NVBit traces: kernel_config.txt + KernelN/; results from its standard output)"
    title = "MacSim"

    metrics = (
        count("cycles", unit="cycles", doc="Simulated cycles of the kernel (MacSim's per-kernel cycle count)."),
        count("instructions", unit="instructions", doc="Instructions the kernel executed in the simulation."),
        ratio(
            "ipc",
            "instructions",
            "cycles",
            unit="instructions/cycle",
            doc="Instructions per cycle of the whole workload.",
        ),
    )
    apply_options = (
        Param("params", Path, None, "params.in to run with; copied with the knobs collection needs.", nullable=True),
        Param("force", bool, False, "Replace OUT if it is not empty."),
        Param("copy", bool, False, "Copy the sampled KernelN folders instead of linking them."),
        Param(
            "relative",
            bool,
            False,
            "trace_file_list names ./kernel_config.txt (run MacSim from OUT) instead of its absolute path.",
        ),
        Param("split", bool, False, "Not available for MacSim."),
        Param(
            "warmup",
            str,
            DEFAULT_WARMUP,
            "Launches run before each sampled one for their cache state: K, targeted or none.",
        ),
        Param(
            "warmup_horizon",
            int,
            DEFAULT_HORIZON,
            "targeted: launches looked back for the last touchers of a sample's lines and code.",
        ),
        Param(
            "warmup_coverage",
            float,
            DEFAULT_COVERAGE,
            "targeted: share of a sample's memory accesses whose last toucher the window must hold.",
        ),
        Param(
            "warmup_budget",
            float,
            None,
            "targeted: warm-up warp instructions allowed, as a share of the sampled launches' (None: no limit).",
            nullable=True,
        ),
        Param(
            "warmup_window",
            int,
            0,
            "Also name the W launches before each sampled one in SAMPLED_KERNEL_INFO.",
            minimum=0,
        ),
    )

    def read(self, path: Path) -> Workload:
        return load_trace_folder(path).workload

    def check_apply(self, **options: Any) -> None:
        from simsample.sdk import UserError
        from simsample_macsim.warmup import parse_warmup

        if options["split"]:
            raise UserError(
                "--split (one job per sampled launch) is not available for MacSim yet: its run and collect read one "
                "kernel_config.txt and one output folder per run; use apply without --split, or --sim accelsim"
            )
        parse_warmup(options["warmup"], options["warmup_horizon"], options["warmup_coverage"], options["warmup_budget"])

    def apply(self, plan: Plan, traces: Path | None, out: Path, **options: Any) -> Path:
        """A folder that runs only the plan's kernels and their warm-up launches (and the tracer's
        SAMPLED_KERNEL_INFO file); without ``traces`` only that file, the weights, the plan and
        params.in."""
        import shlex

        from simsample.sdk import UserError
        from simsample_macsim.apply import SAMPLED_INFO, apply_plan
        from simsample_macsim.warmup import parse_warmup

        o = options
        if o["split"]:
            raise UserError(
                "--split (one job per sampled launch) is not available for MacSim yet: its run and collect read one "
                "kernel_config.txt and one output folder per run; use apply without --split, or --sim accelsim"
            )
        spec = parse_warmup(o["warmup"], o["warmup_horizon"], o["warmup_coverage"], o["warmup_budget"])
        res = apply_plan(
            plan,
            out,
            traces=traces,
            params=o["params"],
            force=o["force"],
            copy=o["copy"],
            absolute=not o["relative"],
            warmup_window=o["warmup_window"],
            warmup=spec,
        )
        for change in res.params_changes:
            click.echo(f"params.in: {change}", err=True)
        plan_file = out / "simsample-plan.json"
        if res.kernels:
            shown = ", ".join(f"Kernel{n}" for n in res.kernels[:8]) + (", ..." if len(res.kernels) > 8 else "")
            warm = f", {len(res.warmup)} of them warm-up only ({spec.label()})" if res.warmup else ""
            click.echo(f"{out}: {len(res.kernels)} kernel(s) to simulate ({shown}){warm}")
            if not res.wrote_params:
                click.echo(
                    f"  copy your params.in into {out} (or rerun with --params) before running MacSim there", err=True
                )
            click.echo(
                f"  run:     simsample run --sim macsim --sampled {shlex.quote(str(out))} --macsim /path/to/macsim"
            )
            click.echo(
                f"  collect: simsample collect --sim macsim --plan {shlex.quote(str(plan_file))} "
                f"{shlex.quote(str(out / 'macsim.out'))}"
            )
        else:
            warm = f" and {len(res.warmup)} warm-up launches ({spec.label()})" if res.warmup else ""
            click.echo(f"{out}: {SAMPLED_INFO} for the NVBit tracer ({len(plan.sampled_ids)} launches{warm})")
            click.echo(
                f"  trace only those: SAMPLED_KERNEL_INFO={shlex.quote(str(out / SAMPLED_INFO))} TRACE_PATH=... "
                "<your program>"
            )
        return out

    def collect(
        self, outputs: Sequence[Path], plan: Plan | None = None, *, allow_incomplete: bool = False, **options: Any
    ) -> pd.DataFrame:
        """Per-kernel cycles and instructions from MacSim's standard output (macsim.out or its folder)."""
        from simsample_macsim.collect import collect

        df, details = collect(list(outputs), plan)
        df.attrs["details"] = details
        return df

    def full_run_results(self, outputs: Sequence[Path]) -> pd.DataFrame:
        """Every kernel of a full run's output(s), keyed by the trace folder's kernel ids."""
        return self.collect(list(outputs), None)

    def commands(self) -> Mapping[str, click.Command]:
        from simsample_macsim.commands import apply_cmd, features_cmd, run_cmd

        return {"apply": apply_cmd, "features": features_cmd, "run": run_cmd}


__all__ = ["MacSimAdapter"]
