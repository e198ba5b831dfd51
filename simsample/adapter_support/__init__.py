"""What every simulator adapter does the same way, so that the adapters behave alike.

An adapter (Accel-Sim, MacSim, HyFiSS, or a third party's) turns a plan into sampled simulator
inputs and the simulator's output back into per-kernel results. The simulator-specific parts
(trace formats, logs, run scripts) stay in the adapter; these steps are shared:

- :mod:`.matching`: which launches of the simulator's inputs a plan's samples are (by
  fingerprint, else by launch position when only the launch sequence matches, else refused), and
  which plan kernel id a simulated kernel stands for;
- :mod:`.folders`: the output folder of ``apply`` (new or empty, never overlapping an input,
  built beside its place and moved in when complete, ``--force`` replaces it) and links or
  copies into it;
- :mod:`.weights`: ``simsample-weights.csv`` and ``simsample-plan.json``, written into every
  sampled folder;
- :mod:`.results`: the results table of ``collect``, its statuses, and the usable rows
  ``estimate`` starts from (simulator output and/or results tables written by ``collect -o``).
"""

from __future__ import annotations

from simsample.adapter_support.folders import (
    check_output_folder,
    link_or_copy,
    staged_folder,
)
from simsample.adapter_support.matching import PlanMatch, match_plan, note, plan_ids
from simsample.adapter_support.results import (
    STATUS_MISSING,
    STATUS_OK,
    USABLE_STATUSES,
    against_plan,
    is_results_csv,
    read_results_csv,
    results_csv_text,
    results_for_estimate,
    usable_results,
)
from simsample.adapter_support.weights import (
    PLAN_FILE,
    WEIGHTS_COLUMNS,
    WEIGHTS_FILE,
    format_number,
    weights_table,
    write_plan_records,
    write_weights,
)

__all__ = [
    "PLAN_FILE",
    "STATUS_MISSING",
    "STATUS_OK",
    "USABLE_STATUSES",
    "WEIGHTS_COLUMNS",
    "WEIGHTS_FILE",
    "PlanMatch",
    "against_plan",
    "check_output_folder",
    "format_number",
    "is_results_csv",
    "link_or_copy",
    "match_plan",
    "note",
    "plan_ids",
    "read_results_csv",
    "results_csv_text",
    "results_for_estimate",
    "staged_folder",
    "usable_results",
    "weights_table",
    "write_plan_records",
    "write_weights",
]
