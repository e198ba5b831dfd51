"""The hostile-user catalogue, part two: bounded unpacking and reading, special files, strict
readers and checkers, one-line messages, signals and simulators' process groups, HyFiSS's run
script, torch's leftovers.

The in-process cases run like :mod:`tests.hostile.test_catalogue`'s (exit code, phrase, inputs hashed
before and after, no stray file, no temporary left) and, in addition, count the bytes the run
writes (``wchar`` in ``/proc/self/io``): a refusal may not write more than its inputs occupy on
disk, so a 10 kB archive that declares a 2 GiB member is refused before it is unpacked. Cases may
set limits through their environment variables (``SIMSAMPLE_MAX_...``), as a user would.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import shlex
import signal
import stat
import subprocess
import sys
import tarfile
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from adapters.hyfiss.tests.test_hyfiss_adapter import (
    FAKE_MERGE,
    FAKE_SIM,
)  # the stand-in simulator and report merger of the adapter's own tests
from tests.helpers import SHARED_DATA
from tests.hostile.test_catalogue import ACC, HTA, NV, _digest, _listing, work  # noqa: F401  (work: the shared inputs)

pytestmark = pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="../shared/data is not available")

D = SHARED_DATA
MiB = 1 << 20


@dataclass(frozen=True)
class L:
    id: str
    cmd: str  # {D}: ../shared/data, {W}: prepared inputs, {O}: the case's own output folder
    code: int
    phrase: str
    outputs: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)


CASES: list[L] = [
    # --- archives: a budget on what unpacking may write, checked before and while it streams --
    L("tar-sparse-2g", "profile info {W}/sparse.tar.gz", 1, "SIMSAMPLE_MAX_COMPRESSION_RATIO"),
    L("tar-sparse-2g-plan", "plan {W}/sparse.tar.gz --sampler random -o {O}/p.json", 1, "declare 2.0 GiB"),
    L(
        "tar-sparse-unpack-limit",
        "profile info {W}/sparse.tar.gz",
        1,
        "SIMSAMPLE_MAX_UNPACK_BYTES",
        env={"SIMSAMPLE_MAX_UNPACK_BYTES": "1G"},
    ),
    L("tar-zeros", "profile info {W}/zeros.tar.gz", 1, "SIMSAMPLE_MAX_COMPRESSION_RATIO"),
    L(
        "tar-zeros-no-ratio",
        "profile info {W}/zeros.tar.gz",
        1,
        "SIMSAMPLE_MAX_UNPACK_BYTES",
        env={"SIMSAMPLE_MAX_COMPRESSION_RATIO": "0", "SIMSAMPLE_MAX_UNPACK_BYTES": "64M"},
    ),
    L(
        "tar-members",
        "profile info {W}/many.tar",
        1,
        "SIMSAMPLE_MAX_UNPACK_MEMBERS",
        env={"SIMSAMPLE_MAX_UNPACK_MEMBERS": "3"},
    ),
    L(
        "tar-members-raised",
        "profile info --json {W}/many.tar",
        0,
        '"launches"',
        env={"SIMSAMPLE_MAX_UNPACK_MEMBERS": "8"},
    ),
    L("tar-only-traces", "profile info --json {W}/mixed.tar", 0, '"ranks"'),
    L("tar-no-trace-plan", "plan {W}/junk.tar.gz --sampler random -o {O}/p.json", 1, "no Kineto trace in this archive"),
    L("gz-bomb-json", "profile info {W}/spaces.json.gz", 1, "SIMSAMPLE_MAX_COMPRESSION_RATIO"),
    L(
        "gz-profile-limit",
        "profile info {W}/rank1.json.gz",
        1,
        "SIMSAMPLE_MAX_PROFILE_BYTES",
        env={"SIMSAMPLE_MAX_PROFILE_BYTES": "100K"},
    ),
    L(
        "xz-sqlite-unpack-limit",
        "profile info {D}/profiles/nsys-sqlite/pipit-cloverleaf/perlmutter-cloverleaf-cuda.sqlite.xz",
        1,
        "SIMSAMPLE_MAX_UNPACK_BYTES",
        env={"SIMSAMPLE_MAX_UNPACK_BYTES": "100K"},
    ),
    L(
        "limit-not-a-number",
        "estimate --plan {W}/va.plan.json {W}/values.csv",
        1,
        "SIMSAMPLE_MAX_DOCUMENT_BYTES='lots'",
        env={"SIMSAMPLE_MAX_DOCUMENT_BYTES": "lots"},
    ),
    # --- devices and pipes as inputs: refused, never read (no MemoryError, no hang) ------------
    L("dev-zero-plan", "estimate --plan /dev/zero {W}/values.csv", 1, "character device"),
    L("dev-zero-values", "estimate --plan {W}/va.plan.json /dev/zero", 1, "character device"),
    L("dev-zero-report-plan", "report /dev/zero -o {O}/r.html", 1, "character device"),
    L("dev-zero-report-estimate", "report {W}/va.plan.json --estimate /dev/zero -o {O}/r.html", 1, "character device"),
    L("dev-zero-report-evaluate", "report {W}/va.plan.json --evaluate /dev/zero -o {O}/r.html", 1, "character device"),
    L(
        "dev-zero-truth",
        f"evaluate {{D}}/{NV}/traces_cudasdk_scan.csv --sampler random --repeat 1 --truth /dev/zero",
        1,
        "character device",
    ),
    L(
        "dev-zero-truth-sim",
        "evaluate {W}/f3.parquet --sampler random --repeat 1 --truth /dev/zero --sim accelsim",
        1,
        "character device",
    ),
    L(
        "dev-zero-warmup-config",
        "apply --sim accelsim --plan {W}/p3.json --traces {W}/t3 --out {O}/s --warmup-config /dev/zero",
        1,
        "character device",
    ),
    L("dev-zero-pkp-log", "pkp replay --total-ctas 10 --wave-size 5 /dev/zero", 1, "character device"),
    L("dev-zero-pkp-stdout", "pkp replay --stdout /dev/zero {W}/vis.log.gz", 1, "character device"),
    L(
        "dev-zero-explicit",
        "plan {W}/va.csv --sampler explicit --param file=/dev/zero -o {O}/p.json",
        1,
        "character device",
    ),
    L(
        "dev-zero-csv",
        "profile info --format csv --columns name=Name,duration_ns=Duration /dev/zero",
        1,
        "character device",
    ),
    L("dev-zero-profile", "profile info /dev/zero", 1, "/dev/zero"),
    L("dev-zero-collect", "collect --sim accelsim /dev/zero", 1, "character device"),
    L(
        "dev-zero-macsim-params",
        "apply --sim macsim --plan {W}/pm.json --traces {W}/macsim-traces --params /dev/zero --out {O}/s",
        1,
        "character device",
    ),
    L("dev-zero-join", "profile info {W}/nvp-new.txt --join /dev/zero", 1, "character device"),
    L("fifo-profile", "profile info {W}/fifo", 1, "named pipe"),
    L("fifo-csv", "profile info --format csv --columns name=Name,duration_ns=Duration {W}/fifo", 1, "named pipe"),
    L("fifo-plan", "estimate --plan {W}/fifo {W}/values.csv", 1, "named pipe"),
    L("fifo-report-estimate", "report {W}/va.plan.json --estimate {W}/fifo -o {O}/r.html", 1, "named pipe"),
    L("fifo-collect", "collect --sim accelsim {W}/fifo", 1, "named pipe"),
    L("fifo-pkp", "pkp replay --total-ctas 10 --wave-size 5 {W}/fifo", 1, "named pipe"),
    L(
        "fifo-macsim-params",
        "apply --sim macsim --plan {W}/pm.json --traces {W}/macsim-traces --params {W}/fifo --out {O}/s",
        1,
        "named pipe",
    ),
    # --- documents beyond their size limit: refused before a byte is read -------------------
    L("huge-plan", "estimate --plan {W}/huge.json {W}/values.csv", 1, "SIMSAMPLE_MAX_DOCUMENT_BYTES"),
    L("huge-report-plan", "report {W}/huge.json -o {O}/r.html", 1, "SIMSAMPLE_MAX_DOCUMENT_BYTES"),
    L(
        "huge-estimate",
        "report {W}/va.plan.json --estimate {W}/huge.json -o {O}/r.html",
        1,
        "SIMSAMPLE_MAX_DOCUMENT_BYTES",
    ),
    L(
        "huge-explicit",
        "plan {W}/va.csv --sampler explicit --param file={W}/huge.json -o {O}/p.json",
        1,
        "SIMSAMPLE_MAX_DOCUMENT_BYTES",
    ),
    L(
        "huge-warmup-config",
        "apply --sim accelsim --plan {W}/p3.json --traces {W}/t3 --out {O}/s --warmup-config {W}/huge.json",
        1,
        "SIMSAMPLE_MAX_DOCUMENT_BYTES",
    ),
    L(
        "huge-macsim-params",
        "apply --sim macsim --plan {W}/pm.json --traces {W}/macsim-traces --params {W}/huge.json --out {O}/s",
        1,
        "SIMSAMPLE_MAX_DOCUMENT_BYTES",
    ),
    L(
        "huge-truth",
        f"evaluate {{D}}/{NV}/traces_cudasdk_scan.csv --sampler random --repeat 1 --truth {{W}}/huge.csv",
        1,
        "SIMSAMPLE_MAX_LOG_BYTES",
        env={"SIMSAMPLE_MAX_LOG_BYTES": "1M"},
    ),
    L(
        "huge-values",
        "estimate --plan {W}/va.plan.json {W}/huge.csv",
        1,
        "SIMSAMPLE_MAX_LOG_BYTES",
        env={"SIMSAMPLE_MAX_LOG_BYTES": "1M"},
    ),
    L(
        "huge-plan-raised",
        "estimate --plan {W}/va.plan.json {W}/values.csv",
        0,
        "value",
        env={"SIMSAMPLE_MAX_DOCUMENT_BYTES": "10M"},
    ),
    L(
        "plan-limit-lowered",
        "estimate --plan {W}/va.plan.json {W}/values.csv",
        1,
        "SIMSAMPLE_MAX_DOCUMENT_BYTES",
        env={"SIMSAMPLE_MAX_DOCUMENT_BYTES": "1K"},
    ),
    # --- readers strict about numbers and headers --------------------------------------------
    L(
        "csv-decimal-comma",
        "profile info --format csv --columns name=Name,duration_us=Time {W}/artifact-comma.csv",
        1,
        "column 'Time': '1,5' is not a number",
    ),
    L(
        "csv-thousands-generic",
        "profile info --format csv --columns name=Name,duration_us=Time {W}/artifact-thousands.csv",
        1,
        "'1,500'",
    ),
    L(
        "csv-header-spaces",
        "profile info --format csv --columns 'name=Kernel Name,duration_us=Time (us)' {W}/artifact-spaces.csv",
        0,
        "launches",
    ),
    L(
        "csv-header-spaces-plan",
        "plan --format csv --columns 'name=Kernel Name,duration_us=Time (us)' {W}/artifact-spaces.csv --sampler "
        "random -o {O}/p.json",
        0,
        "launches",
        ("p.json",),
    ),
    L(
        "csv-header-absent",
        "profile info --format csv --columns 'name=Kernel,duration_us=Time (us)' {W}/artifact-spaces.csv",
        1,
        "'Kernel Name'",
    ),
    L(
        "accelsim-nan-collect",
        "collect --sim accelsim {W}/run-nan.out",
        1,
        "gpu_sim_cycle = 'nan' is not a finite number",
    ),
    L("accelsim-nan-estimate", "estimate --sim accelsim --plan {W}/p3.json {W}/run-nan.out", 1, "not a finite number"),
    L("accelsim-inf-insn", "collect --sim accelsim {W}/run-inf.out", 1, "gpu_sim_insn"),
    L(
        "report-estimate-other-workload",
        "report {W}/va.plan.json --estimate {W}/est-p3.json -o {O}/r.html",
        1,
        "another plan",
    ),
    L(
        "report-estimate-other-plan",
        "report {W}/va.plan.json --estimate {W}/est-va-seed1.json -o {O}/r.html",
        1,
        "samples differ",
    ),
    L(
        "report-estimate-ok",
        "report {W}/va.plan.json --estimate {W}/est-va.json -o {O}/r.html",
        0,
        "report of",
        ("r.html",),
    ),
    L(
        "report-evaluation-other",
        "report {W}/va.plan.json --evaluate {W}/ev-other.json -o {O}/r.html",
        1,
        "other workloads",
    ),
    L(
        "report-evaluation-ok",
        "report {W}/va.plan.json --evaluate {W}/ev-scan.json -o {O}/r.html",
        0,
        "report of",
        ("r.html",),
    ),
    L("empty-plan-estimate", "estimate --plan {W}/va-empty.json {W}/values.csv", 1, "no samples"),
    L("empty-plan-report", "report {W}/va-empty.json -o {O}/r.html", 1, "no samples"),
    L(
        "empty-plan-apply",
        "apply --sim accelsim --plan {W}/p3-empty.json --traces {W}/t3 --out {O}/s --split",
        1,
        "no samples",
    ),
    L(
        "macsim-params-binary",
        "apply --sim macsim --plan {W}/pm.json --traces {W}/macsim-traces --params {W}/junk.bin --out {O}/s",
        1,
        "binary data",
    ),
    L(
        "macsim-params-text-junk",
        "apply --sim macsim --plan {W}/pm.json --traces {W}/macsim-traces --params {W}/va.csv --out {O}/s",
        1,
        "knob value",
    ),
    # --- internal errors and messages ---------------------------------------------------------
    L("features-symlink-loop", "profile features --sim accelsim {W}/loop-a -o {O}/f.parquet", 1, "symbolic link loop"),
    L(
        "features-macsim-symlink-loop",
        "profile features --sim macsim {W}/loop-a -o {O}/f.parquet",
        1,
        "symbolic link loop",
    ),
    L(
        "apply-traces-symlink-loop",
        "apply --sim accelsim --plan {W}/p3.json --traces {W}/loop-a --out {O}/s",
        1,
        "symbolic link loop",
    ),
    L(
        "truth-log-without-sim",
        f"evaluate {{D}}/{NV}/traces_cudasdk_scan.csv --sampler random --repeat 1 --truth "
        f"{{D}}/{ACC}/hetero/full.out.gz",
        1,
        "name the simulator with --sim",
    ),
    L(
        "run-sampled-missing",
        "run --sim accelsim --sampled {W}/nope --accelsim {W}/va.csv --config {W}/gpgpusim.config",
        1,
        "nope: no such folder",
    ),
    L(
        "run-sampled-missing-dry",
        "run --sim accelsim --sampled {W}/nope --accelsim {W}/va.csv --config {W}/gpgpusim.config --dry-run",
        1,
        "no such folder",
    ),
    L(
        "run-sampled-file",
        "run --sim accelsim --sampled {W}/va.csv --accelsim {W}/va.csv --config {W}/gpgpusim.config -o {O}/x.log",
        1,
        "is not a folder",
    ),
    L("run-macsim-missing", "run --sim macsim --sampled {W}/nope --macsim {W}/va.csv", 1, "no such folder"),
    L("run-hyfiss-missing", "run --sim hyfiss --sampled {W}/nope", 1, "no such folder"),
    L("message-control-chars", "profile info {W}/grid-escape.csv", 1, "Grid X"),
    L("message-long-cell", "profile info {W}/grid-long.csv", 1, "…"),
]


# --- prepared inputs -------------------------------------------------------------------------
class _Zeros(io.RawIOBase):
    def __init__(self, n: int) -> None:
        self.left = n

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[override]
        k = min(len(b), self.left)
        b[:k] = bytes(k)
        self.left -= k
        return k


def _capture(argv: list[str]) -> str:
    """Run the CLI in-process and return its standard output (for fixtures)."""
    from simsample.cli import run

    old = sys.stdout
    sys.stdout = buf = io.StringIO()
    try:
        assert run(argv) == 0, argv
    finally:
        sys.stdout = old
    return buf.getvalue()


@pytest.fixture(scope="module")
def hostile(work: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811
    """This catalogue's own hostile inputs, added to the shared ones."""
    w = work
    src = tmp_path_factory.mktemp("src")
    # a 2 GiB sparse member in a tiny archive (GNU tar stores only the map of its holes)
    sparse = src / "rank0.json"
    with open(sparse, "wb") as fh:
        fh.write(b'{"traceEvents": [')
        fh.truncate(2 << 30)
    subprocess.run(["tar", "-C", str(src), "-czSf", str(w / "sparse.tar.gz"), "rank0.json"], check=True)
    sparse.unlink()
    assert (w / "sparse.tar.gz").stat().st_size < 100_000
    # 256 MiB of zeros, gzipped to about 256 kB, as a trace member
    with tarfile.open(w / "zeros.tar.gz", "w:gz", compresslevel=1) as tar:
        info = tarfile.TarInfo("rank0.json")
        info.size = 256 * MiB
        tar.addfile(info, io.BufferedReader(_Zeros(info.size)))
    # a Kineto-looking document of 256 MiB of spaces, gzipped
    with gzip.open(w / "spaces.json.gz", "wb", compresslevel=1) as fh:
        fh.write(b'{"traceEvents": [')
        chunk = b" " * MiB
        for _ in range(256):
            fh.write(chunk)
    # five rank members, and an archive with junk beside its traces
    rank = (D / HTA / "trace_filter/sampled_rank-0.json.gz").read_bytes()
    with tarfile.open(w / "many.tar", "w") as tar:
        for r in range(5):
            data = gzip.compress(gzip.decompress(rank).replace(b'"rank": 0', f'"rank": {r}'.encode()))
            info = tarfile.TarInfo(f"run/rank{r}.json.gz")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    with tarfile.open(w / "mixed.tar", "w") as tar:
        tar.add(D / HTA / "trace_filter/sampled_rank-0.json.gz", arcname="sampled_rank-0.json.gz")
        tar.add(D / HTA / "trace_filter/sampled_rank-1.json.gz", arcname="sampled_rank-1.json.gz")
        info = tarfile.TarInfo("big-junk.bin")
        info.size = 8 * MiB
        tar.addfile(info, io.BufferedReader(_Zeros(info.size)))
    os.mkfifo(w / "fifo")
    # 300 MiB documents that occupy no disk (sparse)
    for name in ("huge.json", "huge.csv"):
        with open(w / name, "wb") as fh:
            fh.write(b"kernel_id,value\n" if name.endswith(".csv") else b"{")
            fh.truncate(300 * MiB)
    # generic CSVs: a decimal comma, a thousands separator, a header with spaces around names
    import csv

    rows = list(csv.reader(io.StringIO((w / "artifact.csv").read_text())))
    t = rows[0].index("Time")

    def write(name: str, header: list[str], cell: str | None) -> None:
        buf = io.StringIO()
        out = csv.writer(buf, lineterminator="\n")
        out.writerow(header)
        for i, r in enumerate(rows[1:]):
            out.writerow([cell if i == 0 and j == t and cell is not None else v for j, v in enumerate(r)])
        (w / name).write_text(buf.getvalue())

    write("artifact-comma.csv", rows[0], "1,5")
    write("artifact-thousands.csv", rows[0], "1,500")
    spaced = [" Kernel Name " if h == "Name" else " Time (us) " if h == "Time" else f" {h} " for h in rows[0]]
    write("artifact-spaces.csv", spaced, None)
    # nvprof cells with terminal escapes, and one very long
    nv = (w / "va.csv").read_text()
    row = "613.055684,2.208000,196,1,1,256,1,1,"
    (w / "grid-escape.csv").write_text(nv.replace(row, "613.055684,2.208000,\x1b[2J\x07many,1,1,256,1,1,", 1))
    (w / "grid-long.csv").write_text(nv.replace(row, "613.055684,2.208000," + "x" * 5000 + ",1,1,256,1,1,", 1))
    # Accel-Sim logs with a NaN and an infinite statistic
    log = (w / "run.out").read_text()
    import re

    m = re.search(r"gpu_sim_cycle = \d+", log)
    assert m
    (w / "run-nan.out").write_text(log[: m.start()] + "gpu_sim_cycle = nan" + log[m.end() :])
    m = re.search(r"gpu_sim_insn = \d+", log)
    assert m
    (w / "run-inf.out").write_text(log[: m.start()] + "gpu_sim_insn = inf" + log[m.end() :])
    # plans with no samples
    for src_name, dst in (("va.plan.json", "va-empty.json"), ("p3.json", "p3-empty.json")):
        doc = json.loads((w / src_name).read_text())
        doc["samples"] = []
        (w / dst).write_text(json.dumps(doc))
    # estimates and evaluations, of this plan and of others
    plan = json.loads((w / "va.plan.json").read_text())
    launches = plan["workload"]["launches"]
    (w / "values-all.csv").write_text("kernel_id,value\n" + "".join(f"{k},{100 + k}\n" for k in range(launches)))
    (w / "est-va.json").write_text(
        _capture(["estimate", "--plan", str(w / "va.plan.json"), str(w / "values-all.csv"), "--json"])
    )
    assert (
        _capture(
            [
                "plan",
                str(D / NV / "traces_cudasdk_scan.csv"),
                "--sampler",
                "random",
                "--seed",
                "1",
                "-o",
                str(src / "seed1.json"),
            ]
        )
        is not None
    )
    (w / "est-va-seed1.json").write_text(
        _capture(["estimate", "--plan", str(src / "seed1.json"), str(w / "values-all.csv"), "--json"])
    )
    (w / "est-p3.json").write_text(
        _capture(["estimate", "--sim", "accelsim", "--plan", str(w / "p3.json"), str(w / "run.out"), "--json"])
    )
    (w / "ev-scan.json").write_text(
        _capture(
            ["evaluate", str(D / NV / "traces_cudasdk_scan.csv"), "--sampler", "random", "--repeat", "1", "--json"]
        )
    )
    (w / "ev-other.json").write_text(
        _capture(
            ["evaluate", str(D / NV / "traces_cudasdk_vectorAdd.csv"), "--sampler", "random", "--repeat", "1", "--json"]
        )
    )
    return w


def _wchar() -> int:
    with open("/proc/self/io") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("wchar:"))


def _disk(p: Path) -> int:
    """Bytes ``p`` occupies on disk (a sparse file: its blocks, not its size)."""
    try:
        if p.is_dir():
            return sum(_disk(f) for f in p.rglob("*") if f.is_file() and not f.is_symlink())
        st = p.stat()
    except OSError:  # a symbolic link loop
        return 0
    return min(st.st_size, st.st_blocks * 512) if stat.S_ISREG(st.st_mode) else 0


def _regular_inputs(argv: list[str], out: Path) -> dict[Path, str]:
    found: dict[Path, str] = {}
    for a in argv:
        for piece in a.split("="):
            p = Path(piece)
            if not p.is_absolute() or out in p.parents or p == out or str(p).startswith(("/proc", "/dev")):
                continue
            try:
                mode = p.lstat().st_mode
            except OSError:
                continue
            if stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode):
                try:
                    found[p] = _digest(p)
                except (OSError, RuntimeError):
                    continue
    return found


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_catalogue_limits(
    case: L, hostile: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from simsample.cli import run

    out = tmp_path / "out"
    out.mkdir()
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.chdir(out)
    for k, v in case.env.items():
        monkeypatch.setenv(k, v)
    argv = shlex.split(case.cmd.format(D=D, W=hostile, O=out))
    before = _regular_inputs(argv, out)
    listing = _listing(hostile)
    size = sum(_disk(p) for p in before)

    def hung(signum, frame):
        raise TimeoutError(f"{case.id}: still running after 120 s (blocked on an input?)")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(int(os.environ.get("CATALOGUE_ALARM", "120")))
    try:
        written = _wchar()
        code = run(argv)
        written = _wchar() - written
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert "Traceback" not in text, text
    assert code != 2, f"internal error: {text}"
    assert code == case.code, f"exit {code}, expected {case.code}: {text[-2000:]}"
    if case.phrase:
        assert case.phrase in text, f"{case.phrase!r} not in: {text[-2000:]}"
    if code == 1:
        errors = [line for line in captured.err.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, captured.err
        assert errors[0].isprintable() and len(errors[0]) <= 1010, repr(errors[0][:300])
        assert written <= max(size, 256 * 1024), f"a refusal wrote {written} bytes for {size} bytes of input"
    assert {p: _digest(p) for p in before} == before, "inputs modified"
    assert _listing(hostile) == listing, f"stray files among the inputs: {_listing(hostile) ^ listing}"
    left = {f.name for f in out.iterdir()}
    assert left == (set(case.outputs) if code == 0 else set()), f"left in the output folder: {sorted(left)}"
    assert not any(temp.iterdir()), f"temporaries left: {[f.name for f in temp.iterdir()]}"


# --- the rules on their own --------------------------------------------------------------------
def test_one_line_is_printable_and_cut() -> None:
    from simsample.errors import one_line

    assert one_line("a\nb\r\nc\x00d\x1b[2J") == "a b  c?d?[2J"
    long = one_line("x" * 5000 + " what to do")
    assert (
        len(long) == 1000 and long.count("…") == 1 and long.endswith(" what to do")
    )  # cut in the middle: the advice stays
    assert one_line("plain") == "plain"


@pytest.mark.parametrize(
    "text, value", [("512M", 512 * MiB), ("4G", 4 << 30), ("4GiB", 4 << 30), ("100", 100), ("1.5K", 1536), ("0", 0)]
)
def test_limit_values(text: str, value: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from simsample.io.limits import limit, parse_size

    assert parse_size(text) == value
    monkeypatch.setenv("SIMSAMPLE_MAX_DOCUMENT_BYTES", text)
    assert limit("document") == value


def test_every_limit_is_documented() -> None:
    from simsample.io.limits import LIMITS

    doc = (Path(__file__).resolve().parents[2] / "docs" / "limits.md").read_text()
    for lim in LIMITS.values():
        assert f"`{lim.env}`" in doc, lim.env


def test_thousands_separators_only_where_they_group_by_three(tmp_path: Path) -> None:
    import pyarrow as pa

    from simsample.errors import FormatError
    from simsample.io.tables import numeric_column

    ok = pa.table({"c": ["1,024", "12,345,678.5", "7"]})
    assert numeric_column(ok, "c", path="f.csv", first_line=2).tolist() == [1024.0, 12345678.5, 7.0]
    for cell in ("1,5", "1,50", "12,34,567", ",5"):
        with pytest.raises(FormatError, match=r"f\.csv, line 3: column 'c': '" + cell + "' is not a number"):
            numeric_column(pa.table({"c": ["1", cell]}), "c", path="f.csv", first_line=2)
    with pytest.raises(FormatError, match="'1,024'"):
        numeric_column(ok, "c", path="f.csv", first_line=2, thousands=False)


def test_unpacking_counts_what_it_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The streaming budget on its own: a source that inflates past the limit is stopped there."""
    from simsample.errors import UserError
    from simsample.io.files import copy_bounded

    monkeypatch.setenv("SIMSAMPLE_MAX_UNPACK_BYTES", "3M")
    with open(tmp_path / "out", "wb") as dst, pytest.raises(UserError, match="SIMSAMPLE_MAX_UNPACK_BYTES"):
        copy_bounded(io.BufferedReader(_Zeros(10 * MiB)), dst, "a.tar", None)
    assert (tmp_path / "out").stat().st_size <= 3 * MiB
    monkeypatch.setenv("SIMSAMPLE_MAX_UNPACK_BYTES", "0")
    with open(tmp_path / "out", "wb") as dst, pytest.raises(UserError, match="SIMSAMPLE_MAX_COMPRESSION_RATIO"):
        copy_bounded(io.BufferedReader(_Zeros(200 * MiB)), dst, "a.tar", 100_000)
    assert (tmp_path / "out").stat().st_size <= 80 * MiB


def test_gcl_scratch_keeps_torch_files_in_its_own_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What torch_geometric does (a generated module in the temporary folder) and what
    TorchInductor does (a cache under TORCHINDUCTOR_CACHE_DIR) land in the scratch folder,
    which is gone afterwards; the environment is as it was."""
    from simsample.plugins.samplers._gcl.scratch import torch_scratch

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "mine"))
    with torch_scratch() as folder:
        with tempfile.NamedTemporaryFile(
            "w", prefix="torch_geometric.nn.conv.rgcn_conv_RGCNConv_propagate_", suffix=".py", delete=False
        ) as f:
            f.write("x = 1\n")
        Path(os.environ["TORCHINDUCTOR_CACHE_DIR"]).mkdir(parents=True)
        assert Path(f.name).parent == folder
        assert os.environ["TRITON_CACHE_DIR"] == str(tmp_path / "mine")  # the user's own is kept
    assert not folder.exists()
    assert [p.name for p in tmp_path.iterdir()] == []
    assert "TORCHINDUCTOR_CACHE_DIR" not in os.environ
    assert tempfile.tempdir == str(tmp_path)


def test_gcl_plan_leaves_no_torch_files(tmp_path: Path) -> None:
    """A real ``plan --sampler gcl`` (torch and torch_geometric installed) leaves nothing in TMPDIR."""
    pytest.importorskip("torch_geometric")
    traces = D / ACC / "tinytrace3"
    if not traces.is_dir():
        pytest.skip("no tinytrace3")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "SIMSAMPLE_CACHE": str(tmp_path / "cache")}
    p = subprocess.run(
        _console("plan", str(traces), "--sampler", "gcl", "--param", "epochs=2", "-o", str(tmp_path / "p.json")),
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr
    assert not list(tmp.iterdir()), sorted(f.name for f in tmp.iterdir())


# --- signals: SIGTERM and SIGHUP as Ctrl-C; simulators' whole process groups ended --------------
def _console(*args: str) -> list[str]:
    return [sys.executable, "-c", "from simsample.console import main; main()", *args]


def _skip_if_ignored(sig: int) -> None:
    """A signal this process ignores (SIGHUP under nohup) is ignored by its children too, and
    simsample keeps an inherited ignore, as nohup means it: nothing to test then."""
    if signal.getsignal(sig) is signal.SIG_IGN:
        pytest.skip(
            f"{signal.Signals(sig).name} is ignored here (inherited, e.g. from nohup), so the commands keep ignoring it"
        )


@pytest.mark.parametrize(
    "sig, code, word",
    [(signal.SIGTERM, 143, "terminated"), (signal.SIGHUP, 129, "terminated"), (signal.SIGINT, 130, "interrupted")],
)
def test_signals_while_unpacking_remove_the_temporaries(
    sig: int, code: int, word: str, hostile: Path, tmp_path: Path
) -> None:
    """A signal at any moment of ``plan ARCHIVE`` (imports, unpacking, reading) ends in one line and
    128+signal, leaving no temporary folder and no output."""
    _skip_if_ignored(sig)

    def start(name: str) -> tuple[subprocess.Popen[bytes], Path, Path]:
        tmp = tmp_path / f"tmp-{name}"
        tmp.mkdir()
        out = tmp_path / f"out-{name}"
        out.mkdir()
        p = subprocess.Popen(
            _console("plan", str(hostile / "many.tar"), "--sampler", "random", "-o", str(out / "p.json")),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "TMPDIR": str(tmp)},
            cwd=out,
        )
        return p, tmp, out

    # The signals land at fractions of an undisturbed run's length, measured here: fixed delays
    # arrive after the end on an idle machine and during the interpreter's own start-up (before
    # any handler of the command's) on a loaded one.
    p, _, _ = start("undisturbed")
    began = time.monotonic()
    p.communicate(timeout=120)
    length = time.monotonic() - began
    ended = 0
    for fraction in (0.5, 0.65, 0.8, 0.95):
        delay = fraction * length
        p, tmp, out = start(f"{fraction}")
        time.sleep(delay)
        p.send_signal(sig)
        _, err = p.communicate(timeout=60)
        text = err.decode()
        if p.returncode == 0:
            continue
        assert p.returncode in (code, -sig), text
        assert "Traceback" not in text
        assert [line for line in text.splitlines() if line.strip()] in ([word], [])
        assert not any(out.iterdir())
        assert not any(tmp.iterdir()), sorted(f.name for f in tmp.iterdir())
        ended += 1
    assert ended, "every run finished before the signal: nothing was tested"


def test_an_error_after_a_swallowed_signal_ends_as_the_signal(monkeypatch, capsys) -> None:
    """A library can swallow the interrupt a signal raised (pyarrow's lazy import of pandas, cut
    short, leaves a pandas without ``__version__`` and no exception: seen as exit 2 in the
    pure-Python leg); the error that follows ends as the recorded signal, not as a bug."""
    from simsample import errors
    from simsample.cli import _bug

    bug = AttributeError("module 'pandas' has no attribute '__version__'")
    monkeypatch.setattr(errors, "_RECEIVED", [])
    assert _bug(bug) == 2 and "internal error" in capsys.readouterr().err
    monkeypatch.setattr(errors, "_RECEIVED", [errors.Terminated(signal.SIGTERM)])
    assert _bug(bug) == 143 and capsys.readouterr().err.strip() == "terminated"
    monkeypatch.setattr(errors, "_RECEIVED", [KeyboardInterrupt()])
    assert _bug(bug) == 130 and capsys.readouterr().err.strip() == "interrupted"


CUT_SHORT_ENTRY = """\
import sys
from pathlib import Path

import simsample.cli as cli
from simsample.errors import raise_terminated
from simsample.plugins.readers.kineto import expanded_rank_files


def cut_short(argv):
    # what a SIGTERM landing inside contextlib's __enter__, after the generator's yield, leaves:
    # the archive unpacked, the generator suspended, and the with statement never entered
    cm = expanded_rank_files([Path(sys.argv[1])])
    cm.__enter__()
    raise_terminated(15)


cli._run = cut_short
cli.main([])
"""


def test_a_signal_between_unpacking_and_the_with_still_removes_the_temporary(hostile: Path, tmp_path: Path) -> None:
    """A signal after the archive is unpacked but before ``with`` holds the folder leaves a
    suspended generator, held by the recorded interrupt until the interpreter shuts down, when
    imports no longer work: its clean-up then failed with a traceback and left the folder (seen
    once in CI as ``ImportError: sys.meta_path is None``). The command now releases it before
    exiting."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    script = tmp_path / "cut_short.py"
    script.write_text(CUT_SHORT_ENTRY)
    p = subprocess.run(
        [sys.executable, str(script), str(hostile / "many.tar")],
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp)},
        timeout=120,
    )
    assert p.returncode == 143, p.stderr
    assert p.stderr.strip() == "terminated", p.stderr
    assert not any(tmp.iterdir()), sorted(f.name for f in tmp.iterdir())


WRAPPER = """\
#!/usr/bin/env bash
# a site's launcher: starts the simulator as a child and waits (a SIGTERM ends this shell only)
echo $$ >> "$PIDS"
sleep 300 &
echo $! >> "$PIDS"
wait
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is as good as gone
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except OSError:
        return False


def _wait_for_pids(path: Path, n: int) -> list[int]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if path.exists():
            pids = [int(x) for x in path.read_text().split()]
            if len(pids) >= n:
                return pids
        time.sleep(0.05)
    raise AssertionError("the simulator never started")


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_signal_ends_the_simulators_process_group_and_removes_partial_logs(
    sig: int, code: int, work: Path, tmp_path: Path
) -> None:  # noqa: F811
    """``run`` on a split folder, the simulator started through a wrapper script: a signal ends
    the wrapper and the simulator it started, and leaves neither ``.partial`` nor ``.failed``."""
    from simsample.cli import run

    _skip_if_ignored(sig)
    split = tmp_path / "split"
    assert (
        run(
            [
                "apply",
                "--sim",
                "accelsim",
                "--plan",
                str(work / "p3.json"),
                "--traces",
                str(work / "t3"),
                "--out",
                str(split),
                "--split",
            ]
        )
        == 0
    )
    sim = tmp_path / "accel-sim.out"
    sim.write_text(WRAPPER)
    sim.chmod(0o755)
    pids = tmp_path / "pids"
    env = {**os.environ, "PIDS": str(pids)}
    p = subprocess.Popen(
        _console(
            "run",
            "--sim",
            "accelsim",
            "--sampled",
            str(split),
            "--accelsim",
            str(sim),
            "--config",
            str(work / "gpgpusim.config"),
            "--jobs",
            "1",
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    started = _wait_for_pids(pids, 2)
    time.sleep(0.3)
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert p.returncode == code, err.decode()
    assert err.decode().strip().splitlines()[-1] in ("interrupted", "terminated")
    assert not [pid for pid in started if _alive(pid)], "a simulator outlived the run"
    assert not list(split.rglob("*.partial")) and not list(split.rglob("*.failed")), sorted(
        map(str, split.rglob("*.*"))
    )


def test_a_signal_ends_a_single_run_and_removes_its_log(work: Path, tmp_path: Path) -> None:  # noqa: F811
    from simsample.cli import run

    sampled = tmp_path / "sampled"
    assert (
        run(
            [
                "apply",
                "--sim",
                "accelsim",
                "--plan",
                str(work / "p3.json"),
                "--traces",
                str(work / "t3"),
                "--out",
                str(sampled),
            ]
        )
        == 0
    )
    sim = tmp_path / "accel-sim.out"
    sim.write_text(WRAPPER)
    sim.chmod(0o755)
    pids = tmp_path / "pids"
    log = tmp_path / "run.log"
    p = subprocess.Popen(
        _console(
            "run",
            "--sim",
            "accelsim",
            "--sampled",
            str(sampled),
            "--accelsim",
            str(sim),
            "--config",
            str(work / "gpgpusim.config"),
            "-o",
            str(log),
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PIDS": str(pids)},
    )
    started = _wait_for_pids(pids, 2)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 143, err.decode()
    assert not [pid for pid in started if _alive(pid)], "a simulator outlived the run"
    assert not log.exists()


def test_run_job_stopped_by_the_executor_is_not_a_failure(tmp_path: Path) -> None:
    """The executor's stop (Ctrl-C in the main thread) ends the job's group; the attempt is
    'stopped', its .partial removed, no .failed written."""
    import threading

    from simsample.runner.jobs import Job, run_job

    script = tmp_path / "w.sh"
    script.write_text(WRAPPER)
    script.chmod(0o755)
    pids = tmp_path / "pids"
    stop = threading.Event()
    job = Job("j", str(tmp_path), (str(script),), str(tmp_path / "j.log"), lambda p: None, env=(("PIDS", str(pids)),))
    t = threading.Timer(1.0, stop.set)
    t.start()
    res = run_job(job, should_stop=stop.is_set, poll=0.1)
    started = [int(x) for x in pids.read_text().split()]
    assert res.interrupted and not res.ok
    assert not job.partial.exists() and not job.failed.exists()
    assert not [pid for pid in started if _alive(pid)]


# --- HyFiSS's run script ------------------------------------------------------------------------
# an MPI launcher that takes options before -np (as "mpirun --oversubscribe" does) and records them
FAKE_MPIRUN = """\
#!/usr/bin/env bash
if [ "$1" = "--version" ]; then echo "${FAKE_MPI_VERSION:-fake mpi 1.0}"; exit 0; fi
echo "$@" >> "$MPI_CALLS"
while [ "$1" != "-np" ]; do shift; done
shift 2
exec "$@"
"""


@pytest.fixture
def hyfiss_run(tmp_path: Path):
    from simsample.cli import run

    pytest.importorskip("simsample_hyfiss")
    app = D / "simulators/hyfiss/synthetic_app"
    if not app.is_dir():
        pytest.skip("no HyFiSS synthetic app")
    home = tmp_path / "hyfiss"
    (home / "DEV-Def").mkdir(parents=True)
    (home / "DEV-Def" / "QV100.config").write_text("-gpgpu_num_clusters 1\n")
    for name, text in (("gpu-simulator.x", FAKE_SIM), ("merge_report.py", FAKE_MERGE), ("mpirun", FAKE_MPIRUN)):
        p = home / name
        p.write_text(textwrap.dedent(text))
        p.chmod(0o755)
    plan = tmp_path / "plan.json"
    assert run(["plan", str(app), "--sampler", "random", "--param", "count=2", "-o", str(plan)]) == 0
    out = tmp_path / "sampled"
    assert (
        run(
            [
                "apply",
                "--sim",
                "hyfiss",
                "--plan",
                str(plan),
                "--traces",
                str(app),
                "--out",
                str(out),
                "--prune",
                "--np",
                "2",
                "--hyfiss",
                str(home),
            ]
        )
        == 0
    )
    return home, plan, out


def _script(out: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(out / "run_sampled.sh")], env={**os.environ, **env}, capture_output=True, text=True, timeout=120
    )


def test_hyfiss_mpirun_is_a_command_with_arguments(hyfiss_run, tmp_path: Path) -> None:
    home, _, out = hyfiss_run
    calls = tmp_path / "calls"
    p = _script(
        out, {"MPIRUN": f"{home / 'mpirun'} --oversubscribe", "MPI_CALLS": str(calls), "OMPI_ALLOW_RUN_AS_ROOT": "1"}
    )
    assert p.returncode == 0, p.stderr
    assert all(line.startswith("--oversubscribe -np 2 ./gpu-simulator.x") for line in calls.read_text().splitlines())
    p = _script(out, {"MPIRUN": "no-such-mpirun --x"})
    assert p.returncode == 1 and "MPIRUN: no-such-mpirun not found" in p.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="OpenMPI's refusal concerns root")
def test_hyfiss_script_says_what_to_set_when_openmpi_refuses_root(hyfiss_run, tmp_path: Path) -> None:
    home, _, out = hyfiss_run
    env = {
        "MPIRUN": str(home / "mpirun"),
        "MPI_CALLS": str(tmp_path / "calls"),
        "FAKE_MPI_VERSION": "mpirun (Open MPI) 4.1.4",
    }
    os.environ.pop("OMPI_ALLOW_RUN_AS_ROOT", None)
    p = _script(out, env)
    assert p.returncode == 1
    assert "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1" in p.stderr
    assert not (tmp_path / "calls").exists(), "no kernel was started"
    p = _script(out, {**env, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    assert p.returncode == 0, p.stderr


def test_hyfiss_processes_capped_at_the_sms_a_kernel_uses(hyfiss_run, tmp_path: Path) -> None:
    home, _, out = hyfiss_run
    calls = tmp_path / "calls"
    p = _script(
        out, {"MPIRUN": str(home / "mpirun"), "MPI_CALLS": str(calls), "NP": "8", "OMPI_ALLOW_RUN_AS_ROOT": "1"}
    )
    assert p.returncode == 0, p.stderr
    assert "can use 2 SM(s); running it with 2 MPI process(es), not NP=8" in p.stderr
    assert all(line.startswith("-np 2 ") for line in calls.read_text().splitlines())


def test_hyfiss_collect_names_the_failed_kernel_and_its_log(
    hyfiss_run, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from simsample.cli import run

    home, plan, out = hyfiss_run
    (home / "gpu-simulator.x").write_text(
        "#!/usr/bin/env bash\necho 'Floating point exception: integer divide by zero' >&2\nexit 136\n"
    )
    p = _script(
        out, {"MPIRUN": str(home / "mpirun"), "MPI_CALLS": str(tmp_path / "calls"), "OMPI_ALLOW_RUN_AS_ROOT": "1"}
    )
    assert p.returncode == 1
    log0 = out / "app" / "outputs" / "kernel-0.log"
    assert f"kernel 1 failed; read {log0}" in p.stderr
    assert "integer divide by zero" in log0.read_text()
    capsys.readouterr()
    assert run(["collect", "--sim", "hyfiss", "--plan", str(plan), str(out)]) == 1
    err = capsys.readouterr().err
    assert "kernel 1" in err and "kernel-0.log" in err, err
    # one kernel simulated, the other failed: estimate names the failed one and its log
    (home / "gpu-simulator.x").write_text(textwrap.dedent(FAKE_SIM))
    assert (
        _script(
            out, {"MPIRUN": str(home / "mpirun"), "MPI_CALLS": str(tmp_path / "calls"), "OMPI_ALLOW_RUN_AS_ROOT": "1"}
        ).returncode
        == 0
    )
    (out / "app" / "outputs" / "kernel-1-summary.txt").unlink()
    assert run(["estimate", "--sim", "hyfiss", "--plan", str(plan), str(out)]) == 1
    err = capsys.readouterr().err
    assert "kernel-1.log" in err and "failed" in err, err


def test_a_signal_inside_signals_deferred_lands_after_the_name_is_stored() -> None:
    """A temporary made and named inside ``signals_deferred`` is named before the signal lands
    (the kineto reader's unpacking folder leaked when a Ctrl-C came between the two)."""
    from simsample.errors import signals_deferred

    made = None
    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # other libraries set their own
    try:
        with pytest.raises(KeyboardInterrupt):
            with signals_deferred():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.05)  # only noted while held: the block goes on
                made = "named"
            time.sleep(1)  # raised when the block ends
    finally:
        signal.signal(signal.SIGINT, before)
    assert made == "named"


def test_a_signal_after_the_plan_is_written_leaves_a_finished_command() -> None:
    """Once ``plan`` has written its output, a signal no longer ends it as interrupted: the test
    above saw exit 129 with the finished plan in place, a SIGHUP landing at 95% of the run, in the
    summary after the write. ``settle_signals`` ignores them from there; a command run in-process
    (``simsample.cli.run``) gives its caller the handlers back."""
    from simsample.cli import run
    from simsample.errors import settle_signals, unsettle_signals

    before = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        settle_signals()
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
        os.kill(os.getpid(), signal.SIGTERM)  # ignored: nothing is raised
        time.sleep(0.05)
        unsettle_signals()
        assert signal.getsignal(signal.SIGTERM) is signal.default_int_handler
        assert run(["--version"]) == 0 and signal.getsignal(signal.SIGTERM) is signal.default_int_handler
    finally:
        unsettle_signals()
        signal.signal(signal.SIGTERM, before)


def test_plan_run_in_process_gives_the_signal_handlers_back(tmp_path) -> None:
    """``plan`` settles its signals after writing (previous test); run in-process it must not leave
    the caller's Ctrl-C ignored."""
    from simsample.cli import run
    from tests.helpers import ROOT

    example = ROOT / "examples" / "profile" / "train_step.pt.trace.json.gz"
    before = signal.getsignal(signal.SIGINT)
    assert run(["plan", str(example), "-o", str(tmp_path / "p.json")]) == 0
    assert (tmp_path / "p.json").is_file()
    assert signal.getsignal(signal.SIGINT) is before


def test_a_signal_as_the_temporary_is_made_leaves_nothing_beside_the_output(tmp_path, monkeypatch) -> None:
    """A signal landing just after the atomic writer's temporary file exists, before its name is
    stored: the write is interrupted and nothing is left beside the output (an empty
    ``.NAME.XXXX.tmp`` was, 1 run in ~15 of the unpacking test above under load)."""
    import tempfile

    from simsample.io.files import atomic_write_text

    real = tempfile.mkstemp

    def mkstemp_then_signal(*args, **kwargs):
        made = real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)  # lands here, as the file exists and its name is not yet stored
        time.sleep(0.05)
        return made

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp_then_signal)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            atomic_write_text(tmp_path / "p.json", "{}")
    finally:
        signal.signal(signal.SIGINT, before)
    assert list(tmp_path.iterdir()) == []
