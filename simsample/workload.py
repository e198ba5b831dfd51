"""The workload: one row per kernel launch, in launch order.

Canonical columns (DESIGN.md): ``kernel_id``, ``name``, ``grid_x/y/z``, ``block_x/y/z``,
``stream``, ``start_ns``, ``duration_ns``; optional ``cycles``, ``regs``, ``shmem`` and any
number of feature columns (instruction counts, the PKA metrics, ...). Wide features such as
basic-block vectors live in :attr:`Workload.extras` (sparse matrices whose rows follow the
table's row order), never in the table.

Dtypes are chosen for workloads of tens of millions of launches: names are categorical, launch
shapes and ids use the narrowest integer type that holds them, so a loaded launch costs well
under 120 bytes. Sources without timing (simulator traces) carry a nullable ``duration_ns`` that
is entirely missing; a source that times some launches and not others is rejected.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import lazy_loader as lazy
import numpy as np

from simsample.errors import FormatError, UserError
from simsample.io.names import base_name

pd = lazy.load("pandas")

REQUIRED_COLUMNS: tuple[str, ...] = (
    "kernel_id",
    "name",
    "grid_x",
    "grid_y",
    "grid_z",
    "block_x",
    "block_y",
    "block_z",
    "stream",
    "start_ns",
    "duration_ns",
)
OPTIONAL_COLUMNS: tuple[str, ...] = ("cycles", "regs", "shmem")
SHAPE_COLUMNS: tuple[str, ...] = ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z")
#: Cost columns that are measured times of the launches themselves (a profile's durations, a
#: simulator's cycles), as opposed to a proxy such as warp instructions: their spread within a
#: cluster is the launches' own, and no model of the cycles knows them better.
MEASURED_METRICS: tuple[str, ...] = ("duration_ns", "cycles")
_NARROW_COLUMNS = SHAPE_COLUMNS + ("stream", "regs", "shmem")

#: Bumped when the fingerprint's definition changes (plans record it).
FINGERPRINT_VERSION = 2


def _narrow_unsigned(values: pd.Series, column: str) -> pd.Series:
    """Smallest of uint16/uint32/int64 that holds the column (negative values keep int64)."""
    if values.isna().any():
        raise UserError(f"column {column!r} has {int(values.isna().sum())} missing values")
    arr = values.to_numpy()
    if arr.dtype.kind == "f":
        _check_int64_range(arr, column, "workload")
        if not np.all(np.isfinite(arr)) or np.any(arr != np.floor(arr)):
            raise UserError(f"column {column!r} must hold whole numbers")
    if arr.size == 0:
        return pd.Series(arr.astype(np.uint16), index=values.index, name=column)
    lo, hi = int(arr.min()), int(arr.max())
    if lo >= 0 and hi <= np.iinfo(np.uint16).max:
        dt = np.uint16
    elif lo >= 0 and hi <= np.iinfo(np.uint32).max:
        dt = np.uint32
    else:
        dt = np.int64
    return pd.Series(arr.astype(dt, copy=False), index=values.index, name=column, copy=False)


def _check_int64_range(arr: np.ndarray, column: str, where: str) -> None:
    """Refuse float values an int64 cannot hold (infinity, 1e308): ``astype`` would wrap them to
    -9223372036854775808 and a duration would read as negative."""
    with np.errstate(invalid="ignore"):
        bad = ~(np.abs(arr) < 2.0**63) & ~np.isnan(arr)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise UserError(
            f"{where}: {column} at row {i} is {arr[i]!r}, out of range (at most {2**63 - 1:,}); check the input"
        )


def _ids(values: pd.Series) -> pd.Series:
    if values.isna().any():
        raise UserError("column 'kernel_id' has missing values")
    if values.to_numpy().dtype.kind == "f":
        _check_int64_range(values.to_numpy(), "kernel_id", "workload")
    arr = values.to_numpy().astype(np.int64, copy=False)
    if arr.size and arr.min() >= np.iinfo(np.int32).min and arr.max() <= np.iinfo(np.int32).max:
        arr = arr.astype(np.int32, copy=False)
    return pd.Series(arr, index=values.index, name="kernel_id", copy=False)


@dataclass
class Workload:
    """Kernel launches of one run, with where they came from.

    ``kernels`` is normalised and validated on construction (see :meth:`normalise`); pass
    ``validate=False`` only for a table that already went through it.
    """

    kernels: pd.DataFrame
    source: str = ""
    format: str = ""
    memcpy_count: int = 0
    meta: dict[str, Any] = field(default_factory=dict)
    extras: dict[str, Any] = field(default_factory=dict)
    validate: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.kernels, pd.DataFrame):
            from simsample.errors import UserTypeError

            raise UserTypeError(
                "Workload: kernels must be a pandas DataFrame with one row per launch, got "
                f"{type(self.kernels).__name__}; read a profile with simsample.read(path)"
            )
        if self.validate:
            self.kernels = normalise(self.kernels, source=self.source)
        self.validate = False

    def __repr__(self) -> str:
        """One line: what and how much, never the table (a workload holds up to millions of launches)."""
        n = len(self.kernels)
        distinct = self.kernels["name"].nunique() if "name" in self.kernels.columns else 0
        where = f" from {self.source}" if self.source else ""
        return f"<Workload {self.format or '?'}: {n:,} launches of {distinct:,} kernels{where}>"

    # --- basic facts -------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.kernels)

    @property
    def timed(self) -> bool:
        """Whether launches carry measured durations (profiles do, simulator traces do not)."""
        return not bool(self.kernels["duration_ns"].isna().any()) if len(self) else True

    @property
    def feature_columns(self) -> list[str]:
        """Columns beyond the canonical and optional ones."""
        known = set(REQUIRED_COLUMNS) | set(OPTIONAL_COLUMNS)
        return [c for c in self.kernels.columns if c not in known]

    def has(self, column: str) -> bool:
        """Whether ``column`` exists and is fully populated."""
        return column in self.kernels.columns and not self.kernels[column].isna().any()

    def require(self, columns: Iterable[str], *, who: str, hint: str = "") -> None:
        """Raise a :class:`UserError` naming every missing column and how to get it."""
        missing = [c for c in columns if not self.has(c)]
        if missing:
            named = ", ".join(missing)
            if len(missing) > 3 and all(c in hint for c in missing):
                # the hint's command names them all: the line keeps room for that command, whole
                named = (
                    f"{missing[0]}, ..., {missing[-1]} ({len(missing)} columns, all named in the command that follows)"
                )
            msg = f"{who} needs column(s) {named}, which {self.source or 'the workload'} lacks"
            raise UserError(msg + (f"; {hint}" if hint else ""))

    def values(self, metric: str = "auto") -> np.ndarray:
        """Per-launch values of ``metric`` as float64 (``auto``: cycles, else duration_ns)."""
        col = self.default_metric() if metric == "auto" else metric
        if col not in self.kernels.columns:
            raise UserError(f"{self.source or 'workload'} has no column {col!r}")
        vals = self.kernels[col]
        if vals.isna().any():
            raise UserError(f"{self.source or 'workload'}: column {col!r} has missing values")
        return vals.to_numpy(dtype=np.float64)

    def default_metric(self) -> str:
        """The column that stands for a launch's cost: cycles when known, else duration."""
        if self.has("cycles"):
            return "cycles"
        if self.timed:
            return "duration_ns"
        for col in ("warp_insts", "smsp__inst_executed.sum", "thread_insts"):
            if self.has(col):
                return col
        raise UserError(
            f"{self.source or 'workload'} has neither durations nor cycles; "
            "add trace features (`simsample profile features`) or pass --param metric=COLUMN"
        )

    def grid_size(self) -> np.ndarray:
        """CTAs per launch (int64: narrow shape columns would overflow when multiplied)."""
        k = self.kernels
        return k["grid_x"].to_numpy(np.int64) * k["grid_y"].to_numpy(np.int64) * k["grid_z"].to_numpy(np.int64)

    def block_size(self) -> np.ndarray:
        """Threads per CTA (int64)."""
        k = self.kernels
        return k["block_x"].to_numpy(np.int64) * k["block_y"].to_numpy(np.int64) * k["block_z"].to_numpy(np.int64)

    # --- identity ----------------------------------------------------------------------------
    @cached_property
    def fingerprint(self) -> str:
        """Stable hash of ids, names and launch shapes, in launch order.

        Independent of dtypes and of the order of the name categories, so the same launches
        read from the same file always give the same fingerprint.
        """
        ahead = self._hashed_ahead("fingerprint")
        return ahead if ahead is not None else _fingerprint(self.kernels, with_ids=True, name_map=None)

    @cached_property
    def shape_fingerprint(self) -> str:
        """Hash of the launch sequence only: kernel identifiers (:func:`base_name`) and shapes.

        Matches between a profile (demangled names, its own ids) and simulator traces
        (mangled names, 1-based ids) of the same run.
        """
        ahead = self._hashed_ahead("shape_fingerprint")
        return ahead if ahead is not None else _fingerprint(self.kernels, with_ids=False, name_map=base_name)

    def hash_ahead(self) -> None:
        """Start computing both fingerprints in a background thread, for a caller that will need
        them after a long computation (a sampler: the plan records them).

        Hashing reads every launch (0.035 s of CPU at 10^6 launches) and blake2b releases the
        GIL while it hashes, so on a second core it runs beside the sampler instead of after it.
        The thread runs the same function on the same table: the same values. Below
        :data:`HASH_AHEAD_MIN` launches, or once computed or started, this does nothing; if the
        table is replaced meanwhile, or the thread fails, the properties compute them as usual.
        """
        if len(self) < HASH_AHEAD_MIN or {"fingerprint", "shape_fingerprint", "_ahead"} & set(self.__dict__):
            return
        import threading

        kernels, box = self.kernels, {}

        def work() -> None:
            try:
                box["fingerprint"] = _fingerprint(kernels, with_ids=True, name_map=None)
                box["shape_fingerprint"] = _fingerprint(kernels, with_ids=False, name_map=base_name)
            except Exception:  # the property computes it again, and raises there
                pass

        thread = threading.Thread(target=work, name="simsample-fingerprint", daemon=True)
        thread.start()
        self.__dict__["_ahead"] = (thread, kernels, box)

    def _hashed_ahead(self, name: str) -> str | None:
        """The value :meth:`hash_ahead` computed (waiting for it), or None."""
        ahead = self.__dict__.get("_ahead")
        if ahead is None:
            return None
        thread, kernels, box = ahead
        thread.join()
        if {"fingerprint", "shape_fingerprint"} <= set(self.__dict__) | {name}:
            del self.__dict__["_ahead"]  # nothing left to wait for (and nothing unpicklable kept)
        return box.get(name) if kernels is self.kernels else None

    def summary(self) -> dict[str, Any]:
        """Launch count, distinct kernels, total kernel time and memcpy count."""
        k = self.kernels
        total = int(k["duration_ns"].sum()) if self.timed else None
        return {
            "launches": int(len(k)),
            "distinct_kernels": int(k["name"].nunique()),
            "total_time_ns": total,
            "memcpy_count": int(self.memcpy_count),
        }

    def top_kernels(self, n: int = 10, metric: str = "auto") -> pd.DataFrame:
        """Kernels ranked by total time (or metric): launches, total, mean, CoV, share."""
        col = self.default_metric() if metric == "auto" else metric
        # "launches": untimed traces without features are ranked by how often a kernel runs
        vals = pd.Series(np.ones(len(self)) if col == "launches" else self.values(col), name="v")
        names = self.kernels["name"].reset_index(drop=True)
        g = vals.groupby(names, observed=True)
        out = pd.DataFrame(
            {
                "launches": g.size(),
                "total": g.sum(),
                "mean": g.mean(),
                "std": g.std(ddof=0),
            }
        )
        out["cov"] = np.where(out["mean"] > 0, out["std"] / out["mean"].where(out["mean"] > 0, 1), 0.0)
        grand = float(vals.sum())
        out["share"] = out["total"] / grand if grand > 0 else 0.0
        out = out.drop(columns="std").sort_values(["total", "launches"], ascending=False)
        out.index.name = "name"
        return out.head(n).reset_index()

    def to_dataframe(self) -> pd.DataFrame:
        """The launches, one row each in launch order (a copy: changing it leaves the workload as
        it is): ``kernel_id``, ``name``, launch shape, times and any feature columns."""
        return self.kernels.reset_index(drop=True).copy()

    # --- persistence -------------------------------------------------------------------------
    def to_parquet(self, path: str | Path) -> None:
        """Write the table (with source, format and meta in the file's metadata) atomically;
        ``extras`` go to ``<path>.extras.npz`` beside it (see :func:`extras_path`)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        from simsample.io.files import atomic_writer, writes_through

        table = pa.Table.from_pandas(self.kernels, preserve_index=False)
        info = {
            "source": self.source,
            "format": self.format,
            "memcpy_count": self.memcpy_count,
            "meta": self.meta,
            "fingerprint": self.fingerprint,
        }
        if self.extras:  # named in the table, so that a table moved without them can say what is missing
            info["extras"] = sorted(self.extras)
        md = dict(table.schema.metadata or {})
        md[b"simsample"] = json.dumps(info, sort_keys=True, default=str).encode()
        table = table.replace_schema_metadata(md)
        if writes_through(Path(path)):  # /dev/null, a pipe: the table only, nothing beside it
            with atomic_writer(path, "wb") as fh:
                pq.write_table(table, fh)
            return
        # the table first, into its temporary: a full disk stops it before the extras exist
        with atomic_writer(path, "wb") as fh:
            pq.write_table(table, fh)
            fh.flush()
            _write_extras(path, self.extras, self.fingerprint)

    @classmethod
    def from_parquet(cls, path: str | Path) -> Workload:
        """Read a table written by :meth:`to_parquet` (or any parquet with the canonical columns)."""
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(path)
        except Exception as exc:  # pyarrow raises several types for corrupt files
            raise FormatError(path, f"not a readable parquet file ({exc})") from exc
        md = table.schema.metadata or {}
        info = json.loads(md.get(b"simsample", b"{}"))
        df = table.to_pandas()
        wl = cls(
            df,
            source=info.get("source") or str(path),
            format=info.get("format") or "parquet",
            memcpy_count=int(info.get("memcpy_count", 0)),
            meta=info.get("meta") or {},
        )
        wl.extras = _read_extras(path, wl.fingerprint)
        if not wl.extras and info.get("extras"):
            wl.extras = MissingExtras(extras_path(path), list(info["extras"]))
        return wl


# --- extras beside a parquet file ------------------------------------------------------------
# ``Workload.extras`` (sparse matrices and numpy arrays whose rows follow the table, e.g. basic-block
# vectors) are saved to ``<file>.extras.npz`` beside the parquet: a CSR matrix ``k`` as the arrays
# ``k::csr::data|indices|indptr|shape``, an array ``k`` as itself (no pickles). The workload's
# fingerprint is stored with them, so extras left beside a rewritten table are refused.
_EXTRAS_FP = "__fingerprint__"


class MissingExtras(dict):
    """No extras, where the table says it was written with some: its ``.extras.npz`` was not
    moved with it. Empty, so that what needs no extras works; what needs them names the file."""

    def __init__(self, file: Path, keys: list[str]) -> None:
        super().__init__()
        self.file = Path(file)
        self.keys_written = list(keys)

    def message(self, table: str | Path | None = None) -> str:
        """One line: which file is missing, what it holds, and what to do."""
        return (
            f"{self.file} is missing: it holds {', '.join(self.keys_written)} of the table "
            f"{table or self.file.name[: -len('.extras.npz')]}; move it with the table (keep the two files side by "
            "side), or write both again with 'simsample profile features'"
        )


def extras_path(path: str | Path) -> Path:
    """Where the extras of the parquet file ``path`` live."""
    p = Path(path)
    return p.with_name(p.name + ".extras.npz")


def _write_extras(path: str | Path, extras: Mapping[str, Any], fingerprint: str) -> None:
    import io

    import scipy.sparse as sp

    from simsample.io.files import atomic_write_bytes

    target = extras_path(path)
    if not extras:
        target.unlink(missing_ok=True)  # a stale file would be attached to this table
        return
    arrays: dict[str, np.ndarray] = {_EXTRAS_FP: np.array(fingerprint)}
    for key, value in extras.items():
        if "::" in key:
            raise ValueError(f"extras key {key!r} must not contain '::'")
        if sp.issparse(value):
            m = sp.csr_matrix(value)
            arrays.update(
                {
                    f"{key}::csr::data": m.data,
                    f"{key}::csr::indices": m.indices,
                    f"{key}::csr::indptr": m.indptr,
                    f"{key}::csr::shape": np.array(m.shape, dtype=np.int64),
                }
            )
        else:
            arr = np.asarray(value)
            if arr.dtype == object:
                raise ValueError(f"extras[{key!r}]: object arrays cannot be saved; use a numeric or string dtype")
            arrays[key] = arr
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    atomic_write_bytes(target, buf.getvalue())


def _read_extras(path: str | Path, fingerprint: str) -> dict[str, Any]:
    import scipy.sparse as sp

    target = extras_path(path)
    if not target.exists():
        return {}
    try:
        with np.load(target, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
    except Exception as exc:  # zipfile/ValueError for corrupt files
        raise FormatError(target, f"not a readable extras file ({exc})") from exc
    if str(data.pop(_EXTRAS_FP, "")) != fingerprint:
        raise FormatError(
            target, f"belongs to another workload than {Path(path).name}; delete it or rewrite both files"
        )
    out: dict[str, Any] = {}
    for key in sorted({k.split("::", 1)[0] for k in data}):
        if f"{key}::csr::data" in data:
            parts = {p: data[f"{key}::csr::{p}"] for p in ("data", "indices", "indptr", "shape")}
            out[key] = sp.csr_matrix(
                (parts["data"], parts["indices"], parts["indptr"]), shape=tuple(int(x) for x in parts["shape"])
            )
        else:
            out[key] = data[key]
    return out


def _canonical(values: np.ndarray) -> np.ndarray:
    """The narrowest of uint16/uint32/int64 that holds the values, little-endian.

    Hashing in this form makes the fingerprint independent of the dtype a column happens to
    have while hashing 2-4 bytes per value instead of 8 (most of the cost at 50 M launches).
    """
    if values.size == 0:
        return values.astype("<u2")
    lo, hi = int(values.min()), int(values.max())
    if lo >= 0 and hi <= 0xFFFF:
        dt = "<u2"
    elif lo >= 0 and hi <= 0xFFFFFFFF:
        dt = "<u4"
    else:
        dt = "<i8"
    return np.ascontiguousarray(values, dtype=dt)


def _hash_array(h: Any, values: np.ndarray) -> None:
    arr = _canonical(values)
    h.update(arr.dtype.str.encode())
    h.update(memoryview(arr).cast("B"))


#: Workloads smaller than this hash in a blink: :meth:`Workload.hash_ahead` leaves them alone.
HASH_AHEAD_MIN = 1 << 16


def _fingerprint(k: pd.DataFrame, *, with_ids: bool, name_map: Any) -> str:
    import hashlib  # here, not at start-up: it loads OpenSSL, and listing commands never hash

    h = hashlib.blake2b(digest_size=16)
    h.update(f"simsample-workload-v{FINGERPRINT_VERSION};n={len(k)};ids={with_ids}\n".encode())
    if with_ids:
        _hash_array(h, k["kernel_id"].to_numpy())
    names = k["name"]
    if not isinstance(names.dtype, pd.CategoricalDtype):
        names = names.astype("category")
    cats = [str(c) for c in names.cat.categories]
    if name_map is not None:
        cats = [name_map(c) for c in cats]
    uniq = sorted(set(cats))
    rank = {c: i for i, c in enumerate(uniq)}
    remap = np.array([rank[c] for c in cats], dtype=np.int64)
    codes = names.cat.codes.to_numpy()
    h.update("\n".join(uniq).encode())
    if len(codes) and codes.min() >= 0:
        # The canonical form of remap[codes], gathered from a remap already in that form: the
        # same bytes without an int64 array of every launch. The form depends on the values
        # present, so on the categories in use.
        used = remap[np.bincount(codes, minlength=len(remap)) > 0]
        _hash_array(h, remap.astype(_canonical(used).dtype)[codes])
    else:
        _hash_array(h, remap[codes] if len(codes) else codes)
    for col in SHAPE_COLUMNS:
        _hash_array(h, k[col].to_numpy())
    return h.hexdigest()


def normalise(df: pd.DataFrame, *, source: str = "") -> pd.DataFrame:
    """Validate and convert a launch table to the canonical, lean dtypes.

    Errors name the source and say what is wrong: missing required columns, missing or negative
    durations, duplicate kernel ids.
    """
    where = source or "workload"
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise UserError(f"{where}: missing required column(s): {', '.join(missing)}")
    src = df.reset_index(drop=True)
    # Columns are gathered first and the frame built once: adding hundreds of metric columns one
    # by one fragments the frame, and Series (not bare arrays) keep categorical extras categorical.
    cols: dict[str, pd.Series] = {"kernel_id": _ids(src["kernel_id"])}
    names = src["name"]
    if names.isna().any():
        raise UserError(f"{where}: {int(names.isna().sum())} launches have no kernel name")
    cols["name"] = names.astype("category") if not isinstance(names.dtype, pd.CategoricalDtype) else names
    for col in SHAPE_COLUMNS + ("stream",):
        cols[col] = _narrow_unsigned(src[col], col)
    cols["start_ns"] = _time_column(src["start_ns"], "start_ns", where, allow_negative=True)
    cols["duration_ns"] = _time_column(src["duration_ns"], "duration_ns", where, allow_negative=False)
    for col in OPTIONAL_COLUMNS:
        if col in src.columns:
            if col == "cycles":
                cols[col] = _time_column(src[col], col, where, allow_negative=False)
            else:
                cols[col] = _narrow_unsigned(src[col], col)
    for col in src.columns:
        if col not in cols:
            cols[col] = src[col]
    # No copies of the columns (pandas copies arrays it is given unless told not to): at 5*10^7
    # launches every extra copy of the table is gigabytes.
    out = pd.DataFrame({k: c.reset_index(drop=True) for k, c in cols.items()}, copy=False)
    ids = out["kernel_id"].to_numpy()
    # Ids in increasing order (every reader's launch index) are unique without a look; others are
    # sorted once. pandas' is_unique builds a hash table of about 50 bytes a launch instead.
    if ids.size > 1 and not (ids[1:] > ids[:-1]).all():
        ordered = np.sort(ids)
        repeated = ordered[1:] == ordered[:-1]
        if repeated.any():
            dups = ordered[1:][repeated]
            raise UserError(f"{where}: duplicate kernel_id {int(dups[0])} ({int(dups.size)} duplicates)")
    return out


def _time_column(values: pd.Series, column: str, where: str, *, allow_negative: bool) -> pd.Series:
    n_na = int(values.isna().sum())
    if n_na == len(values) and len(values) > 0:
        return pd.Series(pd.array([pd.NA] * len(values), dtype="Int64"), name=column)
    if n_na:
        raise UserError(
            f"{where}: {n_na} launches have no {column} (first at row "
            f"{int(np.flatnonzero(values.isna().to_numpy())[0])})"
        )
    arr = values.to_numpy()
    if arr.dtype.kind == "f":
        _check_int64_range(arr, column, where)
        arr = np.rint(arr)
    arr = arr.astype(np.int64, copy=False)
    if not allow_negative and arr.size and arr.min() < 0:
        first = int(np.flatnonzero(arr < 0)[0])
        raise UserError(f"{where}: negative {column} at row {first} ({int(arr[first])})")
    return pd.Series(arr, name=column, copy=False)


def from_records(
    records: Mapping[str, Iterable[Any]] | pd.DataFrame,
    *,
    source: str = "",
    format: str = "",
    memcpy_count: int = 0,
    meta: dict[str, Any] | None = None,
) -> Workload:
    """Build a workload from column arrays; missing ``kernel_id`` becomes the 0-based launch index,
    missing ``stream`` becomes 0, missing ``start_ns`` becomes 0."""
    df = records if isinstance(records, pd.DataFrame) else pd.DataFrame(dict(records))
    df = df.copy()
    n = len(df)
    if "kernel_id" not in df.columns:
        df["kernel_id"] = np.arange(n, dtype=np.int64)
    for col, default in (("stream", 0), ("start_ns", 0), ("grid_y", 1), ("grid_z", 1), ("block_y", 1), ("block_z", 1)):
        if col not in df.columns:
            df[col] = default
    return Workload(df, source=source, format=format, memcpy_count=memcpy_count, meta=meta or {})
