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
from musclewalk.sim.outputs import read_storage

REPO = Path(__file__).resolve().parents[2]


@needs_subject
def test_inverse_dynamics_reproduces_opensims_own_result_for_subject01():
    """subject01_walk_ID.sto is OpenSim's inverse dynamics of this trial (6 Hz filter): the same
    generalized forces to well below a thousandth of their range; the model it was given keeps
    no external loads."""
    model = gait._model(TRIAL[0])
    ik = read_storage(TRIAL[1])
    ours = kinetics.inverse_dynamics(model, TRIAL[1], TRIAL[3], ik["time"].iloc[0], ik["time"].iloc[-1], 6.0)
    theirs = read_storage(SUBJECT / "subject01_walk_ID.sto")
    columns = [c for c in theirs.columns if c != "time"]
    assert len(columns) == 10 and set(columns) <= set(ours.columns)
    for c in columns:
        a = np.interp(theirs["time"], ours["time"], ours[c])
        b = theirs[c].to_numpy(float)
        assert np.max(np.abs(a - b)) < 1e-3 * np.ptp(b), c
    assert model.getForceSet().getSize() == 18  # its 18 muscles, no ExternalForce added


@needs_subject
def test_a_failed_inverse_dynamics_names_its_files_and_leaves_the_kinematics(tmp_path):
    """An ExternalLoads file whose data file is missing: the error names both files and says
    OpenSim's reason; compare still compares the angles and draws a kinetics sheet that says why
    there are no moments."""
    loads = tmp_path / "loads.xml"
    loads.write_text(TRIAL[3].read_text().replace("subject01_walk_grf.mot", "missing_grf.mot"))
    trial = gait.from_opensim_trial(TRIAL[0], TRIAL[1], TRIAL[2], loads)
    error = trial.source["kinetics"]["error"]
    assert str(TRIAL[1]) in error and str(loads) in error and "inverse dynamics failed" in error
    assert trial.kinetics == {} and trial.angles
    out = tmp_path / "cmp"
    r = run_cli("compare", "--trial", TRIAL[0], TRIAL[1], TRIAL[2], loads, "-o", out)
    assert r.returncode == 0, r.stderr
    result = json.loads((out / "comparison.json").read_text())
    assert result["variables"]["r.hip_flexion"]["r"] >= 0.9 and result["kinetic_variables"] == {}
    assert (out / "kinetics.png").stat().st_size > 0


@needs_subject
def test_a_lab_trials_moments_follow_the_normative_curves_in_plug_in_gaits_convention():
    """subject01's hip and ankle moments and ankle power correlate with the normative ones (a
    sign error would make r negative); its knee coordinate is negative in flexion and is read with
    its sign turned; the planar model's hips do not adduct, which is said, not guessed."""
    trial = gait.from_opensim_trial(*TRIAL)
    ref = reference.normative()
    read_as = trial.source["kinetics"]["read_as"]
    assert read_as["r.knee_extension_moment"].startswith("-knee_angle_r ")
    assert read_as["r.hip_extension_moment"].startswith("hip_flexion_r ")
    assert "hip_adduction does not vary" in read_as["r.hip_abduction_moment"]  # a planar model
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
        # in the norm's units and at its time: the plantarflexor moment peaks late in stance (the
        # norm's 1.2 N m/kg at 52 %), the push-off power after it (2.0 W/kg at 58 %)
        m = metrics["ankle_plantarflexion_moment"]
        assert 1.0 < m["peak"] < 2.0 and 40 <= m["peak_percent"] <= 60
        p = metrics["ankle_power"]
        assert 1.0 < p["peak"] < 3.0 and 50 <= p["peak_percent"] <= 62


def _synthetic_trial(angles: dict, time, mass=50.0):
    n = len(time)
    return gait.Trial(
        "synthetic",
        time,
        angles,
        time,
        {"r": np.zeros(n), "l": np.zeros(n)},
        {"r": np.zeros((n, 3)), "l": np.zeros((n, 3))},
        np.zeros((n, 3)),
        mass,
    )


def test_the_coordinate_that_follows_an_angle_carries_its_moment_with_the_conventions_sign():
    """A knee coordinate that grows with flexion (right) or against it (left): the moment toward
    flexion is read with the coordinate's sign, then turned to Plug-in Gait's extensor-positive;
    a coordinate that does not follow the angle reads nothing, one coordinate is read for one
    angle of its joint only, and power is generalized force x coordinate speed summed over the
    joint's coordinates, per kg."""
    time = np.linspace(0.0, 1.0, 201)
    flexion_deg = 30.0 * np.sin(2 * np.pi * time)
    q = np.radians(flexion_deg)
    tau = 10.0 * np.cos(2 * np.pi * time)  # N m toward the coordinate's positive direction
    wobble = np.sin(7.3 * np.arange(201))
    generalized = pd.DataFrame({"time": time} | {f"{n}_moment": tau for n in ("kr", "kl", "wobble", "hip")})
    coordinates = {"time": time, "kr": q, "kl": -q, "wobble": wobble, "hip": q}
    speeds = {"kr": np.full(201, 2.0), "wobble": np.full(201, 3.0), "hip": np.ones(201)}
    angles = {(s, "knee_flexion"): flexion_deg for s in "rl"}
    angles |= {("r", "hip_flexion"): flexion_deg, ("r", "hip_adduction"): 0.5 * flexion_deg}
    angles |= {("l", "hip_flexion"): flexion_deg, ("l", "hip_adduction"): np.zeros(201)}
    trial = _synthetic_trial(angles, time)
    joints = {
        ("r", "knee"): ["kr", "wobble"],
        ("l", "knee"): ["kl"],
        ("r", "hip"): ["hip"],
        ("l", "hip"): ["hip"],
        ("r", "ankle"): ["kr"],
    }
    values, how = kinetics.clinical_kinetics(trial, generalized, coordinates, speeds, joints)
    np.testing.assert_allclose(values[("r", "knee_extension_moment")], -tau / 50.0)
    np.testing.assert_allclose(values[("l", "knee_extension_moment")], tau / 50.0)
    assert how[("r", "knee_extension_moment")].startswith("kr (r 1.000")
    assert how[("l", "knee_extension_moment")].startswith("-kl (r -1.000")
    np.testing.assert_allclose(values[("r", "knee_power")], (tau * 2.0 + tau * 3.0) / 50.0)
    assert how[("r", "knee_power")] == "kr+wobble"
    assert "no rotational coordinate at the ankle" in how[("l", "ankle_power")]
    assert how[("l", "knee_power")] == "no speed of kl" and ("l", "knee_power") not in values
    # the hip's one coordinate follows both its angles: read for the first (flexion) only
    np.testing.assert_allclose(values[("r", "hip_extension_moment")], -tau / 50.0)
    assert ("r", "hip_abduction_moment") not in values
    assert "no coordinate of the hip follows hip_adduction" in how[("r", "hip_abduction_moment")]
    assert "hip_adduction does not vary" in how[("l", "hip_abduction_moment")]
    assert "the trial has no ankle_dorsiflexion" in how[("r", "ankle_plantarflexion_moment")]
    # only a coordinate unrelated to the angle: nothing is read
    values, how = kinetics.clinical_kinetics(
        trial, generalized, coordinates, speeds, {("r", "knee"): ["wobble"]}
    )
    assert ("r", "knee_extension_moment") not in values
    assert "no coordinate of the knee follows knee_flexion" in how[("r", "knee_extension_moment")]


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
    assert result["source"]["kinetics"]["mean_root_residual_moment_Nm_per_kg"] < 0.1
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
