"""Write the "moe" trace folder: forward steps of mixture-of-experts layers with uneven routing.

A workload written after every default was chosen, to check them on one they were not tuned to
(docs/results/held-out-workloads.md). What a mixture-of-experts layer has that the other
workloads do not:

- **Load imbalance that changes every step.** The router sends each step's tokens to four
  experts in different proportions; an expert's GEMMs run on as many CTAs as it got tokens (one
  to twelve), and an expert that got none is not launched. The same GEMM kernel runs at a dozen
  grid sizes, decided by data, not by the model's shapes.
- **Gathers and scatters.** Tokens are permuted to their experts and back (random addresses).
- **Weights larger than the L2.** Four experts of 1 MiB per layer, two layers (9 MiB with the
  router): a step's expert weights have left the 6 MiB L2 of SM7_QV100 by the next step, but an
  expert's down projection re-reads what its up projection wrote just before.

Per step and layer: ``layernorm``, the router GEMM, ``moe_topk_softmax``, ``moe_permute``; per
expert with tokens: up GEMM, ``gelu``, down GEMM; then ``moe_unpermute`` and ``residual_add``.
Two layers x 3 steps (the routing drawn with ``--seed``): 90 launches at the default seed.

    python benchmarks/moe_workload.py OUT_FOLDER [--layers 2] [--steps 3] [--seed 0]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from simsample_accelsim.synth import KernelSpec, elementwise, generate, tiled_gemm

KIB = 1 << 10
MIB = 1 << 20
ROOT = 0x7D0000000000
EXPERTS = 4
TOKENS = 16  # CTAs' worth of tokens routed per step and layer
#: the experts' and router's GEMM loop: four FMAs where the other workloads' GEMMs have six
GEMM_BODY = ("LDG.E.128", "LDG.E.128", "STS.128", "BAR.SYNC", "LDS.U.128", "FFMA", "FFMA", "FFMA", "FFMA")


def routing(layers: int, steps: int, seed: int) -> np.ndarray:
    """CTAs of tokens per (step, layer, expert): a multinomial draw of :data:`TOKENS` over the
    experts, their popularity itself drawn per step (some steps send most tokens to one)."""
    rng = np.random.default_rng(seed)
    out = np.zeros((steps, layers, EXPERTS), dtype=int)
    for s in range(steps):
        for layer in range(layers):
            out[s, layer] = rng.multinomial(TOKENS, rng.dirichlet(np.full(EXPERTS, 0.8)))
    return out


def moe_kernels(layers: int = 2, steps: int = 3, seed: int = 0) -> tuple[list[KernelSpec], list[tuple[int, int, int]]]:
    """The launches in order and the memcpys ``(before_launch, address, bytes)``."""
    cursor = ROOT
    router, experts = {}, {}
    for layer in range(layers):
        router[layer] = cursor
        cursor += 256 * KIB
        for e in range(EXPERTS):
            experts[layer, e] = cursor  # up (512 KiB) then down (512 KiB)
            cursor += 1 * MIB
    weights_end = cursor
    hidden = cursor + 16 * MIB
    permuted = hidden + 2 * MIB
    scratch = permuted + 2 * MIB
    load = routing(layers, steps, seed)
    out: list[KernelSpec] = []
    for s in range(steps):
        for layer in range(layers):
            out.append(
                elementwise(
                    "_Z9layernormPKfPfi", hidden, 8, ("LDG.E.128", "FADD", "FMUL", "MUFU.RSQ", "FMUL", "STG.E.128")
                )
            )
            out.append(tiled_gemm(router[layer], 2, 4, body=GEMM_BODY))
            out.append(
                elementwise("_Z16moe_topk_softmaxPKfPiPf", scratch, 4, ("LDG.E", "FMNMX", "MUFU.EX2", "FADD", "STG.E"))
            )
            out.append(
                elementwise("_Z11moe_permutePKfPKiPf", hidden, 8, ("LDG.E", "LDG.E.128", "STG.E.128"), pattern="random")
            )
            for e in range(EXPERTS):
                ctas = int(load[s, layer, e])
                if ctas == 0:
                    continue
                out.append(tiled_gemm(experts[layer, e], ctas, 8, body=GEMM_BODY))
                out.append(
                    elementwise("_Z4geluPf", permuted, ctas, ("LDG.E.128", "FMUL", "MUFU.TANH", "FFMA", "STG.E.128"))
                )
                out.append(tiled_gemm(experts[layer, e] + 512 * KIB, ctas, 8, body=GEMM_BODY))
            out.append(
                elementwise(
                    "_Z13moe_unpermutePKfPKiS0_Pf",
                    permuted,
                    8,
                    ("LDG.E", "LDG.E.128", "FMUL", "RED.E.ADD.F32.FTZ.RN"),
                    pattern="random",
                )
            )
            out.append(elementwise("_Z12residual_addPfPKf", hidden, 8, ("LDG.E.128", "LDG.E.128", "FADD", "STG.E.128")))
    return out, [(0, ROOT, weights_end - ROOT)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    return generate(ap, argv, {"layers": 1, "steps": 1}, lambda a: moe_kernels(a.layers, a.steps, a.seed))


if __name__ == "__main__":
    raise SystemExit(main())
