"""PKP measured inside Accel-Sim: the same workload simulated without and with the PKP hook.

Needs an Accel-Sim build with ``adapters/accelsim/patches/accel-sim-pkp.patch`` and a run
script with the convention ``RUNNER KERNELSLIST OUT [simulator flags...]`` (stdout and stderr of
the simulator written to OUT). The full run also writes a visualizer log so that the offline
replay (``simsample pkp replay``) can be checked against the simulator's own stop.

For each kernel it prints: actual cycles (full run), the PKP projection at the stop and the
final one (the drain counted as the kernel's tail) with their errors, cycles the PKP run
simulated (including the drain of resident CTAs) and the share saved, wall-clock of both runs,
and whether the replay equals the simulator: same stop and projection at the stop from the full
run's log, and, given the drain the PKP run measured, the same final projection.

    python benchmarks/pkp_in_simulator.py RUNNER WORKLOAD_DIR [--out DIR] [--pkp-flag=-pkp_threshold=0.25 ...]
    python benchmarks/pkp_in_simulator.py --long-kernel DIR --waves 75   # writes the long-kernel workload
    python benchmarks/pkp_in_simulator.py --long-kernel DIR --waves 20 --shape varied

The long-kernel workload is written by the adapter's trace writer: one kernel of ``--waves``
waves on SM7_QV100's 80 SMs, in one of the SHAPES below.
"""

from __future__ import annotations

import argparse
import glob
import json
import subprocess
import sys
import time
from pathlib import Path

#: Long-kernel shapes on SM7_QV100 (80 SMs): CTAs resident per SM (set by shared memory), and
#: the kernel. ``uniform``: every warp runs the same loop, CTAs finish in synchronised waves;
#: ``varied``: loop trips drawn per warp from 2-10, so CTAs differ fivefold and waves blur;
#: ``strided``: uncoalesced loads and stores (32-word stride), memory-bound, 1-4 trips per warp.
SHAPES = {
    "uniform": {"per_sm": 1, "block": 64, "shmem": 65536, "body": ("LDG.E", "FFMA", "FFMA", "FFMA", "FFMA", "STG.E")},
    "varied": {"per_sm": 2, "block": 64, "shmem": 49152, "body": ("LDG.E", "FFMA", "FFMA", "FFMA", "FFMA", "STG.E"),
               "iters": (2, 10), "seed": 11},
    "strided": {"per_sm": 4, "block": 128, "shmem": 24576, "body": ("LDG.E", "FFMA", "FFMA", "STG.E"), "iters": (1, 4),
                "pattern": "strided", "stride": 32, "seed": 11},
}  # fmt: skip


def write_long_kernel(out: Path, waves: int, seed: int = 7, iters: int = 2, shape: str = "uniform") -> None:
    """The long-kernel workload: ``waves`` waves of the ``shape``'s CTAs (see SHAPES); for
    ``uniform``, ``iters`` loop trips per warp set how long a CTA runs (2: about 680 cycles a
    wave) and ``seed`` the addresses; the other shapes fix both."""
    from simsample_accelsim.synth import KernelSpec, write_workload

    sh = SHAPES[shape]
    names = {"uniform": "_Z4longPfS_", "varied": "_Z5vary2Pf", "strided": "_Z4mem4Pf"}
    extra = {k: sh[k] for k in ("pattern", "stride") if k in sh}
    spec = KernelSpec(
        names[shape], grid=(80 * sh["per_sm"] * waves, 1, 1), block=(sh["block"], 1, 1), shmem=sh["shmem"], nregs=32,
        body=sh["body"], iters=sh.get("iters", iters), **extra,
    )  # fmt: skip
    write_workload(out, [spec], seed=sh.get("seed", seed))


def simulate(runner: Path, kernelslist: Path, out: Path, flags: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run([str(runner), str(kernelslist), str(out), *flags], check=True)
    return time.perf_counter() - t0


def _s(v: float | None) -> str:
    return "-" if v is None else f"{v:.0f} s"


def _share(full: float | None, pkp: float | None) -> str:
    return "-" if not full or pkp is None else f"{1 - pkp / full:.1%}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runner", nargs="?", type=Path)
    ap.add_argument("workload", nargs="?", type=Path, help="folder with kernelslist.g")
    ap.add_argument("--out", type=Path, default=None, help="where the runs' outputs go (default: the workload folder)")
    ap.add_argument("--pkp-flag", action="append", default=[], help="extra simulator flag for the PKP run, NAME=VALUE")
    ap.add_argument("--reuse", action="store_true", help="reuse full.out/pkp.out already in --out")
    ap.add_argument("--long-kernel", type=Path, default=None, help="write the long-kernel workload here and exit")
    ap.add_argument("--waves", type=int, default=75)
    ap.add_argument("--iters", type=int, default=2, help="uniform long kernel: loop trips per warp (CTA length)")
    ap.add_argument("--shape", choices=sorted(SHAPES), default="uniform", help="long kernel: which kernel (see SHAPES)")
    ap.add_argument(
        "--no-insn-file", action="store_true", help="run PKP without -pkp_insn_file (the projection by completed CTAs)"
    )
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if a.long_kernel is not None:
        write_long_kernel(a.long_kernel, a.waves, iters=a.iters, shape=a.shape)
        return 0
    if a.runner is None or a.workload is None:
        ap.error("RUNNER and WORKLOAD_DIR are required")

    from simsample_accelsim.collect import parse_log
    from simsample_accelsim.pkp.replay import ReplayParams, measured_drains, replay_run

    out = a.out or a.workload
    out.mkdir(parents=True, exist_ok=True)
    klist = a.workload / "kernelslist.g"
    full, pkp = out / "full.out", out / "pkp.out"
    flags = [f for item in a.pkp_flag for f in item.split("=", 1)]
    insns = None
    if not a.no_insn_file:
        # each kernel's thread instructions, counted from its trace: the instruction projection
        from simsample_accelsim.features import compute_features
        from simsample_accelsim.pkp.replay import insn_file_text

        k = compute_features(a.workload, quiet=True).kernels
        insns = dict(zip(k["kernel_id"].astype("int64").tolist(), k["thread_insts"].astype("int64").tolist()))
        (out / "pkp_insns.txt").write_text(insn_file_text(list(insns), list(insns.values()), a.workload.name))
        flags = ["-pkp_insn_file", str((out / "pkp_insns.txt").resolve()), *flags]
    times = {}
    if not a.reuse:
        times["full"] = simulate(
            a.runner,
            klist,
            full,
            [
                "-visualizer_enabled",
                "1",
                "-gpgpu_runtime_stat",
                "500",
                "-visualizer_outputfile",
                str((out / "full_vis").resolve()),
            ],
        )
        times["pkp"] = simulate(a.runner, klist, pkp, ["-pkp_enable", "1", *flags])
    fs, ps = parse_log(full), parse_log(pkp)
    # the simulator writes the log in its working folder (the workload's), named by the time
    logs = sorted(
        glob.glob(str(out / "gpgpusim_visualizer__*.log.gz"))
        + glob.glob(str(a.workload / "gpgpusim_visualizer__*.log.gz")),
        key=lambda p: Path(p).stat().st_mtime,
    )
    params = ReplayParams(projection="instructions" if insns else "paper")
    replay = replay_run(logs[-1], full, params, insns=insns) if logs and not a.pkp_flag else []
    # the same with the drain the PKP run measured: the final projection must be the simulator's
    checked = replay_run(logs[-1], full, params, insns=insns, drains=measured_drains(pkp)) if replay else []
    rows = []
    for i, (f, p) in enumerate(zip(fs.runs, ps.runs)):
        actual, sim = f.stats.get("cycles"), p.stats.get("cycles")
        proj = p.stats.get("pkp_projected_cycle")
        stop = p.stats.get("pkp_stop_cycle")
        r = replay[i] if i < len(replay) else None
        c = checked[i] if i < len(checked) else None
        at_stop = p.stats.get("pkp_stop_projected_cycle")
        same = None
        if r is not None and c is not None:
            same = r.stop_cycle == (int(stop) if stop is not None else None) and (
                proj is None
                or (round(r.stop_projected_cycles) == int(at_stop) and round(c.projected_cycles) == int(proj))
            )
        rows.append({
            "uid": f.uid, "ctas": f.grid_size, "actual_cycles": actual, "stop_cycle": stop,
            "projected_cycles": proj if proj is not None else actual,
            "error_pct": (proj - actual) / actual * 100 if proj is not None else 0.0,
            "projected_at_stop": at_stop,
            "error_at_stop_pct": (at_stop - actual) / actual * 100 if at_stop is not None else None,
            "simulated_cycles": sim, "cycles_saved": 1 - sim / actual if actual else None,
            "wall_full_s": f.stats.get("sim_seconds"), "wall_pkp_s": p.stats.get("sim_seconds"),
            "replay_stop": None if r is None else r.stop_cycle,
            "replay_drain_end": None if r is None else r.drain_end,
            "replay_projected": None if r is None or r.projected_cycles is None else round(r.projected_cycles),
            "replay_equals_simulator": same,
        })  # fmt: skip
    doc = {"process_wall_s": times, "kernels": rows}
    if a.json:
        print(json.dumps(doc, indent=1))
        return 0
    if times:
        print(
            f"wall-clock: full {times['full']:.1f} s, PKP {times['pkp']:.1f} s, saved "
            f"{1 - times['pkp'] / times['full']:.1%}"
        )
    print(
        f"{'uid':>4} {'CTAs':>6} {'actual':>8} {'stop':>8} {'at stop':>8} {'err %':>7} {'projected':>9} {'err %':>7} "
        f"{'simulated':>9} {'saved':>6} {'wall full':>9} {'wall PKP':>8} {'saved':>6} {'replay=sim':>10}"
    )
    for r in rows:
        at, at_err = r["projected_at_stop"], r["error_at_stop_pct"]
        print(
            f"{r['uid']:>4} {r['ctas'] or 0:>6} {r['actual_cycles']:>8.0f} {r['stop_cycle'] or 0:>8.0f} "
            f"{'-' if at is None else f'{at:.0f}':>8} {'-' if at_err is None else f'{at_err:+.2f}':>7} "
            f"{r['projected_cycles']:>9.0f} {r['error_pct']:>+7.2f} {r['simulated_cycles']:>9.0f} "
            f"{r['cycles_saved']:>6.1%} {_s(r['wall_full_s']):>9} {_s(r['wall_pkp_s']):>8} "
            f"{_share(r['wall_full_s'], r['wall_pkp_s']):>6} {str(r['replay_equals_simulator']):>10}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
