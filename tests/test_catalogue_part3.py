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

The in-process cases run as :mod:`tests.test_catalogue`'s do; the cases about standard output and
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
import time
from pathlib import Path

import pytest

from tests.helpers import SHARED_DATA
from tests.test_catalogue import NV, work  # noqa: F401  (work: the shared inputs)

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
    from tests.test_hyfiss_picksm import DEVICE

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
    "select": ["accelsim", "select", "--plan", "{W}/p3.json", "-o", "{o}"],
    "pkp-totals": ["pkp", "totals", "{W}/f3.parquet", "-o", "{o}"],
    "pick-sm": ["hyfiss", "pick-sm", "{W}/hyfiss-app", "--device-config", "{dev}", "-o", "{o}"],
}


def _argv(name: str, work: Path, output: Path, dev: Path) -> list[str]:  # noqa: F811
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
def test_output_to_a_character_device_is_written_through(name: str, work: Path, device_config: Path, tmp_path: Path,  # noqa: F811
                                                         capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
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
def test_output_to_a_named_pipe_is_written_through(name: str, work: Path, device_config: Path, tmp_path: Path,  # noqa: F811
                                                   capsys: pytest.CaptureFixture[str]) -> None:
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


def test_partial_log_removal_never_removes_a_device(work: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    """``run -o DEVICE`` with a simulator that cannot start: the 'partial log' is not unlinked."""
    devs = _char_devices(tmp_path)
    exe = tmp_path / "accel-sim.out"
    exe.write_bytes(b"\x00\x01not a program")
    exe.chmod(0o755)
    sampled = tmp_path / "sampled"
    assert _in_process(["apply", "--sim", "accelsim", "--plan", work / "p3.json", "--traces", work / "t3", "--out", sampled], capsys)[0] == 0
    for dev in devs:
        for argv in (["run", "--sim", "accelsim", "--sampled", sampled, "--accelsim", exe, "--config", work / "gpgpusim.config", "-o", dev],
                     ["run", "--sim", "macsim", "--sampled", work / "macsim-sampled", "--macsim", exe, "-o", dev, "--force"]):
            code, _, err = _in_process(argv, capsys)
            assert code == 1, err
            assert stat.S_ISCHR(os.lstat(dev).st_mode), f"{dev} removed by {argv[:3]}"


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
@pytest.mark.parametrize("args", [["samplers", "--json"], ["profile", "info", "--json", str(SCAN)], ["profile", "info", str(SCAN)],
                                  ["plan", str(SCAN), "--sampler", "random", "-o", "/dev/stdout"], ["--version"]],
                         ids=["samplers", "profile-info-json", "profile-info", "plan-stdout", "version"])
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
    p = subprocess.run(f"{' '.join(map(repr, _console('samplers', '--json')))} | head -c 10", shell=True, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0 and "Traceback" not in p.stderr and "Exception ignored" not in p.stderr, p.stderr


LONG = "x" * 300

#: every command that writes, with {o} a path in its own folder; folders for apply and merge
FOLDER_WRITERS: dict[str, list[str]] = {
    "apply-copy": ["apply", "--sim", "accelsim", "--plan", "{W}/p3.json", "--traces", "{W}/t3", "--out", "{o}", "--copy"],
    "apply-split": ["apply", "--sim", "accelsim", "--plan", "{W}/p3.json", "--traces", "{W}/t3", "--out", "{o}", "--copy", "--split"],
    "apply-macsim": ["apply", "--sim", "macsim", "--plan", "{W}/pm.json", "--traces", "{W}/macsim-traces", "--out", "{o}", "--copy"],
    "merge": ["accelsim", "merge", "{runs}/run-0001", "{runs}/run-0002", "--out", "{o}", "--copy"],
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.test_profile_first import process_folder, runs_of

    base = tmp_path_factory.mktemp("runs")
    full, _ = process_folder(base, 12)
    runs_of(full, [(2, 4), (7, 9)], base / "runs")
    return base / "runs"


def _writer_argv(name: str, work: Path, out: Path, dev: Path, runs: Path) -> list[str]:  # noqa: F811
    spec = WRITERS.get(name) or FOLDER_WRITERS[name]
    return [a.format(W=work, o=out, dev=dev, runs=runs) for a in spec]


ALL_WRITERS = sorted(WRITERS) + sorted(FOLDER_WRITERS)


@pytest.mark.parametrize("name", ALL_WRITERS)
def test_a_name_too_long_is_one_line(name: str, work: Path, device_config: Path, runs: Path, tmp_path: Path,  # noqa: F811
                                     capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    out.mkdir()
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    code, _, err = _in_process(_writer_argv(name, work, out / LONG, device_config, runs), capsys)
    _one_error(code, err, "name too long")
    assert not any(out.iterdir()), sorted(p.name[:40] for p in out.iterdir())
    assert not any(temp.iterdir())


def _limited(limit: int):
    def pre() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return pre


#: the file size limit: below what any command's output needs
SIZE_LIMIT = 100


@pytest.mark.parametrize("name", ALL_WRITERS)
def test_a_file_size_limit_is_one_line_and_leaves_nothing(name: str, work: Path, device_config: Path, runs: Path,  # noqa: F811
                                                          tmp_path: Path) -> None:
    """EFBIG (``ulimit -f``, or a file system's largest file) while an output is written: one line,
    exit 1, no output, no temporary, no extras or cache beside it."""
    out = tmp_path / "out"
    out.mkdir()
    temp = tmp_path / "temp"
    temp.mkdir()
    target = out / ("result" if name in FOLDER_WRITERS else "result.out")
    argv = _writer_argv(name, work, target, device_config, runs)
    p = subprocess.run(_console(*argv), capture_output=True, text=True, timeout=300, cwd=out, env={**os.environ, "TMPDIR": str(temp)},
                       preexec_fn=_limited(SIZE_LIMIT))
    _one_error(p.returncode, p.stderr, "too large")
    assert not any(out.iterdir()), sorted(p.name for p in out.iterdir())
    assert not any(temp.iterdir()), sorted(p.name for p in temp.iterdir())


def test_features_leave_no_extras_when_the_table_fails(work: Path, tmp_path: Path) -> None:  # noqa: F811
    """The table is written before its extras: a table that cannot be written leaves no
    ``.extras.npz`` (nor a cache) behind."""
    out = tmp_path / "out"
    out.mkdir()
    p = subprocess.run(_console("profile", "features", "--sim", "accelsim", str(work / "t3"), "-o", str(out / "f.parquet")),
                       capture_output=True, text=True, timeout=300, preexec_fn=_limited(4096))
    _one_error(p.returncode, p.stderr, "too large")
    assert not any(out.iterdir()), sorted(q.name for q in out.iterdir())


def test_write_errors_are_named_for_what_the_user_can_do() -> None:
    import errno

    from simsample.io.files import write_error

    for code, phrase in ((errno.ENOSPC, "no space left"), (errno.EDQUOT, "quota"), (errno.EFBIG, "too large"), (errno.ENAMETOOLONG, "name too long"),
                         (errno.EROFS, "read-only"), (errno.EACCES, "permission denied")):
        err = write_error(OSError(code, os.strerror(code), "/x/out.json"))
        assert err is not None and str(err).startswith("/x/out.json: ") and phrase in str(err)
    assert write_error(OSError(errno.EBADF, "bad")) is None  # anything else stays a bug
    assert write_error(ValueError("x")) is None
