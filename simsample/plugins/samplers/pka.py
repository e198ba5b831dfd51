"""PKA's Principal Kernel Selection (PKS; Avalos Baddouh et al., MICRO'21, §3.1).

Each launch is described by twelve microarchitecture-agnostic Nsight Compute metrics (the
paper's Table 2, names in :data:`PKA_METRICS`). The method:

1. standardise the metrics (``StandardScaler``) and keep the principal components that explain
   99.95% of their variance (``variance``);
2. for k = 1 … ``k_max`` (paper: 20; the official artifact ``scripts/PKA.py`` sweeps 1 … 19),
   cluster with k-means (``KMeans(k, random_state=seed)``; the artifact fixes ``random_state=4``
   and, with the scikit-learn of its time, 10 initialisations: ``n_init``);
3. take one representative per cluster, the first launch in profile order (``representative``;
   the paper also tried the launch nearest the centre, ``center``, and a random one, ``random``),
   and project the total as Σ cluster size × representative's cycles;
4. choose the smallest k whose projection is within ``target_error`` (5%) of the profile's
   measured total, else the k with the least error. The sweep stops at the first k that meets
   the target: the choice is the same as the artifact's, which fits every k first.

Weight of a representative = its cluster's size. One launch per cluster gives no error bound.

The STEM paper (MICRO'25) compared against its own re-implementation, reproduced by
``variant=stem``: no standardisation, k capped at the number of principal components, and the k
with the least error chosen. Without standardisation the largest-magnitude counters dominate,
PCA keeps one component for a kernel whose launches differ mostly in scale, and only k = 1 is
tried; that, together with the first-launch rule, is how STEM's PKA estimates a heartwall-like
kernel (first launch 1500× shorter than the rest) with a 99.9% error, where the paper's method
isolates the short launch at k = 2.

Two-level profiling (``detailed_first=J``): detailed metrics exist only for the first J
launches (e.g. Nsight Compute with ``--launch-count J``), cheap ones (name, grid, block) for all.
PKS runs on the first J (k chosen against their measured total); a scikit-learn classifier
(``classifier=sgd|gnb|mlp``: stochastic gradient descent, Gaussian naive Bayes, multi-layer
perceptron) trained on the first J's name and launch shape then puts every later launch in one
of the k clusters. Representatives come from the first J; weights count all members.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from simsample.sdk import (
    AUDIT_BY_PARAM,
    AUDIT_PARAM,
    SHAPE_COLUMNS,
    Param,
    Plan,
    Sampler,
    UserError,
    Workload,
    first_of_each,
    hookimpl,
    relabel_by_first,
    representative_plan,
    resolve_metric,
    rng,
)

#: The twelve metrics of the PKA paper's Table 2, as Nsight Compute names them.
PKA_METRICS: tuple[str, ...] = (
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
    "smsp__inst_executed_op_global_ld.sum",
    "smsp__inst_executed_op_global_st.sum",
    "smsp__inst_executed_op_local_ld.sum",
    "smsp__inst_executed_op_shared_ld.sum",
    "smsp__inst_executed_op_shared_st.sum",
    "smsp__sass_inst_executed_op_global_atom.sum",
    "smsp__inst_executed.sum",
    "smsp__thread_inst_executed_per_inst_executed.ratio",
    "launch__grid_size",
)

PKA_HINT = (
    "profile with Nsight Compute collecting these metrics (ncu --csv --metrics "
    + ",".join(PKA_METRICS)
    + ") and read the CSV, or compute them from Accel-Sim traces with "
    "`simsample profile features --sim accelsim TRACES -o features.parquet`"
)


class PKASampler(Sampler):
    name = "pka"
    version = "2"  # 2: the audit follows the cycles (audit_by=cycles; version 1: audit_by=cost)
    description = "PKA principal kernel selection: PCA + k-means over 12 ncu metrics, one launch per cluster"
    params = (
        Param(
            "target_error",
            float,
            0.05,
            "smallest k whose projected total is within this error of the profile's",
            minimum=0.0,
            maximum=1.0,
        ),
        Param("k_max", int, 20, "largest k swept (paper 20, official artifact 19)", minimum=1),
        Param("variance", float, 0.9995, "share of variance the principal components keep", minimum=1e-6, maximum=1.0),
        Param(
            "representative", str, "first", "launch that stands for a cluster", choices=("first", "random", "center")
        ),
        Param(
            "variant",
            str,
            "pka",
            "pka: paper and artifact; stem: the STEM paper's re-implementation",
            choices=("pka", "stem"),
        ),
        Param(
            "n_init",
            int,
            10,
            "k-means initialisations per k (scikit-learn's default in the artifact's time)",
            minimum=1,
        ),
        Param(
            "detailed_first",
            int,
            None,
            "two-level mode: detailed metrics only for the first J launches",
            minimum=1,
            nullable=True,
        ),
        Param(
            "classifier",
            str,
            "sgd",
            "two-level mode: classifier that labels the later launches",
            choices=("sgd", "gnb", "mlp"),
        ),
        Param("metric", str, "auto", "per-launch cost column: auto = cycles, else duration_ns"),
        AUDIT_PARAM,
        AUDIT_BY_PARAM,
    )
    requires = PKA_METRICS
    requires_hint = PKA_HINT
    bounded = False

    def required_columns(self, params: Mapping[str, Any]) -> tuple[str, ...]:
        return () if params.get("detailed_first") else PKA_METRICS

    def check_workload(self, workload: Workload, params: Mapping[str, Any]) -> None:
        super().check_workload(workload, params)
        j = params.get("detailed_first")
        if j:
            head = workload.kernels.iloc[: min(int(j), len(workload))]
            missing = [c for c in PKA_METRICS if c not in head.columns or head[c].isna().any()]
            if missing:
                raise UserError(
                    f"sampler pka with detailed_first={j} needs column(s) {', '.join(missing)} for the first "
                    f"{min(int(j), len(workload))} launches of {workload.source or 'the workload'}; {PKA_HINT}"
                )

    def plan(self, workload: Workload, params: Mapping[str, Any], seed: int) -> Plan:
        n = len(workload)
        if n == 0:
            raise UserError(f"{workload.source or 'workload'} has no kernel launches to sample")
        self.check_workload(workload, params)
        metric = resolve_metric(workload, params["metric"])
        values = workload.values(metric)
        j = n if params["detailed_first"] is None else min(int(params["detailed_first"]), n)
        head = workload.kernels.iloc[:j]
        x = np.column_stack([head[c].to_numpy(dtype=np.float64) for c in PKA_METRICS])
        if not np.all(np.isfinite(x)):
            raise UserError(f"{workload.source or 'workload'}: the PKA metrics hold missing or infinite values")
        z = _principal_components(x, params["variance"], standardise=params["variant"] == "pka")
        distinct = len(np.unique(x, axis=0))  # of the metrics themselves: PCA may perturb equal rows
        sel = _select_k(z, values[:j], params, seed, distinct=distinct)
        labels, reps, k = sel["labels"], sel["reps"], sel["k"]
        if j < n:
            labels = np.concatenate([labels, _classify_rest(workload, j, labels, params["classifier"], seed)])
        sizes = np.bincount(labels, minlength=len(reps)).astype(np.float64)
        names = workload.kernels["name"].to_numpy()
        keys = [f"k={k} group {c}: {names[reps[c]]}" for c in range(len(reps))]
        extra = {
            "method": "PKA principal kernel selection: estimate = Σ cluster size × representative",
            "variant": params["variant"],
            "k": int(k),
            "profile_error": sel["errors"][k - 1],
            "k_errors": sel["errors"],
            "principal_components": int(z.shape[1]),
        }
        if j < n:
            extra["detailed_launches"] = int(j)
        return representative_plan(
            workload,
            self,
            params,
            seed,
            metric=metric,
            values=values,
            labels=labels,
            reps=reps,
            weights=sizes,
            keys=keys,
            extra_prediction=extra,
            audit=params["audit"],
            audit_by=params["audit_by"],
        )


def _principal_components(x: np.ndarray, variance: float, *, standardise: bool) -> np.ndarray:
    """Standardised (or raw) metrics projected on the components that keep ``variance``.

    Degenerate inputs (one launch, or no variance at all) give one zero component: every
    launch is alike and only k = 1 makes sense.
    """
    from sklearn.decomposition import PCA
    from sklearn.preprocessing import StandardScaler

    if standardise:
        x = StandardScaler().fit_transform(x)
    if len(x) < 2 or float(np.var(x, axis=0).sum()) == 0.0:
        return np.zeros((len(x), 1))
    pca = PCA(n_components=None if variance >= 1.0 else variance, svd_solver="full")
    return pca.fit_transform(x)


def _select_k(
    z: np.ndarray, values: np.ndarray, params: Mapping[str, Any], seed: int, *, distinct: int
) -> dict[str, Any]:
    """Sweep k and keep the clustering the method chooses (see the module docstring)."""
    from sklearn.cluster import KMeans

    n = len(z)
    k_hi = min(params["k_max"], n, distinct)
    stem = params["variant"] == "stem"
    if stem:
        k_hi = min(k_hi, z.shape[1])
    k_hi = max(k_hi, 1)
    total = float(values.sum())
    gen = rng(seed)
    errors: list[float | None] = []
    best: dict[str, Any] | None = None
    for k in range(1, k_hi + 1):
        if k == 1:
            raw, centers = np.zeros(n, dtype=np.int64), z.mean(axis=0, keepdims=True)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # fewer distinct points than k: scikit-learn warns
                km = KMeans(n_clusters=k, random_state=int(seed) % (2**32), n_init=params["n_init"]).fit(z)
            raw, centers = km.labels_.astype(np.int64), km.cluster_centers_
        labels, c = relabel_by_first(raw)
        centers = centers[_first_raw_order(raw, c)]
        reps = _representatives(labels, c, z, centers, params["representative"], gen)
        sizes = np.bincount(labels, minlength=c)
        projected = float(np.dot(sizes, values[reps]))
        err = abs(projected - total) / total if total > 0 else (0.0 if projected == 0 else float("inf"))
        errors.append(err)
        cand = {"k": k, "labels": labels, "reps": reps, "error": err}
        if best is None or err < best["error"]:
            best = cand
        if not stem and err < params["target_error"]:
            best = cand
            break
    assert best is not None
    best["errors"] = [None if e is None or not np.isfinite(e) else float(e) for e in errors]
    return best


def _first_raw_order(raw: np.ndarray, c: int) -> np.ndarray:
    """Raw cluster numbers in order of first appearance (to reorder k-means centres)."""
    uniq, first = np.unique(raw, return_index=True)
    return uniq[np.argsort(first, kind="stable")][:c]


def _representatives(
    labels: np.ndarray, c: int, z: np.ndarray, centers: np.ndarray, rule: str, gen: np.random.Generator
) -> np.ndarray:
    if rule == "first":
        return first_of_each(labels, c)
    if rule == "random":
        order = np.argsort(labels, kind="stable")
        bounds = np.concatenate([[0], np.cumsum(np.bincount(labels, minlength=c))])
        picks = bounds[:-1] + (gen.random(c) * np.diff(bounds)).astype(np.int64)
        return order[np.minimum(picks, bounds[1:] - 1)]
    # center: the member nearest its cluster's k-means centre; ties go to the earliest launch
    d = np.sqrt(((z - centers[labels]) ** 2).sum(axis=1))
    order = np.lexsort((np.arange(len(z)), d, labels))
    starts = np.concatenate([[0], np.cumsum(np.bincount(labels, minlength=c))[:-1]])
    return order[starts]


def _cheap_features(workload: Workload, rows: slice, names_seen: np.ndarray) -> np.ndarray:
    k = workload.kernels.iloc[rows]
    codes = k["name"].cat.codes.to_numpy(np.int64)
    onehot = (codes[:, None] == names_seen[None, :]).astype(np.float64)
    shapes = np.column_stack([np.log2(1.0 + k[c].to_numpy(np.float64)) for c in SHAPE_COLUMNS])
    return np.hstack([onehot, shapes])


def _classify_rest(workload: Workload, j: int, labels: np.ndarray, classifier: str, seed: int) -> np.ndarray:
    """Labels for launches j..N-1 from a classifier trained on the first j (name and shape)."""
    n = len(workload)
    if labels.max() == 0:
        return np.zeros(n - j, dtype=np.int64)
    names_seen = np.unique(workload.kernels["name"].cat.codes.to_numpy(np.int64)[:j])
    x_train = _cheap_features(workload, slice(0, j), names_seen)
    x_rest = _cheap_features(workload, slice(j, n), names_seen)
    uniq, inverse = np.unique(x_rest, axis=0, return_inverse=True)  # the rest repeats a few shapes
    from sklearn.naive_bayes import GaussianNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    state = int(seed) % (2**32)
    if classifier == "gnb":
        model = GaussianNB()
    elif classifier == "mlp":
        from sklearn.neural_network import MLPClassifier

        model = make_pipeline(StandardScaler(), MLPClassifier(random_state=state, max_iter=500))
    else:
        from sklearn.linear_model import SGDClassifier

        model = make_pipeline(StandardScaler(), SGDClassifier(random_state=state))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence warnings on tiny training sets
        model.fit(x_train, labels)
        pred = model.predict(uniq)
    return np.asarray(pred, dtype=np.int64)[inverse.ravel()]


@hookimpl
def register_samplers(register):
    register(PKASampler())
