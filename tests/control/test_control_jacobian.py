import math

import numpy as np
import pytest
from control_synth import BODY_LINKS, base_sensors, zero_constants
from scipy.spatial.transform import Rotation

from musclewalk.control import Controller, crossing_segment, moment_arm_vectors
from musclewalk.control.jacobian import equal_activation_factors, feature_muscle_forces
from musclewalk.control.rotations import facing_rotations, heading_of, rotation_log, yaw_pitch_roll
from musclewalk.model.kinematics import bodies_beyond

DELAY_MAX = 20


# eq 9 -------------------------------------------------------------------------------------------


def pair_moments(force, torque, body_pos, joint_pos):
    """Reference form of eq 17's moment per pair, all (n_pairs, 3): T̃_b + (P_b - j_k) x F̃_b, so
    that τ̃_k = σ_k r̂_k . moment (using (r̂ x d) . F = r̂ . (d x F))."""
    return torque + np.cross(body_pos - joint_pos, force)


def test_moment_arm_vectors_planar_hand_values():
    joints = np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 0.0]])
    points = np.array(
        [
            [0.05, -0.2, 0.0],
            [0.05, 0.2, 0.0],  # vertical segment 5 cm in front of joint 0
            [0.1, -0.1, 0.0],
            [0.0, 0.1, 0.0],  # tilted segment, joint 0
            [0.9, 1.0, 0.0],
            [1.0, 1.2, 0.0],  # joint 1: child point left of it, going up-right
        ]
    )
    pair_points = np.array([[0, 1], [2, 3], [4, 5]])
    r = moment_arm_vectors(points, pair_points, joints, np.array([0, 0, 1]))
    # (p_c - j) x s_hat, s_hat from the child-side point to the parent-side point
    np.testing.assert_allclose(r[0], [0.0, 0.0, 0.05], atol=1e-12)
    np.testing.assert_allclose(r[1], [0.0, 0.0, 0.1 / math.sqrt(5.0)], atol=1e-12)
    np.testing.assert_allclose(r[2], [0.0, 0.0, -0.2 / math.sqrt(5.0)], atol=1e-12)
    # any point of the segment gives the same r; reversing the segment flips it
    r_parent_point = np.cross(
        points[3] - joints[0], (points[3] - points[2]) / np.linalg.norm(points[3] - points[2])
    )
    np.testing.assert_allclose(r[1], r_parent_point, atol=1e-12)
    r_rev = moment_arm_vectors(points, pair_points[:, ::-1], joints, np.array([0, 0, 1]))
    np.testing.assert_allclose(r_rev, -r, atol=1e-12)


def test_crossing_segment_and_subtree():
    # trunk(0) -> upper_r(3) -> lower_r(4) -> foot_r(5)
    assert bodies_beyond(BODY_LINKS, 3) == [3, 4, 5]
    assert bodies_beyond(BODY_LINKS, 1) == [1, 2]
    path = [0, 3, 3, 4]  # trunk, thigh, thigh, shank
    assert crossing_segment(path, {3, 4, 5}) == (1, 0)  # hip
    assert crossing_segment(path, {4, 5}) == (3, 2)  # knee
    assert crossing_segment([4, 0], {4, 5}) == (0, 1)  # child point first in path order
    with pytest.raises(ValueError):
        crossing_segment(path, {5})


def test_rotation_log_matches_scipy():
    rng = np.random.default_rng(1)
    rots = Rotation.random(50, random_state=rng)
    extra = Rotation.from_rotvec(
        [[0, 0, 0], [1e-9, 0, 0], [math.pi - 1e-6, 0, 0], [0, math.pi, 0], [0.0, 2.0, 2.3]]
    )
    mats = np.concatenate([rots.as_matrix(), extra.as_matrix()])
    ours = rotation_log(mats)
    back = Rotation.from_rotvec(ours).as_matrix()
    np.testing.assert_allclose(back, mats, atol=1e-6)
    assert np.all(np.linalg.norm(ours, axis=1) <= math.pi + 1e-9)


def test_yaw_pitch_roll_round_trip():
    yaw, pitch, roll = np.array([0.3, -2.0]), np.array([0.4, -1.2]), np.array([-0.7, 2.5])
    out = yaw_pitch_roll(facing_rotations(yaw, pitch, roll))
    np.testing.assert_allclose(np.array(out), [yaw, pitch, roll], atol=1e-12)


def test_heading_is_the_yaw_whatever_the_pitch_and_roll():
    for yaw, pitch, roll in ((0.3, 0.4, -0.7), (-2.0, -1.2, 2.5), (math.pi / 2, 0.0, 0.0)):
        R = facing_rotations(yaw, pitch, roll)[0]
        assert heading_of(R) == pytest.approx(yaw, abs=1e-12)
        assert heading_of(R) == float(yaw_pitch_roll(R)[0])


def test_equal_activation_shares_a_joint_torque_by_capacity():
    """At weight 1 every muscle crossing a joint gets the same activation per newton metre along its
    own direction (the joint's torque over its mean F_max ||r||); at 0 it is eq 18, each muscle
    asked for the whole torque alone; pairs below the moment-arm floor take no share."""
    r = np.array([[0.0, 0.0, 0.05], [0.0, 0.0, 0.02], [0.0, 0.0, -0.04], [0.0, 0.0, 1e-4], [0.03, 0.0, 0.0]])
    fmax = np.array([1000.0, 500.0, 2000.0, 800.0, 300.0])
    joint = np.array([0, 0, 0, 0, 1])
    muscle = np.arange(5)
    np.testing.assert_array_equal(equal_activation_factors(r, fmax, joint, 2, 0.0), np.ones(5))
    factor = equal_activation_factors(r, fmax, joint, 2, 1.0)
    mean0 = (50.0 + 10.0 + 80.0) / 3  # F_max ||r|| of joint 0's three valid pairs
    np.testing.assert_allclose(factor, [50.0 / mean0, 10.0 / mean0, 80.0 / mean0, 0.0, 1.0])
    moment = np.tile([0.0, 0.0, 12.0], (5, 1))
    weight = 1.0 / fmax  # m = 1; eq 19's 1 / F_max folded in
    activation = feature_muscle_forces(moment, r, weight, muscle, 5, pair_factor=factor)
    np.testing.assert_allclose(activation, [12.0 / mean0, 12.0 / mean0, -12.0 / mean0, 0.0, 0.0])
    paper = feature_muscle_forces(moment, r, weight, muscle, 5)
    np.testing.assert_allclose(paper, [12.0 / 50.0, 12.0 / 10.0, -12.0 / 80.0, 0.0, 0.0])
    half = feature_muscle_forces(
        moment, r, weight, muscle, 5, pair_factor=equal_activation_factors(r, fmax, joint, 2, 0.5)
    )
    np.testing.assert_allclose(half, 0.5 * (activation + paper))


def test_feature_forces_parent_side_sign_and_averaging():
    """Eq 17-18: σ = -1 flips the torque; a muscle spanning 2 joints gets τ̃/(2||r||)."""
    r = np.array([[0.0, 0.0, 0.05], [0.0, 0.0, 0.05], [0.0, 0.0, 1e-4]])
    torque = np.array([[0.0, 0.0, 10.0], [0.0, 0.0, 10.0], [0.0, 0.0, 10.0]])
    zero = np.zeros((3, 3))
    moment = pair_moments(zero, torque, zero, zero)
    # weights σ/m; the third pair's moment arm is below the 1 mm floor and is ignored
    f = feature_muscle_forces(moment, r, np.array([1.0, -0.5, 1.0]), np.array([0, 1, 1]), 2)
    np.testing.assert_allclose(f, [10.0 / 0.05, -10.0 / 0.05 / 2])
    # force term: r_hat x (P - j) . F ; body 1 m above the joint, horizontal force 5 N along +X
    moment = pair_moments(
        np.array([[5.0, 0, 0]]), np.zeros((1, 3)), np.array([[0.0, 1.0, 0]]), np.zeros((1, 3))
    )
    f = feature_muscle_forces(moment, r[:1], np.array([1.0]), np.array([0]), 1)
    # z_hat x (0,1,0) = (-1,0,0): pushing +X needs a negative torque about +Z
    np.testing.assert_allclose(f, [-5.0 / 0.05])


@pytest.mark.parametrize("equal_activation", [0.0, 0.6])
def test_controller_matches_reference_jt_for_every_active_feature(creature, equal_activation):
    """Recompute eq 14-19 feature by feature with the reference helpers and compare (with the
    capacity share of jt_equal_activation blended in at weight 0.6)."""
    from musclewalk.control.jacobian import pd_force, pd_torque
    from musclewalk.control.rotations import rot_z

    rng = np.random.default_rng(3)
    cm = creature.model
    s = base_sensors(creature)
    s.foot_pos[1, 0] = 0.2  # left leg -> stance preparation: trunk, upper, lower, foot, head all active
    s.body_R = Rotation.from_rotvec(rng.normal(0, 0.2, (9, 3))).as_matrix()
    s.body_R[0] = facing_rotations(0.0, 0.05, 0.03)[0]  # keep the heading at 0
    s.body_omega = rng.normal(0, 1, (9, 3))
    s.body_vel = rng.normal(0, 0.5, (9, 3))
    s.body_pos = s.body_pos + rng.normal(0, 0.02, (9, 3))
    p = zero_constants(cm)
    p["jt_equal_activation.weight"] = equal_activation
    ctrl = Controller(cm, params=p, speed=1.0, heading=0.0)
    ctrl.step(s)
    assert ctrl.leg_states == ("stance", "stance_preparation")
    row = ctrl.log_row()
    prm = ctrl.params
    M, g, L = 70.0, 9.81, 0.9
    T, W = M * g * L, M * g * L * math.sqrt(L / g)
    targets = {  # body: (target R, kq, kw, σ, joints, force)
        "trunk": (
            facing_rotations(0.0, -row["trunk_lean_target"], -row["trunk_side_lean_target"])[0],
            prm["gain.trunk.kq"] * T,
            prm["gain.trunk.kw"] * W,
            -1.0,
            ["hip_r"],
            None,
        ),
        "upper_l": (
            facing_rotations(0.0, row["hip_flexion_target_l"], row["hip_abduction_target_l"])[0],
            prm["gain.prep.kq"] * T,
            prm["gain.prep.kw"] * W,
            1.0,
            ["hip_l"],
            None,
        ),
        "lower_l": (
            s.body_R[6] @ rot_z(-prm["knee.theta"]),
            prm["gain.knee.kq"] * T,
            0.0,
            1.0,
            ["knee_l"],
            None,
        ),
        "foot_l": (
            facing_rotations(0.0, prm["ankle.theta"], 0.0)[0],
            prm["gain.ankle.kq"] * T,
            0.0,
            1.0,
            ["ankle_l"],
            None,
        ),
        "head": (
            np.eye(3),
            prm["gain.head.kq"] * T,
            prm["gain.head.kw"] * W,
            1.0,
            ["lumbar", "neck"],
            pd_force(
                prm["gain.head.kp"] * M * g / L,
                prm["gain.head.kv"] * M * g / math.sqrt(g * L),
                s.body_pos[0] + s.body_R[0] @ cm.head_offset,
                s.body_pos[2],
                [1.0, 0.0, 0.0],
                s.body_vel[2],
            ),
        ),
    }
    body_index = {n: i for i, n in enumerate(cm.body_names)}
    expected = np.zeros(cm.n_muscles)
    r = s.pair_r
    fmax = np.array([m.fmax for m in cm.muscles])
    capacity = fmax[cm.pair_muscle] * np.linalg.norm(r, axis=1)
    joint_mean = {j: capacity[cm.pair_joint == j].mean() for j in set(cm.pair_joint.tolist())}
    for body, (target, kq, kw, sigma, joints, force) in targets.items():
        b = body_index[body]
        torque = pd_torque(kq, kw, target, s.body_R[b], np.zeros(3), s.body_omega[b])
        for k in range(cm.n_pairs):
            if cm.joints[cm.pair_joint[k]].name not in joints:
                continue
            m = cm.pair_muscle[k]
            moment = torque + (
                np.cross(s.body_pos[b] - s.joint_pos[cm.pair_joint[k]], force) if force is not None else 0
            )
            share = capacity[k] / joint_mean[cm.pair_joint[k]]
            factor = 1.0 - equal_activation + equal_activation * share
            expected[m] += factor * sigma * (r[k] @ moment) / (cm.n_spanned[m] * (r[k] @ r[k])) / 1000.0
    np.testing.assert_allclose(ctrl.feedback, expected, rtol=1e-9, atol=1e-12)
    # all 18 muscles but the stance leg's knee/ankle muscles (no feature there; F+ is zero at 0 N)
    assert np.count_nonzero(expected) == 14


# JT signs through the controller ---------------------------------------------------------------


def _settled_feedback(creature, sensors, params=None, initial=("stance", "swing"), speed=0.0, heading=0.0):
    """Run past the longest delay with constant sensors; return the controller."""
    p = zero_constants(creature.model)
    p.update(params or {})
    ctrl = Controller(creature.model, params=p, speed=speed, heading=heading)
    ctrl.reset(initial)
    for k in range(DELAY_MAX + 1):
        sensors.t = k * creature.model.dt
        ctrl.step(sensors)
    return ctrl


def _trunk_pitched(creature, lean_forward, side_lean_left=0.0, contact=(True, False)):
    s = base_sensors(creature, contact=contact)
    s.body_R[0] = facing_rotations(0.0, -lean_forward, -side_lean_left)[0]
    return s


def test_stance_trunk_pitch_correction_excites_the_right_hip_muscles(creature):
    ix = creature.index
    fwd = _settled_feedback(creature, _trunk_pitched(creature, 0.1))
    # trunk leans too far forward -> backward correction -> stance hip extensors
    assert fwd.feedback[ix("hip_extensor_r")] > 0.0 > fwd.feedback[ix("hip_flexor_r")]
    assert fwd.feedback[ix("hamstrings_r")] > 0.0
    assert fwd.excitation[ix("hip_extensor_r")] > fwd.excitation[ix("hip_flexor_r")] == 0.0
    back = _settled_feedback(creature, _trunk_pitched(creature, -0.1))
    assert back.feedback[ix("hip_flexor_r")] > 0.0 > back.feedback[ix("hip_extensor_r")]
    assert back.excitation[ix("hip_flexor_r")] > back.excitation[ix("hip_extensor_r")]
    # eq 15-19 magnitude for the single-joint flexor: the forward correction is a rotation of 0.1 rad
    # about -Z, T = kq M g L * 0.1 * (-Z); the torque on the trunk per newton is -r (parent side)
    r = creature.pair_r()
    p_flex = int(np.flatnonzero(creature.model.pair_muscle == ix("hip_flexor_r"))[0])
    torque = np.array([0.0, 0.0, -back.params["gain.trunk.kq"] * 70.0 * 9.81 * 0.9 * 0.1])
    expected = (-r[p_flex]) @ torque / (r[p_flex] @ r[p_flex]) / 1000.0
    assert back.feedback[ix("hip_flexor_r")] == pytest.approx(expected, rel=1e-6)


def test_trunk_feedback_uses_only_the_stance_hip(creature):
    ix = creature.index
    right = _settled_feedback(creature, _trunk_pitched(creature, 0.1), initial=("stance", "swing"))
    left = _settled_feedback(
        creature, _trunk_pitched(creature, 0.1, contact=(False, True)), initial=("swing", "stance")
    )
    assert right.feedback[ix("hip_extensor_r")] > 0.0
    assert left.feedback[ix("hip_extensor_l")] == pytest.approx(right.feedback[ix("hip_extensor_r")])
    # the swing leg's hip muscles follow the upper-leg target, not the trunk: no change with trunk lean
    level = _settled_feedback(creature, _trunk_pitched(creature, 0.0))
    assert right.feedback[ix("hip_extensor_l")] == pytest.approx(level.feedback[ix("hip_extensor_l")])


def test_coronal_trunk_correction_left_right_mirror(creature):
    ix = creature.index
    # right stance, trunk leaning left -> correction to the right: right abductor pulls trunk right
    r_lean_left = _settled_feedback(creature, _trunk_pitched(creature, 0.0, 0.1))
    r_lean_right = _settled_feedback(creature, _trunk_pitched(creature, 0.0, -0.1))
    assert r_lean_left.feedback[ix("hip_abductor_r")] > 0.0 > r_lean_right.feedback[ix("hip_abductor_r")]
    # mirror: left stance, trunk leaning right -> left abductor, same magnitude
    l_lean_right = _settled_feedback(
        creature, _trunk_pitched(creature, 0.0, -0.1, contact=(False, True)), initial=("swing", "stance")
    )
    l_lean_left = _settled_feedback(
        creature, _trunk_pitched(creature, 0.0, 0.1, contact=(False, True)), initial=("swing", "stance")
    )
    assert l_lean_right.feedback[ix("hip_abductor_l")] == pytest.approx(
        r_lean_left.feedback[ix("hip_abductor_r")]
    )
    assert l_lean_left.feedback[ix("hip_abductor_l")] < 0.0
    # a pure coronal correction does not load the sagittal hip muscles
    assert abs(r_lean_left.feedback[ix("hip_flexor_r")]) < 1e-9


def test_swing_upper_leg_target_flexes_the_hip(creature):
    ix = creature.index
    # left leg hanging straight, swing target ~0.4 rad flexion -> left hip flexor on, extensor off
    ctrl = _settled_feedback(
        creature, base_sensors(creature), {"swing.kd_sagittal": 0.0, "swing.kp_sagittal": 0.0}
    )
    assert ctrl.leg_states == ("stance", "swing")
    assert ctrl.feedback[ix("hip_flexor_l")] > 0.0 > ctrl.feedback[ix("hip_extensor_l")]
    # knee passive in swing (eq 28 only in preparation): vasti get nothing
    assert ctrl.feedback[ix("vasti_l")] == 0.0
    # leg already flexed beyond the target -> reversed
    s = base_sensors(creature)
    s.body_R[6] = facing_rotations(0.0, 0.8, 0.0)[0]
    ctrl = _settled_feedback(creature, s, {"swing.kd_sagittal": 0.0, "swing.kp_sagittal": 0.0})
    assert ctrl.feedback[ix("hip_extensor_l")] > 0.0 > ctrl.feedback[ix("hip_flexor_l")]


def test_preparation_knee_and_swing_ankle_targets(creature):
    ix = creature.index
    s = base_sensors(creature)
    s.foot_pos[1, 0] = 0.2  # left foot ahead: swing -> stance preparation
    flexed = _settled_feedback(creature, s, {"knee.theta": 0.5, "ankle.theta": 0.3})
    assert flexed.leg_states == ("stance", "stance_preparation")
    # knee target more flexed than the straight leg: extensor inhibited, flexors on
    assert flexed.feedback[ix("vasti_l")] < 0.0
    assert flexed.feedback[ix("gastrocnemius_l")] > 0.0 or flexed.feedback[ix("hamstrings_l")] > 0.0
    extended = _settled_feedback(creature, s, {"knee.theta": -0.2, "ankle.theta": 0.3})
    assert extended.feedback[ix("vasti_l")] > 0.0
    # foot target toes up: tibialis anterior on, soleus off
    assert flexed.feedback[ix("tibialis_anterior_l")] > 0.0 > flexed.feedback[ix("soleus_l")]
    toes_down = _settled_feedback(creature, s, {"ankle.theta": -0.3})
    assert toes_down.feedback[ix("soleus_l")] > 0.0 > toes_down.feedback[ix("tibialis_anterior_l")]


def test_head_feedback(creature):
    ix = creature.index
    s = base_sensors(creature)
    s.body_R[2] = facing_rotations(0.0, -0.2, 0.0)[0]  # head pitched forward (nose down)
    ctrl = _settled_feedback(creature, s)
    assert ctrl.feedback[ix("neck_extensor")] > 0.0 > ctrl.feedback[ix("neck_flexor")]
    s = base_sensors(creature)
    s.body_pos[2, 0] -= 0.05  # head behind its target: pull it forward
    ctrl = _settled_feedback(creature, s)
    assert ctrl.feedback[ix("neck_flexor")] > 0.0 > ctrl.feedback[ix("neck_extensor")]


def test_head_errors_in_the_controller_log(creature):
    """controller.csv shows the head's errors behind eq 14 and 22 (target minus actual): the
    target place over a yawed, leaning trunk, along a target heading that is not the x axis, and
    the head's pitch against a base-pose pitch that is not 0."""
    import dataclasses

    heading, speed = 0.5, 1.3
    tilted = dataclasses.replace(creature, model=dataclasses.replace(creature.model, head_pitch0=0.15))
    s = base_sensors(tilted)
    R_trunk = facing_rotations(0.3, -0.1, 0.05)[0]
    s.body_R[0] = R_trunk
    forward = np.array([math.cos(heading), 0.0, -math.sin(heading)])
    place = s.body_pos[0] + R_trunk @ tilted.model.head_offset
    s.body_pos[2] = place + 0.04 * forward - np.array([0.0, 0.03, 0.0])  # ahead of and below it
    s.body_vel[2] = (speed + 0.2) * forward
    s.body_R[2] = facing_rotations(heading, -0.35, 0.0)[0]  # nose down by 0.35 rad
    row = _settled_feedback(tilted, s, speed=speed, heading=heading).log_row()
    assert row["head_forward_error"] == pytest.approx(-0.04)
    assert row["head_up_error"] == pytest.approx(0.03)
    assert row["head_forward_speed_error"] == pytest.approx(-0.2)
    assert row["head_pitch_target"] == pytest.approx(0.15)
    assert row["head_pitch"] == pytest.approx(0.35)


def test_head_gains_in_units_of_the_head_chain_mass(creature):
    """A model whose head gains are in units of its head chain's mass (a neck of a few kilograms
    on a heavy creature) asks the head-chain muscles for that share of the whole-body feedback."""
    import dataclasses

    ix = creature.index
    s = base_sensors(creature)
    s.body_pos[2, 0] -= 0.05
    s.body_R[2] = facing_rotations(0.0, -0.2, 0.0)[0]
    body = _settled_feedback(creature, s).feedback
    share = 0.25
    light = dataclasses.replace(
        creature, model=dataclasses.replace(creature.model, head_gain_mass=share * creature.model.total_mass)
    )
    chain = _settled_feedback(light, s).feedback
    for name in ("neck_flexor", "neck_extensor"):
        assert body[ix(name)] != 0.0
        assert chain[ix(name)] == pytest.approx(share * body[ix(name)], rel=1e-9)
    assert chain[ix("vasti_l")] == body[ix("vasti_l")]  # the legs' gains keep the body's mass
