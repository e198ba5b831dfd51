"""A real single-node SLURM for tests: munged, slurmctld and slurmd started in a temporary folder.

Needs Debian's ``slurm-wlm`` and ``munge`` packages and root (the daemons run as root with
their own configuration, key, ports, state and logs in the folder; nothing system-wide is
touched). ``SLURM_CONF`` points the client commands (sbatch, squeue, scancel) at it. The
daemons are stopped by their process ids when the fixture ends.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")


def available() -> str | None:
    """None when a single-node SLURM can be started here, else why not."""
    missing = [
        d for d in (*DAEMONS, "sbatch", "sinfo") if shutil.which(d) is None and not Path("/usr/sbin", d).exists()
    ]
    if missing:
        return f"not installed: {', '.join(missing)} (Debian packages slurm-wlm and munge)"
    if os.geteuid() != 0:
        return "the SLURM daemons of this fixture run as root"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _exe(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


@contextmanager
def single_node_slurm(folder: Path, timeout: float = 30.0) -> Iterator[dict[str, str]]:
    """Start the daemons; yield the environment for client commands (``SLURM_CONF``)."""
    d = Path(folder)
    for sub in ("state", "spool", "log", "run"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    key = d / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    host = socket.gethostname().split(".")[0]
    cpus = len(os.sched_getaffinity(0))
    conf = d / "slurm.conf"
    conf.write_text(
        f"ClusterName=simsampletest\nSlurmctldHost={host}\nSlurmUser=root\nSlurmdUser=root\n"
        f"SlurmctldPort={_free_port()}\nSlurmdPort={_free_port()}\n"
        f"AuthType=auth/munge\nAuthInfo=socket={d / 'munge.sock'}\nCredType=cred/munge\n"
        f"StateSaveLocation={d / 'state'}\nSlurmdSpoolDir={d / 'spool'}\n"
        f"SlurmctldPidFile={d / 'run/slurmctld.pid'}\nSlurmdPidFile={d / 'run/slurmd.pid'}\n"
        f"SlurmctldLogFile={d / 'log/slurmctld.log'}\nSlurmdLogFile={d / 'log/slurmd.log'}\n"
        "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nJobAcctGatherType=jobacct_gather/none\n"
        "SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\nMpiDefault=none\nSwitchType=switch/none\n"
        "ReturnToService=2\n"
        f"NodeName={host} CPUs={cpus} RealMemory=4000 State=UNKNOWN\n"
        f"PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP\n"
    )
    env = {**os.environ, "SLURM_CONF": str(conf)}
    started: list[Path] = []
    try:
        subprocess.run(
            [
                _exe("munged"),
                "--force",
                f"--socket={d / 'munge.sock'}",
                f"--key-file={key}",
                f"--pid-file={d / 'run/munged.pid'}",
                f"--log-file={d / 'log/munged.log'}",
                f"--seed-file={d / 'munge.seed'}",
            ],
            check=True,
            env=env,
            capture_output=True,
        )
        started.append(d / "run/munged.pid")
        subprocess.run([_exe("slurmctld"), "-f", str(conf)], check=True, env=env, capture_output=True)
        started.append(d / "run/slurmctld.pid")
        subprocess.run([_exe("slurmd"), "-f", str(conf)], check=True, env=env, capture_output=True)
        started.append(d / "run/slurmd.pid")
        deadline = time.monotonic() + timeout
        while True:
            out = subprocess.run(
                [_exe("sinfo"), "-h", "-o", "%t"], env=env, capture_output=True, text=True
            ).stdout.strip()
            if out == "idle":
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"single-node SLURM did not come up (sinfo: {out!r}); logs in {d / 'log'}")
            time.sleep(0.2)
        yield {"SLURM_CONF": str(conf)}
    finally:
        for pid_file in reversed(started):
            _stop(pid_file)


def _stop(pid_file: Path, grace: float = 10.0) -> None:
    deadline = time.monotonic() + 2.0
    while not pid_file.exists() and time.monotonic() < deadline:  # daemons write it after forking
        time.sleep(0.05)
    try:
        pid = int(pid_file.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not _alive(pid):
            return
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie, ended but not reaped by its parent, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
