"""The hostile-user catalogue, part three: outputs that are not files, full disks and long names,
limits as a user sets them, inputs that made commands hang, numbers that cannot be.

- **Outputs that are not regular files**: ``-o /dev/null`` (or any character device, a named pipe,
  ``/dev/stdout``) is written through, never replaced by a renamed temporary; nothing is created
  beside it (no cache, no extras) and its mode is never changed.
- **Full disks and long names**: a write that fails for a full disk (``> /dev/full``), a file size
  limit (``RLIMIT_FSIZE``, what ``ulimit -f`` sets, giving EFBIG) or a name too long for the file
  system is one line and exit code 1, and leaves nothing behind; standard output included: a
  command whose output could not be written does not exit 0.
- **Limits** (``SIMSAMPLE_MAX_...``): any value the docs allow reads a small file at once (the cap
  is never allocated), values that mean nothing are refused naming the variable, and every limit
  in the code is documented.
- **Hangs**: a sparse 2 GiB ``stats.csv`` and a 20 MB kernel name end quickly.
- **Numbers that cannot be**: sums that overflow, hand-edited estimates and evaluations given to
  ``report``, non-finite warm-up options: one-line refusals.

The in-process cases run as :mod:`tests.hostile.test_catalogue`'s do; the cases about standard output and
file size limits run the console script in a subprocess (the limit is set in the child only).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from tests.helpers import SHARED_DATA
from tests.hostile.test_catalogue import NV, work

pytestmark = pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="../shared/data is not available")

D = SHARED_DATA
SCAN = D / NV / "traces_cudasdk_scan.csv"


def _console(*args: str) -> list[str]:
    return [sys.executable, "-c", "from simsample.console import main; main()", *args]


def _in_process(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from simsample.cli import run

    code = run([str(a) for a in argv])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def _one_error(code: int, err: str, phrase: str) -> None:
    assert code == 1, f"exit {code}: {err[-2000:]}"
    assert "Traceback" not in err and "internal error" not in err, err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, err
    assert phrase in errors[0], errors[0]


@pytest.fixture(scope="module")
def device_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from adapters.hyfiss.tests.test_hyfiss_picksm import DEVICE

    p = tmp_path_factory.mktemp("hyfiss-device") / "TEST.config"
    p.write_text(DEVICE)
    return p


# --- commands that write one output file: {o} is the output ------------------------------------
WRITERS: dict[str, list[str]] = {
    "plan": ["plan", str(SCAN), "--sampler", "random", "-o", "{o}"],
    "report": ["report", "{W}/va.plan.json", "-o", "{o}"],
    "collect": ["collect", "--sim", "accelsim", "{W}/run.out", "-o", "{o}"],
    "features-accelsim": ["profile", "features", "--sim", "accelsim", "{W}/t3", "-o", "{o}"],
    "features-macsim": ["profile", "features", "--sim", "macsim", "{W}/macsim-traces", "-o", "{o}"],
    "features-hyfiss": ["profile", "features", "--sim", "hyfiss", "{W}/hyfiss-app", "-o", "{o}"],
    "select": ["accelsim", "select", "--plan", "{W}/p3.json", "-o", "{o}"],
    "pkp-totals": ["pkp", "totals", "{W}/f3.parquet", "-o", "{o}"],
    "pick-sm": ["hyfiss", "pick-sm", "{W}/hyfiss-app", "--device-config", "{dev}", "-o", "{o}"],
}


def _argv(name: str, work: Path, output: Path, dev: Path) -> list[str]:
    return [a.format(W=work, o=output, dev=dev) for a in WRITERS[name]]


def _char_devices(tmp_path: Path) -> list[Path]:
    """A private null device (made with mknod, as root) and the machine's /dev/null when writable."""
    found = []
    node = tmp_path / "devnode" / "mynull"
    node.parent.mkdir()
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        found.append(node)
    except (PermissionError, OSError):
        pass
    if os.access("/dev/null", os.W_OK) and os.environ.get("CATALOGUE_SKIP_DEV_NULL") != "1":
        found.append(Path("/dev/null"))
    if not found:
        pytest.skip("no writable character device")
    return found


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_output_to_a_character_device_is_written_through(
    name: str,
    work: Path,
    device_config: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``-o /dev/null`` must never replace the device with a regular file (as root, that broke every
    later program writing to /dev/null), change its mode, or put anything beside it."""
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    for dev in _char_devices(tmp_path):
        st = dev.stat()
        beside = set(dev.parent.iterdir())
        code, out, err = _in_process(_argv(name, work, dev, device_config), capsys)
        assert code == 0, err
        now = os.lstat(dev)
        assert stat.S_ISCHR(now.st_mode), f"{dev} was replaced by a regular file"
        assert (now.st_rdev, stat.S_IMODE(now.st_mode), now.st_uid) == (st.st_rdev, stat.S_IMODE(st.st_mode), st.st_uid)
        assert set(dev.parent.iterdir()) == beside, f"created beside {dev}: {set(dev.parent.iterdir()) - beside}"
    assert not any(temp.iterdir())


def _reader(path: Path, into: list[bytes]) -> threading.Thread:
    def read() -> None:
        with open(path, "rb") as fh:
            into.append(fh.read())

    t = threading.Thread(target=read, daemon=True)
    t.start()
    return t


@pytest.mark.parametrize("name", ["plan", "report", "collect", "select"])
def test_output_to_a_named_pipe_is_written_through(
    name: str, work: Path, device_config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    t = _reader(fifo, got)
    code, out, err = _in_process(_argv(name, work, fifo, device_config), capsys)
    t.join(30)
    assert code == 0, err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the pipe was replaced"
    assert got and len(got[0]) > 100, "nothing came through the pipe"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.fifo"]
    if name == "plan":
        assert json.loads(got[0])["samples"]


def test_a_named_pipe_nobody_reads_is_refused_not_waited_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from simsample.io import files

    monkeypatch.setattr(files, "FIFO_READER_WAIT_S", 0.5)
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    with _within(60):
        code, _, err = _in_process(["plan", str(SCAN), "--sampler", "random", "-o", fifo], capsys)
    _one_error(code, err, "nobody reads")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and sorted(p.name for p in tmp_path.iterdir()) == ["out.fifo"]


def test_a_named_pipe_closed_by_its_reader_is_an_error(tmp_path: Path) -> None:
    """The reader takes a few bytes and leaves: the output is incomplete, an error (not the quiet
    end of ``| head`` on standard output)."""
    from simsample.errors import UserError
    from simsample.io.files import atomic_write_text

    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)

    def read_a_little() -> None:
        with open(fifo, "rb") as fh:
            fh.read(10)

    t = threading.Thread(target=read_a_little, daemon=True)
    t.start()
    with pytest.raises(UserError, match="closed the pipe"), _within(60):
        atomic_write_text(fifo, "x" * (8 << 20))
    t.join(10)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_output_through_a_link_keeps_the_link(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A symbolic link to a file is followed (the file gets the plan), as a shell's ``>`` does;
    the link itself stays a link."""
    real = tmp_path / "plans" / "p.json"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "p.json"
    link.symlink_to(real)
    code, _, err = _in_process(["plan", str(SCAN), "--sampler", "random", "-o", str(link)], capsys)
    assert code == 0, err
    assert link.is_symlink() and json.loads(real.read_text())["samples"]


def test_partial_log_removal_never_removes_a_device(
    work: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``run -o DEVICE`` with a simulator that cannot start: the 'partial log' is not unlinked."""
    devs = _char_devices(tmp_path)
    exe = tmp_path / "accel-sim.out"
    exe.write_bytes(b"\x00\x01not a program")
    exe.chmod(0o755)
    sampled = tmp_path / "sampled"
    assert (
        _in_process(
            ["apply", "--sim", "accelsim", "--plan", work / "p3.json", "--traces", work / "t3", "--out", sampled],
            capsys,
        )[0]
        == 0
    )
    for dev in devs:
        for argv in (
            [
                "run",
                "--sim",
                "accelsim",
                "--sampled",
                sampled,
                "--accelsim",
                exe,
                "--config",
                work / "gpgpusim.config",
                "-o",
                dev,
            ],
            ["run", "--sim", "macsim", "--sampled", work / "macsim-sampled", "--macsim", exe, "-o", dev, "--force"],
        ):
            code, _, err = _in_process(argv, capsys)
            assert code == 1, err
            assert stat.S_ISCHR(os.lstat(dev).st_mode), f"{dev} removed by {argv[:3]}"


def test_run_to_a_device_is_refused_before_the_simulator_starts(
    work: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``run --sim accelsim -o /dev/null`` ran the whole simulation, then refused to judge a log it
    could not read back: refused up front now, the simulator never started."""
    devs = _char_devices(tmp_path)
    started = tmp_path / "started"
    exe = tmp_path / "accel-sim.out"
    exe.write_text(f"#!/bin/sh\ntouch '{started}'\necho 'GPGPU-Sim: *** exit detected ***'\n")
    exe.chmod(0o755)
    sampled = tmp_path / "sampled"
    argv = ["apply", "--sim", "accelsim", "--plan", work / "p3.json", "--traces", work / "t3", "--out", sampled]
    assert _in_process(argv, capsys)[0] == 0
    for dev in devs:
        argv = ["run", "--sim", "accelsim", "--sampled", sampled, "--accelsim", exe]
        code, _, err = _in_process([*argv, "--config", work / "gpgpusim.config", "-o", dev], capsys)
        _one_error(code, err, "give a file name")
        assert not started.exists(), "the simulator ran before the refusal"
        assert stat.S_ISCHR(os.lstat(dev).st_mode)


def test_the_writer_refuses_a_socket(tmp_path: Path) -> None:
    import socket

    from simsample.errors import UserError
    from simsample.io.files import atomic_write_text

    path = tmp_path / "s.sock"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(path))
    try:
        with pytest.raises(UserError, match="socket"):
            atomic_write_text(path, "x")
        assert stat.S_ISSOCK(os.lstat(path).st_mode)
    finally:
        s.close()


# --- full disks, file size limits, long names ------------------------------------------------
@pytest.mark.parametrize(
    "args",
    [
        ["samplers", "--json"],
        ["profile", "info", "--json", str(SCAN)],
        ["profile", "info", str(SCAN)],
        ["plan", str(SCAN), "--sampler", "random", "-o", "/dev/stdout"],
        ["--version"],
    ],
    ids=["samplers", "profile-info-json", "profile-info", "plan-stdout", "version"],
)
def test_standard_output_on_a_full_disk_is_an_error(args: list[str]) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    with open("/dev/full", "w") as full:
        p = subprocess.run(_console(*args), stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert p.returncode == 1, p.stderr
    assert "Traceback" not in p.stderr and "Exception ignored" not in p.stderr, p.stderr
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and "no space left" in lines[0], p.stderr


def test_a_closed_pipe_is_not_an_error() -> None:
    """``simsample ... | head -c 10``: the reader leaving early is the reader's choice."""
    p = subprocess.run(
        f"{' '.join(map(repr, _console('samplers', '--json')))} | head -c 10",
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0 and "Traceback" not in p.stderr and "Exception ignored" not in p.stderr, p.stderr


@pytest.mark.parametrize("args", [("samplers",), ("samplers", "--json"), ("profile", "info", str(SCAN))])
def test_a_closed_standard_output_is_not_a_crash(args: tuple[str, ...]) -> None:
    """Started with standard output closed (``>&-``): the output goes nowhere, as asked; no internal error."""
    p = subprocess.run(
        " ".join(map(repr, _console(*args))) + " >&-", shell=True, capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 0 and "internal error" not in p.stderr and "Traceback" not in p.stderr, p.stderr


LONG = "x" * 300

#: every command that writes, with {o} a path in its own folder; folders for apply and merge
FOLDER_WRITERS: dict[str, list[str]] = {
    "apply-copy": [
        "apply",
        "--sim",
        "accelsim",
        "--plan",
        "{W}/p3.json",
        "--traces",
        "{W}/t3",
        "--out",
        "{o}",
        "--copy",
    ],
    "apply-split": [
        "apply",
        "--sim",
        "accelsim",
        "--plan",
        "{W}/p3.json",
        "--traces",
        "{W}/t3",
        "--out",
        "{o}",
        "--copy",
        "--split",
    ],
    "apply-macsim": [
        "apply",
        "--sim",
        "macsim",
        "--plan",
        "{W}/pm.json",
        "--traces",
        "{W}/macsim-traces",
        "--out",
        "{o}",
        "--copy",
    ],
    "merge": ["accelsim", "merge", "{runs}/run-0001", "{runs}/run-0002", "--out", "{o}", "--copy"],
    "apply-hyfiss": [
        "apply",
        "--sim",
        "hyfiss",
        "--plan",
        "{runs}/../hyfiss-plan.json",
        "--traces",
        "{W}/hyfiss-app",
        "--out",
        "{o}",
        "--copy",
    ],
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from simsample.cli import run
    from tests.plans.test_profile_first import process_folder, runs_of

    base = tmp_path_factory.mktemp("runs")
    full, _ = process_folder(base, 12)
    runs_of(full, [(2, 4), (7, 9)], base / "runs")
    # a plan of the HyFiSS app, for apply --sim hyfiss (kept beside the runs)
    assert (
        run(
            [
                "plan",
                str(SHARED_DATA / "simulators/hyfiss/synthetic_app"),
                "--sampler",
                "random",
                "--param",
                "count=2",
                "-o",
                str(base / "hyfiss-plan.json"),
            ]
        )
        == 0
    )
    return base / "runs"


def _writer_argv(name: str, work: Path, out: Path, dev: Path, runs: Path) -> list[str]:
    spec = WRITERS.get(name) or FOLDER_WRITERS[name]
    return [a.format(W=work, o=out, dev=dev, runs=runs) for a in spec]


ALL_WRITERS = sorted(WRITERS) + sorted(FOLDER_WRITERS)


@pytest.mark.parametrize("name", ALL_WRITERS)
def test_a_name_too_long_is_one_line(
    name: str,
    work: Path,
    device_config: Path,
    runs: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    code, _, err = _in_process(_writer_argv(name, work, out / LONG, device_config, runs), capsys)
    _one_error(code, err, "name too long")
    assert not any(out.iterdir()), sorted(p.name[:40] for p in out.iterdir())
    assert not any(temp.iterdir())


@pytest.mark.parametrize(
    "name, length", [("plan", 250), ("features-accelsim", 240), ("apply-copy", 245), ("merge", 245)]
)
def test_a_long_but_valid_name_is_written(
    name: str,
    length: int,
    work: Path,
    device_config: Path,
    runs: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Names up to 255 characters are valid (a features table's allows for the ``.extras.npz`` beside
    it): the temporaries beside them must not fail for their own, longer names."""
    out = tmp_path / "out"
    out.mkdir()
    suffix = ".parquet" if name.startswith("features") else ".json" if name == "plan" else ""
    target = out / ("y" * (length - len(suffix)) + suffix)
    code, _, err = _in_process(_writer_argv(name, work, target, device_config, runs), capsys)
    assert code == 0, err
    assert target.exists() and not [p for p in out.iterdir() if p.name.startswith(".")]


def _limited(limit: int):
    def pre() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return pre


#: the file size limit: below what any command's output needs
SIZE_LIMIT = 100


@pytest.mark.parametrize("name", ALL_WRITERS)
def test_a_file_size_limit_is_one_line_and_leaves_nothing(
    name: str, work: Path, device_config: Path, runs: Path, tmp_path: Path
) -> None:
    """EFBIG (``ulimit -f``, or a file system's largest file) while an output is written: one line,
    exit 1, no output, no temporary, no extras or cache beside it."""
    out = tmp_path / "out"
    out.mkdir()
    temp = tmp_path / "temp"
    temp.mkdir()
    target = out / ("result" if name in FOLDER_WRITERS else "result.out")
    argv = _writer_argv(name, work, target, device_config, runs)
    p = subprocess.run(
        _console(*argv),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=out,
        env={**os.environ, "TMPDIR": str(temp)},
        preexec_fn=_limited(SIZE_LIMIT),
    )
    _one_error(p.returncode, p.stderr, "too large")
    assert not any(out.iterdir()), sorted(p.name for p in out.iterdir())
    assert not any(temp.iterdir()), sorted(p.name for p in temp.iterdir())


def test_features_leave_no_extras_when_the_table_fails(work: Path, tmp_path: Path) -> None:
    """The table is written before its extras: a table that cannot be written leaves no
    ``.extras.npz`` (nor a cache) behind."""
    out = tmp_path / "out"
    out.mkdir()
    p = subprocess.run(
        _console("profile", "features", "--sim", "accelsim", str(work / "t3"), "-o", str(out / "f.parquet")),
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=_limited(4096),
    )
    _one_error(p.returncode, p.stderr, "too large")
    assert not any(out.iterdir()), sorted(q.name for q in out.iterdir())


def test_write_errors_are_named_for_what_the_user_can_do() -> None:
    import errno

    from simsample.io.files import write_error

    for code, phrase in (
        (errno.ENOSPC, "no space left"),
        (errno.EDQUOT, "quota"),
        (errno.EFBIG, "too large"),
        (errno.ENAMETOOLONG, "name too long"),
        (errno.EROFS, "read-only"),
        (errno.EACCES, "permission denied"),
    ):
        err = write_error(OSError(code, os.strerror(code), "/x/out.json"))
        assert err is not None and str(err).startswith("/x/out.json: ") and phrase in str(err)
    assert write_error(OSError(errno.EBADF, "bad")) is None  # anything else stays a bug
    assert write_error(ValueError("x")) is None


# --- limits as a user sets them ----------------------------------------------------------------
@pytest.mark.parametrize("value", ["64G", "1T", "1024T"])
def test_a_raised_limit_reads_a_small_file_at_once(
    value: str, work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Raising a limit as docs/limits.md says must not make reading allocate the limit."""
    monkeypatch.setenv("SIMSAMPLE_MAX_DOCUMENT_BYTES", value)
    code, out, err = _in_process(["estimate", "--plan", work / "va.plan.json", work / "values.csv", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)


@pytest.mark.parametrize(
    "env, value",
    [
        ("SIMSAMPLE_MAX_DOCUMENT_BYTES", "1e-9"),
        ("SIMSAMPLE_MAX_DOCUMENT_BYTES", "0.4"),
        ("SIMSAMPLE_MAX_DOCUMENT_BYTES", "-1"),
        ("SIMSAMPLE_MAX_DOCUMENT_BYTES", "nan"),
        ("SIMSAMPLE_MAX_DOCUMENT_BYTES", "inf"),
        ("SIMSAMPLE_MAX_DOCUMENT_BYTES", "1e23T"),
        ("SIMSAMPLE_MAX_DOCUMENT_BYTES", "100000000000000000000000T"),
        ("SIMSAMPLE_MAX_DOCUMENT_BYTES", "1" + "0" * 400),
        ("SIMSAMPLE_MAX_LOG_BYTES", "2E"),
        ("SIMSAMPLE_MAX_UNPACK_MEMBERS", "3.5"),
        ("SIMSAMPLE_MAX_COMPRESSION_RATIO", "1e-3"),
    ],
)
def test_a_limit_that_means_nothing_is_refused(
    env: str, value: str, work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A value that rounds to 0 would silently mean 'no limit'; a huge one overflowed; both are
    refused in one line naming the variable and what it takes."""
    from simsample.io.limits import LIMITS, limit

    name = next(k for k, v in LIMITS.items() if v.env == env)
    monkeypatch.setenv(env, value)
    from simsample.errors import UserError

    with pytest.raises(UserError, match=env) as info:
        limit(name)
    assert "0 for no limit" in str(info.value) and len(str(info.value)) < 300
    if env == "SIMSAMPLE_MAX_DOCUMENT_BYTES":
        code, _, err = _in_process(["estimate", "--plan", work / "va.plan.json", work / "values.csv"], capsys)
        _one_error(code, err, env)


def test_every_limit_in_the_code_is_documented() -> None:
    """Every SIMSAMPLE_MAX_ variable the code names is a configurable limit and is in
    docs/limits.md; every fixed limit is in its table, with the value the code uses."""
    import re

    from simsample import arguments
    from simsample.errors import MESSAGE_LIMIT
    from simsample.io import join, kineto_steps, nsys_steps
    from simsample.io.limits import FIXED, LIMITS
    from simsample.pkp import monitor
    from simsample.sampling import estimate, filters
    from simsample_accelsim import traceg, tracerstats

    root = Path(__file__).resolve().parents[2]
    doc = (root / "docs" / "limits.md").read_text()
    named = set()
    for folder in ("simsample", "adapters"):
        for f in (root / folder).rglob("*.py"):
            named |= set(re.findall(r"SIMSAMPLE_MAX_[A-Z_]*[A-Z]", f.read_text(errors="replace")))
    envs = {lim.env for lim in LIMITS.values()}
    assert named and named <= envs, named - envs
    for env in envs:
        assert f"`{env}`" in doc, env
    assert filters._TIME_MAX_NS == kineto_steps._TIME_MAX_NS == nsys_steps._TIME_MAX_NS
    in_code = {
        "message characters": MESSAGE_LIMIT,
        "trace header bytes": traceg.MAX_HEADER_BYTES,
        "join table bytes": join._MAX_JOIN_BYTES,
        "stats line bytes": tracerstats.MAX_LINE_BYTES,
        "kernel name characters shown": FIXED["kernel name characters shown"][0],
        "sampled value magnitude": estimate.MAX_VALUE,
        "seed": arguments.MAX_SEED,
        "time": filters._TIME_MAX_NS,
        "PKP window samples": monitor._MAX_WINDOW_SAMPLES,
        "evaluate repeats": arguments.MAX_REPEATS,
    }
    assert set(in_code) == set(FIXED)
    for key, (value, shown, _) in FIXED.items():
        assert in_code[key] == value, key
        row = next((line for line in doc.splitlines() if line.startswith(f"| {key} |")), None)
        assert row is not None, f"{key} is not in docs/limits.md's table of fixed limits"
        assert f"| {shown} |" in row, (key, shown, row)


# --- hangs --------------------------------------------------------------------------------------
class Hung(BaseException):
    """Raised by the alarm of :func:`_within`: not an OSError (as TimeoutError is, which a reader's
    ``except OSError`` would turn into a refusal) nor an Exception (which the CLI reports), so it
    ends the test."""


def _within(seconds: int):
    def hung(signum, frame):
        raise Hung(f"still running after {seconds} s")

    class _Alarm:
        def __enter__(self):
            self.old = signal.signal(signal.SIGALRM, hung)
            signal.alarm(seconds)

        def __exit__(self, *exc):
            signal.alarm(0)
            signal.signal(signal.SIGALRM, self.old)

    return _Alarm()


@pytest.mark.parametrize("which", ["run-0001", "run-0002"])
def test_a_sparse_stats_csv_is_refused_quickly(
    which: str, runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 2 GiB sparse stats.csv (in a run other than the last, or the last, whose file is read
    whole): refused after reading a bounded amount, where the tail reader took minutes."""
    mine = tmp_path / "runs"
    shutil.copytree(runs, mine, symlinks=True)
    stats = mine / which / "stats.csv"
    with open(stats, "r+b") as fh:
        fh.seek(0, 2)
        fh.truncate(2 << 30)
    out = tmp_path / "traces"
    with _within(60):
        code, _, err = _in_process(["accelsim", "merge", mine / "run-0001", mine / "run-0002", "--out", out], capsys)
    _one_error(code, err, "stats.csv")
    assert not out.exists()


def test_stats_tail_reads_the_last_lines_and_caps_a_line(tmp_path: Path) -> None:
    """The tail of a long stats.csv: the last lines only, read back in one pass."""
    from simsample_accelsim.tracerstats import STATS_HEADER, read_stats_tail, stats_line

    p = tmp_path / "stats.csv"
    with open(p, "w") as fh:
        fh.write(STATS_HEADER + "\n")
        for n in range(1, 200_001):
            fh.write(stats_line(n, "_Z6kernelPf" + "x" * (n % 7), (n % 9 + 1, 1, 1), (32, 1, 1), n) + "\n")
    rows = read_stats_tail(p, 150_000)
    assert sorted(rows) == list(range(50_001, 200_001))
    assert rows[200_000].grid == (200_000 % 9 + 1, 1, 1) and rows[50_001].name == "_Z6kernelPf" + "x" * (50_001 % 7)
    assert sorted(read_stats_tail(p, 1)) == [200_000]
    lines = p.read_text().splitlines()
    long = tmp_path / "long.csv"
    long.write_text(
        "\n".join(lines[:-1] + ["kernel-200000.trace, _Z1k" + "y" * (2 << 20) + "Pf, 1, 1, 1, 1, 32, 1, 1, 32, 5,5"])
        + "\n"
    )
    from simsample.errors import FormatError

    with pytest.raises(FormatError, match="longer than 1 MiB"):
        read_stats_tail(long, 3)  # a line beyond the cap, at the end


def test_a_kernel_name_of_megabytes_is_cut_in_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = tmp_path / "big-name.csv"
    rows = ["Name,Duration", "_Z4" + "a" * (20 << 20) + "Pf,2000", *(f"k{i % 3},{1000 + i}" for i in range(50))]
    csv.write_text("\n".join(rows) + "\n")
    for extra in ([], ["--wide"]):
        with _within(60):
            code, out, err = _in_process(
                ["profile", "info", *extra, "--format", "csv", "--columns", "name=Name,duration_ns=Duration", csv],
                capsys,
            )
        assert code == 0, err
        assert "…" in out and len(out) < 100_000
    with _within(60):
        code, out, err = _in_process(
            ["profile", "info", "--json", "--format", "csv", "--columns", "name=Name,duration_ns=Duration", csv], capsys
        )
    assert code == 0 and len(out) > 20 << 20  # the JSON keeps the name whole


def test_a_name_of_blanks_is_cut_before_its_arguments_are_stripped() -> None:
    from simsample.cli.commands import display_name
    from simsample.cli.tables import kernel_label

    hostile = "k" + " " * (4 << 20) + "x(int) const"
    with _within(60):  # stripping the argument list of 4 MB of blanks backtracked quadratically
        label = kernel_label(hostile)
        short = display_name(hostile, 48)
    assert len(label) <= 200 and label.startswith("k") and "…" in label
    assert len(short) <= 48 and short.startswith("k")


# --- numbers that cannot be ----------------------------------------------------------------------
@pytest.mark.parametrize("value", ["1.7e308", "1e200", "-1.7e308"])
def test_sums_that_overflow_are_refused(
    value: str, work: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Values whose weighted sum (or its variance) overflows gave an estimate of inf (null in
    --json), exit 0 and numpy's warnings."""
    import warnings

    plan = json.loads((work / "va.plan.json").read_text())
    ids = sorted({s["kernel_id"] for s in plan["samples"]})
    values = tmp_path / "values.csv"
    values.write_text("kernel_id,value\n" + "".join(f"{k},{value}\n" for k in ids))
    for extra in ([], ["--json"]):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            code, out, err = _in_process(["estimate", "--plan", work / "va.plan.json", values, *extra], capsys)
        _one_error(code, err, "overflow")
        assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], [str(w.message) for w in caught]


def test_a_truth_that_overflows_is_refused(work: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import warnings

    launches = json.loads((work / "va.plan.json").read_text())["workload"]["launches"]
    truth = tmp_path / "truth.csv"
    truth.write_text("kernel_id,value\n" + "".join(f"{k},1.7e308\n" for k in range(launches)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code, _, err = _in_process(["evaluate", SCAN, "--sampler", "stem", "--repeat", "1", "--truth", truth], capsys)
    _one_error(code, err, "overflow")
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], [str(w.message) for w in caught]


def _edited(base: Path, into: Path, edit) -> Path:
    doc = json.loads(base.read_text())
    edit(doc)
    into.write_text(json.dumps(doc))  # json writes NaN and Infinity as a hand-edited file may hold them
    return into


ESTIMATE_EDITS = {
    "estimate-nan": (lambda d: d["estimates"][0].update(estimate=float("nan")), "estimate is NaN"),
    "estimate-inf": (lambda d: d["estimates"][0].update(estimate=float("inf")), "estimate is Infinity"),
    "interval-inverted": (
        lambda d: d["estimates"][0].update(ci_low=d["estimates"][0]["ci_high"], ci_high=d["estimates"][0]["ci_low"]),
        "does not hold the estimate",
    ),
    "interval-beside": (
        lambda d: d["estimates"][0].update(
            ci_low=d["estimates"][0]["estimate"] * 2, ci_high=d["estimates"][0]["estimate"] * 3
        ),
        "does not hold the estimate",
    ),
    "samples-negative": (lambda d: d["estimates"][0].update(samples=-3), "samples is -3"),
    "samples-fraction": (lambda d: d["estimates"][0].update(samples=2.5), "samples is 2.5"),
    "confidence-7": (lambda d: d["estimates"][0].update(confidence=7), "confidence is 7"),
    "std-error-negative": (lambda d: d["estimates"][0].update(std_error=-1), "std_error is -1"),
    "plan-confidence-text": (lambda d: d["plan"].update(confidence="high"), "plan.confidence"),
    "excluded-share-nan": (
        lambda d: d["plan"].update(excluded={"launches": 3, "time_ns": 10, "share": float("nan")}),
        "plan.excluded.share is NaN",
    ),
    "excluded-share-2": (
        lambda d: d["plan"].update(excluded={"launches": 3, "time_ns": 10, "share": 2}),
        "plan.excluded.share is 2",
    ),
}

EVALUATION_EDITS = {
    "coverage-infinity": (lambda d: d["suite"].update(coverage=float("inf")), "suite.coverage is Infinity"),
    "coverage-above-1": (lambda d: d["suite"].update(coverage=1.5), "suite.coverage is 1.5"),
    "error-lots": (lambda d: d["suite"].update(error_mean_pct="lots"), 'suite.error_mean_pct is "lots"'),
    "workload-error-lots": (
        lambda d: d["workloads"][0].update(error_mean_pct="lots"),
        'workloads[0].error_mean_pct is "lots"',
    ),
    "speedup-negative": (lambda d: d["workloads"][0].update(speedup_hmean=-2), "speedup_hmean is -2"),
    "speedup-nan": (lambda d: d["suite"].update(speedup_hmean=float("nan")), "suite.speedup_hmean is NaN"),
    "speedup-1.7e308": (
        lambda d: d["workloads"][0].update(speedup_hmean=1.7e308),
        "workloads[0].speedup_hmean is 1.7e+308",
    ),
    "speedup-tiny": (lambda d: d["suite"].update(speedup_hmean=0), "suite.speedup_hmean is 0"),
    "half-width-bool": (lambda d: d["suite"].update(half_width_median_pct=True), "half_width_median_pct is true"),
    "params-confidence-7": (lambda d: d["workloads"][0]["params"].update(confidence=7), "params.confidence is 7"),
}


@pytest.fixture(scope="module")
def report_docs(work: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An estimate and an evaluation of the catalogue's plan, as simsample writes them."""
    import io

    from simsample.cli import run

    d = tmp_path_factory.mktemp("report-docs")
    plan = json.loads((work / "va.plan.json").read_text())
    (d / "values.csv").write_text(
        "kernel_id,value\n" + "".join(f"{k},{100 + k}\n" for k in range(plan["workload"]["launches"]))
    )
    for name, argv in (
        ("est.json", ["estimate", "--plan", str(work / "va.plan.json"), str(d / "values.csv"), "--json"]),
        ("ev.json", ["evaluate", str(SCAN), "--sampler", "random", "--repeat", "1", "--json"]),
    ):
        old = sys.stdout
        sys.stdout = buf = io.StringIO()
        try:
            assert run(argv) == 0, argv
        finally:
            sys.stdout = old
        (d / name).write_text(buf.getvalue())
    return d


@pytest.mark.parametrize("case", sorted(ESTIMATE_EDITS) + sorted(EVALUATION_EDITS))
def test_report_refuses_numbers_that_cannot_be(
    case: str, work: Path, report_docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A hand-edited estimate or evaluation: one line naming the field, no report drawn from it."""
    estimate = case in ESTIMATE_EDITS
    edit, phrase = (ESTIMATE_EDITS if estimate else EVALUATION_EDITS)[case]
    doc = _edited(report_docs / ("est.json" if estimate else "ev.json"), tmp_path / "doc.json", edit)
    out = tmp_path / "out"
    out.mkdir()
    code, _, err = _in_process(
        ["report", work / "va.plan.json", "--estimate" if estimate else "--evaluate", doc, "-o", out / "r.html"], capsys
    )
    _one_error(code, err, phrase)
    assert not any(out.iterdir())


def test_report_takes_the_documents_as_written(
    work: Path, report_docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The checks refuse nothing simsample writes itself."""
    code, _, err = _in_process(
        [
            "report",
            work / "va.plan.json",
            "--estimate",
            report_docs / "est.json",
            "--evaluate",
            report_docs / "ev.json",
            "-o",
            tmp_path / "r.html",
        ],
        capsys,
    )
    assert code == 0, err


_WARMUP_VALUES = [
    ("--warmup-budget", "nan"),
    ("--warmup-budget", "inf"),
    ("--warmup-budget", "-0.5"),
    ("--warmup-reach", "nan"),
    ("--warmup-reach", "inf"),
    ("--warmup-reach", "-1"),
]


@pytest.mark.parametrize(
    "sim, option, value",
    [("accelsim", o, v) for o, v in _WARMUP_VALUES]
    + [("macsim", o, v) for o, v in _WARMUP_VALUES if o != "--warmup-reach"],
)  # MacSim has no --warmup-reach
def test_warmup_options_that_are_not_finite_are_refused(
    sim: str,
    option: str,
    value: str,
    work: Path,
    tmp_path: Path,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = (
        ["apply", "--sim", "accelsim", "--plan", work / "p3.json", "--traces", work / "t3"]
        if sim == "accelsim"
        else ["apply", "--sim", "macsim", "--plan", work / "pm.json", "--traces", work / "macsim-traces"]
    )
    out = tmp_path / "sampled"
    code, _, err = _in_process([*argv, "--out", out, option, value], capsys)
    _one_error(code, err, "warmup")
    assert option in err or option[2:].replace("-", "_") in err, err  # the option, as the CLI or the API names it
    assert not out.exists()


@pytest.mark.parametrize("name", sorted(FOLDER_WRITERS))
def test_a_folder_output_on_a_device_is_refused(
    name: str, work: Path, device_config: Path, runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--out /dev/null`` for a command that writes a folder: refused, the device as it was (a
    folder is renamed into place, which would replace whatever the path is)."""
    for dev in _char_devices(tmp_path):
        st = dev.stat()
        code, _, err = _in_process(_writer_argv(name, work, dev, device_config, runs), capsys)
        _one_error(code, err, "not a folder")
        now = os.lstat(dev)
        assert stat.S_ISCHR(now.st_mode) and (now.st_rdev, now.st_mode) == (st.st_rdev, st.st_mode)


def test_the_stats_csv_read_whole_is_held_to_the_log_limit(
    runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIMSAMPLE_MAX_LOG_BYTES", "100")
    out = tmp_path / "traces"
    code, _, err = _in_process(["accelsim", "merge", runs / "run-0001", runs / "run-0002", "--out", out], capsys)
    _one_error(code, err, "SIMSAMPLE_MAX_LOG_BYTES")
    assert not out.exists()


def test_a_features_table_whose_extras_name_is_too_long_is_refused_first(
    work: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A table name of 250 characters fits, its ``.extras.npz`` does not: refused before the scan."""
    out = tmp_path / "out"
    out.mkdir()
    code, _, err = _in_process(
        ["profile", "features", "--sim", "accelsim", work / "t3", "-o", out / ("z" * 242 + ".parquet")], capsys
    )
    _one_error(code, err, "name too long")
    assert ".extras.npz" in err and not any(out.iterdir())


@pytest.mark.parametrize("where", ["cluster-mean", "cluster-total", "prediction-speedup"])
def test_a_plan_holding_nan_or_infinity_is_refused(
    where: str, work: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:  # noqa: F811
    """simsample never writes NaN or Infinity into a plan (JSON readers take them): a plan holding
    one was edited, and the report drew a NaN share from it."""

    def edit(d):
        if where == "cluster-mean":
            d["clusters"][0]["stats"]["mean"] = float("nan")
        elif where == "cluster-total":
            d["clusters"][0]["stats"]["total"] = float("inf")
        else:
            d["prediction"]["speedup"] = float("-inf")

    plan = _edited(work / "va.plan.json", tmp_path / "plan.json", edit)
    for argv in (["report", plan, "-o", tmp_path / "r.html"], ["estimate", "--plan", plan, work / "values.csv"]):
        code, _, err = _in_process(argv, capsys)
        _one_error(code, err, "is not a finite number")
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("name", ["nsys-sqlite-xz", "kineto-tar"])
def test_a_full_temporary_folder_is_not_a_damaged_input(name: str, work: Path, tmp_path: Path) -> None:  # noqa: F811
    """Unpacking or decompressing an input into a temporary folder that fills up (here a file size
    limit) said "truncated or corrupt compressed file": it is the temporary folder's, and says so."""
    src = (
        SHARED_DATA / "profiles/nsys-sqlite/pipit-cloverleaf/perlmutter-cloverleaf-cuda.sqlite.xz"
        if name == "nsys-sqlite-xz"
        else work / "ranks.tar.gz"
    )
    if not src.exists():
        pytest.skip(f"no {src.name}")
    temp = tmp_path / "temp"
    temp.mkdir()
    p = subprocess.run(
        _console("profile", "info", str(src)),
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TMPDIR": str(temp)},
        preexec_fn=_limited(1 << 16),
        check=False,
    )
    _one_error(p.returncode, p.stderr, "temporary folder")
    assert "TMPDIR" in p.stderr and "corrupt" not in p.stderr and "unreadable" not in p.stderr
    assert not any(temp.iterdir())
