import numpy as np
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
