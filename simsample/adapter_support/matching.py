"""Which launches of a simulator's inputs a plan's samples are, and back.

A plan names its samples by kernel id and by launch position (0-based row of the workload it was
made from). Applied to the inputs it was made from (same fingerprint: ids, names and shapes in
launch order), ids and positions agree. A plan made from another source of the same run (a
profile with its own ids and demangled names) has another fingerprint but the same
``shape_fingerprint``: it is applied by launch position, with one note on standard error so that
the user knows. Anything else is refused with :class:`~simsample.errors.PlanMismatchError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import click
import lazy_loader as lazy
import numpy as np

from simsample.errors import PlanMismatchError
from simsample.planfile import Plan
from simsample.workload import Workload

pd = lazy.load("pandas")


def note(message: str) -> None:
    """One line on standard error, for what the user should know but need not act on."""
    click.echo(f"note: {message}", err=True)


class PlanMatch(NamedTuple):
    """Where a plan's samples are in a workload."""

    rows: np.ndarray  # int64 row position in the workload of each sample (plan order, repeats kept)
    by_position: bool  # matched by launch position only (the plan was made from another source)


def match_plan(plan: Plan, wl: Workload, *, what: str = "inputs") -> PlanMatch:
    """Rows of ``wl`` holding the plan's samples (see the module docstring).

    ``what`` names ``wl`` in messages ("trace folder", "application", ...).
    """
    launches = plan.samples["launch"].to_numpy(np.int64)
    if wl.fingerprint == plan.workload.get("fingerprint"):
        pos = pd.Series(np.arange(len(wl), dtype=np.int64), index=wl.kernels["kernel_id"].to_numpy(np.int64))
        ids = plan.samples["kernel_id"].to_numpy(np.int64)
        found = pos.reindex(ids)
        at = found.to_numpy(np.float64)
        bad = np.isnan(at) | (at != launches)
        if bad.any():
            i = int(np.argmax(bad))
            where = "is not in it" if np.isnan(at[i]) else f"is at launch {int(at[i])} there"
            raise PlanMismatchError(
                f"the plan's sample {i} (kernel {int(ids[i])}, launch {int(launches[i])}) does not match its own "
                f"workload: kernel {int(ids[i])} {where}, though the fingerprints agree; the plan file is "
                "inconsistent (edited by hand?): make the plan again"
            )
        return PlanMatch(launches, False)
    shape = plan.workload.get("shape_fingerprint")
    if shape and wl.shape_fingerprint == shape and (len(launches) == 0 or int(launches.max()) < len(wl)):
        note(
            f"the plan was made from {plan.workload.get('source') or 'another source'} "
            f"({plan.workload.get('format') or '?'}); its launch sequence matches {what} {wl.source or ''}".rstrip()
            + ", so samples are applied by launch position"
        )
        return PlanMatch(launches, True)
    plan.check_workload(wl, what=what)  # raises with the standard message
    raise PlanMismatchError(f"the plan does not match {what}")  # pragma: no cover - check_workload raised


def plan_ids(
    plan: Plan | None, native: Sequence[int], positions: Sequence[int], native_format: str
) -> list[int | None]:
    """The plan's kernel id for each simulated kernel.

    ``native`` is the id a kernel has in the simulator's own traces, ``positions`` its 0-based
    launch index in the full run. A plan made from these traces (``native_format``), or no plan,
    uses the native ids; a plan made from another source is matched by launch position.
    ``None`` marks a kernel the plan did not sample.
    """
    if plan is None or plan.workload.get("format") == native_format:
        sampled = None if plan is None else {int(k) for k in plan.samples["kernel_id"]}
        return [int(n) if sampled is None or int(n) in sampled else None for n in native]
    by_launch = dict(zip(plan.samples["launch"].astype(int), plan.samples["kernel_id"].astype(int)))
    return [by_launch.get(int(p)) for p in positions]
