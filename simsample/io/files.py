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
import errno
import io
import lzma
import os
import shutil
import stat
import tempfile
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO

from simsample.errors import FormatError, UserError, UserFileNotFoundError, signals_deferred
from simsample.io.kinds import special_file  # also re-exported: the SDK names it here

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


def missing_message(p: Path, what: str = "file or directory") -> str:
    """Why ``p`` cannot be opened: absent, or a symlink that leads nowhere (dangling, or a loop)."""
    if p.is_symlink():
        try:
            p.resolve(strict=True)
        except RuntimeError:
            return f"{p}: symbolic link loop; point it at a real {what}"
        except OSError as exc:
            if "loop" in str(exc).lower() or getattr(exc, "errno", None) == 40:
                return f"{p}: symbolic link loop; point it at a real {what}"
        return f"{p}: broken symbolic link (its target {os.readlink(p)} does not exist)"
    return f"{p}: no such {what}"


def check_input_file(path: str | Path, *, stream: bool = False) -> Path:
    """Fail with a user error unless ``path`` is an existing, non-empty regular file.

    Named pipes and devices are refused (``stream=True`` lets a reader that reads its input
    once, front to back, take a named pipe, such as ``<(...)``): format detection reads a file's
    head and then reads it again, and a reader that reads a document whole would wait forever on
    a pipe with no writer or fill memory from ``/dev/zero``.
    """
    p = Path(path)
    if not p.exists():
        raise UserFileNotFoundError(missing_message(p, "file"))
    if p.is_dir():
        raise UserError(f"{p}: is a directory, expected a file")
    kind = special_file(p)
    if kind is not None and not (stream and stat.S_ISFIFO(p.stat().st_mode)):
        raise UserError(f"{p}: is {kind}, not a regular file; save the data to a file and give that")
    if p.is_file() and p.stat().st_size == 0:  # pipes (e.g. <(...)) report size 0 too
        raise UserError(f"{p}: file is empty")
    return p


def check_input_folder(path: str | Path, what: str = "folder") -> Path:
    """Fail with a user error unless ``path`` is an existing folder (checked before any option
    that depends on it, so that a mistyped folder is what the message names)."""
    p = Path(path)
    if not p.exists():
        raise UserFileNotFoundError(missing_message(p, what))
    if not p.is_dir():
        raise UserError(f"{p}: is not a folder; expected the {what}")
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


def read_all(path: str | Path, limit_name: str = "profile") -> bytes:
    """The whole decompressed content; a truncated archive is a :class:`FormatError`.

    Bounded (:mod:`simsample.io.limits`): a plain file by its size before it is read, a
    compressed one by the bytes it inflates to and by its compression ratio, as it inflates.
    """
    from simsample.io import limits

    p = check_input_file(path)
    size = p.stat().st_size
    compressed = compression_of(p) is not None
    if not compressed:
        limits.check_size(p, limit_name)
    cap = limits.limit(limit_name)
    parts: list[bytes] = []
    total = 0
    try:
        with open_binary(p) as fh:
            while True:
                chunk = fh.read(16 << 20)
                if not chunk:
                    break
                total += len(chunk)
                if cap and total > cap:
                    raise limits.refusal(p, limit_name, f"inflates to more than {limits.human(cap)}")
                if compressed:
                    limits.check_ratio(p, total, size)
                parts.append(chunk)
    except DECOMPRESSION_ERRORS as exc:
        raise FormatError(path, f"truncated or corrupt compressed file ({exc})") from exc
    return b"".join(parts)


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
                copy_bounded(src, dst, p, p.stat().st_size)
        except DECOMPRESSION_ERRORS as exc:
            if temporary_full(exc):  # the temporary folder's disk, not the archive
                raise UserError(
                    f"{p}: cannot decompress it into the temporary folder {tmp} ({temporary_full(exc)}); "
                    "set TMPDIR to a folder with more room"
                ) from None
            raise FormatError(p, f"truncated or corrupt compressed file ({exc})") from exc
        yield out


def copy_bounded(
    src: IO[bytes], dst: IO[bytes], source: str | Path, compressed: int | None, *, written: int = 0
) -> int:
    """Copy ``src`` to ``dst`` within the unpack budget (:mod:`simsample.io.limits`): the total
    written (``written`` counts what earlier members of the same archive wrote) and, when
    ``compressed`` gives the compressed size, the inflation ratio, both checked as it streams.
    Returns the new total written."""
    from simsample.io import limits

    cap = limits.limit("unpack")
    while True:
        chunk = src.read(1 << 20)
        if not chunk:
            return written
        written += len(chunk)
        if cap and written > cap:
            raise limits.refusal(source, "unpack", f"unpacks to more than {limits.human(cap)}")
        if compressed is not None:
            limits.check_ratio(source, written, compressed)
        dst.write(chunk)


def resolve_path(p: Path) -> Path:
    """``p.resolve()``, or its absolute spelling where a symbolic link loop stops resolution
    (Python raises RuntimeError or OSError for a loop, depending on its version)."""
    try:
        return p.resolve()
    except (RuntimeError, OSError):
        return Path(os.path.abspath(p))


def _same_or_inside(out: Path, inp: Path) -> bool:
    """Whether ``out`` is ``inp`` (by any spelling: symlinks, ``..``, hard links) or lies inside it."""
    out_r, in_r = resolve_path(out), resolve_path(inp)
    if out_r == in_r or in_r in out_r.parents:
        return True
    try:
        return out.exists() and inp.exists() and os.path.samefile(out, inp)
    except OSError:
        return False


def _check_name_length(out: Path, what: str) -> None:
    """Refuse, before any work, an output whose name the file system cannot hold (checked against
    the nearest existing folder's limit, 255 bytes on most file systems)."""
    parent = out.parent
    try:
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        limit = os.pathconf(parent, "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    size = len(os.fsencode(out.name))
    if size > limit:
        shown = out.name if len(out.name) <= 60 else out.name[:28] + "…" + out.name[-28:]
        raise UserError(
            f"{shown}: file name too long for the {what} ({size} bytes; this file system takes at most {limit}); "
            "choose a shorter name"
        )


def check_output_file(output: str | Path, inputs: Sequence[str | Path | None], *, what: str = "output") -> Path:
    """Refuse an output file that is a folder, or that is or lies inside one of ``inputs``.

    Every command that writes calls this before reading anything, so that no spelling of an input
    on the command line (``-o`` naming the profile, a log, a file in the trace folder) can
    overwrite it: inputs are never modified.
    """
    out = Path(output)
    _check_name_length(out, what)
    if out.is_dir():
        raise UserError(f"{out}: is a directory, expected a file name for the {what}")
    for inp in inputs:
        if inp is None:
            continue
        if _same_or_inside(out, Path(inp)):
            rel = "is" if resolve_path(out) == resolve_path(Path(inp)) or not Path(inp).is_dir() else "lies inside"
            raise UserError(
                f"{out}: the {what} {rel} the input {inp}; choose another output path (inputs are never modified)"
            )
    return out


def writable_parent(path: Path) -> None:
    """Fail with a user error when the folder that is to hold ``path`` cannot be written."""
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise UserError(f"{path}: {parent} is not a folder; choose another output path")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UserError(f"{path}: cannot write in {parent} (permission denied); choose a writable output path")


@contextlib.contextmanager
def temporary_cache(folder: Path | None) -> Iterator[None]:
    """Remove ``folder`` (a cache the block may create) if the block fails and it did not exist before.

    A cache kept beside an output speeds up the next run, but one created by a run that then
    failed or was interrupted is only litter next to an output that does not exist.
    """
    existed = folder is None or folder.exists()
    try:
        yield
    except BaseException:
        if not existed and folder is not None:
            with signals_deferred():  # a second signal during the removal would leave half of it
                shutil.rmtree(folder, ignore_errors=True)
        raise


#: errno values of a write that failed because of where it writes (a full disk, a quota, a file
#: size limit, a name too long, a read-only or forbidden place): the user's to fix, never a bug
WRITE_ERRNOS: dict[int, str] = {
    errno.ENOSPC: "no space left on the device; free some space or write elsewhere",
    errno.EDQUOT: "disk quota exceeded; free some space or write elsewhere",
    errno.EFBIG: (
        "file too large for the file system or the file size limit (ulimit -f); write elsewhere or raise the limit"
    ),
    errno.ENAMETOOLONG: "file name too long; choose a shorter name",
    errno.EROFS: "read-only file system; choose a writable output path",
    errno.EACCES: "permission denied; check its permissions, or choose a path you may use",
    errno.EPERM: "operation not permitted; check its permissions, or choose a path you may use",
}


def write_error(exc: BaseException, path: str | Path | None = None) -> UserError | None:
    """The one-line refusal for an :class:`OSError` that a full disk, a quota, a file size limit,
    a long name or a forbidden place caused, naming ``path`` (else the error's own file name, else
    standard output); None for any other error, which stays a bug."""
    if not isinstance(exc, OSError) or exc.errno not in WRITE_ERRNOS:
        return None
    where = path if path is not None else exc.filename
    shown = str(where) if where is not None else ("standard output" if _stdout_fails(exc) else "an output")
    if len(shown) > 200:
        shown = shown[:100] + "…" + shown[-60:]
    return UserError(f"{shown}: {WRITE_ERRNOS[exc.errno]}")


def _stdout_fails(exc: BaseException | None = None) -> bool:
    """Whether a write error without a file name is about standard output (``> /dev/full``, a
    full disk under a redirection): the write that failed was click's or rich's printing, or
    standard output fails to flush now."""
    import sys

    tb = exc.__traceback__ if exc is not None else None
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    if last is not None and any(part in last.replace("\\", "/") for part in ("/click/", "/rich/")):
        return True
    try:
        sys.stdout.flush()
    except OSError:
        return True
    except Exception:
        return False
    return False


def temporary_full(exc: BaseException) -> str | None:
    """Why a write to the temporary folder failed, when a full disk, a quota or a file size limit
    caused it (``"no space left on the device"``), else None: such a failure while unpacking or
    decompressing an input is the temporary folder's, not a damaged input's."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return WRITE_ERRNOS[exc.errno].split(";")[0]
    return None


def remove_partial(path: str | Path) -> None:
    """Remove a partial output after a failure, only when it is a regular file: a log written to
    ``/dev/null`` or a named pipe must never be unlinked."""
    p = Path(path)
    try:
        if stat.S_ISREG(p.lstat().st_mode):
            p.unlink()
    except OSError:
        pass


def writes_through(target: Path) -> bool:
    """Whether ``target`` must be written through (opened and written, never replaced): an
    existing named pipe or character device (``/dev/null``, ``/dev/stdout``, a terminal), or a
    link into ``/proc`` (``/dev/stdout`` is ``/proc/self/fd/1``, whatever that is). A block
    device or a socket is refused: no command's output belongs there."""
    try:
        mode = target.stat().st_mode
    except OSError:
        return False
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        return True
    if stat.S_ISBLK(mode) or stat.S_ISSOCK(mode):
        raise UserError(f"{target}: is {special_file(target)}; give a file name for the output")
    if target.is_symlink() and (
        str(target).startswith(("/dev/", "/proc/")) or os.path.realpath(target).startswith("/proc/")
    ):
        return True
    return False


#: how long a named pipe given as an output may wait for its reader before the write is refused
FIFO_READER_WAIT_S = 10.0


def _open_fifo(target: Path) -> int:
    """Open a named pipe for writing once a reader has it open, waiting at most
    :data:`FIFO_READER_WAIT_S` (a plain open would block forever on a pipe nobody reads)."""
    import fcntl
    import time

    deadline = time.monotonic() + FIFO_READER_WAIT_S
    while True:
        try:
            fd = os.open(target, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: no reader yet
                raise
            if time.monotonic() > deadline:
                raise UserError(
                    f"{target}: a named pipe that nobody reads (waited {FIFO_READER_WAIT_S:g} s); start its reader "
                    "first"
                ) from None
            time.sleep(0.05)
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)  # then write as to any pipe
    return fd


@contextlib.contextmanager
def _write_through(target: Path, mode: str, encoding: str | None) -> Iterator[IO]:
    binary = "b" in mode
    try:
        if stat.S_ISFIFO(target.stat().st_mode):
            fh = os.fdopen(
                _open_fifo(target), mode, encoding=None if binary else encoding, newline=None if binary else ""
            )
        else:
            fh = open(target, mode, encoding=None if binary else encoding, newline=None if binary else "")
    except OSError as exc:
        raise (write_error(exc, target) or UserError(f"{target}: cannot write it ({exc.strerror or exc})")) from None
    try:
        try:
            yield fh
        finally:
            fh.close()  # a failed close (a full pipe buffer, ENOSPC on flush) is an error too
    except OSError as exc:
        if exc.errno == errno.EPIPE:  # not standard output's reader leaving early: this output is cut
            raise UserError(f"{target}: its reader closed the pipe before the output was complete") from None
        err = write_error(exc, target)
        if err is None:
            raise
        raise err from None


@contextlib.contextmanager
def atomic_writer(
    path: str | Path, mode: str = "w", encoding: str | None = "utf-8", *, executable: bool = False
) -> Iterator[IO]:
    """Write to a temporary file beside ``path`` and rename it into place on success.

    On any exception the temporary file is removed and ``path`` is left as it was. A path that is
    not a regular file is never replaced: a named pipe or a character device (``-o /dev/null``,
    ``-o /dev/stdout``) is written through, a block device or a socket refused; a symbolic link
    to a file is followed (the file is replaced, the link kept). A write that fails for a full
    disk, a quota, a file size limit or a long name is a one-line :class:`UserError`.
    ``executable`` makes a new file executable (a script); a path written through keeps its mode.
    """
    target = Path(path)
    if writes_through(target):
        with _write_through(target, mode, encoding) as fh:
            yield fh
        return
    tmp: str | None = None
    try:
        try:
            if target.is_symlink() and os.path.isfile(target):
                target = Path(os.path.realpath(target))
            target.parent.mkdir(parents=True, exist_ok=True)
            # the temporary's name is kept short: a long (but valid) output name must not fail for it;
            # made with signals held, so that a signal cannot land between the file and its name
            # (a SIGTERM there left an empty .NAME.XXXX.tmp beside the output)
            with signals_deferred():
                fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:64]}.", suffix=".tmp", dir=target.parent)
        except OSError as exc:
            raise (
                write_error(exc, target)
                or UserError(
                    f"{target}: cannot write in {target.parent} ({exc.strerror or exc}); choose a writable output path"
                )
            ) from None
        binary = "b" in mode
        try:
            with os.fdopen(fd, mode, encoding=None if binary else encoding, newline=None if binary else "") as fh:
                yield fh
        except OSError as exc:
            err = write_error(exc, target)
            if err is None:
                raise
            raise err from None
        try:
            os.chmod(tmp, (0o777 if executable else 0o666) & ~_umask())  # mkstemp makes 0600: ordinary permissions
            os.replace(tmp, target)
        except OSError as exc:
            raise (
                write_error(exc, target)
                or UserError(f"{target}: cannot write it ({exc.strerror or exc}); choose another output path")
            ) from None
    except BaseException:
        if tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | Path, text: str, *, executable: bool = False) -> None:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_writer`)."""
    with atomic_writer(path, "w", executable=executable) as fh:
        fh.write(text)


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_writer(path, "wb") as fh:
        fh.write(data)
