"""The Accel-Sim adapter object the plugin registers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from simsample.api import Adapter
from simsample.workload import Workload

if TYPE_CHECKING:
    import pandas as pd


class AccelSimAdapter(Adapter):
    """Accel-Sim (trace-driven): trace folders, sampled command lists, stdout statistics."""

    name = "accelsim"
    description = "Accel-Sim trace-driven simulator: kernelslist.g + kernel-N.traceg[.xz] folders"

    def read(self, path: Path) -> Workload:
        from simsample_accelsim.reader import read_traces

        return read_traces(path)

    def full_run_results(self, outputs: Sequence[Path]) -> pd.DataFrame:
        """Every launch of a full run's log(s), by the traces' ``-kernel id``; an unusable kernel
        is an error (a truth must be complete)."""
        from simsample_accelsim.collect import collect_logs

        return collect_logs(list(outputs), None)

    def commands(self) -> Mapping[str, click.Command]:
        from simsample_accelsim.cli import commands

        return commands()
