"""From paths to a workload: format detection and reader dispatch over the readers it is given.

The readers come in as a parameter (:class:`ReaderSource`: the plugin host, or anything with the
same two methods): the core knows no plugin host, so the layer above it (the public API, the
command line, :mod:`simsample.reading`) passes the installed readers in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from simsample.errors import UserError, UserFileNotFoundError
from simsample.io.files import missing_message, read_head
from simsample.workload import Workload

if TYPE_CHECKING:
    from simsample.plugin_base import Reader


class ReaderSource(Protocol):
    """Where the readers come from: the plugin host's two lookups."""

    def readers(self) -> Mapping[str, Reader]:
        """Every installed reader by format name, in detection order."""
        ...

    def reader(self, name: str) -> Reader:
        """The reader of format ``name`` (a user error naming the known ones if there is none)."""
        ...


#: Nsight Systems' own report files: binary, read by no reader; ``nsys export`` turns them into SQLite
_NSYS_REPORTS = (".nsys-rep", ".qdrep")


def export_hint(path: Path) -> str | None:
    """For an Nsight Systems report (``.nsys-rep``, ``.qdrep``), the line that says how to export
    it into a file simsample reads; None for any other file."""
    name = path.name
    for suffix in _NSYS_REPORTS:
        if name.endswith(suffix):
            out = path.with_name(name[: -len(suffix)] + ".sqlite")
            return (
                f"{path}: an Nsight Systems report, which simsample reads once exported: nsys export --type sqlite "
                f"-o {out} {path}"
            )
    return None


def detect_format(path: Path, host: ReaderSource) -> str:
    """Name of the first reader of ``host`` whose ``detect`` accepts ``path`` (content-based)."""
    if not path.exists():
        raise UserFileNotFoundError(missing_message(path))
    hint = export_hint(path)
    if hint is not None and not path.is_dir():
        raise UserError(hint)
    head = b"" if path.is_dir() else read_head(path)
    if not path.is_dir() and not head:
        raise UserError(f"{path}: file is empty")
    for name, reader in host.readers().items():
        try:
            if reader.detect(path, head):
                return name
        except Exception:  # a detector must not break detection of other formats
            continue
    kinds = ", ".join(sorted(host.readers())) or "none installed"
    if path.is_dir():
        raise UserError(
            f"{path}: is a directory, expected a file (no reader takes this folder; name one with --format)"
        )
    what = "file"
    raise UserError(f"{path}: unrecognised {what} format (known: {kinds}); name one with --format")


def load_workload(
    paths: Sequence[str | Path],
    *,
    host: ReaderSource,
    format: str | None = None,
    options: Mapping[str, Any] | None = None,
    join: str | Path | None = None,
) -> Workload:
    """Read one profile (or several files of one run, for readers that take several) with the
    readers of ``host``; ``join``: a per-launch metrics file (Nsight Compute CSV) to attach to
    the launches."""
    ps = [Path(p) for p in paths]
    if not ps:
        raise UserError("no input given")
    for p in ps:
        if not p.exists():
            raise UserFileNotFoundError(missing_message(p))
    name = format or detect_format(ps[0], host)
    if options and options.get("columns") and name != "csv":
        raise UserError(
            f"--columns applies to --format csv only ({ps[0]} reads as {name}); add --format csv or drop --columns"
        )
    reader = host.reader(name)
    if len(ps) > 1:
        if not reader.multi_file:
            raise UserError(f"format {name} reads one file at a time; got {len(ps)}")
        for p in ps[1:]:
            other = format or detect_format(p, host)
            if other != name:
                raise UserError(f"{p}: is {other}, but {ps[0]} is {name}; give files of one format")
    for p in ps:
        if p.is_dir() and not _reader_takes_dirs(reader):
            raise UserError(f"{p}: is a directory, expected a file")
    from simsample.progress import reading

    with reading(ps, f"reading {ps[0].name}" + (f" and {len(ps) - 1} more" if len(ps) > 1 else "")):
        wl = reader.read(ps, dict(options or {}))
    if join is not None:
        wl = _join(wl, Path(join), host)
    return wl


def _join(timeline: Workload, metrics_path: Path, host: ReaderSource) -> Workload:
    """Attach per-launch metrics (see :mod:`simsample.io.join`); a partial match warns on stderr."""
    import sys

    from simsample.io.join import join_metrics

    if metrics_path.is_dir():
        raise UserError(f"{metrics_path}: is a directory, expected a metrics file (--join)")
    metrics = load_workload([metrics_path], host=host)
    joined, report = join_metrics(timeline, metrics, metrics_source=str(metrics_path))
    if not report.complete:
        sys.stderr.write(f"warning: {report.summary()}\n")
    return joined


def _reader_takes_dirs(reader: Any) -> bool:
    return bool(getattr(reader, "reads_directories", False))
