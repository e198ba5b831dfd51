"""Run Accel-Sim on a sampled folder: build the command line, run it, judge the log.

The simulator is started in the sampled folder (``-trace ./kernelslist.g``, as Accel-Sim's own
scripts do, so that files it writes to the working directory, such as visualizer logs, land
there), with absolute paths to the configs. Its standard output and error go to the log file.
Completeness is judged from the log, not the exit status: Accel-Sim exits with 0 even when a
trace is missing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from simsample.sdk import UserError
from simsample_accelsim.kernelslist import DEFAULT_LIST


def build_command(
    sampled: str | Path,
    binary: str | Path,
    configs: Sequence[str | Path],
    extra: Sequence[str] = (),
    *,
    check_binary: bool = True,
) -> tuple[list[str], Path]:
    """The simulator's argument list and the folder to run it in."""
    folder = Path(sampled)
    if not (folder / DEFAULT_LIST).is_file():
        raise UserError(f"{folder}: no {DEFAULT_LIST} here; pass the folder written by 'simsample apply'")
    exe = Path(binary)
    if check_binary:
        if not exe.exists():
            raise UserError(
                f"{exe}: Accel-Sim binary not found (build gpu-simulator, then pass --accelsim "
                ".../bin/release/accel-sim.out)"
            )
        if not (exe.is_file() and os.access(exe, os.X_OK)):
            raise UserError(f"{exe}: not an executable file")
    cmd = [str(exe.resolve()) if exe.exists() else str(exe), "-trace", f"./{DEFAULT_LIST}"]
    for cfg in configs:
        c = Path(cfg)
        if not c.is_file():
            raise UserError(f"{c}: config file not found")
        cmd += ["-config", str(c.resolve())]
    cmd += list(extra)
    return cmd, folder.resolve()


def run_simulator(cmd: list[str], cwd: Path, log: str | Path) -> str:
    """Run the command with output to ``log``; return a one-line summary (raise if it failed)."""
    from simsample_accelsim.collect import parse_log

    out = Path(log).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    from simsample.sdk import run_in_group

    try:
        with open(out, "w") as fh:
            try:
                rc = run_in_group(cmd, cwd=cwd, stdout=fh)
            except OSError as exc:
                raise UserError(f"cannot start {cmd[0]}: {exc}") from exc
    except BaseException:  # Ctrl-C, SIGTERM, no binary: the simulator ended and no partial log left
        from simsample.sdk import remove_partial

        remove_partial(out)  # a regular file only: never /dev/null or a pipe
        raise
    summary = parse_log(out)
    done = sum(r.has_stats for r in summary.runs)
    if rc != 0 or not summary.exit_detected or summary.failure:
        why = summary.failure or (f"exit status {rc}" if rc else "no 'exit detected' in the log")
        raise UserError(f"{out}: the simulation failed after {done} kernel(s): {why}")
    return f"{out}: {done} kernel(s) simulated"
