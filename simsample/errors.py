"""Errors a user can cause.

Every exception derived from :class:`UserError` is shown by the CLI as one line (``error: ...``)
with exit code 1; anything else is a bug and exits with code 2. Messages say what is wrong and,
where it is not obvious, what to do about it.
"""

from __future__ import annotations

from pathlib import Path


class UserError(Exception):
    """A problem with the user's input, options or environment (exit code 1)."""


class FormatError(UserError):
    """A file could not be parsed: names the file, the line or record, and what was expected."""

    def __init__(
        self,
        path: str | Path,
        message: str,
        *,
        line: int | None = None,
        record: str | None = None,
    ) -> None:
        where = str(path)
        if line is not None:
            where += f", line {line}"
        if record is not None:
            where += f", {record}"
        super().__init__(f"{where}: {message}")
        self.path = Path(path)
        self.line = line
        self.record = record


class PlanMismatchError(UserError):
    """A plan is applied to a workload other than the one it was made for."""
