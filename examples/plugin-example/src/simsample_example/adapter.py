"""``listsim``: the adapter of a made-up simulator, to show what an adapter does.

The simulator's input is a folder holding ``launches.txt``, one launch a line
(``kernel_id name grid_x block_x``); it simulates the launches listed and prints, for each, a line
``kernel ID cycles C instructions I``. The adapter

- reads a trace folder into a workload (:meth:`ListSim.read`),
- writes a new folder that lists only the plan's launches, with the plan and its weights beside
  them (:meth:`ListSim.apply`),
- reads the simulator's output back into a table keyed by kernel id (:meth:`ListSim.collect`),
  whose columns it declares in :attr:`ListSim.metrics`: two counts and the ratio of the two, so
  that the estimate sums the counts and divides their totals for the IPC.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from simsample.sdk import (
    Adapter,
    FormatError,
    Param,
    Plan,
    Workload,
    check_input_file,
    check_input_folder,
    count,
    from_records,
    match_plan,
    ratio,
    read_text_limited,
    staged_folder,
    write_plan_records,
)

LIST_FILE = "launches.txt"
_RESULT = re.compile(r"^kernel (\d+) cycles (\d+) instructions (\d+)$")


def read_list(folder: Path) -> pd.DataFrame:
    """The launches of a listsim input folder: kernel_id, name, grid_x, block_x."""
    path = check_input_file(check_input_folder(folder, "listsim input folder") / LIST_FILE)
    rows = []
    for number, line in enumerate(read_text_limited(path, "document").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 4 or not (parts[0].isdigit() and parts[2].isdigit() and parts[3].isdigit()):
            raise FormatError(path, "expected 'kernel_id name grid_x block_x'", line=number)
        rows.append((int(parts[0]), parts[1], int(parts[2]), int(parts[3])))
    if not rows:
        raise FormatError(path, "lists no launches")
    return pd.DataFrame(rows, columns=["kernel_id", "name", "grid_x", "block_x"])


class ListSim(Adapter):
    name = "listsim"
    description = "listsim, a made-up simulator (launches.txt in, 'kernel ID cycles C instructions I' lines out)"
    metrics = (
        count("cycles", unit="cycles", doc="Simulated cycles of the launch."),
        count("instructions", unit="instructions", doc="Instructions the launch executed."),
        ratio("ipc", "instructions", "cycles", unit="instructions/cycle", doc="Instructions per cycle."),
    )
    apply_options = (Param("force", bool, False, "Replace OUT if it is not empty."),)

    def read(self, path: Path) -> Workload:
        launches = read_list(Path(path))
        launches["duration_ns"] = np.nan  # a simulator's inputs have no measured times
        return from_records(launches, source=str(path), format=self.name)

    def apply(self, plan: Plan, traces: Path | None, out: Path, **options: Any) -> Path:
        launches = read_list(Path(traces))
        workload = from_records(launches.assign(duration_ns=np.nan), source=str(traces), format=self.name)
        rows = np.unique(match_plan(plan, workload, what="listsim input folder").rows)  # refuses another run's plan
        with staged_folder(Path(out), force=options["force"], inputs=[Path(traces)]) as tmp:
            sampled = launches.iloc[rows]
            text = "".join(f"{r.kernel_id} {r.name} {r.grid_x} {r.block_x}\n" for r in sampled.itertuples())
            (tmp / LIST_FILE).write_text(f"# {len(sampled)} of {len(launches)} launches, chosen by simsample\n{text}")
            write_plan_records(tmp, plan)  # simsample-weights.csv and simsample-plan.json
        return Path(out)

    def collect(
        self, outputs: Sequence[Path], plan: Plan | None = None, *, allow_incomplete: bool = False, **options: Any
    ) -> pd.DataFrame:
        rows: dict[int, tuple[int, int]] = {}
        for output in outputs:
            path = check_input_file(output)
            for number, line in enumerate(read_text_limited(path, "document").splitlines(), 1):
                m = _RESULT.match(line.strip())
                if m is None:
                    continue  # the simulator's other chatter
                kernel = int(m.group(1))
                if kernel in rows:
                    raise FormatError(path, f"kernel {kernel} is reported twice", line=number)
                rows[kernel] = (int(m.group(2)), int(m.group(3)))
        ids = list(rows) if plan is None else plan.sampled_ids
        df = pd.DataFrame({"kernel_id": np.asarray(ids, dtype=np.int64)})
        df["cycles"] = [float(rows[k][0]) if k in rows else np.nan for k in ids]
        df["instructions"] = [float(rows[k][1]) if k in rows else np.nan for k in ids]
        df["ipc"] = df["instructions"] / df["cycles"]
        df["status"] = ["ok" if k in rows else "missing" for k in ids]
        df.attrs["details"] = {k: "not in the simulator's output" for k in ids if k not in rows}
        return df

    def commands(self) -> Mapping[str, Any]:
        return {}  # no commands of its own: simsample apply/collect/estimate --sim listsim do it all
