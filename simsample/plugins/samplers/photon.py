"""Photon's kernel-level sampling (Liu, Sun and Carlson, MICRO'23).

Official code: lchangxii/sampled-mgpu-sim, ``samples/sampledrunner/sampledanalysis.py``
(``GPUBBV``, ``KernelInfo``, ``ExecuteEngine.find_kernel``) and ``clusterallvgg.py``. Each
launch is described by its GPU basic-block vector (:mod:`simsample.plugins.samplers._photon.bbv`),
its warp count and its instructions. A basic block is identified by its kernel as well as its PC
(trace PCs are kernel-relative; see :func:`~simsample.plugins.samplers._photon.bbv.block_addresses`),
so launches of different kernels share no block weights, as on MGPUSim where every kernel has its own addresses.
Launches are walked in order; each is compared with the representatives chosen so far:

1. representatives with the *same* warp count, most recent first: the nearest by Euclidean
   distance is a hit if the distance is below ``distance`` (0.05; ties go to the most recent);
2. if none, and the launch is not small: representatives with other warp counts that are not
   small either, whose distance is below 0.05; among those the nearest warp count wins (ties to
   the most recent). A *small* kernel has fewer warps than the GPU holds at once (``gpu_warps``,
   or SMs × warps per SM of the named ``gpu``; the official code's R9 Nano: 2560) and may only
   match a representative with exactly its warp count;
3. a hit is predicted from its representative; a miss becomes a new representative.

Prediction (``predict``): ``cpi`` (official) — the launch's time is CPI(representative) ×
its instructions, so the representative's weight is Σ over the launches it stands for of
instructions / the representative's instructions; ``time`` (STEM's re-implementation) — the
representative's time for each, weight = launches. A representative without instructions falls
back to ``time``.

The cost is O(N × representatives × GPU BBV length): quadratic in the launches when most of them
are distinct. Distances are computed with one matrix-vector product over all candidate
representatives of a warp count (kept in a contiguous matrix per warp count) and checked exactly
near the threshold.

Photon picks one launch per cluster and gives no error bound.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from simsample.plugins.samplers._photon import gpus
from simsample.plugins.samplers._photon.bbv import FEATURES_HINT, GpuBBVs, WarpFeatures, gpu_bbvs
from simsample.sdk import (
    AUDIT_BY_PARAM,
    AUDIT_PARAM,
    Param,
    Plan,
    Sampler,
    UserError,
    Workload,
    hookimpl,
    representative_plan,
    resolve_metric,
)

INSTRUCTION_COLUMNS = ("warp_insts", "smsp__inst_executed.sum", "instructions")


class PhotonSampler(Sampler):
    name = "photon"
    version = "3"  # 3: the audit follows the cycles (audit_by=cycles); 2: blocks keyed by their kernel's code range
    description = "Photon kernel-level sampling: GPU BBV distance < 0.05 and warp-count rules, online"
    params = (
        Param("distance", float, 0.05, "largest Euclidean distance between GPU BBVs of a hit (exclusive)", minimum=0.0),
        Param("gpu", str, "QV100", "named GPU whose resident warps (SMs × warps per SM) separate small kernels"),
        Param("gpu_warps", int, None, "warps the GPU holds at once (overrides gpu)", minimum=1, nullable=True),
        Param(
            "predict",
            str,
            "cpi",
            "cpi: CPI(hit) × instructions (official); time: the hit's time (STEM's)",
            choices=("cpi", "time"),
        ),
        Param(
            "instructions",
            str,
            "auto",
            "instruction column: auto = first of " + ", ".join(INSTRUCTION_COLUMNS) + ", else from the BBVs",
        ),
        Param("metric", str, "auto", "per-launch cost column: auto = cycles, else duration_ns"),
        AUDIT_PARAM,
        AUDIT_BY_PARAM,
    )
    requires = ()
    requires_hint = FEATURES_HINT
    bounded = False

    def check_workload(self, workload: Workload, params: Mapping[str, Any]) -> None:
        super().check_workload(workload, params)
        WarpFeatures.from_extras(workload.extras, len(workload), source=workload.source or "the workload")
        if params.get("instructions", "auto") != "auto":
            workload.require([params["instructions"]], who="sampler photon", hint=FEATURES_HINT)
        if params.get("gpu_warps") is None:
            gpus.lookup(params.get("gpu", "QV100"))

    def plan(self, workload: Workload, params: Mapping[str, Any], seed: int) -> Plan:
        n = len(workload)
        if n == 0:
            raise UserError(f"{workload.source or 'workload'} has no kernel launches to sample")
        self.check_workload(workload, params)
        feats = WarpFeatures.from_extras(workload.extras, n, source=workload.source or "the workload")
        metric = resolve_metric(workload, params["metric"])
        values = workload.values(metric)
        gpu_warps = params["gpu_warps"] if params["gpu_warps"] is not None else gpus.resident_warps(params["gpu"])
        inst_col = params["instructions"]
        if inst_col == "auto":
            inst_col = next((c for c in INSTRUCTION_COLUMNS if workload.has(c)), "bbv")
        inst = feats.instructions(n) if inst_col == "bbv" else workload.values(inst_col)
        warps = feats.warps(n)
        assign, rep_rows = match_launches(gpu_bbvs(feats, n), warps, gpu_warps, params["distance"])
        sizes = np.bincount(assign, minlength=len(rep_rows)).astype(np.float64)
        if params["predict"] == "cpi":
            inst_sum = np.bincount(assign, weights=inst, minlength=len(rep_rows))
            rep_inst = inst[rep_rows]
            ok = (rep_inst > 0) & (inst_sum > 0)
            weights = np.where(ok, inst_sum / np.where(ok, rep_inst, 1.0), sizes)
        else:
            weights = sizes
        names = workload.kernels["name"].to_numpy()
        keys = [f"{names[r]} ({int(warps[r])} warps)" for r in rep_rows]
        extra = {
            "method": (
                "Photon: hits predicted as CPI(representative) × instructions"
                if params["predict"] == "cpi"
                else "Photon as re-implemented by STEM: hits predicted as the representative's time"
            ),
            "gpu_warps": int(gpu_warps),
            "instructions_column": inst_col,
        }
        return representative_plan(
            workload,
            self,
            params,
            seed,
            metric=metric,
            values=values,
            labels=assign,
            reps=rep_rows,
            weights=weights,
            keys=keys,
            extra_prediction=extra,
            audit=params["audit"],
            audit_by=params["audit_by"],
            apportion=inst if params["predict"] == "cpi" else None,
        )


class _RepMatrix:
    """Representatives of one kind, as a growing contiguous matrix of GPU BBVs."""

    def __init__(self, width: int) -> None:
        self.data = np.zeros((8, max(width, 1)))
        self.sq = np.zeros(8)
        self.warps = np.zeros(8, dtype=np.int64)
        self.index = np.zeros(8, dtype=np.int64)  # representative number
        self.n = 0

    def add(self, vec: np.ndarray, sq: float, warps: int, index: int) -> None:
        if self.n == len(self.sq):
            grow = 2 * len(self.sq)
            self.data = np.concatenate([self.data, np.zeros((grow - self.n, self.data.shape[1]))])
            self.sq = np.resize(self.sq, grow)
            self.warps = np.resize(self.warps, grow)
            self.index = np.resize(self.index, grow)
        if len(vec) > self.data.shape[1]:
            wide = np.zeros((self.data.shape[0], max(len(vec), 2 * self.data.shape[1])))
            wide[:, : self.data.shape[1]] = self.data
            self.data = wide
        self.data[self.n, : len(vec)] = vec
        self.data[self.n, len(vec) :] = 0.0
        self.sq[self.n] = sq
        self.warps[self.n] = warps
        self.index[self.n] = index
        self.n += 1

    def distances(self, vec: np.ndarray, sq: float, threshold: float) -> np.ndarray:
        """Euclidean distance to every representative (zero-padded), exact near the threshold."""
        m = self.data[: self.n]
        width = min(len(vec), m.shape[1])
        d2 = self.sq[: self.n] + sq - 2.0 * (m[:, :width] @ vec[:width])
        d = np.sqrt(np.maximum(d2, 0.0))
        near = np.flatnonzero(d < threshold * 1.01 + 1e-9)
        if len(near):
            pad = np.zeros(max(len(vec), m.shape[1]))
            pad[: len(vec)] = vec
            diff = np.zeros((len(near), len(pad)))
            diff[:, : m.shape[1]] = m[near]
            diff -= pad
            d[near] = np.sqrt(np.einsum("ij,ij->i", diff, diff))
        return d


def match_launches(bbvs: GpuBBVs, warps: np.ndarray, gpu_warps: int, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Photon's online walk: the representative number of every launch, and their rows."""
    n = len(warps)
    assign = np.empty(n, dtype=np.int64)
    rep_rows: list[int] = []
    by_warps: dict[int, _RepMatrix] = {}
    big = _RepMatrix(16)  # representatives that are not small, for matches across warp counts
    for i in range(n):
        vec = bbvs.vector(i)
        sq = float(bbvs.sqnorm[i])
        w = int(warps[i])
        hit = -1
        same = by_warps.get(w)
        if same is not None and same.n:
            d = same.distances(vec, sq, threshold)
            ok = np.flatnonzero(d < threshold)
            if len(ok):
                # nearest; ties to the most recent (largest position)
                best = ok[np.lexsort((-ok, d[ok]))[0]]
                hit = int(same.index[best])
        if hit < 0 and w >= gpu_warps and big.n:
            d = big.distances(vec, sq, threshold)
            ok = np.flatnonzero((d < threshold) & (big.warps[: big.n] != w))
            if len(ok):
                gap = np.abs(big.warps[ok] - w)
                best = ok[np.lexsort((-ok, gap))[0]]
                hit = int(big.index[best])
        if hit >= 0:
            assign[i] = hit
            continue
        r = len(rep_rows)
        rep_rows.append(i)
        assign[i] = r
        if same is None:
            same = by_warps[w] = _RepMatrix(len(vec))
        same.add(vec, sq, w, r)
        if w >= gpu_warps:
            big.add(vec, sq, w, r)
    return assign, np.asarray(rep_rows, dtype=np.int64)


@hookimpl
def register_samplers(register):
    register(PhotonSampler())
