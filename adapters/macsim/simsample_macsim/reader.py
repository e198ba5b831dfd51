"""A MacSim trace folder as a workload: one row per kernel of ``kernel_config.txt``, in run order.

Kernel ids are the ``KernelN`` numbers (the tracer's 0-based launch index). Names and shapes come
from ``kernel_names.txt`` when the tracer wrote it; without it kernels are named by folder
(``Kernel0``, ``Kernel1``, ...) and the user is told that samplers grouping by name will see one
kernel per launch. Traces carry no timing: ``duration_ns`` is missing throughout, and the
per-launch instruction count from ``trace_info.txt`` (``instructions``, also exposed as
``warp_insts``) is the default cost metric.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import lazy_loader as lazy
import numpy as np

from simsample.sdk import Reader, Workload, from_records, read_head
from simsample_macsim.traces import (
    KERNEL_CONFIG,
    KERNEL_NAMES,
    TRACE_FILE_LIST,
    KernelConfig,
    KernelTrace,
    LaunchName,
    find_kernel_config,
    parse_kernel_config,
    parse_kernel_names,
    read_kernel_trace,
)

pd = lazy.load("pandas")

FORMAT = "macsim"


@dataclass
class TraceFolder:
    """A read trace folder: the parsed files and the workload built from them."""

    config: KernelConfig
    traces: list[KernelTrace]
    names: dict[int, LaunchName] | None
    workload: Workload

    def trace_of(self, number: int) -> KernelTrace:
        for t in self.traces:
            if t.number == number:
                return t
        raise KeyError(number)


def _note(message: str, quiet: bool) -> None:
    if not quiet:
        click.echo(f"note: {message}", err=True)


def load_trace_folder(path: str | Path, *, quiet: bool = False) -> TraceFolder:
    """Read a trace folder (or its ``kernel_config.txt`` / ``trace_file_list``): headers only."""
    config = parse_kernel_config(find_kernel_config(Path(path)))
    traces = [read_kernel_trace(e, config) for e in config.kernels]
    names_path = config.folder / KERNEL_NAMES
    names = parse_kernel_names(names_path) if names_path.is_file() else None
    numbers = [e.number for e in config.kernels]
    if names is None:
        _note(
            f"{names_path} not found: kernels are named by folder (Kernel0, Kernel1, ...) and shapes are unknown, "
            "so samplers that group by name will see one kernel per launch",
            quiet,
        )
    else:
        missing = [n for n in numbers if n not in names]
        if missing:
            _note(
                f"{names_path} has no entry for {len(missing)} traced kernel(s) (Kernel{missing[0]}, ...): they are "
                "named by folder",
                quiet,
            )
    rec: dict[str, Any] = {"kernel_id": numbers}
    named = [names.get(n) if names else None for n in numbers]
    rec["name"] = [ln.name if ln else f"Kernel{n}" for ln, n in zip(named, numbers)]
    for i, axis in enumerate("xyz"):
        rec[f"grid_{axis}"] = [ln.grid[i] if ln else 1 for ln in named]
        rec[f"block_{axis}"] = [ln.block[i] if ln else 1 for ln in named]
    rec["duration_ns"] = [pd.NA] * len(numbers)
    if named and all(ln is not None and ln.regs is not None for ln in named):
        rec["regs"] = [ln.regs for ln in named]  # type: ignore[union-attr]
    if named and all(ln is not None and ln.shmem is not None for ln in named):
        rec["shmem"] = [ln.shmem for ln in named]  # type: ignore[union-attr]
    rec["warps"] = np.array([t.warps for t in traces], dtype=np.int64)
    rec["max_blocks_per_core"] = np.array([t.max_blocks_per_core for t in traces], dtype=np.int64)
    if all(t.instructions is not None for t in traces):
        insts = np.array([t.instructions for t in traces], dtype=np.int64)
        rec["instructions"] = insts
        rec["warp_insts"] = insts.copy()
        rec["max_warp_insts"] = np.array([t.max_warp_instructions for t in traces], dtype=np.int64)
    else:
        lacking = next(t.number for t in traces if t.instructions is None)
        _note(
            f"Kernel{lacking} (and maybe others) has no trace_info.txt: no instruction counts, so plans need --param "
            "metric=COLUMN",
            quiet,
        )
    meta = {
        "kernel_config": str(config.path),
        "trace_type": config.trace_type,
        "names": "kernel_names.txt" if names is not None else "by folder (KernelN)",
        "shapes_known": names is not None,
    }
    wl = from_records(pd.DataFrame(rec), source=str(path), format=FORMAT, meta=meta)
    return TraceFolder(config, traces, names, wl)


def launch_list(folder: TraceFolder) -> Workload | None:
    """Every launch the tracer saw (``kernel_names.txt``), traced or not, or None without it.

    A folder traced with ``SAMPLED_KERNEL_INFO`` (or a kernel range) holds only some launches,
    but its ``kernel_names.txt`` lists them all: this is the workload a plan for the whole run
    is checked against.
    """
    if not folder.names:
        return None
    numbers = sorted(folder.names)
    named = [folder.names[n] for n in numbers]
    rec: dict[str, Any] = {
        "kernel_id": numbers,
        "name": [ln.name for ln in named],
        "duration_ns": [pd.NA] * len(numbers),
    }
    for i, axis in enumerate("xyz"):
        rec[f"grid_{axis}"] = [ln.grid[i] for ln in named]
        rec[f"block_{axis}"] = [ln.block[i] for ln in named]
    return from_records(pd.DataFrame(rec), source=str(folder.config.folder / KERNEL_NAMES), format=FORMAT)


def _looks_like_trace_file_list(head: bytes) -> bool:
    toks = head.split()
    if len(toks) < 2 or not toks[0].isdigit():
        return False
    count = int(toks[0])
    paths = toks[1:]
    return 1 <= count == len(paths) and all(b"/" in t or t.endswith(b".txt") for t in paths)


def _looks_like_kernel_config(head: bytes) -> bool:
    return head.split()[:3] == [b"nvbit", b"14", b"-1"]


class MacSimReader(Reader):
    """MacSim trace folders (``kernel_config.txt``, a ``trace_file_list``, or the folder)."""

    name = FORMAT
    description = "MacSim NVBit trace folder (kernel_config.txt + KernelN/), a kernel_config.txt or a trace_file_list"
    reads_directories = True

    def detect(self, path: Path, head: bytes) -> bool:
        try:
            if path.is_dir():
                if (path / KERNEL_CONFIG).is_file():
                    return _looks_like_kernel_config(read_head(path / KERNEL_CONFIG, 4096))
                if (path / TRACE_FILE_LIST).is_file():
                    return _looks_like_trace_file_list(read_head(path / TRACE_FILE_LIST, 4096))
                return False
            return _looks_like_kernel_config(head) or _looks_like_trace_file_list(head)
        except Exception:
            return False

    def read(self, paths: Sequence[Path], options: Mapping[str, Any]) -> Workload:
        return load_trace_folder(paths[0], quiet=bool(options.get("quiet"))).workload
