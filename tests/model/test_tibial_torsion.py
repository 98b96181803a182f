"""The humanoid legs' tibial torsion (a joint `twist` about the parent's vertical): the foot turned
outward on both sides, the controller told so, and the paper's creatures unchanged."""

from pathlib import Path

import numpy as np
import pytest

from musclewalk.control.rotations import rot_y
from musclewalk.model.build import build_creature
from musclewalk.model.meta import load_meta, meta_path
from musclewalk.model.template import load_creature
from musclewalk.sim.bridge import control_model_from_meta

REPO = Path(__file__).resolve().parents[2]
TORSION_15 = REPO / "config/experiments/creatures/human_tibial_torsion_15.yaml"


def test_the_paper_humans_ankles_are_untwisted_and_write_no_negative_zero():
    for name in ("Human", "HumanLegs"):
        for joint in load_creature(name).joints:
            assert all(np.copysign(1.0, a) == 1.0 for a in joint.orientation), joint.name


def test_a_torsion_turns_each_foot_outward_in_the_base_pose(tmp_path):
    spec = load_creature(str(TORSION_15))
    ankles = {j.name: j.orientation for j in spec.joints if j.kind == "ankle"}
    twist = np.radians(15.0)
    np.testing.assert_allclose(ankles["ankle_r"], [0.0, -twist, 0.0])
    np.testing.assert_allclose(ankles["ankle_l"], [0.0, twist, 0.0])
    assert all(not j.orientation.any() for j in spec.joints if j.kind == "toe")  # toes turn with the foot

    osim = tmp_path / "torsion.osim"
    build_creature(str(TORSION_15), None, osim)
    meta = load_meta(meta_path(osim))
    for side, sign in (("r", -1.0), ("l", 1.0)):
        foot = np.reshape(meta.base_pose[f"foot_{side}"].R, (3, 3))
        np.testing.assert_allclose(foot, rot_y(sign * twist), atol=1e-12)
        forward = foot[:, 0]  # the foot's long axis: outward is +Z on the right, -Z on the left
        assert -sign * forward[2] == pytest.approx(np.sin(twist))
    cm = control_model_from_meta(meta, 0.005)
    np.testing.assert_allclose(cm.ankle_twist, [-twist, twist], atol=1e-12)


def test_the_paper_humans_controller_sees_no_twist(built_models):
    cm = control_model_from_meta(load_meta(meta_path(built_models["Human"])), 0.005)
    assert cm.ankle_twist == (0.0, 0.0)
