"""Write the bundled example profile: a synthetic PyTorch-profiler (Kineto) trace.

The trace mimics 40 training steps of a small transformer on one GPU: per layer a layer norm,
three GEMMs of different shapes under one kernel name (so durations are multimodal within a
name), a softmax, element-wise kernels, and a fill kernel so short that Kineto rounds it to
0 µs, as real traces do.

As ``torch.profiler`` writes them, the CPU side is there too: each kernel's launch call
(``cudaLaunchKernel``, category ``cuda_runtime``, with the kernel's ``correlation`` id) and one
``ProfilerStep#N`` annotation (category ``user_annotation``) around the launch calls of each
step, N = 0..39, so that ``--steps`` can be tried on it (``simsample plan ... --steps 10-12``).
The CPU runs ahead of the GPU: the later launches of a step start on the GPU after the step's
annotation has ended, which is why steps are found through the launch calls.

Everything comes from a seeded generator, so running this script again reproduces the
committed file byte for byte::

    python examples/generate_example_profile.py examples/profile/train_step.pt.trace.json.gz
"""

from __future__ import annotations

import gzip
import io
import json
import sys

import numpy as np

STEPS, LAYERS, SEED = 40, 12, 2024

# (name, grid, block, mean µs, relative spread)
FORWARD = [
    (
        "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float "
        "const*, float const*, float const*, float*, float*, float*)",
        (512, 1, 1),
        (128, 1, 1),
        6.0,
        0.05,
    ),
    ("ampere_sgemm_128x64_tn", (16, 12, 1), (128, 1, 1), 42.0, 0.04),
    ("ampere_sgemm_128x64_tn", (48, 12, 1), (128, 1, 1), 118.0, 0.03),
    (
        "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous "
        "namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
        (1024, 1, 1),
        (256, 1, 1),
        14.0,
        0.10,
    ),
    ("ampere_sgemm_128x64_tn", (16, 48, 1), (128, 1, 1), 160.0, 0.03),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
        "at::native::GeluType)::{lambda()#1}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> "
        ">(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
        "at::native::GeluType)::{lambda()#1}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)",
        (2048, 1, 1),
        (128, 1, 1),
        9.0,
        0.08,
    ),
]
BACKWARD = [
    ("ampere_sgemm_64x32_sliced1x4_nt", (32, 24, 1), (128, 1, 1), 95.0, 0.25),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, "
        "1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
        (4, 1, 1),
        (128, 1, 1),
        0.3,
        0.3,
    ),
    (
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
        "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
        "unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
        "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
        "unsigned int, float, 4>)",
        (96, 1, 1),
        (32, 16, 1),
        21.0,
        0.6,
    ),
    (
        "void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, float, float, float, at::native::(anonymous "
        "namespace)::SoftMaxBackwardEpilogue>(float*, float const*, float const*, int)",
        (1024, 1, 1),
        (256, 1, 1),
        17.0,
        0.10,
    ),
]
OPTIMIZER = (
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4>, float*, "
    "float, float, float, float, float, float, bool, bool>(...)",
    (320, 1, 1),
    (512, 1, 1),
    230.0,
    0.02,
)


#: CPU side: the process and thread that launch the kernels, how long a launch call takes (µs),
#: and how far the CPU runs ahead of the GPU (µs; grows through a step as the GPU falls behind).
CPU_PID, CPU_TID, LAUNCH_US, AHEAD_US, AHEAD_PER_LAUNCH_US = 4242, 4242, 1.5, 25.0, 1.0


def build() -> dict:
    rng = np.random.default_rng(SEED)
    events = []
    step_starts = []  # index into events of each step's first kernel
    ts = 1_700_000_000_000.0  # µs, as Kineto writes absolute timestamps
    corr = 1000

    def launch(name, grid, block, mean, spread):
        nonlocal ts, corr
        dur = max(0.0, rng.lognormal(np.log(mean), spread))
        dur = round(dur, 3) if mean >= 1 else float(int(dur))  # sub-µs kernels round to 0 µs
        events.append(
            {
                "ph": "X",
                "cat": "kernel",
                "name": name,
                "pid": 0,
                "tid": 7,
                "ts": round(ts, 3),
                "dur": dur,
                "args": {
                    "queued": 0,
                    "device": 0,
                    "context": 1,
                    "stream": 7,
                    "correlation": corr,
                    "registers per thread": 64,
                    "shared memory": 16384,
                    "blocks per SM": 4.2,
                    "warps per SM": 16.8,
                    "grid": list(grid),
                    "block": list(block),
                    "est. achieved occupancy %": 50,
                    "External id": corr - 500,
                },
            }
        )
        corr += 1
        ts += dur + float(rng.integers(2, 9))

    for _ in range(STEPS):
        step_starts.append(len(events))
        for _layer in range(LAYERS):
            for k in FORWARD:
                launch(*k)
        for _layer in range(LAYERS):
            for k in BACKWARD:
                launch(*k)
            launch(*BACKWARD[1])
        launch(*OPTIMIZER)
    events += cpu_side(events, step_starts)
    return {
        "schemaVersion": 1,
        "deviceProperties": [
            {
                "id": 0,
                "name": "NVIDIA A100-SXM4-40GB",
                "totalGlobalMem": 42314694656,
                "computeMajor": 8,
                "computeMinor": 0,
                "numSms": 108,
            }
        ],
        "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": 1700000000000000000,
    }


def cpu_side(kernels: list[dict], step_starts: list[int]) -> list[dict]:
    """The launch calls of ``kernels`` and the ``ProfilerStep#N`` annotations around them.

    Derived from the kernels' times without drawing random numbers, so the kernel events are
    the same as in a trace without a CPU side. A launch call ends before its kernel starts; the
    CPU's lead over the GPU grows through a step (the GPU falls behind) and the CPU waits for the
    GPU at the step's end (the optimizer's ``.item()``-style synchronisation)."""
    calls = []
    bounds = [*step_starts, len(kernels)]
    for step, (lo, hi) in enumerate(zip(bounds, bounds[1:])):
        first_call = None
        prev_end = kernels[lo]["ts"] - AHEAD_US - 10.0
        for i in range(lo, hi):
            k = kernels[i]
            ts = round(max(prev_end + 0.5, k["ts"] - AHEAD_US - AHEAD_PER_LAUNCH_US * (i - lo)), 3)
            ts = min(ts, round(k["ts"] - LAUNCH_US - 0.5, 3))  # the call is made before the kernel runs
            prev_end = ts + LAUNCH_US
            first_call = ts if first_call is None else first_call
            calls.append(
                {
                    "ph": "X",
                    "cat": "cuda_runtime",
                    "name": "cudaLaunchKernel",
                    "pid": CPU_PID,
                    "tid": CPU_TID,
                    "ts": ts,
                    "dur": LAUNCH_US,
                    "args": {
                        "External id": k["args"]["External id"],
                        "cbid": 211,
                        "correlation": k["args"]["correlation"],
                    },
                }
            )
        start = round(first_call - 3.0, 3)
        calls.append(
            {
                "ph": "X",
                "cat": "user_annotation",
                "name": f"ProfilerStep#{step}",
                "pid": CPU_PID,
                "tid": CPU_TID,
                "ts": start,
                "dur": round(prev_end + 2.0 - start, 3),
                "args": {"External id": 100_000 + step, "Record function id": 0},
            }
        )
    return calls


def main(out: str) -> None:
    raw = json.dumps(build(), indent=1).encode()
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, filename="") as gz:
        gz.write(raw)
    with open(out, "wb") as fh:
        fh.write(buf.getvalue())


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "examples/profile/train_step.pt.trace.json.gz")
