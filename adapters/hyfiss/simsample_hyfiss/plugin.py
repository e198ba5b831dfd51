"""simsample plugin: the HyFiSS application reader, the ``hyfiss`` adapter, and
``simsample hyfiss pick-sm``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from simsample.plugin_base import Adapter
from simsample.hookspecs import hookimpl
from simsample.workload import Workload

from simsample_hyfiss.reader import HyFiSSReader, load_app

if TYPE_CHECKING:
    import pandas as pd


class HyFiSSAdapter(Adapter):
    """HyFiSS: one simulator invocation per sampled kernel; results from the merged reports."""

    name = "hyfiss"
    description = "HyFiSS (app folders: configs/app.config + sass/memory traces; results from outputs/kernel-K-summary.txt)"

    def read(self, path: Path) -> Workload:
        return load_app(path).workload

    def full_run_results(self, outputs: Sequence[Path]) -> pd.DataFrame:
        """Every kernel of a full run's output(s), keyed by the trace folder's kernel ids."""
        from simsample_hyfiss.collect import collect

        return collect(list(outputs), None)[0]

    def commands(self) -> Mapping[str, click.Command]:
        from simsample_hyfiss.commands import apply_cmd, collect_cmd, estimate_cmd, features_cmd, run_cmd

        return {"apply": apply_cmd, "collect": collect_cmd, "estimate": estimate_cmd, "features": features_cmd, "run": run_cmd}


@hookimpl
def register_readers(register):
    register(HyFiSSReader())


@hookimpl
def register_adapters(register):
    register(HyFiSSAdapter())


@hookimpl
def register_commands(cli):
    from simsample_hyfiss.commands import hyfiss_group

    cli.add_command(hyfiss_group)
