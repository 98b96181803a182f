import numpy as np
import pytest
from control_synth import build_creature

from musclewalk.control.controller import (
    _GROUP_ANKLE,
    _GROUP_HEAD,
    _GROUP_HIP,
    _GROUP_KNEE,
    _lift_excitations,
    _pair_groups,
)
from musclewalk.control.fsm import LegState
from musclewalk.control.rotations import rot_z


def test_lift_off_terms_by_muscle_role():
    creature = build_creature()
    ix = creature.index
    lift = _lift_excitations(creature.model.muscles, 0.4, -0.3)
    for side in "rl":
        assert lift[ix(f"hip_flexor_{side}")] == 0.4
        assert lift[ix(f"hip_extensor_{side}")] == -0.4
        assert lift[ix(f"hamstrings_{side}")] == -0.4  # hip extensor and knee flexor
        assert lift[ix(f"hip_abductor_{side}")] == 0.0
        assert lift[ix(f"vasti_{side}")] == -0.3
        assert lift[ix(f"soleus_{side}")] == 0.0
    assert lift[ix("neck_flexor")] == 0.0
    # beyond the paper: lift.ankle excites the ankle extensors of a leg in lift-off (a push-off)
    push = _lift_excitations(creature.model.muscles, 0.4, -0.3, 0.25)
    for side in "rl":
        assert push[ix(f"soleus_{side}")] == 0.25
        assert push[ix(f"gastrocnemius_{side}")] == 0.25  # ankle extensor and knee flexor
        assert push[ix(f"tibialis_anterior_{side}")] == 0.0
    np.testing.assert_array_equal(
        np.delete(push - lift, [ix(f"{m}_{s}") for m in ("soleus", "gastrocnemius") for s in "rl"]), 0.0
    )


def test_lift_ankle_acts_only_in_lift_off_and_is_off_by_default():
    """lift.ankle (beyond the paper) joins the undelayed state terms of a leg in lift_off only; at
    its default 0 the terms are the paper's."""
    from musclewalk.control import Controller

    creature = build_creature()
    cm, ix = creature.model, creature.index
    paper, push = Controller(cm, {}), Controller(cm, {"lift.ankle": 0.3})
    stance, lift_off, swing = int(LegState.STANCE), int(LegState.LIFT_OFF), int(LegState.SWING)
    for states in ((stance, swing), (swing, stance), (lift_off, stance)):
        base, pushed = paper.state_terms(states)[0], push.state_terms(states)[0]
        lifting = [s for leg, s in zip(states, "rl") if leg == lift_off]
        for muscle in ("soleus", "gastrocnemius"):
            for side in "rl":
                extra = 0.3 if side in lifting else 0.0
                assert pushed[ix(f"{muscle}_{side}")] == pytest.approx(base[ix(f"{muscle}_{side}")] + extra)
        others = [i for i, m in enumerate(cm.muscles) if not m.name.startswith(("soleus", "gastrocnemius"))]
        np.testing.assert_array_equal(pushed[others], base[others])


def test_pair_groups_follow_joint_kind_and_side():
    creature = build_creature()
    cm = creature.model
    names = [m.name for m in cm.muscles]
    joints = [j.name for j in cm.joints]
    groups = {
        (names[m], joints[j]): g
        for m, j, g in zip(cm.pair_muscle.tolist(), cm.pair_joint.tolist(), _pair_groups(cm, True).tolist())
    }
    assert groups[("hamstrings_r", "hip_r")] == _GROUP_HIP[0]
    assert groups[("hamstrings_l", "knee_l")] == _GROUP_KNEE[1]
    assert groups[("gastrocnemius_r", "ankle_r")] == _GROUP_ANKLE[0]
    assert groups[("neck_extensor", "neck")] == _GROUP_HEAD
    without_head = _pair_groups(cm, False)
    assert not np.any(without_head == _GROUP_HEAD)


def _feedback(params: dict, adjust=None, steps: int = 1) -> np.ndarray:
    """Feedback of the synthetic creature (right leg in stance, left in swing; every constant 0
    and ``params`` over them) after ``steps`` control steps on its base-pose sensors, changed by
    ``adjust(model, sensors, index)``."""
    from control_synth import base_sensors, zero_constants

    from musclewalk.control import Controller

    creature = build_creature()
    controller = Controller(creature.model, {**zero_constants(creature.model), **params})
    sensors = base_sensors(creature)
    if adjust is not None:
        adjust(creature.model, sensors, creature.index)
    for _ in range(steps):
        controller.step(sensors)
    return controller.feedback.copy()


def _knee_inhibition_feedback(gain: float, flexion: float, flexion_rate: float) -> np.ndarray:
    """Right knee (stance) at ``flexion`` (rad) and ``flexion_rate`` (rad/s, negative = extending)."""

    def bend_right_knee(model, sensors, _):
        sensors.body_R[model.lower_body[0]] = rot_z(-flexion)
        sensors.body_omega[model.lower_body[0]] = (0.0, 0.0, -flexion_rate)

    params = {"knee_overextension.gain": gain, "knee_overextension.theta_off": 0.2}
    return _feedback(params, bend_right_knee)


def test_knee_overextension_inhibits_the_extending_stance_knee_extensors():
    ix = build_creature().index
    off = _knee_inhibition_feedback(0.0, 0.05, -1.0)
    on = _knee_inhibition_feedback(2.0, 0.05, -1.0)
    change = on - off
    # 2 per rad x (0.05 - 0.2) rad, on the right vasti only (the left leg swings; rectus-like
    # muscles spanning the hip and the knee flexors are not inhibited)
    assert change[ix("vasti_r")] == pytest.approx(-0.3)
    assert np.count_nonzero(change) == 1


@pytest.mark.parametrize("flexion, flexion_rate", [(0.05, 1.0), (0.3, -1.0)])
def test_knee_overextension_is_silent_when_flexing_or_flexed(flexion, flexion_rate):
    off = _knee_inhibition_feedback(0.0, flexion, flexion_rate)
    on = _knee_inhibition_feedback(2.0, flexion, flexion_rate)
    np.testing.assert_array_equal(on, off)


def _stance_knee_feedback(gain: float, target: float) -> np.ndarray:
    """Feedback with the right leg in stance at the base pose and its stance knee target ``target``
    rad from the base pose's knee flexion."""
    knee0 = build_creature().model.knee0
    return _feedback({"gain.stance_knee.kq": gain, "stance_knee.theta": knee0 + target})


def test_the_stance_knee_target_is_off_by_default():
    """gain.stance_knee.kq 0 (the default, the paper's controller): the stance knee target moves
    nothing."""
    np.testing.assert_array_equal(_stance_knee_feedback(0.0, 0.4), _stance_knee_feedback(0.0, -0.2))


def test_the_stance_knee_target_flexes_the_stance_knee_through_its_knee_muscles():
    """Above 0, eq 28's law on the stance leg: a target more flexed than the knee excites the
    stance leg's knee flexors and inhibits its extensors, in proportion to the gain and the error,
    and moves no muscle that does not cross that knee."""
    creature = build_creature()
    ix = creature.index
    off = _stance_knee_feedback(0.0, 0.3)
    change = _stance_knee_feedback(0.5, 0.3) - off
    assert change[ix("hamstrings_r")] > 0.0
    assert change[ix("vasti_r")] < 0.0
    crossing = {i for i, m in enumerate(creature.model.muscles) if m.side == "r" and "knee" in m.roles}
    assert set(np.flatnonzero(np.abs(change) > 1e-12)) <= crossing
    np.testing.assert_allclose(_stance_knee_feedback(1.0, 0.3) - off, 2.0 * change, atol=1e-12)
    at_target = _stance_knee_feedback(0.5, 0.0) - _stance_knee_feedback(0.0, 0.0)
    np.testing.assert_allclose(at_target, 0.0, atol=1e-12)


def _swing_ankle_feedback(follow_shank: float, shank_pitch: float) -> np.ndarray:
    """Feedback of the left (swing) leg's ankle muscles with its lower leg and foot both pitched
    by ``shank_pitch`` (the ankle angle as in the base pose)."""

    def pitch_left_shank_and_foot(model, sensors, _):
        for body in (model.lower_body[1], model.foot_body[1]):
            sensors.body_R[body] = rot_z(shank_pitch)

    # 30 steps: past the ankle muscles' 20 ms delay
    feedback = _feedback({"swing_foot.follow_shank": follow_shank}, pitch_left_shank_and_foot, steps=30)
    ix = build_creature().index
    return feedback[[ix("tibialis_anterior_l"), ix("soleus_l")]]


def test_a_swing_foot_that_follows_the_shank_keeps_the_ankle_angle():
    base = _swing_ankle_feedback(1.0, 0.0)
    np.testing.assert_allclose(_swing_ankle_feedback(1.0, -0.3), base, atol=1e-9)
    # the paper's target (relative to the ground) pulls the pitched foot back up
    assert not np.allclose(_swing_ankle_feedback(0.0, -0.3), base, atol=1e-3)


def test_controller_csv_logs_the_foot_pitch_target_it_aimed_for():
    """With the swing foot following the shank, each leg's logged target is that leg's (the
    paper's ankle.theta plus follow_shank times its lower leg's pitch change), not ankle.theta."""
    from control_synth import base_sensors, zero_constants

    from musclewalk.control import Controller
    from musclewalk.control.targets import swing_foot_pitch_targets

    creature = build_creature()
    params = {**zero_constants(creature.model), "swing_foot.follow_shank": 0.5, "ankle.theta": 0.1}
    controller = Controller(creature.model, params)
    sensors = base_sensors(creature)
    sensors.body_R[creature.model.lower_body[1]] = rot_z(-0.4)
    controller.step(sensors)
    row = controller.log_row()
    pitch0 = controller._lower_leg_pitch0
    right, left = swing_foot_pitch_targets(0.1, 0.5, (pitch0, pitch0 - 0.4), pitch0)
    assert (row["foot_pitch_target_r"], row["foot_pitch_target_l"]) == pytest.approx((right, left))
    assert left == pytest.approx(0.1 - 0.2)


def test_swing_foot_pitch_targets():
    from musclewalk.control.targets import swing_foot_pitch_targets

    assert swing_foot_pitch_targets(0.1, 0.0, (-0.4, 0.2), 0.0) == (0.1, 0.1)
    assert swing_foot_pitch_targets(0.1, 0.5, (-0.4, 0.2), -0.2) == pytest.approx((0.0, 0.3))


def _stance_tibialis_feedback(
    params: dict, dorsiflexion: float, soleus_force: float = 0.0, leg=0
) -> np.ndarray:
    """``leg``'s foot rotated by ``dorsiflexion`` (rad, toes up) relative to its lower leg and each
    soleus pulling ``soleus_force`` N (F_max 1000 N)."""

    def flex_ankle_and_pull_soleus(model, sensors, index):
        sensors.body_R[model.foot_body[leg]] = rot_z(dorsiflexion)
        for side in "rl":
            sensors.muscle_force[index(f"soleus_{side}")] = soleus_force

    return _feedback(params, flex_ankle_and_pull_soleus)


def test_stance_tibialis_stretch_reflex_excites_the_stance_dorsiflexors_only():
    ix = build_creature().index
    gains = {"stance_tibialis.stretch_gain": 2.0, "stance_tibialis.theta_off": -0.1}
    change = _stance_tibialis_feedback(gains, -0.3) - _stance_tibialis_feedback({}, -0.3)
    # 2 per rad x (-0.1 - (-0.3)) rad, on the right (stance) tibialis anterior alone
    assert change[ix("tibialis_anterior_r")] == pytest.approx(0.4)
    assert np.count_nonzero(change) == 1
    # silent while the ankle is dorsiflexed past theta_off, and on a swing leg
    quiet = _stance_tibialis_feedback(gains, 0.0) - _stance_tibialis_feedback({}, 0.0)
    np.testing.assert_array_equal(quiet, 0.0)
    swing = _stance_tibialis_feedback(gains, -0.3, leg=1) - _stance_tibialis_feedback({}, -0.3, leg=1)
    np.testing.assert_array_equal(swing, 0.0)


def test_stance_tibialis_soleus_force_inhibits_the_dorsiflexor():
    ix = build_creature().index
    inhibition = {"stance_tibialis.soleus_inhibition": 0.5}
    change = _stance_tibialis_feedback(inhibition, 0.0, soleus_force=600.0) - _stance_tibialis_feedback(
        {}, 0.0, soleus_force=600.0
    )
    # 0.5 x 600 N / 1000 N, on the stance leg's tibialis anterior
    assert change[ix("tibialis_anterior_r")] == pytest.approx(-0.3)
    assert np.count_nonzero(change) == 1


def test_ankle_dorsiflexion_is_the_foot_pitch_relative_to_the_lower_leg():
    from musclewalk.control.targets import ankle_dorsiflexion

    lower_pitch, foot_pitch = -0.2, 0.15  # world pitches about Z (toes / knee forward = +)
    assert ankle_dorsiflexion(rot_z(lower_pitch), rot_z(foot_pitch)) == pytest.approx(0.35)


@pytest.mark.parametrize("theta_off, stretch", [(0.0, 0.0), (0.1, 0.1), (-0.1, 0.0)])
def test_stance_tibialis_measures_the_ankle_from_the_models_base_pose(theta_off, stretch):
    """A creature whose base pose is crouched (the Ostrich's base angles): in that pose the ankle
    is at 0 from its base pose, so the reflex acts only for theta_off above 0."""
    from control_synth import base_sensors, zero_constants

    from musclewalk.control import Controller, ControlModel

    creature = build_creature()
    upper0, knee0, ankle0 = 0.8727, 1.3963, 0.2618
    crouched = ControlModel.from_dict(
        {**creature.model.to_dict(), "upper_leg_pitch0": upper0, "knee0": knee0, "ankle0": ankle0}
    )
    cm = crouched
    sensors = base_sensors(creature)
    for leg in (0, 1):
        sensors.body_R[cm.upper_body[leg]] = rot_z(upper0)
        sensors.body_R[cm.lower_body[leg]] = rot_z(upper0 - knee0)
        sensors.body_R[cm.foot_body[leg]] = rot_z(ankle0)

    def feedback(gain):
        params = zero_constants(cm)
        params.update({"stance_tibialis.stretch_gain": gain, "stance_tibialis.theta_off": theta_off})
        controller = Controller(cm, params)
        controller.step(sensors)
        return controller.feedback.copy()

    change = feedback(2.0) - feedback(0.0)
    assert change[creature.index("tibialis_anterior_r")] == pytest.approx(2.0 * stretch, abs=1e-9)
    assert np.count_nonzero(np.abs(change) > 1e-12) == (1 if stretch else 0)


def _trunk_damping_feedback(time_constant: float, omega: float = 1.0) -> np.ndarray:
    """Feedback after the trunk's angular velocity jumps from 0 to ``omega`` rad/s (about Z)
    between two control steps; right leg in stance, the trunk's kq term off."""
    from control_synth import base_sensors, zero_constants

    from musclewalk.control import Controller

    creature = build_creature()
    params = zero_constants(creature.model)
    params.update({"gain.trunk.kq": 0.0, "gain.trunk.kw": 1.0})
    params["angular_velocity_filter.time_constant"] = time_constant
    controller = Controller(creature.model, params)
    controller.step(base_sensors(creature))
    sensors = base_sensors(creature, t=creature.model.dt)
    sensors.body_omega[creature.model.trunk_body] = (0.0, 0.0, omega)
    controller.step(sensors)
    return controller.feedback.copy()


def test_angular_velocity_filter_low_passes_the_kw_terms():
    ix = build_creature().index
    raw = _trunk_damping_feedback(0.0) - _trunk_damping_feedback(0.0, omega=0.0)
    hip = [ix(f"hip_{kind}_r") for kind in ("flexor", "extensor")]
    assert np.all(raw[hip] != 0.0)  # the stance hip's muscles carry the trunk's kw term
    dt = build_creature().model.dt
    tau = 0.02
    filtered = _trunk_damping_feedback(tau) - _trunk_damping_feedback(tau, omega=0.0)
    # first-order low-pass: one control interval after the jump, 1 - exp(-dt / tau) of it
    np.testing.assert_allclose(filtered, raw * -np.expm1(-dt / tau), atol=1e-12)


def _left_leg_feedback(state: str, params: dict, omegas: dict) -> np.ndarray:
    """Feedback of a left leg in ``state`` (the right leg in stance) with the body rates ``omegas``
    (body kind -> rad/s about Z, e.g. {"lower": 2.0}) and every constant and trunk, hip, knee and
    foot gain 0 but those in ``params``."""
    from control_synth import base_sensors, zero_constants

    from musclewalk.control import Controller

    creature = build_creature()
    cm = creature.model
    gains = zero_constants(cm)
    for name in ("trunk.kq", "trunk.kw", "swing.kq", "prep.kq", "prep.kw", "knee.kq", "ankle.kq"):
        gains[f"gain.{name}"] = 0.0
    gains.update(params)
    controller = Controller(cm, gains)
    controller.reset(("stance", state))
    sensors = base_sensors(creature)
    bodies = {"lower": cm.lower_body, "foot": cm.foot_body}
    for kind, omega in omegas.items():
        sensors.body_omega[bodies[kind][1]] = (0.0, 0.0, omega)
    controller.step(sensors)
    return controller.feedback.copy()


def _prep_knee_feedback(kw: float, omega: float) -> np.ndarray:
    """A left leg in stance preparation whose lower leg turns at ``omega``, its knee damped by kw."""
    return _left_leg_feedback("stance_preparation", {"gain.knee.kw": kw}, {"lower": omega})


def test_the_prep_lower_leg_damping_is_off_by_default_and_acts_on_the_knee_muscles():
    """gain.knee.kw (beyond the paper): a kw term of eq 15 on the stance-preparation lower leg.
    At 0 (the default, eq 28) the lower leg's angular velocity excites nothing; above 0 it excites
    the prep leg's knee muscles in proportion, and only them."""
    _assert_damping_off_at_zero_and_proportional(_prep_knee_feedback, "knee")


def _assert_damping_off_at_zero_and_proportional(feedback, joint: str) -> None:
    """``feedback(kw, omega)``: nothing at kw 0; above it, in proportion to kw, and only on the left
    leg's muscles that cross ``joint``."""
    creature = build_creature()
    assert np.all(feedback(0.0, 2.0) == feedback(0.0, 0.0))
    change = feedback(0.5, 2.0) - feedback(0.5, 0.0)
    crossing = {i for i, m in enumerate(creature.model.muscles) if m.side == "l" and joint in m.roles}
    moved = set(np.flatnonzero(np.abs(change) > 1e-12))
    assert moved and moved <= crossing
    np.testing.assert_allclose(feedback(1.0, 2.0) - feedback(1.0, 0.0), 2.0 * change, atol=1e-12)


def _swing_foot_feedback(kw: float, foot_omega: float, shank_omega: float = 0.0, follow: float = 0.0):
    """A left leg in swing whose foot and shank turn at the given rates, its foot damped by kw."""
    params = {"gain.ankle.kw": kw, "swing_foot.follow_shank": follow}
    return _left_leg_feedback("swing", params, {"foot": foot_omega, "lower": shank_omega})


def test_the_swing_foot_damping_is_off_by_default_and_damps_the_rate_of_the_foot_error():
    """gain.ankle.kw (beyond the paper): a kw term on the swing foot (eq 29 has none) acting on the
    rate of its error, the foot's angular velocity less follow_shank times the shank's. At 0 (the
    default) the foot's rate excites nothing; above 0 it excites the swing leg's ankle muscles in
    proportion, and only them; a foot turning with its moving target is not damped."""
    _assert_damping_off_at_zero_and_proportional(_swing_foot_feedback, "ankle")
    # the target follows 0.5 of the shank's pitch: a foot turning at half the shank's rate is on
    # its target's course, and the shank's own rate alone is damped as the foot lagging behind it
    still = _swing_foot_feedback(0.5, 0.0, shank_omega=0.0, follow=0.5)
    np.testing.assert_allclose(_swing_foot_feedback(0.5, 1.0, shank_omega=2.0, follow=0.5), still, atol=1e-12)
    np.testing.assert_allclose(
        _swing_foot_feedback(0.5, 0.0, shank_omega=2.0, follow=0.5) - still,
        -(_swing_foot_feedback(0.5, 1.0, follow=0.5) - still),
        atol=1e-12,
    )


def _moving_sensors(creature, rng, tilt: float, **base):
    """The base-pose sensors with every body turned by a random rotation of about ``tilt`` rad,
    random angular and linear velocities and muscle forces."""
    from control_synth import base_sensors
    from scipy.spatial.transform import Rotation

    sensors = base_sensors(creature, **base)
    n = len(sensors.body_R)
    sensors.body_R[:] = Rotation.from_rotvec(rng.normal(0.0, tilt, (n, 3))).as_matrix()
    sensors.body_omega[:] = rng.normal(0.0, 1.0, (n, 3))
    sensors.body_vel[:] = rng.normal(0.0, 0.5, (n, 3))
    sensors.muscle_force[:] = rng.uniform(0.0, 500.0, creature.model.n_muscles)
    return sensors


def test_the_feedback_split_by_source_sums_to_the_feedback_in_every_leg_state():
    """`feedback_by_source` (for recorded runs): one row per FEEDBACK_SOURCES entry, the rows sum
    to the step's feedback whatever the legs' states and which features are on; each row is its
    own term (F+ alone on the stance extensors, the upper-leg target on the swing hip only)."""

    from musclewalk.control import FEEDBACK_SOURCES, Controller

    creature = build_creature()
    ix = creature.index
    params = {
        "knee_overextension.gain": 2.0,
        "knee_overextension.theta_off": 0.3,
        "stance_tibialis.stretch_gain": 1.0,
        "stance_tibialis.theta_off": 0.1,
        "stance_tibialis.soleus_inhibition": 0.5,
        "gain.knee.kw": 0.2,
        "gain.ankle.kw": 0.2,
        "swing_foot.follow_shank": 0.5,
        "jt_equal_activation.weight": 0.7,
        "prep_foot.kv": 0.3,
        "gain.stance_knee.kq": 0.3,
    }
    controller = Controller(creature.model, params)
    assert not controller.feedback_by_source().any()  # before the first step
    rng = np.random.default_rng(3)
    seen = set()
    for k, contact in enumerate([(True, False)] * 5 + [(True, True)] * 5 + [(False, True)] * 5):
        sensors = _moving_sensors(creature, rng, 0.2, t=k * 0.001, contact=contact)
        controller.step(sensors)
        sources = controller.feedback_by_source()
        assert sources.shape == (len(FEEDBACK_SOURCES), creature.model.n_muscles)
        np.testing.assert_allclose(sources.sum(axis=0), controller.feedback, atol=1e-12)
        seen.add(controller.leg_states)
        row = dict(zip(FEEDBACK_SOURCES, sources))
        for plane in ("sagittal", "coronal", "axial"):
            assert np.any(row[f"trunk_{plane}"] != 0.0) or np.any(row[f"upper_leg_{plane}"] != 0.0)
        fplus = controller.state_terms(controller.fsm.states)[1]
        np.testing.assert_array_equal(row["force_feedback"], fplus * sensors.muscle_force)
        if controller.leg_states[0] in ("stance", "lift_off"):
            assert row["upper_leg_sagittal"][ix("hip_flexor_r")] == 0.0
            assert row["force_feedback"][ix("vasti_r")] != 0.0
        assert not row["force_feedback"][ix("hip_flexor_r")]
    assert len(seen) >= 2
    for name in ("head_orientation_sagittal", "head_position", "force_feedback", "prep_foot_speed"):
        assert np.any(row[name] != 0.0), name


def test_the_feedback_split_puts_a_trunk_side_lean_in_the_coronal_plane():
    """A trunk leaning sideways alone (right leg in stance, the trunk's target upright): its PD
    torque is about the trunk's forward axis, so the stance hip muscles get it as trunk_coronal
    only; a forward lean gives trunk_sagittal only."""
    from control_synth import base_sensors

    from musclewalk.control import FEEDBACK_SOURCES, Controller
    from musclewalk.control.rotations import facing_rotations

    creature = build_creature()
    params = {"trunk.theta0": 0.0, "trunk.k_speed": 0.0, "trunk.k_heading": 0.0}
    for pitch, roll, plane in ((0.0, 0.2, "coronal"), (-0.2, 0.0, "sagittal")):
        controller = Controller(creature.model, params, speed=0.0)
        sensors = base_sensors(creature)
        sensors.body_R[creature.model.trunk_body] = facing_rotations(0.0, pitch, roll)[0]
        controller.step(sensors)
        row = dict(zip(FEEDBACK_SOURCES, controller.feedback_by_source()))
        others = [p for p in ("sagittal", "coronal", "axial") if p != plane]
        assert np.abs(row[f"trunk_{plane}"]).max() > 1e-3
        for other in others:
            np.testing.assert_allclose(row[f"trunk_{other}"], 0.0, atol=1e-9)


def test_the_feedback_split_puts_each_term_in_its_own_row():
    """With every feedback gain but the trunk's at 0 only the trunk rows act; the head's position
    PD (eq 14) alone only the head_position row; the knee and tibialis laws only their rows."""

    from musclewalk.control import FEEDBACK_SOURCES, Controller

    creature = build_creature()
    cm = creature.model
    off = {f"gain.{g}": 0.0 for g in ("trunk.kq", "trunk.kw", "swing.kq", "prep.kq", "prep.kw", "knee.kq")}
    off |= {f"gain.{g}": 0.0 for g in ("ankle.kq", "head.kp", "head.kv", "head.kq", "head.kw")}
    off |= {name: 0.0 for name in ("fplus.vasti", "fplus.gastrocnemius", "fplus.soleus")}
    cases = {
        "trunk_": {"gain.trunk.kq": 1.0, "gain.trunk.kw": 0.5},
        "head_position": {"gain.head.kp": 1.0, "gain.head.kv": 0.5},
        "knee_overextension": {"knee_overextension.gain": 2.0, "knee_overextension.theta_off": 0.3},
        "stance_tibialis": {"stance_tibialis.stretch_gain": 1.0, "stance_tibialis.soleus_inhibition": 0.5},
        "prep_foot_speed": {"prep_foot.kv": 0.5},
    }
    rng = np.random.default_rng(5)
    for expected, on in cases.items():
        controller = Controller(cm, {k: v for k, v in off.items() if k in controller_names(cm)} | on)
        controller.fsm.states = [int(LegState.STANCE), int(LegState.STANCE_PREPARATION)]
        sensors = _moving_sensors(creature, rng, 0.3)
        controller.step(sensors)
        rows = dict(zip(FEEDBACK_SOURCES, controller.feedback_by_source()))
        acting = {name for name, values in rows.items() if np.any(values != 0.0)}
        assert acting and all(name.startswith(expected) for name in acting), (expected, acting)


def controller_names(model) -> set:
    from musclewalk.control import controller_parameter_specs

    return {spec.name for spec in controller_parameter_specs(model)}


def test_the_stance_preparation_foot_is_retracted_toward_zero_ground_speed():
    """prep_foot.kv (beyond the paper): a foot in stance preparation moving forward asks its leg's
    hip extensors and knee flexors (the hamstrings both ways) to pull it back and inhibits its hip
    flexors and knee extensors; nothing for the stance leg, a foot at rest or moving only
    vertically, a leg in swing, or at gain 0 (the paper's controller)."""
    from control_synth import base_sensors, zero_constants

    from musclewalk.control import FEEDBACK_SOURCES, Controller

    creature = build_creature()
    cm, ix = creature.model, creature.index
    foot_l = cm.foot_body[1]

    def retraction(kv: float, velocity, left_state=LegState.STANCE_PREPARATION) -> np.ndarray:
        controller = Controller(cm, zero_constants(cm) | {"prep_foot.kv": kv})
        controller.fsm.states = [int(LegState.STANCE), int(left_state)]
        sensors = base_sensors(creature)
        sensors.body_vel[foot_l] = velocity
        controller.step(sensors)
        assert controller.fsm.states[1] == int(left_state)
        return dict(zip(FEEDBACK_SOURCES, controller.feedback_by_source()))["prep_foot_speed"]

    row = retraction(0.5, (2.0, 0.0, 0.0))
    for pulls_back in ("hamstrings_l", "hip_extensor_l"):
        assert row[ix(pulls_back)] > 0.01, pulls_back
    for inhibited in ("hip_flexor_l", "vasti_l"):
        assert row[ix(inhibited)] < -0.01, inhibited
    assert not any(row[ix(m)] for m in ("hamstrings_r", "hip_extensor_r", "hip_flexor_r", "vasti_r"))
    assert not row[ix("soleus_l")] and not row[ix("tibialis_anterior_l")]  # ankle-only muscles
    np.testing.assert_allclose(retraction(1.0, (2.0, 0.0, 0.0)), 2.0 * row)  # linear in k_v and v
    np.testing.assert_allclose(retraction(0.5, (-2.0, 0.0, 0.0)), -row)
    for kv, velocity, state in (
        (0.5, (0.0, 0.0, 0.0), LegState.STANCE_PREPARATION),
        (0.5, (0.0, -1.0, 0.0), LegState.STANCE_PREPARATION),
        (0.5, (2.0, 0.0, 0.0), LegState.SWING),
        (0.0, (2.0, 0.0, 0.0), LegState.STANCE_PREPARATION),
    ):
        assert not retraction(kv, velocity, state).any(), (kv, velocity, state)


def test_the_retraction_waits_until_the_foot_is_ahead_of_the_centre_of_mass():
    """prep_foot.ahead (beyond the paper, terminal-swing retraction): the retraction row is zero
    while the stance-preparation foot is at most `ahead` leg lengths ahead of the COM (facing frame)
    and the ungated row beyond; at its default (-1) it acts from the start of stance preparation."""
    from control_synth import LEG_LENGTH, base_sensors, zero_constants

    from musclewalk.control import FEEDBACK_SOURCES, Controller

    creature = build_creature()
    cm = creature.model
    foot_l = cm.foot_body[1]

    def retraction(foot_ahead: float, **gate) -> tuple:
        controller = Controller(cm, zero_constants(cm) | {"prep_foot.kv": 0.5} | gate)
        controller.fsm.states = [int(LegState.STANCE), int(LegState.STANCE_PREPARATION)]
        sensors = base_sensors(creature)
        shift = foot_ahead * LEG_LENGTH - (sensors.foot_pos[1, 0] - sensors.com_pos[0])
        sensors.body_pos[foot_l, 0] += shift
        sensors.foot_pos[1, 0] += shift
        sensors.body_vel[foot_l] = (2.0, 0.0, 0.0)
        controller.step(sensors)
        assert controller.fsm.states[1] == int(LegState.STANCE_PREPARATION)
        row = dict(zip(FEEDBACK_SOURCES, controller.feedback_by_source()))["prep_foot_speed"]
        return row, controller.feedback

    for foot_ahead in (-0.3, 0.05, 0.3):
        ungated, ungated_total = retraction(foot_ahead)
        assert ungated.any()
        np.testing.assert_array_equal(retraction(foot_ahead, **{"prep_foot.ahead": -1.0})[0], ungated)
        gated, gated_total = retraction(foot_ahead, **{"prep_foot.ahead": 0.1})
        if foot_ahead > 0.1:
            np.testing.assert_array_equal(gated, ungated)
            np.testing.assert_array_equal(gated_total, ungated_total)
        else:
            assert not gated.any()
            np.testing.assert_allclose(gated_total, ungated_total - ungated, atol=1e-12)


def test_the_retraction_force_is_eq_14s_velocity_term_on_the_foot_through_its_hip_and_knee():
    """The prep_foot_speed row equals eq 16-19 of F = -k_v (v_x, 0, v_z), k_v = kv M g / sqrt(g L),
    applied at the foot's origin over the stance-preparation leg's hip and knee pairs, for a foot
    ahead of and beside its hip, tilted moment arms and velocities in every direction (the vertical
    part of the velocity takes no part)."""
    from control_synth import LEG_LENGTH, MASS, base_sensors, zero_constants

    from musclewalk.control import FEEDBACK_SOURCES, Controller
    from musclewalk.control.controller import _GROUP_HIP, _GROUP_KNEE, _pair_groups
    from musclewalk.control.jacobian import feature_muscle_forces

    creature = build_creature()
    cm = creature.model
    foot_l = cm.foot_body[1]
    kv = 0.4
    k_v = kv * MASS * 9.81 / np.sqrt(9.81 * LEG_LENGTH)
    groups = _pair_groups(cm, cm.has_head)
    left_leg = (groups == _GROUP_HIP[1]) | (groups == _GROUP_KNEE[1])
    rng = np.random.default_rng(11)
    for velocity in ((2.0, 0.0, 0.0), (0.0, 0.0, 1.0), (1.5, -0.7, -0.4), (0.0, -1.0, 0.0)):
        controller = Controller(cm, zero_constants(cm) | {"prep_foot.kv": kv})
        controller.fsm.states = [int(LegState.STANCE), int(LegState.STANCE_PREPARATION)]
        sensors = base_sensors(creature)
        sensors.body_pos[foot_l] += (0.35, 0.2, -0.05)
        sensors.pair_r += rng.normal(0.0, 0.01, sensors.pair_r.shape)
        sensors.body_vel[foot_l] = velocity
        controller.step(sensors)
        row = dict(zip(FEEDBACK_SOURCES, controller.feedback_by_source()))["prep_foot_speed"]
        force = -k_v * np.array((velocity[0], 0.0, velocity[2]))
        lever = sensors.body_pos[foot_l] - sensors.joint_pos[cm.pair_joint]
        moment = np.cross(lever, force) * left_leg[:, None]
        fmax = np.array([m.fmax for m in cm.muscles])
        weight = 1.0 / (cm.n_spanned[cm.pair_muscle] * fmax[cm.pair_muscle])
        expected = feature_muscle_forces(moment, sensors.pair_r, weight, cm.pair_muscle, cm.n_muscles)
        np.testing.assert_allclose(row, expected, rtol=1e-9, atol=1e-12)
        assert np.any(np.abs(row) > 1e-3) == (velocity[0] != 0.0 or velocity[2] != 0.0), velocity


@pytest.mark.parametrize(
    "foot_ahead, share", [(1.5, 0.0), (0.5, 0.0), (0.3, 0.0), (0.2, 0.5), (0.1, 1.0), (-0.2, 1.0)]
)
def test_the_ankle_extensors_force_feedback_ramps_in_as_the_body_passes_the_stance_foot(foot_ahead, share):
    """ankle_fplus.onset / .ramp (beyond the paper): a stance leg's ankle extensors get eq 23's term
    times a ramp on their foot's d_S (0 at onset + ramp leg lengths ahead of the COM and beyond, 1 at
    onset and behind); its knee extensors and the other leg keep theirs, and the step's feedback is
    the gated one. At the default onset (1 L: off) the term is eq 23's at any d_S, even a foot
    further ahead than that."""
    from control_synth import LEG_LENGTH, base_sensors

    from musclewalk.control import FEEDBACK_SOURCES, Controller

    creature = build_creature()
    cm, ix = creature.model, creature.index
    foot_r = cm.foot_body[0]

    def stepped(**onset):
        controller = Controller(cm, onset)
        controller.fsm.states = [int(LegState.STANCE), int(LegState.STANCE)]
        sensors = base_sensors(creature)
        shift = foot_ahead * LEG_LENGTH - (sensors.foot_pos[0, 0] - sensors.com_pos[0])
        sensors.body_pos[foot_r, 0] += shift
        sensors.foot_pos[0, 0] += shift
        sensors.muscle_force[:] = 300.0
        controller.step(sensors)
        assert controller.leg_states == ("stance", "stance")
        sources = controller.feedback_by_source()
        np.testing.assert_allclose(sources.sum(axis=0), controller.feedback, atol=1e-12)
        return controller, dict(zip(FEEDBACK_SOURCES, sources))["force_feedback"], sensors

    paper, eq23, sensors = stepped()
    fplus = paper.state_terms(paper.fsm.states)[1]
    np.testing.assert_array_equal(eq23, fplus * sensors.muscle_force)  # ungated at any d_S
    assert not paper.ankle_fplus_gated
    gating, gated, _ = stepped(**{"ankle_fplus.onset": 0.1, "ankle_fplus.ramp": 0.2})
    assert gating.ankle_fplus_gated
    for muscle in ("soleus_r", "gastrocnemius_r"):
        assert eq23[ix(muscle)] > 0.0
        assert gated[ix(muscle)] == pytest.approx(share * eq23[ix(muscle)], abs=1e-12), muscle
    for muscle in ("vasti_r", "soleus_l", "gastrocnemius_l", "vasti_l"):
        assert gated[ix(muscle)] == eq23[ix(muscle)], muscle


def test_swing_toe_out_turns_each_swing_upper_leg_target_outward():
    """swing.toe_out (beyond the paper, 0 by default: the paper's targets face the heading): the
    right upper leg's target turns its forward axis to the right (+Z), the left one's to the left,
    by the angle; the trunk, feet and head targets do not move."""
    from musclewalk.control import Controller
    from musclewalk.control.controller import _UPPER
    from musclewalk.control.rotations import yaw_pitch_roll

    cm = build_creature().model
    from control_synth import BODIES

    R = np.repeat(np.eye(3)[None], len(BODIES), axis=0)

    def targets(params, heading=0.3):
        controller = Controller(cm, params)
        knee = np.repeat(np.eye(3)[None], 2, axis=0)
        return controller._target_orientations(R, heading, heading, 0.0, 0.0, [0.2, 0.2], [0.0, 0.0], knee)

    paper, turned = targets({}), targets({"swing.toe_out": 0.25})
    yaw, _, _ = yaw_pitch_roll(turned)
    yaw0, _, _ = yaw_pitch_roll(paper)
    np.testing.assert_allclose(yaw0[list(_UPPER)], 0.3)
    np.testing.assert_allclose(yaw[list(_UPPER)], [0.3 - 0.25, 0.3 + 0.25])
    right_forward = turned[_UPPER[0]] @ np.array([1.0, 0.0, 0.0])
    heading_right = np.array([np.sin(0.3), 0.0, np.cos(0.3)])  # +Z at heading 0
    assert right_forward @ heading_right > 0.0
    others = [k for k in range(len(paper)) if k not in _UPPER]
    np.testing.assert_allclose(turned[others], paper[others])


def test_swing_foot_yaw_moves_from_the_trunk_heading_toward_the_target_heading_and_out():
    """swing_foot.heading_share and swing_foot.toe_out (beyond the paper, 0 by default: eq 29's
    foot targets face the trunk's heading): the feet's target yaw moves that share of the way to
    the target heading, the right foot's then turned to the right (-yaw), the left one's to the
    left; at 0 the targets are the paper's to the bit; the other targets do not move."""
    from musclewalk.control import Controller
    from musclewalk.control.controller import _FOOT
    from musclewalk.control.rotations import yaw_pitch_roll

    cm = build_creature().model
    from control_synth import BODIES

    R = np.repeat(np.eye(3)[None], len(BODIES), axis=0)
    feet = [_FOOT[0], _FOOT[1]]

    def targets(params, trunk_heading=0.5, target_heading=0.3):
        controller = Controller(cm, params)
        knee = np.repeat(np.eye(3)[None], 2, axis=0)
        return controller._target_orientations(
            R, trunk_heading, target_heading, 0.0, 0.0, [0.2, 0.2], [0.0, 0.0], knee
        )

    paper = targets({})
    np.testing.assert_array_equal(
        targets({"swing_foot.heading_share": 0.0, "swing_foot.toe_out": 0.0}), paper
    )
    np.testing.assert_allclose(yaw_pitch_roll(paper)[0][feet], 0.5)
    half = targets({"swing_foot.heading_share": 0.5})
    np.testing.assert_allclose(yaw_pitch_roll(half)[0][feet], 0.4)
    out = targets({"swing_foot.heading_share": 1.0, "swing_foot.toe_out": 0.2})
    np.testing.assert_allclose(yaw_pitch_roll(out)[0][feet], [0.3 - 0.2, 0.3 + 0.2])
    np.testing.assert_allclose(yaw_pitch_roll(out)[1][feet], yaw_pitch_roll(paper)[1][feet])  # pitch kept
    # across the ±pi cut the share is of the short way round
    wrapped = targets({"swing_foot.heading_share": 0.5}, trunk_heading=3.0, target_heading=-3.0)
    np.testing.assert_allclose(np.cos(yaw_pitch_roll(wrapped)[0][feet]), np.cos(np.pi), atol=1e-3)
    others = [k for k in range(len(paper)) if k not in feet]
    np.testing.assert_allclose(out[others], paper[others])


def test_a_twisted_ankle_measures_dorsiflexion_about_its_own_axis():
    """A tibial torsion turns the ankle's frame about the lower leg's vertical: the dorsiflexion is
    read about the turned axis (exact), where the untwisted formula would read it short by cos."""
    from musclewalk.control.rotations import rot_y
    from musclewalk.control.targets import ankle_dorsiflexion

    twist, dorsiflexion, lower_pitch = -0.26, 0.3, -0.2
    R_lower = rot_z(lower_pitch)
    R_foot = R_lower @ rot_y(twist) @ rot_z(dorsiflexion)
    assert ankle_dorsiflexion(R_lower, R_foot, twist) == pytest.approx(dorsiflexion, abs=1e-12)
    assert abs(ankle_dorsiflexion(R_lower, R_foot) - dorsiflexion) > 1e-3
    # untwisted: the twist argument at 0 is the paper's formula to the bit
    assert ankle_dorsiflexion(R_lower, rot_z(0.1), 0.0) == ankle_dorsiflexion(R_lower, rot_z(0.1))


def test_base_pose_features_read_each_ankles_twist():
    from musclewalk.control.rotations import rot_y
    from musclewalk.control.targets import base_pose_features

    R = np.repeat(np.eye(3)[None], 7, axis=0)
    R[5], R[6] = rot_y(-0.26), rot_y(0.26)  # right foot turned out (toward +Z), left mirrored
    base = base_pose_features(np.zeros((7, 3)), R, 0, None, [1, 2], [3, 4], [5, 6])
    np.testing.assert_allclose(base["ankle_twist"], [-0.26, 0.26])
    untwisted = base_pose_features(
        np.zeros((7, 3)), np.repeat(np.eye(3)[None], 7, axis=0), 0, None, [1, 2], [3, 4], [5, 6]
    )
    assert untwisted["ankle_twist"] == [0.0, 0.0] and all(
        np.copysign(1, a) == 1 for a in untwisted["ankle_twist"]
    )


def test_a_twisted_ankles_swing_foot_aims_its_own_neutral_yaw():
    """Eq 29's foot target faces the trunk's heading plus the ankle's twist, so that a foot turned
    out by a tibial torsion is not pulled back in line with the leg; the other targets stay."""
    from control_synth import BODIES

    from musclewalk.control import Controller, ControlModel
    from musclewalk.control.controller import _FOOT
    from musclewalk.control.rotations import yaw_pitch_roll

    cm = build_creature().model
    twisted = ControlModel.from_dict({**cm.to_dict(), "ankle_twist": [-0.26, 0.26]})
    assert ControlModel.from_dict(twisted.to_dict()).ankle_twist == (-0.26, 0.26)
    R = np.repeat(np.eye(3)[None], len(BODIES), axis=0)
    feet = [_FOOT[0], _FOOT[1]]

    def targets(model):
        knee = np.repeat(np.eye(3)[None], 2, axis=0)
        return Controller(model, {})._target_orientations(R, 0.5, 0.3, 0.0, 0.0, [0.2, 0.2], [0.0, 0.0], knee)

    paper, turned = targets(cm), targets(twisted)
    np.testing.assert_allclose(yaw_pitch_roll(turned)[0][feet], [0.5 - 0.26, 0.5 + 0.26])
    np.testing.assert_allclose(yaw_pitch_roll(turned)[1][feet], yaw_pitch_roll(paper)[1][feet])
    others = [k for k in range(len(paper)) if k not in feet]
    np.testing.assert_array_equal(turned[others], paper[others])


def test_swing_foot_release_hands_the_foot_pitch_at_the_start_of_swing_over_to_eq_29s_target():
    """swing_foot.release_time (beyond the paper): the foot's pitch error when swing starts fades
    out linearly over the release time, through stance preparation too; 0 is eq 29's target."""
    from control_synth import base_sensors

    from musclewalk.control import Controller
    from musclewalk.control.targets import foot_pitch

    creature = build_creature()
    foot = creature.model.foot_body[1]

    def targets(release_time):
        controller = Controller(creature.model, {"swing_foot.release_time": release_time, "ankle.theta": 0.1})
        controller.reset(("stance", "lift_off"))
        rows = []
        for t in (0.0, 0.05, 0.1, 0.3):
            sensors = base_sensors(creature, t=t)  # the left foot off the ground: lift-off ends
            sensors.body_R[foot] = rot_z(-0.3)  # toes down
            if t > 0.05:
                sensors.foot_pos[1, 0] = 0.6  # ahead of the COM: stance preparation
            controller.step(sensors)
            rows.append((controller.leg_states[1], controller.log_row()["foot_pitch_target_l"]))
        return rows, foot_pitch(sensors.body_R[foot])

    paper, pitch = targets(0.0)
    assert [target for _, target in paper] == [0.1] * 4
    released, _ = targets(0.2)
    assert released[0][0] == released[1][0] == "swing"
    assert released[-1][0] == "stance_preparation"  # the fade carries on after swing
    error = pitch - 0.1
    assert error < -0.2
    assert [target for _, target in released] == pytest.approx(
        [0.1 + error, 0.1 + 0.75 * error, 0.1 + 0.5 * error, 0.1]
    )
