"""A private temporary folder for the files torch writes while GCL trains.

torch_geometric compiles each message-passing layer from a template into a module it writes to
the temporary folder (``torch_geometric.nn.conv.*_propagate_*.py``) and never removes; TorchInductor
and Triton keep their caches in ``torchinductor_<user>`` there (or under ``TORCHINDUCTOR_CACHE_DIR``
and ``TRITON_CACHE_DIR``). Every ``plan --sampler gcl`` would leave them behind. While
:func:`torch_scratch` is active all of it goes to one folder of simsample's own, removed
afterwards (the generated modules are already imported by then); cache folders the user set in
the environment are kept as they are.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from simsample.sdk import signals_deferred

#: environment variables naming torch's cache folders (set only where the user left them unset)
CACHE_VARIABLES = ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")


@contextlib.contextmanager
def torch_scratch() -> Iterator[Path]:
    """Send torch's generated files to a private temporary folder; remove it on exit."""
    saved_tempdir = tempfile.tempdir
    saved_env = {k: os.environ.get(k) for k in CACHE_VARIABLES}
    folder: Path | None = None
    try:
        with signals_deferred():  # a signal between making and naming the folder would leak it
            folder = Path(tempfile.mkdtemp(prefix="simsample-torch-"))
        for k in CACHE_VARIABLES:
            if not saved_env[k]:
                os.environ[k] = str(folder / k.lower())
        tempfile.tempdir = str(folder)
        yield folder
    finally:
        tempfile.tempdir = saved_tempdir
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        if folder is not None:
            with signals_deferred():  # a signal during the removal would leave half of it
                shutil.rmtree(folder, ignore_errors=True)
