"""Write the bundled example profile: a synthetic PyTorch-profiler (Kineto) trace.

The trace mimics 40 training steps of a small transformer on one GPU: per layer a layer norm,
three GEMMs of different shapes under one kernel name (so durations are multimodal within a
name), a softmax, element-wise kernels, and a fill kernel so short that Kineto rounds it to
0 µs, as real traces do. Everything comes from a seeded generator, so running this script
again reproduces the committed file byte for byte::

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
    ("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, float const*, float const*, float*, float*, float*)", (512, 1, 1), (128, 1, 1), 6.0, 0.05),
    ("ampere_sgemm_128x64_tn", (16, 12, 1), (128, 1, 1), 42.0, 0.04),
    ("ampere_sgemm_128x64_tn", (48, 12, 1), (128, 1, 1), 118.0, 0.03),
    ("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)", (1024, 1, 1), (256, 1, 1), 14.0, 0.10),
    ("ampere_sgemm_128x64_tn", (16, 48, 1), (128, 1, 1), 160.0, 0.03),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#1}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#1}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)", (2048, 1, 1), (128, 1, 1), 9.0, 0.08),
]
BACKWARD = [
    ("ampere_sgemm_64x32_sliced1x4_nt", (32, 24, 1), (128, 1, 1), 95.0, 0.25),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)", (4, 1, 1), (128, 1, 1), 0.3, 0.3),
    ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)", (96, 1, 1), (32, 16, 1), 21.0, 0.6),
    ("void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxBackwardEpilogue>(float*, float const*, float const*, int)", (1024, 1, 1), (256, 1, 1), 17.0, 0.10),
]
OPTIMIZER = ("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4>, float*, float, float, float, float, float, float, bool, bool>(...)", (320, 1, 1), (512, 1, 1), 230.0, 0.02)


def build() -> dict:
    rng = np.random.default_rng(SEED)
    events = []
    ts = 1_700_000_000_000.0  # µs, as Kineto writes absolute timestamps
    corr = 1000

    def launch(name, grid, block, mean, spread):
        nonlocal ts, corr
        dur = max(0.0, rng.lognormal(np.log(mean), spread))
        dur = round(dur, 3) if mean >= 1 else float(int(dur))  # sub-µs kernels round to 0 µs
        events.append({
            "ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7,
            "ts": round(ts, 3), "dur": dur,
            "args": {"queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": corr,
                     "registers per thread": 64, "shared memory": 16384, "blocks per SM": 4.2,
                     "warps per SM": 16.8, "grid": list(grid), "block": list(block),
                     "est. achieved occupancy %": 50, "External id": corr - 500},
        })
        corr += 1
        ts += dur + float(rng.integers(2, 9))

    for _ in range(STEPS):
        for _layer in range(LAYERS):
            for k in FORWARD:
                launch(*k)
        for _layer in range(LAYERS):
            for k in BACKWARD:
                launch(*k)
            launch(*BACKWARD[1])
        launch(*OPTIMIZER)
    return {
        "schemaVersion": 1,
        "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-40GB", "totalGlobalMem": 42314694656, "computeMajor": 8, "computeMinor": 0, "numSms": 108}],
        "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": 1700000000000000000,
    }


def main(out: str) -> None:
    raw = json.dumps(build(), indent=1).encode()
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, filename="") as gz:
        gz.write(raw)
    with open(out, "wb") as fh:
        fh.write(buf.getvalue())


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "examples/profile/train_step.pt.trace.json.gz")
