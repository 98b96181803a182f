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


def _knee_inhibition_feedback(gain: float, flexion: float, flexion_rate: float) -> np.ndarray:
    """Feedback of the synthetic creature, right leg in stance, its knee at ``flexion`` (rad) and
    ``flexion_rate`` (rad/s, negative = extending)."""
    from control_synth import base_sensors, zero_constants

    from musclewalk.control import Controller
    from musclewalk.control.rotations import rot_z

    creature = build_creature()
    params = zero_constants(creature.model)
    params.update({"knee_overextension.gain": gain, "knee_overextension.theta_off": 0.2})
    controller = Controller(creature.model, params)
    sensors = base_sensors(creature)
    lower_r = creature.model.lower_body[0]
    sensors.body_R[lower_r] = rot_z(-flexion)
    sensors.body_omega[lower_r] = (0.0, 0.0, -flexion_rate)
    controller.step(sensors)
    return controller.feedback.copy()


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


def _swing_ankle_feedback(follow_shank: float, shank_pitch: float) -> np.ndarray:
    """Feedback of the left (swing) leg's ankle muscles with its lower leg and foot both pitched
    by ``shank_pitch`` (the ankle angle as in the base pose)."""
    from control_synth import base_sensors, zero_constants

    from musclewalk.control import Controller
    from musclewalk.control.rotations import rot_z

    creature = build_creature()
    params = zero_constants(creature.model)
    params["swing_foot.follow_shank"] = follow_shank
    controller = Controller(creature.model, params)
    sensors = base_sensors(creature)
    for body in (creature.model.lower_body[1], creature.model.foot_body[1]):
        sensors.body_R[body] = rot_z(shank_pitch)
    for _ in range(30):  # past the ankle muscles' 20 ms delay
        controller.step(sensors)
    ix = creature.index
    return controller.feedback[[ix("tibialis_anterior_l"), ix("soleus_l")]].copy()


def test_a_swing_foot_that_follows_the_shank_keeps_the_ankle_angle():
    base = _swing_ankle_feedback(1.0, 0.0)
    np.testing.assert_allclose(_swing_ankle_feedback(1.0, -0.3), base, atol=1e-9)
    # the paper's target (relative to the ground) pulls the pitched foot back up
    assert not np.allclose(_swing_ankle_feedback(0.0, -0.3), base, atol=1e-3)


def test_swing_foot_pitch_targets():
    from musclewalk.control.targets import swing_foot_pitch_targets

    assert swing_foot_pitch_targets(0.1, 0.0, (-0.4, 0.2), 0.0) == (0.1, 0.1)
    assert swing_foot_pitch_targets(0.1, 0.5, (-0.4, 0.2), -0.2) == pytest.approx((0.0, 0.3))
