"""A plan from samples chosen elsewhere: another tool's output or a paper's artifact.

Input is CSV with a ``kernel_id,weight[,cluster]`` header, or JSON: a list of
``{"kernel_id", "weight"[, "cluster"][, "members"]}`` objects, an object with such a
``samples`` list, or an object mapping ``weights`` ``{id: weight}`` with optional
``representatives`` (``{"id", "cluster", "represents": [ids]}``). When a cluster's members are
known, its profile statistics are recorded so that the estimator can give an interval.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import lazy_loader as lazy
import numpy as np

from simsample.sdk import (
    Cluster,
    FormatError,
    Param,
    Plan,
    Sampler,
    UserError,
    Workload,
    check_input_file,
    cluster_stats,
    hookimpl,
    read_text_limited,
)

pd = lazy.load("pandas")


def _read_samples(path: Path) -> tuple[pd.DataFrame, dict[str, list[int]]]:
    """Rows of kernel_id, weight, cluster (label) and, per cluster label, its members if given."""
    check_input_file(path, stream=True)  # read once, front to back: a pipe (<(...)) will do
    text = read_text_limited(path, errors="replace", stream=True)
    members: dict[str, list[int]] = {}
    if text.lstrip().startswith(("[", "{")):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FormatError(path, f"not valid JSON: {exc.msg}", line=exc.lineno) from exc
        except RecursionError:
            raise FormatError(path, "JSON nested too deeply to be a list of samples; check the file") from None
        rows: list[dict[str, Any]] = []
        if isinstance(doc, dict) and "samples" in doc:
            doc = doc["samples"]
        if isinstance(doc, list):
            for i, item in enumerate(doc):
                if not isinstance(item, dict) or "kernel_id" not in item or "weight" not in item:
                    raise FormatError(path, "expected an object with kernel_id and weight", record=f"sample {i}")
                label = str(item.get("cluster", item["kernel_id"]))
                rows.append({"kernel_id": item["kernel_id"], "weight": item["weight"], "cluster": label})
                if "members" in item:
                    members[label] = [int(x) for x in item["members"]]
        elif isinstance(doc, dict) and "weights" in doc:
            reps = {int(r["id"]): r for r in doc.get("representatives", []) if isinstance(r, dict) and "id" in r}
            for k, w in doc["weights"].items():
                r = reps.get(int(k), {})
                label = str(r.get("cluster", k))
                rows.append({"kernel_id": int(k), "weight": w, "cluster": label})
                if "represents" in r:
                    members[label] = [int(x) for x in r["represents"]]
        else:
            raise FormatError(path, "expected a list of samples, an object with 'samples', or one with 'weights'")
        df = pd.DataFrame(rows, columns=["kernel_id", "weight", "cluster"])
    else:
        try:
            df = pd.read_csv(io.StringIO(text))  # the text already read: inputs may be pipes
        except Exception as exc:
            raise FormatError(path, f"not a readable CSV ({exc})") from exc
        df.columns = [str(c).strip().lower() for c in df.columns]
        if not {"kernel_id", "weight"} <= set(df.columns):
            raise FormatError(path, "expected a header with kernel_id and weight (and optionally cluster)", line=1)
        if "cluster" not in df.columns:
            df["cluster"] = df["kernel_id"]
        df["cluster"] = df["cluster"].astype(str)
    if df.empty:
        raise FormatError(path, "no samples")
    for col in ("kernel_id", "weight"):
        num = pd.to_numeric(df[col], errors="coerce")
        if num.isna().any():
            bad = int(np.flatnonzero(num.isna().to_numpy())[0])
            raise FormatError(path, f"{col} is not a number", record=f"sample {bad}")
        df[col] = num
    if (df["weight"] <= 0).any():
        raise FormatError(
            path, "weights must be positive", record=f"sample {int(np.flatnonzero(df['weight'] <= 0)[0])}"
        )
    return df[["kernel_id", "weight", "cluster"]], members


class ExplicitSampler(Sampler):
    name = "explicit"
    version = "1"
    description = "a plan from a given list of (kernel_id, weight[, cluster]) in CSV or JSON"
    params = (
        Param("file", str, "", "CSV or JSON file with the samples"),
        Param("metric", str, "auto", "column whose profile statistics are recorded per cluster"),
    )

    def plan(self, workload: Workload, params: Mapping[str, Any], seed: int) -> Plan:
        if not params["file"]:
            raise UserError("sampler explicit needs --param file=SAMPLES.csv|.json")
        df, members = _read_samples(Path(params["file"]))
        ids = workload.kernels["kernel_id"].to_numpy(np.int64)
        pos = pd.Series(np.arange(len(ids)), index=ids)
        unknown = sorted(set(df["kernel_id"].astype(np.int64)) - set(ids))
        if unknown:
            shown = ", ".join(map(str, unknown[:10])) + (" ..." if len(unknown) > 10 else "")
            raise UserError(f"{params['file']}: kernel id(s) not in {workload.source or 'the workload'}: {shown}")
        try:
            metric = workload.default_metric() if params["metric"] == "auto" else params["metric"]
            values = workload.values(metric)
        except UserError:
            metric, values = "none", None
        labels = sorted(df["cluster"].unique(), key=lambda s: (len(s), s))
        cid = {label: i for i, label in enumerate(labels)}
        clusters = []
        for label in labels:
            part = df[df["cluster"] == label]
            size = float(part["weight"].sum())
            mem = members.get(label)
            st: dict[str, float] = {}
            if mem is not None:
                bad = sorted(set(mem) - set(ids))
                if bad:
                    raise UserError(f"{params['file']}: cluster {label} names unknown kernel id(s) {bad[:10]}")
                if values is not None:
                    st = cluster_stats(values[pos.loc[mem].to_numpy()])
                size = len(mem)
            clusters.append(
                Cluster(
                    cid[label],
                    label,
                    max(1, int(round(size))),
                    len(part),
                    st,
                    sorted(int(k) for k in part["kernel_id"].unique()),
                )
            )
        total_w = float(df["weight"].sum())
        rows = pos.loc[df["kernel_id"].astype(np.int64).to_numpy()].to_numpy()
        extra = {"weight_sum": total_w}
        if abs(total_w - len(workload)) > 1e-6 * max(1, len(workload)):
            extra["note"] = f"weights sum to {total_w:g}, not to the {len(workload)} launches of the workload"
        has_stats = all(c.stats for c in clusters)
        return Plan.build(
            workload,
            self,
            params,
            seed,
            metric=metric,
            rows=rows,
            weights=df["weight"].to_numpy(np.float64),
            cluster_of_row=df["cluster"].map(cid).to_numpy(),
            clusters=clusters,
            kind="stratified" if has_stats else "representative",
            replace=False,
            extra_prediction=extra,
        )


@hookimpl
def register_samplers(register):
    register(ExplicitSampler())
