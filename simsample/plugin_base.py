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

from simsample.errors import UserError, UserTypeError, UserValueError
from simsample.sampling.metrics import Metric, count, not_estimable, ratio

if TYPE_CHECKING:
    import click
    import pandas as pd

    from simsample.gcl.streams import InstructionTraces
    from simsample.planfile import Plan
    from simsample.workload import Workload

__all__ = ["Adapter", "Metric", "Param", "Reader", "Sampler", "count", "not_estimable", "ratio", "resolve_options"]

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class Param:
    """A typed parameter with a default: a sampler's parameter, or an adapter's ``apply`` or
    ``collect`` option.

    ``type`` is one of ``int``, ``float``, ``bool``, ``str``, ``Path``; ``choices`` restricts a
    ``str``; ``minimum``/``maximum`` bound a number (inclusive); ``nullable`` admits ``None``
    (written ``none`` on the command line); ``multiple`` makes the value a tuple of such values
    (a repeatable command-line option).
    """

    name: str
    type: type
    default: Any
    help: str = ""
    choices: tuple[str, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    nullable: bool = False
    multiple: bool = False

    def convert(self, value: Any) -> Any:
        """Convert a command-line string (or a Python value) and check it; a wrong value is a
        :class:`~simsample.errors.UserValueError` naming the parameter."""
        if self.multiple:
            if value is None:
                return ()
            items = [value] if isinstance(value, (str, Path)) else value
            try:
                items = list(items)
            except TypeError:
                raise UserTypeError(
                    f"parameter {self.name}: expected a list of {self.type.__name__}, got {type(value).__name__}"
                ) from None
            return tuple(self._convert_one(v) for v in items)
        return self._convert_one(value)

    def _convert_one(self, value: Any) -> Any:
        if type(value).__module__ == "numpy" and hasattr(
            value, "item"
        ):  # a numpy scalar (from a table) as its Python value
            value = value.item()
        if value is None or (isinstance(value, str) and value.lower() in {"none", "null"} and self.nullable):
            if self.nullable:
                return None
            raise UserValueError(f"parameter {self.name} needs a value")
        try:
            if self.type is bool:
                if isinstance(value, bool):
                    out: Any = value
                elif isinstance(value, (str, int)) and str(value).lower() in _TRUE:
                    out = True
                elif isinstance(value, (str, int)) and str(value).lower() in _FALSE:
                    out = False
                else:
                    raise ValueError
            elif self.type is int:
                if isinstance(value, bool):
                    raise ValueError
                if isinstance(value, str):
                    try:
                        out = int(value.strip())  # exactly, beyond 2**53 too
                    except ValueError:  # "1e3", "2.0"
                        f = float(value)
                        if not f.is_integer():
                            raise
                        out = int(f)
                elif isinstance(value, int):
                    out = int(value)
                else:  # a float that is a whole number is taken, 1.5 is not truncated
                    f = float(value)
                    if not f.is_integer():
                        raise ValueError
                    out = int(f)
            elif self.type is float:
                if isinstance(value, bool):
                    raise ValueError
                out = float(value)
                if not math.isfinite(out):
                    raise ValueError
            elif self.type is Path:
                if not isinstance(value, (str, Path)):
                    raise ValueError
                out = Path(value)
            else:
                if not isinstance(value, str):
                    raise ValueError
                out = value
        except (TypeError, ValueError, OverflowError):
            raise UserValueError(f"parameter {self.name}: {value!r} is not a valid {self.type.__name__}") from None
        if self.choices is not None and out not in self.choices:
            raise UserValueError(f"parameter {self.name}: {out!r} is not one of {', '.join(self.choices)}")
        if self.minimum is not None and out < self.minimum:
            raise UserValueError(f"parameter {self.name}: {out} is below the minimum {self.minimum}")
        if self.maximum is not None and out > self.maximum:
            hint = " (a fraction: 0.05 is 5%)" if self.maximum == 1.0 and self.type is float and out <= 100 else ""
            raise UserValueError(f"parameter {self.name}: {out} is above the maximum {self.maximum}{hint}")
        return out


def resolve_options(params: Sequence[Param], given: Mapping[str, Any] | None, *, who: str) -> dict[str, Any]:
    """Defaults overlaid with ``given`` (strings or values), each checked; an unknown name is a
    :class:`~simsample.errors.UserTypeError` listing the known ones (as Python refuses an
    unexpected keyword argument)."""
    given = dict(given or {})
    by_name = {p.name: p for p in params}
    unknown = sorted(set(given) - set(by_name))
    if unknown:
        known = ", ".join(by_name) or "none"
        raise UserTypeError(f"{who} has no parameter {', '.join(unknown)} (known: {known})")
    return {p.name: p.convert(given[p.name]) if p.name in given else p.default for p in params}


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
        return resolve_options(self.params, given, who=f"sampler {self.name}")

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

    The public API calls these methods (``simsample.apply``, ``simsample.collect``); the
    ``simsample apply|collect|estimate --sim NAME`` commands parse arguments and call the API.
    What an adapter declares:

    - ``metrics``: every column :meth:`collect` returns besides ``kernel_id`` and ``status``, as
      a count, a ratio of two counts, or not estimable (:class:`~simsample.sampling.metrics.Metric`).
      The estimate sums counts, divides the estimated totals of a ratio's two counts, and leaves
      the rest out: a sum of per-launch IPCs or of launch ids is no figure.
    - ``apply_options`` and ``collect_options``: the typed keyword options of :meth:`apply` and
      :meth:`collect` (:class:`Param`). ``simsample.apply``/``collect`` check what a caller gives
      against them (unknown names and wrong values refused in one line) and call the method with
      every option present.
    """

    name: ClassVar[str]
    description: ClassVar[str] = ""
    #: the simulator's name as people write it (``Accel-Sim``), for titles; ``name`` when empty
    title: ClassVar[str] = ""
    #: every column :meth:`collect` returns besides ``kernel_id`` and ``status``
    metrics: ClassVar[tuple[Metric, ...]] = ()
    #: the keyword options of :meth:`apply`
    apply_options: ClassVar[tuple[Param, ...]] = ()
    #: the keyword options of :meth:`collect` (besides ``plan`` and ``allow_incomplete``)
    collect_options: ClassVar[tuple[Param, ...]] = ()
    #: the adapter's own compiled modules (dotted name -> what it does, for ``simsample plugins``),
    #: each with a Python fallback chosen through the SDK's ``import_optional``
    compiled_parts: ClassVar[Mapping[str, str]] = {}

    @abstractmethod
    def read(self, path: Path) -> Workload:
        """Read a trace folder (headers only: must stay fast on huge folders)."""

    def check_apply(self, **options: Any) -> None:  # noqa: B027  (optional: most adapters need no cross-option check)
        """Refuse options, or combinations of them, that :meth:`apply` cannot take, before any
        input is read (``options`` as :meth:`apply` gets them). Each option's type and range are
        checked already (:attr:`apply_options`)."""

    def apply(self, plan: Plan, traces: Path | None, out: Path, **options: Any) -> Path:
        """Write the simulator inputs that run only the plan's launches into the new folder
        ``out`` and return it; ``traces`` is never modified. ``options``: every name of
        :attr:`apply_options`, converted and checked. May print what it wrote (one summary line
        and the command to run next on standard output, notes on standard error)."""
        raise UserError(f"adapter {self.name} cannot apply a plan")

    def collect(
        self, outputs: Sequence[Path], plan: Plan | None = None, *, allow_incomplete: bool = False, **options: Any
    ) -> pd.DataFrame:
        """Per-launch results of the simulator's output(s).

        Columns: ``kernel_id`` (int64, the workload's ids), the columns :attr:`metrics` declares
        (float, NaN where the simulator printed nothing), and ``status`` (``ok`` and
        ``projected`` are usable, anything else is not). With a plan: one row per sampled
        launch, ``missing`` where no output has it. ``attrs["details"]`` maps a kernel id to why
        its result is unusable. Unless ``allow_incomplete``, a sampled launch without a usable
        result is refused (one line naming it).
        """
        raise UserError(f"adapter {self.name} cannot read its simulator's output")

    def find_plan(self, outputs: Sequence[Path]) -> Path | None:
        """The plan file the outputs carry (a run folder that holds its plan), used by ``collect``
        and ``estimate`` when no plan is given; None when they carry none."""
        return None

    def commands(self) -> Mapping[str, click.Command]:
        """The adapter's own command-line verbs (any of ``apply``, ``run``, ``features``), as
        click commands that parse arguments and call the API. ``collect`` and ``estimate`` are
        the host's, built from :attr:`collect_options` and :attr:`metrics`."""
        return {}

    def instruction_traces(self, workload: Workload) -> InstructionTraces:
        """The trace file of every launch of ``workload`` and the function that reads chosen warps
        of one (GCL-Sampler's graphs). Adapters whose traces hold instruction streams override this."""
        raise UserError(
            f"adapter {self.name} cannot read per-warp instruction streams, which GCL-Sampler needs; plan on an "
            "Accel-Sim trace folder"
        )

    def full_run_results(self, outputs: Sequence[Path]) -> pd.DataFrame:
        """Per-launch results of a run of the whole workload (``simsample evaluate --truth``):
        ``kernel_id`` (the trace folder's ids), optionally ``name``, metric columns and ``status``.
        Adapters that can read their simulator's output override this."""
        raise UserError(
            f"adapter {self.name} cannot read a full run's per-launch results; give --truth as a kernel_id,value CSV"
        )
