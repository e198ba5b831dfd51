"""The rules behind the hostile-user catalogue, on their own: output-versus-input checks, the
int64 boundary of readers, the generic CSV reader's column mapping, Kineto rank archives."""

from __future__ import annotations

import gzip
import json
import os
import tarfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsample.errors import FormatError, UserError
from simsample.io.csv_columns import CSV_KEYS as KEYS
from simsample.io.csv_columns import parse_columns
from simsample.io.files import check_output_file, temporary_cache
from simsample.io.tables import check_int64


def test_output_may_not_be_or_lie_inside_an_input(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    src.write_text("x")
    folder = tmp_path / "traces"
    folder.mkdir()
    os.link(src, tmp_path / "hard.csv")
    os.symlink(src, tmp_path / "soft.csv")
    for out in (
        src,
        tmp_path / "sub" / ".." / "in.csv",
        tmp_path / "hard.csv",
        tmp_path / "soft.csv",
        folder / "a" / "plan.json",
    ):
        with pytest.raises(UserError, match="inputs are never modified"):
            check_output_file(out, [src, folder])
    with pytest.raises(UserError, match="is a directory"):
        check_output_file(folder, [src])
    assert check_output_file(tmp_path / "plan.json", [src, folder, None]) == tmp_path / "plan.json"


def test_a_new_cache_is_removed_when_the_block_fails(tmp_path: Path) -> None:
    cache = tmp_path / "out.cache"
    with pytest.raises(KeyboardInterrupt):
        with temporary_cache(cache):
            cache.mkdir()
            (cache / "x").write_text("1")
            raise KeyboardInterrupt
    assert not cache.exists()
    cache.mkdir()
    with pytest.raises(RuntimeError):
        with temporary_cache(cache):
            raise RuntimeError
    assert cache.is_dir(), "a cache that existed before is kept"


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False), st.sampled_from([1, 1000, 10**9]))
def test_check_int64_accepts_exactly_what_fits(value: float, scale: int) -> None:
    fits = abs(value * scale) < 2.0**63
    if fits:
        check_int64(np.array([value]), path="f.csv", column="c", first_line=2, scale=scale)
    else:
        with pytest.raises(FormatError, match=r"f\.csv, line 2: column 'c': value .* is out of range"):
            check_int64(np.array([value]), path="f.csv", column="c", first_line=2, scale=scale)


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from([k for k in KEYS if not k.startswith(("duration_", "start_"))]),
        st.from_regex(r"[A-Za-z][A-Za-z0-9 _]{0,12}", fullmatch=True),
    ),
    st.sampled_from(["ns", "us", "ms", "s"]),
)
def test_columns_mapping_round_trips(mapping: dict[str, str], unit: str) -> None:
    mapping = {**mapping, "name": mapping.get("name", "Name"), f"duration_{unit}": "Duration"}
    text = ",".join(f"{k}={v}" for k, v in mapping.items())
    assert parse_columns(text) == {k: v.strip() for k, v in mapping.items()}


@pytest.mark.parametrize(
    "text, phrase",
    [
        ("name=A", "duration"),
        ("duration_ns=A", "name=COLUMN"),
        ("name=A,duration_ns=B,duration_us=C", "one duration"),
        ("name", "KEY=COLUMN"),
        ("name=A,speed=B,duration_ns=C", "unknown key"),
    ],
)
def test_columns_mapping_refusals(text: str, phrase: str) -> None:
    with pytest.raises(UserError, match=phrase):
        parse_columns(text)


def _trace(rank: int, n: int) -> bytes:
    events = [
        {
            "ph": "X",
            "cat": "kernel",
            "name": f"k{i % 2}",
            "ts": 10 + i,
            "dur": 1.5,
            "args": {"grid": [1, 1, 1], "block": [32, 1, 1], "stream": 7, "correlation": i},
        }
        for i in range(n)
    ]
    return gzip.compress(
        json.dumps({"traceEvents": events, "distributedInfo": {"rank": rank, "world_size": 2}}).encode()
    )


def test_rank_folder_and_archive_read_every_rank(tmp_path: Path) -> None:
    from simsample.reading import load_workload

    folder = tmp_path / "ranks"
    folder.mkdir()
    (folder / "rank0.json.gz").write_bytes(_trace(0, 3))
    (folder / "rank1.json.gz").write_bytes(_trace(1, 5))
    (folder / ".hidden.json").write_text("not read")
    with tarfile.open(tmp_path / "ranks.tar.gz", "w:gz") as tar:
        for f in ("rank0.json.gz", "rank1.json.gz"):
            tar.add(folder / f, arcname=f"run/{f}")
    by_files = load_workload([folder / "rank0.json.gz", folder / "rank1.json.gz"])
    by_folder = load_workload([folder])
    by_archive = load_workload([tmp_path / "ranks.tar.gz"])
    assert len(by_files) == len(by_folder) == len(by_archive) == 8
    assert by_folder.fingerprint == by_files.fingerprint == by_archive.fingerprint
    assert by_archive.meta["ranks"] == [0, 1]
    assert by_archive.meta["files"] == [
        f"{tmp_path / 'ranks.tar.gz'}:run/rank0.json.gz",
        f"{tmp_path / 'ranks.tar.gz'}:run/rank1.json.gz",
    ]
    assert len(load_workload([tmp_path / "ranks.tar.gz"], options={"rank": 1})) == 5


@pytest.mark.parametrize(
    "row, phrase",
    [
        (
            "1135411990,1e300,125,148,1,1,256,1,1,36,0.000,0.025,,,,,NVIDIA A100 (0),1,,7,k",
            "column 'Duration (ns)': value 1e+300 is out of range",
        ),
        ("1e19,2000,125,148,1,1,256,1,1,36,0.000,0.025,,,,,NVIDIA A100 (0),1,,7,k", "column 'Start (ns)'"),
        ("1135411990,2000,125,1e26,1,1,256,1,1,36,0.000,0.025,,,,,NVIDIA A100 (0),1,,7,k", "column 'GrdX'"),
        (
            "1135411990,1e400,125,148,1,1,256,1,1,36,0.000,0.025,,,,,NVIDIA A100 (0),1,,7,k",
            "column .Duration (ns).: value inf is out of range",
        ),
    ],
)
def test_nsys_csv_refuses_values_beyond_int64(tmp_path: Path, row: str, phrase: str) -> None:
    from simsample.reading import load_workload

    header = (
        "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),"
        "Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name"
    )
    p = tmp_path / "gpu.csv"
    p.write_text(
        f"{header}\n1135401990,1000,124,1,2,3,128,1,1,32,0.001,0.000,,,,,NVIDIA A100 (0),1,,7,kernel_b\n{row}\n"
    )
    with pytest.raises(
        FormatError, match=r"gpu\.csv, line 3: " + phrase.replace("(", r"\(").replace(")", r"\)").replace("+", r"\+")
    ):
        load_workload([p])


def test_a_folder_of_run_folders_is_not_one_multi_rank_run(tmp_path: Path) -> None:
    """Only the trace files directly in a folder are its ranks: a suite of runs, one per
    subfolder, is still evaluated run by run."""
    from simsample.reading import discover_profiles

    for run, n in (("a", 3), ("b", 4)):
        (tmp_path / run).mkdir()
        (tmp_path / run / "rank0.json.gz").write_bytes(_trace(0, n))
    found = discover_profiles([tmp_path])
    assert [p.name for p, _ in found] == ["a", "b"]


def test_results_of_warmups_are_ignored_and_of_another_run_refused(tmp_path: Path) -> None:
    """Results for launches the plan did not sample (warm-ups, a full run of the same workload)
    pass; more launches than the plan's workload has, or an infinite value, are refused."""
    import pandas as pd

    from simsample.adapter_support.results import check_results_belong
    from simsample.planfile import Plan
    from simsample.workload import from_records

    n = 40
    wl = from_records(
        {
            "name": ["k"] * n,
            "grid_x": [1] * n,
            "grid_y": [1] * n,
            "grid_z": [1] * n,
            "block_x": [32] * n,
            "block_y": [1] * n,
            "block_z": [1] * n,
            "duration_ns": [100 + i for i in range(n)],
        },
        source="t",
    )
    from simsample.manager import get_host

    sampler = get_host().sampler("random")
    plan = sampler.plan(wl, sampler.resolve_params({}), 0)
    path = tmp_path / "p.json"
    plan.write(path)
    plan = Plan.read(path)
    sampled = plan.sampled_ids
    warmups = [k for k in range(n) if k not in sampled][: len(sampled)]
    ok = pd.DataFrame({"kernel_id": sampled + warmups, "cycles": [1.0] * (len(sampled) + len(warmups))})
    check_results_belong(ok, plan, ["cycles"], "run.out")
    other = pd.DataFrame({"kernel_id": list(range(n + 5)), "cycles": [1.0] * (n + 5)})
    with pytest.raises(UserError, match="run.out: results for 45 launches, but the plan's workload has 40"):
        check_results_belong(other, plan, ["cycles"], "run.out")
    bad = ok.copy()
    bad.loc[0, "cycles"] = float("inf")
    with pytest.raises(UserError, match=f"kernel {sampled[0]}: cycles is inf"):
        check_results_belong(bad, plan, ["cycles"], "run.out")
    warm_inf = ok.copy()
    warm_inf.loc[len(sampled), "cycles"] = float("inf")  # a warm-up's value is not used
    check_results_belong(warm_inf, plan, ["cycles"], "run.out")
