"""Per-launch features of a MacSim trace folder (``simsample profile features --sim macsim``).

Besides the trace headers' counts (warps, warp instructions, their mean and imbalance), two
things a launch's cycles depend on that its instructions do not show:

* **occupancy** (``sms_used``, ``waves``): the cores its blocks spread over and how many rounds
  of blocks each core runs, from the grid (``kernel_names.txt``), the blocks a core holds (the
  trace header) and the cores of the machine (``params.in``). Without ``kernel_names.txt`` the
  grid is unknown and these columns are left out.
* **cache context** (``warm_reads``, :mod:`.context`): the share of its loads and stores that
  touch lines recent launches touched, from the traces' addresses and the LLC's size.

With both, the samplers' ``group=auto`` groups launches by name, occupancy class and context
class, as on Accel-Sim trace features: the cold launches of a first step no longer share a
cluster with the warm ones of later steps.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click
import numpy as np

from simsample.sdk import CONTEXT_COLUMN, UserError, Workload
from simsample_macsim.context import DEFAULT_CONTEXT_REACH, warm_access_shares
from simsample_macsim.machine import Machine, read_params
from simsample_macsim.reader import load_trace_folder
from simsample_macsim.warmup import LINE, kernel_footprint

#: occupancy columns, named as on Accel-Sim trace features (``group=name+occupancy`` reads them)
OCCUPANCY = ("sms_used", "waves")


def occupancy(grid_blocks: np.ndarray, blocks_per_core: np.ndarray, machine: Machine) -> dict[str, np.ndarray]:
    """``sms_used`` (cores that get a block) and ``waves`` (rounds of blocks on the busiest
    core, at least one) per launch."""
    blocks = np.maximum(np.asarray(grid_blocks, np.int64), 1)
    per_core = np.maximum(np.asarray(blocks_per_core, np.int64), 1)
    return {
        "sms_used": np.minimum(blocks, machine.cores),
        "waves": np.maximum(-(-blocks // (machine.cores * per_core)), 1),
    }


def trace_features(
    traces: str | Path,
    *,
    params: str | Path | None = None,
    context: bool = True,
    reach: float = DEFAULT_CONTEXT_REACH,
    quiet: bool = False,
    progress: Callable[[int], None] | None = None,
) -> Workload:
    """The trace folder's workload with feature columns (see the module docstring).

    ``params``: the ``params.in`` the simulation will use (cores, LLC size); MacSim's built-in
    knob values without it. ``context=False`` leaves out ``warm_reads`` and reads no trace
    bodies (headers only). ``progress(1)`` is called per launch whose addresses were read."""
    machine = read_params(params)
    folder = load_trace_folder(traces, quiet=quiet)
    wl = folder.workload
    k = wl.kernels
    if "instructions" in k.columns:
        mean = k["instructions"].to_numpy(np.float64) / k["warps"].to_numpy(np.float64)
        k["mean_warp_insts"] = mean
        k["warp_imbalance"] = np.where(
            mean > 0, k["max_warp_insts"].to_numpy(np.float64) / np.where(mean > 0, mean, 1), 1.0
        )
    if wl.meta.get("shapes_known") and folder.names is not None and all(n in folder.names for n in k["kernel_id"]):
        grid = k["grid_x"].to_numpy(np.int64) * k["grid_y"].to_numpy(np.int64) * k["grid_z"].to_numpy(np.int64)
        for col, values in occupancy(grid, k["max_blocks_per_core"].to_numpy(np.int64), machine).items():
            k[col] = values
    with_bodies = [any(e.folder.glob("trace_*.raw")) for e in folder.config.kernels] if context else []
    if context and not any(with_bodies):
        if not quiet:
            click.echo(
                "note: no trace_*.raw streams in the folder (headers only): warm_reads (cache context) is left out, "
                "so plans group by name and occupancy",
                err=True,
            )
    elif context:
        lacking = next((e for e, has in zip(folder.config.kernels, with_bodies) if not has), None)
        if lacking is not None:
            raise UserError(
                f"{lacking.folder}: no trace_*.raw files while other launches have theirs; the cache context "
                "(warm_reads) reads every launch's addresses: give the whole trace folder, or pass --no-context"
            )
        footprints = []
        for entry in folder.config.kernels:
            try:
                footprints.append(kernel_footprint(entry.folder))
            except UserError as e:  # its advice is the warm-up's: say what features can do instead
                raise UserError(
                    f"{str(e).split('; retrace')[0]}; the cache context (warm_reads) reads the traces' addresses: "
                    "retrace, or pass --no-context"
                ) from None
            if progress:
                progress(1)
        k[CONTEXT_COLUMN] = warm_access_shares(footprints, llc_lines=machine.llc_lines(LINE), reach=reach)
    wl.meta["machine"] = f"{machine.cores} cores, {machine.llc_bytes:,} B LLC ({machine.source})"
    return wl
