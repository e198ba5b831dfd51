"""HyFiSS's merged reports (``outputs/kernel-K-summary.txt``) as per-kernel results.

``merge_report.py`` writes ``* Name: value`` lines; the ones kept here are ``GPU_active_cycles``
(``cycles``), ``SM_active_cycles``, ``Kernel_execution_time (ns)`` and
``Warp_instructions_executed`` (``instructions``, already scaled by HyFiSS from the simulated SM to
the whole GPU). K in the file name is HyFiSS's 0-based kernel id, so the file is app kernel K+1.

A report of a crashed run is recognised and never used: a missing or non-numeric required value,
zero active cycles (no rank simulated the kernel's SM), or no ``Report Time`` line (the merge
stopped part-way).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from simsample.sdk import UserError, check_input_file, missing_message, read_text_limited

SUMMARY = re.compile(r"^kernel-(\d+)-summary\.txt$")
_ITEM = re.compile(r"^\s*\*\s*(.+?):\s*(\S*)\s*$")
FIELDS = {
    "GPU_active_cycles": "cycles",
    "SM_active_cycles": "sm_active_cycles",
    "Kernel_execution_time (ns)": "execution_time_ns",
    "Warp_instructions_executed": "instructions",
}


@dataclass
class Summary:
    path: Path
    index: int  # HyFiSS's 0-based kernel id
    values: dict[str, float] = field(default_factory=dict)  # by our column name
    status: str = "ok"
    reason: str = ""

    @property
    def kernel(self) -> int:
        """The app's 1-based kernel id."""
        return self.index + 1


def parse_summary(path: Path) -> Summary:
    path = check_input_file(path)
    m = SUMMARY.match(path.name)
    if not m:
        raise UserError(
            f"{path}: expected a HyFiSS report named kernel-K-summary.txt (K is the --kernel_id it was run with)"
        )
    s = Summary(path, int(m.group(1)))
    text = read_text_limited(path, errors="replace")
    raw: dict[str, str] = {}
    for line in text.splitlines():
        im = _ITEM.match(line)
        if im:
            raw.setdefault(im.group(1).strip(), im.group(2))
    problems = []
    for key, col in FIELDS.items():
        v = raw.get(key)
        if v is None:
            problems.append(f"no {key}")
            continue
        try:
            f = float(v)
        except ValueError:
            problems.append(f"{key} is {v!r}")
            continue
        if f != f or f in (float("inf"), float("-inf")):
            problems.append(f"{key} is {v}")
            continue
        s.values[col] = f
    if not problems and s.values.get("cycles", 0) <= 0:
        problems.append("GPU_active_cycles is 0 (no rank simulated the kernel's SM)")
    if "- Report Time:" not in text:
        problems.append("no 'Report Time' line (the merge stopped part-way)")
    if problems:
        s.status, s.reason = "crashed", "; ".join(problems)
        s.values = {}
    return s


def find_summaries(path: Path) -> list[Path]:
    """A report itself, or the reports in a folder: the folder, its ``outputs/`` or ``app/outputs/``."""
    path = Path(path)
    if not path.exists():
        raise UserError(missing_message(path))  # a broken link or a loop is named as such
    if path.is_file():
        return [path]
    for d in (path, path / "outputs", path / "app" / "outputs"):
        if d.is_dir():
            found = sorted(
                (p for p in d.iterdir() if SUMMARY.match(p.name)), key=lambda p: int(SUMMARY.match(p.name).group(1))
            )
            if found:
                return found
    logs = [
        log
        for d in (path, path / "outputs", path / "app" / "outputs")
        if d.is_dir()
        for log in sorted(d.glob("kernel-*.log"))
    ]
    if logs:
        raise UserError(
            f"{path}: no kernel-K-summary.txt here: the simulation of {_kernel_of_log(logs[0])} failed; read {logs[0]}"
        )
    raise UserError(
        f"{path}: no kernel-K-summary.txt here (nor in outputs/ or app/outputs/); run merge_report.py after the "
        "simulator"
    )


#: the simulator's output of one kernel, as the run script writes it (``kernel-<K-1>.log``)
KERNEL_LOG = re.compile(r"^kernel-(\d+)\.log$")


def _kernel_of_log(log: Path) -> str:
    m = KERNEL_LOG.match(log.name)
    return f"kernel {int(m.group(1)) + 1}" if m else log.name


def kernel_logs(path: Path) -> dict[int, Path]:
    """The run script's per-kernel logs near ``path`` (a report or a folder), by 0-based index."""
    path = Path(path)
    base = path.parent if path.is_file() else path
    out: dict[int, Path] = {}
    for d in (base, base / "outputs", base / "app" / "outputs"):
        if d.is_dir():
            for log in d.glob("kernel-*.log"):
                m = KERNEL_LOG.match(log.name)
                if m:
                    out.setdefault(int(m.group(1)), log)
    return out
