"""What the public API returns: an estimate of a workload's metrics and a sampler's evaluation.

Both are plain records with tables (``to_dataframe``), the JSON the command line prints
(``to_json``) and a one-line ``repr``; the functions that make them are in
:mod:`simsample.library`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from simsample.planfile import Plan
    from simsample.sampling.estimate import MetricEstimate
    from simsample.sampling.evaluate import WorkloadResult


@dataclass(repr=False)
class Estimate:
    """Whole-workload estimates of every metric, with their intervals.

    ``estimates`` holds one ``MetricEstimate`` per metric (counts first, then ratios);
    ``left_out`` the declared metrics that could not be estimated (a count the simulator printed
    for some launches only, and the ratios built on it); ``launches`` and ``projected`` how many
    simulated launches the estimate stands on, and how many of them were projected (Accel-Sim's
    PKP). ``to_dataframe()`` gives the estimates as a table indexed by metric, with the relative
    half-width of each interval (what to read first: how far the truth can be from the estimate).
    """

    plan: Plan
    estimates: list[MetricEstimate]
    left_out: list[str] = field(default_factory=list)
    launches: int = 0
    projected: int = 0

    def __repr__(self) -> str:
        shown = ", ".join(e.metric for e in self.estimates[:6]) + (", ..." if len(self.estimates) > 6 else "")
        return (
            f"<Estimate of {len(self.estimates)} metric(s) ({shown}) from {self.launches} simulated launch(es), plan "
            f"{self.plan.digest}>"
        )

    def to_dataframe(self) -> pd.DataFrame:
        import pandas as pd

        rows = [{**e.to_json(), "half_width_pct": half_width_pct(e)} for e in self.estimates]
        cols = [
            "metric",
            "estimate",
            "std_error",
            "ci_low",
            "ci_high",
            "half_width_pct",
            "confidence",
            "samples",
            "kind",
            "dof",
        ]
        return pd.DataFrame(rows, columns=cols).set_index("metric")

    def to_json(self) -> dict[str, Any]:
        """What ``simsample estimate --json`` prints (the report reads it). Launches the plan's
        filters left out (measured on the GPU, not simulated) are named beside the estimate, never
        added to it."""
        from simsample.sampling.filters import excluded_summary

        p = self.plan
        excluded = excluded_summary(p)
        doc = {
            "plan": {
                "sampler": p.sampler["name"],
                "samples": len(p.samples),
                "fingerprint": p.workload.get("fingerprint"),
                "digest": p.digest,
                "error_bound": p.prediction.get("error_bound"),
                "confidence": p.prediction.get("confidence"),
            },
            "estimates": [{**e.to_json(), "half_width_pct": half_width_pct(e)} for e in self.estimates],
            # declared metrics the simulator reported for some launches only (and their ratios): not estimated
            **({"left_out": list(self.left_out)} if self.left_out else {}),
        }
        if excluded:
            doc["plan"]["excluded"] = {"filters": (p.process or {}).get("filters"), **dict(excluded)}
        return doc


def half_width_pct(e: MetricEstimate) -> float | None:
    """Half the interval's width in percent of the estimate (None without an interval)."""
    if e.ci_low is None or e.ci_high is None or not e.estimate:
        return None
    return 100.0 * (e.ci_high - e.ci_low) / 2 / abs(e.estimate)


@dataclass(repr=False)
class Evaluation:
    """A sampler scored on workloads: one ``WorkloadResult`` per
    workload and parameter set, the suite's means, and the inputs passed over."""

    sampler: str
    repeats: int
    results: list[WorkloadResult]
    swept: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        swept = (
            f" x {len(self.results) // max(1, len({r.name for r in self.results}))} parameter sets"
            if self.swept
            else ""
        )
        return (
            (
                f"<Evaluation of {self.sampler}: {len({r.name for r in self.results})} workload(s){swept}, "
                f"{self.repeats} repeats each"
            )
            + (f", {len(self.skipped)} input(s) skipped" if self.skipped else "")
            + ">"
        )

    @property
    def suite(self) -> dict[str, Any] | list[dict[str, Any]]:
        """The suite's figures: one dict, or one per swept parameter set (with ``params``)."""
        from simsample.sampling.evaluate import suite_summary

        if not self.swept:
            return suite_summary(self.results)
        out = []
        seen: list[dict[str, Any]] = []
        for r in self.results:
            key = {k: r.params[k] for k in self.swept}
            if key not in seen:
                seen.append(key)
        for key in seen:
            part = [r for r in self.results if all(r.params[k] == v for k, v in key.items())]
            out.append({"params": key, **suite_summary(part)})
        return out

    def to_dataframe(self) -> pd.DataFrame:
        """One row per workload and parameter set: the figures ``simsample evaluate`` prints."""
        import pandas as pd

        rows = []
        for r in self.results:
            d = r.to_json()
            params = d.pop("params")
            rows.append({**d, **{k: params[k] for k in self.swept}})
        return pd.DataFrame(rows)

    def suite_dataframe(self) -> pd.DataFrame:
        """The suite's figures, one row per parameter set."""
        import pandas as pd

        suite = self.suite
        rows = suite if isinstance(suite, list) else [{"params": {}, **suite}]
        return pd.DataFrame([{**r["params"], **{k: v for k, v in r.items() if k != "params"}} for r in rows])

    def to_json(self) -> dict[str, Any]:
        """What ``simsample evaluate --json`` prints (the report reads it)."""
        return {"workloads": [r.to_json() for r in self.results], "suite": self.suite}
