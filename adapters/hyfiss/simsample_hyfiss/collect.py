"""Results of HyFiSS runs, keyed by the plan's kernel ids."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import lazy_loader as lazy
import numpy as np

from simsample.sdk import STATUS_MISSING, Plan, UserError, against_plan, note, plan_ids
from simsample_hyfiss.output import FIELDS, Summary, find_summaries, kernel_logs, parse_summary
from simsample_hyfiss.reader import FORMAT

pd = lazy.load("pandas")

#: the columns collect() reports; how the estimate treats each is declared with the adapter (HyFiSSAdapter.metrics in
#: adapter.py)
METRICS = tuple(FIELDS.values())  # cycles, sm_active_cycles, execution_time_ns, instructions


def collect(outputs: Sequence[Path], plan: Plan | None = None) -> tuple[pd.DataFrame, dict[int, str]]:
    """One row per sampled kernel (per report found, without a plan), with a status column; and,
    per kernel id whose result is unusable, why."""
    summaries: list[Summary] = []
    where: dict[int, Path] = {}
    for out in outputs:
        for p in find_summaries(Path(out)):
            s = parse_summary(p)
            if s.index in where:
                raise UserError(f"kernel {s.kernel} has two reports: {where[s.index]} and {p}; pass each once")
            where[s.index] = p
            summaries.append(s)
    rows = [
        {
            "index": s.index,
            **{c: s.values.get(c, np.nan) for c in METRICS},
            "status": s.status,
            "reason": f"{s.path} is the report of a crashed run: {s.reason}" if s.reason else "",
        }
        for s in summaries
    ]
    found = pd.DataFrame(rows, columns=["index", *METRICS, "status", "reason"])
    idx = found["index"].astype(int).tolist()
    found["kernel_id"] = plan_ids(plan, [i + 1 for i in idx], idx, FORMAT)
    stray = found[found["kernel_id"].isna()]
    if len(stray):
        note(
            f"{len(stray)} report(s) are for kernels the plan did not sample and are left out (kernel "
            f"{int(stray['index'].iloc[0]) + 1}, ...)"
        )
    found = found[found["kernel_id"].notna()].copy()
    found["kernel_id"] = found["kernel_id"].astype(np.int64)
    details = {int(k): r for k, r in zip(found["kernel_id"], found["reason"]) if r}
    table = against_plan(found, plan, METRICS)
    # a sampled kernel with no report: its simulation failed; name the log the run script kept
    logs: dict[int, Path] = {}
    for out in outputs:
        logs.update(kernel_logs(Path(out)))
    if logs:
        missing = set(table.loc[table["status"] == STATUS_MISSING, "kernel_id"].astype(int))
        order = sorted(logs)
        for i, k in zip(order, plan_ids(plan, [i + 1 for i in order], order, FORMAT)):
            if k is not None and int(k) in missing:
                details.setdefault(int(k), f"its simulation (HyFiSS kernel {i + 1}) failed; read {logs[i]}")
    return table, details
