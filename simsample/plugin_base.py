"""What plugins implement: samplers, readers and simulator adapters.

Plugins subclass these and hand instances to the ``register_*`` hooks of
:mod:`simsample.hookspecs`. Like scikit-learn estimators, a sampler's parameters are declared
with types and defaults, validated before use and recorded in every plan it makes.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from simsample.errors import UserError

if TYPE_CHECKING:
    import click

    from simsample.gcl.streams import InstructionTraces
    import pandas as pd

    from simsample.planfile import Plan
    from simsample.workload import Workload

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class Param:
    """A typed sampler parameter with a default.

    ``type`` is one of ``int``, ``float``, ``bool``, ``str``; ``choices`` restricts a ``str``;
    ``minimum``/``maximum`` bound a number (inclusive); ``nullable`` admits ``None``
    (written ``none`` on the command line).
    """

    name: str
    type: type
    default: Any
    help: str = ""
    choices: tuple[str, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    nullable: bool = False

    def convert(self, value: Any) -> Any:
        """Convert a command-line string (or a Python value) and check it; raise UserError."""
        if value is None or (isinstance(value, str) and value.lower() in {"none", "null"} and self.nullable):
            if self.nullable:
                return None
            raise UserError(f"parameter {self.name} needs a value")
        try:
            if self.type is bool:
                if isinstance(value, bool):
                    out: Any = value
                elif str(value).lower() in _TRUE:
                    out = True
                elif str(value).lower() in _FALSE:
                    out = False
                else:
                    raise ValueError
            elif self.type is int:
                if isinstance(value, bool):
                    raise ValueError
                f = float(value)
                if not f.is_integer():
                    raise ValueError
                out = int(f)
            elif self.type is float:
                out = float(value)
                if not math.isfinite(out):
                    raise ValueError
            else:
                out = str(value)
        except (TypeError, ValueError):
            raise UserError(f"parameter {self.name}: {value!r} is not a valid {self.type.__name__}") from None
        if self.choices is not None and out not in self.choices:
            raise UserError(f"parameter {self.name}: {out!r} is not one of {', '.join(self.choices)}")
        if self.minimum is not None and out < self.minimum:
            raise UserError(f"parameter {self.name}: {out} is below the minimum {self.minimum}")
        if self.maximum is not None and out > self.maximum:
            raise UserError(f"parameter {self.name}: {out} is above the maximum {self.maximum}")
        return out


class Sampler(ABC):
    """Chooses launches to simulate and their weights.

    Subclasses set the class attributes and implement :meth:`plan`. ``requires`` names the
    workload columns the sampler reads beyond the canonical ones; ``requires_hint`` says how a
    user gets them (which profiler metrics, or ``simsample profile features``).
    """

    name: ClassVar[str]
    version: ClassVar[str] = "1"
    description: ClassVar[str] = ""
    params: ClassVar[tuple[Param, ...]] = ()
    requires: ClassVar[tuple[str, ...]] = ()
    requires_hint: ClassVar[str] = ""
    #: whether the plans it makes carry a statistical error bound
    bounded: ClassVar[bool] = False

    def resolve_params(self, given: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Defaults overlaid with ``given`` (strings or values), checked; unknown names refused."""
        given = dict(given or {})
        by_name = {p.name: p for p in self.params}
        unknown = sorted(set(given) - set(by_name))
        if unknown:
            known = ", ".join(by_name) or "none"
            raise UserError(f"sampler {self.name} has no parameter {', '.join(unknown)} (known: {known})")
        out = {}
        for p in self.params:
            out[p.name] = p.convert(given[p.name]) if p.name in given else p.default
        return out

    def required_columns(self, params: Mapping[str, Any]) -> tuple[str, ...]:
        """Columns needed with these parameters (override when they depend on parameters)."""
        return self.requires

    def unavailable(self) -> str | None:
        """Why the sampler cannot run here (an optional dependency missing, and how to install
        it), or None. ``simsample samplers`` shows it; planning refuses with it."""
        return None

    def check_workload(self, workload: Workload, params: Mapping[str, Any]) -> None:
        """Refuse, naming missing columns and how to get them, before planning."""
        note = self.unavailable()
        if note:
            raise UserError(f"sampler {self.name} cannot run: {note}")
        workload.require(self.required_columns(params), who=f"sampler {self.name}", hint=self.requires_hint)

    @abstractmethod
    def plan(self, workload: Workload, params: Mapping[str, Any], seed: int) -> Plan:
        """Make a plan for ``workload`` with resolved ``params``; deterministic in ``seed``."""


class Reader(ABC):
    """Loads one profile format into a :class:`~simsample.workload.Workload`."""

    name: ClassVar[str]
    description: ClassVar[str] = ""
    #: whether :meth:`read` accepts several files of the same run (e.g. one per rank)
    multi_file: ClassVar[bool] = False
    #: whether a directory may be handed to :meth:`detect` and :meth:`read` (a trace folder, a
    #: folder of per-rank profiles); other readers are never asked about a directory
    reads_directories: ClassVar[bool] = False

    @abstractmethod
    def detect(self, path: Path, head: bytes) -> bool:
        """Whether ``path`` is in this format, judged mostly from its first decompressed bytes.

        ``head`` is empty for a directory. Must be cheap and must not raise.
        """

    @abstractmethod
    def read(self, paths: Sequence[Path], options: Mapping[str, Any]) -> Workload:
        """Read the file(s). Errors name the file, the line or record and what was expected."""


class Adapter(ABC):
    """One simulator: its trace folders, its sampled inputs and its outputs.

    The host's ``apply``, ``collect``, ``estimate``, ``run`` and ``profile features`` commands
    find the adapter by ``--sim NAME`` and hand the rest of the command line to the click
    command the adapter returns from :meth:`commands`; programmatic users call the methods.
    """

    name: ClassVar[str]
    description: ClassVar[str] = ""

    @abstractmethod
    def read(self, path: Path) -> Workload:
        """Read a trace folder (headers only: must stay fast on huge folders)."""

    @abstractmethod
    def commands(self) -> Mapping[str, click.Command]:
        """Click commands by verb: any of ``apply``, ``collect``, ``estimate``, ``run``, ``features``."""

    def instruction_traces(self, workload: Workload) -> InstructionTraces:
        """The trace file of every launch of ``workload`` and the function that reads chosen warps
        of one (GCL-Sampler's graphs). Adapters whose traces hold instruction streams override this."""
        raise UserError(f"adapter {self.name} cannot read per-warp instruction streams, which GCL-Sampler needs; plan on an Accel-Sim trace folder")

    def full_run_results(self, outputs: Sequence[Path]) -> pd.DataFrame:
        """Per-launch results of a run of the whole workload (``simsample evaluate --truth``):
        ``kernel_id`` (the trace folder's ids), optionally ``name``, metric columns and ``status``.
        Adapters that can read their simulator's output override this."""
        raise UserError(f"adapter {self.name} cannot read a full run's per-launch results; give --truth as a kernel_id,value CSV")
