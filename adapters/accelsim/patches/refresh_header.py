"""Keep the headers inside the Accel-Sim patches identical to their sources.

accel-sim-pkp.patch adds the PKP monitor header, simsample's cpp/pkp_hook/pkp_monitor.hpp (the
core's: the monitor is not Accel-Sim's alone), to the simulator as gpu-simulator/pkp/pkp_monitor.hpp;
accel-sim-warmup.patch adds the adapter's cpp/warmup/functional_warmup.hpp as
gpu-simulator/trace-driven/functional_warmup.hpp. So the simulator builds without simsample
installed. After changing either header, run

    python adapters/accelsim/patches/refresh_header.py

to rewrite those parts of the patches (``--check`` only reports whether they are up to date; the
test suite runs the same comparisons).
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PATCH = HERE / "accel-sim-pkp.patch"
HEADER = HERE.parents[2] / "cpp" / "pkp_hook" / "pkp_monitor.hpp"
TARGET = "gpu-simulator/pkp/pkp_monitor.hpp"
WARMUP_PATCH = HERE / "accel-sim-warmup.patch"
WARMUP_HEADER = HERE.parent / "cpp" / "warmup" / "functional_warmup.hpp"
WARMUP_TARGET = "gpu-simulator/trace-driven/functional_warmup.hpp"
#: each patch, the header it embeds, and where the patch puts it in the simulator
EMBEDDED = [(PATCH, HEADER, TARGET), (WARMUP_PATCH, WARMUP_HEADER, WARMUP_TARGET)]


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


def embedded_header(text: str, target: str = TARGET) -> str | None:
    """The content of the new-file section for the header, or None when absent."""
    for sec in _sections(text):
        if sec.startswith(f"diff --git a/{target} b/{target}"):
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


def header_section(content: str, target: str = TARGET) -> str:
    data = content.encode()
    blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()[:7]
    lines = content.splitlines(keepends=True)
    out = [
        f"diff --git a/{target} b/{target}\n",
        "new file mode 100644\n",
        f"index 0000000..{blob}\n",
        "--- /dev/null\n",
        f"+++ b/{target}\n",
        f"@@ -0,0 +1,{len(lines)} @@\n",
    ]
    out += ["+" + ln for ln in lines]
    if lines and not lines[-1].endswith("\n"):
        out[-1] += "\n\\ No newline at end of file\n"
    return "".join(out)


def refreshed(text: str, content: str, target: str = TARGET) -> str:
    secs = _sections(text)
    new = header_section(content, target)
    for i, sec in enumerate(secs):
        if sec.startswith(f"diff --git a/{target} b/{target}"):
            secs[i] = new
            break
    else:
        raise ValueError(f"the patch has no section for {target}")
    return "".join(secs)


def main(argv: list[str]) -> int:
    status = 0
    for patch, header, target in EMBEDDED:
        text = patch.read_text()
        content = header.read_text()
        if embedded_header(text, target) == content:
            print(f"{patch.name}: header up to date")
            continue
        if "--check" in argv:
            print(f"{patch.name}: header differs from {header.name}; run {Path(__file__).name}", file=sys.stderr)
            status = 1
            continue
        patch.write_text(refreshed(text, content, target))
        print(f"{patch.name}: header refreshed")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
