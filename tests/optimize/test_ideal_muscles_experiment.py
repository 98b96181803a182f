"""The "no biomechanical constraints" ablation as an experiment file
(config/experiments/human-walk-1.3-ideal-muscles.yaml): the Human with ideal muscles optimized with
the summed muscle force as its effort; the metabolic objective is refused for it before anything
is simulated."""

import json
from pathlib import Path

import pytest
import yaml
from lxml import etree

from musclewalk.model.meta import load_meta
from musclewalk.optimize.experiment import Experiment

EXPERIMENTS = Path(__file__).resolve().parents[2] / "config" / "experiments"
EXPERIMENT = EXPERIMENTS / "human-walk-1.3-ideal-muscles.yaml"
pytestmark = pytest.mark.slow


def test_the_experiment_names_the_ideal_human_and_its_objective():
    exp = Experiment.load(EXPERIMENT)
    assert exp.creature == "HumanIdealMuscles" and exp.objective == "geijtenbeek2013-ideal-muscles"
    assert exp.init_from_other_creature and exp.warm_start.is_file()


def test_one_generation_of_two_candidates_runs(tmp_path, optimize_cli):
    """The experiment shrunk to one generation of 2 candidates of 0.2 s."""
    data = yaml.safe_load(EXPERIMENT.read_text())
    data["warm_start"] = str((EXPERIMENTS / data["warm_start"]).resolve())
    data["defaults"].update(duration=0.2, generations=1, popsize=2)
    exp = tmp_path / EXPERIMENT.name
    exp.write_text(yaml.safe_dump(data, sort_keys=False))
    out = tmp_path / "out"
    r = optimize_cli(exp, "--out", out, "--workers", "1", "--quiet")
    assert r.returncode == 0, r.stderr
    log = (out / "log.txt").read_text()
    assert "objective: geijtenbeek2013-ideal-muscles" in log and "muscle_force_per_body_weight" in log
    assert "generations: 1, evaluations: 2, failed evaluations: 0" in log
    best = json.loads((out / "best.json").read_text())
    assert best["creature"] == "HumanIdealMuscles" and best["averages"]["effort"] > 0
    # the muscle properties searched are the F_max the ideal muscles have
    properties = best["parameters"]["model"]["properties"]
    assert len(properties) == 10 and all(n.endswith(".max_isometric_force") for n in properties)
    assert load_meta(out / "model" / "HumanIdealMuscles.meta.json").muscle_model == "ideal"
    optimized = etree.parse(str(out / "optimized.osim"))
    assert len(optimized.xpath("//PathActuator")) == 40
    assert not optimized.xpath("//Millard2012EquilibriumMuscle")


def test_the_metabolic_objective_is_refused_for_ideal_muscles(tmp_path, optimize_cli):
    out = tmp_path / "out"
    r = optimize_cli(
        "HumanIdealMuscles", "--speed", "1.3", "--duration", "0.2", "--generations", "1", "--out", out
    )
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert "models/objectives/geijtenbeek2013.yaml: terms.effort.measure: metabolic_rate_per_kg" in lines[0]
    assert "has ideal muscles" in lines[0] and not out.exists()
