import math

import numpy as np
import pytest
from control_synth import LEG_LENGTH, MASS, base_sensors

from musclewalk.control import Controller, LegState, next_leg_states
from musclewalk.control.rotations import facing_rotations

ST, LO, SW, PR = LegState.STANCE, LegState.LIFT_OFF, LegState.SWING, LegState.STANCE_PREPARATION
D_LIFT, D_PREP = -0.3, 0.0


def test_rear_leg_lifts_off_at_dual_stance():
    # left lands in front (prep -> stance); the right leg, behind, lifts off in the same step
    assert next_leg_states([ST, PR], [True, True], [-0.2, 0.2], D_LIFT, D_PREP) == [LO, ST]
    # the front stance leg stays
    assert next_leg_states([ST, ST], [True, True], [0.1, -0.1], D_LIFT, D_PREP) == [ST, LO]


def test_stance_lifts_off_when_foot_far_behind():
    assert next_leg_states([ST, SW], [True, False], [-0.29, -0.1], D_LIFT, D_PREP) == [ST, SW]
    assert next_leg_states([ST, SW], [True, False], [-0.31, -0.1], D_LIFT, D_PREP) == [LO, SW]


def test_lift_off_to_swing_on_contact_loss_only():
    assert next_leg_states([LO, ST], [True, True], [-0.4, 0.1], D_LIFT, D_PREP) == [LO, ST]
    assert next_leg_states([LO, ST], [False, True], [-0.4, 0.1], D_LIFT, D_PREP) == [SW, ST]


def test_swing_to_preparation_when_foot_ahead_and_scuffing_ignored_in_swing():
    assert next_leg_states([SW, ST], [False, True], [-0.05, 0.0], D_LIFT, D_PREP) == [SW, ST]
    # a touch-down behind the COM is a scuff
    assert next_leg_states([SW, ST], [True, True], [-0.05, 0.0], D_LIFT, D_PREP) == [SW, ST]
    assert next_leg_states([SW, ST], [False, True], [0.05, 0.0], D_LIFT, D_PREP) == [PR, ST]


def test_swing_foot_landing_ahead_of_the_com_is_stance():
    # before d_S > d_prep: the landed leg takes the load, the other becomes the rear leg
    assert next_leg_states([SW, ST], [True, True], [0.02, -0.1], D_LIFT, 0.1) == [ST, LO]
    # landing behind the COM, even ahead of a rear foot in lift-off, is a scuff
    assert next_leg_states([SW, LO], [True, True], [-0.1, -0.3], D_LIFT, D_PREP) == [SW, LO]


def test_preparation_to_stance_on_contact():
    assert next_leg_states([PR, ST], [False, True], [0.3, -0.1], D_LIFT, D_PREP) == [PR, ST]
    assert next_leg_states([PR, ST], [True, True], [0.3, -0.1], D_LIFT, D_PREP)[0] == ST
    # the paper: a contact behind the COM too (stance preparation from d_S > d_prep < 0)
    assert next_leg_states([PR, ST], [True, True], [-0.05, 0.1], D_LIFT, -0.1)[0] == ST


def test_preparation_scuff_behind_the_touchdown_distance_is_ignored():
    """fsm.prep_touchdown_ahead (beyond the paper): a stance-preparation foot that touches the
    ground at or behind d_touch while the other leg is in stance scuffs; ahead of it, or with the
    other leg out of stance, it lands."""
    assert next_leg_states([PR, ST], [True, True], [-0.05, 0.1], D_LIFT, -0.1, 0.0) == [PR, ST]
    assert next_leg_states([PR, ST], [True, True], [0.0, 0.1], D_LIFT, -0.1, 0.0) == [PR, ST]
    assert next_leg_states([PR, ST], [True, True], [0.02, 0.1], D_LIFT, -0.1, 0.0)[0] == ST
    assert next_leg_states([PR, ST], [True, True], [-0.05, 0.1], D_LIFT, -0.1, -0.1)[0] == ST
    # the stance leg stays in stance (no dual stance while the other scuffs) ...
    assert next_leg_states([PR, ST], [True, True], [0.0, 0.1], D_LIFT, -0.1, 0.1)[1] == ST
    # ... and once it has left stance, the preparation foot on the ground carries the body
    assert next_leg_states([PR, LO], [True, True], [0.05, -0.3], D_LIFT, -0.1, 0.1) == [ST, LO]
    assert next_leg_states([ST, PR], [True, True], [-0.5, 0.05], D_LIFT, -0.1, 0.1) == [LO, PR]


def test_controller_reads_the_touchdown_distance_in_leg_lengths(creature):
    off = Controller(creature.model)
    assert off._d_touch is None
    on = Controller(creature.model, {"fsm.prep_touchdown_ahead": 0.1})
    assert on._d_touch == pytest.approx(0.1 * LEG_LENGTH)


def _sensors(creature, t, foot_x, contact, com_x=0.0, grf=MASS * 9.81):
    s = base_sensors(creature, t=t)
    s.foot_pos[:, 0] = foot_x
    s.com_pos[0] = com_x
    s.foot_grf[:, 1] = [grf if c else 0.0 for c in contact]
    return s


def test_full_cycle_through_controller(creature):
    """A synthetic walking step sequence drives both legs round the cycle."""
    ctrl = Controller(creature.model, speed=1.0)
    assert ctrl.leg_states == ("stance", "swing")
    L = LEG_LENGTH
    seq = [
        # (right foot x, left foot x, contact r, l, expected states)
        ((0.0, -0.2 * L), (True, False), ("stance", "swing")),
        ((0.0, 0.05 * L), (True, False), ("stance", "stance_preparation")),
        ((0.0, 0.1 * L), (True, False), ("stance", "stance_preparation")),
        ((-0.1 * L, 0.2 * L), (True, True), ("lift_off", "stance")),
        ((-0.1 * L, 0.2 * L), (True, True), ("lift_off", "stance")),
        ((-0.1 * L, 0.2 * L), (False, True), ("swing", "stance")),
        ((0.05 * L, 0.0), (False, True), ("stance_preparation", "stance")),
        ((0.3 * L, -0.1 * L), (True, True), ("stance", "lift_off")),
        ((0.3 * L, -0.1 * L), (True, False), ("stance", "swing")),
    ]
    for k, (feet, contact, expected) in enumerate(seq):
        ctrl.step(_sensors(creature, k * 0.001, np.array(feet), contact))
        assert ctrl.leg_states == expected, f"step {k}"
        row = ctrl.log_row()
        assert (row["state_r"], row["state_l"]) == expected


def test_d_lift_path_and_contact_threshold(creature):
    ctrl = Controller(creature.model, params={"fsm.contact_force": 0.1, "fsm.d_lift": -0.3})
    ctrl.reset(("stance", "stance_preparation"))
    # left foot touches with 5 % body weight: below the 10 % threshold, so no contact
    ctrl.step(_sensors(creature, 0.0, np.array([0.0, 0.2]), (True, True), grf=0.05 * MASS * 9.81))
    assert ctrl.leg_states == ("stance", "stance_preparation")
    # right foot 0.35 L behind the COM: lift-off by d_lift alone
    ctrl.step(_sensors(creature, 0.001, np.array([-0.35 * LEG_LENGTH, 0.2]), (True, False)))
    assert ctrl.leg_states == ("lift_off", "stance_preparation")


def test_d_s_is_measured_along_the_facing_direction(creature):
    """Trunk turned 90 deg left faces -Z: a foot at smaller z is ahead of the COM."""
    ctrl = Controller(creature.model)
    s = _sensors(creature, 0.0, np.array([0.0, 0.0]), (True, False))
    s.body_R[0] = facing_rotations(math.pi / 2, 0.0, 0.0)[0]
    s.foot_pos[1] = [0.0, 0.0, -0.2]  # ahead along -Z
    ctrl.step(s)
    assert ctrl.leg_states == ("stance", "stance_preparation")
    assert ctrl.log_row()["d_S_l"] == pytest.approx(0.2)
    assert ctrl.log_row()["trunk_heading"] == pytest.approx(math.pi / 2)
