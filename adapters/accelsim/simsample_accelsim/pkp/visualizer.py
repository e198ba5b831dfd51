"""Read what PKP needs from an Accel-Sim run: the visualizer log and the simulator's stdout.

Visualizer log (``-visualizer_enabled 1``, gzip, written every ``-gpgpu_runtime_stat`` cycles):
each sample holds ``ctas_completed: N`` (CTAs finished since the previous sample), then
``globalcyclecount: N`` and ``globalinsncount: N`` (cycles and thread instructions since the
kernel started; both restart at each kernel). A new kernel therefore shows as a cycle count
that does not grow. CTAs completed after a kernel's last sample are counted in the next
kernel's first sample, so that first interval is set to zero (as the PKA artifact does).

Stdout: per kernel the trace header echo (``-kernel id``, ``-grid dim``, ``-block dim``,
``-shmem``, ``-nregs``), ``launching kernel name: NAME uid: U``, the occupancy line
``CTA/core = N`` (printed only when it changes, so it is recomputed from the header and the
configuration when absent), and the stats block (``kernel_name``, ``kernel_launch_uid``,
``gpu_sim_cycle``, ``gpu_sim_insn`` and, with the PKP patch, ``pkp_stop_cycle``,
``pkp_projected_cycle``, ``pkp_projected_insn``). This is a minimal reader for PKP replay; the
adapter's collector (:mod:`simsample_accelsim.collect`) is the full one.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from simsample.sdk import DECOMPRESSION_ERRORS, FormatError, open_binary

_SAMPLE_KEYS = {b"ctas_completed": 0, b"globalcyclecount": 1, b"globalinsncount": 2}


@dataclass
class KernelSeries:
    """One kernel's samples from a visualizer log (arrays of equal length, int64)."""

    index: int  # 0-based position of the kernel among the log's kernels
    cycles: np.ndarray
    insns: np.ndarray
    ctas_interval: np.ndarray  # CTAs completed in each interval, as logged

    @property
    def completed(self) -> np.ndarray:
        """Cumulative completed CTAs at each sample (first interval zeroed, see module doc)."""
        c = self.ctas_interval.copy()
        if len(c):
            c[0] = 0
        return np.cumsum(c)

    def __len__(self) -> int:
        return len(self.cycles)


def read_visualizer_log(path: str | Path) -> list[KernelSeries]:
    """:func:`_read_visualizer_log`, with a cut-off or damaged archive named as such."""
    try:
        return _read_visualizer_log(path)
    except DECOMPRESSION_ERRORS as exc:
        raise FormatError(
            path,
            f"truncated or corrupt compressed file ({exc or type(exc).__name__}); rerun the simulation or give the "
            "complete log",
        ) from None


def _read_visualizer_log(path: str | Path) -> list[KernelSeries]:
    """Per-kernel series of cycles, instructions and completed CTAs from a visualizer log."""
    path = Path(path)
    rows: list[tuple[int, int, int]] = []
    pending: list[int | None] = [None, None, None]
    with open_binary(path) as fh:
        for lineno, line in enumerate(fh, 1):
            if not (line.startswith(b"g") or line.startswith(b"c")):
                continue
            key, sep, rest = line.partition(b":")
            slot = _SAMPLE_KEYS.get(key)
            if slot is None or not sep:
                continue
            try:
                value = int(rest.strip())
            except ValueError:
                raise FormatError(path, f"expected an integer after '{key.decode()}:'", line=lineno) from None
            if slot == 2:
                if pending[1] is None:
                    raise FormatError(path, "globalinsncount without a preceding globalcyclecount", line=lineno)
                rows.append((pending[1], value, pending[0] or 0))
                pending = [None, None, None]
            else:
                pending[slot] = value
    if not rows:
        raise FormatError(
            path,
            "no visualizer samples (globalcyclecount/globalinsncount) found; run the simulator with "
            "-visualizer_enabled 1 -gpgpu_runtime_stat 500",
        )
    arr = np.asarray(rows, dtype=np.int64)
    starts = [0] + [i for i in range(1, len(arr)) if arr[i, 0] <= arr[i - 1, 0]]
    ends = starts[1:] + [len(arr)]
    return [
        KernelSeries(index=k, cycles=arr[s:e, 0].copy(), insns=arr[s:e, 1].copy(), ctas_interval=arr[s:e, 2].copy())
        for k, (s, e) in enumerate(zip(starts, ends))
    ]


def sample_interval(series: list[KernelSeries]) -> int:
    """The log's sampling period in cycles (the smallest first-sample cycle of any kernel)."""
    firsts = [int(s.cycles[0]) for s in series if len(s)]
    return min(firsts) if firsts else 0


# --- stdout -------------------------------------------------------------------------------------
@dataclass
class KernelRun:
    """One kernel launch as the simulator's stdout describes it."""

    uid: int
    name: str
    kernel_id: int | None = None  # the trace's "-kernel id"
    grid: tuple[int, int, int] = (0, 0, 0)
    block: tuple[int, int, int] = (0, 0, 0)
    shmem: int | None = None
    nregs: int | None = None
    ctas_per_sm_printed: int | None = None
    cycles: int | None = None  # gpu_sim_cycle
    insns: int | None = None  # gpu_sim_insn
    pkp: dict[str, int] = field(default_factory=dict)  # pkp_* lines of the stats block

    @property
    def total_ctas(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    @property
    def threads_per_cta(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]


@dataclass
class RunInfo:
    """Configuration and kernels of one simulator run."""

    options: dict[str, str]
    kernels: list[KernelRun]  # in the order of their stats blocks (completion order)

    def option_int(self, name: str) -> int | None:
        v = self.options.get(name)
        if v is None:
            return None
        m = re.match(r"\s*(-?\d+)", v)
        return int(m.group(1)) if m else None

    @property
    def n_sms(self) -> int | None:
        clusters = self.option_int("gpgpu_n_clusters")
        per = self.option_int("gpgpu_n_cores_per_cluster")
        if clusters is None:
            return None
        return clusters * (per or 1)

    def ctas_per_sm(self, k: KernelRun) -> int | None:
        """Max resident CTAs per SM for ``k``: the printed value, else the simulator's formula.

        The formula is GPGPU-Sim's ``shader_core_config::max_cta`` before it shrinks the result
        for grids smaller than one wave: threads, shared memory, registers (rounded up to 4 per
        thread, warps padded) and the CTA limit per SM.
        """
        if k.ctas_per_sm_printed is not None:
            return k.ctas_per_sm_printed
        pipeline = self.options.get("gpgpu_shader_core_pipeline", "")
        m = re.match(r"\s*(\d+):(\d+)", pipeline)
        shmem_size = self.option_int("gpgpu_shmem_size")
        regs_total = self.option_int("gpgpu_shader_registers")
        cta_limit = self.option_int("gpgpu_shader_cta")
        if not m or None in (shmem_size, regs_total, cta_limit) or k.shmem is None or k.nregs is None:
            return None
        n_threads, warp = int(m.group(1)), int(m.group(2))
        threads = k.threads_per_cta
        if threads <= 0 or warp <= 0:
            return None
        padded = -(-threads // warp) * warp
        result = n_threads // padded
        if k.shmem > 0:
            result = min(result, shmem_size // k.shmem)  # type: ignore[operator]
        if k.nregs > 0:
            result = min(result, regs_total // (padded * ((k.nregs + 3) & ~3)))  # type: ignore[operator]
        result = min(result, cta_limit)  # type: ignore[type-var]
        return max(result, 1)

    def wave_size(self, k: KernelRun) -> int | None:
        per, sms = self.ctas_per_sm(k), self.n_sms
        return per * sms if per is not None and sms is not None else None

    @property
    def sample_period(self) -> int | None:
        """``-gpgpu_runtime_stat`` frequency (the visualizer's sampling period)."""
        return self.option_int("gpgpu_runtime_stat")


_OPTION = re.compile(r"^-([A-Za-z_][\w]*)\s+(.*?)\s*(?:#.*)?$")
_HEADER = re.compile(r"^-(kernel name|kernel id|grid dim|block dim|shmem|nregs) = (.*)$")
_DIM = re.compile(r"\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)")
_LAUNCH = re.compile(r"^launching kernel name: (\S+) uid: (\d+)")
_CTA_CORE = re.compile(r"CTA/core = (\d+)")
_STAT = re.compile(r"^(kernel_name|kernel_launch_uid|gpu_sim_cycle|gpu_sim_insn|pkp_\w+)\s*=\s*(\S+)")


def read_accelsim_stdout(path: str | Path) -> RunInfo:
    """:func:`_read_accelsim_stdout`, with a cut-off or damaged archive named as such."""
    try:
        return _read_accelsim_stdout(path)
    except DECOMPRESSION_ERRORS as exc:
        raise FormatError(
            path,
            f"truncated or corrupt compressed file ({exc or type(exc).__name__}); give the complete simulator output",
        ) from None


def _read_accelsim_stdout(path: str | Path) -> RunInfo:
    """Configuration options and per-kernel facts from an Accel-Sim stdout (plain or compressed)."""
    path = Path(path)
    options: dict[str, str] = {}
    headers: deque[dict[str, str]] = deque()
    header: dict[str, str] = {}
    launched: dict[int, KernelRun] = {}
    last_launched: KernelRun | None = None
    finished: list[KernelRun] = []
    current: KernelRun | None = None
    pending_name: str | None = None
    saw_simulator = False
    with open_binary(path) as fh:
        for lineno, raw in enumerate(fh, 1):
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if not line:
                continue
            c0 = line[0]
            if c0 == "-":
                h = _HEADER.match(line)
                if h:
                    key, val = h.group(1), h.group(2).strip()
                    if key == "kernel name" and header:
                        headers.append(header)
                        header = {}
                    header[key] = val
                    continue
                o = _OPTION.match(line)
                if o and o.group(1) not in options:
                    options[o.group(1)] = o.group(2)
                continue
            if line.startswith("Header info loaded for kernel command"):
                if header:
                    headers.append(header)
                    header = {}
                continue
            if line.startswith("launching kernel name:"):
                m = _LAUNCH.match(line)
                if not m:
                    raise FormatError(path, "unreadable kernel launch line", line=lineno)
                saw_simulator = True
                name, uid = m.group(1), int(m.group(2))
                k = KernelRun(uid=uid, name=name)
                for i, h in enumerate(headers):
                    if h.get("kernel name") == name:
                        _apply_header(k, h, path, lineno)
                        del headers[i]
                        break
                launched[uid] = k
                last_launched = k
                continue
            if "CTA/core = " in line:
                m = _CTA_CORE.search(line)
                if m and last_launched is not None and last_launched.ctas_per_sm_printed is None:
                    last_launched.ctas_per_sm_printed = int(m.group(1))
                continue
            s = _STAT.match(line)
            if s is None:
                continue
            key, val = s.group(1), s.group(2)
            if key == "kernel_name":
                pending_name, current = val, None
                continue
            try:
                num = int(val)
            except ValueError:
                continue
            if key == "kernel_launch_uid":
                saw_simulator = True
                current = launched.pop(num, None) or KernelRun(uid=num, name=pending_name or "")
                finished.append(current)
            elif current is not None:
                if key == "gpu_sim_cycle" and current.cycles is None:
                    current.cycles = num
                elif key == "gpu_sim_insn" and current.insns is None:
                    current.insns = num
                elif key.startswith("pkp_"):
                    current.pkp[key] = num
    if not saw_simulator:
        raise FormatError(path, "not an Accel-Sim stdout: no 'launching kernel' or 'kernel_launch_uid' lines")
    return RunInfo(options=options, kernels=finished)


def _apply_header(k: KernelRun, h: dict[str, str], path: Path, lineno: int) -> None:
    try:
        if "kernel id" in h:
            k.kernel_id = int(h["kernel id"])
        for key, attr in (("grid dim", "grid"), ("block dim", "block")):
            if key in h:
                m = _DIM.search(h[key])
                if not m:
                    raise ValueError(h[key])
                setattr(k, attr, (int(m.group(1)), int(m.group(2)), int(m.group(3))))
        if "shmem" in h:
            k.shmem = int(h["shmem"])
        if "nregs" in h:
            k.nregs = int(h["nregs"])
    except ValueError as exc:
        raise FormatError(path, f"unreadable trace header value {exc}", line=lineno) from None
