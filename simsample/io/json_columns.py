"""JSON text of table columns, built by NumPy without a Python object per value.

A plan lists one JSON object per sample and one JSON array per sampled launch, one per line; a
plan of a large workload lists 10^5 to 10^6 of them. Written through ``json.dumps`` (or an
f-string per row) each row costs a few microseconds of interpreter work, seconds in all. Here
each column becomes its text once, as a NUL-padded byte matrix with one row per value (integers
by a few vectorised divisions by ten; floats as Python's ``repr``, which is what ``json.dumps``
writes: integral ones from their digits, the others computed once per distinct value), and the
rows are laid side by side in one byte matrix whose NUL padding is then squeezed out, a chunk of
rows at a time. JSON text never holds a NUL byte (``json.dumps`` escapes it), which is what makes
the padding safe to drop.

The text is exactly what ``json.dumps(row, ensure_ascii=False)`` writes for each row; the plan
module's tests compare the two.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np

#: One cell of a row: a literal written in every row; a byte matrix with one row of text per row
#: (NUL-padded, as the functions below make them); or ``(prefix, values, mask)``: the prefix and
#: the value, only in the rows where the boolean ``mask`` holds (an optional field, left out of
#: the other rows).
Cell = bytes | np.ndarray | tuple

#: Rows assembled at a time (bounds the temporary byte matrix to a few MB).
CHUNK_ROWS = 1 << 16
#: Below this magnitude every integral float is written by ``repr`` as its digits plus ``.0``.
_INTEGRAL_LIMIT = 1e16


def bytes_matrix(texts: Sequence[bytes], width: int | None = None) -> np.ndarray:
    """Byte strings as a NUL-padded ``(n, width)`` matrix."""
    width = width or max((len(t) for t in texts), default=1) or 1
    arr = np.array(texts, dtype=f"S{width}")
    return arr.view(np.uint8).reshape(len(texts), width)


def int_text(values: np.ndarray) -> np.ndarray:
    """Decimal text of integers (int64), as ``json.dumps`` writes them: an ``(n, width)`` byte
    matrix, right-aligned, NUL-padded on the left.

    NumPy's own integer-to-text cast goes through one Python object per value; this is a few
    vectorised divisions by ten (as many as the longest value has digits)."""
    v = np.asarray(values, dtype=np.int64).ravel()
    n = v.size
    if n == 0:
        return np.zeros((0, 1), dtype=np.uint8)
    negative = v < 0
    # magnitudes as uint64: -2**63 has no positive int64
    mag = np.where(negative, (~v).astype(np.uint64) + np.uint64(1), v.astype(np.uint64))
    top = int(mag.max())
    digits = max(1, len(str(top)))
    width = digits + int(negative.any())
    mat = np.zeros((n, width), dtype=np.uint8)
    rest = mag.copy()
    alive = np.ones(n, dtype=bool)
    ten = np.uint64(10)
    for col in range(width - 1, width - 1 - digits, -1):
        q, r = np.divmod(rest, ten)
        mat[:, col] = np.where(alive, r.astype(np.uint8) + 48, 0)
        rest = q
        alive = rest > 0
        if not alive.any():
            break
    if negative.any():  # the sign just before the first digit
        ndig = width - np.argmax(mat != 0, axis=1)
        rows = np.flatnonzero(negative)
        mat[rows, width - ndig[rows] - 1] = ord("-")
    return mat


def float_text(values: np.ndarray) -> np.ndarray:
    """``repr`` of each float (what ``json.dumps`` writes for a finite float; ``nan``/``inf`` for
    the others, which a caller refuses before writing JSON), as an ``(n, width)`` byte matrix,
    NUL-padded.

    Integral values below 10^16 (durations, cycle counts: most of a plan's numbers) are written
    from their integer digits; the rest by ``repr``, once per distinct value (a cluster's samples
    share one weight).
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    n = v.size
    if n == 0:
        return np.zeros((0, 1), dtype=np.uint8)
    with np.errstate(invalid="ignore"):
        integral = np.isfinite(v) & (np.abs(v) < _INTEGRAL_LIMIT) & (v == np.floor(v)) & ~((v == 0) & np.signbit(v))
    parts: list[tuple[np.ndarray, np.ndarray]] = []
    if integral.any():
        digits = int_text(v[integral].astype(np.int64))
        parts.append(
            (
                integral,
                np.concatenate([digits, np.broadcast_to(np.frombuffer(b".0", np.uint8), (digits.shape[0], 2))], axis=1),
            )
        )
    rest = ~integral
    if rest.any():
        others = v[rest]
        zero = others == 0  # only -0.0 is left here; np.unique would merge it with 0.0
        uniq, inverse = np.unique(np.where(zero, 1.0, others), return_inverse=True)
        table = bytes_matrix([*(x.encode() for x in map(repr, uniq.tolist())), b"-0.0"])
        inverse = np.where(zero, len(uniq), inverse.ravel())
        parts.append((rest, table[inverse]))
    width = max(p.shape[1] for _, p in parts)
    out = np.zeros((n, width), dtype=np.uint8)
    for where, mat in parts:
        out[where, width - mat.shape[1] :] = mat
    return out


def string_text(values: Sequence[str] | np.ndarray) -> np.ndarray:
    """JSON string literals (quoted, escaped as ``json.dumps(..., ensure_ascii=False)`` does), UTF-8,
    as an ``(n, width)`` byte matrix; computed once per distinct string."""
    # Distinct strings by a dict, not np.unique over NumPy's fixed-width str type: that type drops
    # trailing NULs, so a name ending in "\x00" was written as another name.
    items = values.tolist() if isinstance(values, np.ndarray) else list(values)
    if not items:
        return np.zeros((0, 2), dtype=np.uint8)
    index: dict[str, int] = {}
    inverse = np.fromiter((index.setdefault(str(s), len(index)) for s in items), dtype=np.int64, count=len(items))
    # json.dumps(s, ensure_ascii=False) of a string is this function's result (the encoder calls it)
    quote = json.encoder.encode_basestring
    return bytes_matrix([quote(s).encode() for s in index])[inverse]


def literal(text: bytes, n: int) -> np.ndarray:
    """The same bytes in each of ``n`` rows (a read-only view, no copy)."""
    return np.broadcast_to(np.frombuffer(text, dtype=np.uint8), (n, len(text)))


def decode(mat: np.ndarray) -> list[str]:
    """Each row's text (NULs dropped): for tests and error messages."""
    return [bytes(row[row != 0]).decode() for row in np.asarray(mat)]


def _matrix(cells: Sequence[Cell], lo: int, hi: int) -> np.ndarray:
    """Rows ``lo:hi`` as a byte matrix, cell after cell, each padded with NULs to its width."""
    m = hi - lo
    parts = []
    for cell in cells:
        if isinstance(cell, bytes):
            if cell:
                parts.append(np.broadcast_to(np.frombuffer(cell, dtype=np.uint8), (m, len(cell))))
            continue
        mask = None
        if isinstance(cell, tuple):  # (prefix, values, mask): both only in the rows where mask holds
            prefix, cell, mask = cell
            keep = np.asarray(mask[lo:hi], dtype=bool)[:, None]
            parts.append(np.where(keep, np.frombuffer(prefix, dtype=np.uint8)[None, :], np.uint8(0)))
        part = cell[lo:hi]
        parts.append(part if mask is None else np.where(keep, part, np.uint8(0)))
    return np.concatenate(parts, axis=1) if parts else np.zeros((m, 0), dtype=np.uint8)


def rows_bytes(cells: Sequence[Cell], n: int, *, separator: bytes) -> bytes:
    """The ``n`` rows, each its cells concatenated, joined by ``separator`` (UTF-8 bytes)."""
    if n == 0:
        return b""
    sep = np.frombuffer(separator, dtype=np.uint8)
    chunks = []
    for lo in range(0, n, CHUNK_ROWS):
        hi = min(n, lo + CHUNK_ROWS)
        mat = _matrix([*cells, separator], lo, hi)
        chunks.append(mat[mat != 0].tobytes())
    text = b"".join(chunks)
    return text[: len(text) - len(sep)] if len(sep) else text
