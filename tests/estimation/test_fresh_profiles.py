"""The intervals on real profiles that nothing was chosen on: nine PyTorch workloads recorded on
an H200 after the defaults were fixed (``tests/fixtures/kineto_h200``). Each profile is its own
truth, as ``simsample evaluate`` scores it; the calibration page reports seeds 0–119 of every
sampler (docs/results/calibration.md, "Profiles recorded after the defaults"). Six more workloads
(``tests/fixtures/kineto_h200_second``) were written and recorded after every change to the
intervals since, and checked once, nothing tuned on them afterwards."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import simsample

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PROFILES = sorted((FIXTURES / "kineto_h200").glob("*.pt.trace.json.gz"))
SECOND = sorted((FIXTURES / "kineto_h200_second").glob("*.pt.trace.json.gz"))


@pytest.mark.parametrize(("sampler", "nominal"), [("margin", 0.99), ("root", 0.95), ("stem", 0.95)])
def test_intervals_cover_and_are_sharp_on_profiles_nothing_was_chosen_on(sampler, nominal):
    """Seeds 0–19 on all nine: the intervals hold the profile's own total at least as often as
    their confidence less 0.04 over the 180 plans (margin 175, root 170, stem 176 measured), and
    are at most five times the mean error (or ±0.5%) on eight of nine profiles and six times on
    all (measured: margin's lstm-train at 5.1, 4.5 over seeds 20–119; root and stem on all)."""
    assert len(PROFILES) == 9
    df = simsample.evaluate(PROFILES, sampler, repeats=20).to_dataframe()
    assert len(df) == 9 and (df["refused"] == 0).all()
    assert float(np.mean(df["coverage"])) >= nominal - 0.04
    ratio = df["half_width_median_pct"] / df["error_mean_pct"]
    sharp = (ratio <= 5) | (df["half_width_median_pct"] <= 0.5)
    assert int(sharp.sum()) >= 8, df.loc[~sharp, ["name", "error_mean_pct", "half_width_median_pct"]]
    assert ((ratio <= 6) | (df["half_width_median_pct"] <= 0.5)).all()


def test_the_default_is_within_a_third_of_a_percent_at_ten_times_fewer_launches():
    """Margin's mean error over the nine profiles and seeds 0–19 was 0.226% at a harmonic-mean
    speedup of 10.9×, on profiles recorded after its defaults were chosen."""
    df = simsample.evaluate(PROFILES, "margin", repeats=20).to_dataframe()
    assert float(df["error_mean_pct"].mean()) <= 0.3
    assert len(df) / float(np.sum(1.0 / df["speedup_hmean"])) >= 10.0


def test_the_default_on_the_second_set_covers_every_profile_sharply():
    """The six later workloads (a UNet's denoising, mixture-of-experts training, conjugate
    gradients, 3-D convolutions, an MLP at random batch sizes, Jacobi sweeps), seeds 0–19:
    margin's 99% intervals held the truth in 19 or 20 of 20 plans on each (moe-train 19) and were
    at most 4.4 times the mean error on each, at a mean error of 0.26% and a harmonic-mean
    speedup of 9.9×."""
    assert len(SECOND) == 6
    df = simsample.evaluate(SECOND, "margin", repeats=20).to_dataframe()
    assert len(df) == 6 and (df["refused"] == 0).all()
    assert (df["coverage"] >= 0.95).all(), df[["name", "coverage"]]
    ratio = df["half_width_median_pct"] / df["error_mean_pct"]
    assert ((ratio <= 5) | (df["half_width_median_pct"] <= 0.5)).all(), df[["name", "half_width_median_pct"]]
    assert float(df["error_mean_pct"].mean()) <= 0.3
    assert len(df) / float(np.sum(1.0 / df["speedup_hmean"])) >= 9.0


@pytest.mark.parametrize("sampler", ["root", "stem", "allegro", "random"])
def test_the_95_percent_samplers_on_the_second_set(sampler):
    """Seeds 0–19, the 120 plans of each sampler pooled: at least 0.91 cover (measured: root 0.94,
    stem 0.97, allegro 0.97, random 0.94; single profiles at 0.85–0.90 are what calibrated 95%
    intervals show at 20 seeds, and each was at 0.91 or more over seeds 20–119)."""
    df = simsample.evaluate(SECOND, sampler, repeats=20).to_dataframe()
    assert len(df) == 6 and (df["refused"] == 0).all()
    assert float(np.mean(df["coverage"])) >= 0.91
