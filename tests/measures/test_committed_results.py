"""The committed walkers re-simulate to the objective their optimization recorded: a refactor of
the measures, the objective or the simulation loop that changes a committed result fails here. A
controller optimized under random perturbations is re-simulated under those of its best's
generation (best.json's task and perturbation_seed, as `musclewalk simulate --as-scored` reads
them)."""

import json
from pathlib import Path

import pytest

from musclewalk.measures.objective import Objective, scored_run
from musclewalk.optimize.task import scored_conditions
from musclewalk.sim.runner import Simulator
from musclewalk.sim.scenario import Scenario

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "run",
    [
        "HumanLegs-walk-1.3",
        "Human-walk-1.3",
        "Human-walk-1.3-human",
        "HumanLegs-walk-1.3-human",
        "Human-walk-2.0",
        "Human-push-2.0",
        "Human-slope-2.0",
        "Human-steer-2.0",
        "Ostrich-walk-1.2",
        "LongLegs-walk-2.0",
    ],
)
def test_committed_best_re_simulates_to_its_recorded_objective(run):
    folder = REPO / "models" / "optimized" / run
    best = json.loads((folder / "best.json").read_text())
    params = best["parameters"]
    # the task as the run stored it, whatever its file says today (`simulate --as-scored`)
    scored = scored_conditions(folder / "best.json")
    scenario, terrain = scored.task.scenario(scored.speed, scored.duration, scored.perturbation_seed)
    if best.get("perturbation_seed") is None:
        assert scenario == Scenario(speed=best["speed"], duration=best["duration"]) and terrain is None
    else:
        assert scored.task.randomized
        assert scenario.pushes or terrain is not None or callable(scenario.heading)
    sim = Simulator(folder / "optimized.osim", terrain=terrain)
    objective = Objective.load(best.get("objective_name", "geijtenbeek2013"))
    run = scored_run(sim, scenario, {**params["controller"], **params["initial_state"]}, objective)
    result, averages, terms, score = run.result, run.averages, run.terms, run.score
    assert result.simulated_time == pytest.approx(best["simulated_time"])
    assert result.terminated == best["terminated"]
    assert terms == pytest.approx(best["terms"], rel=1e-9, abs=1e-12)
    assert averages == pytest.approx(best["averages"], rel=1e-9, abs=1e-12)
    assert score == pytest.approx(best["objective"], rel=1e-9)
