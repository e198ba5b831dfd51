"""Write the bundled example trace folder: Accel-Sim traces of a small synthetic workload.

Four "steps" of three kernels (a GEMM in two grid sizes, an element-wise ReLU, a divergent
reduction with atomics), 40 launches in all, written by the adapter's own trace writer
(``simsample_accelsim.synth``) and xz-compressed as users usually store traces. Seeded, so
running it again reproduces the committed files::

    python examples/generate_example_traces.py examples/traces
"""

from __future__ import annotations

import dataclasses
import shutil
import sys
from pathlib import Path

from simsample_accelsim.synth import KernelSpec, write_workload

SEED = 7


def kernels() -> list[KernelSpec]:
    gemm = KernelSpec(
        "_Z4gemmPKfS0_Pf",
        grid=(8, 4, 1),
        block=(128, 1, 1),
        shmem=16384,
        nregs=96,
        body=("LDG.E.128", "STS.128", "BAR.SYNC", "LDS.U.128", "FFMA", "FFMA", "FFMA", "FFMA"),
        iters=4,
    )
    gemm_big = dataclasses.replace(gemm, grid=(16, 8, 1), iters=6)
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
    step = [gemm, relu, gemm_big, relu, red, gemm, relu, red, gemm_big, relu]
    return step * 4


def main(out: str) -> None:
    folder = Path(out)
    if folder.exists():
        shutil.rmtree(folder)
    ks = kernels()
    memcpys = [
        (0, 0x00007F5A40000000, 1 << 20),
        (0, 0x00007F5A40400000, 1 << 18),
        (10, 0x00007F5A40800000, 1 << 16),
        (20, 0x00007F5A40800000, 1 << 16),
        (30, 0x00007F5A40800000, 1 << 16),
    ]
    write_workload(folder, ks, SEED, xz=True, memcpys=memcpys)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "examples/traces")
