"""The plugin SDK: every name a sampler, a reader or a simulator adapter needs, in one module.

A plugin, built in or third party, imports from here and from the top-level :mod:`simsample`
API, and from nothing else in the package; a contract checked in CI holds the built-in plugins
to it. Everything imported here is public and follows the stability policy of the
documentation's SDK reference: a name is removed or changed only after a release in which using
it raises :class:`DeprecationWarning`, and the changelog says so.

Names in :data:`PROVISIONAL` are public but still settling (the toolkit of the stratified
samplers, the table helpers of the built-in readers, the run helpers of the adapters): they may
change in a minor release, with a changelog entry, and without a deprecation period.

The names are imported on first use (``from simsample.sdk import Sampler`` imports only what
``Sampler`` needs): loading plugins must stay cheap, because commands as quick as
``simsample samplers`` load them all.

The groups below say who needs what:

- **every plugin**: :func:`hookimpl`, the errors, :class:`Workload`, :class:`Plan`.
- **samplers**: :class:`Sampler`, :class:`Param`, the draws and cluster helpers
  (:func:`rng`, :func:`draw`, :func:`make_cluster`, :func:`cluster_stats`), the representative
  plans (:func:`representative_plan`), and the stratified toolkit (provisional).
- **readers**: :class:`Reader`, :func:`from_records` (the canonical table from records),
  :func:`read_head` and friends (compressed files, size limits), :func:`task` (progress).
- **adapters**: :class:`Adapter`, the metric declarations, plan matching, output folders,
  atomic writes, running a simulator in its own process group, compiled parts chosen like the
  core's (:func:`import_optional`), and for a simulator with a PKP hook the replay of a kernel's
  sampled progress through the monitor (:func:`replay_series`, provisional).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what the names are, for type checkers, the documentation and the import contract
    from simsample.adapter_support.context import cache_window_start
    from simsample.adapter_support.folders import check_output_folder, link_or_copy, staged_folder
    from simsample.adapter_support.matching import PlanMatch, match_plan, note, plan_ids
    from simsample.adapter_support.results import STATUS_MISSING, USABLE_STATUSES, against_plan, check_launch_count
    from simsample.adapter_support.warmup import warmup_choice
    from simsample.adapter_support.weights import PLAN_FILE, ROLE_WARMUP, WEIGHTS_FILE, write_plan_records
    from simsample.errors import (
        FormatError,
        IncompleteResults,
        PlanMismatchError,
        UserError,
        UserFileNotFoundError,
        UserTypeError,
        UserValueError,
        signals_deferred,
    )
    from simsample.gcl.streams import (
        MEM_ATOMIC,
        MEM_KINDS,
        MEM_LOAD,
        MEM_NONE,
        MEM_STORE,
        InstructionTraces,
        KernelStream,
        StreamBuilder,
        WarpSelection,
    )
    from simsample.hookspecs import hookimpl
    from simsample.io.csv_columns import CSV_KEYS, CSV_UNITS, parse_columns
    from simsample.io.files import (
        DECOMPRESSION_ERRORS,
        atomic_write_bytes,
        atomic_write_text,
        atomic_writer,
        check_input_file,
        check_input_folder,
        check_output_file,
        compression_of,
        copy_bounded,
        missing_message,
        open_binary,
        open_text,
        read_all,
        read_head,
        remove_partial,
        special_file,
        temporary_cache,
        temporary_full,
        writable_parent,
        writes_through,
    )
    from simsample.io.limits import (
        check_ratio,
        check_size,
        human_size,
        limit_refusal,
        read_bytes_limited,
        read_text_limited,
        size_limit,
    )
    from simsample.io.names import base_name
    from simsample.io.numbers import INT64_MAX, INT64_MIN, check_int, fits_int64, parse_int
    from simsample.io.script_values import comment_text, refuse_control
    from simsample.io.sqlite_export import open_sqlite, sqlite_table_columns, sqlite_tables
    from simsample.io.tables import (
        BINARY_BYTE_SCALE,
        TIME_SCALE,
        add_devices,
        categorical,
        check_int64,
        csv_source,
        detect_text,
        launch_table,
        looks_binary,
        make_workload,
        nan_to_zero,
        narrow,
        narrow_whole,
        numeric_column,
        parse_triples,
        read_csv_table,
        source_label,
        split_corr_names,
        string_column,
        to_ns,
        whole,
    )
    from simsample.io.workers import can_spawn, usable_cpus
    from simsample.lazy_modules import import_beside, lazy_module
    from simsample.manager import workload_adapter
    from simsample.native import import_optional, pure_python_requested
    from simsample.pkp import pkp_implementation
    from simsample.pkp.replay import (
        KernelReplay,
        ReplayParams,
        ReplaySummary,
        SampleSeries,
        make_pkp_monitor,
        replay_series,
        summarize_replays,
        sweep_replay_params,
    )
    from simsample.planfile import Cluster, Plan
    from simsample.plugin_base import Adapter, Param, Reader, Sampler, resolve_options
    from simsample.progress import task
    from simsample.runner import Job, failure_report, run_jobs
    from simsample.runner.jobs import run_in_group
    from simsample.runner.options import executor_options, make_executor
    from simsample.sampling.allocation import allocate, pair_draws, sampled_time, z_value
    from simsample.sampling.audit import MODEL_COLUMN
    from simsample.sampling.draws import cluster_stats, draw, make_cluster, rng
    from simsample.sampling.filters import WHOLE_PROCESS_FORMATS, launch_numbers, sample_launches, subset_launches
    from simsample.sampling.grouping import CONTEXT_COLUMN, CONTEXT_SUFFIX, GROUPINGS, Grouping, resolve_grouping
    from simsample.sampling.metrics import Metric, count, not_estimable, ratio
    from simsample.sampling.representatives import (
        AUDIT_BY_PARAM,
        AUDIT_PARAM,
        first_of_each,
        model_cycles,
        relabel_by_first,
        representative_plan,
        resolve_metric,
    )
    from simsample.sampling.strata import (
        COMMON_PARAMS,
        Range,
        Strata,
        build_strata,
        draw_plan,
        exact_stats,
        finish,
        group_ranges,
        iid_sizing,
        prepare,
        range_key,
        single_cluster_draws,
        size_clusters,
        split_range,
        spread_stats,
        tail_draws,
    )
    from simsample.workload import (
        MEASURED_METRICS,
        REQUIRED_COLUMNS,
        SHAPE_COLUMNS,
        Workload,
        extras_path,
        from_records,
    )

#: Each public name and the module that defines it (the implementation's place may move; the
#: name here does not). Grouped as the module docstring describes.
_STABLE: dict[str, str] = {
    # every plugin
    "hookimpl": "simsample.hookspecs",
    "UserError": "simsample.errors",
    "FormatError": "simsample.errors",
    "PlanMismatchError": "simsample.errors",
    "UserValueError": "simsample.errors",
    "UserTypeError": "simsample.errors",
    "UserFileNotFoundError": "simsample.errors",
    "IncompleteResults": "simsample.errors",
    "Workload": "simsample.workload",
    "REQUIRED_COLUMNS": "simsample.workload",
    "SHAPE_COLUMNS": "simsample.workload",
    "from_records": "simsample.workload",
    "extras_path": "simsample.workload",
    "Plan": "simsample.planfile",
    "Cluster": "simsample.planfile",
    # base classes
    "Sampler": "simsample.plugin_base",
    "Reader": "simsample.plugin_base",
    "Adapter": "simsample.plugin_base",
    "Param": "simsample.plugin_base",
    "resolve_options": "simsample.plugin_base",
    # adapters: what each result column is (the estimate reads these declarations)
    "Metric": "simsample.sampling.metrics",
    "count": "simsample.sampling.metrics",
    "ratio": "simsample.sampling.metrics",
    "not_estimable": "simsample.sampling.metrics",
    # samplers: draws and clusters
    "rng": "simsample.sampling.draws",
    "draw": "simsample.sampling.draws",
    "make_cluster": "simsample.sampling.draws",
    "cluster_stats": "simsample.sampling.draws",
    "representative_plan": "simsample.sampling.representatives",
    "AUDIT_PARAM": "simsample.sampling.representatives",
    "AUDIT_BY_PARAM": "simsample.sampling.representatives",
    "first_of_each": "simsample.sampling.representatives",
    "relabel_by_first": "simsample.sampling.representatives",
    "resolve_metric": "simsample.sampling.representatives",
    "z_value": "simsample.sampling.allocation",
    # readers: files
    "read_head": "simsample.io.files",
    "read_all": "simsample.io.files",
    "compression_of": "simsample.io.files",
    "open_binary": "simsample.io.files",
    "open_text": "simsample.io.files",
    "check_input_file": "simsample.io.files",
    "check_input_folder": "simsample.io.files",
    "missing_message": "simsample.io.files",
    "special_file": "simsample.io.files",
    "read_text_limited": "simsample.io.limits",
    "read_bytes_limited": "simsample.io.limits",
    "check_size": "simsample.io.limits",
    "task": "simsample.progress",
    # adapters: outputs, plans and compiled parts
    "check_output_file": "simsample.io.files",
    "writable_parent": "simsample.io.files",
    "atomic_writer": "simsample.io.files",
    "atomic_write_text": "simsample.io.files",
    "atomic_write_bytes": "simsample.io.files",
    "temporary_cache": "simsample.io.files",
    "check_output_folder": "simsample.adapter_support.folders",
    "staged_folder": "simsample.adapter_support.folders",
    "link_or_copy": "simsample.adapter_support.folders",
    "PlanMatch": "simsample.adapter_support.matching",
    "match_plan": "simsample.adapter_support.matching",
    "plan_ids": "simsample.adapter_support.matching",
    "note": "simsample.adapter_support.matching",
    "PLAN_FILE": "simsample.adapter_support.weights",
    "WEIGHTS_FILE": "simsample.adapter_support.weights",
    "write_plan_records": "simsample.adapter_support.weights",
    "import_optional": "simsample.native",
    "pure_python_requested": "simsample.native",
}

#: Public names that may still change in a minor release (changelog entry, no deprecation period).
_PROVISIONAL_NAMES: dict[str, str] = {
    # the stratified samplers' toolkit (stem, root, allegro, margin)
    "COMMON_PARAMS": "simsample.sampling.strata",
    "Strata": "simsample.sampling.strata",
    "Range": "simsample.sampling.strata",
    "prepare": "simsample.sampling.strata",
    "group_ranges": "simsample.sampling.strata",
    "exact_stats": "simsample.sampling.strata",
    "split_range": "simsample.sampling.strata",
    "size_clusters": "simsample.sampling.strata",
    "single_cluster_draws": "simsample.sampling.strata",
    "iid_sizing": "simsample.sampling.strata",
    "draw_plan": "simsample.sampling.strata",
    "finish": "simsample.sampling.strata",
    "build_strata": "simsample.sampling.strata",
    "range_key": "simsample.sampling.strata",
    "tail_draws": "simsample.sampling.strata",
    "spread_stats": "simsample.sampling.strata",
    "allocate": "simsample.sampling.allocation",
    "pair_draws": "simsample.sampling.allocation",
    "sampled_time": "simsample.sampling.allocation",
    "GROUPINGS": "simsample.sampling.grouping",
    "CONTEXT_SUFFIX": "simsample.sampling.grouping",
    "resolve_grouping": "simsample.sampling.grouping",
    "MEASURED_METRICS": "simsample.workload",
    "MODEL_COLUMN": "simsample.sampling.audit",
    "model_cycles": "simsample.sampling.representatives",
    "Grouping": "simsample.sampling.grouping",
    # the built-in readers' table helpers (Arrow CSV, exact nanoseconds, narrow integer columns)
    "make_workload": "simsample.io.tables",
    "launch_table": "simsample.io.tables",
    "categorical": "simsample.io.tables",
    "narrow": "simsample.io.tables",
    "csv_source": "simsample.io.tables",
    "read_csv_table": "simsample.io.tables",
    "parse_columns": "simsample.io.csv_columns",
    "CSV_KEYS": "simsample.io.csv_columns",
    "CSV_UNITS": "simsample.io.csv_columns",
    "numeric_column": "simsample.io.tables",
    "string_column": "simsample.io.tables",
    "to_ns": "simsample.io.tables",
    "TIME_SCALE": "simsample.io.tables",
    "BINARY_BYTE_SCALE": "simsample.io.tables",
    "whole": "simsample.io.tables",
    "narrow_whole": "simsample.io.tables",
    "nan_to_zero": "simsample.io.tables",
    "add_devices": "simsample.io.tables",
    "split_corr_names": "simsample.io.tables",
    "check_int64": "simsample.io.tables",
    "detect_text": "simsample.io.tables",
    "parse_triples": "simsample.io.tables",
    "looks_binary": "simsample.io.tables",
    "source_label": "simsample.io.tables",
    "usable_cpus": "simsample.io.workers",
    "can_spawn": "simsample.io.workers",
    # numbers and text from users' files (int64 bounds; values written into scripts)
    "INT64_MAX": "simsample.io.numbers",
    "INT64_MIN": "simsample.io.numbers",
    "fits_int64": "simsample.io.numbers",
    "check_int": "simsample.io.numbers",
    "parse_int": "simsample.io.numbers",
    "refuse_control": "simsample.io.script_values",
    "comment_text": "simsample.io.script_values",
    # adapters: results, warm-up, launches in the process, running the simulator, instruction streams
    "STATUS_MISSING": "simsample.adapter_support.results",
    "USABLE_STATUSES": "simsample.adapter_support.results",
    "against_plan": "simsample.adapter_support.results",
    "check_launch_count": "simsample.adapter_support.results",
    "warmup_choice": "simsample.adapter_support.warmup",
    "cache_window_start": "simsample.adapter_support.context",
    "ROLE_WARMUP": "simsample.adapter_support.weights",
    "WHOLE_PROCESS_FORMATS": "simsample.sampling.filters",
    "launch_numbers": "simsample.sampling.filters",
    "sample_launches": "simsample.sampling.filters",
    "CONTEXT_COLUMN": "simsample.sampling.grouping",
    "base_name": "simsample.io.names",
    "remove_partial": "simsample.io.files",
    "signals_deferred": "simsample.errors",
    "writes_through": "simsample.io.files",
    "run_in_group": "simsample.runner.jobs",
    "Job": "simsample.runner",
    "run_jobs": "simsample.runner",
    "failure_report": "simsample.runner",
    "executor_options": "simsample.runner.options",
    "make_executor": "simsample.runner.options",
    "InstructionTraces": "simsample.gcl.streams",
    "KernelStream": "simsample.gcl.streams",
    "StreamBuilder": "simsample.gcl.streams",
    "WarpSelection": "simsample.gcl.streams",
    "MEM_NONE": "simsample.gcl.streams",
    "MEM_LOAD": "simsample.gcl.streams",
    "MEM_STORE": "simsample.gcl.streams",
    "MEM_ATOMIC": "simsample.gcl.streams",
    "MEM_KINDS": "simsample.gcl.streams",
    # a sampler that reads what only a simulator's own files hold asks that simulator's adapter
    "workload_adapter": "simsample.manager",
    "DECOMPRESSION_ERRORS": "simsample.io.files",
    "subset_launches": "simsample.sampling.filters",
    # readers of SQLite files (Nsight Systems exports): opened read-only from a decompressed copy
    "open_sqlite": "simsample.io.sqlite_export",
    "sqlite_tables": "simsample.io.sqlite_export",
    "sqlite_table_columns": "simsample.io.sqlite_export",
    # a module imported on first use, parents included (plugins are loaded by commands that never use them)
    "lazy_module": "simsample.lazy_modules",
    # readers whose compiled scan releases the GIL: the libraries needed after it imported beside it
    "import_beside": "simsample.lazy_modules",
    # readers that unpack archives or inflate compressed input: the same limits and refusals as the built-in ones
    "size_limit": "simsample.io.limits",
    "limit_refusal": "simsample.io.limits",
    "human_size": "simsample.io.limits",
    "check_ratio": "simsample.io.limits",
    "copy_bounded": "simsample.io.files",
    "temporary_full": "simsample.io.files",
    # adapters of simulators with a PKP hook: the monitor's active implementation and the
    # offline replay of a full run's samples through it (the monitor itself: simsample.pkp)
    "pkp_implementation": "simsample.pkp",
    "ReplayParams": "simsample.pkp.replay",
    "KernelReplay": "simsample.pkp.replay",
    "ReplaySummary": "simsample.pkp.replay",
    "SampleSeries": "simsample.pkp.replay",
    "make_pkp_monitor": "simsample.pkp.replay",
    "replay_series": "simsample.pkp.replay",
    "summarize_replays": "simsample.pkp.replay",
    "sweep_replay_params": "simsample.pkp.replay",
}

_EXPORTS: dict[str, str] = {**_STABLE, **_PROVISIONAL_NAMES}

#: The public names that may still change in a minor release (see the module docstring).
PROVISIONAL: frozenset[str] = frozenset(_PROVISIONAL_NAMES)

#: Written out (not computed) so that linters and readers see what the module exports.
__all__ = [
    "AUDIT_BY_PARAM",
    "AUDIT_PARAM",
    "Adapter",
    "BINARY_BYTE_SCALE",
    "COMMON_PARAMS",
    "CONTEXT_COLUMN",
    "CONTEXT_SUFFIX",
    "CSV_KEYS",
    "CSV_UNITS",
    "Cluster",
    "FormatError",
    "GROUPINGS",
    "INT64_MAX",
    "INT64_MIN",
    "IncompleteResults",
    "InstructionTraces",
    "Job",
    "KernelStream",
    "MEM_ATOMIC",
    "MEM_LOAD",
    "MEM_NONE",
    "MEM_STORE",
    "MEASURED_METRICS",
    "MODEL_COLUMN",
    "Metric",
    "PLAN_FILE",
    "PROVISIONAL",
    "Param",
    "Plan",
    "PlanMatch",
    "PlanMismatchError",
    "REQUIRED_COLUMNS",
    "ROLE_WARMUP",
    "Range",
    "Reader",
    "SHAPE_COLUMNS",
    "STATUS_MISSING",
    "Sampler",
    "Strata",
    "StreamBuilder",
    "TIME_SCALE",
    "USABLE_STATUSES",
    "UserError",
    "UserFileNotFoundError",
    "UserTypeError",
    "UserValueError",
    "WEIGHTS_FILE",
    "WHOLE_PROCESS_FORMATS",
    "WarpSelection",
    "Workload",
    "add_devices",
    "against_plan",
    "allocate",
    "atomic_write_bytes",
    "atomic_write_text",
    "atomic_writer",
    "base_name",
    "cache_window_start",
    "can_spawn",
    "categorical",
    "check_input_file",
    "check_input_folder",
    "check_int",
    "check_int64",
    "check_launch_count",
    "check_output_file",
    "check_output_folder",
    "check_size",
    "cluster_stats",
    "comment_text",
    "compression_of",
    "count",
    "csv_source",
    "detect_text",
    "draw",
    "draw_plan",
    "exact_stats",
    "executor_options",
    "extras_path",
    "failure_report",
    "finish",
    "first_of_each",
    "fits_int64",
    "from_records",
    "group_ranges",
    "hookimpl",
    "iid_sizing",
    "import_optional",
    "launch_numbers",
    "launch_table",
    "link_or_copy",
    "looks_binary",
    "make_cluster",
    "make_executor",
    "make_workload",
    "match_plan",
    "missing_message",
    "model_cycles",
    "nan_to_zero",
    "narrow",
    "narrow_whole",
    "not_estimable",
    "note",
    "numeric_column",
    "open_binary",
    "open_text",
    "parse_int",
    "parse_triples",
    "plan_ids",
    "prepare",
    "pure_python_requested",
    "ratio",
    "read_all",
    "read_bytes_limited",
    "read_csv_table",
    "parse_columns",
    "read_head",
    "read_text_limited",
    "refuse_control",
    "relabel_by_first",
    "remove_partial",
    "signals_deferred",
    "representative_plan",
    "resolve_grouping",
    "resolve_metric",
    "resolve_options",
    "rng",
    "run_in_group",
    "run_jobs",
    "pair_draws",
    "sample_launches",
    "sampled_time",
    "single_cluster_draws",
    "size_clusters",
    "source_label",
    "special_file",
    "split_corr_names",
    "split_range",
    "spread_stats",
    "staged_folder",
    "string_column",
    "tail_draws",
    "task",
    "temporary_cache",
    "to_ns",
    "usable_cpus",
    "warmup_choice",
    "whole",
    "writable_parent",
    "write_plan_records",
    "writes_through",
    "z_value",
    "DECOMPRESSION_ERRORS",
    "subset_launches",
    "open_sqlite",
    "sqlite_tables",
    "sqlite_table_columns",
    "lazy_module",
    "import_beside",
    "size_limit",
    "limit_refusal",
    "human_size",
    "check_ratio",
    "copy_bounded",
    "temporary_full",
    "build_strata",
    "range_key",
    "Grouping",
    "MEM_KINDS",
    "workload_adapter",
    "pkp_implementation",
    "ReplayParams",
    "KernelReplay",
    "ReplaySummary",
    "SampleSeries",
    "make_pkp_monitor",
    "replay_series",
    "summarize_replays",
    "sweep_replay_params",
]


def __getattr__(name: str) -> Any:
    """Import a public name on first use and keep it (the next lookup is a plain attribute)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'simsample.sdk' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
