"""The Accel-Sim warm-up patch (functional L2 warm-up, 64-bit memcpy fill): the patch file is
well formed, embeds the current header, keeps both options off by default and stays clear of the
PKP patch's hunks; the header compiles as the simulator compiles it (C++11) and agrees with a
Python reference built on the adapter's own trace decoding; and a real run's log (fixture)
reads as one detailed kernel after two warm-up traces whose counts match the traces."""

from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsample_accelsim import opcodes as oc
from simsample_accelsim.collect import parse_log
from simsample_accelsim.scan_python import addresses

ROOT = Path(__file__).resolve().parents[3]
PATCHES = ROOT / "adapters" / "accelsim" / "patches"
PATCH = PATCHES / "accel-sim-warmup.patch"
PKP_PATCH = PATCHES / "accel-sim-pkp.patch"
HEADER = ROOT / "adapters" / "accelsim" / "cpp" / "warmup" / "functional_warmup.hpp"
HEADER_IN_PATCH = "gpu-simulator/trace-driven/functional_warmup.hpp"
FIXTURES = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "accelsim_warmup"
HETERO = ROOT.parent / "shared" / "data" / "simulators" / "accelsim" / "hetero"

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _sections(text: str) -> dict[str, list[str]]:
    """Per-file lines of a git patch, keyed by the b/ path."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        m = re.match(r"^diff --git a/(\S+) b/(\S+)$", line)
        if m:
            current = out.setdefault(m.group(2), [])
            continue
        if current is not None:
            current.append(line)
    return out


def _hunks(lines: list[str]) -> list[tuple[int, int, int, int, list[str]]]:
    """(old start, old count, new start, new count, body) of each hunk of one file section."""
    hunks: list[tuple[int, int, int, int, list[str]]] = []
    for line in lines:
        m = _HUNK.match(line)
        if m:
            a, b, c, d = (int(g) if g is not None else 1 for g in m.groups())
            hunks.append((a, b, c, d, []))
        elif hunks and not line.startswith(("--- ", "+++ ")):
            hunks[-1][4].append(line)
    return hunks


# --- the patch file ------------------------------------------------------------------------------


def test_patch_touches_the_expected_files():
    assert list(_sections(PATCH.read_text())) == [
        "gpu-simulator/accel-sim.cc",
        "gpu-simulator/trace-driven/functional_warmup.hpp",
        "gpu-simulator/trace-driven/trace_driven.cc",
        "gpu-simulator/trace-driven/trace_driven.h",
        "gpu-simulator/trace-parser/trace_parser.cc",
        "gpu-simulator/trace-parser/trace_parser.h",
        "gpu-simulator/gpgpu-sim/src/gpgpu-sim/gpu-cache.cc",
        "gpu-simulator/gpgpu-sim/src/gpgpu-sim/gpu-cache.h",
        "gpu-simulator/gpgpu-sim/src/gpgpu-sim/gpu-sim.cc",
        "gpu-simulator/gpgpu-sim/src/gpgpu-sim/gpu-sim.h",
        "gpu-simulator/gpgpu-sim/src/gpgpu-sim/l2cache.h",
    ]


def test_hunk_headers_match_their_bodies():
    """A hand-edited patch whose counts drift no longer applies; catch it without the sources."""
    for path, lines in _sections(PATCH.read_text()).items():
        hunks = _hunks(lines)
        assert hunks, path
        for old_start, old_n, new_start, new_n, body in hunks:
            body = [b for b in body if not b.startswith("\\")]  # "\ No newline at end of file"
            assert all(b[:1] in (" ", "+", "-") for b in body), (path, old_start)
            assert sum(b[:1] in (" ", "-") for b in body) == old_n, (path, old_start)
            assert sum(b[:1] in (" ", "+") for b in body) == new_n, (path, new_start)


def test_patch_embeds_the_current_header():
    lines = _sections(PATCH.read_text())[HEADER_IN_PATCH]
    assert "new file mode 100644" in lines
    ((old_start, old_n, _, _, body),) = _hunks(lines)
    assert (old_start, old_n) == (0, 0)
    embedded = "\n".join(b[1:] for b in body if b.startswith("+")) + "\n"
    assert embedded == HEADER.read_text(), (
        "after changing adapters/accelsim/cpp/warmup/functional_warmup.hpp run "
        "adapters/accelsim/patches/refresh_header.py"
    )


def test_refresh_tool_rewrites_the_warmup_header():
    """refresh_header.py keeps this header too: it finds the patch's section, leaves an up-to-date
    patch byte for byte as it is, and puts a changed header in."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("refresh_header", PATCHES / "refresh_header.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    assert (mod.WARMUP_PATCH, mod.WARMUP_HEADER.resolve()) == (PATCH, HEADER.resolve())
    text = PATCH.read_text()
    assert mod.embedded_header(text, HEADER_IN_PATCH) == HEADER.read_text()
    assert mod.refreshed(text, HEADER.read_text(), HEADER_IN_PATCH) == text
    changed = HEADER.read_text() + "// one more line\n"
    assert mod.embedded_header(mod.refreshed(text, changed, HEADER_IN_PATCH), HEADER_IN_PATCH) == changed


def test_options_are_registered_and_off_by_default():
    text = PATCH.read_text()
    for option, var in (
        ("-functional_warmup", "m_functional_warmup"),
        ("-gpgpu_perf_sim_memcpy_64bit", "m_perf_sim_memcpy_64bit"),
    ):
        assert re.search(
            rf'^\+\s*option_parser_register\(opp, "{option}", OPT_BOOL,\s*\n\+\s*&{var},[^;]*?"0"\);', text, flags=re.M
        ), option
    # With the option off the memcpy fill keeps the old 32-bit truncation, so full runs are unchanged.
    assert "(new_addr_type)(unsigned)(dst_start_addr + counter)" in text
    # warm-up lines are played only when asked for
    assert re.search(r"if \(m_gpgpu_sim->functional_warmup_enabled\(\)\)\s*\n\+\s*functional_warmup_from_trace", text)


def test_replayed_accesses_are_ordered_by_the_partitions_memcpy_tick():
    """Tag times ending at the clock put every warm-up trace played between two kernels, and all
    of them at cycle 0, in one time range (GPGPU-Sim's LRU then evicts the lowest way among equal
    times and keeps the oldest lines), and below the memcpy fills' times, which carry the
    partition's offset: training's first-step samples ran 3% slow. Each replayed access takes the
    next tick of the offset, as a memcpy fill does, and every later access adds it."""
    l2 = "\n".join(_sections(PATCH.read_text())["gpu-simulator/gpgpu-sim/src/gpgpu-sim/l2cache.h"])
    body = l2[l2.index("bool functional_l2_access") :]
    assert re.search(r"functional_access\(\s*\n?\+?\s*addr, m_memcpy_cycle_offset \+ time, mask, is_write\)", body), (
        body
    )
    assert "m_memcpy_cycle_offset += 1;" in body[: body.index("return s == HIT")]
    td = "\n".join(_sections(PATCH.read_text())["gpu-simulator/trace-driven/trace_driven.cc"])
    assert "(unsigned)now))" in td and "access_time" not in td


def test_hunks_stay_clear_of_the_pkp_patch():
    """Both patches apply to the pristine sources in either order when they share no lines, the
    context lines included (and keep a gap, so that neither's context reaches into the other)."""
    ours, pkp = _sections(PATCH.read_text()), _sections(PKP_PATCH.read_text())
    for path in set(ours) & set(pkp):
        spans = sorted(
            (a, a + n - 1, name)
            for name, sec in (("warmup", ours[path]), ("pkp", pkp[path]))
            for a, n, *_ in _hunks(sec)
        )
        for (a0, a1, n0), (b0, _b1, n1) in zip(spans, spans[1:]):
            assert n0 == n1 or a1 < b0 - 1, f"{path}: {n0} lines {a0}-{a1} touch {n1} hunk at {b0}"


@pytest.mark.skipif(
    not os.environ.get("SIMSAMPLE_ACCELSIM_SRC"),
    reason="SIMSAMPLE_ACCELSIM_SRC (a pristine accel-sim-framework checkout with gpgpu-sim inside) not set",
)
def test_patch_applies_alone_and_with_pkp_in_both_orders():
    src = Path(os.environ["SIMSAMPLE_ACCELSIM_SRC"])
    for patches in ([PATCH], [PKP_PATCH, PATCH], [PATCH, PKP_PATCH]):
        r = subprocess.run(["git", "apply", "--check", *map(str, patches)], cwd=src, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


# --- the header, compiled as the simulator's trace-driven module compiles it ---------------------

DRIVER = r"""
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "functional_warmup.hpp"

namespace fw = simsample::warmup;

int main() {
  std::string line;
  std::vector<std::uint64_t> accesses;
  fw::Stats stats;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string cmd;
    in >> cmd;
    if (cmd == "C") {  // classify OPCODE FIRST SHMEM LOCAL
      std::string op;
      unsigned long long first, shmem, local;
      in >> op >> std::hex >> first >> shmem >> local;
      std::printf("%d\n", static_cast<int>(fw::classify(op, first, shmem, local)));
    } else if (cmd == "S") {  // sectors MASK WIDTH A0..A31
      unsigned long long mask;
      unsigned width;
      std::uint64_t a[32];
      in >> std::hex >> mask >> std::dec >> width >> std::hex;
      for (int i = 0; i < 32; ++i) in >> a[i];
      std::vector<std::uint64_t> out;
      fw::warp_sectors(a, static_cast<std::uint32_t>(mask), width, out);
      for (std::size_t i = 0; i < out.size(); ++i) std::printf("%llx ", (unsigned long long)out[i]);
      std::printf("\n");
    } else if (cmd == "I") {  // add_instruction OPCODE MASK WIDTH SHMEM LOCAL A0..A31
      std::string op;
      unsigned long long mask, shmem, local;
      unsigned width;
      std::uint64_t a[32];
      in >> op >> std::hex >> mask >> std::dec >> width >> std::hex >> shmem >> local;
      for (int i = 0; i < 32; ++i) in >> a[i];
      fw::add_instruction(op, a, static_cast<std::uint32_t>(mask), width, shmem, local, accesses, stats);
    } else if (cmd == "E") {  // stats and a checksum of the encoded accesses in order
      unsigned long long h = 1469598103934665603ull;
      for (std::size_t i = 0; i < accesses.size(); ++i) h = (h ^ accesses[i]) * 1099511628211ull;
      std::printf("%llu %llu %llu %llu %llu %llu\n", (unsigned long long)stats.warp_insts,
                  (unsigned long long)stats.global_insts, (unsigned long long)stats.read_sectors,
                  (unsigned long long)stats.written_sectors, (unsigned long long)accesses.size(), h);
    }
  }
  return 0;
}
"""


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    cxx = shutil.which(os.environ.get("CXX", "g++")) or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    d = tmp_path_factory.mktemp("warmup_driver")
    (d / "driver.cpp").write_text(DRIVER)
    exe = d / "driver"
    r = subprocess.run(
        [
            cxx,
            "-std=c++11",
            "-O1",
            "-Wall",
            "-Wextra",
            "-Wpedantic",
            "-Werror",
            f"-I{HEADER.parent}",
            str(d / "driver.cpp"),
            "-o",
            str(exe),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr

    def run(commands: list[str]) -> list[str]:
        out = subprocess.run([str(exe)], input="\n".join(commands) + "\n", capture_output=True, text=True, check=True)
        return out.stdout.splitlines()

    return run


def _ref_access(opcode: str, first: int, shmem: int, local: int) -> int:
    """Read 1 / write 2 / both 3 / none 0, from the adapter's opcode classes (the features use them)."""
    info = oc.classify(opcode)
    cls = info.mem_class
    if cls in (oc.GENERIC_LD, oc.GENERIC_ST):
        cls = oc.generic_space(first, shmem, local, cls == oc.GENERIC_LD)
    return {oc.GLOBAL_LD: 1, oc.GLOBAL_ST: 2, oc.GLOBAL_ATOM: 3, oc.GLOBAL_RED: 3}.get(cls, 0)


def _ref_sectors(lane_addrs: list[int], width: int) -> list[int]:
    out: list[int] = []
    for a in lane_addrs:
        for s in range(a // 32, (a + max(width, 1) - 1) // 32 + 1):
            if s * 32 not in out:
                out.append(s * 32)
    return out


def _lanes32(mask: int, lane_addrs: list[int]) -> list[int]:
    full = [0] * 32
    for lane, a in zip((i for i in range(32) if mask >> i & 1), lane_addrs):
        full[lane] = a
    return full


OPCODES = ["LDG.E", "LDG.E.128.SYS", "LDGSTS.E.BYPASS.128", "STG.E.64", "STG.E.U8", "ATOMG.E.ADD.STRONG.GPU",
           "ATOM.E.ADD", "RED.E.ADD.F32", "LD.E", "ST.E.64", "LDL", "STL.64", "LDS.U.128", "STS", "ATOMS.ADD",
           "FFMA", "BRA", "EXIT"]  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(OPCODES),
            st.integers(0, 2**48),
            st.sampled_from([0, 0x7F5B00000000]),
            st.sampled_from([0, 0x7F5B01000000]),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_classify_matches_the_adapter_opcode_table(driver, cases):
    cmds = [f"C {op} {first:x} {sh:x} {lo:x}" for op, first, sh, lo in cases]
    got = [int(x) for x in driver(cmds)]
    assert got == [_ref_access(op, first, sh, lo) for op, first, sh, lo in cases]


lane_sets = st.tuples(
    st.integers(1, 2**32 - 1),
    st.sampled_from([1, 2, 4, 8, 16, 32]),
    st.one_of(
        st.lists(st.integers(0, 2**40), min_size=32, max_size=32),
        st.builds(lambda b, s: [b + s * i for i in range(32)], st.integers(0, 2**40), st.integers(-64, 64).map(abs)),
    ),
)


@settings(max_examples=80, deadline=None)
@given(st.lists(lane_sets, min_size=1, max_size=20))
def test_warp_sectors_are_the_distinct_sectors_in_first_touch_order(driver, cases):
    cmds = [f"S {mask:x} {w} " + " ".join(f"{a:x}" for a in addrs) for mask, w, addrs in cases]
    got = [[int(t, 16) for t in line.split()] for line in driver(cmds)]
    for (mask, w, addrs), sectors in zip(cases, got):
        active = [addrs[i] for i in range(32) if mask >> i & 1]
        assert sectors == _ref_sectors(active, w)


# --- real traces: the header's counts, the reference's counts and the simulator's log agree -------


def _trace_instructions(path: Path):
    """(opcode, mask, lane addresses) of each instruction of an uncompressed or .xz trace."""
    import lzma

    opener = lzma.open if path.suffix == ".xz" else open
    shmem = local = 0
    with opener(path, "rt") as fh:
        for line in fh:
            if line.startswith("#"):
                break
            if line.startswith("-shmem base_addr"):
                shmem = int(line.split("=")[1], 16)
            elif line.startswith("-local mem base_addr"):
                local = int(line.split("=")[1], 16)
        yield ("HEADER", shmem, local)
        for line in fh:
            w = line.split()
            if not w or w[0].startswith("#") or w[0] in ("thread", "warp", "insts"):
                continue
            mask, nd = int(w[1], 16), int(w[2])
            opcode, ns = w[3 + nd], int(w[4 + nd])
            width_field = int(w[5 + nd + ns])
            lanes = (
                addresses(int(w[6 + nd + ns]), [t.encode() for t in w[7 + nd + ns :]], mask) if width_field > 0 else []
            )
            yield (opcode, mask, lanes)


@pytest.mark.parametrize("kernel", [8, 12])
def test_warmup_counts_on_real_traces_match_reference_and_log(driver, kernel):
    trace = HETERO / f"kernel-{kernel}.traceg.xz"
    if not trace.exists():
        pytest.skip("shared hetero traces absent")
    it = _trace_instructions(trace)
    _, shmem, local = next(it)
    cmds, ref = [], [0, 0, 0, 0]
    for opcode, mask, lanes in it:
        ref[0] += 1
        if not lanes:
            cmds.append(f"I {opcode} {mask:x} 4 {shmem:x} {local:x} " + " ".join(["0"] * 32))
            continue
        width = oc.data_width(opcode)
        cmds.append(
            f"I {opcode} {mask:x} {width} {shmem:x} {local:x} " + " ".join(f"{a:x}" for a in _lanes32(mask, lanes))
        )
        acc = _ref_access(opcode, lanes[0], shmem, local)
        if acc:
            ref[1] += 1
            n = len(_ref_sectors(lanes, width))
            ref[2] += n if acc & 1 else 0
            ref[3] += n if acc & 2 else 0
    (line,) = driver(cmds + ["E"])
    insts, glob, reads, writes, n_acc, _ = map(int, line.split())
    assert [insts, glob, reads, writes] == ref
    assert n_acc == reads + writes
    # the simulator printed the same counts when it played this trace (fixture run)
    log = gzip.open(FIXTURES / "hetero_w8_w12_k13.out.gz", "rt").read()
    m = re.search(
        rf"functional warm-up: \./kernel-{kernel}\.traceg: (\d+) warp insts, (\d+) global, (\d+) sector reads, (\d+) "
        r"sector writes, L2 hits (\d+) of (\d+)",
        log,
    )
    assert m is not None
    assert [int(g) for g in m.groups()[:4]] == ref
    assert int(m.group(6)) == reads + writes


def test_warmup_run_log_reads_as_one_kernel():
    """Warm-up traces are not launches: the collector sees only the detailed kernel, with the
    cycles the warm-up brought (7,401 against 10,246 cold; 7,257 in the full run)."""
    summary = parse_log(FIXTURES / "hetero_w8_w12_k13.out.gz")
    assert [(r.trace_kernel_id, r.trace, r.stats["cycles"]) for r in summary.runs] == [
        (13, "./kernel-13.traceg", 7401.0)
    ]
    assert summary.failure is None
    listed = (FIXTURES / "kernelslist.g").read_text().splitlines()
    assert listed[-3:] == ["warmup kernel-8.traceg", "warmup kernel-12.traceg", "kernel-13.traceg"]
