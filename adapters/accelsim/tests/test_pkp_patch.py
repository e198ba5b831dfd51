"""The Accel-Sim PKP patch: applies to a checkout, embeds the current header, prints what the
collector reads; and the header itself compiles strictly and agrees with the Python twin."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from simsample.pkp import monitor as twin
from simsample_accelsim.pkp.visualizer import read_accelsim_stdout

ROOT = Path(__file__).resolve().parents[3]
PATCHES = ROOT / "adapters" / "accelsim" / "patches"
PATCH = PATCHES / "accel-sim-pkp.patch"
HEADER = ROOT / "cpp" / "pkp_hook" / "pkp_monitor.hpp"


def _refresh_module():
    spec = importlib.util.spec_from_file_location("refresh_header", PATCHES / "refresh_header.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def test_patch_embeds_the_current_header():
    mod = _refresh_module()
    text = PATCH.read_text()
    assert mod.embedded_header(text) == HEADER.read_text(), "run adapters/accelsim/patches/refresh_header.py"
    assert mod.refreshed(text, HEADER.read_text()) == text


def test_patch_touches_only_accel_sim_files():
    files = re.findall(r"^diff --git a/(\S+) b/", PATCH.read_text(), flags=re.M)
    assert files == [
        "gpu-simulator/accel-sim.cc",
        "gpu-simulator/accel-sim.h",
        "gpu-simulator/pkp/pkp_monitor.hpp",
        "gpu-simulator/trace-driven/trace_driven.h",
    ]


def test_patch_options_and_printed_lines():
    text = PATCH.read_text()
    for opt in (
        "-pkp_enable",
        "-pkp_window",
        "-pkp_threshold",
        "-pkp_period",
        "-pkp_wave_rule",
        "-pkp_projection",
        "-pkp_settle",
        "-pkp_drain_tail",
    ):
        assert f'"{opt}"' in text, opt
    # The collector parses these exact lines; build a stats block from the patch's own formats.
    formats = re.findall(r'printf\("(pkp_\w+ = )%llu\\n"', text)
    assert formats[:3] == ["pkp_stop_cycle = ", "pkp_projected_cycle = ", "pkp_projected_insn = "]
    # Off by default.
    assert re.search(r'"-pkp_enable", OPT_BOOL, &pkp_enable,[^;]*?"0"\);', text)


def test_stdout_reader_picks_up_the_patch_lines(tmp_path):
    formats = re.findall(r'printf\("(pkp_\w+ = )%llu\\n"', PATCH.read_text())
    block = [
        "launching kernel name: _Z3fooPf uid: 1 cuda_stream_id: 0",
        "kernel_name = _Z3fooPf ",
        "kernel_launch_uid = 1 ",
        "gpu_sim_cycle = 18000",
        "gpu_sim_insn = 4800000",
        *[f"{f}{1000 + i}" for i, f in enumerate(formats)],
        "gpgpu_simulation_time = 0 days, 0 hrs, 0 min, 1 sec (1 sec)",
    ]
    p = tmp_path / "out.txt"
    p.write_text("\n".join(block) + "\n")
    (k,) = read_accelsim_stdout(p).kernels
    assert (
        k.pkp["pkp_stop_cycle"] == 1000 and k.pkp["pkp_projected_cycle"] == 1001 and k.pkp["pkp_projected_insn"] == 1002
    )
    assert k.cycles == 18000


def test_patch_applies_to_checkout():
    """Set SIMSAMPLE_ACCELSIM_SRC to an accel-sim-framework checkout (dev, 73f9fac) to run."""
    src = os.environ.get("SIMSAMPLE_ACCELSIM_SRC")
    if not src:
        pytest.skip("SIMSAMPLE_ACCELSIM_SRC does not point to an accel-sim-framework checkout")
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    src_path = Path(src)
    assert (src_path / "gpu-simulator" / "accel-sim.cc").is_file(), f"{src} is not an accel-sim-framework checkout"
    res = subprocess.run(["git", "apply", "--check", "-v", str(PATCH)], cwd=src_path, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


# --- the header as a simulator would compile it -------------------------------------------------
DRIVER = r"""
#include <cstdio>
#include <cstdint>
#include "pkp_monitor.hpp"
using namespace simsample::pkp;
int main() {
  for (int rule = 0; rule < 2; ++rule) {
    Config c;
    c.period = 100; c.window = 700; c.threshold = 2.5; c.total_ctas = 900; c.wave_size = 160;
    c.wave_rule = rule ? WaveRule::Artifact : WaveRule::Paper;
    c.projection = rule ? Projection::Artifact : Projection::Paper;
    if (validate(c)) return 2;
    Monitor m(c);
    std::uint64_t insns = 0, ctas = 0, x = 12345;
    for (std::uint64_t cyc = 1; cyc <= 200000; ++cyc) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      insns += 50 + (x >> 58);
      if ((x >> 40) % 97 == 0) ++ctas;
      if (m.update(cyc, insns, ctas)) break;
      if (cyc % 100 == 0) std::printf("cov %a\n", m.last_cov());
    }
    std::printf("stop %d %llu %llu %llu %a %a\n", (int)m.stopped(), (unsigned long long)m.stop_cycle(),
                (unsigned long long)m.stop_insns(), (unsigned long long)m.stop_ctas(), m.projected_cycles(),
                m.projected_insns());
  }
  return 0;
}
"""


def _python_driver() -> list[str]:
    out = []
    for rule in ("paper", "artifact"):
        m = twin.Monitor(
            period=100, window=700, threshold=2.5, total_ctas=900, wave_size=160, wave_rule=rule, projection=rule
        )
        insns = ctas = 0
        x = 12345
        mask = (1 << 64) - 1
        for cyc in range(1, 200001):
            x = (x * 6364136223846793005 + 1442695040888963407) & mask
            insns += 50 + (x >> 58)
            if (x >> 40) % 97 == 0:
                ctas += 1
            if m.update(cyc, insns, ctas):
                break
            if cyc % 100 == 0:
                cov = m.last_cov
                out.append(f"cov {float('nan').hex() if cov is None else cov.hex()}")
        pc, pi = (m.projected_cycles, m.projected_insns) if m.stopped else (float("nan"), float("nan"))
        out.append(
            f"stop {int(m.stopped)} {m.stop_cycle or 0} {m.stop_insns or 0} {m.stop_ctas or 0} {pc.hex()} {pi.hex()}"
        )
    return out


def _c_hex_to_python(line: str) -> str:
    """printf's %a (e.g. 0x1.8p+1, nan, inf) -> Python's float.hex() spelling."""

    def conv(tok: str) -> str:
        if tok.startswith(("0x", "-0x")) or tok in ("nan", "-nan", "inf", "-inf"):
            return float.fromhex(tok).hex() if "x" in tok else float(tok.lstrip("-") if "nan" in tok else tok).hex()
        return tok

    return " ".join(conv(t) for t in line.split())


@pytest.mark.parametrize("flags", [["-O0"], ["-O3", "-march=native"]], ids=["O0", "O3-native"])
def test_header_compiles_strictly_and_matches_python(tmp_path, flags):
    cxx = shutil.which(os.environ.get("CXX", "g++")) or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    src = tmp_path / "drv.cpp"
    src.write_text(DRIVER)
    exe = tmp_path / "drv"
    res = subprocess.run(
        [cxx, "-std=c++17", "-Wall", "-Wextra", "-Wpedantic", "-Werror", *flags,
         f"-I{HEADER.parent}", str(src), "-o", str(exe)],
        capture_output=True, text=True,
    )  # fmt: skip
    if res.returncode != 0 and "-march=native" in flags and "march" in res.stderr:
        pytest.skip("compiler does not support -march=native")
    assert res.returncode == 0, res.stderr
    got = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.splitlines()
    want = _python_driver()
    assert [_c_hex_to_python(g) for g in got] == want
    assert any(w.startswith("stop 1") for w in want), "the driver's signal should stop at least once"
