"""Every built-in sampler, reader and adapter passes the conformance kit (:mod:`simsample.testing`).

One test per plugin and check, so that a failure names both. The examples are the bundled ones
(``examples/``), small files written here by hand, and the development data under
``../shared/data`` (the tests that need it skip when it is absent). Cases are built once per
session and shared by their checks: a plan or a read is made once, not once per check.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import simsample
from simsample.testing import Check, adapter_checks, example_workload, reader_checks, sampler_checks
from tests.helpers import ROOT, shared_path

SAMPLERS = ("random", "stem", "root", "allegro", "margin", "pka", "sieve", "photon", "explicit", "gcl")
READERS = ("csv", "parquet", "nsys_csv", "kineto", "nsys_sqlite", "nvprof", "ncu", "accelsim", "macsim", "hyfiss")
ADAPTERS = ("accelsim", "macsim", "hyfiss")

# the checks' names, in the kit's order (building the list runs nothing)
SAMPLER_CHECKS = [c.name for c in sampler_checks(simsample.get_sampler("random"))]
READER_CHECKS = [c.name for c in reader_checks(object(), "unused")]  # type: ignore[arg-type]
ADAPTER_CHECKS = [c.name for c in adapter_checks(object(), "unused")]  # type: ignore[arg-type]

NSYS_GPU_HEADER = (
    "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),"
    "Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name"
)


def photon_workload():
    """The example workload with per-warp basic-block vectors (what ``profile features`` adds):
    each kernel's warps run its own mix of four blocks."""
    wl = example_workload()
    codes = wl.kernels["name"].cat.codes.to_numpy(np.int64)
    mixes = np.array([[10, 0, 0, 1], [0, 7, 1, 0], [1, 1, 9, 0], [5, 5, 0, 0], [0, 0, 3, 8], [2, 9, 2, 2]], dtype=float)
    wl.extras = {
        "warp_types": sp.csr_matrix(mixes[codes]),
        "warp_type_launch": np.arange(len(wl)),
        "warp_type_count": (wl.kernels["grid_x"].to_numpy(np.int64) * 8),
        "bbv_blocks": {"start_pc": [0, 32, 96, 160], "length": [4, 8, 2, 6]},
    }
    return wl


def explicit_case(tmp: Path) -> list[Check]:
    """explicit: one given launch per kernel name, weighted by its kernel's launch count."""
    wl = example_workload()
    k = wl.kernels
    rows = ["kernel_id,weight,cluster"]
    for name, group in k.groupby("name", observed=True, sort=True):
        rows.append(f"{int(group['kernel_id'].iloc[0])},{len(group)},{name}")
    f = tmp / "samples.csv"
    f.write_text("\n".join(rows) + "\n")
    return sampler_checks(simsample.get_sampler("explicit"), wl, params={"file": str(f)})


def gcl_case(tmp: Path) -> list[Check]:
    if os.environ.get("SIMSAMPLE_REQUIRE_GCL") != "1":
        pytest.importorskip("torch")
        pytest.importorskip("torch_geometric")
    traces = shared_path("simulators", "accelsim", "tinytrace3")
    wl = simsample.read(traces)
    params = {
        "epochs": 1,
        "warps": 2,
        "max_insts": 256,
        "hidden": 16,
        "embedding": 16,
        "proj_hidden": 8,
        "proj_out": 8,
        "jobs": 1,
        "cache": str(tmp / "cache"),
    }  # small: the checks are about the contract, not the model
    return sampler_checks(simsample.get_sampler("gcl"), wl, params=params)


def sampler_case(name: str, tmp: Path) -> list[Check]:
    if name == "photon":
        return sampler_checks(simsample.get_sampler(name), photon_workload())
    if name == "explicit":
        return explicit_case(tmp)
    if name == "gcl":
        return gcl_case(tmp)
    return sampler_checks(simsample.get_sampler(name))


def reader_case(name: str, tmp: Path) -> list[Check]:
    reader = _host().reader(name)
    if name == "csv":  # chosen by --format csv --columns only
        f = tmp / "kernels.csv"
        f.write_text("Name,Duration,Grid\nsgemm,1200,80\nrelu,300,40\nsgemm,1250,80\nsoftmax,410,16\n")
        return reader_checks(
            reader, f, options={"columns": "name=Name,duration_ns=Duration,grid_x=Grid"}, detects=False
        )
    if name == "parquet":
        f = tmp / "workload.parquet"
        example_workload().to_parquet(f)
        return reader_checks(reader, f)
    if name == "nsys_csv":
        f = tmp / "gpu.csv"
        f.write_text(
            "Processing [x.sqlite] with [/opt/nsys/reports/cuda_gpu_trace.py]... \n"
            f"{NSYS_GPU_HEADER}\n"
            "1134711990,661398,123,,,,,,,,,,4.194,6337.593,Pinned,Device,NVIDIA A100 (0),1,,13,[CUDA memcpy "
            "Host-to-Device]\n"
            "1135401990,1000,124,1,2,3,128,1,1,32,0.001,0.000,,,,,NVIDIA A100 (0),1,,7,kernel_b\n"
            '1135411990,2000,125,148,1,1,256,1,1,36,0.000,0.025,,,,,NVIDIA A100 (0),1,,7,"void k<float>(float*, int)"\n'
        )
        return reader_checks(reader, f)
    examples: dict[str, Callable[[], Path]] = {
        "kineto": lambda: ROOT / "examples" / "profile" / "train_step.pt.trace.json.gz",
        "accelsim": lambda: ROOT / "examples" / "traces",
        "nsys_sqlite": lambda: shared_path(
            "profiles", "nsys-sqlite", "pipit-cloverleaf", "perlmutter-cloverleaf-cuda.sqlite.xz"
        ),
        "nvprof": lambda: shared_path(
            "profiles", "nvprof", "magus", "devid_rodinia", "traces", "traces_rodinia_backprop.csv"
        ),
        "ncu": lambda: shared_path("profiles", "ncu", "microgpusim", "nsight_vectoradd_100_32_metrics_all.csv"),
        "macsim": lambda: shared_path(
            "simulators", "macsim", "sst-unit-test", "traces", "nvbit", "vectormultadd", "4096"
        ),
        "hyfiss": lambda: shared_path("simulators", "hyfiss", "synthetic_app"),
    }
    return reader_checks(reader, examples[name]())


def adapter_case(name: str, tmp: Path) -> list[Check]:
    adapter = simsample.get_adapter(name)
    if name == "accelsim":
        traces = shared_path("simulators", "accelsim", "tinytrace3")
        outputs = [shared_path("simulators", "accelsim", "tinytrace3", "run_full.out.gz")]
    elif name == "macsim":
        traces = shared_path("simulators", "macsim", "sst-unit-test", "traces", "nvbit", "vectormultadd", "4096")
        outputs = [shared_path("simulators", "macsim", "run-output-vectormultadd4096")]
    else:
        traces = shared_path("simulators", "hyfiss", "synthetic_app")
        outputs = [traces / "outputs"]
    wl = adapter.read(traces)
    every = tmp / "every-launch.csv"  # a plan of every launch: no cost column needed (trace folders have none)
    every.write_text("kernel_id,weight\n" + "".join(f"{k},1\n" for k in wl.kernels["kernel_id"]))
    plan = simsample.plan(wl, "explicit", file=str(every))
    return adapter_checks(adapter, traces, outputs=outputs, plan=plan)


def _host():
    from simsample.manager import get_host

    return get_host()


BUILDERS: dict[str, Callable[[str, Path], list[Check]]] = {
    "sampler": sampler_case,
    "reader": reader_case,
    "adapter": adapter_case,
}


@pytest.fixture(scope="session")
def checks_of(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str], dict[str, Check]]:
    """The named checks of one plugin, built on first use and kept for the session."""
    cache: dict[tuple[str, str], dict[str, Check]] = {}

    def get(kind: str, name: str) -> dict[str, Check]:
        if (kind, name) not in cache:
            tmp = tmp_path_factory.mktemp(f"conformance-{kind}-{name}")
            cache[kind, name] = {c.name: c for c in BUILDERS[kind](name, tmp)}
        return cache[kind, name]

    return get


@pytest.mark.parametrize("check", SAMPLER_CHECKS)
@pytest.mark.parametrize("sampler", SAMPLERS)
def test_sampler_conformance(checks_of, sampler: str, check: str) -> None:
    checks_of("sampler", sampler)[check]()


@pytest.mark.parametrize("check", READER_CHECKS)
@pytest.mark.parametrize("reader", READERS)
def test_reader_conformance(checks_of, reader: str, check: str) -> None:
    checks_of("reader", reader)[check]()


@pytest.mark.parametrize("check", ADAPTER_CHECKS)
@pytest.mark.parametrize("adapter", ADAPTERS)
def test_adapter_conformance(checks_of, adapter: str, check: str) -> None:
    checks_of("adapter", adapter)[check]()


def test_every_registered_plugin_is_covered() -> None:
    """A new built-in plugin (or adapter) must be added to this file's lists to be checked; plugins
    of other distributions installed beside simsample are theirs to check."""
    host = _host()
    host.load()
    ours = {"simsample", "simsample-accelsim", "simsample-macsim", "simsample-hyfiss"}
    registered: dict[str, set[str]] = {"samplers": set(), "readers": set(), "adapters": set()}
    for info in host.infos.values():
        if info.distribution in ours:
            for kind, names in info.registers.items():
                registered.setdefault(kind, set()).update(names)
    assert registered["samplers"] == set(SAMPLERS)
    assert registered["readers"] == set(READERS)
    assert registered["adapters"] == set(ADAPTERS)
