"""A signal that lands while a temporary folder is being removed (a command's last moments) no
longer leaves part of it behind: the removal finishes, then the signal acts.

Found by the catalogue's signal test (``plan`` of a tar of Kineto ranks, Ctrl-C at 95% of the
run): one run in many left ``simsample-ranks-*`` in TMPDIR. Here the signal is sent from inside
the removal, so the case that timing hits rarely is hit every time.
"""

from __future__ import annotations

import os
import shutil
import signal
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import ROOT

EXAMPLE = ROOT / "examples" / "profile" / "train_step.pt.trace.json.gz"


@pytest.fixture
def interrupting_rmtree(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """``shutil.rmtree`` that sends this process Ctrl-C first: without the deferral the handler's
    ``KeyboardInterrupt`` comes before anything is removed."""
    real = shutil.rmtree
    removed: list[Path] = []
    # Ctrl-C's own handler, whatever an imported module installed (dask_jobqueue's runner makes it
    # sys.exit() at import)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)

    def rmtree(path, *args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)
        real(path, *args, **kwargs)
        removed.append(Path(path))

    monkeypatch.setattr(shutil, "rmtree", rmtree)
    yield removed
    signal.signal(signal.SIGINT, previous)


def test_unpacked_ranks_are_removed_whole(tmp_path: Path, monkeypatch, interrupting_rmtree) -> None:
    from simsample.plugins.readers.kineto import expanded_rank_files

    archive = tmp_path / "ranks.tar"
    with tarfile.open(archive, "w") as tar:
        for rank in (0, 1):
            tar.add(EXAMPLE, arcname=f"rank{rank}.pt.trace.json.gz")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr("tempfile.tempdir", None)
    with pytest.raises(KeyboardInterrupt):
        with expanded_rank_files([archive]) as (files, _):
            assert len(files) == 2
    assert interrupting_rmtree, "the folder was not removed"
    assert not any(scratch.iterdir()), sorted(p.name for p in scratch.iterdir())


def test_a_failed_cache_is_removed_whole(tmp_path: Path, interrupting_rmtree) -> None:
    from simsample.io.files import temporary_cache

    cache = tmp_path / "cache"
    with pytest.raises(KeyboardInterrupt):
        with temporary_cache(cache):
            (cache / "part").mkdir(parents=True)
            (cache / "part" / "data").write_text("x")
            raise RuntimeError("the block failed")
    assert not cache.exists()


def test_a_partial_output_folder_is_removed_whole(tmp_path: Path, interrupting_rmtree) -> None:
    from simsample.adapter_support.folders import staged_folder

    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        with staged_folder(out, force=False) as tmp:
            (tmp / "kernelslist.g").write_text("x")
            raise RuntimeError("the block failed")
    assert not out.exists()
    assert not any(tmp_path.iterdir()), sorted(p.name for p in tmp_path.iterdir())
