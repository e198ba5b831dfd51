"""``simsample-weights.csv`` and ``simsample-plan.json``: what every sampled folder carries.

The weights file is for people and scripts that want the weights without reading the plan: one
row per distinct sampled kernel id, in launch order, with the columns ``kernel_id, weight,
cluster, launch`` (the plan's id, the summed weight of its samples, its cluster, its 0-based launch
position in the plan's workload), then any columns the adapter adds (such as the trace simulated
for it). A folder that also runs warm-up launches (launches simulated only to bring the caches
into the state the full run left them in) has a ``role`` column after the standard four:
``sample`` for the plan's launches, ``warmup`` for the others, listed with weight 0 and cluster
-1 so that anyone summing ``weight x value`` over the file still gets the plan's estimate. The plan
itself is copied as ``simsample-plan.json`` so that the folder is self-describing and ``collect``/``estimate`` can be
pointed at it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import lazy_loader as lazy
import numpy as np

from simsample.io.files import atomic_write_text
from simsample.planfile import Plan

pd = lazy.load("pandas")

WEIGHTS_FILE = "simsample-weights.csv"
PLAN_FILE = "simsample-plan.json"
WEIGHTS_COLUMNS = ("kernel_id", "weight", "cluster", "launch")
ROLE_SAMPLE, ROLE_WARMUP = "sample", "warmup"


def format_number(x: float) -> str:
    """A float as CSV text: integral values without a fraction (``4``), others in the shortest
    form that reads back exactly (``0.1``, not ``0.10000000000000001``)."""
    x = float(x)
    if math.isfinite(x) and x.is_integer() and abs(x) < 1e16:  # beyond, repr writes an exponent
        return str(int(x))
    return repr(x)


def weights_table(
    plan: Plan,
    extra: Mapping[str, Mapping[int, object]] | None = None,
    warmup: Mapping[int, tuple[int, object]] | None = None,
) -> pd.DataFrame:
    """The weights table of ``plan``; ``extra`` adds columns after the standard four, each a
    mapping from kernel id to value (``""`` where a kernel has none). ``warmup`` maps the kernel
    id of each warm-up launch to its launch position and its value of the first extra column;
    when non-empty the table has the ``role`` column and the warm-up rows, in launch order."""
    w = plan.weights_by_id()
    out = pd.DataFrame(
        {
            "kernel_id": w["kernel_id"].astype(np.int64),
            "weight": w["weight"].astype(np.float64),
            "cluster": w["cluster"].astype(np.int64),
            "launch": w["launch"].astype(np.int64),
        }
    )
    extra = dict(extra or {})
    if warmup is not None:
        clash = set(warmup) & set(out["kernel_id"].tolist())
        if clash:
            raise ValueError(f"warm-up kernel ids {sorted(clash)[:5]} are sampled launches too")
        first = next(iter(extra), None)
        warm = pd.DataFrame(
            {
                "kernel_id": np.array(list(warmup), dtype=np.int64),
                "weight": np.zeros(len(warmup)),
                "cluster": np.full(len(warmup), -1, np.int64),
                "launch": np.array([pos for pos, _ in warmup.values()], dtype=np.int64),
            }
        )
        out["role"], warm["role"] = ROLE_SAMPLE, ROLE_WARMUP
        if first is not None:
            extra[first] = {**extra[first], **{k: v for k, (_, v) in warmup.items()}}
        out = pd.concat([out, warm], ignore_index=True).sort_values("launch", kind="stable").reset_index(drop=True)
    for column, values in extra.items():
        if column in out.columns:
            raise ValueError(f"extra weights column {column!r} would replace a standard one")
        out[column] = [values.get(int(k), "") for k in out["kernel_id"]]
    return out


def write_weights(path: Path, table: pd.DataFrame) -> None:
    """Write a weights table as CSV, atomically."""
    atomic_write_text(path, table.to_csv(index=False, float_format=format_number, lineterminator="\n"))


def write_plan_records(
    folder: Path,
    plan: Plan,
    extra: Mapping[str, Mapping[int, object]] | None = None,
    warmup: Mapping[int, tuple[int, object]] | None = None,
) -> None:
    """Write ``simsample-weights.csv`` (with ``extra`` columns and any ``warmup`` rows, see
    :func:`weights_table`) and ``simsample-plan.json`` into ``folder``."""
    write_weights(Path(folder) / WEIGHTS_FILE, weights_table(plan, extra, warmup or None))
    plan.write(Path(folder) / PLAN_FILE)
