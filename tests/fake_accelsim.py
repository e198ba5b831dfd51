"""A fake Accel-Sim for the runner's tests: prints the simulator's stats blocks, fast.

The script it writes takes Accel-Sim's command line (``-trace ./kernelslist.g -config A
-config B ...``), reads the command list and each trace's header, and prints for every kernel
line what the real simulator prints (the lines and their exact format copied from a real
Accel-Sim 1.2 log: ``Processing kernel``, the echoed header, ``launching kernel name: ... uid:``,
the statistics block with the cumulative cache and DRAM counters, ``gpgpu_simulation_time``),
then ``GPGPU-Sim: *** exit detected ***``. A launch's numbers depend on its kernel id only, so a
launch has the same results whatever runs before it: a split run and a single run of the same
launches must collect to the same table.

Environment knobs (for delays and induced crashes):

* ``FAKE_SIM_DELAY``: seconds slept per kernel (a busy loop with ``FAKE_SIM_BUSY=1``, to load a CPU);
* ``FAKE_SIM_CRASH``: kernel ids (comma-separated) on which the run aborts (``Assertion ... failed``);
* ``FAKE_SIM_CRASH_ONCE``: kernel ids that abort on their first attempt only (a marker file in
  ``FAKE_SIM_STATE`` remembers it);
* ``FAKE_SIM_CALLS``: a file to which each start appends its working folder (to count runs).
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

_SCRIPT = r"""
import lzma, os, sys, time
from pathlib import Path

args = sys.argv[1:]
trace_list = args[args.index("-trace") + 1]
delay = float(os.environ.get("FAKE_SIM_DELAY", "0"))
busy = os.environ.get("FAKE_SIM_BUSY") == "1"
crash = {int(x) for x in os.environ.get("FAKE_SIM_CRASH", "").split(",") if x}
once = {int(x) for x in os.environ.get("FAKE_SIM_CRASH_ONCE", "").split(",") if x}
state = os.environ.get("FAKE_SIM_STATE", ".")
if os.environ.get("FAKE_SIM_CALLS"):
    with open(os.environ["FAKE_SIM_CALLS"], "a") as fh:
        fh.write(os.getcwd() + "\n")

def header(path):
    opener = lzma.open if path.endswith(".xz") else open
    out = []
    with opener(path, "rt") as fh:
        for line in fh:
            if not line.strip():
                break
            out.append(line.rstrip("\n"))
    return out

print("GPGPU-Sim: Configuration options:", flush=True)
COUNTERS = ("l1rh", "l1ra", "l1wh", "l1wa", "l2rh", "l2ra", "l2wh", "l2wa", "dr", "dw", "cta", "cyc", "insn")
cum = dict.fromkeys(COUNTERS, 0)
uid = 0
for raw in open(trace_list):
    line = raw.rstrip("\n")
    if not line.startswith("kernel"):
        continue
    uid += 1
    hdr = header(line)
    fields = {l.split("=", 1)[0].strip(): l.split("=", 1)[1].strip() for l in hdr if "=" in l}
    kid, name = int(fields["-kernel id"]), fields["-kernel name"]
    g = [int(x) for x in fields["-grid dim"].strip("()").split(",")]
    ctas = g[0] * g[1] * g[2]
    print(f"Processing kernel ./{line}")
    for l in hdr:
        print(l)
    print(f"Header info loaded for kernel command : ./{line}")
    print(f"launching kernel name: {name} uid: {uid} cuda_stream_id: 0", flush=True)
    if delay:
        end = time.monotonic() + delay
        if busy:
            while time.monotonic() < end:
                pass
        else:
            time.sleep(delay)
    marker = Path(state) / f"crashed-{kid}"
    if kid in crash or (kid in once and not marker.exists()):
        if kid in once:
            marker.touch()
        print("accel-sim.out: gpu-sim.cc:1234: void gpgpu_sim::cycle(): Assertion `0' failed.", flush=True)
        os.abort()
    cyc, insn = 1000 + 37 * kid, 5000 + 101 * kid * ctas
    d = dict(l1rh=3 * kid, l1ra=10 * kid + 5, l1wh=0, l1wa=2 * kid, l2rh=kid, l2ra=4 * kid + 1, l2wh=0, l2wa=kid,
             dr=2 * kid, dw=kid // 2, cta=ctas, cyc=cyc, insn=insn)
    for k, v in d.items():
        cum[k] += v
    print(f"Destroy streams for kernel {uid}: size 0")
    print(f"kernel_name = {name} ")
    print(f"kernel_launch_uid = {uid} ")
    print("kernel_stream_id = 0")
    print(f"gpu_sim_cycle = {cyc}")
    print(f"gpu_sim_insn = {insn}")
    print(f"gpu_ipc = {insn / cyc:12.4f}")
    print(f"gpu_tot_sim_cycle = {cum['cyc']}")
    print(f"gpu_tot_sim_insn = {cum['insn']}")
    print(f"gpu_tot_ipc = {cum['insn'] / cum['cyc']:12.4f}")
    print(f"gpu_tot_issued_cta = {cum['cta']}")
    print("gpu_occupancy = -nan% ")
    print("gpu_tot_occupancy = -nan% ")
    print("")
    print("========= Core cache stats =========")
    print(f"\tTotal_core_cache_stats_breakdown[GLOBAL_ACC_R][HIT] = {cum['l1rh']}")
    print(f"\tTotal_core_cache_stats_breakdown[GLOBAL_ACC_W][HIT] = {cum['l1wh']}")
    print(f"\tTotal_core_cache_stats_breakdown[GLOBAL_ACC_R][TOTAL_ACCESS] = {cum['l1ra']}")
    print(f"\tTotal_core_cache_stats_breakdown[GLOBAL_ACC_W][TOTAL_ACCESS] = {cum['l1wa']}")
    print(f"total dram reads = {cum['dr']}")
    print(f"total dram writes = {cum['dw']}")
    print(f"\tL2_cache_stats_breakdown[GLOBAL_ACC_R][HIT] = {cum['l2rh']}")
    print(f"\tL2_cache_stats_breakdown[GLOBAL_ACC_W][HIT] = {cum['l2wh']}")
    print(f"\tL2_cache_stats_breakdown[GLOBAL_ACC_R][TOTAL_ACCESS] = {cum['l2ra']}")
    print(f"\tL2_cache_stats_breakdown[GLOBAL_ACC_W][TOTAL_ACCESS] = {cum['l2wa']}")
    print("")
    print("gpgpu_simulation_time = 0 days, 0 hrs, 0 min, 1 sec (1 sec)")
    print("gpgpu_simulation_rate = 5000 (inst/sec)", flush=True)
print("GPGPU-Sim: *** simulation thread exiting ***")
print("GPGPU-Sim: *** exit detected ***", flush=True)
"""


def write_fake_simulator(folder: str | Path) -> tuple[Path, list[Path]]:
    """Write the fake ``accel-sim.out`` and two (empty) config files into ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "accel-sim.out"
    exe.write_text(f"#!{sys.executable}\n{_SCRIPT}")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    configs = []
    for name in ("gpgpusim.config", "trace.config"):
        (folder / name).write_text("# fake\n")
        configs.append(folder / name)
    return exe, configs


def fake_env(**knobs: object) -> dict[str, str]:
    """``os.environ`` with the fake simulator's knobs (see the module docstring) set."""
    env = dict(os.environ)
    for k, v in knobs.items():
        env[f"FAKE_SIM_{k.upper()}"] = ",".join(map(str, v)) if isinstance(v, (list, tuple, set)) else str(v)
    return env


def make_workload(folder: str | Path, n: int = 12) -> Path:
    """A trace folder of ``n`` small launches (three kernels, varied grids) with two memcpys."""
    from simsample_accelsim.synth import KernelSpec, write_workload

    traces = Path(folder)
    write_workload(
        traces,
        [KernelSpec(name=f"_Z1kv{i % 3}", grid=(i % 4 + 1, 1, 1)) for i in range(n)],
        memcpys=[(0, 0x7F0000000000, 4096), (n // 2, 0x7F0000100000, 1024)],
    )
    return traces


def sim_args(exe: Path, configs: list[Path]) -> list[str]:
    """The ``run`` options naming the fake simulator and its configs."""
    return ["--accelsim", str(exe), *(x for c in configs for x in ("--config", str(c)))]
