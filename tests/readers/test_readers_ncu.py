"""Nsight Compute reader: the real microgpusim raw page and hand-written raw and long forms."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from simsample.errors import FormatError
from simsample.reading import detect_format, load_workload
from tests.helpers import shared_path


def test_microgpusim_raw_page():
    f = shared_path("profiles", "ncu", "microgpusim", "nsight_vectoradd_100_32_metrics_all.csv")
    assert detect_format(f) == "ncu"
    wl = load_workload([f])
    k = wl.kernels
    assert len(wl) == 3 and wl.format == "ncu"
    assert k["kernel_id"].tolist() == [0, 1, 2]
    assert k["name"].astype(str).tolist() == ["vecAdd"] * 3
    # old ncu: no Block Size / Grid Size columns, the launch__*_size totals stand in
    assert wl.meta["launch_shape"] == "totals"
    assert (k["grid_x"].tolist(), k["block_x"].tolist(), k["block_y"].tolist()) == ([1] * 3, [1024] * 3, [1] * 3)
    assert k["duration_ns"].tolist() == [2720] * 3  # gpu__time_duration in nsecond
    assert k["stream"].tolist() == [7] * 3 and k["regs"].tolist() == [8] * 3
    assert k["smsp__inst_executed_sum"].tolist() == [344.0] * 3
    assert k["dram__bytes_per_sec"].iloc[0] == pytest.approx(2_917_647_058.82)  # thousands separators
    assert k["gpc__elapsed_cycles_max"].tolist() == [5774.0, 5761.0, 5801.0]
    assert "inst_executed" not in k.columns  # instanced list values are not per-launch numbers
    assert not any(c.startswith("device__attribute_") for c in k.columns)
    assert wl.meta["gpu"] == "NVIDIA GeForce GTX 1080"
    assert wl.meta["device_attributes"]["device__attribute_multiprocessor_count"] == 20.0
    assert wl.meta["metric_units"]["gpu__time_duration"] == "nsecond"
    assert wl.meta["metric_units"]["dram__bytes_per_sec"] == "byte/second"


RAW = (
    "==PROF== Connected to process 77 (/app)\n"
    '==PROF== Profiling "k" - 0: 0%....50%....100% - 9 passes\n'
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device",'
    '"CC","gpu__time_duration.sum","smsp__inst_executed.sum","dram__bytes_read.sum","launch__registers_per_thread",'
    '"sm__throughput.avg.pct_of_peak_sustained_elapsed"\n'
    '"","","","","","","","","","","","usecond","inst","Kbyte","register/thread","%"\n'
    '"0","77","app","host","k","1","7","(256, 1, 1)","(1024, 2, 1)","NVIDIA H100 (0)","9.0","2.50","1,234,567","1.5",'
    '"32","45.1"\n'
    '"1","77","app","host","j","1","7","(128, 2, 1)","(8, 1, 1)","NVIDIA H100 (0)","9.0","1,002.25","9","n/a","40",'
    '"3"\n'
    "==PROF== Disconnected from process 77\n"
)


def test_raw_page_with_shapes_units_and_separators(tmp_path):
    p = tmp_path / "raw.csv"
    p.write_text(RAW)
    assert detect_format(p) == "ncu"
    wl = load_workload([p])
    k = wl.kernels
    assert wl.meta["ncu_form"] == "raw" and wl.meta["launch_shape"] == "xyz"
    assert (k["block_x"].tolist(), k["block_y"].tolist(), k["grid_x"].tolist(), k["grid_y"].tolist()) == (
        [256, 128],
        [1, 2],
        [1024, 8],
        [2, 1],
    )
    assert k["duration_ns"].tolist() == [2500, 1002250]  # usecond → ns
    assert k["gpu__time_duration.sum"].tolist() == [2500.0, 1002250.0]
    assert k["smsp__inst_executed.sum"].tolist() == [1234567.0, 9.0]
    assert k["dram__bytes_read.sum"].iloc[0] == 1500.0 and math.isnan(k["dram__bytes_read.sum"].iloc[1])
    assert k["regs"].tolist() == [32, 40]
    assert wl.meta["gpu"] == "NVIDIA H100" and wl.meta["compute_capability"] == "9.0"
    assert wl.default_metric() == "duration_ns"


LONG_HEADER = (
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device",'
    '"CC","Section Name","Metric Name","Metric Unit","Metric Value"'
)


def _long_row(i, name, metric, unit, value, block="(32, 1, 1)", grid="(4, 1, 1)"):
    return (
        f'"{i}","9","app","h","{name}","1","7","{block}","{grid}","GPU","8.0",'
        f'"Command line profiler metrics","{metric}","{unit}","{value}"'
    )


def test_long_form_with_per_row_units(tmp_path):
    rows = [
        _long_row(1, "b", "gpu__time_duration.sum", "msecond", "1.5"),
        _long_row(1, "b", "smsp__inst_executed.sum", "inst", "2,048"),
        _long_row(0, "a", "gpu__time_duration.sum", "usecond", "3"),
        _long_row(0, "a", "smsp__inst_executed.sum", "inst", "100"),
        _long_row(0, "a", "sm__sass_names", "", "x; y"),
    ]
    p = tmp_path / "long.csv"
    p.write_text("==PROF== Connected\n" + LONG_HEADER + "\n" + "\n".join(rows) + "\n")
    wl = load_workload([p])
    k = wl.kernels
    assert wl.meta["ncu_form"] == "long"
    assert k["kernel_id"].tolist() == [0, 1]  # sorted by ncu ID
    assert k["name"].astype(str).tolist() == ["a", "b"]
    assert k["duration_ns"].tolist() == [3000, 1500000]
    assert k["smsp__inst_executed.sum"].tolist() == [100.0, 2048.0]
    assert "sm__sass_names" not in k.columns
    assert wl.meta["metric_units"]["gpu__time_duration.sum"] == "nsecond"


def test_long_form_without_duration_is_untimed(tmp_path):
    rows = [
        _long_row(0, "a", "smsp__inst_executed.sum", "inst", "10"),
        _long_row(1, "a", "smsp__inst_executed.sum", "inst", "12"),
    ]
    p = tmp_path / "l.csv"
    p.write_text(LONG_HEADER + "\n" + "\n".join(rows) + "\n")
    wl = load_workload([p])
    assert not wl.timed
    assert wl.default_metric() == "smsp__inst_executed.sum"
    assert np.array_equal(wl.values(), [10.0, 12.0])


def test_no_launch_shape(tmp_path):
    p = tmp_path / "s.csv"
    p.write_text(
        '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n"0","k","smsp__inst_executed.sum","inst","1"\n'
    )
    with pytest.raises(FormatError, match="no launch shape"):
        load_workload([p])


def test_bad_shape_and_bad_row(tmp_path):
    p = tmp_path / "b.csv"
    p.write_text(RAW.replace('"(8, 1, 1)"', '"(8, 1)"'))
    with pytest.raises(FormatError, match="'Grid Size': expected three numbers"):
        load_workload([p])
    q = tmp_path / "r.csv"
    q.write_text(RAW.replace('"9","n/a","40","3"', '"9","n/a"'))
    with pytest.raises(FormatError) as err:
        load_workload([q])
    assert "line 6" in str(err.value) and "expected 16 comma-separated fields, got 14" in str(err.value)


def test_pka_plans_directly_on_an_ncu_export(tmp_path):
    """The ncu workload carries the exact metric names PKA asks for."""
    from simsample.cli import run
    from simsample.manager import get_host

    pka = get_host().samplers().get("pka")
    if pka is None:
        pytest.skip("pka sampler not installed")
    rng = np.random.default_rng(3)
    rows = []
    for i in range(60):
        k = i % 3
        for m in pka.requires:
            base = {"launch__grid_size": 64 * (k + 1), "smsp__thread_inst_executed_per_inst_executed.ratio": 31.5}.get(
                m, 1000 * (k + 1)
            )
            v = base * (1 + 0.01 * rng.standard_normal()) if m != "launch__grid_size" else base
            rows.append(
                _long_row(
                    i, f"kern{k}", m, "inst" if m.endswith(".sum") else "", f"{v:,.2f}", grid=f"({64 * (k + 1)}, 1, 1)"
                )
            )
        rows.append(
            _long_row(
                i, f"kern{k}", "gpu__time_duration.sum", "usecond", f"{5 * (k + 1):.3f}", grid=f"({64 * (k + 1)}, 1, 1)"
            )
        )
    p = tmp_path / "pka.csv"
    p.write_text(LONG_HEADER + "\n" + "\n".join(rows) + "\n")
    wl = load_workload([p])
    wl.require(pka.requires, who="sampler pka")
    assert run(["plan", str(p), "--sampler", "pka", "-o", str(tmp_path / "plan.json")]) == 0
