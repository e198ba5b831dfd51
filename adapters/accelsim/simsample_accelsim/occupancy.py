"""How a launch's shape turns its instructions into cycles: occupancy, waves, predicted cycles.

Two launches of one kernel with the same warp instructions can take very different times: 8
CTAs of a long loop run on 8 of 80 SMs, 32 CTAs of a quarter of the loop on 32 (a split-K
GEMM against its unsplit form, decode against prefill). A design metric that counts only
instructions puts both in one cluster and samples it once, and its interval cannot see the
difference. The columns here carry the shape into the design:

- ``ctas_per_sm``: CTAs an SM can hold, as GPGPU-Sim's ``shader_core_config::max_cta``
  computes it: the least of threads (block padded to whole warps), shared memory, registers
  (rounded up to a multiple of 4 per thread) and the CTA limit per SM;
- ``sms_used``: SMs that get a CTA (the simulator deals CTAs round-robin): ``min(CTAs, SMs)``;
- ``waves``: ``ceil(CTAs / (SMs x ctas_per_sm))``;
- ``predicted_cycles``: ``launch latency + waves x (cycles of one warp's path)``, a warp's path
  being its instructions at a dependent-issue cost plus its global loads at a memory latency,
  or the SM's issue limit (resident warps x instructions / schedulers) where that is longer.

The two costs per instruction and per load were fitted to the full Accel-Sim run of the
hetero traces (:data:`DEFAULT_MODEL`; :func:`fit_model` refits them to any full run).

What the columns are for, as measured (docs/results/held-out-workloads.md): ``sms_used`` and
``waves`` make the occupancy class by which ``margin`` groups launches of trace features
(``group=name+occupancy``, the default there), and within a class the warp instructions remain
the design metric. ``predicted_cycles`` as the design metric gains nothing over them within
occupancy classes (hetero 0.63% mean error against 0.55%, the decoder 0.18% against 0.21%, 20
plans each against the full runs' cycles) and did much worse grouped by name alone (hetero 4.39%
against 0.86%, with the first, unfitted costs): a warp's path does not grow with the launch's
total work where throughput limits it (hetero's atomics: 11,105 to 16,216 cycles for 48 to 96
CTAs of one wave, predicted equal). It stays a column (``--param metric=predicted_cycles``).

The GPU's limits come from the GPGPU-Sim config the run will use (:meth:`GpuConfig.from_configs`);
without one, those of Accel-Sim's SM7_QV100.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import lazy_loader as lazy
import numpy as np

from simsample.sdk import UserError

pd = lazy.load("pandas")

#: Columns :func:`shape_columns` adds to a workload table.
SHAPE_FEATURES = ("ctas_per_sm", "sms_used", "waves", "predicted_cycles")

_OPTIONS = {
    "-gpgpu_kernel_launch_latency": "launch_latency",
    "-gpgpu_n_clusters": "clusters",
    "-gpgpu_n_cores_per_cluster": "cores_per_cluster",
    "-gpgpu_shader_registers": "registers",
    "-gpgpu_shader_cta": "max_ctas",
    "-gpgpu_shmem_size": "shmem",
    "-gpgpu_num_sched_per_core": "schedulers",
}


@dataclass(frozen=True)
class GpuConfig:
    """The limits of one simulated GPU that decide occupancy (defaults: Accel-Sim's SM7_QV100)."""

    launch_latency: int = 5000
    clusters: int = 80
    cores_per_cluster: int = 1
    threads_per_sm: int = 2048
    warp_size: int = 32
    registers: int = 65536
    max_ctas: int = 32
    shmem: int = 98304
    schedulers: int = 4
    #: 128-byte lines of the whole L2 (6 MiB), for the context column (:mod:`.context`)
    l2_lines: int = 49152

    @property
    def sms(self) -> int:
        return self.clusters * self.cores_per_cluster

    @classmethod
    def from_configs(cls, paths: Iterable[str | Path]) -> GpuConfig:
        """The limits set by GPGPU-Sim config files (later files override earlier ones, as
        repeated ``-config`` options do); what no file sets keeps the SM7_QV100 value."""
        from simsample_accelsim.gpuconfig import int_option, read_options

        paths = list(paths)
        raw = read_options(paths, [*_OPTIONS, "-gpgpu_shader_core_pipeline"])
        found = {field: int_option(raw, name, getattr(cls(), field)) for name, field in _OPTIONS.items()}
        pipeline: tuple[int, int] | None = None
        if "-gpgpu_shader_core_pipeline" in raw:
            value, path = raw["-gpgpu_shader_core_pipeline"]
            m = re.fullmatch(r"(\d+):(\d+)", value)
            if not m:
                raise UserError(
                    f"{path}: -gpgpu_shader_core_pipeline {value!r} is not THREADS:WARP_SIZE; fix the config file"
                )
            pipeline = (int(m.group(1)), int(m.group(2)))
        cfg = replace(cls(), **found)
        if pipeline is not None:
            cfg = replace(cfg, threads_per_sm=pipeline[0], warp_size=pipeline[1])
        for name in (
            "clusters",
            "cores_per_cluster",
            "threads_per_sm",
            "warp_size",
            "registers",
            "max_ctas",
            "shmem",
            "schedulers",
        ):
            if getattr(cfg, name) < 1:
                raise UserError(
                    f"{', '.join(map(str, paths))}: the config gives {name} = {getattr(cfg, name)}; fix the config file"
                )
        from simsample_accelsim.warmup import l2_lines_of_configs

        return replace(cfg, launch_latency=max(0, cfg.launch_latency), l2_lines=l2_lines_of_configs(paths))


@dataclass(frozen=True)
class CycleModel:
    """Cycles of one warp's path: ``per_insn`` per instruction plus ``per_load`` per global load."""

    per_insn: float = 0.0
    per_load: float = 450.0


#: :func:`fit_model` on the full Accel-Sim run of the hetero traces (56 launches, SM7_QV100):
#: 0.0 and 449 (the issue limit carries the instructions there), rounded.
DEFAULT_MODEL = CycleModel(per_insn=0.0, per_load=450.0)


def ctas_per_sm(threads: np.ndarray, regs: np.ndarray, shmem: np.ndarray, gpu: GpuConfig) -> np.ndarray:
    """CTAs one SM holds, by GPGPU-Sim's rule (at least 1: the simulator refuses a kernel that
    fits no CTA, which a trace of a real run cannot be)."""
    ws = gpu.warp_size
    padded = np.maximum((np.asarray(threads, np.int64) + ws - 1) // ws * ws, ws)
    by_threads = gpu.threads_per_sm // padded
    big = np.iinfo(np.int64).max
    sm = np.asarray(shmem, np.int64)
    by_shmem = np.where(sm > 0, gpu.shmem // np.maximum(sm, 1), big)
    r = np.asarray(regs, np.int64)
    by_regs = np.where(r > 0, gpu.registers // (padded * ((r + 3) & ~3)).clip(min=1), big)
    out = np.minimum(np.minimum(by_threads, by_shmem), np.minimum(by_regs, gpu.max_ctas))
    return np.maximum(out, 1)


def _load_column(k: pd.DataFrame) -> np.ndarray:
    from simsample_accelsim.kernelfeatures import COLUMNS

    cols = [COLUMNS[c] for c in ("global_ld", "global_atom", "global_red", "local_ld")]
    return sum((k[c].to_numpy(np.float64) for c in cols if c in k.columns), np.zeros(len(k)))


def shape_columns(kernels: pd.DataFrame, gpu: GpuConfig | None = None, model: CycleModel | None = None) -> pd.DataFrame:
    """``ctas_per_sm``, ``waves`` and ``predicted_cycles`` for a table with shapes, ``regs``,
    ``shmem`` and the trace features (``warps``, ``warp_insts``, global load counts)."""
    gpu = gpu or GpuConfig()
    model = model or DEFAULT_MODEL
    for col in ("regs", "shmem", "warps", "warp_insts"):
        if col not in kernels.columns:
            raise UserError(
                f"the workload has no {col!r} column, which the shape features need; derive them from an Accel-Sim "
                "trace folder"
            )
    k = kernels
    ctas = k["grid_x"].to_numpy(np.int64) * k["grid_y"].to_numpy(np.int64) * k["grid_z"].to_numpy(np.int64)
    threads = k["block_x"].to_numpy(np.int64) * k["block_y"].to_numpy(np.int64) * k["block_z"].to_numpy(np.int64)
    per_sm = ctas_per_sm(threads, k["regs"].to_numpy(np.int64), k["shmem"].to_numpy(np.int64), gpu)
    waves = np.maximum(-(-ctas // (gpu.sms * per_sm)), 1)
    warps = np.maximum(k["warps"].to_numpy(np.float64), 1.0)
    insn = k["warp_insts"].to_numpy(np.float64) / warps  # a warp's path
    loads = _load_column(k) / warps
    warps_per_cta = np.maximum(-(-threads // gpu.warp_size), 1)
    resident = np.minimum(per_sm, np.maximum(-(-ctas // gpu.sms), 1)) * warps_per_cta  # warps an SM runs at once
    path = np.maximum(model.per_insn * insn + model.per_load * loads, resident * insn / gpu.schedulers)
    predicted = gpu.launch_latency + waves * path
    return pd.DataFrame(
        {
            "ctas_per_sm": per_sm,
            "sms_used": np.minimum(ctas, gpu.sms),
            "waves": waves,
            "predicted_cycles": np.round(predicted),
        },
        index=k.index,
    )


def fit_model(kernels: pd.DataFrame, cycles: np.ndarray, gpu: GpuConfig | None = None) -> CycleModel:
    """The per-instruction and per-load costs that best predict ``cycles`` (a full run's, in
    launch order) by least squares on ``cycles − latency = waves x (a·insns + b·loads)`` (where
    the issue limit is not the longer), both kept non-negative."""
    from scipy.optimize import nnls

    gpu = gpu or GpuConfig()
    base = shape_columns(kernels, gpu, CycleModel(0.0, 0.0))
    warps = np.maximum(kernels["warps"].to_numpy(np.float64), 1.0)
    insn = kernels["warp_insts"].to_numpy(np.float64) / warps
    loads = _load_column(kernels) / warps
    w = base["waves"].to_numpy(np.float64)
    a = np.column_stack([w * insn, w * loads])
    (per_insn, per_load), _ = nnls(a, np.asarray(cycles, np.float64) - gpu.launch_latency)
    return CycleModel(float(per_insn), float(per_load))
