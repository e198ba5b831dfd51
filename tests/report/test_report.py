"""``simsample report``: contents of the page, its bounds on large plans, and its errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsample.cli import run
from simsample.planfile import Plan
from simsample.report import content
from simsample.workload import from_records
from tests.report_inputs import PROFILE, make_inputs, report_argv

SVG = re.compile(r"<svg\b.*?</svg>", re.S)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return make_inputs(tmp_path_factory.mktemp("report-inputs"))


@pytest.fixture(scope="module")
def page(inputs, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report.html"
    assert run(report_argv(inputs, out)) == 0
    return out.read_text(encoding="utf-8")


def _one_line_error(capsys, *needles):
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    for n in needles:
        assert n in err, err


def test_page_is_self_contained(page):
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page
    # nothing fetched when viewing: no external stylesheet, image, font or link target
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", page)
    assert "@import" not in page and "url(http" not in page
    assert "<style>" in page


def test_stylesheet_is_inlined_verbatim(page):
    """Autoescaping must not touch the CSS (escaped quotes silently drop the font rule)."""
    from importlib import resources

    css = resources.files("simsample.report").joinpath("templates/report.css").read_text(encoding="utf-8")
    assert '"' in css and css in page


def test_page_holds_every_section_and_figure(page, inputs):
    plan = Plan.read(inputs.plan)
    for anchor in ("workload", "plan", "clusters", "distributions", "estimate", "evaluation"):
        assert f'<section id="{anchor}"' in page
    svgs = SVG.findall(page)
    n_dist = min(content.TOP_DISTRIBUTIONS, len(plan.clusters))
    # shares + distributions + estimate intervals + error-vs-speedup + coverage
    assert len(svgs) == 1 + n_dist + 1 + 2
    for svg in svgs:
        assert 'role="img"' in svg and 'aria-label="' in svg
        assert "<path" in svg and "<text" in svg  # drawn, and text kept as text
    ids = re.findall(r'\bid="([^"]+)"', "".join(svgs))
    clip_ids = [i for i in ids if re.fullmatch(r"p[0-9a-f]{10}", i)]
    assert len(clip_ids) == len(set(clip_ids)), "clip-path ids collide between figures"


def test_page_reports_the_json_documents(page, inputs):
    est = json.loads(inputs.estimate.read_text())
    for e in est["estimates"]:
        assert f"{e['estimate']:,.1f}" in page
        assert f"[{e['ci_low']:,.1f}, {e['ci_high']:,.1f}]" in page
    for path in inputs.evaluations:
        doc = json.loads(path.read_text())
        sampler = doc["workloads"][0]["sampler"]
        for point in doc["suite"]:
            label = ", ".join(f"{k}={v}" for k, v in point["params"].items())
            assert f'<td>{sampler}</td><td>{label}</td><td class="num">{point["error_mean_pct"]:.3f}%</td>' in page


def test_page_lists_plan_facts_and_clusters(page, inputs):
    plan = Plan.read(inputs.plan)
    assert plan.workload["fingerprint"] in page
    assert f"{plan.prediction['speedup']:,.2f}×" in page
    assert f"±{100 * plan.prediction['error_bound']:.2f}%" in page
    rows = re.findall(r'<tr><td class="num">(\d+)</td><td class="name"', page)
    assert sorted(int(r) for r in rows) == sorted(c.id for c in plan.clusters)
    biggest = max(plan.clusters, key=lambda c: c.stats["total"])
    assert int(rows[0]) == biggest.id


def test_split_clusters_are_rebuilt_exactly(tmp_path):
    """ROOT splits kernels by value: each drawn population is the cluster itself, not the kernel."""
    from simsample.reading import load_workload

    plan_path = tmp_path / "root.json"
    assert run(["plan", str(PROFILE), "--sampler", "root", "--seed", "3", "-o", str(plan_path)]) == 0
    plan = Plan.read(plan_path)
    assert any(re.search(r" \[[^\]]+\]$", c.key) for c in plan.clusters), "expected split clusters"
    wl = load_workload([PROFILE])
    ranked = content.clusters_section(plan)[3]
    figs, note = content.distributions_section(plan, wl, ranked)
    assert figs and note == ""
    for fig, r in zip(figs, ranked.itertuples()):
        assert f"(cluster, {r.size:,} launches)" in fig.label


def test_plan_alone(tmp_path, inputs):
    out = tmp_path / "r.html"
    assert run(["report", str(inputs.plan), "-o", str(out)]) == 0
    text = out.read_text()
    assert "No estimate given" in text and "No evaluation given" in text and "--profile" in text
    assert len(SVG.findall(text)) == 1  # the cluster shares only


def _synthetic_plan(tmp_path, kernels: int, launches: int) -> tuple:
    rng = np.random.default_rng(5)
    codes = rng.integers(0, kernels, launches)
    wl = from_records(
        {
            "name": [f"k{c:04d}" for c in codes],
            "grid_x": [1] * launches,
            "block_x": [32] * launches,
            "duration_ns": (rng.lognormal(8, 1, launches) * (1 + codes % 7)).round() + 1,
        }
    )
    prof = tmp_path / "w.parquet"
    wl.to_parquet(prof)
    plan = tmp_path / "p.json"
    assert run(["plan", str(prof), "--sampler", "stem", "--param", "eps=0.2", "-o", str(plan)]) == 0
    return prof, plan


def test_many_clusters_are_summarised(tmp_path):
    prof, plan_path = _synthetic_plan(tmp_path, kernels=120, launches=6000)
    plan = Plan.read(plan_path)
    assert len(plan.clusters) > content.TOP_CLUSTERS
    out = tmp_path / "r.html"
    assert run(["report", str(plan_path), "--profile", str(prof), "-o", str(out)]) == 0
    text = out.read_text()
    rows = re.findall(r'<tr><td class="num">(\d+)</td><td class="name"', text)
    assert len(rows) == content.TOP_CLUSTERS
    rest = len(plan.clusters) - content.TOP_CLUSTERS
    m = re.search(r'<tr class="rest">.*?<td>([\d,]+) other clusters</td><td class="num">([\d,]+)</td>', text)
    assert m and int(m.group(1).replace(",", "")) == rest
    shown = sum(int(c.size) for c in plan.clusters if str(c.id) in set(rows))
    assert int(m.group(2).replace(",", "")) == plan.workload["launches"] - shown
    assert len(SVG.findall(text)) == 1 + content.TOP_DISTRIBUTIONS


def test_many_workloads_are_capped(tmp_path, inputs):
    doc = json.loads(inputs.evaluations[0].read_text())
    doc["workloads"] = doc["workloads"] * (content.MAX_WORKLOAD_ROWS // len(doc["workloads"]) + 5)
    big = tmp_path / "big.json"
    big.write_text(json.dumps(doc))
    out = tmp_path / "r.html"
    assert run(["report", str(inputs.plan), "--evaluate", str(big), "-o", str(out)]) == 0
    text = out.read_text()
    assert f"The first {content.MAX_WORKLOAD_ROWS} of {len(doc['workloads']):,} rows" in text


def test_errors_are_one_line_and_leave_nothing(tmp_path, inputs, capsys):
    out = tmp_path / "r.html"
    assert run(["report", str(inputs.plan), "--estimate", str(inputs.plan), "-o", str(out)]) == 1
    _one_line_error(capsys, "estimate", "'plan' and 'estimates'")
    assert run(["report", str(inputs.plan), "--evaluate", str(inputs.estimate), "-o", str(out)]) == 1
    _one_line_error(capsys, "evaluate", "'workloads'")
    (tmp_path / "bad.json").write_text("{ not json")
    assert run(["report", str(inputs.plan), "--estimate", str(tmp_path / "bad.json"), "-o", str(out)]) == 1
    _one_line_error(capsys, "not valid JSON", "line 1")
    assert run(["report", str(tmp_path / "nope.json"), "-o", str(out)]) == 1
    _one_line_error(capsys, "no such file")
    assert run(["report", str(inputs.plan), "-o", str(tmp_path)]) == 1
    _one_line_error(capsys, "is a directory")
    other, _ = _synthetic_plan(tmp_path, kernels=3, launches=50)
    assert run(["report", str(inputs.plan), "--profile", str(other), "-o", str(out)]) == 1
    _one_line_error(capsys, "fingerprint")
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".") or p.suffix == ".tmp"] == []


def test_inputs_are_not_modified(tmp_path, inputs):
    before = {p: p.read_bytes() for p in (inputs.plan, inputs.estimate, *inputs.evaluations)}
    assert run(report_argv(inputs, tmp_path / "r.html")) == 0
    assert {p: p.read_bytes() for p in before} == before


def test_other_commands_do_not_import_matplotlib():
    code = (
        "import sys; from simsample.cli import build_cli; build_cli(); assert 'matplotlib' not in sys.modules, "
        "'imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@settings(max_examples=40, deadline=None)
@given(
    values=st.lists(st.floats(min_value=0, max_value=1e12, allow_nan=False), min_size=1, max_size=300),
    picks=st.lists(st.integers(min_value=0, max_value=299), max_size=50),
    scale=st.sampled_from([1.0, 1e3]),
)
def test_distribution_draws_any_values(values, picks, scale):
    """Constant, zero, single and wide-ranged values all give a labelled figure with the bars."""
    from simsample.report import plots

    v = np.array(values)
    marks = v[[p % len(v) for p in picks]]
    fig = plots.distribution(v, marks, title="t", unit_label="u", scale=scale)
    assert fig.svg.startswith("<svg") and fig.svg.rstrip().endswith("</svg>")
    assert f"{len(v):,} launches" in fig.label and f"{len(marks):,} sampled" in fig.label
    assert fig.svg.count("<path") >= 2


@settings(max_examples=60, deadline=None)
@given(
    doc=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda c: (
            st.lists(c, max_size=3)
            | st.dictionaries(
                st.sampled_from(["plan", "estimates", "workloads", "suite", "metric", "estimate", "sampler", "params"]),
                c,
                max_size=4,
            )
        ),
        max_leaves=12,
    )
)
def test_json_readers_reject_any_wrong_shape_with_a_format_error(tmp_path_factory, doc):
    from simsample.errors import UserError
    from simsample.report.inputs import read_estimate, read_evaluation

    p = tmp_path_factory.mktemp("j") / "x.json"
    p.write_text(json.dumps(doc))
    for reader in (read_estimate, read_evaluation):
        try:
            got = reader(p)
        except UserError:
            continue
        assert isinstance(got, dict)


def test_clusters_not_defined_by_kernel_name_are_labelled_as_kernels(tmp_path):
    """An explicit plan whose one cluster holds a few launches of a kernel: the figure says it
    shows the kernel's launches, and the page says why."""
    n = 90
    wl = from_records(
        {"name": ["a", "b", "c"] * (n // 3), "grid_x": [1] * n, "block_x": [32] * n, "duration_ns": np.arange(n) + 1}
    )
    prof = tmp_path / "w.parquet"
    wl.to_parquet(prof)
    ids = wl.kernels["kernel_id"].to_numpy()
    members = [int(i) for i in ids[0:12:3]]  # four launches of kernel "a" (of 30)
    (tmp_path / "s.json").write_text(
        json.dumps([{"kernel_id": members[0], "weight": 4, "cluster": "x", "members": members}])
    )
    plan = tmp_path / "p.json"
    assert (
        run(["plan", str(prof), "--sampler", "explicit", "--param", f"file={tmp_path / 's.json'}", "-o", str(plan)])
        == 0
    )
    out = tmp_path / "r.html"
    assert run(["report", str(plan), "--profile", str(prof), "-o", str(out)]) == 0
    text = out.read_text()
    assert "(kernel, 30 launches)" in text
    assert "One of these figures shows all launches of the cluster&#39;s kernel" in text
