"""Which ProfilerStep#N each launch of a PyTorch-profiler trace belongs to (``--steps``), on the
layout of PyTorch 2.11: a backward pass launched from the autograd engine's thread, and each
step's annotation copied onto the GPU's timeline (``gpu_user_annotation``), a shorter range that
starts inside the CPU-side one."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import simsample
from simsample.cli import run
from simsample.io.kineto_steps import step_of_launches
from simsample.planfile import Plan

STEPS = Path(__file__).resolve().parents[1] / "fixtures" / "kineto_h200" / "steps"


@pytest.mark.parametrize(
    ("name", "per_step"), [("gpt-train", 401), ("lstm-train", 600), ("compiled-train", 33), ("cudagraph", 26)]
)
def test_every_launch_of_a_training_step_is_in_its_step(name, per_step):
    """Four steps recorded with a profiler schedule: every launch, the backward pass's included,
    belongs to its step (a third of them did, the GPU-side copy of the annotation shadowing the
    CPU-side one); so do torch.compile's Triton kernels and the kernels of CUDA-graph replays,
    whose launch call is ``cudaGraphLaunch``."""
    f = STEPS / f"{name}.pt.trace.json.gz"
    steps = step_of_launches([f], simsample.read(f))
    numbers, counts = np.unique(steps, return_counts=True)
    assert numbers.tolist() == [0, 1, 2, 3] and counts.tolist() == [per_step] * 4


def test_plan_steps_keeps_the_steps_launches(tmp_path):
    f = STEPS / "gpt-train.pt.trace.json.gz"
    assert run(["plan", str(f), "--steps", "1-2", "-o", str(tmp_path / "p.json")]) == 0
    plan = Plan.read(tmp_path / "p.json")
    assert plan.workload["launches"] == 802


def _trace(path: Path, *, cpu_steps: bool) -> Path:
    """Two steps; each step's second launch is called from another thread after the GPU-side
    copy of its annotation has ended (as a backward pass's launches are)."""
    ev = []
    for s in range(2):
        t0 = 1000 * s
        if cpu_steps:
            ev.append(
                {
                    "ph": "X",
                    "cat": "user_annotation",
                    "name": f"ProfilerStep#{s}",
                    "ts": t0,
                    "dur": 900,
                    "pid": 1,
                    "tid": 1,
                }
            )
        ev.append(
            {
                "ph": "X",
                "cat": "gpu_user_annotation",
                "name": f"ProfilerStep#{s}",
                "ts": t0 + 20,
                "dur": 300,
                "pid": 0,
                "tid": 7,
            }
        )
        for j, (call, tid) in enumerate(((t0 + 10, 1), (t0 + 600, 2))):
            c = 10 * s + j + 1
            ev.append(
                {
                    "ph": "X",
                    "cat": "cuda_runtime",
                    "name": "cudaLaunchKernel",
                    "ts": call,
                    "dur": 2,
                    "pid": 1,
                    "tid": tid,
                    "args": {"correlation": c},
                }
            )
            start = t0 + 30 if j == 0 else t0 + 280  # both run inside the GPU-side range
            ev.append(
                {
                    "ph": "X",
                    "cat": "kernel",
                    "name": f"k{j}",
                    "ts": start,
                    "dur": 5,
                    "pid": 0,
                    "tid": 7,
                    "args": {"correlation": c, "grid": [1, 1, 1], "block": [32, 1, 1], "device": 0, "stream": 7},
                }
            )
    path.write_text(json.dumps({"traceEvents": ev}))
    return path


def test_a_launch_call_after_the_gpu_copy_of_its_step_ended_is_in_the_step(tmp_path):
    f = _trace(tmp_path / "k.json", cpu_steps=True)
    assert step_of_launches([f], simsample.read(f)).tolist() == [0, 0, 1, 1]


def test_a_trace_with_only_the_gpu_copies_places_kernels_by_their_own_start(tmp_path):
    f = _trace(tmp_path / "k.json", cpu_steps=False)
    assert step_of_launches([f], simsample.read(f)).tolist() == [0, 0, 1, 1]
