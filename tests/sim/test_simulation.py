"""Short real OpenSim simulations: outputs, moment arms, ground reaction forces."""

import json

import numpy as np
import pandas as pd
import pytest

from musclewalk.cli import main
from musclewalk.opensim_env import import_opensim
from musclewalk.sim.runner import Simulator
from musclewalk.sim.scenario import Push, Scenario


@pytest.fixture(scope="module")
def humanlegs(built_models):
    return Simulator(built_models["HumanLegs"])


@pytest.mark.parametrize("name", ["HumanLegs", "Human"])
def test_simulate_writes_outputs_that_opensim_reads(built_models, tmp_path, capsys, name):
    osim = import_opensim()
    out = tmp_path / "run"
    code = main(
        [
            "simulate",
            str(built_models[name]),
            "--speed",
            "1.3",
            "--duration",
            "0.3",
            "--out",
            str(out),
            "--push",
            "0.1,50,0",
        ]
    )
    assert code == 0, capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["simulated_time"] == pytest.approx(0.3) or summary["terminated"]
    assert summary["creature"] == name
    for f in ("states.sto", "kinematics.mot", "grf.mot"):
        table = osim.TimeSeriesTable(str(out / f))
        assert table.getNumRows() >= 2
        storage = osim.Storage(str(out / f))
        assert storage.getSize() == table.getNumRows()
    model = osim.Model(str(built_models[name]))
    model.initSystem()
    states = osim.TimeSeriesTable(str(out / "states.sto"))
    labels = set(states.getColumnLabels())
    assert "/jointset/hip_r/hip_flexion_r/value" in labels
    assert "/forceset/soleus_r/activation" in labels
    # the GUI / tools can turn the states table into a StatesTrajectory of this model
    traj = osim.StatesTrajectory.createFromStatesTable(model, states, True)
    assert traj.getSize() == states.getNumRows()
    kin = osim.Storage(str(out / "kinematics.mot"))
    assert kin.isInDegrees()
    loads = osim.ExternalLoads(str(out / "grf_loads.xml"), True)
    assert loads.getSize() == 2
    muscles = pd.read_csv(out / "muscles.csv")
    assert {"soleus_r.excitation", "soleus_r.activation", "soleus_r.force"} <= set(muscles.columns)
    assert muscles.filter(like=".excitation").to_numpy().min() >= 0
    assert muscles.filter(like=".excitation").to_numpy().max() <= 1
    controller = pd.read_csv(out / "controller.csv")
    assert set(controller["state_l"]) <= {"stance", "lift_off", "swing", "stance_preparation"}
    assert controller["state_r"].iloc[0] == "stance"


def test_moment_arm_vectors_match_opensim(humanlegs):
    """Eq. 9 vectors from the path geometry, projected on the coordinate axis, equal OpenSim's
    own moment arms in a non-trivial pose."""
    import_opensim()
    sim = humanlegs
    eng = sim.engine
    s = eng.initial_state(
        {
            "hip_flexion_r": 0.4,
            "hip_adduction_r": -0.1,
            "knee_angle_r": 0.7,
            "ankle_angle_r": -0.2,
            "root_pitch": 0.1,
        },
        {},
    )
    eng.start(s, np.full(20, 0.02))
    raw = eng.read()
    sensors = sim.bridge.sensors(raw)
    idx = eng.body_index
    axes = {
        "hip_flexion_r": (idx["pelvis"], [0, 0, 1]),
        "knee_angle_r": (idx["upper_leg_r"], [0, 0, -1]),
        "ankle_angle_r": (idx["lower_leg_r"], [0, 0, 1]),
    }
    joint_of = {"hip_flexion_r": "hip_r", "knee_angle_r": "knee_r", "ankle_angle_r": "ankle_r"}
    joints = [j.name for j in sim.meta.joints]
    cm = sim.control_model
    checked = 0
    for p, (m, j) in enumerate(zip(cm.pair_muscle, cm.pair_joint)):
        muscle = cm.muscles[m].name
        for coord, (body, axis) in axes.items():
            if joints[j] != joint_of[coord] or not muscle.endswith("_r"):
                continue
            world_axis = raw.body_R[body] @ np.array(axis, float)
            ours = float(sensors.pair_r[p] @ world_axis)
            theirs = eng.muscles[m].computeMomentArm(eng.state, eng._coord(coord))
            assert ours == pytest.approx(theirs, abs=2e-4), (muscle, coord)
            checked += 1
    assert checked >= 10


def test_quiet_double_stance_carries_body_weight(humanlegs):
    """Standing on both feet, the ground reaction force equals m (g + a_com) and, once settled,
    body weight within a few percent."""
    sim = humanlegs
    eng = sim.engine
    s = eng.initial_state({}, {})
    eng.start(s, np.full(20, 0.1))
    mass = sim.meta.total_mass
    g = 9.80665
    grf, com_v, times = [], [], []
    dt = 0.005
    for k in range(60):
        assert eng.advance((k + 1) * dt)
        raw = eng.read()
        grf.append(raw.contact_force[:, 1].sum())
        com_v.append(raw.com_vel[1])
        times.append(raw.t)
        eng.set_excitations(np.full(20, 0.1))
    grf, com_v = np.array(grf), np.array(com_v)
    acc = np.gradient(com_v, dt)
    newton = np.abs(grf - mass * (g + acc)) / (mass * g)
    assert np.median(newton[5:]) < 0.05
    window = slice(20, 60)
    assert np.mean(grf[window]) == pytest.approx(mass * g, rel=0.05)


def test_contact_centres_are_computed_once_per_read(humanlegs):
    """The sensors, the recorder and the terrain update of one control step share the contact
    centres of one engine read; a new read gets new ones."""
    eng, bridge = humanlegs.engine, humanlegs.bridge
    eng.start(eng.initial_state({}, {}), np.full(20, 0.1))
    raw = eng.read()
    pos, R = eng._poses(eng.state)
    np.testing.assert_array_equal(pos, raw.body_pos)
    np.testing.assert_array_equal(R, raw.body_R)
    sensors = bridge.sensors(raw)
    centres = bridge.contact_centres(raw)
    assert bridge.contact_centres(raw) is centres
    with pytest.raises(ValueError):
        centres[0, 0] = 0.0  # shared: read only
    points = bridge.contact_points(raw)
    np.testing.assert_array_equal(points[:, 1], centres[:, 1] - bridge.contact_radius)
    np.testing.assert_array_equal(points[:, [0, 2]], centres[:, [0, 2]])
    np.testing.assert_array_equal(sensors.foot_pos[0], points[bridge.contact_foot == 0].mean(axis=0))
    assert eng.advance(0.005)
    raw = eng.read()
    np.testing.assert_array_equal(bridge.contact_centres(raw), eng.contact_centres(raw.body_pos, raw.body_R))
    assert bridge.contact_centres(raw) is not centres


def test_pushes_and_termination_reported(humanlegs):
    scenario = Scenario(speed=1.3, duration=3.0, pushes=[Push(0.05, (0.0, 0.0, 600.0))])
    result = humanlegs.run(scenario)
    assert result.terminated
    assert result.reason in {"com_height", "heading", "leg_crossing", "self_collision"}
    assert result.simulated_time < 3.0


def test_bad_simulate_input(built_models, tmp_path, capsys):
    out = tmp_path / "bad"
    assert (
        main(
            [
                "simulate",
                str(built_models["HumanLegs"]),
                "--speed",
                "1.3",
                "--duration",
                "-1",
                "--out",
                str(out),
            ]
        )
        == 2
    )
    assert "--duration" in capsys.readouterr().err
    params = tmp_path / "p.json"
    params.write_text(json.dumps({"controller": {"fsm.d_lift": float("nan")}}))
    assert (
        main(
            [
                "simulate",
                str(built_models["HumanLegs"]),
                "--speed",
                "1.3",
                "--duration",
                "0.1",
                "--params",
                str(params),
                "--out",
                str(out),
            ]
        )
        == 2
    )
    assert "fsm.d_lift" in capsys.readouterr().err
    params.write_text(json.dumps({"no.such": 1}))
    assert (
        main(
            [
                "simulate",
                str(built_models["HumanLegs"]),
                "--speed",
                "1.3",
                "--duration",
                "0.1",
                "--params",
                str(params),
                "--out",
                str(out),
            ]
        )
        == 2
    )
    assert "no.such: unknown parameter" in capsys.readouterr().err
    params.write_text(json.dumps({"fsm.d_lift": 99}))
    assert (
        main(
            [
                "simulate",
                str(built_models["HumanLegs"]),
                "--speed",
                "1.3",
                "--duration",
                "0.1",
                "--params",
                str(params),
                "--out",
                str(out),
            ]
        )
        == 2
    )
    assert "outside" in capsys.readouterr().err
    bad_model = tmp_path / "broken.osim"
    bad_model.write_text("<OpenSimDocument><Model")
    assert main(["simulate", str(bad_model), "--speed", "1", "--duration", "0.1", "--out", str(out)]) == 2
    assert not out.exists()


def test_ramp_terrain_profile_is_continuous():
    from musclewalk.sim.terrain import RampTerrain

    terrain = RampTerrain(5.0, seed=3, length=10)
    x = np.linspace(-2, 11, 2001)
    h = terrain.height(x)
    assert np.all(h[x < terrain.flat_start] == 0)
    assert np.max(np.abs(np.diff(h))) < np.tan(np.radians(5.01)) * (x[1] - x[0]) + 1e-12
    for i in range(1, terrain.n_segments):
        xb = terrain.x_start[i]
        assert terrain.height(xb - 1e-9) == pytest.approx(terrain.height(xb), abs=1e-6)
    assert np.all(np.abs(terrain.slopes) <= np.radians(5.0))


def test_creature_stands_on_a_ramp(built_models):
    """Standing on a sloped segment: feet rest on the terrain surface (not on y = 0) and the
    ground reaction carries body weight on average (the feet rock onto the slope at first)."""
    from musclewalk.sim.terrain import RampTerrain

    terrain = RampTerrain(8.0, seed=5, length=8)
    x = 4.5
    i = int(terrain.segment_of(x))
    assert abs(terrain.slopes[i]) > np.radians(1)
    sim = Simulator(built_models["HumanLegs"], terrain=terrain)
    eng = sim.engine
    s = eng.initial_state({"root_tx": x}, {})
    eng.start(s, np.full(20, 0.1))
    vertical = []
    for k in range(80):
        raw = eng.read()
        vertical.append(raw.contact_force[:, 1].sum())
        eng.set_excitations(np.full(20, 0.1))
        eng.update_terrain(sim.bridge.contact_centres(raw)[:, 0])
        assert eng.advance((k + 1) * 0.005)
    raw = eng.read()
    points = sim.bridge.contact_points(raw)
    loaded = raw.contact_force[:, 1] > 5
    assert loaded.sum() >= 2
    gap = points[loaded, 1] - terrain.height(points[loaded, 0])
    assert np.all(np.abs(gap) < 0.02)
    assert abs(terrain.height(x)) > 0.02  # really above/below the flat ground
    assert np.mean(vertical[10:]) == pytest.approx(sim.meta.total_mass * 9.80665, rel=0.15)
    # the contact planes are the segments': a loaded sphere's normal force is along the slope's normal
    assert eng.exponential_contact
    slope = terrain.slopes[i]
    on_slope = 0
    for k, segment in enumerate(eng.active_segment):
        normal = eng.terrain_forces[k][segment].getNormalForce(eng.state).to_numpy()
        if segment == i and np.linalg.norm(normal) > 5:
            on_slope += 1
            expected = np.array([-np.sin(slope), np.cos(slope), 0.0])
            np.testing.assert_allclose(normal / np.linalg.norm(normal), expected, atol=1e-6)
    assert on_slope >= 1


def test_controller_on_the_real_model_drives_the_swing_leg_forward(humanlegs):
    """With the left leg behind the body in swing, the JT feedback excites the left hip flexors
    and inhibits the left hip extensors; with the right leg in stance and the trunk leaning back
    of its target, the right (stance) hip flexors pull the trunk forward."""
    from musclewalk.control.controller import Controller

    sim = humanlegs
    eng = sim.engine
    s = eng.initial_state({"hip_flexion_l": -0.4, "root_pitch": 0.15}, {})
    eng.start(s, np.full(20, 0.02))
    sensors = sim.bridge.sensors(eng.read())
    ctrl = Controller(sim.control_model, None, speed=1.3)
    ctrl.reset(("stance", "swing"))
    ctrl.step(sensors)
    assert ctrl.leg_states == ("stance", "swing")
    fb = dict(zip([m.name for m in sim.control_model.muscles], ctrl.feedback))
    for flexor in ("hip_flexor_medial_l", "hip_flexor_lateral_l", "rectus_femoris_l"):
        assert fb[flexor] > 0.02
    assert fb["hip_abductor_posterior_l"] < 0
    assert fb["hamstrings_l"] < 0
    # trunk leaning backwards (root_pitch > 0) while its target leans forward
    assert fb["hip_flexor_lateral_r"] > 0.02
    assert fb["hip_abductor_posterior_r"] < 0


def test_a_stalled_integrator_ends_the_run_instead_of_hanging(built_models):
    """Human with the default controller: at ~0.6 s the 4 cm hip-flexor fibres stall (Millard
    fiber-velocity Newton solve) and the error control shrinks the steps without end; the minimum
    step turns that into an integrator failure. SIGALRM fails the test instead of hanging CI."""
    import signal

    def hang(*_):
        raise TimeoutError("integrate did not return within 120 s")

    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(120)
    try:
        sim = Simulator(built_models["Human"])
        scenario = Scenario(speed=1.3, duration=0.8, terminate=False)
        result = sim.run(scenario, {})
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    summary = result.summary(scenario)
    assert summary["terminated"] is False or summary["termination_reason"] == "integrator_failure"
    assert result.simulated_time > 0.5


def test_the_first_excitations_drive_the_first_interval(built_models):
    """The Manager starts after the controller's first output is set, so [0, dt) runs on it (it
    used to run on the 0.02 set before the Manager was initialized)."""
    from musclewalk.model.meta import load_meta
    from musclewalk.sim.engine import OpenSimEngine

    path = built_models["HumanLegs"]
    eng = OpenSimEngine(path, load_meta(path))
    activations = []
    for u in (0.02, 1.0):
        eng.start(eng.initial_state({}, {}))
        eng.read()
        eng.set_excitations(np.full(20, u))  # the controller's first output
        assert eng.advance(0.005)
        activations.append(eng.muscle_states().activation.mean())
    # a first-order activation with a 10 ms time constant: about 40 % of the way in 5 ms
    assert activations[0] < 0.03 and activations[1] > 0.3


def test_ramps_of_the_exponential_contact_model_match_flat_ground(built_models):
    """A model with exponential foot contact keeps it on ramps (one force per sphere and segment,
    copies of its flat ones): on ramps of 0 deg it stands exactly as on flat ground."""
    from musclewalk.sim.terrain import RampTerrain

    def vertical_forces(terrain):
        sim = Simulator(built_models["HumanLegs"], terrain=terrain)
        assert sim.engine.exponential_contact
        eng = sim.engine
        eng.start(eng.initial_state({"root_tx": 2.5}, {}), np.full(20, 0.1))
        out = []
        for k in range(30):
            raw = eng.read()
            out.append(raw.contact_force[:, 1].sum())
            eng.set_excitations(np.full(20, 0.1))
            if terrain is not None:
                eng.update_terrain(sim.bridge.contact_centres(raw)[:, 0])
            assert eng.advance((k + 1) * 0.005)
        return np.array(out)

    flat = vertical_forces(None)
    ramps = vertical_forces(RampTerrain(0.0, seed=5, length=6))
    assert flat[-1] > 100
    np.testing.assert_allclose(ramps, flat, rtol=1e-3, atol=1.0)


def test_a_fixed_step_run_is_smooth_in_its_parameters():
    """With a fixed integrator step a 1e-9 change of one parameter moves the committed HumanLegs
    by far less than a micrometre in 0.5 s (at error-controlled steps the step choices jump with
    the last bits and it moves by about 1e-5 m: benchmarks/integrator_smoothness.py)."""
    from pathlib import Path

    from musclewalk.optimize.space import ParameterSpace

    run = Path(__file__).resolve().parents[2] / "models/optimized/HumanLegs-walk-1.3"
    best = json.loads((run / "best.json").read_text())
    values = {**best["parameters"]["controller"], **best["parameters"]["initial_state"]}
    entry = next(
        e
        for e in ParameterSpace.of_creature(str(run / "optimized.osim")).entries
        if e.name == "gain.trunk.kq"
    )
    nudged = {**values, "gain.trunk.kq": values["gain.trunk.kq"] + 1e-9 * (entry.upper - entry.lower)}
    sim = Simulator(run / "optimized.osim", fixed_step=0.0005)
    scenario = Scenario(speed=best["speed"], duration=0.5)
    a, b = (sim.run(scenario, v) for v in (values, nudged))
    assert a.simulated_time == b.simulated_time == pytest.approx(0.5)
    assert 0 < np.linalg.norm(a.final_com - b.final_com) < 1e-7
