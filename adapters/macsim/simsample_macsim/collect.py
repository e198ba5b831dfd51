"""Results of MacSim runs, keyed by the plan's kernel ids."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import lazy_loader as lazy
import numpy as np

from simsample.adapter_support import against_plan, note, plan_ids
from simsample.errors import UserError
from simsample.plan import Plan

from simsample_macsim.output import parse_log
from simsample_macsim.reader import FORMAT

pd = lazy.load("pandas")

METRICS = ("cycles", "instructions")
RATIOS = {"ipc": ("instructions", "cycles")}


def collect(outputs: Sequence[Path], plan: Plan | None = None) -> tuple[pd.DataFrame, dict[int, str]]:
    """One row per sampled kernel (per kernel found, without a plan): cycles, instructions, status;
    and, per kernel id whose result is unusable, why.

    Several logs may be given (for example one run per kernel); a kernel found in two of them is
    an error. Kernels the plan did not sample are left out with a note.
    """
    runs = [parse_log(Path(p)) for p in outputs]
    rows = []
    where: dict[int, Path] = {}
    for run in runs:
        for problem in run.problems:
            note(f"{run.log}: {problem}")
        for k in run.kernels:
            if k.number in where:
                raise UserError(f"Kernel{k.number} appears in both {where[k.number]} and {run.log}; pass each kernel's run once")
            where[k.number] = run.log
            rows.append(
                {
                    "number": k.number,
                    "cycles": float(k.cycles) if k.status == "ok" and k.cycles is not None else np.nan,
                    "instructions": float(k.instructions) if k.status == "ok" else np.nan,
                    "status": k.status,
                    "reason": k.reason,
                }
            )
    found = pd.DataFrame(rows, columns=["number", *METRICS, "status", "reason"])
    numbers = found["number"].astype(int).tolist()
    found["kernel_id"] = plan_ids(plan, numbers, numbers, FORMAT)
    stray = found[found["kernel_id"].isna()]
    if len(stray):
        shown = ", ".join(f"Kernel{n}" for n in stray["number"].head(5))
        note(f"{len(stray)} simulated kernel(s) are not in the plan and are left out ({shown}{', ...' if len(stray) > 5 else ''})")
    found = found[found["kernel_id"].notna()].copy()
    found["kernel_id"] = found["kernel_id"].astype(np.int64)
    details = {int(k): r for k, r in zip(found["kernel_id"], found["reason"]) if r}
    return against_plan(found, plan, METRICS), details
