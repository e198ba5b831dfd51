"""Write the "amr" trace folder: a hydrodynamics run on an adaptively refined mesh.

A workload written after the estimator fitted the cycles on the features' model over a
cluster's draws (docs/reference/estimator.md, "The cycles' slope on the model"), to check that
change on one it was not chosen on (docs/results/held-out-workloads.md). What amr has that the
other workloads do not:

- **One kernel at a size the mesh decides.** Each step sweeps the fluxes of every refinement
  level, one launch a level, with as many CTAs as the level has patches: the coarse level's
  sixteen, the finer levels' a seeded number that follows the refinement (a finer level appears
  after eight steps). Its launches differ in instructions by their patches, and in cycles far
  less where a few patches leave most SMs idle.
- **Work between levels that depends on the data.** After each fine level's sweep the fluxes
  are restricted to the coarser level over the patches' borders (a few CTAs, a seeded count),
  and every four steps the cells are tagged (divergent warps), the tags scanned on one CTA and
  the patches copied to their new places (a seeded volume).
- **A reduction every step and a checkpoint every eight**: the CFL condition's minimum on one
  CTA, and a wide copy of the coarse state.

    python benchmarks/amr_workload.py OUT_FOLDER [--steps 24] [--seed 0]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from simsample_accelsim.synth import KernelSpec, elementwise, generate

KIB = 1 << 10
ROOT = 0x7D0000000000
#: CTAs of the coarse level's sweep (one a patch, four warps each)
COARSE = 16
FLUX_BODY = ("LDG.E.128", "LDG.E.128", "FADD", "FADD", "FMUL", "MUFU.RCP", "FFMA", "FFMA", "STG.E.128")


def amr_kernels(steps: int = 24, seed: int = 0) -> tuple[list[KernelSpec], list[tuple[int, int, int]]]:
    """The launches in order and the memcpys ``(before_launch, address, bytes)``."""
    rng = np.random.default_rng(seed)
    state = [ROOT + level * 1024 * KIB for level in range(3)]
    flux, tags, scratch = ROOT + 3072 * KIB, ROOT + 4096 * KIB, ROOT + 5120 * KIB
    out: list[KernelSpec] = []
    memcpys = [(0, ROOT, 3072 * KIB)]
    patches = [COARSE, 6, 0]
    for step in range(steps):
        if step % 4 == 0:  # regrid: the refinement follows the flow
            patches[1] = int(rng.integers(4, 13))
            patches[2] = int(rng.integers(1, 9)) if step >= 8 else 0
            out.append(
                KernelSpec(
                    "_Z10tag_cellsPKfPi",
                    grid=(COARSE, 1, 1),
                    block=(128, 1, 1),
                    nregs=32,
                    body=("LDG.E.128", "FADD", "FSETP.GT.AND", "STG.E"),
                    iters=3,
                    divergence=0.3,
                    base_address=state[0],
                )
            )
            out.append(
                KernelSpec(
                    "_Z11regrid_scanPi",
                    grid=(1, 1, 1),
                    block=(256, 1, 1),
                    shmem=4 * KIB,
                    nregs=32,
                    body=("LDS", "IADD3", "STS", "BAR.SYNC"),
                    iters=6,
                    base_address=tags,
                )
            )
            moved = int(rng.integers(2, 11))  # patches that move this regrid, a CTA each
            out.append(elementwise("_Z11regrid_copyPKfPf", scratch, moved, ("LDG.E.128", "STG.E.128"), iters=4))
        for level, n in enumerate(patches):
            if n == 0:
                continue
            out.append(
                KernelSpec(
                    "_Z10flux_sweepPKfPfii",
                    grid=(n, 1, 1),
                    block=(128, 1, 1),
                    nregs=64,
                    body=FLUX_BODY,
                    iters=6 + 2 * level,  # finer patches hold more cells a warp
                    pattern="strided",
                    stride=8,
                    base_address=state[level],
                )
            )
            out.append(
                elementwise(
                    "_Z12update_statePfPKfi",
                    state[level],
                    n,
                    ("LDG.E.128", "LDG.E.128", "FFMA", "STG.E.128"),
                    iters=2 + level,
                )
            )
            if level > 0:
                border = int(rng.integers(1, n + 1))  # the fine patches that touch a coarse one
                out.append(
                    KernelSpec(
                        "_Z13restrict_fluxPKfPfi",
                        grid=(border, 1, 1),
                        block=(64, 1, 1),
                        nregs=40,
                        body=("LDG.E.128", "FMUL", "FADD", "RED.E.ADD.F32.FTZ.RN.STRONG.GPU"),
                        iters=3,
                        pattern="random",
                        base_address=flux,
                    )
                )
        out.append(
            KernelSpec(
                "_Z10cfl_reducePKfPf",
                grid=(1, 1, 1),
                block=(256, 1, 1),
                shmem=2 * KIB,
                nregs=32,
                body=("LDG.E.128", "FMNMX", "SHFL.BFLY", "FMNMX"),
                iters=4,
                base_address=state[0],
            )
        )
        if step % 8 == 7:
            out.append(elementwise("_Z10checkpointPKfPf", state[0], 4 * COARSE, ("LDG.E.128", "STG.E.128"), iters=4))
    return out, memcpys


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--steps", type=int, default=24, help="time steps")
    ap.add_argument("--seed", type=int, default=0, help="the refinement's and the regrids' seed")
    return generate(ap, argv, {"steps": 1, "seed": 0}, lambda a: amr_kernels(a.steps, a.seed))


if __name__ == "__main__":
    raise SystemExit(main())
