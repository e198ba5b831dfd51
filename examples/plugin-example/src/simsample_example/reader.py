"""``klog``: a small text profile format, one kernel launch a line.

```
# klog 1
# name grid_x block_x start_ns duration_ns
sgemm 80 256 0 41000
relu 40 128 41500 1200
```

The first line identifies the format (that is what :meth:`KernelLog.detect` looks at); lines
starting with ``#`` are comments; each other line is one launch in launch order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from simsample.sdk import FormatError, Reader, Workload, check_input_file, from_records, read_text_limited

MAGIC = b"# klog 1"
FIELDS = ("name", "grid_x", "block_x", "start_ns", "duration_ns")


class KernelLog(Reader):
    name = "klog"
    description = "klog text profiles ('# klog 1', then name grid_x block_x start_ns duration_ns per line)"

    def detect(self, path: Path, head: bytes) -> bool:
        return head.startswith(MAGIC)

    def read(self, paths: Sequence[Path], options: Mapping[str, Any]) -> Workload:
        path = check_input_file(paths[0])
        text = read_text_limited(path, "profile", errors="replace")  # a size limit the user can raise
        if not text.startswith(MAGIC.decode()):
            raise FormatError(path, "not a klog profile (the first line must be '# klog 1')", line=1)
        columns: dict[str, list[Any]] = {f: [] for f in FIELDS}
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.split()
            if len(parts) != len(FIELDS):
                raise FormatError(
                    path, f"expected {len(FIELDS)} fields ({' '.join(FIELDS)}), found {len(parts)}", line=number
                )
            columns["name"].append(parts[0])
            for field, value in zip(FIELDS[1:], parts[1:]):
                if not value.isdigit():
                    raise FormatError(path, f"{field} must be a whole number, not {value!r}", line=number)
                columns[field].append(int(value))
        if not columns["name"]:
            raise FormatError(path, "no launches (only the header and comments)")
        return from_records(columns, source=str(path), format=self.name)
