"""Cost of one PKP monitor update: C++ (compiled here with the system compiler), the pybind11
module and the pure-Python twin.

Goal: the C++ monitor costs < 20 ns per simulated cycle when fed every cycle, well under 1% of
a cycle-level simulator's cost per cycle (microseconds). Prints a table, or JSON with --json.

    python benchmarks/bench_pkp.py [--cycles 100000000] [--period 500] [--window 3000] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOOK = ROOT / "cpp" / "pkp_hook"


def bench_cpp(cycles: int, period: int, window: int) -> dict | str:
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not cxx:
        return "no C++ compiler"
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "bench_pkp"
        cmd = [cxx, "-O2", "-std=c++17", f"-I{HOOK}", str(HOOK / "bench_pkp.cpp"), "-o", str(exe)]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode:
            return f"compile failed: {res.stderr.strip()[:200]}"
        out = subprocess.run(
            [str(exe), str(cycles), str(period), str(window)], capture_output=True, text=True, check=True
        )
        return json.loads(out.stdout)


def _time_python_loop(monitor, n: int, period: int) -> tuple[float, float]:
    """ns per update() fed every cycle, and ns of the same loop without the call."""
    update = monitor.update
    t0 = time.perf_counter_ns()
    insns = ctas = 0
    for c in range(1, n + 1):
        insns += 37
        update(c, insns, ctas)
    t1 = time.perf_counter_ns()
    insns = 0
    for _ in range(1, n + 1):
        insns += 37
    t2 = time.perf_counter_ns()
    return (t1 - t0) / n, (t2 - t1) / n


def _time_python_samples(monitor, n: int, period: int) -> float:
    update = monitor.update
    t0 = time.perf_counter_ns()
    for s in range(1, n + 1):
        update(s * period, 37 * period * s, s)
    return (time.perf_counter_ns() - t0) / n


def bench_python(cls, n: int, period: int, window: int) -> dict:
    kw = dict(period=period, window=window, threshold=1e-12, total_ctas=1 << 30, wave_size=80)
    per_cycle, loop = _time_python_loop(cls(**kw), n, period)
    per_sample = _time_python_samples(cls(**kw), max(n // 20, 1000), period)
    return {"ns_per_cycle": per_cycle, "ns_per_sample": per_sample, "ns_loop_only": loop}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycles", type=int, default=100_000_000, help="cycles fed to the C++ monitor")
    ap.add_argument("--py-cycles", type=int, default=1_000_000, help="cycles fed to the Python-callable monitors")
    ap.add_argument("--period", type=int, default=500)
    ap.add_argument("--window", type=int, default=3000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    rows: dict[str, dict | str] = {"C++ (header, g++ -O2)": bench_cpp(args.cycles, args.period, args.window)}
    try:
        from simsample import _pkp

        rows["pybind11 module (simsample._pkp)"] = bench_python(_pkp.Monitor, args.py_cycles, args.period, args.window)
    except ImportError as exc:
        rows["pybind11 module (simsample._pkp)"] = f"not built: {exc}"
    from simsample.pkp.monitor import Monitor as PyMonitor

    rows["pure Python (simsample.pkp.monitor)"] = bench_python(
        PyMonitor, max(args.py_cycles // 4, 10_000), args.period, args.window
    )

    if args.json:
        print(json.dumps({"period": args.period, "window": args.window, "results": rows}, indent=2))
        return 0
    print(
        f"PKP monitor update cost (period {args.period}, window {args.window} = {args.window // args.period} samples)"
    )
    print(f"{'implementation':38} {'ns/cycle':>10} {'ns/sample':>10} {'loop only':>10}")
    for name, r in rows.items():
        if isinstance(r, str):
            print(f"{name:38} {r}")
            continue
        print(f"{name:38} {r['ns_per_cycle']:10.2f} {r['ns_per_sample']:10.2f} {r['ns_loop_only']:10.2f}")
    print("ns/cycle: update() called every cycle (the simulator hook); ns/sample: called only every period;")
    print(
        "loop only: the driving loop without the monitor (already included in the other columns). Goal: C++ < 20 "
        "ns/cycle."
    )
    cpp = rows["C++ (header, g++ -O2)"]
    if isinstance(cpp, dict):
        print(f"goal met: {cpp['ns_per_cycle'] < 20.0}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
