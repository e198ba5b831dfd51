"""Sampled HyFiSS inputs: a new folder with an application view and a script that simulates only
the plan's kernels.

``OUT/app/`` is the application as HyFiSS expects it: ``configs/app.config`` (the app's own, or
the one given with ``--app-config``, e.g. from ``simsample hyfiss pick-sm``), links (or copies)
of ``instn.config`` and ``issue.config``, and the trace folders: linked whole, or with
``--prune`` only the sampled kernels' ``kernel-K`` folders. The simulator writes its reports to
``configs/../outputs``, so they land in ``OUT/app/outputs`` and the input folder is never
written. ``OUT/run_sampled.sh`` (rendered from a jinja2 template shipped with this package)
invokes the simulator once per sampled kernel with ``--kernel_id K-1`` and a ``--configs`` path
relative to the HyFiSS folder (computed when it runs), then merges each kernel's reports.
``OUT/simsample-weights.csv`` holds the plan's weights, ``OUT/simsample-plan.json`` the plan.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import lazy_loader as lazy
import numpy as np

from simsample import __version__ as simsample_version
from simsample.sdk import (
    Plan,
    UserError,
    atomic_write_text,
    comment_text,
    link_or_copy,
    match_plan,
    read_text_limited,
    staged_folder,
    write_plan_records,
)
from simsample_hyfiss import __version__
from simsample_hyfiss.app import (
    APP_CONFIG,
    CONFIGS,
    INSTN_CONFIG,
    ISSUE_CONFIG,
    MEMORY,
    OUTPUTS,
    SASS,
    parse_app_config,
)
from simsample_hyfiss.reader import AppFolder, load_app

jinja2 = lazy.load("jinja2")

SCRIPT = "run_sampled.sh"
APP = "app"
DEFAULT_DEVICE_CONFIG = "./DEV-Def/QV100.config"


@dataclass
class ApplyResult:
    out: Path
    kernels: list[int]  # app kernel ids (1-based), in launch order


def render_script(
    *,
    kernels: list[tuple[int, str]],
    np_ranks: int,
    hyfiss_home: str,
    device_config: str,
    plan_name: str,
    sms: dict[int, int] | None = None,
) -> str:
    """The run script for these (id, name) kernels; ``sms``: per kernel id, the SMs it can use
    (its CTA count), the most MPI processes it is run with."""
    env = jinja2.Environment(
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["sh"] = lambda v: shlex.quote(str(v))
    text = resources.files("simsample_hyfiss").joinpath("templates/run_sampled.sh.j2").read_text(encoding="utf-8")
    return env.from_string(text).render(
        kernels=[
            {"id": k, "index": k - 1, "name": name, "sms": max(1, int((sms or {}).get(k, np_ranks)))}
            for k, name in kernels
        ],
        np=int(np_ranks),
        hyfiss_home=hyfiss_home,
        device_config=device_config,
        plan_name=comment_text(plan_name),  # it lands in a '#' comment: a newline in it would start a command
        version=f"{simsample_version} (simsample-hyfiss {__version__})",
    )


def _ctas(grid: tuple[int | None, int | None, int | None]) -> int:
    """A kernel's CTA count: the most SMs it can use (unknown dimensions count as 1)."""
    n = 1
    for d in grid:
        n *= int(d) if d else 1
    return n


def _check_traces(folder: AppFolder, k: int) -> None:
    """A kernel HyFiSS can simulate: split SASS traces and at least one memory trace."""
    paths = folder.paths
    sass = paths.sass_dir(k)
    if not sass.is_dir() or not any(sass.glob(f"kernel_{k}_block_*.sass")):
        raise UserError(
            f"{sass}: no kernel_{k}_block_*.sass: sampled kernel {k} has no split SASS traces (run HyFiSS's sass-split)"
        )
    mem = paths.memory_dir(k)
    if not mem.is_dir() or not any(mem.glob("*.mem")):
        raise UserError(
            f"{mem}: no .mem file: HyFiSS divides by zero on a kernel without memory traces, "
            f"so sampled kernel {k} cannot be simulated; make a plan that leaves it out"
        )


def _same_kernels(own: Path, other: Path) -> None:
    a, b = parse_app_config(own), parse_app_config(other)
    same = [(k.name, k.grid, k.block) for k in a.kernels] == [(k.name, k.grid, k.block) for k in b.kernels]
    if not same:
        raise UserError(
            f"{other}: its kernels differ from {own} (names or shapes); --app-config must be a copy of the app's own"
        )


def apply_plan(
    plan: Plan,
    out: Path,
    *,
    traces: Path,
    force: bool = False,
    copy: bool = False,
    prune: bool = False,
    np_ranks: int = 1,
    hyfiss_home: str = "",
    device_config: str = DEFAULT_DEVICE_CONFIG,
    app_config: Path | None = None,
    plan_name: str = "the plan",
) -> ApplyResult:
    """Write the sampled inputs into the new folder ``out`` (atomically)."""
    folder = load_app(traces)
    rows = match_plan(plan, folder.workload, what="application").rows
    ids = folder.workload.kernels["kernel_id"].to_numpy(np.int64)
    order = sorted({int(ids[r]) for r in rows})
    for k in order:
        _check_traces(folder, k)
    if app_config is not None:
        _same_kernels(folder.paths.app_config, Path(app_config))
    if np_ranks < 1:
        raise UserError(f"--np must be at least 1, got {np_ranks}")
    paths = folder.paths
    with staged_folder(Path(out), force=force, inputs=[paths.root]) as tmp:
        app = tmp / APP
        (app / CONFIGS).mkdir(parents=True)
        (app / OUTPUTS).mkdir()
        src_cfg = Path(app_config) if app_config is not None else paths.app_config
        atomic_write_text(app / CONFIGS / APP_CONFIG, read_text_limited(src_cfg, errors="replace"))
        for name in (INSTN_CONFIG, ISSUE_CONFIG):
            if (paths.configs / name).is_file():
                link_or_copy(paths.configs / name, app / CONFIGS / name, copy=copy)
        for sub, src in ((SASS, paths.sass), (MEMORY, paths.memory)):
            if not src.is_dir():
                continue
            if prune:
                (app / sub).mkdir()
                for k in order:
                    link_or_copy(src / f"kernel-{k}", app / sub / f"kernel-{k}", copy=copy)
            else:
                link_or_copy(src, app / sub, copy=copy)
        names = {k.id: k.name for k in folder.config.kernels}
        ctas = {k.id: _ctas(k.grid) for k in folder.config.kernels}
        script = render_script(
            kernels=[(k, names[k]) for k in order],
            np_ranks=np_ranks,
            hyfiss_home=hyfiss_home,
            device_config=device_config,
            plan_name=plan_name,
            sms=ctas,
        )
        atomic_write_text(tmp / SCRIPT, script)
        os.chmod(tmp / SCRIPT, 0o755)
        write_plan_records(
            tmp, plan, {"trace": {int(k): f"kernel-{int(ids[r])}" for k, r in zip(plan.samples["kernel_id"], rows)}}
        )
    return ApplyResult(Path(out), order)
