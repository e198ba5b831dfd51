"""The cache footprints of trace files, kept between ``profile features`` and ``apply``.

``apply``'s warm-up (:mod:`.warmup`: the reuse window and the targeted choice) needs the lines
each launch reads and writes, which only a scan of the trace bodies gives. ``profile features``
with its context column has just made that scan, so it leaves each file's footprint here, and
``apply`` takes it from here instead of reading the bodies again: on the 230-launch decoder,
``apply`` reads some kilobytes per launch instead of the 53 MB of traces.

The store is a folder in the user's cache (``<user cache folder>/simsample/accelsim-footprints``,
``SIMSAMPLE_CACHE`` overrides the base, as for the GCL graphs), never the trace folder, which is
an input. An entry is keyed by what identifies the trace's content: its resolved path, size and
modification time, a hash of its first bytes (the header: a trace rewritten with the same size
within the file system's time resolution is still told apart when its header changed), and the
scanner's version. A trace changed in any of these is scanned again; a stale entry is never read,
and a damaged one is ignored. Entries are written atomically, so concurrent runs never see half
of one. An entry neither written nor read for ``KEEP_DAYS`` days is removed when ``profile
features`` next stores footprints (entries of deleted or changed traces would otherwise stay).
"""

from __future__ import annotations

import hashlib
import io
import os
import zipfile
from pathlib import Path

import numpy as np

from simsample.sdk import atomic_write_bytes
from simsample_accelsim.warmup import Footprint

__all__ = ["FootprintStore", "default_store_dir", "footprint_of", "scan_footprint_fresh"]

#: Bumped whenever what a footprint holds changes (also keyed by the features' scanner version).
STORE_VERSION = "1"
#: Bytes of the trace's start hashed into the key (a header is a few hundred bytes).
HEAD_BYTES = 4096
#: Entries unused for this many days are removed by :meth:`FootprintStore.prune`.
KEEP_DAYS = 30


def default_store_dir() -> Path:
    """``<user cache folder>/simsample/accelsim-footprints`` (``SIMSAMPLE_CACHE`` overrides the base)."""
    base = os.environ.get("SIMSAMPLE_CACHE")
    if base:
        return Path(base) / "accelsim-footprints"
    import platformdirs

    return Path(platformdirs.user_cache_dir("simsample")) / "accelsim-footprints"


class FootprintStore:
    """Footprints of trace files in ``folder``, keyed by the trace's identity (module docstring)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder if folder is not None else default_store_dir()

    def key(self, path: Path) -> str:
        from simsample_accelsim.kernelfeatures import SCANNER_VERSION

        st = path.stat()
        with open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES)
        raw = f"{STORE_VERSION}|{SCANNER_VERSION}|{path.resolve()}|{st.st_size}|{st.st_mtime_ns}|".encode() + head
        return hashlib.blake2b(raw, digest_size=16).hexdigest()

    def _file(self, path: Path) -> Path:
        return self.folder / f"{self.key(path)}.npz"

    def get(self, path: Path) -> Footprint | None:
        """The stored footprint of ``path`` as it is now, or None (never stored, changed since, damaged)."""
        f = self._file(path)
        if not f.is_file():
            return None
        try:
            with np.load(f, allow_pickle=False) as z:
                fp = Footprint(z["reads"], z["writes"], int(z["warp_insts"]), z["read_counts"])
        except (OSError, ValueError, KeyError, zipfile.BadZipFile):  # a damaged entry: scanned again and rewritten
            return None
        try:
            os.utime(f)  # used: kept by prune()
        except OSError:
            pass
        return fp

    def has(self, path: Path) -> bool:
        return self._file(path).is_file()

    def put(self, path: Path, fp: Footprint) -> None:
        """Keep ``fp`` for ``path``; a store that cannot be written (read-only home) is skipped:
        it only saves time."""
        counts = fp.read_counts if fp.read_counts is not None else np.ones(fp.reads.size, np.int64)
        buf = io.BytesIO()
        np.savez(
            buf,
            reads=np.asarray(fp.reads, np.uint64),
            writes=np.asarray(fp.writes, np.uint64),
            warp_insts=np.int64(fp.warp_insts),
            read_counts=np.asarray(counts, np.int64),
        )
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(self._file(path), buf.getvalue())
        except OSError:
            pass

    def prune(self, days: float = KEEP_DAYS) -> int:
        """Remove entries neither written nor read for ``days`` days; returns how many."""
        import time

        if not self.folder.is_dir():
            return 0
        cutoff = time.time() - days * 86400
        removed = 0
        for f in self.folder.glob("*.npz"):
            try:
                if f.stat().st_mtime < cutoff:
                    f.unlink()
                    removed += 1
            except OSError:
                pass
        return removed


def scan_footprint_fresh(path: str | Path) -> Footprint:
    """The footprint read from the trace body: the compiled scanner where it is usable, else numpy
    (both give the same lines, counts and instructions)."""
    from simsample_accelsim import scan_native

    if scan_native.available():
        return scan_native.scan_footprint(path)
    from simsample_accelsim.scan_numpy import scan_footprint

    return scan_footprint(path)


def footprint_of(path: str | Path, store: FootprintStore | None = None) -> Footprint:
    """The footprint of one trace file: from the store when it holds this trace as it is now,
    else scanned (and stored for the next time)."""
    p = Path(path)
    st = store if store is not None else FootprintStore()
    fp = st.get(p)
    if fp is None:
        fp = scan_footprint_fresh(p)
        st.put(p, fp)
    return fp
