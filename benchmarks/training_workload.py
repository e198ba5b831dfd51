"""Write the "training" trace folder: training steps of an MLP with split-K weight gradients.

What a training step has that a sampler must not be fooled by, at a size Accel-Sim simulates
fully in minutes:

- **One kernel at several shapes.** Forward, data-gradient and weight-gradient GEMMs are one
  kernel (``gemm_tiled``). The weight gradient is split along K (a quarter of the CTAs, four
  times the loop, then ``splitk_reduce``): the same warp instructions as the forward GEMM of
  its layer, on a quarter of the SMs. Layers differ in width (two sizes of GEMM).
- **Producers re-read many launches later.** The forward pass saves each layer's activation,
  which the backward pass reads in reverse order, 2 to 32 launches later; the optimiser re-reads
  every layer's weights and gradients. A step touches about 7 MiB, more than the 6 MiB L2 of
  SM7_QV100, so what a sampled launch finds in L2 depends on far more than its last few
  predecessors.

Per step: per layer ``gemm_tiled`` (forward), ``bias_relu`` (saves the activation); a
``softmax_xent`` loss; per layer in reverse ``relu_backward`` (reads the saved activation),
``gemm_tiled`` (data gradient), ``gemm_tiled`` split-K (weight gradient), ``splitk_reduce``;
per layer ``adam_update``. 6 layers x 3 steps = 129 launches.

    python benchmarks/training_workload.py OUT_FOLDER [--layers 6] [--steps 4]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from simsample_accelsim.synth import KernelSpec, tiled_gemm, write_workload

KIB = 1 << 10
ROOT = 0x7E0000000000
BLOCK = (128, 1, 1)


def _span(iters: int) -> int:
    return iters * 32 * 16  # one LDG.E.128 per iteration: 512 bytes, a warp's own lines


def streaming(name: str, base: int, ctas: int, body: tuple[str, ...], iters: int, nregs: int = 24) -> KernelSpec:
    """A kernel reading (and writing) ``ctas x 4 warps x iters x 512`` bytes from ``base`` once."""
    return KernelSpec(
        name,
        grid=(ctas, 1, 1),
        block=BLOCK,
        nregs=nregs,
        body=body,
        iters=iters,
        stride=16,
        warp_span=_span(iters),
        base_address=base,
    )


def training_kernels(layers: int = 6, steps: int = 4) -> tuple[list[KernelSpec], list[tuple[int, int, int]]]:
    """The launches in order and the memcpys ``(before_launch, address, bytes)``."""
    ctas = [48 if layer < layers // 2 else 24 for layer in range(layers)]  # wide, then narrow layers
    size = {layer: ctas[layer] * 4 * _span(4) for layer in range(layers)}  # bytes a GEMM of the layer reads
    cursor = ROOT
    weight, grad, saved = {}, {}, {}
    for layer in range(layers):
        weight[layer] = cursor
        grad[layer] = cursor + size[layer]
        saved[layer] = cursor + 2 * size[layer]
        cursor += 4 * size[layer]
    batch, logits = cursor, cursor + 512 * KIB
    out: list[KernelSpec] = []
    for _ in range(steps):
        for layer in range(layers):
            out.append(tiled_gemm(weight[layer], ctas[layer], 4))
            out.append(
                streaming(
                    "_Z9bias_reluPfPKf", saved[layer], ctas[layer], ("LDG.E.128", "FADD", "FMNMX", "STG.E.128"), 4
                )
            )
        out.append(
            KernelSpec(
                "_Z12softmax_xentPKfPKiPf",
                grid=(16, 1, 1),
                block=BLOCK,
                shmem=4 * KIB,
                nregs=40,
                body=("LDG.E.128", "FMNMX", "MUFU.EX2", "FADD", "STS", "BAR.SYNC", "LDS", "FADD"),
                iters=4,
                base_address=logits,
            )
        )
        for layer in reversed(range(layers)):
            out.append(
                streaming(
                    "_Z13relu_backwardPfPKf",
                    saved[layer],
                    ctas[layer],
                    ("LDG.E.128", "FSETP.GT.AND", "FSEL", "STG.E.128"),
                    4,
                )
            )
            out.append(tiled_gemm(weight[layer], ctas[layer], 4))  # data gradient: the weights again
            out.append(
                tiled_gemm(saved[layer], ctas[layer] // 4, 16)
            )  # weight gradient, split-K: a quarter of the CTAs
            out.append(
                streaming(
                    "_Z13splitk_reducePKfPfi", grad[layer], ctas[layer], ("LDG.E.128", "FADD", "FADD", "STG.E.128"), 4
                )
            )
        for layer in range(layers):
            out.append(
                streaming(
                    "_Z11adam_updatePfPKfS_S_f",
                    weight[layer],
                    2 * ctas[layer],
                    ("LDG.E.128", "LDG.E.128", "FFMA", "FMUL", "MUFU.RSQ", "FFMA", "STG.E.128"),
                    4,
                    nregs=32,
                )
            )
    memcpys = [(0, ROOT, cursor - ROOT), (0, batch, 512 * KIB)]
    return out, memcpys


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--steps", type=int, default=3)
    args = ap.parse_args(argv)
    kernels, memcpys = training_kernels(args.layers, args.steps)
    write_workload(args.out, kernels, seed=0, memcpys=memcpys)
    print(f"{args.out}: {len(kernels)} launches, {len(memcpys)} memcpys")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
