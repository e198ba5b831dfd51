"""Write the "solver" trace folder: a 2-D iterative solver's time loop, hundreds of launches.

A workload written after every default was chosen, to check them on one they were not tuned to
(docs/results/held-out-workloads.md). What an iterative solver has that the other workloads do
not:

- **Hundreds of launches of a few kernels.** Every step relaxes the grid and fixes its
  boundary; the trace is mostly two kernels repeated, as real solvers' traces are, so a sampler
  simulates a few of many and the speedup is large: the regime where a plan's few draws stand
  for the most launches.
- **Ping-pong buffers.** The relaxation reads one grid and writes the other, then the other way
  round: launches of equal instructions whose data alternate between two buffers, both of which
  fit in the L2.
- **Interruptions that change the cache.** Every tenth step a residual norm (a reduction and
  one CTA to finish it); every twenty-fifth a multigrid V-cycle (restriction and prolongation at
  grids of 80, 20 and 5 CTAs, a smoother at each coarse level); every hundredth a checkpoint that
  writes the grid to a fresh buffer, streaming it through the L2. The relaxation after each
  meets a cache the previous step did not leave.

Per step: ``jacobi5`` (80 CTAs of eight warps) and ``apply_bc`` (2 CTAs). Two hundred steps: 498 launches.

    python benchmarks/solver_workload.py OUT_FOLDER [--steps 200] [--residual-every 10]
        [--vcycle-every 25] [--checkpoint-every 100]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from simsample_accelsim.synth import KernelSpec, generate

KIB = 1 << 10
MIB = 1 << 20
ROOT = 0x7C0000000000
BLOCK = (256, 1, 1)
#: the fine grid's relaxation, in CTAs of 128 points a warp iteration
FINE = 80
#: the coarse levels' CTAs, fine to coarse
LEVELS = (80, 20, 5)
STENCIL = ("LDG.E", "LDG.E", "LDG.E", "LDG.E", "LDG.E", "FADD", "FADD", "FADD", "FFMA", "STG.E")


def kernel(name: str, base: int, ctas: int, body: tuple[str, ...], iters: int = 8, **kw) -> KernelSpec:
    """A launch whose warps each read and write lines of their own (``iters`` x 128 bytes)."""
    return KernelSpec(
        name,
        grid=(ctas, 1, 1),
        block=BLOCK,
        nregs=32,
        body=body,
        base_address=base,
        iters=iters,
        warp_span=iters * 128,
        **kw,
    )


def solver_kernels(
    steps: int = 200, residual_every: int = 10, vcycle_every: int = 25, checkpoint_every: int = 100
) -> tuple[list[KernelSpec], list[tuple[int, int, int]]]:
    """The launches in order and the memcpys ``(before_launch, address, bytes)``."""
    grid_a = ROOT
    grid_b = grid_a + 1 * MIB
    coarse = grid_b + 1 * MIB  # one 256 KiB buffer per coarse level
    norm = coarse + len(LEVELS) * 256 * KIB
    checkpoints = norm + 64 * KIB  # a fresh 1 MiB buffer per checkpoint
    out: list[KernelSpec] = []
    for step in range(1, steps + 1):
        src, dst = (grid_a, grid_b) if step % 2 else (grid_b, grid_a)
        out.append(kernel("_Z7jacobi5PKfPfii", src, FINE, STENCIL))
        out.append(kernel("_Z8apply_bcPfii", dst, 2, ("LDG.E", "ISETP.EQ.AND", "STG.E"), iters=1, divergence=0.5))
        if residual_every and step % residual_every == 0:
            out.append(
                kernel(
                    "_Z13residual_normPKfS0_Pf", dst, FINE, ("LDG.E", "LDG.E", "FADD", "FFMA", "RED.E.ADD.F32.FTZ.RN")
                )
            )
            out.append(kernel("_Z12reduce_finalPfi", norm, 1, ("LDG.E", "FADD", "STG.E"), iters=1))
        if vcycle_every and step % vcycle_every == 0:
            for level, ctas in enumerate(LEVELS):
                if level + 1 < len(LEVELS):
                    out.append(
                        kernel(
                            "_Z8restrictPKfPfi",
                            coarse + level * 256 * KIB,
                            LEVELS[level + 1],
                            STENCIL[:4] + ("FADD", "FMUL", "STG.E"),
                        )
                    )
                out.append(kernel("_Z6smoothPfPKfi", coarse + level * 256 * KIB, ctas, STENCIL, iters=3))
            for level in range(len(LEVELS) - 1, 0, -1):
                out.append(
                    kernel(
                        "_Z7prolongPKfPfi",
                        coarse + (level - 1) * 256 * KIB,
                        LEVELS[level - 1],
                        ("LDG.E", "LDG.E", "FFMA", "STG.E"),
                    )
                )
        if checkpoint_every and step % checkpoint_every == 0:
            fresh = checkpoints + (step // checkpoint_every - 1) * MIB
            out.append(kernel("_Z10checkpointPKfPf", fresh, FINE, ("LDG.E", "STG.E", "STG.E"), iters=4))
    return out, [(0, ROOT, checkpoints - ROOT)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--residual-every", type=int, default=10, help="0: no residual checks")
    ap.add_argument("--vcycle-every", type=int, default=25, help="0: no V-cycles")
    ap.add_argument("--checkpoint-every", type=int, default=100, help="0: no checkpoints")
    least = {"steps": 1, "residual_every": 0, "vcycle_every": 0, "checkpoint_every": 0}
    return generate(
        ap, argv, least, lambda a: solver_kernels(a.steps, a.residual_every, a.vcycle_every, a.checkpoint_every)
    )


if __name__ == "__main__":
    raise SystemExit(main())
