"""Write the "graph" trace folder: breadth-first searches and PageRank on one graph in CSR form.

A workload written after every default was chosen, to check them on one they were not tuned to
(docs/results/held-out-workloads.md). What graph analytics has that the other workloads do not:

- **Grids that follow the frontier.** A breadth-first search expands one level per launch, on
  as many CTAs as the frontier holds vertices: a few at the first and last levels, dozens in the
  middle. The same three kernels run at every size between.
- **Work that depends on the data.** A warp's loop runs once per edge of its vertices, so warps
  of one launch run one to twelve iterations (skewed degrees), and the reads of neighbours'
  levels are scattered.
- **Atomics.** Visiting a vertex is a compare-and-swap; the frontier's size and PageRank's
  convergence test are reductions into one word.
- **Two phases on one graph.** The searches touch the graph level by level; PageRank then reads
  all of it every iteration, its vertex arrays warm in the L2 after the first.

Per search level: ``bfs_expand`` (frontier CTAs), ``bfs_compact`` (the next frontier's CTAs) and
``frontier_count`` (one CTA). Per PageRank iteration: ``spmv_csr``, ``pr_update`` and
``l1_diff_norm``. Two searches of eight levels and six iterations: 66 launches.

    python benchmarks/graph_workload.py OUT_FOLDER [--searches 2] [--levels 8] [--iterations 6] [--seed 0]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from simsample_accelsim.synth import KernelSpec, generate

KIB = 1 << 10
MIB = 1 << 20
ROOT = 0x7E0000000000
BLOCK = (128, 1, 1)
#: the widest frontier, in CTAs of 128 vertices
WIDEST = 48


def frontiers(searches: int, levels: int, seed: int) -> np.ndarray:
    """CTAs of frontier vertices per (search, level): a logistic rise and fall around a middle
    level drawn per search, with noise, at least one CTA."""
    rng = np.random.default_rng(seed)
    out = np.zeros((searches, levels), dtype=int)
    for s in range(searches):
        peak = rng.uniform(0.35, 0.6) * (levels - 1)
        width = rng.uniform(0.9, 1.6)
        level = np.arange(levels)
        shape = np.exp(-0.5 * ((level - peak) / width) ** 2)
        out[s] = np.maximum(1, np.round(WIDEST * shape * rng.uniform(0.8, 1.2, levels))).astype(int)
    return out


def kernel(name: str, base: int, ctas: int, body: tuple[str, ...], **kw) -> KernelSpec:
    return KernelSpec(name, grid=(ctas, 1, 1), block=BLOCK, nregs=32, body=body, base_address=base, **kw)


def graph_kernels(
    searches: int = 2, levels: int = 8, iterations: int = 6, seed: int = 0
) -> tuple[list[KernelSpec], list[tuple[int, int, int]]]:
    """The launches in order and the memcpys ``(before_launch, address, bytes)``."""
    row_ptr = ROOT
    col_idx = row_ptr + 1 * MIB
    level_of = col_idx + 8 * MIB
    frontier = level_of + 1 * MIB
    counter = frontier + 1 * MIB
    rank = counter + 64 * KIB
    rank_next = rank + 1 * MIB
    end = rank_next + 1 * MIB
    out: list[KernelSpec] = []
    sizes = frontiers(searches, levels, seed)
    for s in range(searches):
        for level in range(levels):
            ctas = int(sizes[s, level])
            nxt = int(sizes[s, level + 1]) if level + 1 < levels else 1
            out.append(
                kernel(
                    "_Z10bfs_expandPKiS0_PiS1_i",
                    col_idx + (level % 4) * 2 * MIB,
                    ctas,
                    ("LDG.E", "LDG.E", "ISETP.GE.AND", "ATOMG.E.CAS.STRONG.GPU", "STG.E"),
                    iters=(1, 12),
                    pattern="random",
                )
            )
            out.append(
                kernel(
                    "_Z11bfs_compactPKiPii", level_of, nxt, ("LDG.E", "ISETP.NE.AND", "STG.E"), iters=2, divergence=0.5
                )
            )
            out.append(kernel("_Z14frontier_countPKiPi", frontier, 1, ("LDG.E", "IADD3", "RED.E.ADD.STRONG.GPU")))
    for _ in range(iterations):
        out.append(
            kernel(
                "_Z8spmv_csrPKiS0_PKfPf",
                col_idx,
                40,
                ("LDG.E", "LDG.E", "LDG.E", "FFMA"),
                iters=(2, 10),
                pattern="random",
            )
        )
        out.append(kernel("_Z9pr_updatePfPKfff", rank, 16, ("LDG.E", "LDG.E", "FFMA", "STG.E"), iters=2))
        out.append(kernel("_Z12l1_diff_normPKfS0_Pf", rank_next, 8, ("LDG.E", "LDG.E", "FADD", "RED.E.ADD.F32.FTZ.RN")))
    return out, [(0, ROOT, end - ROOT)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--searches", type=int, default=2)
    ap.add_argument("--levels", type=int, default=8)
    ap.add_argument("--iterations", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    least = {"searches": 1, "levels": 1, "iterations": 0}
    return generate(ap, argv, least, lambda a: graph_kernels(a.searches, a.levels, a.iterations, a.seed))


if __name__ == "__main__":
    raise SystemExit(main())
