"""File helpers shared by readers, writers and adapters.

Compressed inputs (gzip, xz, bzip2) are recognised by their magic bytes, not their extension,
so a renamed file still reads. gzip is inflated by ISA-L (the ``isal`` package) where it is
installed, about twice as fast as zlib: profiles are often gzipped JSON, and inflating them took
longer than extracting their kernels. A damaged archive, whichever library reads it, is a
:class:`FormatError`. Outputs are written atomically: to a temporary file in the same
folder, then renamed, so that an interrupted run never leaves a half-written file behind.
"""

from __future__ import annotations

import bz2
import contextlib
import io
import lzma
import os
import shutil
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from simsample.errors import FormatError, UserError

try:
    from isal import igzip as gzip
    from isal.isal_zlib import error as _inflate_error
except ImportError:  # pragma: no cover - isal is a dependency; zlib reads the same files
    import gzip  # type: ignore[no-redef]

    _inflate_error = zlib.error  # type: ignore[misc]

#: what decompressing a damaged or cut-off archive raises (zlib's and ISA-L's errors are not
#: OSErrors, unlike gzip's own header and CRC checks)
DECOMPRESSION_ERRORS: tuple[type[BaseException], ...] = (EOFError, OSError, lzma.LZMAError, zlib.error, _inflate_error)

_MAGIC = {
    b"\x1f\x8b": "gzip",
    b"\xfd7zXZ\x00": "xz",
    b"BZh": "bzip2",
}


def compression_of(path: str | Path) -> str | None:
    """Return ``"gzip"``, ``"xz"``, ``"bzip2"`` or ``None`` from the file's first bytes."""
    with open(path, "rb") as fh:
        head = fh.read(6)
    for magic, kind in _MAGIC.items():
        if head.startswith(magic):
            return kind
    return None


def check_input_file(path: str | Path) -> Path:
    """Fail with a user error unless ``path`` is an existing, non-empty regular file."""
    p = Path(path)
    if not p.exists():
        raise UserError(f"{p}: no such file")
    if p.is_dir():
        raise UserError(f"{p}: is a directory, expected a file")
    if p.is_file() and p.stat().st_size == 0:  # pipes (e.g. <(...)) report size 0 too
        raise UserError(f"{p}: file is empty")
    return p


def open_binary(path: str | Path) -> IO[bytes]:
    """Open a possibly compressed file for reading bytes, decompressing on the fly."""
    p = check_input_file(path)
    kind = compression_of(p)
    if kind == "gzip":
        return gzip.open(p, "rb")
    if kind == "xz":
        return lzma.open(p, "rb")
    if kind == "bzip2":
        return bz2.open(p, "rb")
    return open(p, "rb")


def open_text(path: str | Path, encoding: str = "utf-8") -> IO[str]:
    """Open a possibly compressed file for reading text (undecodable bytes are replaced)."""
    return io.TextIOWrapper(open_binary(path), encoding=encoding, errors="replace", newline="")


def read_head(path: str | Path, size: int = 65536) -> bytes:
    """The first ``size`` decompressed bytes of a file (for format detection)."""
    try:
        with open_binary(path) as fh:
            return fh.read(size)
    except DECOMPRESSION_ERRORS as exc:
        raise FormatError(path, f"cannot decompress: {exc}") from exc


def read_all(path: str | Path) -> bytes:
    """The whole decompressed content; a truncated archive is a :class:`FormatError`."""
    try:
        with open_binary(path) as fh:
            return fh.read()
    except DECOMPRESSION_ERRORS as exc:
        raise FormatError(path, f"truncated or corrupt compressed file ({exc})") from exc


@contextlib.contextmanager
def decompressed_copy(path: str | Path, suffix: str = "") -> Iterator[Path]:
    """Yield a path to a plain copy of a compressed file (in a temporary folder), or the file.

    Some libraries (sqlite3) need a real file; the copy is removed afterwards and the input is
    never touched.
    """
    p = check_input_file(path)
    if compression_of(p) is None:
        yield p
        return
    with tempfile.TemporaryDirectory(prefix="simsample-") as tmp:
        out = Path(tmp) / (p.stem + suffix)
        try:
            with open_binary(p) as src, open(out, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
        except DECOMPRESSION_ERRORS as exc:
            raise FormatError(p, f"truncated or corrupt compressed file ({exc})") from exc
        yield out


@contextlib.contextmanager
def atomic_writer(path: str | Path, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Write to a temporary file beside ``path`` and rename it into place on success.

    On any exception the temporary file is removed and ``path`` is left as it was.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        binary = "b" in mode
        with os.fdopen(fd, mode, encoding=None if binary else encoding, newline=None if binary else "") as fh:
            yield fh
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file ordinary permissions
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_writer(path, "w") as fh:
        fh.write(text)


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_writer(path, "wb") as fh:
        fh.write(data)
