"""Shared fixtures (the development data beside the project, a fresh plugin host), the tests
marked slow, and the summary line that says what did not run and what would run it."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from tests.helpers import SHARED_DATA

#: Tests that take tens of seconds each on 2 cores (measured with ``--durations``), marked
#: ``slow``: ``make test`` leaves them out and stays within about 10 minutes; ``.ci/run`` runs
#: them in a second pass (``pytest -m slow``), so CI still covers them. A pattern is matched
#: against the test's node id (``tests/<area>/test_x.py::test_name[params]``).
SLOW_TESTS = (
    # GCL-Sampler: trains the RGCN encoder (about 80 s each)
    "tests/samplers/test_gcl_model.py::test_plan_on_hetero_traces_is_applied",
    "tests/samplers/test_gcl_model.py::test_short_training_is_deterministic_per_seed",
    "tests/samplers/test_gcl_model.py::test_without_the_extra_gcl_is_listed_with_a_note_and_refuses_to_plan",
    # every real Kineto trace of ../shared/data read by the compiled and the Python paths (5-25 s each)
    "tests/readers/test_kineto_native.py::test_real_traces_equal_the_python_paths",
    "tests/readers/test_kineto_native.py::test_extractor_refuses_what_the_python_paths_reject",
    "tests/readers/test_readers_kineto.py::test_bulk_scan_equals_json_module",
    # property tests with many large examples (20-25 s)
    "tests/readers/test_csv_native.py::test_numbers_are_correctly_rounded",
    "tests/report/test_report.py::test_distribution_draws_any_values",
    # derives the features of a real trace folder (20 s)
    "adapters/accelsim/tests/test_pkp_replay.py::test_totals_command_writes_the_simulators_insn_file",
)

#: What a skipped test needed, from its reason: (pattern, what it is, what brings it).
NEEDS = (
    (r"chromium|chromedriver|selenium", "browser", "install the Debian packages chromium and chromium-driver"),
    (r"SLURM|slurm|munge", "SLURM", "install the Debian packages slurm-wlm and munge"),
    (r"torch|gcl extra", "GCL-Sampler", "pip install -e '.[gcl]' (make test does)"),
    (r"dask", "Dask", "pip install -e '.[cluster]' (make test does)"),
    (r"simsample_(accelsim|macsim|hyfiss)", "simulator adapter", "pip install -e adapters/<name> (make setup does)"),
    (r"shared/data|development data", "development data", "the folder ../shared/data beside the repository"),
    (
        r"SIMSAMPLE_REQUIRE_NATIVE",
        "compiled-module",
        "SIMSAMPLE_REQUIRE_NATIVE=1 (as .ci/run sets) to require the compiled modules",
    ),
    (
        r"C\+\+ extension|compiled .* unavailable|no C\+\+ compiler",
        "compiled-module",
        "a C++ compiler, then pip install -e . again",
    ),
    (r"SIMSAMPLE_ACCELSIM_SRC", "Accel-Sim source", "SIMSAMPLE_ACCELSIM_SRC=<an accel-sim-framework checkout>"),
    (r"mkdocs", "docs", "pip install -e '.[docs]' (make test does)"),
    (r"lint-imports|importlinter", "import-contract", "pip install -e '.[test]'"),
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests of :data:`SLOW_TESTS` slow (before ``-m 'not slow'`` deselects them)."""
    for item in items:
        base = item.nodeid.split("[", 1)[0]
        if base in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)


_DESELECTED_SLOW: list[str] = []


def pytest_deselected(items: list[pytest.Item]) -> None:
    """Remember the slow tests ``-m 'not slow'`` leaves out (not those ``-k`` leaves out)."""
    _DESELECTED_SLOW.extend(item.nodeid for item in items if item.get_closest_marker("slow") is not None)


def _reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def skipped_summary(reasons: list[str]) -> list[str]:
    """One line per kind of thing the skipped tests needed, with how to get it."""
    kinds: Counter[tuple[str, str]] = Counter()
    other: Counter[str] = Counter()
    for reason in reasons:
        for pattern, kind, how in NEEDS:
            if re.search(pattern, reason):
                kinds[(kind, how)] += 1
                break
        else:
            other[reason] += 1
    lines = [f"skipped {n} {kind} test{'s' if n > 1 else ''}: {how}" for (kind, how), n in kinds.most_common()]
    lines += [f"skipped {n} test{'s' if n > 1 else ''}: {reason}" for reason, n in other.most_common()]
    return lines


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    """What did not run and why, in a few lines: skipped tests by what they need (a system package,
    an extra, the development data), deselected slow tests, and doc blocks not run."""
    lines = skipped_summary([_reason(r) for r in terminalreporter.stats.get("skipped", [])])
    if _DESELECTED_SLOW:
        lines.append(
            f"deselected {len(_DESELECTED_SLOW)} slow tests: 'pytest -m slow' runs them (make test-slow; .ci/run does)"
        )
    try:
        from tests.project.test_doc_blocks import SKIPPED_BLOCKS
    except ImportError:  # the doc tests were not collected
        SKIPPED_BLOCKS = []
    if SKIPPED_BLOCKS:
        pages = Counter(page for page, _, _ in SKIPPED_BLOCKS)
        lines.append(
            f"doc blocks not run: {len(SKIPPED_BLOCKS)}, each marked '<!-- doc-test: skip REASON -->' "
            f"(a simulator, a GPU tracer, a cluster, an installation) in {len(pages)} pages"
        )
    if lines:
        terminalreporter.section("what did not run", sep="-")
        for line in lines:
            terminalreporter.write_line(line)


@pytest.fixture(autouse=True, scope="session")
def _private_user_cache(tmp_path_factory):
    """The user cache (GCL graphs, Accel-Sim footprints) in a folder of the test session, not the
    home folder's; a test that sets ``SIMSAMPLE_CACHE`` itself still wins."""
    import os

    if "SIMSAMPLE_CACHE" in os.environ:
        yield
        return
    os.environ["SIMSAMPLE_CACHE"] = str(tmp_path_factory.mktemp("user-cache"))
    yield
    os.environ.pop("SIMSAMPLE_CACHE", None)


@pytest.fixture
def shared_data() -> Path:
    """The ../shared/data folder (tests skip when it is absent)."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not available")
    return SHARED_DATA


@pytest.fixture
def fresh_host():
    """A plugin host of its own for the test, installed as the process-wide host."""
    from simsample.manager import PluginHost, set_host

    host = PluginHost()
    set_host(host)
    yield host
    set_host(None)
