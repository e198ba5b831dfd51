"""Grouping launches before sampling: by kernel name, by (name, grid, block), or by name and
what the traces say a launch's cycles depend on besides its instructions (occupancy, cache
context).

STEM groups by the kernel name without its argument list (:func:`~simsample.io.names.strip_args`,
the trailing balanced parenthesised group, not the text before the first ``(``); Allegro by
name, grid and block. Groups are numbered in the order of their keys (name, then shape), so the
numbering does not depend on the order in which a reader happened to meet the names.

Everything works on the categorical codes of the name column and on per-column factorisations of
the shapes: no Python loop over launches.
"""

from __future__ import annotations

from dataclasses import dataclass

import lazy_loader as lazy
import numpy as np

from simsample.errors import UserError
from simsample.io.names import strip_args
from simsample.workload import SHAPE_COLUMNS, Workload

pd = lazy.load("pandas")

GROUPINGS = (
    "auto",
    "name",
    "name+shape",
    "name+occupancy",
    "name+occupancy+context",
    "name+context",
    "name+shape+context",
)
#: The suffix that splits a grouping's groups by :func:`context_class` as well.
CONTEXT_SUFFIX = "+context"

#: Columns the ``name+occupancy`` grouping reads (``simsample profile features`` writes them).
OCCUPANCY_COLUMNS = ("sms_used", "waves")
#: The share of a launch's loads that find lines recent launches touched (trace features; see
#: ``simsample_accelsim.context``), which ``name+occupancy+context`` reads besides the occupancy.
CONTEXT_COLUMN = "warm_reads"
#: Context classes of :func:`context_class`, coldest first.
CONTEXT_CLASSES = ("cold", "part", "warm")


def context_class(shares: np.ndarray) -> np.ndarray:
    """0 (cold: under a quarter of the loads find recent lines), 1 (partly warm) or 2 (warm: three
    quarters or more). Three classes, not the share itself: launches whose shares differ by a few
    points run alike, and every class costs the plan at least one draw."""
    s = np.asarray(shares, dtype=np.float64)
    return np.where(s < 0.25, 0, np.where(s < 0.75, 1, 2)).astype(np.int64)


def resolve_grouping(workload: Workload, by: str) -> str:
    """``auto``: by name, occupancy class and context class where the workload carries their
    columns (trace features: a launch's instructions cost what its shape and the caches it meets
    make them cost, which the instruction counts do not show; features written before the
    context column: name and occupancy), by name elsewhere (profiles: measured times already
    carry both). Any other grouping is returned as given, after checking that the workload has
    what it needs (one line naming the missing column)."""
    if by == "auto":
        if not all(workload.has(c) for c in OCCUPANCY_COLUMNS):
            return "name"
        return "name+occupancy+context" if workload.has(CONTEXT_COLUMN) else "name+occupancy"
    if by.startswith("name+occupancy") or by.endswith(CONTEXT_SUFFIX):
        needed = (OCCUPANCY_COLUMNS if by.startswith("name+occupancy") else ()) + (
            (CONTEXT_COLUMN,) if by.endswith(CONTEXT_SUFFIX) else ()
        )
        missing = [c for c in needed if not workload.has(c)]
        if missing:
            raise UserError(
                f"{workload.source or 'workload'} has no {missing[0]!r} column, which group={by} needs; "
                "plan on trace features (`simsample profile features`) or choose group=name"
            )
    named = (
        workload.meta.get("columns") if workload.format == "csv" else None
    )  # the generic CSV reads absent shapes as 1
    if by.startswith("name+shape") and isinstance(named, dict) and not any(c in named for c in SHAPE_COLUMNS):
        raise UserError(
            f"{workload.source or 'workload'} has no launch shapes (grid and block columns), which group=name+shape "
            "needs; give their columns or choose group=name"
        )
    return by


@dataclass
class Grouping:
    """``codes[row]`` is the group of each launch (0..count-1); ``keys[g]`` names group g."""

    codes: np.ndarray
    keys: list[str]

    @property
    def count(self) -> int:
        return len(self.keys)


def group_launches(workload: Workload, by: str = "name") -> Grouping:
    """Group the launches of ``workload`` by ``name``, ``name+shape`` (grid and block),
    ``name+occupancy`` (the SMs a launch occupies and its waves: launches of one kernel whose
    shapes spread the same instructions over different parts of the GPU) or
    ``name+occupancy+context`` (and whether its loads find recent lines: :func:`context_class`);
    ``name+context`` and ``name+shape+context`` likewise split by name or by name and shape;
    ``auto``: see :func:`resolve_grouping`."""
    if by not in GROUPINGS:
        raise UserError(f"unknown grouping {by!r} (known: {', '.join(GROUPINGS)})")
    by = resolve_grouping(workload, by)
    names = workload.kernels["name"]
    if not isinstance(names.dtype, pd.CategoricalDtype):
        names = names.astype("category")
    cats = [strip_args(str(c)) for c in names.cat.categories]
    uniq = sorted(set(cats))
    rank = {c: i for i, c in enumerate(uniq)}
    remap = np.array([rank[c] for c in cats], dtype=np.int64)
    cat_codes = names.cat.codes.to_numpy()
    context = by.endswith(CONTEXT_SUFFIX)
    base = by[: -len(CONTEXT_SUFFIX)] if context else by
    if by == "name" and len(cats) and cat_codes.size and int(cat_codes.min()) >= 0:
        # the codes _compress gives, through a table over the categories: one pass over the
        # launches instead of a hash factorisation (a tenth of a second at 10^6 launches)
        present = np.zeros(len(uniq), dtype=bool)
        present[remap[np.flatnonzero(np.bincount(cat_codes, minlength=len(cats)))]] = True
        used = np.flatnonzero(present)
        table = np.cumsum(present, dtype=np.int64) - 1
        return Grouping(codes=table[remap][cat_codes], keys=[uniq[u] for u in used])
    codes = remap[cat_codes.astype(np.int64)] if len(cats) else np.zeros(len(names), np.int64)
    if by == "name":
        used, codes = _compress(codes)
        return Grouping(codes=codes, keys=[uniq[u] for u in used])
    # name + shape, occupancy or context: mixed-radix codes, name most significant, re-compressed before overflow
    k = workload.kernels
    columns = {"name+shape": SHAPE_COLUMNS, "name+occupancy": OCCUPANCY_COLUMNS}.get(base, ())
    values = [k[col].to_numpy() for col in columns]
    if context:
        values.append(context_class(k[CONTEXT_COLUMN].to_numpy(np.float64)))
    shape_levels = []
    for v in values:
        c, levels = pd.factorize(v, sort=True)
        shape_levels.append(np.asarray(levels, dtype=np.int64))
        card = max(len(levels), 1)
        if codes.size and int(codes.max()) + 1 > (2**62) // card:
            _, codes = _compress(codes)
        codes = codes * card + c.astype(np.int64)
    used, codes = _compress(codes)
    # decode each used combined code back into (name, grid, block) for its key
    first = _first_rows(codes, len(used))
    keys = []
    for row in first:
        key = uniq[int(remap[names.cat.codes.iat[row]])]
        if base == "name+shape":
            gx, gy, gz, bx, by_, bz = (int(k[col].iat[row]) for col in SHAPE_COLUMNS)
            key += f" grid=({gx},{gy},{gz}) block=({bx},{by_},{bz})"
        elif base == "name+occupancy":
            sms, waves = (int(k[col].iat[row]) for col in OCCUPANCY_COLUMNS)
            key += f" sms={sms} waves={waves}"
        if context:
            key += f" reads={CONTEXT_CLASSES[int(values[-1][row])]}"
        keys.append(key)
    return Grouping(codes=codes, keys=keys)


def _compress(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Used values in ascending order and codes renumbered 0..len(used)-1 (order kept)."""
    if codes.size == 0:
        return np.zeros(0, np.int64), codes.astype(np.int64)
    new, used = pd.factorize(codes, sort=True)
    return np.asarray(used, dtype=np.int64), new.astype(np.int64)


def _first_rows(codes: np.ndarray, count: int) -> np.ndarray:
    """Row of the first launch of each group."""
    firsts = pd.Series(codes).drop_duplicates()
    first = np.empty(count, dtype=np.int64)
    first[firsts.to_numpy()] = firsts.index.to_numpy()
    return first
