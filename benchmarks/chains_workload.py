"""Write the "chains" trace folder: producer -> consumer chains at several distances, for warm-up measurements.

Each of three steps launches two producers (each writes its own buffer), fillers that read and
write other buffers, and two consumers (of different kernels) that read the producers' buffers
3 and 5 launches later:

    prodA fill fill consA prodB fill fill fill fill consB      (x 3 steps, new buffers per step)

A consumer simulated without its producer finds its input in DRAM rather than in L2 (Accel-Sim
keeps L2 across kernels): the error that warm-up must remove. Its immediate predecessor is a
filler, so warming with the K = 1 preceding launch misses the producer. Buffers are up to 512
KiB; the workload is small enough to simulate fully in a few minutes.

    python benchmarks/chains_workload.py OUT_FOLDER
"""

from __future__ import annotations

import sys
from pathlib import Path

from simsample_accelsim.synth import KernelSpec, write_workload

MIB = 1 << 20


def chains_kernels() -> list[KernelSpec]:
    block, iters = (256, 1, 1), 8  # a 64-CTA grid: 512 warps x 8 iterations x 128 bytes = 512 KiB per buffer

    def k(name: str, base: int, body: tuple[str, ...], ctas: int = 64) -> KernelSpec:
        return KernelSpec(name, grid=(ctas, 1, 1), block=block, body=body, iters=iters, base_address=base, nregs=32)

    out: list[KernelSpec] = []
    for step in range(3):
        root = 0x7F0000000000 + step * 64 * MIB
        a, b = root, root + 8 * MIB
        fill = [root + (16 + 2 * i) * MIB for i in range(6)]
        produce = ("FFMA", "FFMA", "STG.E")
        consume = ("LDG.E", "FFMA", "FFMA", "FADD")
        filler = ("LDG.E", "FFMA", "STG.E")
        out += [
            k("_Z7producePf", a, produce),
            k("_Z4fillPf", fill[0], filler),
            k("_Z4fillPf", fill[1], filler),
            k("_Z8consumeAPKf", a, consume),
            k("_Z7producePf", b, produce, 48),
            k("_Z4fillPf", fill[2], filler),
            k("_Z4fillPf", fill[3], filler),
            k("_Z4fillPf", fill[4], filler),
            k("_Z4fillPf", fill[5], filler),
            k("_Z8consumeBPKf", b, consume, 48),
        ]
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 1
    write_workload(Path(argv[0]), chains_kernels(), seed=0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
