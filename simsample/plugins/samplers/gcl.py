"""GCL-Sampler (``gcl-sampler.txt``): kernel similarity learned from instruction graphs.

Each launch's chosen warps (one SM's CTAs, subsampled; :mod:`simsample.gcl.streams`) become a
heterogeneous relational graph (:mod:`simsample.plugins.samplers._gcl.graphs`); an RGCN encoder trained with graph
contrastive learning embeds every launch in 256 dimensions (:mod:`simsample.plugins.samplers._gcl.train`); k-means
with the silhouette-chosen K clusters the embeddings (:mod:`simsample.plugins.samplers._gcl.cluster`). The first
launch of each cluster is its representative, with weight = the cluster's size.

The design input is an Accel-Sim trace folder: the graphs need instructions, registers and
addresses, which profiles do not hold. The network needs the ``gcl`` extra (``torch`` and
``torch-geometric``); without it the sampler is listed with a note and refuses to plan, and nothing
else in simsample imports them. Training runs on the CPU.

The paper's values are the defaults where it gives them (dimensions 64/128/256, projection
128/64, augmentations 15%/15%/σ 0.01, τ 0.05, AdamW at 7e-4 with cosine annealing, 80/20 split).
It does not give the number of epochs, the batch size, the number of bases, dropout or weight
decay. In an 80-epoch run on the ``hetero`` traces the validation loss reached its floor by epoch
5 and the training loss levelled off by epoch 15; ``epochs`` = 40 leaves room for workloads with
more distinct kernels, and training stops early once the validation loss has not improved for
``patience`` epochs (the best epoch's weights are kept, as they always were). An epoch trains on at
most ``epoch_launches`` launches and validates on at most ``validation_max``, so the time per epoch
stops growing with the launches; what still grows is reading the graphs and embedding each launch
once (see :mod:`simsample.plugins.samplers._gcl.train` and the performance page).

A plan has no statistical bound: one launch stands for each cluster, and launches whose
instruction streams look alike (the same kernel on grids of different sizes) share a cluster
whatever their durations; the weight counts launches, not their work.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from simsample.sdk import (
    AUDIT_BY_PARAM,
    AUDIT_PARAM,
    Param,
    Plan,
    Sampler,
    UserError,
    Workload,
    first_of_each,
    hookimpl,
    relabel_by_first,
    representative_plan,
)

INSTALL_HINT = "it needs torch and torch-geometric: pip install 'simsample[gcl]'"


def _installed(module: str) -> bool:
    """Whether ``module`` can be imported, found without importing it (torch takes seconds)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


class GclSampler(Sampler):
    name = "gcl"
    version = "3"  # 3: the audit follows the cycles (audit_by=cycles; version 2: audit_by=cost)
    description = "GCL-Sampler: RGCN contrastive embeddings of instruction graphs, k-means with silhouette-chosen K"
    params = (
        Param("epochs", int, 40, "training epochs (the paper gives none; see the docs)", minimum=0),
        Param("batch", int, 64, "launches per contrastive batch (two views each)", minimum=2),
        Param("hidden", int, 128, "RGCN hidden dimension", minimum=1),
        Param("embedding", int, 256, "launch embedding dimension (the last RGCN layer)", minimum=1),
        Param("proj_hidden", int, 128, "projection head's hidden dimension", minimum=1),
        Param("proj_out", int, 64, "projection head's output dimension", minimum=1),
        Param("bases", int, 2, "bases of the RGCN basis decomposition", minimum=1),
        Param(
            "dropout", float, 0.1, "dropout after the first two RGCN layers and in the head", minimum=0.0, maximum=0.9
        ),
        Param("temperature", float, 0.05, "InfoNCE temperature", minimum=1e-4),
        Param("lr", float, 7e-4, "AdamW initial learning rate (cosine-annealed)", minimum=0.0),
        Param("weight_decay", float, 0.01, "AdamW weight decay", minimum=0.0),
        Param("node_drop", float, 0.15, "augmentation: share of nodes dropped", minimum=0.0, maximum=0.9),
        Param("edge_drop", float, 0.15, "augmentation: share of edges dropped", minimum=0.0, maximum=0.9),
        Param("noise", float, 0.01, "augmentation: σ of the Gaussian feature noise", minimum=0.0),
        Param("validation", float, 0.2, "share of launches held out for validation", minimum=0.0, maximum=0.5),
        Param("validation_max", int, 64, "validation launches at most", minimum=2),
        Param(
            "patience",
            int,
            8,
            "stop training after this many epochs without a better validation loss (0: never early)",
            minimum=0,
        ),
        Param("epoch_launches", int, 256, "training launches per epoch at most (drawn afresh each epoch)", minimum=2),
        Param("warps", int, 16, "warps per launch read into its graph (subsampled with the plan's seed)", minimum=1),
        Param("max_insts", int, 4096, "instructions kept per warp (its first ones)", minimum=1),
        Param("sms", int, 80, "SMs the CTAs are dealt to round-robin (QV100: 80)", minimum=1),
        Param("sm", int, 0, "the representative SM whose CTAs are read", minimum=0),
        Param("k_max", int, 20, "largest K tried", minimum=1),
        Param(
            "tolerance",
            float,
            0.01,
            "silhouette scores within this of the best count as comparable (the smallest K wins)",
            minimum=0.0,
        ),
        Param("cache", str, "auto", "graph cache folder: auto = the user's cache folder, none = no cache"),
        Param("jobs", int, None, "processes reading traces (default: the usable cores)", minimum=1, nullable=True),
        AUDIT_PARAM,
        AUDIT_BY_PARAM,
    )
    bounded = False

    def unavailable(self) -> str | None:
        missing = [m for m in ("torch", "torch_geometric") if not _installed(m)]
        return f"{' and '.join(missing)} not installed; {INSTALL_HINT}" if missing else None

    def check_workload(self, workload: Workload, params: Mapping[str, Any]) -> None:
        super().check_workload(workload, params)
        if params.get("sm", 0) >= params.get("sms", 80):
            raise UserError(f"parameter sm: {params['sm']} is not an SM of {params['sms']} (sm counts from 0)")
        self._adapter(workload)

    @staticmethod
    def _adapter(workload: Workload):
        """The adapter of the simulator whose traces the workload was read from (cheap: the
        traces themselves are scanned once, by :meth:`plan`)."""
        from simsample.sdk import workload_adapter

        adapter = workload_adapter(workload)
        if adapter is None:
            raise UserError(
                f"{workload.source or 'the workload'} is a {workload.format} profile; GCL-Sampler reads instruction "
                "streams: plan on an Accel-Sim trace folder (kernelslist.g with kernel-N.traceg[.xz])"
            )
        return adapter

    def plan(self, workload: Workload, params: Mapping[str, Any], seed: int) -> Plan:
        from simsample.plugins.samplers._gcl.build import default_cache, launch_graphs
        from simsample.plugins.samplers._gcl.cluster import choose_k
        from simsample.sdk import WarpSelection, task, usable_cpus

        self.check_workload(workload, params)
        traces = self._adapter(workload).instruction_traces(workload)
        selection = WarpSelection(
            sms=params["sms"], sm=params["sm"], warps=params["warps"], max_insts=params["max_insts"], seed=seed
        )
        cache_param = params["cache"]
        cache = (
            None if cache_param.lower() == "none" else default_cache() if cache_param == "auto" else Path(cache_param)
        )
        jobs = params["jobs"] or usable_cpus()
        with task("gcl: graphs", len(set(traces.files))) as advance:
            graphs, _ = launch_graphs(traces, selection, cache=cache, jobs=jobs, progress=advance)
        from simsample.plugins.samplers._gcl.scratch import torch_scratch

        passive_omp_threads()
        with torch_scratch():  # torch's generated modules and caches go to a folder removed afterwards
            from simsample.plugins.samplers._gcl.train import (  # torch is imported here, not before
                TrainConfig,
                train_and_embed,
            )

            cfg = TrainConfig(
                epochs=params["epochs"],
                batch=params["batch"],
                hidden=params["hidden"],
                out=params["embedding"],
                proj_hidden=params["proj_hidden"],
                proj_out=params["proj_out"],
                bases=params["bases"],
                dropout=params["dropout"],
                temperature=params["temperature"],
                lr=params["lr"],
                weight_decay=params["weight_decay"],
                node_drop=params["node_drop"],
                edge_drop=params["edge_drop"],
                noise=params["noise"],
                validation=params["validation"],
                validation_max=params["validation_max"],
                patience=params["patience"],
                epoch_launches=params["epoch_launches"],
            )
            torch_threads(jobs)
            with task("gcl: training", params["epochs"]) as advance:
                shown = [0]

                def epoch_done(e: int, n: int) -> None:
                    advance(e - shown[0])
                    shown[0] = e

                trained = train_and_embed(graphs, cfg, seed, progress=epoch_done)
        clustering = choose_k(trained.embeddings, k_max=params["k_max"], tolerance=params["tolerance"], seed=seed)
        labels, k = relabel_by_first(clustering.labels)
        reps = first_of_each(labels, k)
        weights = np.bincount(labels, minlength=k).astype(np.float64)
        try:
            metric = workload.default_metric()
            values = workload.values(metric)
        except UserError:
            metric, values = "none", np.zeros(len(workload))
        names = workload.kernels["name"].astype(str).to_numpy()
        keys = [f"gcl cluster {c}: {names[reps[c]]}" for c in range(k)]
        extra = {
            "gcl": {
                "k": int(k),
                "silhouettes": {str(kk): round(v, 6) for kk, v in clustering.silhouettes.items()},
                "selection": selection.to_json(),
                "graphs": {
                    "launches": len(graphs),
                    "distinct": trained.distinct_graphs,
                    "nodes": int(sum(g.n_nodes for g in graphs)),
                    "edges": int(sum(g.n_edges for g in graphs)),
                },
                "training": {
                    "train_launches": trained.train_launches,
                    "validation_launches": trained.validation_launches,
                    "best_epoch": trained.best_epoch,
                    "epochs_run": trained.epochs_run,
                    "final_train_loss": trained.train_loss[-1] if trained.train_loss else None,
                    "best_validation_loss": min(trained.validation_loss) if trained.validation_loss else None,
                },
            }
        }
        return representative_plan(
            workload,
            self,
            params,
            seed,
            metric=metric,
            values=values,
            labels=labels,
            reps=reps,
            weights=weights,
            keys=keys,
            extra_prediction=extra,
            audit=params["audit"],
            audit_by=params["audit_by"],
        )


def passive_omp_threads() -> None:
    """Torch's OpenMP threads sleep while they wait for work instead of spinning
    (``OMP_WAIT_POLICY=PASSIVE``, unless the user set a policy), read once when torch loads.

    A training step is many small operations, and between them spinning threads hold their cores:
    on two cores shared with other processes, two epochs on the hetero traces took 28 s of CPU and
    203 s of wall time spinning, 5.6 s and 41 s sleeping (one thread: 6.2 s and 67 s). On an idle
    machine the difference is a wake-up per operation."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def torch_threads(jobs: int) -> None:
    """Torch's intra-op threads: the cores the plan may use (``jobs``, by default the usable
    cores), never more. Torch's own default counts the machine's cores, not those the process may
    run on (CPU affinity, a batch job's share); threads beyond those spin against each other (on
    two cores shared with other processes, two threads took five times the CPU time of one per
    training epoch)."""
    import torch

    torch.set_num_threads(max(1, int(jobs)))


@hookimpl
def register_samplers(register):
    register(GclSampler())
