"""MacSim's standard output as per-kernel results.

MacSim prints, on standard output::

    src/process_manager.cc:426: (I=13  C=3518):  setup_process:0 /path/Kernel1/trace.txt current_index:1 (3)
    **Core 00 Thread 04 Finished:   insts:13          cycles:1857 ...
    src/macsim.cc:624: (I=13  C=9507):  finalize simulation

``C`` is the global cycle when a kernel is set up; kernels run one after another, so kernel k's
cycles are C at the next kernel's setup (or at ``finalize simulation``) minus C at its own setup.
``I`` counts only core 0's instructions, so a kernel's instructions are the sum of the ``Thread
.. Finished`` lines printed while it ran (one per warp). ``general.stat.out`` beside the log has
run totals only (``CYC_COUNT_TOT``, ``INST_COUNT_TOT``), used as a cross-check.

A log without ``finalize simulation`` is an incomplete run: its last kernel has no end (status
``incomplete``), or ``crashed`` when an ``ASSERT FAILED`` line was printed while it ran.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from simsample.sdk import FormatError, UserError, check_input_file, open_text

LOG_NAME = "macsim.out"
STATS_NAME = "general.stat.out"

_SETUP = re.compile(r"\(I=\d+\s+C=(\d+)\):\s+setup_process:(\d+) (\S+) current_index:(\d+) \((\d+)\)")
_FINAL = re.compile(r"\(I=\d+\s+C=(\d+)\):\s+finalize simulation")
_THREAD = re.compile(r"^\*\*Core\s+\d+\s+Thread\s+\d+\s+Finished:\s+insts:(\d+)")
_KERNEL_DIR = re.compile(r"^Kernel(\d+)$")
_STAT = re.compile(r"^([A-Z][A-Z0-9_]*)\s+(\S+)")


@dataclass
class KernelRun:
    """One kernel's stretch of the log."""

    number: int  # N of KernelN
    path: str  # the trace path MacSim printed
    line: int  # line of its setup_process
    start_cycle: int
    end_cycle: int | None = None
    instructions: int = 0
    warps: int = 0
    status: str = "incomplete"
    reason: str = ""  # why an unusable kernel is unusable

    @property
    def cycles(self) -> int | None:
        return None if self.end_cycle is None else self.end_cycle - self.start_cycle


@dataclass
class MacSimRun:
    """A parsed MacSim log (and its ``general.stat.out`` when present)."""

    log: Path
    kernels: list[KernelRun] = field(default_factory=list)
    expected: int | None = None  # kernels in the application, from "(n)" of setup lines
    final_cycle: int | None = None
    problems: list[str] = field(default_factory=list)
    totals: dict[str, float] = field(default_factory=dict)

    @property
    def finished(self) -> bool:
        return self.final_cycle is not None


def find_log(path: Path) -> Path:
    """The log itself, or ``macsim.out`` in a run folder."""
    path = Path(path)
    if path.is_dir():
        if (path / LOG_NAME).is_file():
            return path / LOG_NAME
        raise UserError(f"{path}: no {LOG_NAME} in this folder; pass the file MacSim's standard output went to")
    return check_input_file(path)


def parse_log(path: Path) -> MacSimRun:
    """Split the log into kernels (see the module docstring)."""
    log = find_log(path)
    run = MacSimRun(log)
    current: KernelRun | None = None
    pid: str | None = None
    seen: dict[int, int] = {}
    with open_text(log) as fh:
        for lineno, line in enumerate(fh, start=1):
            if "Finished:" in line:
                m = _THREAD.match(line)
                if m and current is not None:
                    current.instructions += int(m.group(1))
                    current.warps += 1
                continue
            if "setup_process:" in line:
                m = _SETUP.search(line)
                if not m:
                    raise FormatError(log, "unrecognised setup_process line", line=lineno)
                cycle, this_pid, tpath, _index, total = (
                    int(m.group(1)),
                    m.group(2),
                    m.group(3),
                    m.group(4),
                    int(m.group(5)),
                )
                if pid is not None and this_pid != pid:
                    raise FormatError(
                        log,
                        "log of several applications run side by side; simsample reads one application per run",
                        line=lineno,
                    )
                pid = this_pid
                parts = tpath.rstrip("/").split("/")
                km = _KERNEL_DIR.match(parts[-2]) if len(parts) >= 2 else None
                if km is None:
                    raise FormatError(log, f"kernel trace {tpath} is not in a KernelN folder", line=lineno)
                number = int(km.group(1))
                if number in seen:
                    raise FormatError(
                        log,
                        f"Kernel{number} ran twice in this run (first at line {seen[number]}; repeat_trace?)",
                        line=lineno,
                    )
                seen[number] = lineno
                if current is not None:
                    current.end_cycle, current.status = cycle, "ok"
                current = KernelRun(number, tpath, lineno, cycle)
                run.kernels.append(current)
                run.expected = total
                continue
            if "finalize simulation" in line:
                m = _FINAL.search(line)
                if m:
                    run.final_cycle = int(m.group(1))
                    if current is not None:
                        current.end_cycle, current.status = run.final_cycle, "ok"
                        current = None
                continue
            if "ASSERT FAILED" in line:
                if current is not None and current.status != "crashed":
                    current.status, current.reason = "crashed", f"ASSERT FAILED on line {lineno} of {log}"
                else:
                    run.problems.append(f"line {lineno}: {line.strip()[:200]}")
    if not run.kernels:
        raise FormatError(
            log, "no 'setup_process' line: not MacSim's standard output, or MacSim stopped before the first kernel"
        )
    last = run.kernels[-1]
    if not run.finished and last.status == "incomplete":
        last.reason = f"no 'finalize simulation' line in {log}: the run did not finish"
    if run.finished and run.expected is not None and len(run.kernels) < run.expected:
        run.problems.append(f"only {len(run.kernels)} of {run.expected} kernels were set up (max_insts1 reached?)")
    stats = log.parent / STATS_NAME
    if stats.is_file():
        run.totals = parse_stats(stats)
        _cross_check(run)
    return run


def parse_stats(path: Path) -> dict[str, float]:
    """``NAME value value`` lines of a ``*.stat.out`` file (first value)."""
    out: dict[str, float] = {}
    with open_text(path) as fh:
        for line in fh:
            m = _STAT.match(line)
            if m:
                try:
                    out[m.group(1)] = float(m.group(2))
                except ValueError:
                    continue
    return out


def _cross_check(run: MacSimRun) -> None:
    if not run.finished:
        return
    cyc = run.totals.get("CYC_COUNT_TOT")
    if cyc is not None and int(cyc) != run.final_cycle:
        run.problems.append(
            f"{STATS_NAME} says CYC_COUNT_TOT {int(cyc)}, the log ends at cycle {run.final_cycle}: is it from "
            "another run?"
        )
    insts = run.totals.get("INST_COUNT_TOT")
    total = sum(k.instructions for k in run.kernels)
    if insts is not None and int(insts) != total:
        run.problems.append(
            f"{STATS_NAME} says INST_COUNT_TOT {int(insts)}, the log's warps retired {total}: is it from another run?"
        )
