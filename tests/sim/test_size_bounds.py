"""Issue 10 item 6: a long --duration costs nothing before simulating. The steering path is
tabulated lazily (as far as simulated time has got, values identical to the old eager table),
the simulated time and the terrain (one OpenSim contact plane per metre) have documented maxima,
and going past them is one error line before any model is built."""

import math
import time

import numpy as np
import pytest

from musclewalk.cli import main
from musclewalk.sim import runner
from musclewalk.sim.scenario import MAX_DURATION, HeadingPath, Scenario
from musclewalk.sim.terrain import MAX_LENGTH, RampTerrain


def _eager_heading(initial, turn_rate, hold, max_change, seed, duration):
    """The table HeadingPath built up front before it became lazy (verbatim algorithm)."""
    rng = np.random.default_rng(seed)
    times = np.arange(0.0, duration + hold, 0.01)
    heading = np.empty_like(times)
    current, goal, next_change = initial, initial, hold
    for i, t in enumerate(times):
        if t >= next_change:
            goal = current + rng.uniform(-max_change, max_change)
            next_change += hold
        step = turn_rate * 0.01
        current += float(np.clip(goal - current, -step, step))
        heading[i] = current
    return lambda t: float(np.interp(t, times, heading))


@pytest.mark.parametrize("duration", [10.0, 20.0])
@pytest.mark.parametrize("seed, rate_deg, initial_deg", [(0, 10, 0), (1, 30, 20), (7, 12, -45)])
def test_lazy_heading_is_identical_to_the_eager_table(duration, seed, rate_deg, initial_deg):
    kwargs = dict(
        initial=math.radians(initial_deg),
        turn_rate=math.radians(rate_deg),
        hold=3.0,
        max_change=math.radians(60),
        seed=seed,
    )
    old = _eager_heading(duration=duration, **kwargs)
    # every control step of a run, as the controller and the termination rules ask
    steps = np.arange(0, int(round(duration / 0.005)) + 1) * 0.005
    lazy = HeadingPath(duration=duration, **kwargs)
    assert [lazy(t) for t in steps] == [old(t) for t in steps]
    # asked out of order (far ahead first): the same values, not dependent on the build order
    rng = np.random.default_rng(seed)
    probes = np.concatenate([[duration, 0.0], rng.uniform(0, duration, 500), steps[::7]])
    ahead = HeadingPath(duration=duration, **kwargs)
    assert [ahead(t) for t in probes] == [old(t) for t in probes]


def test_heading_for_a_huge_duration_costs_nothing_up_front():
    start = time.process_time()
    path = HeadingPath(turn_rate=math.radians(10), seed=1, duration=1e6)  # was > 60 s, ~1 GB
    path(1.0)
    assert time.process_time() - start < 1.0
    assert path._n < 5000  # tabulated as far as asked (and a chunk ahead)
    assert HeadingPath(initial=0.3)(1e6) == 0.3
    with pytest.raises(ValueError, match="heading"):
        path(math.nan)


def test_scenario_duration_has_a_maximum():
    Scenario(duration=MAX_DURATION).validate()
    with pytest.raises(ValueError, match=f"duration: .*at most {MAX_DURATION:g} s"):
        Scenario(duration=MAX_DURATION * 1.001).validate()


def test_terrain_length_has_a_maximum():
    start = time.process_time()
    with pytest.raises(ValueError, match=r"terrain length: 1952 m .* at most 100 m.*--duration"):
        RampTerrain(5.0, seed=0, length=1.3 * 1000 * 1.5 + 2.0)
    for bad in (0.0, -1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="terrain length"):
            RampTerrain(5.0, length=bad)
    assert time.process_time() - start < 1.0
    assert RampTerrain(5.0, length=MAX_LENGTH).n_segments == int(MAX_LENGTH) + 1


@pytest.fixture
def nothing_built(monkeypatch):
    """Fail the test if anything gets as far as building the OpenSim system."""

    def build(*args, **kwargs):
        raise AssertionError("built a model despite bad input")

    monkeypatch.setattr(runner, "OpenSimEngine", build)


@pytest.mark.parametrize(
    "options, option",
    [
        (["--duration", "1e6", "--turn-rate", "10"], "--duration"),
        (["--duration", "1000", "--terrain-slope", "5"], "--duration"),
        (["--duration", f"{MAX_DURATION * 1.001:g}"], "--duration"),
        # within the duration bound but more terrain than the model can hold: 1.5 x 1.3 x 100 + 2 m
        (["--duration", "100", "--terrain-slope", "5"], "--terrain-slope"),
    ],
)
def test_simulate_refuses_unbounded_work_in_one_line(
    built_models, tmp_path, capfd, nothing_built, options, option
):
    out = tmp_path / "run"
    start = time.monotonic()
    code = main(["simulate", str(built_models["HumanLegs"]), "--speed", "1.3", *options, "--out", str(out)])
    err = capfd.readouterr().err
    assert code == 2, err
    assert time.monotonic() - start < 10
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith(f"musclewalk simulate: error: {option}:"), lines[0]
    assert "--duration" in lines[0]  # the terrain error says what to shorten too
    assert not out.exists() and list(tmp_path.iterdir()) == []
