"""Nsight Systems readers: the SQLite export (real CloverLeaf export, synthetic column sets) and
the CSV reports (hand-written cuda_gpu_trace and cuda_kern_exec_trace)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from simsample.errors import FormatError
from simsample.io.names import base_name
from simsample.reading import detect_format, load_workload
from tests.helpers import shared_path

# --- SQLite ----------------------------------------------------------------------------------


def test_cloverleaf_export():
    f = shared_path("profiles", "nsys-sqlite", "pipit-cloverleaf", "perlmutter-cloverleaf-cuda.sqlite.xz")
    assert detect_format(f) == "nsys_sqlite"
    wl = load_workload([f])
    assert wl.format == "nsys_sqlite" and wl.source == str(f)
    assert len(wl) == 1312
    assert wl.memcpy_count == 279
    assert wl.meta["gpu"] == "NVIDIA A100-SXM4-80GB"
    assert wl.meta["nsys_version"] == "2024.5.1.113"
    assert wl.meta["name_column"] == "demangledName"
    k = wl.kernels
    assert str(k["name"].iloc[0]).startswith("void clover::par_ranged2d_kernel<")
    assert str(k["mangled"].iloc[0]).startswith("_ZN6clover19par_ranged2d_kernel")
    assert isinstance(k["mangled"].dtype, pd.CategoricalDtype)
    first = k.iloc[0]
    assert (first["start_ns"], first["duration_ns"]) == (533338240, 534705884 - 533338240)
    assert (first["grid_x"], first["block_x"], first["regs"], first["correlation"]) == (115426, 256, 32, 452)
    assert k["kernel_id"].tolist() == list(range(1312))
    assert (np.diff(k["start_ns"].to_numpy()) >= 0).all()


def test_late_non_integer_value_names_its_row(tmp_path):
    """A REAL value past the driver's first batch stops the Arrow scan; the fallback names the row."""
    rows = [_row(i, 1, i) for i in range(1500)]
    rows[1400]["gridX"] = 2.5
    p = _export(tmp_path / "r.sqlite", _FULL, rows, STRINGS)
    with pytest.raises(FormatError, match=r"row 1401: gridX: expected an integer, got 2.5"):
        load_workload([p])


def test_cloverleaf_matches_pipits_csv():
    """pipit's own dataframe dump of the same export: same kernel starts and short names."""
    f = shared_path("profiles", "nsys-sqlite", "pipit-cloverleaf", "perlmutter-cloverleaf-cuda.sqlite.xz")
    csv = shared_path("profiles", "nsys-sqlite", "pipit-cloverleaf", "cloverleaf_gpu_trace.csv")
    d = pd.read_csv(csv)
    enter = d[(d["type"] == "kernel") & (d["Event Type"] == "Enter")]
    wl = load_workload([f])
    assert wl.kernels["start_ns"].tolist() == enter["Timestamp (ns)"].tolist()
    assert [base_name(str(n)) for n in wl.kernels["name"]] == enter["Name"].tolist()


_FULL = [
    "start",
    "end",
    "deviceId",
    "contextId",
    "streamId",
    "correlationId",
    "demangledName",
    "shortName",
    "mangledName",
    "registersPerThread",
    "gridX",
    "gridY",
    "gridZ",
    "blockX",
    "blockY",
    "blockZ",
    "staticSharedMemory",
    "dynamicSharedMemory",
]


def _export(
    path: Path,
    columns: list[str],
    rows: list[dict],
    strings: dict[int, str] | None = None,
    extra: dict[str, int] | None = None,
) -> Path:
    con = sqlite3.connect(path)
    con.execute(f"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL ({', '.join(c + ' INTEGER' for c in columns)})")
    for r in rows:
        con.execute(
            f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({', '.join('?' * len(columns))})",
            [r.get(c) for c in columns],
        )
    if strings is not None:
        con.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)")
        con.executemany("INSERT INTO StringIds VALUES (?, ?)", list(strings.items()))
    for table, n in (extra or {}).items():
        con.execute(f"CREATE TABLE {table} (start INTEGER, end INTEGER)")
        con.executemany(f"INSERT INTO {table} VALUES (?, ?)", [(i, i + 1) for i in range(n)])
    con.commit()
    con.close()
    return path


def _row(start, dur, corr, name_id=1, **kw):
    r = {
        "start": start,
        "end": start + dur,
        "deviceId": 0,
        "contextId": 1,
        "streamId": 7,
        "correlationId": corr,
        "demangledName": name_id,
        "shortName": name_id + 100,
        "mangledName": name_id + 200,
        "registersPerThread": 32,
        "gridX": 10,
        "gridY": 1,
        "gridZ": 1,
        "blockX": 128,
        "blockY": 1,
        "blockZ": 1,
        "staticSharedMemory": 1024,
        "dynamicSharedMemory": 512,
    }
    r.update(kw)
    return r


STRINGS = {1: "void k<int>(int*)", 2: "void j(float)", 101: "k", 102: "j", 201: "_Z1kIiEvPi", 202: "_Z1jf"}


def test_synthetic_full_columns_order_and_counts(tmp_path):
    rows = [_row(300, 10, 3), _row(100, 5, 2, name_id=2), _row(100, 7, 1)]
    p = _export(
        tmp_path / "a.sqlite", _FULL, rows, STRINGS, {"CUPTI_ACTIVITY_KIND_MEMCPY": 4, "CUPTI_ACTIVITY_KIND_MEMSET": 2}
    )
    wl = load_workload([p])
    k = wl.kernels
    assert k["correlation"].tolist() == [1, 2, 3]  # start order, ties by correlation id
    assert k["name"].astype(str).tolist() == ["void k<int>(int*)", "void j(float)", "void k<int>(int*)"]
    assert k["mangled"].astype(str).tolist() == ["_Z1kIiEvPi", "_Z1jf", "_Z1kIiEvPi"]
    assert k["duration_ns"].tolist() == [7, 5, 10]
    assert k["shmem"].tolist() == [1536] * 3
    assert wl.memcpy_count == 6
    assert "device" not in k.columns  # one device only


def test_older_column_set_short_names_only(tmp_path):
    cols = ["start", "end", "streamId", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ", "shortName"]
    p = _export(tmp_path / "old.sqlite", cols, [_row(5, 1, None), _row(1, 2, None, name_id=2)], STRINGS)
    wl = load_workload([p])
    assert wl.meta["name_column"] == "shortName"
    assert wl.kernels["name"].astype(str).tolist() == ["j", "k"]
    assert "regs" not in wl.kernels.columns and "correlation" not in wl.kernels.columns
    assert "mangled" not in wl.kernels.columns


def test_values_too_large_to_pack_are_read_unpacked(tmp_path):
    rows = [
        _row(1, 1, 1, gridY=100_000, blockZ=5000, registersPerThread=600, deviceId=3),
        _row(2, 1, 2, deviceId=0, staticSharedMemory=2**41),
    ]
    p = _export(tmp_path / "big.sqlite", _FULL, rows, STRINGS)
    k = load_workload([p]).kernels
    assert k["grid_y"].tolist() == [100_000, 1]
    assert k["block_z"].tolist() == [5000, 1]
    assert k["regs"].tolist() == [600, 32]
    assert k["device"].tolist() == [3, 0]
    assert k["shmem"].tolist() == [1536, 2**41 + 512]


def test_null_correlation_ids_become_minus_one(tmp_path):
    p = _export(tmp_path / "n.sqlite", _FULL, [_row(1, 1, None), _row(2, 1, 9)], STRINGS)
    assert load_workload([p]).kernels["correlation"].tolist() == [-1, 9]


def test_missing_kernel_table(tmp_path):
    p = tmp_path / "nok.sqlite"
    con = sqlite3.connect(p)
    con.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
    con.commit()
    con.close()
    assert detect_format(p) == "nsys_sqlite"
    with pytest.raises(
        FormatError, match="has no CUPTI_ACTIVITY_KIND_KERNEL table: export with `nsys export --type sqlite`"
    ):
        load_workload([p])


def test_name_id_not_in_string_table(tmp_path):
    p = _export(tmp_path / "s.sqlite", _FULL, [_row(1, 1, 1, name_id=7)], STRINGS)
    with pytest.raises(FormatError, match="demangledName id 7 is not in StringIds"):
        load_workload([p])


def test_kernel_ending_before_start(tmp_path):
    r = _row(10, 1, 1)
    r["end"] = 5
    p = _export(tmp_path / "e.sqlite", _FULL, [r], STRINGS)
    with pytest.raises(FormatError, match="ends before it starts"):
        load_workload([p])


def test_corrupt_database(tmp_path):
    p = tmp_path / "c.sqlite"
    p.write_bytes(b"SQLite format 3\x00" + b"\x01" * 2000)
    with pytest.raises(FormatError, match="SQLite"):
        load_workload([p])


# --- CSV reports -----------------------------------------------------------------------------
GPU_HEADER = (
    "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),"
    "Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name"
)


def test_cuda_gpu_trace(tmp_path):
    p = tmp_path / "gpu.csv"
    p.write_text(
        "\nNOTICE: Existing SQLite export found: x.sqlite\n"
        "Processing [x.sqlite] with [/opt/nsys/reports/cuda_gpu_trace.py]... \n"
        f"{GPU_HEADER}\n"
        "1134711990,661398,123,,,,,,,,,,4.194,6337.593,Pinned,Device,NVIDIA A100 (0),1,,13,"
        "[CUDA memcpy Host-to-Device]\n"
        '1135411990,2000,125,148,1,1,256,1,1,36,0.000,0.025,,,,,NVIDIA A100 (0),1,,7,"void k<float>(float*, int)"\n'
        "1135401990,1000,124,1,2,3,128,1,1,32,0.001,0.000,,,,,NVIDIA A100 (0),1,,7,kernel_b\n"
        ",,,,,,,,,,,,,,,,,,,,[CUDA memset]\n"
    )
    assert detect_format(p) == "nsys_csv"
    wl = load_workload([p])
    k = wl.kernels
    assert wl.memcpy_count == 2
    assert wl.meta["report"] == "cuda_gpu_trace" and wl.meta["gpu"] == "NVIDIA A100"
    assert k["name"].astype(str).tolist() == ["kernel_b", "void k<float>(float*, int)"]
    assert k["start_ns"].tolist() == [1135401990, 1135411990]
    assert k["duration_ns"].tolist() == [1000, 2000]
    assert (k["grid_y"].tolist(), k["grid_z"].tolist()) == ([2, 1], [3, 1])
    assert k["shmem"].tolist() == [1000, 25000]
    assert k["correlation"].tolist() == [124, 125]
    assert k["regs"].tolist() == [32, 36]


def test_cuda_gpu_trace_older_spelling_and_time_unit(tmp_path):
    p = tmp_path / "old.csv"
    p.write_text(
        "Start (us),Duration (us),CorrID,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DynSMem (MB),"
        "Bytes (MB),Throughput (MBps),SrcMemKd,DstMemKd,Device,Ctx,Strm,Name\n"
        "1.5,0.25,7,4,1,1,64,1,1,16,0.000,0.000,,,,,GPU (0),1,7,k\n"
    )
    k = load_workload([p]).kernels
    assert (k["start_ns"].tolist(), k["duration_ns"].tolist(), k["correlation"].tolist()) == ([1500], [250], [7])


def test_cuda_kern_exec_trace(tmp_path):
    p = tmp_path / "exec.csv"
    p.write_text(
        "API Start (ns),API Dur (ns),Queue Start (ns),Queue Dur (ns),Kernel Start (ns),Kernel Dur (ns),"
        "Total Dur (ns),PID,TID,DevId,API Function,GridXYZ,BlockXYZ,Kernel Name\n"
        "43803966,78512,,,43869847,75200,141081,1,1,0,cudaLaunchKernel,  2    1    1, 32    1    1,kernel_b\n"
        "43703966,78512,,,43769847,75100,141081,1,1,0,cuLaunchKernelEx, 148    2    1, 256    1    1,"
        '"void k<float>(float*, int)"\n'
    )
    assert detect_format(p) == "nsys_csv"
    wl = load_workload([p])
    k = wl.kernels
    assert wl.meta["report"] == "cuda_kern_exec_trace"
    assert k["name"].astype(str).tolist() == ["void k<float>(float*, int)", "kernel_b"]
    assert (k["grid_x"].tolist(), k["grid_y"].tolist(), k["block_x"].tolist()) == ([148, 2], [2, 1], [256, 32])
    assert k["duration_ns"].tolist() == [75100, 75200]
    assert k["stream"].tolist() == [0, 0]


def test_kern_exec_bad_shape_names_line(tmp_path):
    p = tmp_path / "exec.csv"
    p.write_text(
        "API Start (ns),API Dur (ns),Queue Start (ns),Queue Dur (ns),Kernel Start (ns),Kernel Dur (ns),"
        "Total Dur (ns),PID,TID,DevId,API Function,GridXYZ,BlockXYZ,Kernel Name\n"
        "1,1,,,2,3,4,1,1,0,f, 1 1 1, 32 1 1,a\n"
        "1,1,,,2,3,4,1,1,0,f, 1 1, 32 1 1,b\n"
    )
    with pytest.raises(FormatError) as err:
        load_workload([p])
    assert "line 3" in str(err.value) and "GridXYZ" in str(err.value)
