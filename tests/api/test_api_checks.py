"""The Python API checks what the command line checks: a wrong argument is one line, raised as a
simsample error that is also the standard exception a pandas or scikit-learn user catches;
objects print as one line; ``help()`` on every public function shows its own parameters."""

from __future__ import annotations

import inspect
import pydoc

import pandas as pd
import pytest

import simsample
from simsample.errors import (
    UserError,
    UserFileNotFoundError,
    UserTypeError,
    UserValueError,
)
from tests.helpers import ROOT

PROFILE = ROOT / "examples" / "profile" / "train_step.pt.trace.json.gz"


@pytest.fixture(scope="module")
def wl():
    return simsample.read(PROFILE)


@pytest.fixture(scope="module")
def plan(wl):
    return simsample.plan(wl, "random", rate=0.05, seed=1)


def _one_line(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert "\n" not in text and text
    assert isinstance(exc.value, UserError)
    return text


def test_plan_arguments(wl, tmp_path):
    with pytest.raises(ValueError) as e:
        simsample.plan(wl, eps=5)  # 5 meant 5%: a fraction is asked
    assert "eps" in _one_line(e) and "0.05 is 5%" in str(e.value)
    with pytest.raises(TypeError) as e:
        simsample.plan(wl, "random", seed=1.5)  # never truncated to 1
    assert "seed" in _one_line(e)
    for bad in ("3", True):
        with pytest.raises(UserTypeError, match="seed"):
            simsample.plan(wl, "random", seed=bad)
    with pytest.raises(UserValueError, match="seed -1"):
        simsample.plan(wl, "random", seed=-1)
    with pytest.raises(FileNotFoundError) as e:
        simsample.plan("trace.json.gz")
    assert isinstance(e.value, UserFileNotFoundError) and _one_line(e) == "trace.json.gz: no such file or directory"
    with pytest.raises(TypeError) as e:
        simsample.plan(wl.to_dataframe())
    assert "simsample.read" in _one_line(e)
    with pytest.raises(UserTypeError, match="sampler"):
        simsample.plan(wl, 3)
    # a path is read as the command line reads it, and gives the same plan as the workload
    assert simsample.plan(PROFILE, "random", seed=2).to_json() == simsample.plan(wl, "random", seed=2).to_json()


def test_the_command_line_refuses_what_the_api_refuses(tmp_path, capsys):
    from simsample.cli import run

    assert run(["plan", str(PROFILE), "--param", "eps=5", "-o", str(tmp_path / "p.json")]) == 1
    err = capsys.readouterr().err.strip()
    with pytest.raises(UserValueError) as e:
        simsample.plan(simsample.read(PROFILE), eps=5)
    assert err == f"error: {e.value}"


def test_evaluate_refuses_more_repeats_than_its_limit_cli_and_api_alike(wl, capsys):
    """``--repeat 10**23`` (a typo, or an exponent meant for another option) once ran until killed:
    the repeats are capped, the API and the command line refuse in the same line, before any plan."""
    from simsample.arguments import MAX_REPEATS
    from simsample.cli import run

    with pytest.raises(ValueError) as e:
        simsample.evaluate(wl, "random", repeats=10**23)
    text = _one_line(e)
    assert f"{MAX_REPEATS:,}" in text and "fewer repeats" in text
    capsys.readouterr()
    assert run(["evaluate", str(PROFILE), "--sampler", "random", "--repeat", str(10**23)]) == 1
    assert capsys.readouterr().err.strip() == f"error: {text}"
    assert (ROOT / "docs" / "limits.md").read_text().count(f"{MAX_REPEATS:,}") >= 1  # documented


def test_evaluate_arguments(wl):
    with pytest.raises(TypeError) as e:
        simsample.evaluate(wl, "random", repeats="5")
    assert "repeats" in _one_line(e)
    with pytest.raises(ValueError, match="repeats 0"):
        simsample.evaluate(wl, "random", repeats=0)
    with pytest.raises(TypeError) as e:
        simsample.evaluate(wl, "random", repeats=2, sweep="count=2")
    assert "sweep" in _one_line(e)
    with pytest.raises(TypeError, match="sweep count"):
        simsample.evaluate(wl, "random", repeats=2, sweep={"count": 2})
    with pytest.raises(TypeError) as e:
        simsample.evaluate(wl, "random", repeats=2, truth=[1, 2])
    assert "truth" in _one_line(e)
    with pytest.raises(ValueError) as e:
        simsample.evaluate(
            wl, "margin", repeats=2, confidence="high"
        )  # names the parameter, not '<' between str and int
    assert "confidence" in _one_line(e)
    with pytest.raises(TypeError, match="workloads"):
        simsample.evaluate([wl, 3], "random", repeats=2)
    with pytest.raises(FileNotFoundError) as e:
        simsample.evaluate("no-such-profile.json", "random", repeats=2)
    assert _one_line(e) == "no-such-profile.json: no such file or directory"


def test_estimate_arguments(plan):
    ids = plan.sampled_ids
    for bad in (None, [1, 2], {"kernel_id": 1}):
        with pytest.raises(TypeError) as e:
            simsample.estimate(plan, bad)
        assert "results" in _one_line(e)
    with pytest.raises(ValueError, match="no rows") as e:
        simsample.estimate(plan, pd.DataFrame({"kernel_id": [], "cycles": []}))
    _one_line(e)
    with pytest.raises(ValueError, match="no metric to estimate"):
        simsample.estimate(plan, pd.DataFrame({"kernel_id": ids, "uid": range(len(ids))}))  # only ids
    with pytest.raises(ValueError, match=r"column cycles is not numeric \('lots'\)"):
        simsample.estimate(plan, pd.DataFrame({"kernel_id": ids, "cycles": ["lots"] * len(ids)}))
    ok = pd.DataFrame({"kernel_id": ids, "cycles": 1.0})
    with pytest.raises(TypeError) as e:
        simsample.estimate(plan, ok, confidence="high")
    assert "confidence" in _one_line(e)
    with pytest.raises(ValueError, match="between 0 and 1"):
        simsample.estimate(plan, ok, confidence=95)
    with pytest.raises(TypeError, match="plan"):
        simsample.estimate(ok, ok)
    assert simsample.estimate(plan, ok).estimates[0].metric == "cycles"


def test_the_cli_refuses_an_empty_table_as_the_api_does(plan, tmp_path, capsys):
    from simsample.cli import run

    plan.write(tmp_path / "p.json")
    (tmp_path / "v.csv").write_text("kernel_id,cycles\n")
    assert run(["estimate", "--plan", str(tmp_path / "p.json"), str(tmp_path / "v.csv")]) == 1
    assert "no rows" in capsys.readouterr().err


def test_apply_and_collect_arguments(plan, tmp_path):
    with pytest.raises(TypeError) as e:
        simsample.apply(plan, ROOT / "examples" / "traces", tmp_path / "o", sim="accelsim", fast=True)
    assert "fast" in _one_line(e) and "known:" in str(e.value)
    with pytest.raises(ValueError) as e:
        simsample.apply(plan, ROOT / "examples" / "traces", tmp_path / "o", sim="accelsim", warmup_mode="quick")
    assert "warmup_mode" in _one_line(e)
    with pytest.raises(TypeError, match="plan: expected a Plan"):
        simsample.apply(42, ROOT / "examples" / "traces", tmp_path / "o", sim="accelsim")
    # a Plan object is applied as its file would be (not taken for a file name)
    with pytest.raises(ValueError, match="plan was made for workload"):
        simsample.apply(plan, ROOT / "examples" / "traces", tmp_path / "o", sim="accelsim")
    assert not (tmp_path / "o").exists()
    with pytest.raises(TypeError, match="no parameter fast"):
        simsample.collect(tmp_path / "x.out", sim="accelsim", fast=True)
    with pytest.raises(TypeError, match="sim"):
        simsample.collect(tmp_path / "x.out", sim=None)
    with pytest.raises(TypeError, match="outputs"):
        simsample.collect([], sim="accelsim")


def test_find_workloads_takes_one_path_or_several():
    one = simsample.find_workloads(ROOT / "examples" / "traces")[0]
    assert one == simsample.find_workloads([ROOT / "examples" / "traces"])[0] == [ROOT / "examples" / "traces"]
    with pytest.raises(TypeError, match="paths"):
        simsample.find_workloads([None])


def test_read_and_workload_arguments():
    with pytest.raises(TypeError, match="path"):
        simsample.read(None)
    with pytest.raises(TypeError, match="rank"):
        simsample.read(PROFILE, rank="0")
    with pytest.raises(TypeError) as e:
        simsample.Workload(None)
    assert "DataFrame" in _one_line(e)


def test_reprs_are_one_short_line(wl, plan):
    ids = plan.sampled_ids
    est = simsample.estimate(plan, pd.DataFrame({"kernel_id": ids, "cycles": 1.0}))
    ev = simsample.evaluate(wl, "random", repeats=2)
    for obj, start in (
        (wl, "<Workload kineto: 5,320 launches"),
        (plan, "<Plan random: "),
        (est, "<Estimate of 1 metric(s) (cycles)"),
        (ev, "<Evaluation of random: 1 workload(s)"),
    ):
        text = repr(obj)
        assert text.startswith(start) and "\n" not in text and len(text) < 200, text


@pytest.mark.parametrize(
    "name",
    [n for n in simsample._LIBRARY if callable(getattr(simsample, n)) and inspect.isfunction(getattr(simsample, n))],
)
def test_help_shows_each_public_function_with_its_parameters(name):
    f = getattr(simsample, name)
    text = pydoc.render_doc(f, renderer=pydoc.plaintext)
    params = [p for p in inspect.signature(f).parameters if p not in ("args", "kwargs")]
    assert f.__doc__ and f.__doc__.strip().splitlines()[0] in text
    for p in params:
        assert p in text, f"help({name}) does not show {p}"


def test_simsample_plan_is_the_function_not_a_module():
    import types

    assert isinstance(simsample.plan, types.FunctionType)
    assert "workload" in pydoc.render_doc(simsample.plan, renderer=pydoc.plaintext)


def test_evaluate_reads_a_csv_profile_with_columns(tmp_path, capsys):
    """``evaluate --format csv --columns`` hands the columns on (it used to say that --format csv needs --columns)."""
    import json

    from simsample.cli import run

    path = tmp_path / "kernels.csv"
    pd.DataFrame([{"Name": f"k{i % 4}", "Duration": 1000 + 37 * i} for i in range(60)]).to_csv(path, index=False)
    args = [
        "evaluate",
        str(path),
        "--format",
        "csv",
        "--columns",
        "name=Name,duration_ns=Duration",
        "--sampler",
        "random",
        "--repeat",
        "3",
    ]
    assert run([*args, "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    api = simsample.evaluate(
        path, "random", repeats=3, format="csv", columns={"name": "Name", "duration_ns": "Duration"}
    )
    assert cli == json.loads(json.dumps(api.to_json()))
    assert cli["workloads"][0]["launches"] == 60
    assert (
        simsample.evaluate(path, "random", repeats=3, format="csv", columns="name=Name,duration_ns=Duration").to_json()
        == api.to_json()
    )
    with pytest.raises(UserError, match="--columns"):
        simsample.evaluate(path, "random", repeats=3, format="csv")


from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from simsample.plugin_base import Param  # noqa: E402


@given(st.integers(-(2**62), 2**62))
def test_an_int_parameter_reads_what_it_is_given_exactly(n):
    p = Param("n", int, 0)
    assert p.convert(n) == n and p.convert(str(n)) == n
    assert p.convert(float(n)) == int(float(n))  # a whole float is a whole number


@given(st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: not float(x).is_integer()))
def test_an_int_parameter_never_truncates(x):
    with pytest.raises(UserValueError, match="parameter n"):
        Param("n", int, 0).convert(x)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_float_parameter_round_trips_its_text(x):
    assert Param("x", float, 0.0).convert(repr(x)) == x


@given(st.text(max_size=12))
def test_a_float_parameter_refuses_words_naming_itself(text):
    try:
        v = float(text)
    except ValueError:
        with pytest.raises(UserValueError, match="parameter eps"):
            Param("eps", float, 0.05).convert(text)
    else:
        if v == v and abs(v) != float("inf"):
            assert Param("eps", float, 0.05).convert(text) == v
