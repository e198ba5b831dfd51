"""Write valid Accel-Sim traces for given kernels: for tests, benchmarks and examples.

A :class:`KernelSpec` describes a launch (grid, block, shared memory, registers) and a simple
program each warp runs: a prologue, a loop whose body is the given opcodes (plus the loop
counter and the backward branch), and ``EXIT``. Memory opcodes get per-lane addresses from a
pattern (coalesced, strided, random, broadcast) written in the address mode the NVBit tracer
would choose (1 = base+stride for a constant stride over contiguous lanes, else 2 = base+deltas)
or a forced one (0 = one address per lane). ``divergence`` is the probability that an iteration
runs with a random partial mask; a block size that is not a multiple of 32 gives partial last
warps. Loop trip counts may vary per warp (``iters=(lo, hi)``), so warps differ in their
basic-block vectors.

:func:`write_workload` writes a folder (``kernelslist.g`` with memcpys and one trace per
launch, optionally xz-compressed) and returns a manifest of what it wrote (per launch: warps,
warp and thread instructions, memory instructions per space), which tests compare with what the
scanners find. Everything is deterministic in ``seed``.
"""

from __future__ import annotations

import argparse
import lzma
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from simsample_accelsim import opcodes as oc

_SHMEM_BASE = 0x00007F5B00000000
_LOCAL_BASE = 0x00007F5B01000000
_FORMAT_LINE = (
    "#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] "
    "[mem_addresses] immediate"
)
PATTERNS = ("coalesced", "strided", "random", "broadcast")


@dataclass(frozen=True)
class KernelSpec:
    """One launch and the program its warps run (see the module docstring)."""

    name: str = "_Z6kernelPf"
    grid: tuple[int, int, int] = (1, 1, 1)
    block: tuple[int, int, int] = (32, 1, 1)
    shmem: int = 0
    nregs: int = 32
    body: tuple[str, ...] = ("LDG.E", "FFMA", "FFMA", "STG.E")
    iters: int | tuple[int, int] = 2
    pattern: str = "coalesced"
    stride: int = 4
    address_mode: int | None = None
    divergence: float = 0.0
    base_address: int = 0x00007F5A40000000
    binary_version: int = 70
    stream: int = 0
    lineinfo: bool = False
    #: Bytes between the global addresses of consecutive warps (None: ``128 x stride``, where a
    #: warp's fifth iteration meets the next warp's first). ``iters x 32 x stride`` gives every
    #: warp and iteration lines of their own: a buffer read once, as weights or a KV cache are.
    warp_span: int | None = None

    def __post_init__(self) -> None:
        if self.pattern not in PATTERNS:
            raise ValueError(f"pattern must be one of {PATTERNS}")
        if self.address_mode not in (None, 0, 1, 2):
            raise ValueError("address_mode must be None, 0, 1 or 2")
        if min(self.grid) < 1 or min(self.block) < 1:
            raise ValueError("grid and block dimensions must be positive")

    @property
    def grid_size(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def warps_per_cta(self) -> int:
        return (self.threads + 31) // 32


#: The loop of :func:`tiled_gemm`: two 16-byte loads staged through shared memory, six FMAs.
GEMM_BODY: tuple[str, ...] = ("LDG.E.128", "LDG.E.128", "STS.128", "BAR.SYNC", "LDS.U.128", *("FFMA",) * 6)


def tiled_gemm(base: int, ctas: int, iters: int, *, body: tuple[str, ...] = GEMM_BODY) -> KernelSpec:
    """A library-style tiled GEMM (``gemm_tiled``, four warps a CTA, 32 KiB of shared memory)
    reading ``ctas x 4 warps x iters x 512`` bytes from ``base`` once each: every warp and
    iteration has lines of its own, as weights streamed through the L2 do. The benchmark
    workloads (decoder, training, moe) run one such kernel at many shapes."""
    return KernelSpec(
        "_Z10gemm_tiledPKfS0_Pfiii",
        grid=(ctas, 1, 1),
        block=(128, 1, 1),
        shmem=32 * 1024,
        nregs=96,
        body=body,
        iters=iters,
        stride=16,
        warp_span=iters * 32 * 16,
        base_address=base,
    )


def elementwise(
    name: str, base: int, ctas: int, body: tuple[str, ...], iters: int = 2, *, pattern: str = "coalesced"
) -> KernelSpec:
    """A memory-bound kernel over a buffer at ``base`` (four warps a CTA, 24 registers; its warps
    read neighbouring lines): the norms, activations and adds between the GEMMs of the benchmark
    workloads (decoder, moe, convnet, serving)."""
    return KernelSpec(
        name, grid=(ctas, 1, 1), block=(128, 1, 1), nregs=24, body=body, iters=iters, pattern=pattern, base_address=base
    )


@dataclass
class TraceManifest:
    """What a written trace contains (the scanners must find the same)."""

    path: Path
    kernel_id: int
    name: str
    ctas: int = 0
    warps: int = 0
    warp_insts: int = 0
    thread_insts: int = 0
    mem: dict[str, int] = field(default_factory=dict)
    bytes: int = 0


def header_text(spec: KernelSpec, kernel_id: int) -> str:
    """The header lines (through the format comment and a blank line) of a trace."""
    g, b = spec.grid, spec.block
    return (
        f"-kernel name = {spec.name}\n-kernel id = {kernel_id}\n-grid dim = ({g[0]},{g[1]},{g[2]})\n"
        f"-block dim = ({b[0]},{b[1]},{b[2]})\n-shmem = {spec.shmem}\n-nregs = {spec.nregs}\n"
        f"-binary version = {spec.binary_version}\n-cuda stream id = {spec.stream}\n"
        f"-shmem base_addr = 0x{_SHMEM_BASE:016x}\n-local mem base_addr = 0x{_LOCAL_BASE:016x}\n"
        f"-nvbit version = 1.5.5\n-accelsim tracer version = 4\n-enable lineinfo = {int(spec.lineinfo)}\n\n"
        f"{_FORMAT_LINE}\n\n"
    )


def _addresses_text(addrs: list[int], lanes: list[int], mode: int | None) -> str:
    """Address fields as the tracer writes them (mode then addresses)."""
    contiguous = lanes == list(range(lanes[0], lanes[0] + len(lanes)))
    if mode is None or mode == 1:
        if len(addrs) > 1 and contiguous:
            stride = addrs[1] - addrs[0]
            if all(addrs[i + 1] - addrs[i] == stride for i in range(len(addrs) - 1)) and -(2**31) <= stride < 2**31:
                return f"1 0x{addrs[0]:x} {stride}"
        mode = 2 if mode is None or mode == 1 else mode
    if mode == 2:
        deltas = " ".join(str(addrs[i + 1] - addrs[i]) for i in range(len(addrs) - 1))
        return f"2 0x{addrs[0]:x}" + (f" {deltas}" if deltas else "")
    return "0 " + " ".join(f"0x{a:016x}" for a in addrs)


def _lane_addresses(
    spec: KernelSpec, cls: int, width: int, warp_global: int, it: int, lanes: list[int], rng: np.random.Generator
) -> list[int]:
    if cls in (oc.SHARED_LD, oc.SHARED_ST, oc.SHARED_ATOM):
        base = (warp_global % 8) * 32 * width
    elif cls in (oc.LOCAL_LD, oc.LOCAL_ST):
        base = _LOCAL_BASE + it * 32 * width
    else:
        span = 32 * spec.stride * 4 if spec.warp_span is None else spec.warp_span
        base = spec.base_address + warp_global * span + it * 32 * spec.stride
    if spec.pattern == "coalesced":
        return [base + lane * width for lane in lanes]
    if spec.pattern == "strided":
        base += 32 * max(0, -spec.stride)  # a negative stride walks down from above the base
        return [base + lane * spec.stride for lane in lanes]
    if spec.pattern == "broadcast":
        return [base for _ in lanes]
    span = 1 << 20
    return [spec.base_address + int(x) * width for x in rng.integers(0, span // width, size=len(lanes))]


def _warp_lines(
    spec: KernelSpec, warp_global: int, active: int, rng: np.random.Generator, man: TraceManifest
) -> list[str]:
    """Instruction lines of one warp; updates the manifest's counts."""
    step = 16 if spec.binary_version >= 70 else 8
    pc = 0
    lines: list[str] = []
    line_no = 0

    def pc_next(p: int) -> int:
        return oc.expected_next_pc(p, spec.binary_version)

    def emit(opcode: str, mask: int, it: int, dst: bool = True) -> None:
        nonlocal pc, line_no
        info = oc.classify(opcode)
        lanes = [i for i in range(32) if mask >> i & 1]
        parts = []
        if spec.lineinfo:
            line_no += 1
            parts.append(str(line_no))
        parts.append(f"{pc:04x} {mask:08x}")
        cls = info.mem_class
        is_store = cls in (oc.GLOBAL_ST, oc.LOCAL_ST, oc.SHARED_ST, oc.GLOBAL_RED, oc.GENERIC_ST)
        parts.append("0" if (is_store or not dst) else f"1 R{2 + (pc // step) % 60}")
        parts.append(opcode)
        parts.append("2 R2 R3")
        if cls != oc.NONE and lanes:
            width = info.width
            addrs = _lane_addresses(spec, cls, width, warp_global, it, lanes, rng)
            parts.append(f"{width} {_addresses_text(addrs, lanes, spec.address_mode)}")
        else:
            addrs = []
            parts.append("0")
        if cls in (oc.GENERIC_LD, oc.GENERIC_ST):
            cls = oc.generic_space(addrs[0] if addrs else 0, _SHMEM_BASE, _LOCAL_BASE, cls == oc.GENERIC_LD)
        key = _NAME_OF_CLASS.get(cls)
        if key:
            man.mem[key] = man.mem.get(key, 0) + 1
        lines.append(" ".join(parts) + " ")
        man.warp_insts += 1
        man.thread_insts += len(lanes)
        pc = pc_next(pc)

    full = active
    # prologue
    for op in ("S2R", "S2R", "IMAD"):
        emit(op, full, 0)
    lo, hi = (spec.iters, spec.iters) if isinstance(spec.iters, int) else spec.iters
    n_iter = int(rng.integers(lo, hi + 1)) if hi > lo else lo
    loop_pc = pc
    for it in range(n_iter):
        pc = loop_pc
        mask = full
        if spec.divergence > 0 and rng.random() < spec.divergence:
            mask = full & int(rng.integers(1, 2**32))
            if mask == 0:
                mask = full & -full
        for op in spec.body:
            emit(op, mask, it)
        emit("IADD3", full, it)
        emit("ISETP.GE.AND", full, it, dst=False)
        emit("BRA", full, it, dst=False)
    emit("EXIT", full, 0, dst=False)
    return lines


_CLASS_NAMES = {
    "global_ld": oc.GLOBAL_LD,
    "global_st": oc.GLOBAL_ST,
    "local_ld": oc.LOCAL_LD,
    "local_st": oc.LOCAL_ST,
    "shared_ld": oc.SHARED_LD,
    "shared_st": oc.SHARED_ST,
    "global_atom": oc.GLOBAL_ATOM,
    "global_red": oc.GLOBAL_RED,
    "shared_atom": oc.SHARED_ATOM,
}
_NAME_OF_CLASS = {v: k for k, v in _CLASS_NAMES.items()}


def write_kernel(path: str | Path, spec: KernelSpec, kernel_id: int, seed: int = 0, xz: bool = False) -> TraceManifest:
    """Write one trace file (``.xz``-compressed when ``xz``); return what it contains."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng([seed, kernel_id])
    man = TraceManifest(path=p, kernel_id=kernel_id, name=spec.name)
    opener: Any = (lambda q: lzma.open(q, "wt", preset=1)) if xz else (lambda q: open(q, "w"))
    with opener(p) as fh:
        fh.write(header_text(spec, kernel_id))
        written = 0
        gx, gy, _ = spec.grid
        for cta in range(spec.grid_size):
            x, y, z = cta % gx, (cta // gx) % gy, cta // (gx * gy)
            out = [f"#BEGIN_TB\n\nthread block = {x},{y},{z}\n\n"]
            for w in range(spec.warps_per_cta):
                threads = min(32, spec.threads - 32 * w)
                active = (1 << threads) - 1
                lines = _warp_lines(spec, cta * spec.warps_per_cta + w, active, rng, man)
                out.append(f"warp = {w}\ninsts = {len(lines)}\n")
                out.append("\n".join(lines) + "\n\n")
                man.warps += 1
            out.append("#END_TB\n\n")
            text = "".join(out)
            fh.write(text)
            written += len(text)
            man.ctas += 1
    man.bytes = len(header_text(spec, kernel_id)) + written
    return man


def clone_trace(src: str | Path, dst: str | Path, kernel_id: int, xz: bool = False) -> None:
    """Copy a plain trace under a new ``-kernel id`` (fast way to make large workloads)."""
    src, dst = Path(src), Path(dst)
    with open(src, "rb") as fin:
        head = fin.read(4096)
        cut = head.find(b"\n#")
        if cut < 0:
            raise ValueError(f"{src}: no header end found")
        lines = head[:cut].split(b"\n")
        lines = [f"-kernel id = {kernel_id}".encode() if ln.startswith(b"-kernel id") else ln for ln in lines]
        fin.seek(cut)
        opener: Any = (lambda q: lzma.open(q, "wb", preset=1)) if xz else (lambda q: open(q, "wb"))
        with opener(dst) as fout:
            fout.write(b"\n".join(lines))
            shutil.copyfileobj(fin, fout, 1 << 22)


def write_workload(
    out_dir: str | Path,
    kernels: Sequence[KernelSpec],
    seed: int = 0,
    *,
    xz: bool = False,
    memcpys: Sequence[tuple[int, int, int]] = (),
    list_name: str = "kernelslist.g",
    list_xz_names: bool | None = None,
) -> list[TraceManifest]:
    """Write a trace folder: one launch per spec (kernel ids 1..N), and a command list.

    ``memcpys`` are ``(before_launch_index, address, bytes)``: a ``MemcpyHtoD`` line placed before
    launch ``before_launch_index`` (0-based; ``len(kernels)`` puts it at the end). By default list
    lines name the files as written (``.traceg.xz`` when ``xz``); ``list_xz_names=False`` names
    them ``.traceg`` (as the tracer does before compression).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    manifests = []
    for i, spec in enumerate(kernels):
        name = f"kernel-{i + 1}.traceg" + (".xz" if xz else "")
        manifests.append(write_kernel(out / name, spec, i + 1, seed, xz=xz))
    name_xz = xz if list_xz_names is None else list_xz_names
    lines: list[str] = []
    by_pos: dict[int, list[tuple[int, int]]] = {}
    for pos, addr, nbytes in memcpys:
        by_pos.setdefault(int(pos), []).append((addr, nbytes))
    for i in range(len(kernels) + 1):
        for addr, nbytes in by_pos.get(i, []):
            lines.append(f"MemcpyHtoD,0x{addr:016x},{nbytes}")
        if i < len(kernels):
            lines.append(f"kernel-{i + 1}.traceg" + (".xz" if name_xz else ""))
    (out / list_name).write_text("\n".join(lines) + "\n")
    return manifests


def example_kernels() -> list[KernelSpec]:
    """A small heterogeneous workload (three kernels, ten launches) for examples and tests."""
    gemm = KernelSpec(
        "_Z4gemmPKfS0_Pf",
        grid=(8, 4, 1),
        block=(128, 1, 1),
        shmem=16384,
        nregs=96,
        body=("LDG.E.128", "STS.128", "BAR.SYNC", "LDS.U.128", "FFMA", "FFMA", "FFMA", "FFMA"),
        iters=4,
    )
    relu = KernelSpec(
        "_Z4reluPfi", grid=(16, 1, 1), block=(96, 1, 1), nregs=16, body=("LDG.E", "FMNMX", "STG.E"), iters=1
    )
    red = KernelSpec(
        "_Z6reducePKfPf",
        grid=(4, 1, 1),
        block=(128, 1, 1),
        shmem=512,
        nregs=32,
        body=("LDG.E", "FADD", "STS", "BAR.SYNC", "LDS", "RED.E.ADD.F32.FTZ.RN.STRONG.GPU"),
        iters=(1, 4),
        pattern="random",
        divergence=0.3,
    )
    seq = [gemm, relu, red, relu, gemm, relu, red, gemm, relu, red]
    return seq


def generate(
    ap: argparse.ArgumentParser,
    argv: Sequence[str] | None,
    least: Mapping[str, int],
    make: Callable[[argparse.Namespace], tuple[Sequence[KernelSpec], Sequence[tuple[int, int, int]]]],
) -> int:
    """The command line of a trace generator (``benchmarks/*_workload.py``): parse ``argv`` with
    ``ap`` (whose first argument is the output folder ``out``), refuse a count below its least
    (``least``: option dest → smallest value) and an output that is a file with argparse's
    one-line error before anything is written, then write the folder :func:`write_workload`
    makes of ``make(args)`` (kernels, memcpys) and say what it holds."""
    args = ap.parse_args(argv)
    for dest, low in least.items():
        if getattr(args, dest) < low:
            ap.error(f"--{dest.replace('_', '-')} must be at least {low}")
    if args.out.exists() and not args.out.is_dir():
        ap.error(f"{args.out} is a file; give a folder for the traces")
    kernels, memcpys = make(args)
    write_workload(args.out, kernels, seed=0, memcpys=memcpys)
    print(f"{args.out}: {len(kernels)} launches, {len(memcpys)} memcpys")
    return 0
