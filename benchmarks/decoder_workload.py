"""Write the "decoder" trace folder: a transformer decoder's prefill and decode steps.

The shapes and reuse that an LLM's inference has, at a size Accel-Sim simulates fully in
minutes:

- **One kernel at several shapes.** The GEMMs are one kernel (``gemm_tiled``, as a library
  GEMM is) at every projection. In the prefill step they run on many CTAs with short loops; in
  the decode steps on a quarter of the CTAs with four times the loop (split along K): about the
  same warp instructions, but a quarter of the SMs, so several times the cycles. Attention is
  one kernel whose decode launches read a longer KV cache at every step.
- **Producers re-read many launches later.** Every step re-reads each layer's weights (about
  1.5 MiB a layer, 6.5 MiB a step with the output head: more than the 6 MiB L2 of SM7_QV100, so
  the full run has evicted them by the next step), and attention re-reads the KV cache that
  ``rope_kv_append`` wrote in every earlier step.

Per step: ``embed_gather``, then per layer ``layernorm``, QKV GEMM, ``rope_kv_append``,
``attention``, output GEMM, ``residual_add``, ``layernorm``, MLP-up GEMM, ``gelu``, MLP-down
GEMM, ``residual_add``; then the head GEMM. 4 layers x 1 prefill + 4 decode steps = 230 launches.
The weights and the embedding table are copied to the GPU (``MemcpyHtoD``) before the first
launch.

    python benchmarks/decoder_workload.py OUT_FOLDER [--layers 4] [--decode 4]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from simsample_accelsim.synth import KernelSpec, elementwise, tiled_gemm, write_workload

KIB = 1 << 10
MIB = 1 << 20
ROOT = 0x7F0000000000
BLOCK = (128, 1, 1)  # four warps


def _slot(iters: int, width: int = 16) -> int:
    """Bytes a warp reads over ``iters`` coalesced iterations of ``width``-byte loads."""
    return iters * 32 * width


def decoder_kernels(layers: int = 4, decode: int = 4) -> tuple[list[KernelSpec], list[tuple[int, int, int]]]:
    """The launches in order and the memcpys ``(before_launch, address, bytes)``."""
    prompt_slots = 4  # the prompt's KV occupies four decode steps' worth of cache
    weights = {}
    cursor = ROOT
    for layer in range(layers):
        for part, size in (("qkv", 256 * KIB), ("o", 256 * KIB), ("up", 512 * KIB), ("down", 512 * KIB)):
            weights[layer, part] = cursor
            cursor += size
    weights["head"] = cursor
    cursor += 512 * KIB
    table = cursor
    cursor += 1 * MIB
    kv = {layer: cursor + layer * 2 * MIB for layer in range(layers)}  # 64 KiB per slot
    hidden = cursor + layers * 2 * MIB + 64 * MIB
    scratch = hidden + 1 * MIB
    out: list[KernelSpec] = []
    for step in range(1 + decode):
        prefill = step == 0
        wide = 4 if prefill else 1  # the prefill runs on four times the CTAs, a quarter of the loop
        gemm_iters = 4 if prefill else 16
        out.append(
            KernelSpec(
                "_Z12embed_gatherPKiPKfPf",
                grid=(8 * wide, 1, 1),
                block=BLOCK,
                nregs=24,
                body=("LDG.E", "LDG.E.128", "STG.E.128"),
                iters=2,
                pattern="random",
                base_address=table,
            )
        )
        for layer in range(layers):
            out.append(
                elementwise(
                    "_Z9layernormPKfPfi",
                    hidden,
                    8 * wide,
                    ("LDG.E.128", "FADD", "FMUL", "MUFU.RSQ", "FMUL", "STG.E.128"),
                )
            )
            out.append(tiled_gemm(weights[layer, "qkv"], 8 * wide, gemm_iters))
            slot = kv[layer] + (0 if prefill else (prompt_slots + step - 1) * 64 * KIB)
            out.append(
                KernelSpec(
                    "_Z14rope_kv_appendPKfPf",
                    grid=(8 * wide, 1, 1),
                    block=BLOCK,
                    nregs=32,
                    body=("LDG.E.128", "FMUL", "FFMA", "STG.E.128"),
                    iters=4,
                    stride=16,
                    warp_span=_slot(4),
                    base_address=slot,
                )
            )
            context = prompt_slots + (0 if prefill else step)  # KV slots attention reads
            out.append(
                KernelSpec(
                    "_Z9attentionPKfS0_Pfi",
                    grid=(8 * wide, 1, 1),
                    block=BLOCK,
                    shmem=16 * KIB,
                    nregs=64,
                    body=("LDG.E.128", "FFMA", "FFMA", "FMNMX", "MUFU.EX2", "FADD", "FFMA"),
                    iters=4 * context // wide,
                    stride=16,
                    warp_span=_slot(4 * context // wide),
                    base_address=kv[layer],
                )
            )
            out.append(tiled_gemm(weights[layer, "o"], 8 * wide, gemm_iters))
            out.append(
                elementwise("_Z12residual_addPfPKf", hidden, 8 * wide, ("LDG.E.128", "LDG.E.128", "FADD", "STG.E.128"))
            )
            out.append(
                elementwise(
                    "_Z9layernormPKfPfi",
                    hidden,
                    8 * wide,
                    ("LDG.E.128", "FADD", "FMUL", "MUFU.RSQ", "FMUL", "STG.E.128"),
                )
            )
            out.append(tiled_gemm(weights[layer, "up"], 16 * wide, gemm_iters))
            out.append(
                elementwise("_Z4geluPf", scratch, 16 * wide, ("LDG.E.128", "FMUL", "MUFU.TANH", "FFMA", "STG.E.128"))
            )
            out.append(tiled_gemm(weights[layer, "down"], 16 * wide, gemm_iters))
            out.append(
                elementwise("_Z12residual_addPfPKf", hidden, 8 * wide, ("LDG.E.128", "LDG.E.128", "FADD", "STG.E.128"))
            )
        out.append(tiled_gemm(weights["head"], 16 * wide, gemm_iters))
    memcpys = [(0, ROOT, weights["head"] + 512 * KIB - ROOT), (0, table, 1 * MIB)]
    return out, memcpys


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--decode", type=int, default=4)
    args = ap.parse_args(argv)
    kernels, memcpys = decoder_kernels(args.layers, args.decode)
    write_workload(args.out, kernels, seed=0, memcpys=memcpys)
    print(f"{args.out}: {len(kernels)} launches, {len(memcpys)} memcpys")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
