"""The output folder of ``apply``: new or empty, outside the inputs, complete or absent.

``apply`` writes a whole folder (a command list, links or copies of traces, scripts, the weights
and the plan). It is built in a hidden folder beside OUT and renamed into place only when every
file is written, so a failure (a refused plan, a missing trace, a full disk, Ctrl-C) leaves OUT as
it was and nothing beside it. OUT must be new or empty; ``force`` replaces a non-empty one (the
old content is removed only after the new folder is in place). OUT may not be an input, inside
one, or hold one: inputs are never modified.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from simsample.errors import UserError, signals_deferred


def check_output_folder(out: Path, *, force: bool, inputs: Sequence[Path] = ()) -> None:
    """Refuse an OUT that overlaps an input, is not a folder, or is not empty (unless ``force``)."""
    out = Path(out)
    from simsample.io.files import resolve_path

    out_r = resolve_path(out)
    for p in inputs:
        p_r = resolve_path(Path(p))
        if out_r == p_r or p_r in out_r.parents or out_r in p_r.parents:
            raise UserError(
                f"{out}: the output folder overlaps the input {p}; choose a folder outside it (inputs are never "
                "modified)"
            )
    if out.exists() or out.is_symlink():
        if not out.is_dir() or out.is_symlink():
            raise UserError(f"{out}: exists and is not a folder; choose a new folder")
        if not force and any(out.iterdir()):
            raise UserError(f"{out}: folder is not empty; choose a new folder or pass --force to replace it")


@contextlib.contextmanager
def staged_folder(out: Path, *, force: bool, inputs: Sequence[Path] = ()) -> Iterator[Path]:
    """Yield a hidden folder beside ``out`` to write into; move it to ``out`` when the block ends.

    Checks ``out`` first (:func:`check_output_folder`). On any exception the partial folder is
    removed and ``out`` is left as it was. Files get ordinary permissions (the atomic writers
    create private ones).
    """
    out = Path(out)
    check_output_folder(out, force=force, inputs=inputs)
    tmp: Path | None = None
    try:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            with signals_deferred():  # a signal between making and naming it would leak the folder
                tmp = Path(tempfile.mkdtemp(prefix=f".{out.name[:64]}.", suffix=".partial", dir=out.parent))
        except OSError as exc:
            raise UserError(
                f"{out}: cannot write in {out.parent} ({exc.strerror or exc}); choose a writable folder"
            ) from None
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes it private; the result is an ordinary folder
        yield tmp
        for root, _dirs, files in os.walk(tmp):
            for name in files:
                p = Path(root) / name
                if not p.is_symlink():
                    os.chmod(p, (p.stat().st_mode | 0o644) & ~umask)
        _move_into_place(tmp, out)
    except BaseException:
        if tmp is not None:
            with signals_deferred():  # a second signal during the removal would leave half of it
                shutil.rmtree(tmp, ignore_errors=True)
        raise


def _move_into_place(tmp: Path, out: Path) -> None:
    """Rename ``tmp`` to ``out``; an existing ``out`` is set aside first and removed after."""
    if not (out.exists() or out.is_symlink()):
        os.rename(tmp, out)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name[:64]}.", suffix=".old", dir=out.parent))
    os.rmdir(old)
    os.rename(out, old)
    try:
        os.rename(tmp, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.rename(old, out)  # put the old folder back
        raise
    shutil.rmtree(old, ignore_errors=True)


def link_or_copy(src: Path, dst: Path, *, copy: bool) -> None:
    """``dst`` becomes a symlink to ``src`` (absolute, so the folder may move), or with ``copy``
    a real copy (a whole tree for a folder). Missing parent folders of ``dst`` are created."""
    src = Path(src).resolve()
    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    if copy:
        if src.is_dir():
            shutil.copytree(src, dst, symlinks=False)
        else:
            shutil.copy2(src, dst)
    else:
        os.symlink(src, dst, target_is_directory=src.is_dir())
