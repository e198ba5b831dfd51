"""An SQLite file (an Nsight Systems export) opened read-only, for the reader and the step annotations.

In the SDK (provisional): :func:`open_sqlite`, :func:`sqlite_tables`, :func:`sqlite_table_columns`.
The export may be compressed (``.xz``/``.gz``): it is read from a decompressed temporary copy
(:func:`simsample.io.files.decompressed_copy`), never modified, and a file that is not a
database ends in one line naming it.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from simsample.errors import FormatError
from simsample.io.files import decompressed_copy


@contextlib.contextmanager
def open_sqlite(path: str | Path) -> Iterator[tuple[sqlite3.Connection, str]]:
    """A read-only connection to the export at ``path`` and its URI (the compiled scanner opens
    the same URI); closed at the end of the block, a database error raised as a :class:`FormatError`."""
    with decompressed_copy(Path(path), suffix=".sqlite") as plain:
        from urllib.request import pathname2url  # urllib.request costs more to import than the rest of this module

        uri = f"file:{pathname2url(str(Path(plain).resolve()))}?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True)
        except sqlite3.Error as exc:
            raise FormatError(path, f"cannot open as SQLite ({exc})") from None
        try:
            yield conn, uri
        except sqlite3.DatabaseError as exc:
            raise FormatError(path, f"not a readable SQLite database ({exc})") from None
        finally:
            conn.close()


def sqlite_tables(conn: sqlite3.Connection) -> set[str]:
    """Names of the export's tables and views."""
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}


def sqlite_table_columns(conn: sqlite3.Connection, table: str) -> list[str]:
    """Column names of ``table``, in order."""
    return [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
