"""What a MacSim ``params.in`` says about the simulated machine that trace features depend on:
the cores a launch's blocks spread over and the last-level cache its accesses may still find.

MacSim reads ``knob value`` lines and takes its built-in default for every knob a file leaves
out (``def/*.param.def``); so does this module. Without a ``params.in`` at all, the machine is
MacSim's built-in one (80 cores, one 8 MiB LLC of 8,192 sets x 16 ways x 64 B); the
``bin/params.in`` MacSim ships describes 16 cores and twelve 384 KiB LLC slices (4.5 MiB).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from simsample.sdk import FormatError, read_text_limited

#: MacSim's built-in values (def/core.param.def, def/memory.param.def) of the knobs read here.
DEFAULTS = {"num_sim_cores": 80, "num_llc": 1, "llc_num_set": 8192, "llc_assoc": 16, "llc_line_size": 64}


@dataclass(frozen=True)
class Machine:
    """The simulated GPU as far as the trace features need it."""

    cores: int = DEFAULTS["num_sim_cores"]
    llc_bytes: int = DEFAULTS["num_llc"] * DEFAULTS["llc_num_set"] * DEFAULTS["llc_assoc"] * DEFAULTS["llc_line_size"]
    source: str = "MacSim's built-in knob values"

    def llc_lines(self, line: int) -> int:
        """How many ``line``-byte lines the last-level cache holds (all slices together)."""
        return max(self.llc_bytes // line, 0)


def parse_params(text: str, source: str = "params.in") -> Machine:
    """The machine of a ``params.in`` text: the knobs it sets, MacSim's defaults for the rest.

    A knob given twice takes its last value, as MacSim's parser does. A knob read here whose
    value is not a positive whole number is refused with the line (MacSim would read 0 or stop)."""
    values = dict(DEFAULTS)
    for n, raw in enumerate(text.splitlines(), 1):
        toks = raw.split()
        if len(toks) < 2 or toks[0].startswith("#"):
            continue
        key = toks[0].lower()
        if key not in values:
            continue
        try:
            value = int(toks[1])
        except ValueError:
            value = 0
        if value < 1:
            raise FormatError(source, f"{key} {toks[1]!r}: expected a positive whole number", line=n)
        values[key] = value
    llc = values["num_llc"] * values["llc_num_set"] * values["llc_assoc"] * values["llc_line_size"]
    return Machine(values["num_sim_cores"], llc, source)


def read_params(path: str | Path | None) -> Machine:
    """The machine of the ``params.in`` at ``path``; MacSim's built-in one for None."""
    if path is None:
        return Machine()
    from simsample.sdk import UserError, special_file
    from simsample_macsim.params import check_params_text

    if not Path(path).is_file():
        kind = special_file(Path(path))
        if kind:
            raise UserError(f"{path}: is {kind}, not a regular file; pass the params.in MacSim will run with")
        raise UserError(f"{path}: no such file (pass the params.in MacSim will run with)")
    text = read_text_limited(Path(path), errors="replace")
    check_params_text(text, str(path))
    return parse_params(text, str(path))
