"""Write the "serving" trace folder: a language model's decode steps under continuous batching.

A workload written after margin version 7 and the model's spread in the estimator were chosen,
to check them on one they were not tuned to (docs/results/held-out-workloads.md). What serving
has that the other workloads do not:

- **A batch that changes every step.** Requests arrive and finish (a seeded random schedule), so
  every decode step runs its kernels on as many CTAs as requests are active (1 to 16): the same
  kernels at a dozen shapes, in an order no period repeats.
- **Attention over contexts of every length.** Each request's context grows by one token a step
  from its own prompt length; attention's loop follows the batch's mean context and its CTAs
  the batch, so its warp instructions differ from launch to launch.
- **Prefills between decodes.** A step where requests arrive first runs their prefill, wide
  GEMMs that stream their prompts through the L2 once.

Per decode step and layer: ``rmsnorm``, the QKV GEMM, ``attention``, the output GEMM,
``residual_add``, the MLP's up GEMM, ``silu_mul`` and down GEMM; then the head GEMM and
``sample_tokens``. 2 layers, 20 steps; a prefill GEMM and attention per layer where requests
arrive.

    python benchmarks/serving_workload.py OUT_FOLDER [--steps 20] [--layers 2] [--seed 0]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from simsample_accelsim.synth import KernelSpec, elementwise, generate, tiled_gemm

KIB = 1 << 10
MIB = 1 << 20
ROOT = 0x7B0000000000
BLOCK = (128, 1, 1)  # four warps
#: the most requests active at once, and a request's prompt and output lengths (tokens)
MAX_BATCH, PROMPT, OUTPUT = 16, (32, 256), (4, 16)
#: the most requests whose prefill one step runs (the rest wait for the next step)
MAX_ARRIVALS = 4


def schedule(steps: int, seed: int) -> list[tuple[list[int], int]]:
    """Per decode step, the context length of every active request and how many arrived at it
    (their prefill runs first): Poisson arrivals, each request leaving after its output length."""
    rng = np.random.default_rng(seed)
    active: list[list[int]] = []  # [context, tokens left]
    out = []
    for _ in range(steps):
        arrivals = min(int(rng.poisson(1.2)), MAX_ARRIVALS, MAX_BATCH - len(active))
        for _ in range(arrivals):
            active.append([int(rng.integers(*PROMPT)), int(rng.integers(*OUTPUT))])
        if not active:  # an idle server waits for the next request: say it arrives now
            active.append([int(rng.integers(*PROMPT)), int(rng.integers(*OUTPUT))])
            arrivals = 1
        out.append(([c for c, _ in active], arrivals))
        for r in active:
            r[0] += 1
            r[1] -= 1
        active = [r for r in active if r[1] > 0]
    return out


def serving_kernels(
    steps: int = 20, layers: int = 2, seed: int = 0
) -> tuple[list[KernelSpec], list[tuple[int, int, int]]]:
    """The launches in order and the memcpys ``(before_launch, address, bytes)``."""
    cursor = ROOT
    weights = {}
    for layer in range(layers):
        for part, size in (("qkv", 192 * KIB), ("o", 64 * KIB), ("up", 256 * KIB), ("down", 256 * KIB)):
            weights[layer, part] = cursor
            cursor += size
    weights["head"] = cursor
    cursor += 512 * KIB
    weight_bytes = cursor - ROOT
    kv = {layer: cursor + layer * 4 * MIB for layer in range(layers)}
    hidden = cursor + layers * 4 * MIB
    scratch = hidden + 256 * KIB
    prompts = scratch + 512 * KIB  # a fresh buffer per prefill
    out: list[KernelSpec] = []
    memcpys: list[tuple[int, int, int]] = [(0, ROOT, weight_bytes)]
    for step, (contexts, arrivals) in enumerate(schedule(steps, seed)):
        batch = len(contexts)
        if arrivals:
            prompt = prompts + step * 256 * KIB
            memcpys.append((len(out), prompt, 64 * KIB * arrivals))
            for layer in range(layers):
                out.append(tiled_gemm(prompt, 16 * arrivals, 2))  # the new prompts through the layer
                out.append(
                    KernelSpec(
                        "_Z16prefill_attentionPKfS0_Pfi",
                        grid=(4 * arrivals, 1, 1),
                        block=BLOCK,
                        shmem=16 * KIB,
                        nregs=64,
                        body=("LDG.E.128", "FFMA", "FFMA", "FMNMX", "MUFU.EX2", "FADD"),
                        iters=8,
                        stride=16,
                        base_address=kv[layer],
                    )
                )
        span = max(1, round(sum(contexts) / batch / 32))  # attention's loop: the batch's mean context
        half = max(1, (batch + 1) // 2)
        for layer in range(layers):
            out.append(
                elementwise("_Z7rmsnormPKfPfi", hidden, batch, ("LDG.E.128", "FFMA", "MUFU.RSQ", "FMUL", "STG.E.128"))
            )
            out.append(tiled_gemm(weights[layer, "qkv"], half, 6))
            out.append(
                KernelSpec(
                    "_Z15decode_attentionPKfS0_Pfi",
                    grid=(batch, 1, 1),
                    block=BLOCK,
                    shmem=16 * KIB,
                    nregs=64,
                    body=("LDG.E.128", "FFMA", "FFMA", "FMNMX", "MUFU.EX2", "FADD", "FFMA"),
                    iters=span,
                    stride=16,
                    warp_span=span * 32 * 16,
                    base_address=kv[layer],
                )
            )
            out.append(tiled_gemm(weights[layer, "o"], half, 2))
            out.append(
                elementwise("_Z12residual_addPfPKf", hidden, batch, ("LDG.E.128", "LDG.E.128", "FADD", "STG.E.128"))
            )
            out.append(tiled_gemm(weights[layer, "up"], batch, 4))
            out.append(
                elementwise("_Z8silu_mulPfPKf", scratch, batch, ("LDG.E.128", "MUFU.EX2", "FMUL", "FMUL", "STG.E.128"))
            )
            out.append(tiled_gemm(weights[layer, "down"], batch, 4))
        out.append(tiled_gemm(weights["head"], max(1, batch // 2), 16))
        out.append(
            KernelSpec(
                "_Z13sample_tokensPKfPii",
                grid=(batch, 1, 1),
                block=BLOCK,
                nregs=40,
                body=("LDG.E", "FSETP.GT.AND", "SHFL.BFLY", "FMNMX", "STG.E"),
                iters=4,
                base_address=scratch,
            )
        )
    return out, memcpys


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--steps", type=int, default=20, help="decode steps")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0, help="the arrival schedule's seed")
    return generate(
        ap, argv, {"steps": 1, "layers": 1, "seed": 0}, lambda a: serving_kernels(a.steps, a.layers, a.seed)
    )


if __name__ == "__main__":
    raise SystemExit(main())
