"""Reader of simsample's own parquet workloads (written by ``profile features`` or ``Workload.to_parquet``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from simsample.sdk import Reader, Workload, hookimpl


class ParquetReader(Reader):
    name = "parquet"
    description = "a workload table in parquet (simsample's own, or any with the canonical columns)"

    def detect(self, path: Path, head: bytes) -> bool:
        return head.startswith(b"PAR1")

    def read(self, paths: Sequence[Path], options: Mapping[str, Any]) -> Workload:
        return Workload.from_parquet(paths[0])


@hookimpl
def register_readers(register):
    register(ParquetReader())
