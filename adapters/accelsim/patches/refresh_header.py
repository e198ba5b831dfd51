"""Keep the PKP header inside accel-sim-pkp.patch identical to cpp/pkp_hook/pkp_monitor.hpp.

The patch adds the monitor header to the simulator as a new file
(gpu-simulator/pkp/pkp_monitor.hpp), so the simulator builds without simsample installed.
After changing the header, run

    python adapters/accelsim/patches/refresh_header.py

to rewrite that part of the patch (``--check`` only reports whether it is up to date; the
test suite runs the same comparison).
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PATCH = HERE / "accel-sim-pkp.patch"
HEADER = HERE.parents[2] / "cpp" / "pkp_hook" / "pkp_monitor.hpp"
TARGET = "gpu-simulator/pkp/pkp_monitor.hpp"


def _sections(text: str) -> list[str]:
    """The patch split into per-file sections, each starting with 'diff --git'."""
    parts, cur = [], []
    for line in text.splitlines(keepends=True):
        if line.startswith("diff --git ") and cur:
            parts.append("".join(cur))
            cur = []
        cur.append(line)
    if cur:
        parts.append("".join(cur))
    return parts


def embedded_header(text: str) -> str | None:
    """The content of the new-file section for the header, or None when absent."""
    for sec in _sections(text):
        if sec.startswith(f"diff --git a/{TARGET} b/{TARGET}"):
            body = sec.split("\n@@ ", 1)[1].split("\n", 1)[1]
            lines = []
            for line in body.splitlines(keepends=True):
                if line.startswith("\\"):
                    lines[-1] = lines[-1].rstrip("\n")
                    continue
                if not line.startswith("+"):
                    raise ValueError(f"unexpected line in the new-file section: {line!r}")
                lines.append(line[1:])
            return "".join(lines)
    return None


def header_section(content: str) -> str:
    data = content.encode()
    blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()[:7]
    lines = content.splitlines(keepends=True)
    out = [
        f"diff --git a/{TARGET} b/{TARGET}\n",
        "new file mode 100644\n",
        f"index 0000000..{blob}\n",
        "--- /dev/null\n",
        f"+++ b/{TARGET}\n",
        f"@@ -0,0 +1,{len(lines)} @@\n",
    ]
    out += ["+" + ln for ln in lines]
    if lines and not lines[-1].endswith("\n"):
        out[-1] += "\n\\ No newline at end of file\n"
    return "".join(out)


def refreshed(text: str, content: str) -> str:
    secs = _sections(text)
    new = header_section(content)
    for i, sec in enumerate(secs):
        if sec.startswith(f"diff --git a/{TARGET} b/{TARGET}"):
            secs[i] = new
            break
    else:
        raise ValueError(f"{PATCH.name} has no section for {TARGET}")
    return "".join(secs)


def main(argv: list[str]) -> int:
    text = PATCH.read_text()
    content = HEADER.read_text()
    if embedded_header(text) == content:
        print(f"{PATCH.name}: header up to date")
        return 0
    if "--check" in argv:
        print(f"{PATCH.name}: header differs from {HEADER.name}; run {Path(__file__).name}", file=sys.stderr)
        return 1
    PATCH.write_text(refreshed(text, content))
    print(f"{PATCH.name}: header refreshed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
