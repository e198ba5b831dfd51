"""How the public API checks its arguments: what click checks for the command line, done for
callers of the functions. A wrong argument is one line naming it, raised as a simsample error
that is also the standard exception (:class:`~simsample.errors.UserTypeError` is a
``TypeError``, :class:`~simsample.errors.UserValueError` a ``ValueError``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simsample.errors import UserTypeError, UserValueError

if TYPE_CHECKING:
    import pandas as pd

    from simsample.planfile import Plan


#: the seeds a plan records (numpy's generators take up to 2**32 - 1 as the CLI's --seed does)
MAX_SEED = 2**32 - 1
#: the plans ``evaluate`` makes per workload and setting (``--repeat``, ``repeats=``): far more than
#: coverage needs (10^4 repeats give it to +-0.5%), far fewer than a typo like 10^23 that would run
#: until killed (docs/limits.md)
MAX_REPEATS = 100_000


def check_seed(seed: Any) -> int:
    """``seed`` as an int, refused unless it is a whole number from 0 to 2**32 - 1 (1.5 is not
    truncated, "3" is not parsed: the plan records exactly the seed given)."""
    import numbers

    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise UserTypeError(f"seed: expected a whole number from 0 to {MAX_SEED}, got {type(seed).__name__} {seed!r}")
    if not 0 <= int(seed) <= MAX_SEED:
        raise UserValueError(f"seed {seed}: must be from 0 to {MAX_SEED}")
    return int(seed)


def check_name(name: Any, what: str) -> str:
    """A plugin's name (a sampler, a reader's format): a string."""
    if not isinstance(name, str):
        raise UserTypeError(f"{what}: expected a name (a string such as 'margin' or 'csv'), got {type(name).__name__}")
    return name


def as_plan(plan: Any, what: str = "plan") -> Plan:
    """A ``Plan``, or the plan file a path names (read and checked)."""
    import os

    from simsample.planfile import Plan as _Plan

    if isinstance(plan, _Plan):
        return plan
    if isinstance(plan, (str, os.PathLike)):
        return _Plan.read(plan)
    raise UserTypeError(f"{what}: expected a Plan or the path of a plan file, got {type(plan).__name__}")


def as_path(value: Any, what: str) -> Path:
    import os

    if isinstance(value, (str, os.PathLike)) and str(value) != "":
        return Path(value)
    raise UserTypeError(f"{what}: expected a path, got {type(value).__name__ if value != '' else 'an empty string'}")


def as_paths(value: Any, what: str) -> list[Path]:
    import os

    items = [value] if isinstance(value, (str, os.PathLike)) else value
    if not isinstance(items, (list, tuple)) or not items:
        raise UserTypeError(
            f"{what}: expected a path or a list of paths, got {type(value).__name__ if items else 'nothing'}"
        )
    return [as_path(v, what) for v in items]


def check_confidence(confidence: Any) -> float | None:
    if confidence is None:
        return None
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)):
        raise UserTypeError(
            f"confidence: expected a number between 0 and 1 (such as 0.95), got {type(confidence).__name__} "
            f"{confidence!r}"
        )
    import math

    c = float(confidence)
    if not (math.isfinite(c) and 0 < c < 1):
        raise UserValueError(f"confidence {confidence!r}: must be between 0 and 1 (such as 0.95)")
    return c


def numeric(col: pd.Series, name: str, source: str) -> pd.Series:
    """A metric column as float64; text that is not a number is refused, naming the first cell."""
    import numpy as np
    import pandas as pd

    if pd.api.types.is_bool_dtype(col):
        raise UserValueError(f"{source}: column {name} holds true/false values, not a metric")
    num = pd.to_numeric(col, errors="coerce")
    bad = num.isna() & col.notna()
    if bad.any():
        i = int(bad.to_numpy().nonzero()[0][0])
        raise UserValueError(f"{source}: column {name} is not numeric ({str(col.iloc[i])[:40]!r})")
    return num.astype(np.float64)


def numeric_columns(results: pd.DataFrame, source: str) -> pd.DataFrame:
    """For a table without declarations: text columns (not named like ids) must hold numbers,
    as a CSV of values must: a column of words is refused rather than dropped without a word."""
    import pandas as pd

    from simsample.sampling.metrics import looks_like_id

    out = {}
    for c in results.columns:
        s = results[c]
        if looks_like_id(c) or pd.api.types.is_bool_dtype(s) or pd.api.types.is_numeric_dtype(s) or s.isna().all():
            out[c] = s
            continue
        out[c] = numeric(s, str(c), source)
    return pd.DataFrame(out, index=results.index)


def check_evaluate_args(
    workloads: Any,
    repeats: Any,
    sweep: Any,
    against: Any,
    truth: Any,
    truth_metric: Any,
    min_launches: Any,
    on_progress: Any,
) -> None:
    """The checks ``simsample evaluate``'s options get from click, for callers of the function."""
    import os

    import pandas as pd

    from simsample.workload import Workload as _Workload

    items = list(workloads) if isinstance(workloads, (list, tuple)) else [workloads]
    if not items:
        raise UserValueError("workloads: none given; give a Workload, a profile or a folder of profiles")
    for item in items:
        if not isinstance(item, (_Workload, str, os.PathLike)):
            raise UserTypeError(f"workloads: expected Workloads or paths of profiles, got {type(item).__name__}")
    for name, value in (("repeats", repeats), ("min_launches", min_launches)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise UserTypeError(f"{name}: expected a whole number of at least 1, got {type(value).__name__} {value!r}")
        if value < 1:
            raise UserValueError(f"{name} {value}: must be at least 1")
    if repeats > MAX_REPEATS:
        raise UserValueError(
            f"repeats {repeats}: at most {MAX_REPEATS:,} plans per workload are evaluated; give fewer repeats"
        )
    if sweep is not None:
        if not isinstance(sweep, Mapping):
            raise UserTypeError(
                "sweep: expected a mapping of parameter names to lists of values such as {'count': [2, 4]}, got "
                f"{type(sweep).__name__} {sweep!r}"
            )
        for k, vs in sweep.items():
            if isinstance(vs, (str, bytes)) or not isinstance(vs, (list, tuple, range)):
                raise UserTypeError(
                    f"sweep {k}: expected a list of values such as [2, 4], got {type(vs).__name__} {vs!r}"
                )
    if against is not None and not isinstance(against, (_Workload, str, os.PathLike)):
        raise UserTypeError(f"against: expected a Workload or the path of a profile, got {type(against).__name__}")
    if truth is not None and not isinstance(truth, pd.DataFrame):
        raise UserTypeError(
            "truth: expected a table (a pandas DataFrame of kernel_id and the true value per launch), got "
            f"{type(truth).__name__}"
        )
    if not isinstance(truth_metric, str):
        raise UserTypeError(f"truth_metric: expected a column name, got {type(truth_metric).__name__}")
    if on_progress is not None and not callable(on_progress):
        raise UserTypeError(
            f"on_progress: expected a function of the number of plans done, got {type(on_progress).__name__}"
        )
