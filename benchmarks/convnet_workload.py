"""Write the "convnet" trace folder: a residual convolutional network's inference over batches.

A workload written after margin version 7 was chosen, to check the defaults on one they were not
tuned to (docs/results/held-out-workloads.md). What a convolutional network's inference has
that the other workloads do not:

- **Many kernels at many shapes, each repeated once a batch.** Convolutions run as one
  implicit-GEMM kernel (``gemm_tiled``) whose CTAs halve and whose loop doubles from stage to
  stage (the feature maps shrink as the channels grow): nearly the same warp instructions on
  32, 16, 8 and 4 SMs, and up to 1.6 times the cycles at the deeper stages. Every layer runs once
  a batch: a plan sees a few launches of each shape, not hundreds.
- **A cold first batch, then warm weights.** The weights (about 2.6 MiB) fit in the L2 of
  SM7_QV100 beside the activations; the first batch reads them from DRAM, the later ones mostly
  find them. Every batch's images are a fresh buffer, read cold.
- **A short last batch.** The data set does not divide into batches: the last one runs every
  layer on half the CTAs, as real inference loops do.
- **A data-dependent tail.** Per batch, the detections' top-k selection loops as many times as
  the batch has candidates above the threshold: its warp instructions differ from batch to
  batch while its cycles follow them only in part (one CTA, bound by latency).

Per batch: the stem (a 7x7 convolution, batch norm and ReLU, max pooling); four stages of two
residual blocks (convolution, batch norm and ReLU twice, the residual add; the first block of
stages 2-4 also a 1x1 projection of its input); then global average pooling, the classifier GEMM,
softmax and top-k. 50 launches a batch; 6 batches and a short one: 350 launches.

    python benchmarks/convnet_workload.py OUT_FOLDER [--batches 6] [--short-batch 1]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from simsample_accelsim.synth import KernelSpec, elementwise, generate, tiled_gemm

KIB = 1 << 10
MIB = 1 << 20
ROOT = 0x7A0000000000
#: (CTAs, loop iterations) of a stage's convolutions: CTAs x iterations stays 64 (128 KiB of weights)
STAGES = ((32, 2), (16, 4), (8, 8), (4, 16))
#: the stem's convolution (it streams the images) and the classifier
STEM, FC = (64, 2), (8, 8)
#: top-k's loop count per batch: the candidates above the threshold, which the data decide
TOPK_ITERS = (5, 9, 3, 7, 12, 4, 8)


BN_RELU = ("LDG.E.128", "FFMA", "FMNMX", "STG.E.128")
ADD_RELU = ("LDG.E.128", "LDG.E.128", "FADD", "FMNMX", "STG.E.128")


def convnet_kernels(batches: int = 6, short_batch: int = 1) -> tuple[list[KernelSpec], list[tuple[int, int, int]]]:
    """The launches in order and the memcpys ``(before_launch, address, bytes)``."""
    cursor = ROOT

    def place(ctas: int, iters: int) -> int:
        """Room for the lines a GEMM of this shape reads once each (see ``tiled_gemm``)."""
        nonlocal cursor
        cursor += ctas * 4 * iters * 512
        return cursor - ctas * 4 * iters * 512

    weights = {
        (stage, conv): place(ctas, iters // 2 if conv == 4 else iters)
        for stage, (ctas, iters) in enumerate(STAGES)
        for conv in range(5 if stage else 4)  # four 3x3 convolutions, and a projection from stage 2 on
    }
    fc_w = place(*FC)
    weight_bytes = cursor - ROOT
    acts = (cursor, cursor + 512 * KIB)  # ping-pong feature maps
    skip = cursor + 1 * MIB
    logits = skip + 512 * KIB
    images = logits + 64 * KIB  # a fresh buffer per batch
    out: list[KernelSpec] = []
    memcpys: list[tuple[int, int, int]] = [(0, ROOT, weight_bytes)]
    total = batches + short_batch
    for batch in range(total):
        half = 2 if batch >= batches else 1  # the short last batch: half the CTAs everywhere
        image = images + batch * 1 * MIB
        stem = STEM[0] // half
        memcpys.append((len(out), image, stem * 4 * STEM[1] * 512))
        out.append(tiled_gemm(image, stem, STEM[1]))  # the stem streams the batch's images once
        out.append(elementwise("_Z7bn_reluPfPKfS1_i", acts[0], stem, BN_RELU))
        out.append(
            elementwise("_Z7maxpoolPKfPfi", acts[1], stem // 2, ("LDG.E.128", "LDG.E.128", "FMNMX", "STG.E.128"))
        )
        cur = 1
        for stage, (ctas, iters) in enumerate(STAGES):
            ctas = max(ctas // half, 1)
            for block in range(2):
                if stage and block == 0:  # the projection of the block's input to the new width
                    out.append(tiled_gemm(weights[stage, 4], ctas, iters // 2))
                for conv in range(2):
                    out.append(tiled_gemm(weights[stage, 2 * block + conv], ctas, iters))
                    cur ^= 1
                    out.append(elementwise("_Z7bn_reluPfPKfS1_i", acts[cur], ctas, BN_RELU))
                out.append(elementwise("_Z12add_relu_skpPfPKfi", skip, ctas, ADD_RELU))
        out.append(
            KernelSpec(
                "_Z11avgpool_allPKfPfi",
                grid=(max(4 // half, 1), 1, 1),
                block=(256, 1, 1),
                nregs=32,
                body=("LDG.E.128", "FADD", "FADD", "SHFL.BFLY", "FADD"),
                iters=8,
                base_address=acts[cur],
            )
        )
        out.append(tiled_gemm(fc_w, max(FC[0] // half, 1), FC[1]))
        out.append(
            elementwise("_Z7softmaxPfi", logits, max(4 // half, 1), ("LDG.E", "FMNMX", "MUFU.EX2", "FADD", "STG.E"))
        )
        out.append(
            KernelSpec(
                "_Z4topkPKfPii",
                grid=(1, 1, 1),
                block=(128, 1, 1),
                nregs=40,
                body=("LDG.E", "FSETP.GT.AND", "SHFL.BFLY", "IMNMX", "STG.E"),
                iters=TOPK_ITERS[batch % len(TOPK_ITERS)],
                divergence=0.25,
                base_address=logits,
            )
        )
    return out, memcpys


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--batches", type=int, default=6, help="full batches")
    ap.add_argument("--short-batch", type=int, default=1, help="batches of half the CTAs at the end (0: none)")
    return generate(ap, argv, {"batches": 1, "short_batch": 0}, lambda a: convnet_kernels(a.batches, a.short_batch))


if __name__ == "__main__":
    raise SystemExit(main())
