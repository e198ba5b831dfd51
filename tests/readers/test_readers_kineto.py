"""Kineto / PyTorch-profiler reader: real HTA and ResNet-50 traces, the bulk scanner against the
json-module path, exact times, ranks, and hand-written layouts the scanner must not mis-read."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from simsample.errors import FormatError, UserError
from simsample.plugins.readers._kineto import decode as kd
from simsample.plugins.readers._kineto import native as kn
from simsample.plugins.readers._kineto import scan as ks
from simsample.plugins.readers.kineto import read_file
from simsample.reading import detect_format, load_workload
from tests.helpers import assert_kineto_engines_agree, shared_path

HTA = {
    ("critical_path", "alexnet", "benchmark_result_2869224_1695835535_trace.json.gz"): 79,
    ("df_index_resolver", "df_index_resolver.json.gz"): 19370,
    ("nccl_parser_config", "nccl_data.json.gz"): 2700,
    ("negative_queue_length_values_check", "rank0.json.gz"): 6080,
    ("ns_resolution_trace", "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"): 4350,
    ("trace_diff", "control", "control.json.gz"): 8568,
    ("trace_diff", "test", "test.json.gz"): 9876,
    ("trace_filter", "sampled_rank-0.json.gz"): 1154,
    ("trace_filter", "sampled_rank-1.json.gz"): 1104,
}
RESNET = {
    ("resnet50_num_workers_0", "worker0.1623143089861.pt.trace.json.gz"): 8772,
    ("resnet50_num_workers_4", "worker0.1623212756351.pt.trace.json.gz"): 8868,
}


def _all_files():
    for parts, n in HTA.items():
        yield ("kineto", "hta", *parts), n
    for parts, n in RESNET.items():
        yield ("kineto", "kineto-resnet50", *parts), n


@pytest.mark.parametrize("parts,count", list(_all_files()), ids=lambda x: x[-1] if isinstance(x, tuple) else str(x))
def test_kernel_counts(parts, count):
    f = shared_path("profiles", *parts)
    assert detect_format(f) == "kineto"
    wl = load_workload([f])
    assert len(wl) == count
    assert wl.format == "kineto"
    assert wl.kernels["kernel_id"].tolist() == list(range(count))
    assert (np.diff(wl.kernels["start_ns"].to_numpy()) >= 0).all()


@pytest.mark.parametrize("parts,count", list(_all_files()), ids=lambda x: x[-1] if isinstance(x, tuple) else str(x))
def test_bulk_scan_equals_json_module(parts, count):
    """The compiled extractor, the typed decoder, the regex scanner and json.loads read exactly
    the same launches from every real trace (each engine hands what it cannot take to the next)."""
    assert_kineto_engines_agree(shared_path("profiles", *parts))


def test_values_and_metadata():
    f = shared_path(
        "profiles", "kineto", "hta", "critical_path", "alexnet", "benchmark_result_2869224_1695835535_trace.json.gz"
    )
    wl = load_workload([f])
    k = wl.kernels.iloc[0]
    assert k["start_ns"] == 1695835573023613000 and k["duration_ns"] == 71000
    assert (k["grid_x"], k["grid_y"], k["block_x"]) == (864, 1, 256)
    assert (k["stream"], k["correlation"], k["regs"], k["shmem"]) == (7, 218, 47, 0)
    assert str(k["name"]).startswith(
        "void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4"
    )
    assert wl.meta["gpu"] == "NVIDIA A100-PG509-200"
    assert wl.meta["rank"] == 0
    assert wl.memcpy_count == 19  # gpu_memcpy + gpu_memset events


def test_capital_kernel_category_and_old_args():
    f = shared_path(
        "profiles", "kineto", "kineto-resnet50", "resnet50_num_workers_0", "worker0.1623143089861.pt.trace.json.gz"
    )
    wl = load_workload([f])
    assert wl.meta["gpu"] == "Tesla V100-DGXS-32GB"
    assert "rank" not in wl.meta
    assert wl.kernels["correlation"].iloc[0] == 34441


def test_nanosecond_timestamps_are_exact():
    f = shared_path("profiles", "kineto", "hta", "ns_resolution_trace", "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz")
    k = load_workload([f]).kernels
    # "ts": 1712195495505582.988, "dur": 4.928 -- beyond float64's resolution at this magnitude
    assert k["start_ns"].iloc[0] == 1712195495505582988
    assert k["duration_ns"].iloc[0] == 4928


def test_base_time_is_added():
    f = shared_path("profiles", "kineto", "hta", "nccl_parser_config", "nccl_data.json.gz")
    wl = load_workload([f])
    assert wl.meta["base_time_ns_added"] is True
    assert wl.kernels["start_ns"].min() > 1711964646000000000


def test_several_ranks_and_rank_option():
    d = shared_path("profiles", "kineto", "hta", "trace_filter")
    files = [d / "sampled_rank-1.json.gz", d / "sampled_rank-0.json.gz"]
    wl = load_workload(files)
    k = wl.kernels
    assert len(wl) == 1154 + 1104
    assert sorted(wl.meta["ranks"]) == [0, 1]
    assert k.groupby("rank").size().to_dict() == {0: 1154, 1: 1104}
    assert k["kernel_id"].tolist() == list(range(len(wl)))
    start = k["start_ns"].to_numpy()
    assert (np.diff(start) >= 0).all()  # renumbered in global start order
    one = load_workload(files, options={"rank": 1})
    assert len(one) == 1104 and one.meta["rank"] == 1 and one.source == str(d / "sampled_rank-1.json.gz")
    assert "rank" not in one.kernels.columns
    with pytest.raises(UserError, match="--rank 5: no such rank"):
        load_workload(files, options={"rank": 5})


# --- hand-written traces ---------------------------------------------------------------------
def _kernel(i, ts, name="k(int)", **args):
    a = {
        "device": 0,
        "stream": 7,
        "correlation": 100 + i,
        "registers per thread": 32,
        "shared memory": 0,
        "grid": [2, 1, 1],
        "block": [64, 1, 1],
    }
    a.update(args)
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": 1.5, "args": a}


def _write(path: Path, events, *, indent=None, gz=False, extra=None, raw=None) -> Path:
    doc = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "GPU Z"}], "traceEvents": events, **(extra or {})}
    text = raw if raw is not None else json.dumps(doc, indent=indent)
    if gz:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def test_compact_json_and_cpu_events(tmp_path):
    events = [{"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 1, "dur": 2, "args": {"grid": "not a kernel"}}]
    events += [_kernel(i, 10.25 + i) for i in range(5)]
    events += [{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "ts": 3, "dur": 1, "args": {}}]
    wl = load_workload([_write(tmp_path / "c.json", events)])
    assert len(wl) == 5 and wl.memcpy_count == 1
    assert wl.kernels["start_ns"].tolist() == [10250 + 1000 * i for i in range(5)]
    assert wl.kernels["duration_ns"].tolist() == [1500] * 5
    assert wl.meta["gpu"] == "GPU Z"


def test_layouts_the_scanner_cannot_take_are_decoded_alone(tmp_path):
    events = [_kernel(0, 10), _kernel(1, 11, name='weird "quoted" {name}')]
    odd = _kernel(2, 12)
    odd = {"args": odd.pop("args"), **odd}  # args before cat: another key order
    nested = _kernel(3, 13)
    nested["args"]["extra"] = {"nested": [1, 2]}
    events += [odd, nested, _kernel(4, 1.4e1)]
    p = _write(tmp_path / "o.json", events, indent=2)
    fast, slow = read_file(p, engine="scan"), read_file(p, fast=False)
    assert sorted(map(str, fast["arrays"]["name"])) == sorted(map(str, slow["arrays"]["name"]))
    assert fast["scan"]["decoded_alone"] >= 3
    wl = load_workload([p])
    assert wl.kernels["name"].astype(str).tolist() == ["k(int)", 'weird "quoted" {name}', "k(int)", "k(int)", "k(int)"]
    assert wl.kernels["start_ns"].tolist() == [10000, 11000, 12000, 13000, 14000]


def test_escapes_in_names(tmp_path):
    names = ["back\\slash<int>()", "tab\there", "caf\u00e9", 'q"uote', "plain"]
    wl = load_workload(
        [_write(tmp_path / "e.json", [_kernel(i, 10 + i, name=n) for i, n in enumerate(names)], indent=2)]
    )
    assert wl.kernels["name"].astype(str).tolist() == names


def test_name_before_cat_with_braces_falls_back_to_json(tmp_path):
    ev = {
        "name": "f<{lambda()#1}>(int)",
        "ph": "X",
        "cat": "Kernel",
        "ts": 5,
        "dur": 1,
        "args": {"grid": [1, 1, 1], "block": [32, 1, 1]},
    }
    wl = load_workload([_write(tmp_path / "n.json", [ev], indent=1)])
    assert wl.kernels["name"].astype(str).tolist() == ["f<{lambda()#1}>(int)"]
    assert wl.kernels["correlation"].tolist() == [-1]


def test_rank_from_file_name_and_duplicates(tmp_path):
    a = _write(tmp_path / "run_rank3.json", [_kernel(0, 10)])
    b = _write(tmp_path / "run_rank7.json", [_kernel(0, 5)])
    wl = load_workload([a, b])
    assert wl.kernels["rank"].tolist() == [7, 3]  # b starts first
    c = _write(tmp_path / "copy_rank3.json", [_kernel(0, 1)])
    with pytest.raises(UserError, match="several traces claim rank 3"):
        load_workload([a, c])


def test_kernel_without_grid_is_reported(tmp_path):
    ev = _kernel(0, 1)
    del ev["args"]["grid"]
    p = _write(tmp_path / "g.json", [ev])
    with pytest.raises(FormatError) as err:
        load_workload([p])
    assert "args.grid" in str(err.value) and "kernel #1" in str(err.value)


def test_truncated_gzip_and_truncated_json(tmp_path):
    good = _write(tmp_path / "t.json.gz", [_kernel(i, i) for i in range(2000)], gz=True)
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(good.read_bytes()[: len(good.read_bytes()) // 2])
    with pytest.raises(FormatError, match="truncated or corrupt|cannot decompress"):
        load_workload([cut], format="kineto")
    plain = _write(tmp_path / "t.json", [_kernel(i, i) for i in range(10)])
    half = tmp_path / "half.json"
    half.write_text(plain.read_text()[:-200])
    with pytest.raises(FormatError, match="truncated JSON"):
        load_workload([half])


def test_not_a_trace(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"traceEvents": 5, "other": [}')
    with pytest.raises(FormatError):
        load_workload([p], format="kineto")


def test_scanner_layout_is_learned_from_the_file():
    ev = _kernel(0, 1)
    layout = ks.build_layout(ev)
    assert layout is not None
    text = json.dumps(ev, indent=3)
    assert len(layout.pattern.findall(text)) == 1
    moved = {"args": ev["args"], "cat": "kernel", "name": "x", "ts": 1, "dur": 1}
    assert ks.build_layout(moved) is None  # args before cat: not a bulk layout


@pytest.mark.parametrize("threads", [True, False], ids=["threads", "processes"])
def test_rank_files_read_in_workers(monkeypatch, threads):
    """Several rank files are read at once: in threads with the compiled extractor, else in
    worker processes; the workload is the same as read one file after the other."""
    import simsample.plugins.readers.kineto as kineto

    if threads and not kn.AVAILABLE:
        pytest.skip(f"compiled extractor unavailable: {kn.REASON}")
    d = shared_path("profiles", "kineto", "hta", "trace_filter")
    files = [d / "sampled_rank-0.json.gz", d / "sampled_rank-1.json.gz"]
    serial = load_workload(files)
    monkeypatch.setattr(kineto, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(kineto, "_workers", lambda paths: 2)
    monkeypatch.setattr(kn, "AVAILABLE", threads)
    parallel = load_workload(files)
    assert parallel.fingerprint == serial.fingerprint
    assert parallel.kernels.equals(serial.kernels)


@pytest.mark.skipif(not kd.AVAILABLE, reason="msgspec not installed")
def test_typed_decoder_exact_times_and_fallbacks(tmp_path):
    """The typed decoder keeps every digit of ts/dur, equals the json-module path, and hands
    files it cannot take (a name that is not a string, a kernel without a grid) to the others."""
    raw_events = ",".join(
        [
            '{"ph": "X", "cat": "kernel", "name": "a", "ts": 4458676983543.183, "dur": 1.0005, '
            '"args": {"grid": [1, 1, 1], "block": [32, 1, 1], "stream": 7}}',
            '{"ph": "X", "cat": "Kernel", "name": "b\\u00e9", "ts": 1712195495505583, "dur": 1.00049, "args": '
            '{"block": [32, 1, 1], "grid": [2, 1, 1], "correlation": 5}}',
            '{"ph": "X", "cat": "kernel", "name": "c", "ts": 1.4e1, "dur": 2, '
            '"args": {"grid": [1, 1, 1], "block": [1, 1, 1], "extra": {"x": [1]}}}',
            '{"ph": "i", "cat": "kernel", "name": "instant", "ts": 3, "args": {}}',
            '{"ph": "X", "cat": "gpu_memcpy", "name": "m", "ts": 3, "dur": 1, "args": {}}',
        ]
    )
    p = _write(tmp_path / "t.json", None, raw='{"traceEvents": [' + raw_events + '], "baseTimeNanoseconds": 7}')
    fast, slow = read_file(p, engine="decode"), read_file(p, fast=False)
    assert fast["scan"]["engine"] == "decode"
    assert read_file(p)["scan"]["engine"] == "decode"  # 1.4e1: the compiled extractor hands it over
    assert fast["memcpy"] == slow["memcpy"] == 1
    assert fast["arrays"]["start_ns"].tolist() == [4458676983543183 + 7, 1712195495505583000 + 7, 14000 + 7]
    assert fast["arrays"]["duration_ns"].tolist() == [1001, 1000, 2000]
    assert list(map(str, fast["arrays"]["name"])) == ["a", "b\u00e9", "c"]
    assert fast["arrays"]["stream"].tolist() == [7, 0, 0]
    assert fast["arrays"]["correlation"].tolist() == [-1, 5, -1]
    assert "regs" not in fast["arrays"]
    for col in slow["arrays"]:
        assert np.array_equal(
            np.asarray(fast["arrays"][col], dtype=object), np.asarray(slow["arrays"][col], dtype=object)
        ), col
    odd = _write(tmp_path / "n.json", [{"ph": "X", "cat": "cpu_op", "name": 5, "ts": 1, "dur": 1}, _kernel(0, 10)])
    assert read_file(odd, engine="decode")["scan"]["engine"] != "decode"
    assert load_workload([odd]).kernels["start_ns"].tolist() == [10000]
    nogrid = _kernel(1, 11)
    del nogrid["args"]["grid"]
    with pytest.raises(FormatError, match="args.grid"):
        load_workload([_write(tmp_path / "g.json", [_kernel(0, 10), nogrid])])
