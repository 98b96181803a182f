"""Joint moments and powers by inverse dynamics (analysis.kinetics): OpenSim's own result for its
subject01 reproduced, Plug-in Gait's sign conventions checked against the normative curves on a
lab trial and on a committed walker, and the reading of a joint's coordinates on synthetic data."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_run import run_cli
from subject01 import SUBJECT, TRIAL, needs_subject

from musclewalk.analysis import compare, gait, kinetics, reference
from musclewalk.analysis.reference import KINETICS
from musclewalk.sim.outputs import read_storage

REPO = Path(__file__).resolve().parents[2]


@needs_subject
def test_inverse_dynamics_reproduces_opensims_own_result_for_subject01():
    """subject01_walk_ID.sto is OpenSim's inverse dynamics of this trial (6 Hz filter): the same
    generalized forces to well below a thousandth of their range."""
    model = gait._model(TRIAL[0])
    ours = kinetics.inverse_dynamics(model, TRIAL[1], TRIAL[3], lowpass_hz=6.0)
    theirs = read_storage(SUBJECT / "subject01_walk_ID.sto")
    columns = [c for c in theirs.columns if c != "time"]
    assert len(columns) == 10 and set(columns) <= set(ours.columns)
    for c in columns:
        a = np.interp(theirs["time"], ours["time"], ours[c])
        b = theirs[c].to_numpy(float)
        assert np.max(np.abs(a - b)) < 1e-3 * np.ptp(b), c


@needs_subject
def test_a_lab_trials_moments_follow_the_normative_curves_in_plug_in_gaits_convention():
    """subject01's hip and ankle moments and ankle power correlate with the normative ones (a
    sign error would make r negative); its knee coordinate is negative in flexion and is read with
    its sign turned; the model has no hip adduction coordinate, which is said, not guessed."""
    trial = gait.from_opensim_trial(*TRIAL)
    ref = reference.normative()
    read_as = trial.source["kinetics"]["read_as"]
    assert read_as["r.knee_extension_moment"].startswith("-knee_angle_r ")
    assert read_as["r.hip_extension_moment"].startswith("hip_flexion_r ")
    assert "no coordinate of the hip follows hip_adduction" in read_as["r.hip_abduction_moment"]
    assert ("r", "hip_abduction_moment") not in trial.kinetics
    assert trial.source["kinetics"]["mean_root_residual_force_bw"] < 0.1
    cycles = gait.gait_cycles(trial)
    for side in "rl":
        metrics = {}
        for variable in ("hip_extension_moment", "ankle_plantarflexion_moment", "ankle_power"):
            mean = gait.normalized(trial, cycles, side, variable).mean(axis=0)
            metrics[variable] = compare.kinetic_metrics(mean, *ref.curves[variable])
        assert metrics["hip_extension_moment"]["r"] > 0.85
        assert metrics["ankle_plantarflexion_moment"]["r"] > 0.95
        assert metrics["ankle_power"]["r"] > 0.85
        # the plantarflexor moment peaks positive late in stance, as the norm's 1.2 N m/kg at 50 %
        m = metrics["ankle_plantarflexion_moment"]
        assert 1.0 < m["peak"] < 2.0 and 40 <= m["peak_percent"] <= 60


def _synthetic_trial(angle, time, mass=50.0):
    n = len(time)
    return gait.Trial(
        "synthetic",
        time,
        {("r", "knee_flexion"): angle, ("l", "knee_flexion"): angle},
        time,
        {"r": np.zeros(n), "l": np.zeros(n)},
        {"r": np.zeros((n, 3)), "l": np.zeros((n, 3))},
        np.zeros((n, 3)),
        mass,
    )


def test_the_coordinate_that_follows_an_angle_carries_its_moment_with_the_conventions_sign():
    """A knee coordinate that grows with flexion (right) or against it (left): the moment toward
    flexion is read with the coordinate's sign, then turned to Plug-in Gait's extensor-positive;
    a coordinate that does not follow the angle reads nothing; power is moment x angular velocity
    summed over the joint's coordinates, per kg."""
    time = np.linspace(0.0, 1.0, 201)
    flexion_deg = 30.0 * np.sin(2 * np.pi * time)
    q = np.radians(flexion_deg)
    tau = 10.0 * np.cos(2 * np.pi * time)  # N m toward the coordinate's positive direction
    generalized = pd.DataFrame(
        {"time": time, "kr_moment": tau, "kl_moment": tau, "other_moment": tau, "wobble_moment": tau}
    )
    coordinates = pd.DataFrame(
        {"time": time, "kr": q, "kl": -q, "other": 0.1 * q, "wobble": np.sin(7.3 * np.arange(201))}
    )
    trial = _synthetic_trial(flexion_deg, time)
    joints = {("r", "knee"): ["kr", "wobble"], ("l", "knee"): ["kl"], ("r", "hip"): [], ("l", "hip"): []}
    values, how = kinetics.clinical_kinetics(trial, generalized, coordinates, joints)
    np.testing.assert_allclose(values[("r", "knee_extension_moment")], -tau / 50.0)
    np.testing.assert_allclose(values[("l", "knee_extension_moment")], tau / 50.0)
    assert how[("r", "knee_extension_moment")].startswith("kr (r 1.000")
    assert how[("l", "knee_extension_moment")].startswith("-kl (r -1.000")
    omega = np.gradient(q, time)
    np.testing.assert_allclose(
        values[("r", "knee_power")], (tau * omega + tau * np.gradient(coordinates["wobble"], time)) / 50.0
    )
    assert how[("r", "knee_power")] == "kr+wobble"
    assert "no rotational coordinate at the hip" in how[("r", "hip_power")]
    # only a coordinate unrelated to the angle: nothing is read
    values, how = kinetics.clinical_kinetics(trial, generalized, coordinates, {("r", "knee"): ["wobble"]})
    assert ("r", "knee_extension_moment") not in values
    assert "no coordinate of the knee follows knee_flexion" in how[("r", "knee_extension_moment")]
    assert set(KINETICS) >= {"knee_extension_moment", "knee_power"}


@pytest.mark.parametrize("run", ["HumanLegs-walk-1.3"])
def test_a_committed_walkers_moments_in_compare(tmp_path, run):
    """A committed walker re-simulated 3.5 s and compared after 1 s: inverse dynamics of its own
    kinematics and GRF leaves a root residual of a few per cent of body weight (the data are
    consistent), its moments follow the norm's signs (this walker's ankle pushes in early stance,
    not at 50 %: r 0.47 / 0.53), and compare writes the kinetics sheet and table."""
    folder = REPO / "models" / "optimized" / run
    sim = tmp_path / "sim"
    r = run_cli(
        "simulate", folder / "optimized.osim", "--params", folder / "best.json", "--speed", "1.3",
        "--duration", "3.5", "--out", sim,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    out = tmp_path / "cmp"
    r = run_cli("compare", sim, "--skip", "1.0", "-o", out)
    assert r.returncode == 0, r.stderr
    result = json.loads((out / "comparison.json").read_text())
    assert result["source"]["kinetics"]["mean_root_residual_force_bw"] < 0.05
    for side in "rl":
        variables = result["kinetic_variables"]
        # each sign read right (a wrong one turns r negative): the hip's extensor moment in early
        # stance, its abductor moment through stance, the plantarflexor moment of stance
        assert variables[f"{side}.hip_extension_moment"]["r"] > 0.5
        assert variables[f"{side}.hip_abduction_moment"]["r"] > 0.5
        ankle = variables[f"{side}.ankle_plantarflexion_moment"]
        assert ankle["r"] > 0.3 and 0.5 < ankle["peak"] < 2.0
        assert f"{side}.knee_power" in result["kinetic_curves"]
    assert "| ankle_plantarflexion_moment | r | N m/kg |" in (out / "summary.md").read_text()
    for name in ("kinetics.png", "kinetics.svg"):
        assert (out / name).stat().st_size > 0
