"""The compiled Accel-Sim trace scanner (simsample_accelsim._trace_scan) against the Python reference.

The reference (scan_python) defines the semantics; the compiled scanner must give the same
features array for array on random traces: the generator's kernels (loops, partial warps,
divergence, the three address modes, xz) and random bodies written here that the generator never
produces (masks with gaps under base+stride addresses, generic accesses into each space, PC
jumps, odd opcodes and widths). Malformed bodies must fail as FormatError with the file's line.
"""

from __future__ import annotations

import lzma
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simsample.cli import run as cli_run
from simsample.errors import FormatError, UserError
from simsample.workload import Workload
from simsample_accelsim import opcodes as oc
from simsample_accelsim import scan_native, scan_numpy, scan_python
from simsample_accelsim.features import (
    compute_features,
    default_engine,
    feature_columns,
    resolve_engine,
)
from simsample_accelsim.kernelfeatures import COUNTERS
from simsample_accelsim.synth import (
    KernelSpec,
    example_kernels,
    header_text,
    write_kernel,
    write_workload,
)
from tests.accelsim_strategies import kernel_specs

native = pytest.mark.skipif(
    not scan_native.available(), reason=f"compiled scanner unavailable: {scan_native.unavailable_reason()}"
)
ARRAYS = ("bbv_keys", "bbv_values", "types_indptr", "types_indices", "types_data", "type_counts")
_SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


def identical(a, b) -> bool:
    """Same counts and the same arrays in the same order (the native layout is the reference's)."""
    return a.counts == b.counts and all(
        getattr(a, k).dtype == getattr(b, k).dtype and np.array_equal(getattr(a, k), getattr(b, k)) for k in ARRAYS
    )


def test_extension_present_when_required():
    """CI sets SIMSAMPLE_REQUIRE_NATIVE=1: the compiled scanner must be built and picked there."""
    if os.environ.get("SIMSAMPLE_REQUIRE_NATIVE", "") in ("", "0"):
        pytest.skip("SIMSAMPLE_REQUIRE_NATIVE is not set")
    from simsample_accelsim import _trace_scan  # noqa: F401  (ImportError here: the extension was not built)

    if not os.environ.get("SIMSAMPLE_PURE_PYTHON"):
        assert scan_native.available(), scan_native.unavailable_reason()
        assert default_engine() == "native"


@native
def test_counter_names_match_the_features_layout():
    assert tuple(scan_native.native_module().COUNTERS) == COUNTERS


# --- generated kernels ---------------------------------------------------------------------------
_BODY = st.lists(
    st.sampled_from(
        [
            "FFMA",
            "IMAD",
            "LDG.E",
            "LDG.E.128",
            "LDG.E.64",
            "LDG.E.U8",
            "STG.E",
            "STG.E.128",
            "LDS",
            "STS.128",
            "LDL",
            "STL.64",
            "ATOMG.E.ADD.STRONG.GPU",
            "RED.E.ADD.F32.FTZ.RN.STRONG.GPU",
            "LD.E",
            "ST.E.64",
            "BAR.SYNC",
            "ATOMS.ADD",
            "BRA",
            "EXIT",
            "LDGSTS.E.128",
        ]
    ),
    min_size=1,
    max_size=6,
).map(tuple)


@native
@_SETTINGS
@given(
    spec=kernel_specs(_BODY, binary_versions=[70, 61, 35, 0]),
    xz=st.booleans(),
    chunk=st.integers(1, 300),
    seed=st.integers(0, 5),
)
def test_native_equals_reference_on_generated_kernels(tmp_path, spec, xz, chunk, seed):
    path = tmp_path / (f"k-{seed}.traceg" + (".xz" if xz else ""))
    man = write_kernel(path, spec, 1, seed, xz=xz)
    _, ref = scan_python.scan_file(path)
    h, got = scan_native.scan_file(path)
    assert h.name == "_Z1kPf" and h.grid == spec.grid
    assert identical(got, ref)
    assert identical(scan_native.scan_file(path, chunk_size=chunk)[1], ref)  # lines cut anywhere
    assert (got.counts["ctas"], got.counts["warps"], got.counts["warp_insts"], got.counts["thread_insts"]) == (
        man.ctas,
        man.warps,
        man.warp_insts,
        man.thread_insts,
    )


# --- random bodies -------------------------------------------------------------------------------
_SH, _LO = 0x00007F5B00000000, 0x00007F5B01000000  # the generator's shared and local windows
_OPS = [
    "FFMA",
    "IADD3",
    "LDG.E",
    "LDG.E.64",
    "LDG.E.128",
    "LDG.E.U8",
    "LDG.E.U16.CONSTANT",
    "STG.E",
    "STG.E.128",
    "LDL.64",
    "STL",
    "LD.E",
    "LD.E.128",
    "ST.E",
    "ST.E.U8",
    "LDS.U.128",
    "STS",
    "LDSM.16.M88.4",
    "ATOM.E.ADD",
    "ATOMG.E.EXCH",
    "RED.E.ADD",
    "ATOMS.CAS",
    "BRA",
    "BRA.U",
    "EXIT",
    "RET.REL",
    "CALL.ABS",
    "BSYNC",
    "WARPSYNC",
    "SYNC",
    "BRK",
    "LDG.E.0",
]


def _mask(rng: np.random.Generator, threads: int) -> int:
    full = (1 << threads) - 1
    kind = rng.integers(6)
    if kind == 0:
        return full
    if kind == 1:
        return 0
    if kind == 2:  # one run of lanes
        lo = int(rng.integers(threads))
        return full & (((1 << int(rng.integers(1, threads - lo + 1))) - 1) << lo)
    if kind == 3:  # runs with gaps
        return full & 0x0F0F00FF
    return full & int(rng.integers(1, 2**32))


def _address(rng: np.random.Generator) -> int:
    space = rng.integers(5)
    if space == 0:
        return _SH + int(rng.integers(0, 1 << 12))
    if space == 1:
        return _LO + int(rng.integers(0, 1 << 15))  # some above the local window: global
    if space == 2:
        return int(rng.integers(0, 1 << 10))  # below the shared base
    if space == 3:
        return 0xFFFFFFFFFFFFFFF0 + int(rng.integers(0, 16))  # accesses that wrap
    return 0x7F5A40000000 + int(rng.integers(0, 1 << 16))


def _instruction(rng: np.random.Generator, pc: int, mask: int, skip: list[str], spellings: bool = True) -> str:
    op = _OPS[int(rng.integers(len(_OPS)))]
    info = oc.classify(op)
    lanes = bin(mask).count("1")
    ndst = int(rng.integers(0, 3))
    nsrc = int(rng.integers(0, 4))
    parts = [
        *skip,
        f"{pc:x}" if rng.random() < 0.5 else f"{pc:04x}",
        f"{mask:08x}" if rng.random() < 0.8 or not spellings else f"0x{mask:x}",
        str(ndst),
        *[f"R{i}" for i in range(ndst)],
        op,
        str(nsrc),
        *[f"R{i}" for i in range(nsrc)],
    ]
    if info.mem_class == oc.NONE or rng.random() < 0.1:
        parts.append("0")
    elif lanes == 0:
        parts += [str(info.width), "0"]
    else:
        mode = int(rng.integers(3))
        parts += [str(info.width), str(mode)]
        if mode == 0:
            parts += [f"0x{_address(rng):016x}" for _ in range(lanes)]
        elif mode == 1:
            parts += [f"0x{_address(rng):x}", str(int(rng.choice([0, 4, 8, 12, 16, 33, 100, -4, -16])))]
        else:
            addrs = [_address(rng)]
            for _ in range(lanes - 1):
                addrs.append(addrs[-1] + int(rng.integers(-300, 300)))
            parts.append(f"0x{addrs[0]:x}")
            parts += [str(b - a) for a, b in zip(addrs, addrs[1:])]
    if rng.random() < 0.3:
        parts.append("0x1f")  # an immediate
    return " ".join(parts)


def random_trace(
    path: Path,
    seed: int,
    *,
    bv: int = 70,
    tracer: int = 4,
    lineinfo: bool = False,
    bases: bool = True,
    spellings: bool = True,
) -> None:
    """A valid trace whose body the generator would not write: random PCs, masks and addresses
    (without ``spellings``, masks as the tracer writes them: the numpy scanner reads only those)."""
    rng = np.random.default_rng(seed)
    threads = int(rng.integers(1, 97))
    ctas = int(rng.integers(1, 4))
    spec = KernelSpec(grid=(ctas, 1, 1), block=(threads, 1, 1), binary_version=bv, lineinfo=lineinfo)
    head = header_text(spec, 1).replace("-accelsim tracer version = 4", f"-accelsim tracer version = {tracer}")
    if not bases:
        head = "".join(ln for ln in head.splitlines(keepends=True) if "base_addr" not in ln)
    step = 16 if bv >= 70 or bv == 0 else 8
    out = [head]
    for c in range(ctas):
        out.append(f"#BEGIN_TB\n\nthread block = {c},0,0\n\n")
        nwarps = (threads + 31) // 32
        for w in rng.permutation(nwarps)[: int(rng.integers(0, nwarps + 1))]:
            active = (1 << min(32, threads - 32 * int(w))) - 1
            n = int(rng.integers(0, 25))
            lines, pc = [], int(rng.choice([0, 0x40]))
            for i in range(n):
                if rng.random() < 0.2:  # a jump, often back to a PC seen before
                    pc = int(rng.choice([0, 0x40, 0x80, 0x100, 0x18, 0x38, 0x1000]))
                skip = (["1", "2", "3", str(int(w))] if tracer < 3 else []) + ([str(i + 1)] if lineinfo else [])
                lines.append(
                    _instruction(rng, pc, _mask(rng, min(32, threads - 32 * int(w))) & active, skip, spellings)
                )
                pc = oc.expected_next_pc(pc, bv) if rng.random() < 0.95 else pc + step
            out.append(f"warp = {int(w)}\ninsts = {n}\n" + "".join(ln + "\n" for ln in lines) + "\n")
        out.append("#END_TB\n\n")
    path.write_text("".join(out))


@native
@_SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    bv=st.sampled_from([86, 70, 61, 52, 35, 0]),
    tracer=st.sampled_from([4, 2]),
    lineinfo=st.booleans(),
    bases=st.booleans(),
    chunk=st.integers(1, 200),
)
def test_native_equals_reference_on_random_bodies(tmp_path, seed, bv, tracer, lineinfo, bases, chunk):
    path = tmp_path / "kernel-1.traceg"
    random_trace(path, seed, bv=bv, tracer=tracer, lineinfo=lineinfo, bases=bases)
    _, ref = scan_python.scan_file(path)
    _, got = scan_native.scan_file(path, chunk_size=chunk)
    assert identical(got, ref)


def same_footprint(a, b) -> bool:
    """Same lines read (with the same load counts), the same lines written, the same instructions."""
    return (
        a.warp_insts == b.warp_insts
        and a.reads.dtype == b.reads.dtype == np.uint64
        and np.array_equal(a.reads, b.reads)
        and np.array_equal(a.writes, b.writes)
        and np.array_equal(a.read_counts, b.read_counts)
    )


@native
@_SETTINGS
@given(seed=st.integers(0, 2**32 - 1), bv=st.sampled_from([86, 70, 61, 0]), chunk=st.integers(1, 200))
def test_native_footprint_equals_numpy_on_random_bodies(tmp_path, seed, bv, chunk):
    """The lines the compiled scanner records (one pass with the features) are the numpy
    scanner's: wrapping addresses, zero widths, gapped masks under base+stride, generic accesses."""
    path = tmp_path / "kernel-1.traceg"
    random_trace(path, seed, bv=bv, spellings=False)
    _, feats, got = scan_native.scan_file_and_footprint(path, chunk_size=chunk)
    assert identical(feats, scan_python.scan_file(path)[1])
    assert same_footprint(got, scan_numpy.scan_footprint(path))


@native
@_SETTINGS
@given(spec=kernel_specs(_BODY, binary_versions=[70]), xz=st.booleans(), seed=st.integers(0, 5))
def test_native_footprint_equals_numpy_on_generated_kernels(tmp_path, spec, xz, seed):
    path = tmp_path / (f"k-{seed}.traceg" + (".xz" if xz else ""))
    write_kernel(path, spec, 1, seed, xz=xz)
    got = scan_native.scan_footprint(path)
    assert same_footprint(got, scan_numpy.scan_footprint(path))
    assert got.reads.size or not got.read_counts.size


@native
def test_footprint_counts_a_line_once_per_load_and_every_line_an_access_spans(tmp_path):
    """Two lanes of one load in one line count once; a 16-byte access across a line boundary
    touches both lines; a store's lines are writes."""
    spec = KernelSpec(grid=(1, 1, 1), block=(32, 1, 1))
    body = (
        "#BEGIN_TB\nwarp = 0\ninsts = 3\n"
        "0000 00000003 0 LDG.E 0 4 0 0x1000 0x1004\n"
        "0010 00000001 0 LDG.E.128 0 16 0 0x1078\n"
        "0020 00000001 0 STG.E 0 4 0 0x2000\n#END_TB\n"
    )
    p = tmp_path / "kernel-1.traceg"
    p.write_text(header_text(spec, 1) + body)
    fp = scan_native.scan_footprint(p)
    assert fp.reads.tolist() == [0x1000 >> 7, 0x1080 >> 7] and fp.read_counts.tolist() == [2, 1]
    assert fp.writes.tolist() == [0x2000 >> 7]
    assert same_footprint(fp, scan_numpy.scan_footprint(p))


def test_a_negative_stride_below_address_zero_touches_the_lines_it_wraps_to(tmp_path):
    """Mode 1 from base 0xe with stride -16 over 32 lanes: lanes 1-31 wrap below 0 to the top of
    the address space, so the load reads line 0 and the four top lines, once each (the numpy
    scanner once took the wrapped range as one span and kept only its first line)."""
    spec = KernelSpec(grid=(1, 1, 1), block=(32, 1, 1))
    body = "#BEGIN_TB\nwarp = 0\ninsts = 1\n00b0 ffffffff 0 LDG.E.128 0 16 1 0xe -16\n#END_TB\n"
    p = tmp_path / "kernel-1.traceg"
    p.write_text(header_text(spec, 1) + body)
    top = (1 << 57) - 1
    fp = scan_numpy.scan_footprint(p)
    assert fp.reads.tolist() == [0, top - 3, top - 2, top - 1, top] and fp.read_counts.tolist() == [1] * 5
    if scan_native.available():
        assert same_footprint(scan_native.scan_footprint(p), fp)


@native
def test_gapped_mask_under_base_and_stride_reads_zero_after_the_gap(tmp_path):
    """Mode 1 with lanes 0-1 and 4-5 active: lanes after the gap read address 0 (the simulator's
    decompression), so a global load touches the base's sector and sector 0."""
    spec = KernelSpec(grid=(1, 1, 1), block=(32, 1, 1))
    body = (
        "#BEGIN_TB\nwarp = 0\ninsts = 2\n0000 00000033 0 LDG.E 0 4 1 0x7f5a40000000 4 \n0010 ffffffff 0 EXIT 0 0\n"
        "#END_TB\n"
    )
    p = tmp_path / "kernel-1.traceg"
    p.write_text(header_text(spec, 1) + body)
    _, got = scan_native.scan_file(p)
    assert got.counts["sectors_global_ld"] == 2 and got.counts["thread_insts"] == 4 + 32
    assert identical(got, scan_python.scan_file(p)[1])


@native
@pytest.mark.parametrize(
    "mask, addresses",
    [
        (
            "0000000f",
            "0x00007F5A4001AB0C 0X00007f5a4001ab10 00007f5a4001ab14 0x7f5a4001ab18",
        ),  # case, prefixes, 16 and 12 digits
        ("FFFF0000", " ".join(f"0x{0x7F5A40000000 + 64 * i:x}" for i in range(16))),
        (
            "00000f00",
            "0x1 0x20 0x0000000000000000000040 0x3fffffff",
        ),  # 1 digit, over 16 digits with leading zeros, 8 digits
        ("f0000000", "0xffffffffffffffff 0xfffffffffffffff0 0x0 0x1f"),
    ],  # the top of the address space
)
def test_address_spellings(tmp_path, mask, addresses):
    spec = KernelSpec(grid=(1, 1, 1), block=(32, 1, 1))
    body = (
        f"#BEGIN_TB\nwarp = 0\ninsts = 2\n0000 {mask} 0 LDG.E.64 0 8 0 {addresses}\n"
        f"0010 {mask} 0 STG.E.128 0 16 0 {addresses}\n#END_TB\n"
    )
    p = tmp_path / "kernel-1.traceg"
    p.write_text(header_text(spec, 1) + body)
    ref = scan_python.scan_file(p)[1]
    assert ref.counts["sectors_global_ld"] > 0
    assert identical(scan_native.scan_file(p)[1], ref)


@native
def test_whitespace_the_simulator_tolerates(tmp_path):
    spec = KernelSpec(
        grid=(2, 1, 1),
        block=(64, 1, 1),
        body=("LDG.E", "STG.E.64", "FFMA"),
        pattern="strided",
        stride=12,
        divergence=0.5,
    )
    clean = tmp_path / "clean.traceg"
    write_kernel(clean, spec, 1, seed=3)
    lines = clean.read_text().split("\n")
    lines = [
        ln.replace(" ", "  ", 2) if i % 3 == 0 else ln.replace(" ", "\t", 1) if i % 3 == 1 else ln
        for i, ln in enumerate(lines)
    ]
    messy = tmp_path / "messy.traceg"
    messy.write_bytes("\r\n".join(lines).encode())
    assert identical(scan_native.scan_file(messy)[1], scan_python.scan_file(clean)[1])


@native
@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "LDG",
                "STG",
                "LD",
                "ST",
                "U",
                "E",
                "U8",
                "U16",
                "U1",
                "64",
                "128",
                "0",
                "BRA",
                "ATOMS",
                "X",
                "",
                "S16",
                "4",
            ]
        ),
        min_size=1,
        max_size=5,
    ).map(".".join)
)
def test_opcode_classification_matches_the_python_table(opcode):
    cls, width, cf = scan_native.native_module().classify(opcode.encode(), oc._CLASS, sorted(oc.CONTROL_FLOW))
    info = oc.classify(opcode)
    assert (cls, width, cf) == (info.mem_class, info.width, info.control_flow)


# --- malformed bodies ----------------------------------------------------------------------------
def _bad_trace(tmp_path: Path) -> tuple[Path, str]:
    d = tmp_path / "bad"
    write_workload(d, [KernelSpec(grid=(3, 1, 1), block=(64, 1, 1), body=("LDG.E", "FFMA"), pattern="random")], seed=0)
    p = d / "kernel-1.traceg"
    return p, p.read_text()


def _line_of(text: str, fragment: str) -> int:
    return text[: text.index(fragment)].count("\n") + 1


def _first_ldg(new_tail: str):
    """Mutation: the first LDG.E line's fields after the opcode replaced."""

    def mutate(text: str) -> str:
        i = text.index(" LDG.E ")
        j = text.index("\n", i)
        return text[:i] + " LDG.E " + new_tail + text[j:]

    return mutate


def _replace(old: str, new: str):
    return lambda text: text.replace(old, new, 1)


# (mutation, message fragment, text of the line blamed or None, whether the reference rejects it too)
_MALFORMED = [
    (_replace("insts = ", "insts = 1"), "declares insts", None, True),
    (_replace("warp = 1\n", "warp = 5\n"), "does not exist", "warp = 5", True),
    (_replace(" ffffffff 1 R5 LDG.E", " 1ffffffff 1 R5 LDG.E"), "wider than the 32 lanes", "0030 1ffffffff", False),
    (_replace("0030 ffffffff 1 R5 LDG.E", "00z0 ffffffff 1 R5 LDG.E"), "malformed PC", "00z0 ", True),
    (_first_ldg("2 R2 R3 4 7 0x10"), "unknown address mode 7", "LDG.E 2 R2 R3 4 7", True),
    (_first_ldg("2 R2 R3 4 2 0xqq 4 4"), "not hexadecimal", "0xqq", True),
    (_first_ldg("2 R2 R3 4 0" + " 0x00007f5a4001ab0c" * 31 + " 0x00007f5a4001zb0c"), "malformed address", "zb0c", True),
    (_replace("0030 ffffffff 1 R5 LDG.E", "0030 fffffgff 1 R5 LDG.E"), "malformed active mask", "fffffgff", True),
    (_first_ldg("2 R2 R3 4 1 0x10zz 4"), "malformed base address", "0x10zz", True),
    (_first_ldg("2 R2 R3 4 1 0x10 4.5"), "malformed stride", "0x10 4.5", True),
    (_first_ldg("2 R2 R3 4 0 0x10 0x20"), "fewer addresses than active lanes", "0x10 0x20", True),
    (_first_ldg("2 R2 R3 4 2 0x10 4 4"), "fewer address deltas than active lanes", "0x10 4 4", True),
    (_first_ldg("2 R2 R3 4 2 0x10" + " 4x" * 31), "malformed address delta", " 4x 4x", True),
    (_first_ldg("2 R2 R3"), "no memory width", "LDG.E 2 R2 R3\n", True),
    (_replace(" FFMA 2 R2 R3 0", " FFMA 9 R2 R3 0"), "too few fields", "FFMA 9", True),
    (_replace("insts = 14\n", "insts = 14\ninsts = 15\n"), "more than one 'insts ='", "insts = 15", False),
    (
        _replace("warp = 0\ninsts = 14\n", "warp = 0\n0000 ffffffff 0 NOP 0 0\ninsts = 14\n"),
        "before its warp's 'insts ='",
        "0000 ffffffff 0 NOP",
        False,
    ),
    (_replace("warp = 0\n", "warp = x\n"), "malformed warp line", "warp = x", False),
    (_replace("thread block = 1,0,0", "#COMMENT"), "unexpected line", "#COMMENT", True),
    (_replace("#END_TB\n", ""), "#BEGIN_TB before the previous", "#BEGIN_TB\n\nthread block = 1,0,0", True),
    (_replace("#BEGIN_TB\n", ""), "line outside a thread block", "thread block = 0,0,0", True),
]


@native
@pytest.mark.parametrize("mutate, fragment, blamed, reference_too", _MALFORMED)
def test_malformed_bodies_name_the_line(tmp_path, mutate, fragment, blamed, reference_too):
    p, text = _bad_trace(tmp_path)
    bad = mutate(text)
    assert bad != text
    p.write_text(bad)
    with pytest.raises(FormatError, match=fragment) as got:
        scan_native.scan_file(p, chunk_size=97)
    assert got.value.line is not None and str(got.value).startswith(f"{p}, line {got.value.line}: ")
    if blamed is not None:
        assert got.value.line == _line_of(bad, blamed)
    if reference_too:
        with pytest.raises(FormatError) as ref:
            scan_python.scan_file(p)
        assert ref.value.line == got.value.line


@native
@pytest.mark.parametrize(
    "cut, fragment",
    [
        (lambda t: t[: t.rindex("#BEGIN_TB")], "has 2 thread blocks but the grid \\(3, 1, 1\\) needs 3"),
        (lambda t: t[: t.rindex("#END_TB")], "ends inside a thread block"),
        (lambda t: t.rstrip("\n"), "does not end with a newline"),
    ],
)
def test_truncated_traces(tmp_path, cut, fragment):
    p, text = _bad_trace(tmp_path)
    p.write_text(cut(text))
    with pytest.raises(FormatError, match=fragment):
        scan_native.scan_file(p)


@native
def test_truncated_xz_is_a_format_error(tmp_path):
    p, text = _bad_trace(tmp_path)
    data = lzma.compress(text.encode())
    x = p.with_name("kernel-1.traceg.xz")
    x.write_bytes(data[: len(data) // 2])
    with pytest.raises(FormatError, match="truncated or corrupt xz"):
        scan_native.scan_file(x)


# --- the features table and the engine switch ----------------------------------------------------
@native
def test_features_table_native_equals_reference_plain_and_xz(tmp_path):
    kernels = example_kernels()[:5]
    write_workload(tmp_path / "plain", kernels, seed=4)
    write_workload(tmp_path / "xz", kernels, seed=4, xz=True)
    ref = compute_features(tmp_path / "plain", engine="python", quiet=True)
    cols = feature_columns()
    for folder, jobs in (("plain", 1), ("xz", 2)):
        got = compute_features(tmp_path / folder, engine="native", jobs=jobs, quiet=True)
        assert got.kernels[cols].equals(ref.kernels[cols])
        for k in ("bbv", "warp_types"):
            assert (got.extras[k] != ref.extras[k]).nnz == 0 and got.extras[k].shape == ref.extras[k].shape
        for k in ("bbv_blocks", "bbv_block_kernel", "warp_type_launch", "warp_type_count"):
            assert np.array_equal(got.extras[k], ref.extras[k]), k


@native
def test_context_column_native_equals_numpy_with_threads(tmp_path):
    """The warm_reads column from the compiled scanner's footprints (threads with --jobs) equals the
    numpy scanner's, and every other column too."""
    write_workload(tmp_path / "t", example_kernels()[:6], seed=3)
    ref = compute_features(tmp_path / "t", engine="numpy", quiet=True)
    for jobs in (1, 3):
        got = compute_features(tmp_path / "t", engine="native", jobs=jobs, quiet=True)
        assert "warm_reads" in got.kernels and got.kernels[feature_columns()].equals(ref.kernels[feature_columns()])


@native
def test_cli_engine_option_and_help(tmp_path, capsys):
    write_workload(tmp_path / "t", example_kernels()[:3], seed=1)
    assert cli_run(["profile", "features", "--sim", "accelsim", "--help"]) == 0
    assert "auto = native" in " ".join(capsys.readouterr().out.split())
    outs = {}
    for engine in ("native", "python"):
        out = tmp_path / f"{engine}.parquet"
        assert (
            cli_run(
                ["profile", "features", "--sim", "accelsim", str(tmp_path / "t"), "-o", str(out), "--engine", engine]
            )
            == 0
        )
        outs[engine] = Workload.from_parquet(out).kernels
    assert outs["native"].equals(outs["python"])


def test_fallback_when_the_extension_is_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(scan_native, "_native", None)
    monkeypatch.setattr(scan_native, "_REASON", "not built")
    assert default_engine() == "numpy" and resolve_engine("auto") == "numpy"
    with pytest.raises(UserError, match="not built"):
        resolve_engine("native")
    with pytest.raises(UserError, match="not built"):
        scan_native.scan_file(tmp_path / "whatever.traceg")
    write_workload(tmp_path / "t", example_kernels()[:2], seed=1)
    wl = compute_features(tmp_path / "t", quiet=True)  # numpy, silently
    assert wl.kernels["warp_insts"].sum() > 0
    rc = cli_run(
        [
            "profile",
            "features",
            "--sim",
            "accelsim",
            str(tmp_path / "t"),
            "-o",
            str(tmp_path / "f.parquet"),
            "--engine",
            "native",
        ]
    )
    assert rc == 1


def test_pure_python_switch_disables_the_extension():
    code = (
        "from simsample_accelsim import features, scan_native; print(scan_native.available(), "
        "features.default_engine(), features.engine_note())"
    )
    env = {**os.environ, "SIMSAMPLE_PURE_PYTHON": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    ).stdout.split()
    assert out[:2] == ["False", "numpy"] and "SIMSAMPLE_PURE_PYTHON" in " ".join(out)
