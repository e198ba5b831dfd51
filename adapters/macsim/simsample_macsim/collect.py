"""Results of MacSim runs, keyed by the plan's kernel ids."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import lazy_loader as lazy
import numpy as np

from simsample.sdk import ROLE_WARMUP, WEIGHTS_FILE, Plan, UserError, against_plan, note, plan_ids
from simsample_macsim.output import parse_log
from simsample_macsim.reader import FORMAT

pd = lazy.load("pandas")

#: the columns collect() reports; how the estimate treats each is declared with the adapter (MacSimAdapter.metrics in
#: adapter.py)
METRICS = ("cycles", "instructions")


def collect(outputs: Sequence[Path], plan: Plan | None = None) -> tuple[pd.DataFrame, dict[int, str]]:
    """One row per sampled kernel (per kernel found, without a plan): cycles, instructions, status;
    and, per kernel id whose result is unusable, why.

    Several logs may be given (for example one run per kernel); a kernel found in two of them is
    an error. Kernels the plan did not sample are left out with a note: warm-up kernels (``apply
    --warmup``) are among them, so their cycles never count as a sample's.
    """
    runs = [parse_log(Path(p)) for p in outputs]
    rows = []
    where: dict[int, Path] = {}
    for run in runs:
        for problem in run.problems:
            note(f"{run.log}: {problem}")
        for k in run.kernels:
            if k.number in where:
                raise UserError(
                    f"Kernel{k.number} appears in both {where[k.number]} and {run.log}; pass each kernel's run once"
                )
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
    warm = _warmup_numbers([r.log for r in runs])
    warmups = int(stray["number"].isin(warm).sum())
    if warmups:
        note(f"{warmups} warm-up kernel(s) (apply --warmup) ran for their cache state only; left out of the results")
    stray = stray[~stray["number"].isin(warm)]
    if len(stray):
        shown = ", ".join(f"Kernel{n}" for n in stray["number"].head(5))
        note(
            f"{len(stray)} simulated kernel(s) are not in the plan and are left out "
            f"({shown}{', ...' if len(stray) > 5 else ''})"
        )
    found = found[found["kernel_id"].notna()].copy()
    found["kernel_id"] = found["kernel_id"].astype(np.int64)
    details = {int(k): r for k, r in zip(found["kernel_id"], found["reason"]) if r}
    return against_plan(found, plan, METRICS), details


def _warmup_numbers(logs: Sequence[Path]) -> set[int]:
    """The ``KernelN`` numbers that ``simsample-weights.csv`` beside a log lists as warm-up (for
    the note only: whether a kernel counts is decided by the plan)."""
    out: set[int] = set()
    for log in logs:
        weights = Path(log).parent / WEIGHTS_FILE
        if not weights.is_file():
            continue
        try:
            table = pd.read_csv(weights)
        except (OSError, ValueError):
            continue
        if "role" in table.columns and "trace" in table.columns:
            traces = table.loc[table["role"] == ROLE_WARMUP, "trace"].dropna().astype(str)
            out |= {int(t[len("Kernel") :]) for t in traces if t.startswith("Kernel") and t[len("Kernel") :].isdigit()}
    return out
