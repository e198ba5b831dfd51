"""Inputs for the report tests, made by the CLI itself on the bundled example profile.

The plan, the ``estimate --json`` and ``evaluate --json`` documents are produced exactly as a
user would produce them, so the tests read what those commands print today.
"""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from simsample.cli import run
from simsample.reading import load_workload
from tests.helpers import ROOT

PROFILE = ROOT / "examples" / "profile" / "train_step.pt.trace.json.gz"


@dataclass
class ReportInputs:
    profile: Path
    plan: Path
    estimate: Path
    evaluations: list[Path]


def _capture(argv: list[str], out: Path) -> None:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = run(argv)
    assert code == 0, argv
    out.write_text(buf.getvalue())


def make_inputs(folder: Path, *, sampler: str = "stem") -> ReportInputs:
    """A plan of the example profile, an estimate from launch values, two evaluations (sweeps)."""
    plan = folder / "plan.json"
    _capture(["plan", str(PROFILE), "--sampler", sampler, "--seed", "1", "-o", str(plan)], folder / "plan.txt")
    # stand-in simulator results: two metrics derived from the profile's own durations
    wl = load_workload([PROFILE])
    doc = json.loads(plan.read_text())
    ids = sorted({s["kernel_id"] for s in doc["samples"]})
    dur = wl.kernels.set_index("kernel_id").loc[ids, "duration_ns"].to_numpy()
    values = folder / "values.csv"
    pd.DataFrame({"kernel_id": ids, "cycles": (dur * 1.4).round(), "instructions": (dur * 37).round()}).to_csv(
        values, index=False
    )
    estimate = folder / "estimate.json"
    _capture(["estimate", "--plan", str(plan), str(values), "--json"], estimate)
    evaluations = []
    for name, sweep in (("stem", "eps=0.05,0.25"), ("random", "rate=0.01,0.05")):
        ev = folder / f"eval-{name}.json"
        _capture(["evaluate", str(PROFILE), "--sampler", name, "--repeat", "2", "--sweep", sweep, "--json"], ev)
        evaluations.append(ev)
    return ReportInputs(profile=PROFILE, plan=plan, estimate=estimate, evaluations=evaluations)


def report_argv(inputs: ReportInputs, out: Path) -> list[str]:
    argv = ["report", str(inputs.plan), "--profile", str(inputs.profile), "--estimate", str(inputs.estimate)]
    for ev in inputs.evaluations:
        argv += ["--evaluate", str(ev)]
    return argv + ["-o", str(out)]
