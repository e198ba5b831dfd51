"""Write the "mlp" MacSim trace folder: a held-out workload for the MacSim context column.

Three steps over four layers of an MLP block, four launches per layer, each kernel one function
(its launches share their code addresses):

    up   = x * w_up      (kernel ``up``:    reads the activations and the layer's first weights)
    g    = up + b        (kernel ``bias``:  reads what ``up`` wrote and the layer's bias)
    down = g * w_down    (kernel ``down``:  reads what ``bias`` wrote and the second weights)
    x'   = down + x      (kernel ``resid``: reads what ``down`` wrote and the activations four
                          launches back, writes the next activations)

Arrays are 16,384 doubles (128 KiB); the three weight arrays of a layer are re-read 16 launches
later, in the next step. The whole footprint (about 2.4 MiB) fits the LLC of MacSim's
``bin/params.in`` (4.5 MiB), so there the weights are warm in every step after the first; with
``num_llc 2`` (768 KiB) a step's weights (1.5 MiB) push each other out, and they are cold in
every step. It was written after the context column was built on the layers workload
(``macsim_layers_workload.py``) and is not used to tune it.

    python benchmarks/macsim_mlp_workload.py OUT_FOLDER
"""

from __future__ import annotations

from simsample_macsim.synth import ElementwiseKernel

ELEMENTS = 16384


def mlp_kernels(steps: int = 3, layers: int = 4) -> list[ElementwiseKernel]:
    out: list[ElementwiseKernel] = []
    act = 0  # activations rotate through three buffers

    def buf(i: int) -> str:
        return f"x{i % 3}"

    for _ in range(steps):
        for layer in range(layers):
            x = buf(act)
            out.append(ElementwiseKernel("up", x, f"w_up{layer}", "t_up", ELEMENTS, "mul"))
            out.append(ElementwiseKernel("bias", "t_up", f"b{layer}", "t_g", ELEMENTS, "add"))
            out.append(ElementwiseKernel("down", "t_g", f"w_down{layer}", "t_down", ELEMENTS, "mul"))
            out.append(ElementwiseKernel("resid", "t_down", x, buf(act + 1), ELEMENTS, "add"))
            act += 1
    return out


def main(argv: list[str] | None = None) -> int:
    from macsim_layers_workload import write_cli  # beside this script (its folder is on sys.path)

    return write_cli(__doc__, mlp_kernels, argv)


if __name__ == "__main__":
    raise SystemExit(main())
