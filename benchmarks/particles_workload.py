"""Write the "particles" trace folder: a molecular-dynamics run with cell lists.

A workload written after the estimator took the features' model of the cycles' spread in place
of the warp instructions' (docs/reference/estimator.md, "The model's spread on trace features"),
to check that change on one it was not measured on (docs/results/held-out-workloads.md). What
particles has that the other workloads do not:

- **Work that follows the physics.** The particles gather as the run goes on: the force kernel's
  warps loop over more neighbours step by step (each warp its own count, from a seeded draw),
  and its loads gather positions at random.
- **Short launches whose work is data.** Each step resolves the collisions it found (1 to 12
  pairs a warp-round, one CTA) and exchanges the boundary cells with the neighbouring domain
  (2 to 8 CTAs, one wave): instructions that change from step to step around a launch latency
  that does not.
- **Rebuilds and reductions on their own periods.** The neighbour list is rebuilt every four
  steps, and the kinetic energy reduced and the thermostat applied every six.

Per step: ``assign_cells``, ``scan_cells`` (one CTA), ``sort_by_cell``, ``neighbor_forces``,
``resolve_collisions``, ``halo_exchange`` and ``integrate``.

    python benchmarks/particles_workload.py OUT_FOLDER [--steps 32] [--seed 0]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from simsample_accelsim.synth import KernelSpec, elementwise, generate

KIB = 1 << 10
ROOT = 0x7C0000000000
#: CTAs of the kernels over every particle (four warps each)
WIDE = 16


def particles_kernels(steps: int = 32, seed: int = 0) -> tuple[list[KernelSpec], list[tuple[int, int, int]]]:
    """The launches in order and the memcpys ``(before_launch, address, bytes)``."""
    rng = np.random.default_rng(seed)
    pos, vel, force = ROOT, ROOT + 512 * KIB, ROOT + 1024 * KIB
    cells, neighbors, halo = ROOT + 1536 * KIB, ROOT + 2048 * KIB, ROOT + 4096 * KIB
    out: list[KernelSpec] = []
    memcpys = [(0, ROOT, 1536 * KIB)]
    for step in range(steps):
        if step % 4 == 0:
            out.append(
                KernelSpec(
                    "_Z17rebuild_neighborsPKfPKiPi",
                    grid=(2 * WIDE, 1, 1),
                    block=(128, 1, 1),
                    nregs=48,
                    body=("LDG.E", "LDG.E.128", "FADD", "FFMA", "FSETP.LT.AND", "STG.E"),
                    iters=12,
                    pattern="random",
                    base_address=neighbors,
                )
            )
        out.append(
            elementwise("_Z12assign_cellsPKfPii", pos, WIDE, ("LDG.E.128", "FMUL", "F2I.TRUNC", "RED.E.ADD.STRONG.GPU"))
        )
        out.append(
            KernelSpec(
                "_Z10scan_cellsPi",
                grid=(1, 1, 1),
                block=(256, 1, 1),
                shmem=4 * KIB,
                nregs=32,
                body=("LDS", "IADD3", "STS", "BAR.SYNC"),
                iters=8,
                base_address=cells,
            )
        )
        out.append(
            elementwise("_Z12sort_by_cellPKiPf", cells, WIDE, ("LDG.E", "LDG.E.128", "STG.E.128"), pattern="random")
        )
        density = 4 + step // 3  # the particles gather: more neighbours a warp, step by step
        out.append(
            KernelSpec(
                "_Z15neighbor_forcesPKfPKiPf",
                grid=(WIDE, 1, 1),
                block=(128, 1, 1),
                nregs=64,
                body=("LDG.E", "LDG.E.128", "FADD", "FADD", "FMUL", "MUFU.RSQ", "FFMA", "FFMA", "FFMA"),
                iters=(density, 2 * density),
                pattern="random",
                base_address=pos,
            )
        )
        collisions = int(rng.integers(1, 13))  # pairs found this step, a warp-round each
        out.append(
            KernelSpec(
                "_Z18resolve_collisionsPfPKii",
                grid=(1, 1, 1),
                block=(64, 1, 1),
                nregs=40,
                body=("LDG.E.128", "LDG.E.128", "FADD", "FFMA", "FSETP.GT.AND", "STG.E.128"),
                iters=collisions,
                pattern="random",
                base_address=vel,
            )
        )
        boundary = int(rng.integers(2, 9))  # boundary cells this step, a CTA each
        out.append(
            KernelSpec(
                "_Z13halo_exchangePKfPf",
                grid=(boundary, 1, 1),
                block=(128, 1, 1),
                nregs=32,
                body=("LDG.E.128", "STG.E.128"),
                iters=4,
                base_address=halo,
            )
        )
        out.append(
            elementwise("_Z9integratePfS_PKf", vel, WIDE, ("LDG.E.128", "LDG.E.128", "FFMA", "FFMA", "STG.E.128"))
        )
        if step % 6 == 5:
            out.append(
                KernelSpec(
                    "_Z14kinetic_energyPKfPf",
                    grid=(4, 1, 1),
                    block=(256, 1, 1),
                    nregs=32,
                    body=("LDG.E.128", "FMUL", "FFMA", "SHFL.BFLY", "FADD"),
                    iters=4,
                    base_address=vel,
                )
            )
            out.append(
                KernelSpec(
                    "_Z10thermostatPfPKf",
                    grid=(1, 1, 1),
                    block=(32, 1, 1),
                    nregs=24,
                    body=("LDG.E", "FMUL", "STG.E"),
                    iters=1,
                    base_address=force,
                )
            )
    return out, memcpys


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--steps", type=int, default=32, help="time steps")
    ap.add_argument("--seed", type=int, default=0, help="the collisions' and boundary's seed")
    return generate(ap, argv, {"steps": 1, "seed": 0}, lambda a: particles_kernels(a.steps, a.seed))


if __name__ == "__main__":
    raise SystemExit(main())
