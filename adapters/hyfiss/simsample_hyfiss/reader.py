"""A HyFiSS application folder as a workload: one row per kernel of ``app.config``.

Kernel ids are 1-based as in ``app.config`` (the simulator's ``--kernel_id`` is K-1). Features:
``static_insts`` (instructions of the kernel in ``instn.config``), ``ctas`` and ``sms`` (CTAs and
SMs in the real schedule, ``issue.config``) and ``warp_insts`` (dynamic warp instructions: lines
of the kernel's split ``.sass`` traces), the default cost metric of these untimed traces.
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
from simsample_hyfiss.app import (
    APP_CONFIG,
    CONFIGS,
    AppConfig,
    AppPaths,
    find_app,
    parse_app_config,
    parse_instn_config,
    parse_issue_config,
)

pd = lazy.load("pandas")

FORMAT = "hyfiss"


@dataclass
class AppFolder:
    paths: AppPaths
    config: AppConfig
    workload: Workload


def count_lines(path: Path) -> int:
    """Lines of a file (a last line without newline counts), read in large chunks."""
    n = 0
    last = b"\n"
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 22):
            n += chunk.count(b"\n")
            last = chunk[-1:]
    return n + (last != b"\n")


def warp_instructions(paths: AppPaths, k: int) -> int | None:
    d = paths.sass_dir(k)
    if not d.is_dir():
        return None
    return sum(count_lines(p) for p in d.glob(f"kernel_{k}_block_*.sass"))


def load_app(path: str | Path, *, quiet: bool = False) -> AppFolder:
    """Read an application folder (``app.config`` and the small configs; trace line counts)."""
    paths = find_app(Path(path))
    cfg = parse_app_config(paths.app_config)
    ids = [k.id for k in cfg.kernels]
    rec: dict[str, Any] = {
        "kernel_id": ids,
        "name": [k.name for k in cfg.kernels],
        "stream": [k.get("cuda_stream_id") for k in cfg.kernels],
        "regs": [k.get("num_registers") for k in cfg.kernels],
        "shmem": [k.get("shared_mem_bytes") for k in cfg.kernels],
        "duration_ns": [pd.NA] * len(ids),
    }
    for i, axis in enumerate("xyz"):
        rec[f"grid_{axis}"] = [k.grid[i] for k in cfg.kernels]
        rec[f"block_{axis}"] = [k.block[i] for k in cfg.kernels]
    notes = []
    if paths.instn_config.is_file():
        instn = parse_instn_config(paths.instn_config)
        rec["static_insts"] = np.array([instn.count(k) for k in ids], dtype=np.int64)
    else:
        notes.append(f"no {paths.instn_config.name}")
    if paths.issue_config.is_file():
        sched = parse_issue_config(paths.issue_config)
        placed = [sched.blocks(k) for k in ids]
        rec["ctas"] = np.array([len(p) for p in placed], dtype=np.int64)
        rec["sms"] = np.array([len(set(p.values())) for p in placed], dtype=np.int64)
    else:
        notes.append(f"no {paths.issue_config.name}")
    counts = [warp_instructions(paths, k) for k in ids]
    if all(c is not None for c in counts):
        rec["warp_insts"] = np.array(counts, dtype=np.int64)
    else:
        missing = ids[next(i for i, c in enumerate(counts) if c is None)]
        notes.append(f"no split SASS traces for kernel {missing} (sass_traces/kernel-{missing}/), so no warp_insts")
    if notes and not quiet:
        click.echo(f"note: {paths.root}: " + "; ".join(notes), err=True)
    meta = {"app_config": str(paths.app_config), "kernel_ids": "1-based as in app.config (--kernel_id is K-1)"}
    wl = from_records(pd.DataFrame(rec), source=str(path), format=FORMAT, meta=meta)
    return AppFolder(paths, cfg, wl)


class HyFiSSReader(Reader):
    """HyFiSS application folders (``configs/app.config`` + traces), or ``app.config`` itself."""

    name = FORMAT
    description = "HyFiSS application folder (configs/app.config, instn.config, issue.config, sass_traces/)"
    reads_directories = True

    def detect(self, path: Path, head: bytes) -> bool:
        try:
            if path.is_dir():
                for cand in (path / CONFIGS / APP_CONFIG, path / APP_CONFIG):
                    if cand.is_file():
                        return b"-app_kernels_id" in read_head(cand)
                return False
            return path.name == APP_CONFIG and b"-app_kernels_id" in head
        except Exception:
            return False

    def read(self, paths: Sequence[Path], options: Mapping[str, Any]) -> Workload:
        return load_app(paths[0], quiet=bool(options.get("quiet"))).workload
