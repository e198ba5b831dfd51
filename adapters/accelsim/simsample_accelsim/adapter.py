"""The Accel-Sim adapter object the plugin registers."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import click

from simsample.api import Adapter
from simsample.workload import Workload


class AccelSimAdapter(Adapter):
    """Accel-Sim (trace-driven): trace folders, sampled command lists, stdout statistics."""

    name = "accelsim"
    description = "Accel-Sim trace-driven simulator: kernelslist.g + kernel-N.traceg[.xz] folders"

    def read(self, path: Path) -> Workload:
        from simsample_accelsim.reader import read_traces

        return read_traces(path)

    def commands(self) -> Mapping[str, click.Command]:
        from simsample_accelsim.cli import commands

        return commands()
