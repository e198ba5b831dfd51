"""``params.in`` for a sampled run: the user's machine configuration, with the knobs that
collection depends on set so that every sampled kernel runs to its end and leaves its marks on
standard output.

- ``trace_name_file``: the ``trace_file_list`` written beside it.
- ``sim_cycle_count 0``, ``blocks_to_simulate 0``, ``max_blocks_to_simulate 0``,
  ``repeat_trace 0``: no early end and no repeats (any of them cuts or pads kernels silently).
- ``max_insts`` (per warp) and ``max_insts1`` (whole run): at least the sampled kernels' counts;
  MacSim retires a warp, or stops setting up kernels, when they are reached.
- ``stdout`` / ``stderr`` removed: with them, the ``Finished`` lines (instructions) go to a file
  while the ``setup_process`` lines (cycles) stay on standard output, and no single log holds
  both.

Every changed line keeps the original beside it as a comment.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

#: knobs removed from params.in (so that all of MacSim's output reaches its standard output)
REMOVED = ("stdout", "stderr")
#: uns32 maximum: MacSim's per-warp instruction cap
MAX_INSTS_CEILING = 4294967295
#: a whole-run instruction cap that no simulation reaches
MAX_INSTS1_CEILING = 10**18


def required_knobs(*, max_warp_insts: int | None, total_insts: int | None) -> dict[str, tuple[int | str, str]]:
    """Knob → (value, rule): ``set`` forces the value, ``atleast`` raises a smaller one."""
    return {
        "trace_name_file": ("trace_file_list", "set"),
        "sim_cycle_count": (0, "set"),
        "blocks_to_simulate": (0, "set"),
        "max_blocks_to_simulate": (0, "set"),
        "repeat_trace": (0, "set"),
        "max_insts": (MAX_INSTS_CEILING if max_warp_insts is None else max_warp_insts + 1, "atleast"),
        "max_insts1": (MAX_INSTS1_CEILING if total_insts is None else max(total_insts + 1, 10**10), "atleast"),
    }


_KNOB = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def check_params_text(text: str, path: str) -> None:
    """Refuse a ``params.in`` that is not one: binary data (NUL bytes, undecodable bytes) or a
    line that does not start with a knob name. MacSim ignores what it cannot parse, so garbage
    would become a sampled run with MacSim's defaults in place of the user's machine."""
    from simsample.sdk import FormatError

    for n, raw in enumerate(text.splitlines(), 1):
        toks = raw.split()
        if "\x00" in raw or "\ufffd" in raw:
            raise FormatError(
                path,
                "binary data, not a MacSim params.in (lines of 'knob value'); give the params.in of the machine to "
                "simulate",
                line=n,
            )
        if toks and not toks[0].startswith("#") and not _KNOB.fullmatch(toks[0]):
            raise FormatError(path, f"expected 'knob value', got {raw.strip()[:40]!r}; give a MacSim params.in", line=n)


def _value(tokens: list[str]) -> str:
    return tokens[1] if len(tokens) > 1 else ""


def patch_params(text: str, knobs: Mapping[str, tuple[int | str, str]]) -> tuple[str, list[str]]:
    """The patched ``params.in`` and a list of what changed (for the user).

    ``atleast`` knobs keep a larger (or unparsable-as-smaller) existing value; ``set`` knobs are
    replaced; absent knobs are appended in a block at the end.
    """
    out: list[str] = []
    changes: list[str] = []
    present: set[str] = set()
    for raw in text.splitlines():
        stripped = raw.strip()
        toks = stripped.split()
        if not toks or stripped.startswith("#"):
            out.append(raw)
            continue
        key = toks[0].lower()
        if key in REMOVED:
            out.append(f"# simsample: removed so that all of MacSim's output reaches its standard output: {stripped}")
            changes.append(f"removed {stripped}")
            continue
        if key not in knobs:
            out.append(raw)
            continue
        present.add(key)
        value, rule = knobs[key]
        old = _value(toks)
        keep = False
        if rule == "atleast":
            try:
                keep = int(float(old)) >= int(value)  # type: ignore[arg-type]
            except ValueError:
                keep = False
        elif old == str(value):
            keep = True
        if keep:
            out.append(raw)
            continue
        out.append(f"# simsample: was: {stripped}")
        out.append(f"{key} {value}")
        changes.append(f"{key} {old or '(empty)'} -> {value}")
    missing = [k for k in knobs if k not in present]
    if missing:
        out.append("")
        out.append("# simsample: knobs that collecting per-kernel results depends on")
        for k in missing:
            out.append(f"{k} {knobs[k][0]}")
            changes.append(f"added {k} {knobs[k][0]}")
    return "\n".join(out) + "\n", changes
