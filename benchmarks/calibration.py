"""Are the intervals something to bet on? Coverage and sharpness per sampler and workload.

For every sampler and workload, plans are made with seeds 0..R-1 and scored as ``simsample
evaluate`` scores them (the estimate and its interval at the plan's confidence, from the truth's
values of the sampled launches):

- **coverage**: the share of plans whose interval holds the true total;
- **sharpness**: median half-width ÷ mean |error| (an interval wide enough always covers: one
  400 times the error tells the user nothing); the target is at most 5, or a median half-width
  of at most 0.5% where the errors are tiny;
- **monotone**: the median half-width at a smaller ε is not wider than at the larger one;
- mean |error| and the harmonic-mean speedup;
- refused: plans whose degrees of freedom cannot support an interval at their confidence
  (``simsample estimate`` says so in one line; left out of the coverage).

Workloads, in seven families:

- ``dev``: development profiles, each its own truth (the STEM paper's protocol), a documented
  subset: every Kineto and Nsight Systems profile, Rodinia, PolyBench and Lonestar under
  ``nvprof/magus``, and the first run of a few sizes of each gpuperfpredict program;
- ``holdout``: the CUDA SDK traces under ``nvprof/magus/devid_cudasdk80`` (39 programs) and the
  second run of other gpuperfpredict sizes, never used to choose a default; reported apart;
- ``trace``: trace features with a full Accel-Sim run (``tests/fixtures/accelsim_workloads``:
  ``NAME-features.parquet`` + ``NAME-full.out.gz``; and the development data's ``hetero``
  traces, whose features are made here; MacSim's ``layers`` workload, its traces written by
  ``benchmarks/macsim_layers_workload.py``), scored against the full run's cycles (``simsample
  evaluate --truth``);
- ``trace-holdout``: the same for trace workloads that chose nothing: ``moe``, ``graph`` and
  ``solver`` (``tests/fixtures/accelsim_moe``, ``accelsim_graph``, ``accelsim_solver``, written
  after the defaults) and ``short_kernels``
  (``tests/fixtures/accelsim_photon``, written for Photon; see the calibration page);
- ``trace-fresh``: the same for trace workloads written after margin version 7, the default:
  ``convnet``, ``serving`` and ``particles`` (``tests/fixtures/accelsim_convnet``,
  ``accelsim_serving``, ``accelsim_particles``);
- ``trace-late``: the same for trace workloads written after the estimator fitted the cycles on
  the features' model over a cluster's draws (plan format 1.4): ``amr``
  (``tests/fixtures/accelsim_amr``);
- ``fresh``: every profile in the folder ``--profiles`` names, each its own truth: profiles that
  nothing was chosen on, such as those ``benchmarks/record_torch_profiles.py`` records.

    python benchmarks/calibration.py --family dev,trace --repeat 20 --cache /tmp/cal.pkl
    python benchmarks/calibration.py --family trace --samplers margin,root --repeat 5
    python benchmarks/calibration.py --family dev --samplers margin --params margin:pool_dof=0
    python benchmarks/calibration.py --family trace --samplers margin \\
        --params margin:spread_draw=0,donors_by=design --repeat 200 --first-seed 20 --smaller-eps 0  # version 5's plans
    python benchmarks/calibration.py --family trace,trace-holdout --samplers margin --repeat 200 \\
        --first-seed 20 --smaller-eps 0 --params margin:donors_by=design    # version 6's plans
    python benchmarks/calibration.py --family dev --samplers root --workloads lud-8192,fdtd2d \\
        --repeat 100 --first-seed 20 --smaller-eps 0

Prints one row per sampler × workload and a summary per sampler × family; ``--json`` writes the
rows, ``--markdown`` the summary table. Runs in one process (the machine is shared); CPU seconds
are printed beside the wall time.
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PROFILES = ROOT.parent / "shared" / "data" / "profiles"
FIXTURES = ROOT / "tests" / "fixtures"
TRACES = FIXTURES / "accelsim_workloads"
#: trace workloads with a full run that chose nothing: (name, features, full run)
TRACE_HOLDOUT = tuple(
    (name, FIXTURES / folder / f"{name}-features.parquet", FIXTURES / folder / full)
    for name, folder, full in (
        ("moe", "accelsim_moe", "moe-full.out.gz"),
        ("short_kernels", "accelsim_photon", "short_kernels_full.out.gz"),
        ("graph", "accelsim_graph", "graph-full.out.gz"),
        ("solver", "accelsim_solver", "solver-full.out.gz"),
    )
)
#: trace workloads with a full run written after margin version 7, the default (convnet and serving then
#: chose how the estimator reads the features' model of the cycles; particles, written after, chose nothing)
TRACE_FRESH = tuple(
    (
        name,
        FIXTURES / f"accelsim_{name}" / f"{name}-features.parquet",
        FIXTURES / f"accelsim_{name}" / f"{name}-full.out.gz",
    )
    for name in ("convnet", "serving", "particles")
)
#: trace workloads with a full run written after the estimator's slope of the cycles on the model
TRACE_LATE = tuple(
    (
        name,
        FIXTURES / f"accelsim_{name}" / f"{name}-features.parquet",
        FIXTURES / f"accelsim_{name}" / f"{name}-full.out.gz",
    )
    for name in ("amr",)
)
SAMPLERS = ("margin", "root", "stem", "allegro", "pka", "sieve", "photon", "random")

#: gpuperfpredict runs of the dev and the holdout set (one program size each)
_GPP_DEV = (
    "backprop-8192-run1",
    "hotspot-512_1024-run1",
    "hotspot-1024_1024-run1",
    "lavaMD-20-run1",
    "lud-2048-run1",
    "lud-7936-run1",
    "lud-8192-run1",
)
_GPP_HOLDOUT = ("backprop-16384-run2", "hotspot-256_512-run2", "lavaMD-50-run2", "lud-4096-run2", "lud-6144-run2")


def profile_paths(family: str, root: Path = PROFILES, fresh: Path | None = None) -> list[Path]:
    """The profiles of the ``dev`` or ``holdout`` set (module docstring), or every file of the
    files directly in the ``fresh`` folder (not its subfolders), those present."""
    if family == "fresh":
        if fresh is None:
            return []
        return sorted(p for p in fresh.iterdir() if p.is_file() and p.suffix != ".md")
    if family == "holdout":
        paths = sorted((root / "nvprof/magus/devid_cudasdk80/traces").glob("*.csv"))
        paths += [root / f"nvprof/gpuperfpredict-k40c/{n}.csv.xz" for n in _GPP_HOLDOUT]
    else:
        paths = sorted((root / "kineto").rglob("*.json*")) + sorted((root / "nsys-sqlite").rglob("*.sqlite.xz"))
        for suite in ("devid_rodinia", "devid_poly", "devid_lonestar"):
            paths += sorted((root / f"nvprof/magus/{suite}/traces").glob("*.csv"))
        paths += [root / f"nvprof/gpuperfpredict-k40c/{n}.csv.xz" for n in _GPP_DEV]
    return [p for p in paths if p.is_file()]


def load_family(
    family: str, min_launches: int, cache: Path | None, fresh: Path | None = None
) -> list[tuple[str, object, np.ndarray | None]]:
    """``(name, workload, truth or None)``: profiles are their own truth."""
    key = f"{family}:{min_launches}" + (f":{fresh.resolve()}" if family == "fresh" and fresh else "")
    store: dict = {}
    if cache is not None and cache.is_file():
        with open(cache, "rb") as fh:
            store = pickle.load(fh)
        if key in store:
            return store[key]
    out: list[tuple[str, object, np.ndarray | None]] = []
    if family in ("trace-holdout", "trace-fresh", "trace-late"):
        from simsample.sampling.evaluate import truth_by_launch
        from simsample.workload import Workload
        from simsample_accelsim.collect import collect_logs

        listed = {"trace-holdout": TRACE_HOLDOUT, "trace-fresh": TRACE_FRESH, "trace-late": TRACE_LATE}[family]
        for name, features, full in listed:
            if features.is_file() and full.is_file():
                wl = Workload.from_parquet(features)
                out.append((name, wl, truth_by_launch(wl, collect_logs([full]), source=str(full), metric="cycles")))
    elif family == "trace":
        from simsample.sampling.evaluate import truth_by_launch
        from simsample.workload import Workload
        from simsample_accelsim.collect import collect_logs

        for features in sorted(TRACES.glob("*-features.parquet")):
            name = features.name.removesuffix("-features.parquet")
            full = TRACES / f"{name}-full.out.gz"
            if not full.is_file():
                continue
            wl = Workload.from_parquet(features)
            truth = truth_by_launch(wl, collect_logs([full]), source=str(full), metric="cycles")
            out.append((name, wl, truth))
        hetero = PROFILES.parent / "simulators" / "accelsim" / "hetero"
        if (hetero / "full.out.gz").is_file():  # the development traces: features made here, as a user would
            # (with the basic-block vectors photon needs, which the fixture's copy leaves out)
            out = [w for w in out if w[0] != "hetero"]
            import tempfile

            from simsample.cli import run as cli_run

            with tempfile.TemporaryDirectory() as tmp:
                feats = Path(tmp) / "hetero.parquet"
                if cli_run(["profile", "features", "--sim", "accelsim", str(hetero), "-o", str(feats)]) == 0:
                    wl = Workload.from_parquet(feats)
                    out.append(
                        ("hetero", wl, truth_by_launch(wl, collect_logs([hetero / "full.out.gz"]), metric="cycles"))
                    )
        macsim = macsim_layers()
        if macsim is not None:
            out.append(macsim)
    else:
        from simsample.reading import load_workload

        base = fresh if family == "fresh" else PROFILES
        for p in profile_paths(family, fresh=fresh):
            try:
                wl = load_workload([p])
                wl.values(wl.default_metric())
            except Exception as exc:  # noqa: BLE001 - a profile no reader takes is skipped, as evaluate does
                print(f"skipped {p}: {exc}", file=sys.stderr)
                continue
            if len(wl) >= min_launches:
                out.append((str(p.relative_to(base)), wl, None))
    if cache is not None:
        store[key] = out
        tmp = cache.with_suffix(".tmp")
        with open(tmp, "wb") as fh:
            pickle.dump(store, fh)
        tmp.replace(cache)
    return out


def macsim_layers() -> tuple[str, object, np.ndarray] | None:
    """MacSim's "layers" workload (``benchmarks/macsim_layers_workload.py``), its features made as
    a user makes them (``profile features --sim macsim --params``), scored against the full MacSim
    run of ``tests/fixtures/macsim_warmup``; None where the MacSim adapter or the run is absent."""
    full = ROOT / "tests" / "fixtures" / "macsim_warmup" / "layers-full.out.gz"
    params = PROFILES.parent / "simulators" / "macsim" / "bin" / "params.in"
    if not (full.is_file() and params.is_file()):
        return None
    try:
        from simsample_macsim.collect import collect
    except ImportError:
        return None
    import importlib.util
    import tempfile

    from simsample.cli import run as cli_run
    from simsample.sampling.evaluate import truth_by_launch
    from simsample.workload import Workload

    spec = importlib.util.spec_from_file_location(
        "macsim_layers_workload", ROOT / "benchmarks" / "macsim_layers_workload.py"
    )
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    with tempfile.TemporaryDirectory() as tmp:
        traces, feats = Path(tmp) / "layers", Path(tmp) / "layers.parquet"
        gen.write_workload(traces, gen.layers_kernels())
        if cli_run(["profile", "features", "--sim", "macsim", str(traces), "--params", str(params), "-o", str(feats)]):
            return None
        wl = Workload.from_parquet(feats)
    return ("macsim-layers", wl, truth_by_launch(wl, collect([full])[0], metric="cycles"))


def run_one(sampler, params: dict, wl, truth: np.ndarray | None, repeat: int, first_seed: int = 0) -> dict | None:
    """Score ``repeat`` plans (seeds ``first_seed`` on); None when the sampler cannot plan this
    workload (columns it needs). Seeds 0.. are what ``simsample evaluate --repeat`` scores; later
    ones check a workload chosen for missing a target on those seeds without the choice's bias."""
    from simsample.errors import UserError
    from simsample.sampling.evaluate import evaluate_workload

    resolved = sampler.resolve_params(params)
    try:
        res = evaluate_workload(
            wl, sampler, resolved, repeat, truth=truth, truth_metric="cycles", first_seed=first_seed
        )
    except UserError:
        return None
    errs = [abs(s.error) for s in res.scores if s.error is not None]
    half = [s.half_width for s in res.scores if s.half_width is not None]
    cov = [s.covered for s in res.scores if s.covered is not None]
    mean_err = statistics.mean(errs) if errs else math.nan
    med_half = statistics.median(half) if half else None
    return {
        "mean_err": mean_err,
        "max_err": max(errs) if errs else math.nan,
        "coverage": (sum(cov) / len(cov)) if cov else None,
        "intervals": len(cov),
        "median_half": med_half,
        "sharpness": (med_half / mean_err) if med_half is not None and mean_err > 0 else None,
        "speedup": res.speedup_hmean,
        "launches": res.sampled_launches_mean,
        "refused": sum(getattr(s, "refused", False) for s in res.scores),
        "plans": len(res.scores),
    }


def verdict(row: dict, nominal: float) -> list[str]:
    """What the row misses of the targets (empty: none)."""
    bad = []
    if row["coverage"] is not None and row["coverage"] < nominal - 0.04 - 1e-9:
        bad.append("coverage")
    if row["median_half"] is not None and row["median_half"] > max(5 * row["mean_err"], 0.005):
        bad.append("sharpness")
    if row.get("wider_at_smaller_eps"):
        bad.append("monotone")
    return bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--family",
        default="dev,trace",
        help="comma-separated: dev, holdout, trace, trace-holdout, trace-fresh, trace-late, fresh",
    )
    ap.add_argument(
        "--profiles",
        type=Path,
        help="the fresh family: every profile in this folder, each its own truth (e.g. recorded by "
        "benchmarks/record_torch_profiles.py)",
    )
    ap.add_argument("--samplers", default=",".join(SAMPLERS))
    ap.add_argument(
        "--params", action="append", default=[], metavar="SAMPLER:k=v[,k=v]", help="parameters of one sampler"
    )
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--eps", type=float, default=0.05, help="ε of the bounded samplers")
    ap.add_argument("--smaller-eps", type=float, default=0.03, help="second ε for the monotonicity check (0: skip)")
    ap.add_argument("--min-launches", type=int, default=20)
    ap.add_argument("--limit", type=int, default=0, help="at most this many workloads per family (0: all)")
    ap.add_argument(
        "--workloads",
        default="",
        help="comma-separated: only workloads whose name contains one of these (default: all)",
    )
    ap.add_argument(
        "--first-seed", type=int, default=0, help="seeds first-seed .. first-seed+repeat-1 (fresh seeds for a re-check)"
    )
    ap.add_argument("--cache", type=Path)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--markdown", type=Path)
    args = ap.parse_args(argv)

    from simsample.manager import get_host

    host = get_host()
    extra: dict[str, dict[str, str]] = {}
    for item in args.params:
        name, _, rest = item.partition(":")
        extra.setdefault(name, {}).update(dict(kv.split("=", 1) for kv in rest.split(",") if kv))
    t0, c0 = time.perf_counter(), time.process_time()
    rows: list[dict] = []
    print(
        f"{'family':8} {'workload':44} {'sampler':8} {'cover':>6} {'mean|e|':>8} {'med±':>8} {'sharp':>6} "
        f"{'±@eps2':>8} {'speedup':>8} {'refused':>7}  misses"
    )
    for family in args.family.split(","):
        if family == "fresh" and args.profiles is None:
            ap.error("--family fresh needs --profiles FOLDER")
        suite = load_family(family, args.min_launches, args.cache, args.profiles)
        if args.workloads:
            suite = [w for w in suite if any(part in w[0] for part in args.workloads.split(","))]
        if args.limit:
            suite = suite[: args.limit]
        for sname in args.samplers.split(","):
            sampler = host.sampler(sname)
            bounded = any(p.name == "eps" for p in sampler.params)
            params = dict(extra.get(sname, {}))
            if bounded and "eps" not in params:
                params["eps"] = str(args.eps)
            for wname, wl, truth in suite:
                row = run_one(sampler, params, wl, truth, args.repeat, args.first_seed)
                if row is None:
                    continue
                if bounded and args.smaller_eps and row["median_half"] is not None:
                    small = run_one(
                        sampler, {**params, "eps": str(args.smaller_eps)}, wl, truth, args.repeat, args.first_seed
                    )
                    h2 = small["median_half"] if small else None
                    row["median_half_smaller_eps"] = h2
                    row["wider_at_smaller_eps"] = bool(h2 is not None and h2 > row["median_half"] * (1 + 1e-6) + 1e-12)
                conf = float(sampler.resolve_params(params).get("confidence", 0.95) or 0.95)
                row.update(family=family, workload=wname, sampler=sname, params=params, nominal=conf)
                row["misses"] = verdict(row, conf)
                rows.append(row)
                cov = "-" if row["coverage"] is None else f"{row['coverage']:.2f}"
                med = "-" if row["median_half"] is None else f"{100 * row['median_half']:.2f}%"
                sh = "-" if row["sharpness"] is None else f"{row['sharpness']:.1f}"
                h2 = row.get("median_half_smaller_eps")
                print(
                    f"{family:8} {wname[-44:]:44} {sname:8} {cov:>6} {100 * row['mean_err']:7.3f}% {med:>8} {sh:>6} "
                    f"{'-' if h2 is None else f'{100 * h2:.2f}%':>8} {row['speedup'] or 0:7.2f}x {row['refused']:7d} "
                    f" {' '.join(row['misses'])}",
                    flush=True,
                )
    table = summary(rows)
    print()
    print(table)
    print(f"\n{time.perf_counter() - t0:.0f} s wall, {time.process_time() - c0:.0f} s CPU", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=float))
    if args.markdown:
        args.markdown.write_text(table + "\n")
    return 0


def summary(rows: list[dict]) -> str:
    """One markdown row per family × sampler: workloads, those meeting each target, worst coverage,
    median sharpness, mean error and harmonic-mean speedup."""
    from simsample.sampling.evaluate import harmonic_mean

    lines = [
        "| family | sampler | workloads | with an interval | coverage ≥ nominal − 0.04 | worst coverage | sharp (≤ "
        "5× or ≤ 0.5%) | median sharpness | monotone in ε | intervals refused | mean \\|error\\| | h-mean speedup |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    keys = sorted(
        {(r["family"], r["sampler"]) for r in rows},
        key=lambda k: (k[0], SAMPLERS.index(k[1]) if k[1] in SAMPLERS else 99),
    )
    for fam, s in keys:
        rs = [r for r in rows if r["family"] == fam and r["sampler"] == s]
        iv = [r for r in rs if r["coverage"] is not None]
        cov_ok = sum("coverage" not in r["misses"] for r in iv)
        sharp_ok = sum("sharpness" not in r["misses"] for r in iv)
        mono = [r for r in iv if "wider_at_smaller_eps" in r]
        mono_ok = sum(not r["wider_at_smaller_eps"] for r in mono)
        worst = min((r["coverage"] for r in iv), default=None)
        sharp = [r["sharpness"] for r in iv if r["sharpness"] is not None]
        lines.append(
            f"| {fam} | {s} | {len(rs)} | {len(iv)} | {cov_ok if iv else '-'} | "
            f"{'-' if worst is None else f'{worst:.2f}'} | {sharp_ok if iv else '-'} | "
            f"{f'{statistics.median(sharp):.1f}' if sharp else '-'} | {f'{mono_ok}/{len(mono)}' if mono else '-'} | "
            f"{sum(r['refused'] for r in rs)}/{sum(r['plans'] for r in rs)} | "
            f"{100 * statistics.mean(r['mean_err'] for r in rs):.3f}% | "
            f"{(harmonic_mean([r['speedup'] for r in rs]) or 0):.2f}× |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
