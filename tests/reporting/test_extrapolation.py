"""The power law of `ner-curve` (ner.reporting.extrapolation): it recovers known parameters from
exact points, its bootstrap interval covers the true F1 about as often as it says (the plain law's
only without a floor), and the held-out check reports how far the fit lands from the largest
size."""

import numpy as np
import pytest

from ner.reporting.extrapolation import PowerLaw, extrapolate, fit, holdout

SIZES = np.repeat([250.0, 500.0, 1000.0, 2000.0], 3)  # 4 fractions × 3 seeds


def test_the_fit_recovers_a_known_power_law_from_exact_points() -> None:
    truth = PowerLaw(a=180.0, b=0.35)
    law = fit(SIZES, truth.error(SIZES), "power")
    assert (law.a, law.b, law.c) == pytest.approx((180.0, 0.35, 0.0), rel=1e-9)


def test_the_fit_with_a_floor_recovers_the_floor_too() -> None:
    truth = PowerLaw(a=400.0, b=0.6, c=6.0)
    law = fit(SIZES, truth.error(SIZES), "offset")
    assert law.c == pytest.approx(6.0, abs=0.01)
    assert law.b == pytest.approx(0.6, abs=0.01)
    assert law.f1(8000.0) == pytest.approx(truth.f1(8000.0), abs=0.01)
    # The plain power law cannot bend to the floor: it overshoots far beyond the data.
    assert fit(SIZES, truth.error(SIZES), "power").f1(8000.0) > truth.f1(8000.0) + 0.5


def coverage(truth: PowerLaw, form: str, replicates: int, resamples: int) -> np.ndarray:
    """How often the 95% interval at 2× and 4× the largest size holds the true F1, over noisy
    draws of the runs (seed-to-seed noise of 1 F1 point)."""
    rng = np.random.default_rng(7)
    targets = [4000.0, 8000.0]
    covered = np.zeros(2)
    for _ in range(replicates):
        scores = truth.f1(SIZES) + rng.normal(0.0, 1.0, len(SIZES))
        found = extrapolate(SIZES, scores, targets, form, resamples=resamples, level=0.95)
        low, high = np.array(found.low), np.array(found.high)
        covered += (low <= truth.f1(targets)) & (truth.f1(targets) <= high)
    return covered / replicates


def test_the_interval_covers_the_true_f1_about_as_often_as_it_says() -> None:
    # Nominal 95%; with 12 points the percentile bootstrap is a little narrow (92% measured).
    found = coverage(PowerLaw(a=180.0, b=0.35), "power", replicates=200, resamples=400)
    assert np.all(found >= 0.88) and np.all(found < 1.0), found


@pytest.mark.slow
def test_the_interval_of_the_law_with_a_floor_covers_curves_with_and_without_one() -> None:
    for truth in (PowerLaw(a=400.0, b=0.6, c=6.0), PowerLaw(a=180.0, b=0.35)):
        found = coverage(truth, "offset", replicates=100, resamples=200)
        assert np.all(found >= 0.85) and np.all(found < 1.0), (truth, found)
    # The plain law misses a floor: its interval at 4× the data rarely holds the truth.
    assert coverage(PowerLaw(a=400.0, b=0.6, c=6.0), "power", 100, 200)[1] < 0.5


def test_an_exact_curve_has_a_zero_width_interval_and_a_perfect_holdout() -> None:
    truth = PowerLaw(a=180.0, b=0.35)
    found = extrapolate(SIZES, truth.f1(SIZES), [4000.0], "power", resamples=50)
    assert found.low[0] == pytest.approx(found.high[0]) == pytest.approx(truth.f1(4000.0))
    check = holdout(SIZES, truth.f1(SIZES), "power", resamples=50)
    assert check.size == 2000.0 and check.observed_f1 == pytest.approx(truth.f1(2000.0))
    assert check.error == pytest.approx(0.0, abs=1e-9)


def test_the_holdout_measures_how_far_a_wrong_law_lands() -> None:
    truth = PowerLaw(a=400.0, b=0.6, c=6.0)  # a floor the plain power law cannot see
    check = holdout(SIZES, truth.f1(SIZES), "power", resamples=50)
    assert check.error > 0.3  # optimistic beyond the data
    assert not check.covered
    assert abs(holdout(SIZES, truth.f1(SIZES), "offset", resamples=50).error) < 0.05


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown form 'cubic'"):
        fit(SIZES, np.ones(len(SIZES)), "cubic")
    with pytest.raises(ValueError, match="two sizes"):
        fit([100.0, 100.0], [20.0, 21.0], "power")
    with pytest.raises(ValueError, match="level"):
        extrapolate(SIZES, np.ones(len(SIZES)), [10.0], level=95)
