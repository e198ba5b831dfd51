"""Compiled trace scanner: the C++ module ``simsample_accelsim._trace_scan`` behind the scanners' interface.

The C++ code (``cpp/trace_scan/`` in the adapter's source tree, built with the adapter) parses the body line by line as
the reference scanner (:mod:`.scan_python`) does, in one pass over the bytes; here the header is
read with :mod:`.traceg` and the decompressed body is fed to it in chunks (plain files through
one reused buffer; xz through Python's lzma, so compressed traces are still streamed and never
written out). The result has the reference's layout (blocks sorted by key, warp types in order
of first appearance), so both agree array for array, not only after
:meth:`LaunchFeatures.canonical`.

With ``record_lines`` the same pass records the launch's cache footprint (the lines its global
loads read, with how many warp-level loads read each, and the lines its stores write), equal to
:func:`.scan_numpy.scan_footprint`'s: the context column and the warm-up read it from here.

The module is optional: a source install without a C++ compiler has none, and
``SIMSAMPLE_PURE_PYTHON=1`` disables it (as for the PKP monitor); :func:`available` says which
applies and the features command then falls back to :mod:`.scan_numpy`.
"""

from __future__ import annotations

import lzma
from pathlib import Path
from typing import Any

import numpy as np

from simsample.sdk import FormatError, UserError, import_optional
from simsample_accelsim import opcodes as oc
from simsample_accelsim.kernelfeatures import COUNTERS, LaunchFeatures
from simsample_accelsim.traceg import (
    TraceHeader,
    _check_block_count,
    _stream_header,
    open_stream,
)
from simsample_accelsim.warmup import Footprint

#: Bytes handed to the C++ scanner per call: large enough that the per-call cost vanishes, small
#: enough to stay in the CPU's cache between the read and the scan.
CHUNK = 1 << 20

_native: Any
_REASON: str | None
_native, _REASON = import_optional(
    "simsample_accelsim._trace_scan", unavailable="the C++ extension simsample_accelsim._trace_scan is not available"
)


def available() -> bool:
    """Whether the compiled scanner can be used here."""
    return _native is not None


def unavailable_reason() -> str | None:
    """Why the compiled scanner cannot be used (None when it can)."""
    return _REASON


def native_module() -> Any:
    """The compiled module, or ``None`` when it is absent or disabled."""
    return _native


def scan_file(path: str | Path, chunk_size: int = CHUNK) -> tuple[TraceHeader, LaunchFeatures]:
    """Header and features of one trace file (plain or xz), streamed chunk by chunk."""
    header, result = _scan(path, chunk_size, record_lines=False)
    return header, _features(result, header, Path(path))


def scan_file_and_footprint(path: str | Path, chunk_size: int = CHUNK) -> tuple[TraceHeader, LaunchFeatures, Footprint]:
    """:func:`scan_file` and the launch's footprint (:func:`.scan_numpy.scan_footprint`) in one pass."""
    header, result = _scan(path, chunk_size, record_lines=True)
    feats = _features(result, header, Path(path))
    return header, feats, _footprint(result, feats)


def scan_footprint(path: str | Path, chunk_size: int = CHUNK) -> Footprint:
    """The launch's footprint alone (the same checks as a features scan)."""
    return scan_file_and_footprint(path, chunk_size)[2]


def _footprint(result: dict[str, Any], feats: LaunchFeatures) -> Footprint:
    return Footprint(
        np.asarray(result["line_reads"], np.uint64),
        np.asarray(result["line_writes"], np.uint64),
        int(feats.counts["warp_insts"]),
        np.asarray(result["line_read_counts"], np.int64),
    )


def _scan(path: str | Path, chunk_size: int, *, record_lines: bool) -> tuple[TraceHeader, dict[str, Any]]:
    if _native is None:
        raise UserError(f"the compiled trace scanner cannot be used ({_REASON}); use --engine numpy")
    p = Path(path)
    try:
        with open_stream(p) as fh:
            header, head, end = _stream_header(fh, p)
            scanner = _native.Scanner(
                skip_tokens=(4 if header.tracer_version < 3 else 0) + (1 if header.lineinfo else 0),
                binary_version=header.binary_version,
                block_threads=header.block_threads,
                shmem_base=header.shmem_base,
                local_base=header.local_base,
                first_line=head[:end].count(b"\n") + 1,
                classes=oc._CLASS,  # opcode base -> memory class, the table classify() uses
                control_flow=sorted(oc.CONTROL_FLOW),
                record_lines=record_lines,
            )
            last = head[-1:]
            scanner.feed(head[end:])
            buf = bytearray(chunk_size)
            view = memoryview(buf)
            while n := fh.readinto(buf):
                scanner.feed(view[:n])
                last = buf[n - 1 : n]
            view.release()
            if last != b"\n":
                raise FormatError(p, "does not end with a newline (the simulator asserts on the last line)")
            result = scanner.finish()
    except (EOFError, lzma.LZMAError) as exc:
        raise FormatError(p, f"truncated or corrupt xz data ({exc})") from exc
    except _native.ScanError as exc:
        line, message, text = exc.args
        shown = text.decode(errors="replace")
        raise FormatError(p, message + (f": {shown!r}" if shown else ""), line=line or None) from None
    return header, result


def _features(result: dict[str, Any], header: TraceHeader, path: Path) -> LaunchFeatures:
    counts = {c: int(result["counts"][c]) for c in COUNTERS}
    _check_block_count(path, header, counts["ctas"])
    return LaunchFeatures(
        counts=counts,
        bbv_keys=np.asarray(result["bbv_keys"], np.int64).reshape(-1, 2),
        bbv_values=np.asarray(result["bbv_values"], np.int64),
        types_indptr=np.asarray(result["types_indptr"], np.int64),
        types_indices=np.asarray(result["types_indices"], np.int64),
        types_data=np.asarray(result["types_data"], np.int64),
        type_counts=np.asarray(result["type_counts"], np.int64),
    )


__all__ = [
    "CHUNK",
    "available",
    "native_module",
    "scan_file",
    "scan_file_and_footprint",
    "scan_footprint",
    "unavailable_reason",
]
