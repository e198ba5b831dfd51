"""What a plan must hold beyond its JSON Schema: the facts that tie its parts together.

The schema checks each value on its own (types, bounds). A plan that passes it can still say
things no plan made by ``simsample plan`` says, and each of them used to travel until something
failed far from the cause: a sample at launch 99 of a 30-launch workload was applied and recorded;
a ``process`` section without the sampled kernel id ended in ``KeyError``; an empty one wrote a
tracer script that traced nothing; a launch number of 10^12 asked the tracer for a launch the
process never makes, and a ``first_launch`` of 10^30 overflowed ``int64``; a sample of weight 0
outside an audit, or an audit whose parts disagree, would give a wrong interval. :func:`check_plan`
refuses them when the plan is read (and before it is written), in one line that names the part.

The positional rules of a ``process.samples`` entry are checked here too: the schema states them
with ``prefixItems``, which the fast validator does not implement.
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import itemgetter
from typing import Any

import numpy as np

from simsample.errors import UserError
from simsample.io.numbers import INT64_MAX, INT64_MIN

#: A ``process.samples`` entry: [kernel_id, launch number, base name, grid x y z, block x y z].
_ENTRY_FIELDS = (
    "kernel_id",
    "launch number",
    "base kernel name",
    "grid_x",
    "grid_y",
    "grid_z",
    "block_x",
    "block_y",
    "block_z",
)
#: What this module checks of each position of an entry, in the schema's words: entries that
#: satisfy rules at least this strict (:func:`entry_rules_suffice`) need no second check here.
ENTRY_RULES: tuple[dict[str, Any], ...] = (
    {"type": ["integer"], "minimum": INT64_MIN, "maximum": INT64_MAX},
    {"type": ["integer", "null"], "minimum": 1, "maximum": INT64_MAX},
    {"type": ["string"]},
    *({"type": ["integer"], "minimum": 0, "maximum": INT64_MAX},) * 6,
)
#: Formats whose kernel ids are the tracer's launch numbers (as :mod:`simsample.sampling.filters` says).
_TRACE_ID_FORMATS = ("accelsim",)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _entry_error(source: str, i: int, what: str) -> UserError:
    return UserError(
        f"{source}: invalid plan at process/samples/{i}: {what}; make the plan again with 'simsample plan'"
    )


def check_process_entries(entries: Any, source: str, *, columns: Any = None) -> list[tuple[int, int | None]]:
    """The (kernel id, launch number) of each ``process.samples`` entry, after checking each entry's
    positions: 9 values, integers within ``int64`` (the launch number at least 1, or null; shapes at
    least 0), a name. ``columns``: see :func:`check_plan`."""
    if not isinstance(entries, list):
        raise UserError(f"{source}: invalid plan at process/samples: not a list")
    if columns is not None and len(columns) == len(ENTRY_RULES) and all(len(c) == len(entries) for c in columns):
        return list(zip(columns[0], columns[1]))
    fast = _entries_as_columns(entries)
    if fast is not None:
        return fast
    out: list[tuple[int, int | None]] = []
    for i, e in enumerate(entries):
        if not isinstance(e, list) or len(e) != len(_ENTRY_FIELDS):
            raise _entry_error(source, i, f"expected {len(_ENTRY_FIELDS)} values ({', '.join(_ENTRY_FIELDS)})")
        kid, num, name, *shape = e
        if not _is_int(kid) or not INT64_MIN <= kid <= INT64_MAX:
            raise _entry_error(source, i, f"kernel_id {kid!r} is not an integer within int64")
        if num is not None and (not _is_int(num) or not 1 <= num <= INT64_MAX):
            raise _entry_error(source, i, f"launch number {num!r} is not an integer from 1 to {INT64_MAX} (or null)")
        if not isinstance(name, str):
            raise _entry_error(source, i, f"base kernel name {name!r} is not a string")
        for field, v in zip(_ENTRY_FIELDS[3:], shape):
            if not _is_int(v) or not 0 <= v <= INT64_MAX:
                raise _entry_error(source, i, f"{field} {v!r} is not an integer from 0 to {INT64_MAX}")
        out.append((int(kid), None if num is None else int(num)))
    return out


def _entries_as_columns(entries: list) -> list[tuple[int, int | None]] | None:
    """The entries' (kernel id, launch number) when every entry is well formed, checked a column
    at a time (types by set, bounds by min and max: tens of thousands of entries at memory speed);
    None when one is not, for :func:`check_process_entries`' entry-by-entry pass to name it."""
    if not entries:
        return []
    if set(map(type, entries)) != {list} or set(map(len, entries)) != {len(_ENTRY_FIELDS)}:
        return None
    cols = [list(map(itemgetter(j), entries)) for j in range(len(_ENTRY_FIELDS))]
    kids, nums, names, shapes = cols[0], cols[1], cols[2], cols[3:]
    if set(map(type, kids)) != {int} or set(map(type, names)) != {str} or not set(map(type, nums)) <= {int, type(None)}:
        return None
    if min(kids) < INT64_MIN or max(kids) > INT64_MAX:
        return None
    given = [n for n in nums if n is not None]
    if given and (min(given) < 1 or max(given) > INT64_MAX):
        return None
    for col in shapes:
        if set(map(type, col)) != {int} or min(col) < 0 or max(col) > INT64_MAX:
            return None
    return list(zip(kids, nums))


def entry_rules_suffice(rules: Any) -> bool:
    """Whether entries that satisfy ``rules`` (the schema's rule for each position of a
    ``process.samples`` entry, as a list) satisfy :data:`ENTRY_RULES`: the same positions, no
    other types, bounds at least as tight."""
    if not isinstance(rules, list) or len(rules) != len(ENTRY_RULES):
        return False
    for rule, need in zip(rules, ENTRY_RULES):
        kinds = rule.get("type")
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not isinstance(kinds, list) or not kinds or not set(kinds) <= set(need["type"]):
            return False
        if "integer" in kinds and (
            rule.get("minimum", INT64_MIN - 1) < need["minimum"] or rule.get("maximum", INT64_MAX + 1) > need["maximum"]
        ):
            return False
    return True


def _check_audit(plan: Any, source: str) -> None:
    """Samples of weight 0 are an audit's, and an audit's parts agree with the samples: its rows
    are exactly the draws of its cluster, of launches it lists, each predicted by a cluster that
    has one representative (:mod:`simsample.sampling.audit`). A hand-edited audit would otherwise
    give an interval computed from the wrong launches, or fail far from the cause."""
    samples = plan.samples
    estimator = plan.estimator if isinstance(plan.estimator, Mapping) else {}
    audit = estimator.get("audit")
    weights = samples["weight"].to_numpy(np.float64) if len(samples) else np.empty(0)
    clusters = samples["cluster"].to_numpy(np.int64) if len(samples) else np.empty(0, np.int64)

    def bad(what: str) -> UserError:
        return UserError(f"{source}: the plan's audit is inconsistent ({what}); make the plan again")

    if audit is None:
        if np.any(weights == 0):
            i = int(np.argmax(weights == 0))
            raise UserError(
                f"{source}: sample {i} has weight 0, which only an audit's samples have, and the plan has no audit; "
                "make the plan again"
            )
        return
    if estimator.get("kind") != "representative":
        raise bad("only a representative plan has one")
    aid = int(audit["cluster"])
    launches, of = list(audit["launches"]), list(audit["of"])
    if not (len(launches) == len(of) == len(audit["share"]) == len(audit["p"])):
        raise bad("its lists differ in length")
    if launches != sorted(set(launches)):
        raise bad("its launches are not distinct and ascending")
    rows = clusters == aid
    if int(rows.sum()) != int(audit["draws"]):
        raise bad(f"cluster {aid} lists {int(rows.sum())} sample(s), the audit {audit['draws']} draw(s)")
    if np.any(weights[rows] != 0) or np.any(weights[~rows] == 0):
        raise bad("weight 0 is for its samples, and only for them")
    drawn = set(samples["launch"].to_numpy(np.int64)[rows].tolist())
    if drawn != set(launches):
        raise bad("its launches are not those of its samples")
    ids, counts = np.unique(clusters[~rows], return_counts=True)
    one = set(ids[counts == 1].tolist())
    if not set(of) <= one:
        raise bad("a launch is predicted by a cluster without exactly one representative")


def check_plan(plan: Any, source: str = "plan", *, entry_columns: Any = None) -> None:
    """Refuse (one :class:`UserError` line) a plan whose parts disagree (see the module docstring).

    ``entry_columns``: the process entries' positions as columns (one sequence each), already
    checked against rules that :func:`entry_rules_suffice` accepts (the plan writer's column
    check), so that tens of thousands of entries are not checked twice."""
    wl = plan.workload or {}
    samples = plan.samples
    launches_total = wl.get("launches")
    if isinstance(launches_total, float) and launches_total.is_integer():  # JSON Schema counts 30.0 as an integer
        launches_total = int(launches_total)
    n = len(samples)
    ids = samples["kernel_id"].to_numpy(np.int64) if n else np.empty(0, np.int64)
    pos = samples["launch"].to_numpy(np.int64) if n else np.empty(0, np.int64)
    if n and isinstance(launches_total, int) and not isinstance(launches_total, bool):
        beyond = pos >= launches_total
        if beyond.any():
            i = int(np.argmax(beyond))
            raise UserError(
                f"{source}: sample {i} (kernel {int(ids[i])}) is at launch {int(pos[i])}, but the plan's workload "
                f"has {launches_total:,} launches (0-based positions); the plan file is inconsistent (edited by "
                "hand?): make the plan again"
            )
    _check_audit(plan, source)
    proc = plan.process
    if proc is None or not n:
        return  # a plan without samples is refused by its reader, with its own message
    if not isinstance(proc, Mapping):
        raise UserError(f"{source}: invalid plan at process: not an object")
    first = proc.get("first_launch")
    if first is not None and (not _is_int(first) or not 1 <= first <= INT64_MAX):
        raise UserError(
            f"{source}: invalid plan at process/first_launch: {first!r} is not an integer from 1 to {INT64_MAX} (or "
            "null)"
        )
    span = proc.get("profile_launches", launches_total)
    if isinstance(span, float) and span.is_integer():
        span = int(span)
    if not _is_int(span) or span < 0:
        span = launches_total if _is_int(launches_total) else None
    if first is not None and span is not None and first - 1 + span > INT64_MAX:
        raise UserError(
            f"{source}: process/first_launch {first} plus the profile's {span:,} launches is beyond int64: no "
            "process has that many launches; make the plan again with the right --first-launch"
        )
    if "samples" not in proc:
        return
    entries = check_process_entries(proc["samples"], source, columns=entry_columns)
    uniq, at = np.unique(ids, return_index=True)
    kids = [kid for kid, _ in entries]
    if len(set(kids)) != len(kids) or len(kids) != len(uniq) or not set(kids) <= set(uniq.tolist()):
        _name_the_entry(entries, set(uniq.tolist()), source)
    trace_ids = wl.get("format") in _TRACE_ID_FORMATS
    numbers = [num for _, num in entries]
    if first is None:
        if not trace_ids and any(num is not None for num in numbers):
            i = next(j for j, num in enumerate(numbers) if num is not None)
            raise _entry_error(source, i, "it has a launch number but process/first_launch is null (unknown)")
        return
    if None in numbers:
        raise _entry_error(source, numbers.index(None), f"no launch number, but process/first_launch is {first}")
    if trace_ids:
        if numbers != kids:
            i = next(j for j, (k, num) in enumerate(entries) if k != num)
            raise _entry_error(
                source,
                i,
                f"launch number {numbers[i]} differs from kernel id {kids[i]} (a trace folder's ids are its launch "
                "numbers)",
            )
        return
    # filters remove launches, they never renumber the ones kept: an entry's number lies between
    # first_launch + its launch position and the profile's last launch
    launch = pos[at][np.searchsorted(uniq, np.asarray(kids, dtype=np.int64))]
    hi = first - 1 + span if span is not None else INT64_MAX
    nums = np.asarray(numbers, dtype=np.int64)
    lo = launch + np.int64(first)  # no overflow: first_launch + the profile's launches fit int64 (checked above)
    for i in np.flatnonzero((nums < lo) | (nums > np.int64(hi)))[:1].tolist():
        raise _entry_error(
            source,
            i,
            f"launch number {numbers[i]} of kernel {kids[i]} is outside the launches the plan covers "
            f"({first + int(launch[i]):,} to {hi:,}: first_launch {first}, launch position {int(launch[i])}, "
            f"{span if span is not None else '?'} launches in the profile)",
        )


def _name_the_entry(entries: list[tuple[int, int | None]], sampled: set[int], source: str) -> None:
    """Raise for the first entry that is listed twice or names no sampled kernel, else for the
    first sampled kernel without an entry."""
    seen: dict[int, int] = {}
    for i, (kid, _) in enumerate(entries):
        if kid in seen:
            raise _entry_error(source, i, f"kernel {kid} is listed twice (also at process/samples/{seen[kid]})")
        if kid not in sampled:
            raise _entry_error(source, i, f"kernel {kid} is not one of the plan's samples")
        seen[kid] = i
    absent = sorted(sampled - set(seen))
    raise UserError(
        f"{source}: invalid plan at process/samples: sampled kernel {absent[0]} has no entry ({len(absent)} of "
        f"{len(sampled)} missing), so where it is in the process is unknown; make the plan again with 'simsample "
        "plan'"
    )
