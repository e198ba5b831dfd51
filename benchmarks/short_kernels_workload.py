"""Write the "short kernels" trace folder: many different short kernels with one warp count.

A three-layer decoder-like sequence (35 launches, 10 kernels). Six of the kernels are short
elementwise or row kernels that all launch 16 CTAs of 128 threads (64 warps) and run a few
straight-line instructions per warp; they differ in their code and in their memory behaviour
(coalesced, gathered, strided), hence in their cycles per instruction:

    embed_gather, then per layer:
      layernorm  gemm_qkv  rope_append  softmax  gemm_o  residual_add
      layernorm  gemm_up   gelu         gemm_down        residual_add
    then a final layernorm

The four GEMM-like kernels launch more warps (256 or 512) and loop. Accel-Sim traces give PCs
as offsets from the start of each kernel, so all the short kernels' first blocks start at PC 0:
the workload checks that kernel-level samplers keyed on basic blocks keep different kernels
apart. It simulates fully in a few minutes.

    python benchmarks/short_kernels_workload.py OUT_FOLDER
"""

from __future__ import annotations

import sys
from pathlib import Path

from simsample_accelsim.synth import KernelSpec, write_workload

MIB = 1 << 20
SHORT = dict(grid=(16, 1, 1), block=(128, 1, 1), nregs=32)  # 64 warps


def short_kernels() -> list[KernelSpec]:
    """The launches in order (see the module docstring); every launch gets its own buffers."""
    n = 0

    def base() -> int:
        nonlocal n
        n += 1
        return 0x7F0000000000 + n * 4 * MIB

    def embed() -> KernelSpec:
        return KernelSpec(
            "_Z12embed_gatherPKiPKfPf",
            **SHORT,
            body=("LDG.E.CONSTANT", "LDG.E", "STG.E"),
            iters=1,
            pattern="random",
            base_address=base(),
        )

    def layernorm() -> KernelSpec:
        return KernelSpec(
            "_Z13layernorm_fwdPKfS0_Pf",
            **SHORT,
            body=("LDG.E", "FADD", "FMUL", "FFMA", "MUFU.RSQ", "FMUL", "STG.E"),
            iters=1,
            base_address=base(),
        )

    def rope() -> KernelSpec:
        return KernelSpec(
            "_Z20rope_kv_cache_appendPKfPf",
            **SHORT,
            body=("LDG.E", "FMUL", "FMUL", "FFMA", "FFMA", "STG.E"),
            iters=1,
            pattern="strided",
            stride=512,
            base_address=base(),
        )

    def softmax() -> KernelSpec:
        return KernelSpec(
            "_Z11softmax_rowPKfPf",
            **SHORT,
            body=("LDG.E", "FMNMX", "FADD", "MUFU.EX2", "FMUL", "FADD", "STG.E"),
            iters=1,
            base_address=base(),
        )

    def residual() -> KernelSpec:
        return KernelSpec(
            "_Z12residual_addPfPKf", **SHORT, body=("LDG.E", "LDG.E", "FADD", "STG.E"), iters=1, base_address=base()
        )

    def gelu() -> KernelSpec:
        return KernelSpec(
            "_Z8gelu_fwdPKfPf",
            **SHORT,
            body=("LDG.E", "FMUL", "FFMA", "MUFU.TANH", "FFMA", "FMUL", "STG.E"),
            iters=1,
            base_address=base(),
        )

    def gemm(name: str, ctas: int) -> KernelSpec:
        return KernelSpec(
            name,
            grid=(ctas, 1, 1),
            block=(128, 1, 1),
            shmem=8192,
            nregs=64,
            body=("LDG.E.128", "STS.128", "BAR.SYNC", "LDS.U.128", "FFMA", "FFMA", "FFMA", "FFMA", "FFMA", "FFMA"),
            iters=3,
            base_address=base(),
        )

    out = [embed()]
    for _ in range(3):
        out += [
            layernorm(),
            gemm("_Z8gemm_qkvPKfS0_Pf", 64),
            rope(),
            softmax(),
            gemm("_Z6gemm_oPKfS0_Pf", 64),
            residual(),
            layernorm(),
            gemm("_Z7gemm_upPKfS0_Pf", 128),
            gelu(),
            gemm("_Z9gemm_downPKfS0_Pf", 64),
            residual(),
        ]
    out.append(layernorm())
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 1
    write_workload(Path(argv[0]), short_kernels(), seed=0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
