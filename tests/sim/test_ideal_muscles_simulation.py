"""Simulating a model with ideal muscles (models/physics.yaml `muscles: ideal`, Geijtenbeek et al.
2013 §7.5.3): the force each muscle applies, and the controller senses, is u F_max of the
excitation applied over the control interval; no activation or fibre state; `simulate` and
`analyze` run on it (no metabolic outputs)."""

import json

import numpy as np
import pandas as pd
import pytest

from musclewalk.cli import main
from musclewalk.model.osim import INITIAL_EXCITATION
from musclewalk.sim.runner import Simulator
from musclewalk.sim.scenario import Scenario

pytestmark = pytest.mark.slow


def test_the_sensed_muscle_force_is_u_times_max_force(ideal_human_osim):
    sim = Simulator(ideal_human_osim)
    fmax = np.array([m.max_isometric_force for m in sim.meta.muscles])
    assert not sim.control_model.delay_steps.any()
    seen = []

    def opensim_actuation(sensors, u, engine, raw):
        # OpenSim's own actuation of each PathActuator in the state the controller read
        engine.model.realizeDynamics(engine.state)
        seen.append((sensors.muscle_force.copy(), [a.getActuation(engine.state) for a in engine.muscles]))

    # the default controller's Human falls within 0.3 s: without the termination rules it runs on
    result = sim.run(
        Scenario(speed=1.3, duration=0.3, terminate=False), record=True, observers=[opensim_actuation]
    )
    assert result.simulated_time == pytest.approx(0.3) and result.reason is None
    rec = result.recording
    force, excitation = np.array(rec.muscle_force), np.array(rec.excitation)
    assert len(force) == 61
    # at t_k the muscles apply the excitation set at t_(k-1), held over the interval
    np.testing.assert_allclose(force[1:], excitation[:-1] * fmax, rtol=1e-12, atol=0)
    np.testing.assert_allclose(force[0], INITIAL_EXCITATION * fmax, rtol=1e-12)
    assert excitation.max() > 0.1 and excitation.min() >= 0.0
    sensed = np.array([s for s, _ in seen])
    np.testing.assert_allclose(sensed, force, rtol=0, atol=0)
    np.testing.assert_allclose(np.array([a for _, a in seen]), force, rtol=1e-12, atol=1e-9)
    # muscle states: activation is the excitation applied, there is no fibre
    states = np.array(rec.muscle_state)  # (steps, 5, nm)
    np.testing.assert_allclose(states[1:, 0], excitation[:-1], rtol=1e-12)
    assert np.isnan(states[:, 1:3]).all()
    np.testing.assert_allclose(states[:, 3], force, rtol=1e-12)
    names = sim.engine.state_names()
    assert len(names) == 78 and not [n for n in names if "activation" in n or "fiber" in n]


def test_a_second_run_starts_like_the_first(ideal_human_osim):
    """The force sensed at t = 0 is the initial excitation's, not what a previous run left."""
    sim = Simulator(ideal_human_osim)
    runs = [sim.run(Scenario(speed=1.3, duration=0.05), record=True).recording for _ in range(2)]
    np.testing.assert_array_equal(np.array(runs[0].muscle_force), np.array(runs[1].muscle_force))
    np.testing.assert_array_equal(np.array(runs[0].states), np.array(runs[1].states))


def test_simulate_and_analyze_run_on_ideal_muscles(ideal_human_osim, tmp_path, capsys):
    run = tmp_path / "run"
    assert (
        main(["simulate", str(ideal_human_osim), "--speed", "1.3", "--duration", "0.2", "--out", str(run)])
        == 0
    )
    muscles = pd.read_csv(run / "muscles.csv")
    assert muscles["vasti_r.norm_fiber_length"].isna().all()
    np.testing.assert_allclose(muscles["vasti_r.fiber_force"], muscles["vasti_r.force"])
    capsys.readouterr()
    assert main(["analyze", str(run), "-o", str(tmp_path / "a.json")]) == 0
    assert "no metabolic model" in capsys.readouterr().out
    summary = json.loads((tmp_path / "a.json").read_text())
    assert summary["metabolic_energy_J"] is None and summary["metabolic_by_muscle"] is None
    assert summary["cost_of_transport_J_per_kg_m"] is None
    assert summary["metabolic_model"].startswith("none: the model has ideal muscles")
    # sum_M F_M / (M g) averaged over the run: every sample but the last stands for 5 ms
    forces = muscles[[c for c in muscles if c.endswith(".force")]].to_numpy().sum(axis=1)
    weight = summary["body_mass_kg"] * 9.80665
    simulated = json.loads((run / "summary.json").read_text())["simulated_time"]
    expected = forces[:-1].sum() * 0.005 / weight / simulated if len(forces) > 1 else forces[0] / weight
    assert summary["mean_muscle_force_per_body_weight"] == pytest.approx(expected, rel=1e-5)
