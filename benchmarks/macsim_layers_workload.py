"""Write the "layers" MacSim trace folder: per-layer weights re-read every step, for warm-up measurements.

Three decode-like steps over four layers; per layer a projection (kernel ``proj``) reads the
activations the previous launch wrote and the layer's weights, then a residual add (``resid``)
reads the projection and the activations two launches back. Each kernel is one function, so its
launches share their code addresses:

    proj resid proj resid proj resid proj resid      (layers 0-3, x 3 steps, the same weights per step)

So a projection's weights were last read 8 launches earlier (in the previous step; cold in the
first), and its activations 1 launch earlier. Arrays are 16,384 doubles (128 KiB); the whole
footprint (about 1.3 MiB) fits MacSim's LLC in the vectormultadd params.in, so the full run finds
the weights there at every step after the first, while a sampled projection run cold, or after
only its immediate predecessor, reads them from DRAM.

    python benchmarks/macsim_layers_workload.py OUT_FOLDER
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from simsample_macsim.synth import ElementwiseKernel, write_workload

ELEMENTS = 16384


def layers_kernels(steps: int = 3, layers: int = 4) -> list[ElementwiseKernel]:
    out: list[ElementwiseKernel] = []
    act = 0  # activations rotate through four buffers

    def buf(i: int) -> str:
        return f"act{i % 4}"

    for _ in range(steps):
        for layer in range(layers):
            x = buf(act)
            out.append(ElementwiseKernel("proj", x, f"w{layer}", "h", ELEMENTS, "mul"))
            out.append(ElementwiseKernel("resid", "h", x, buf(act + 1), ELEMENTS, "add"))
            act += 1
    return out


def write_cli(description: str, kernels: Callable[[], list[ElementwiseKernel]], argv: list[str] | None = None) -> int:
    """The command line of a MacSim workload generator: one argument, a new folder to write
    ``kernels()`` into (an existing one is refused in one line: never written over)."""
    import argparse

    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path, help="trace folder to write (a new folder)")
    args = ap.parse_args(argv)
    if args.out.exists():
        ap.error(f"{args.out}: exists; give a new folder")
    written = kernels()
    write_workload(args.out, written)
    print(f"{args.out}: {len(written)} launches")
    return 0


def main(argv: list[str] | None = None) -> int:
    return write_cli(__doc__, layers_kernels, argv)


if __name__ == "__main__":
    raise SystemExit(main())
