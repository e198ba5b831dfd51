"""The Accel-Sim adapter object the plugin registers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from simsample.plugin_base import Adapter
from simsample.workload import Workload

if TYPE_CHECKING:
    import pandas as pd

    from simsample.gcl.streams import InstructionTraces


class AccelSimAdapter(Adapter):
    """Accel-Sim (trace-driven): trace folders, sampled command lists, stdout statistics."""

    name = "accelsim"
    description = "Accel-Sim trace-driven simulator: kernelslist.g + kernel-N.traceg[.xz] folders"

    def read(self, path: Path) -> Workload:
        from simsample_accelsim.reader import read_traces

        return read_traces(path)

    def instruction_traces(self, workload: Workload) -> InstructionTraces:
        from simsample.errors import UserError
        from simsample.gcl.streams import InstructionTraces
        from simsample_accelsim.reader import scan_folder, workload_of
        from simsample_accelsim.warps import FORMAT_VERSION, read_warps

        folder = Path(workload.source or "")
        if workload.format != "accelsim" or not ((folder / "kernelslist.g").is_file() or folder.is_file()):
            raise UserError(
                f"{workload.source or 'the workload'} is not an Accel-Sim trace folder here; "
                "GCL-Sampler reads instructions: plan on the trace folder itself (kernelslist.g with kernel-N.traceg[.xz])"
            )
        tf = scan_folder(folder)
        ids = workload_of(tf).kernels["kernel_id"].to_numpy()
        by_id = dict(zip(ids.tolist(), tf.files))
        wanted = workload.kernels["kernel_id"].to_numpy().tolist()
        missing = [k for k in wanted if k not in by_id]
        if missing:
            raise UserError(f"{folder}: no trace for kernel id(s) {', '.join(map(str, missing[:5]))} of the workload; plan on the folder the workload was read from")
        return InstructionTraces([by_id[k] for k in wanted], read_warps, f"accelsim-traceg/{FORMAT_VERSION}")

    def full_run_results(self, outputs: Sequence[Path]) -> pd.DataFrame:
        """Every launch of a full run's log(s), by the traces' ``-kernel id``; an unusable kernel
        is an error (a truth must be complete)."""
        from simsample_accelsim.collect import collect_logs

        return collect_logs(list(outputs), None)

    def commands(self) -> Mapping[str, click.Command]:
        from simsample_accelsim.cli import commands

        return commands()
