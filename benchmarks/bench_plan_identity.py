"""Same plans as an earlier version: the bytes of many plans, compared across two checkouts.

    python benchmarks/bench_plan_identity.py --baseline DIR [--quick] [--big 1e6] [--workdir DIR]

A change meant only to make planning faster must not change one byte of any plan: the samplers'
decisions (splits, allocations, draws) are compared through the plans they write. For every
workload below, every stratified sampler (margin at several ε, confidence levels, pooling and the
skew limit; root, stem and allegro, exact and by group or jointly sized) and several seeds, the
plan is built with the library and its JSON text hashed, once with this checkout's sources and
once with those of ``--baseline`` (``git worktree add DIR COMMIT``; each in its own process), and
every differing case is printed. The workloads: the development profiles in ``../shared/data``
(skipped when absent), the bundled example, and synthetic Nsight Systems profiles (the generator
of ``bench_end_to_end.py``) of 10^4 and 10^5 launches and, with ``--big``, one of that many.

It prints how many plans were compared and the time each version took (CPU seconds of the
planning alone), and exits 1 when any plan differs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = ROOT.parent / "shared" / "data" / "profiles"
sys.path.insert(0, str(HERE))

from bench_end_to_end import WRITERS  # noqa: E402  (benchmarks/ is put on sys.path above)
from bench_plan_scale import link_compiled  # noqa: E402

EXAMPLE = ROOT / "examples" / "profile" / "train_step.pt.trace.json.gz"

#: (sampler, parameters) pairs every workload is planned with; margin, the default, most often.
CASES: list[tuple[str, dict]] = [
    ("margin", {}),
    ("margin", {"eps": 0.01}),
    ("margin", {"eps": 0.02}),
    ("margin", {"eps": 0.1}),
    ("margin", {"eps": 0.3}),
    ("margin", {"confidence": 0.95, "sizing_confidence": 0.95}),
    ("margin", {"confidence": 0.97, "sizing_confidence": 0.993}),
    ("margin", {"pool": True}),
    ("margin", {"max_skew": 0.2}),
    ("margin", {"pool_dof": 4}),
    ("root", {}),
    ("root", {"fpc": True, "allocation": "joint"}),
    ("root", {"min_draws": 5, "replace": True}),
    ("stem", {}),
    ("allegro", {}),
]
QUICK = [c for i, c in enumerate(CASES) if i in (0, 1, 7, 10, 13, 14)]

#: Runs in each checkout: plans every case and prints one JSON object {case: sha256 of the plan}.
RUNNER = """
import sys
sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "ScikitBuildRedirectingFinder"]
if {root!r}:
    sys.path.insert(0, {root!r})
import hashlib, json, time, warnings
warnings.simplefilter("ignore")
from simsample.library import plan, read
cases, workloads, seeds = json.loads(sys.argv[1])
out, cpu = {{}}, 0.0
for path in workloads:
    try:
        wl = read(path)
    except Exception as exc:
        out[path] = "unreadable: " + type(exc).__name__
        continue
    for sampler, params in cases:
        for seed in seeds:
            key = f"{{path}} {{sampler}} {{json.dumps(params, sort_keys=True)}} seed={{seed}}"
            t = time.process_time()
            try:
                text = plan(wl, sampler, seed=seed, **params).dumps()
            except Exception as exc:
                out[key] = "refused: " + type(exc).__name__ + ": " + str(exc)[:80]
                continue
            finally:
                cpu += time.process_time() - t
            out[key] = hashlib.sha256(text.encode()).hexdigest()
print(json.dumps({{"cpu": cpu, "plans": out}}))
"""


def development_profiles(limit_per_folder: int) -> list[Path]:
    """Profiles of the development data: every Kineto and Nsight Systems file, and the first
    ``limit_per_folder`` nvprof traces of each folder (sorted by name)."""
    if not DATA.is_dir():
        return []
    found: list[Path] = []
    found += sorted(DATA.glob("kineto/**/*.json.gz"))
    found += sorted(DATA.glob("nsys-sqlite/**/*.sqlite*"))
    for folder in sorted({p.parent for p in DATA.glob("nvprof/**/traces_*.csv")}):
        found += sorted(folder.glob("traces_*.csv"))[:limit_per_folder]
    found += sorted(DATA.glob("nvprof/gpuperfpredict-k40c/*-run1.csv.xz"))[: limit_per_folder // 2]
    return found


def synthetic(work: Path, sizes: list[int]) -> list[Path]:
    writer, suffix = WRITERS["nsys_sqlite"]
    paths = []
    for n in sizes:
        path = work / f"identity_{n}{suffix}"
        if not path.exists():
            writer(path, n, seed=n % 7)
        paths.append(path)
    return paths


def run(root: Path | None, cases, workloads, seeds) -> dict:
    code = RUNNER.format(root=str(root.resolve()) if root else "")
    arg = json.dumps([cases, [str(w) for w in workloads], seeds])
    proc = subprocess.run([sys.executable, "-c", code, arg], capture_output=True, text=True, check=False)
    if proc.returncode:
        raise SystemExit(f"planning failed in {root or 'this checkout'}: {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", type=Path, required=True, help="a checkout of the earlier version")
    ap.add_argument("--quick", action="store_true", help="fewer cases, seeds and profiles")
    ap.add_argument("--big", type=float, help="also a synthetic profile of this many launches (margin, root, stem)")
    ap.add_argument("--workdir", type=Path, help="keep the generated profiles here for the next run")
    args = ap.parse_args(argv)

    link_compiled(args.baseline)  # the installed compiled readers, as the current sources use them
    work = args.workdir or Path(tempfile.mkdtemp(prefix="simsample-identity-"))
    work.mkdir(parents=True, exist_ok=True)
    cases = QUICK if args.quick else CASES
    seeds = [0, 1] if args.quick else [0, 1, 2, 3, 4]
    workloads = [EXAMPLE, *development_profiles(8 if args.quick else 40), *synthetic(work, [10_000, 100_000])]
    groups = [(cases, workloads, seeds)]
    if args.big:
        big = synthetic(work, [int(args.big)])
        groups.append(([c for c in cases if c[0] in ("margin", "root", "stem")][:4], big, [1]))

    compared = differ = 0
    cpu = {"before": 0.0, "now": 0.0}
    for cs, wls, sds in groups:
        t = time.perf_counter()
        before = run(args.baseline, cs, wls, sds)
        now = run(None, cs, wls, sds)
        cpu["before"] += before["cpu"]
        cpu["now"] += now["cpu"]
        for key, value in before["plans"].items():
            compared += 1
            if now["plans"].get(key) != value:
                differ += 1
                print(f"DIFFERS: {key}: {value[:20]} -> {str(now['plans'].get(key))[:20]}")
        print(
            f"# {len(wls)} workloads x {len(cs)} cases x {len(sds)} seeds: {len(before['plans'])} results "
            f"({sum(v.startswith('refused') for v in before['plans'].values())} refusals, "
            f"{sum(v.startswith('unreadable') for v in before['plans'].values())} unreadable) in "
            f"{time.perf_counter() - t:.0f} s",
            flush=True,
        )
    print(
        f"\n| plans compared | differ | planning CPU before | now |\n|---|---|---|---|\n"
        f"| {compared:,} | {differ} | {cpu['before']:.1f} s | {cpu['now']:.1f} s |"
    )
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
