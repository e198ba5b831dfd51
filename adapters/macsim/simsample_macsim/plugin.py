"""simsample plugin: the MacSim trace-folder reader and the ``macsim`` adapter."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from simsample.plugin_base import Adapter
from simsample.hookspecs import hookimpl
from simsample.workload import Workload

from simsample_macsim.reader import MacSimReader, load_trace_folder

if TYPE_CHECKING:
    import pandas as pd


class MacSimAdapter(Adapter):
    """MacSim: NVBit trace folders in, sampled trace folders out, per-kernel cycles back."""

    name = "macsim"
    description = "MacSim (NVBit traces: kernel_config.txt + KernelN/; results from its standard output)"

    def read(self, path: Path) -> Workload:
        return load_trace_folder(path).workload

    def full_run_results(self, outputs: Sequence[Path]) -> pd.DataFrame:
        """Every kernel of a full run's output(s), keyed by the trace folder's kernel ids."""
        from simsample_macsim.collect import collect

        return collect(list(outputs), None)[0]

    def commands(self) -> Mapping[str, click.Command]:
        from simsample_macsim.commands import apply_cmd, collect_cmd, estimate_cmd, features_cmd, run_cmd

        return {"apply": apply_cmd, "collect": collect_cmd, "estimate": estimate_cmd, "features": features_cmd, "run": run_cmd}


@hookimpl
def register_readers(register):
    register(MacSimReader())


@hookimpl
def register_adapters(register):
    register(MacSimAdapter())
