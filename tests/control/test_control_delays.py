import numpy as np
import pytest
from control_synth import base_sensors, build_creature, zero_constants

from musclewalk.control import Controller, DelayLine, delay_steps_from_seconds
from musclewalk.control.rotations import facing_rotations


def test_delay_line_shifts_an_impulse_by_exactly_its_length():
    delays = np.array([0, 1, 5, 20])
    line = DelayLine(delays)
    impulse_at = 3
    outputs = []
    for k in range(40):
        x = np.full(4, 1.0 if k == impulse_at else 0.0)
        outputs.append(line.push(x).copy())
    outputs = np.array(outputs)
    for ch, d in enumerate(delays):
        assert np.flatnonzero(outputs[:, ch]).tolist() == [impulse_at + d]


def test_delay_line_starts_with_zeros_and_resets():
    line = DelayLine([2])
    assert line.push(np.array([5.0]))[0] == 0.0
    assert line.push(np.array([6.0]))[0] == 0.0
    assert line.push(np.array([7.0]))[0] == 5.0
    line.reset()
    assert line.push(np.array([8.0]))[0] == 0.0


def test_delay_steps_must_be_integral():
    np.testing.assert_array_equal(delay_steps_from_seconds([0.005, 0.010, 0.020], 0.001), [5, 10, 20])
    np.testing.assert_array_equal(delay_steps_from_seconds([0.005, 0.010, 0.020], 0.0025), [2, 4, 8])
    with pytest.raises(ValueError, match="soleus"):
        delay_steps_from_seconds([0.020], 0.003, names=["soleus"])
    with pytest.raises(ValueError, match="integer multiple"):
        build_creature(dt=0.003)


def test_force_feedback_reaches_the_muscle_after_its_delay():
    """Eq 23: u = k_F+ F(t - Δ) / F_max; soleus Δ = 20 ms, vasti 10 ms, at dt = 1 ms."""
    creature = build_creature()
    ix = creature.index
    params = zero_constants(creature.model)
    params.update({"fplus.soleus": 1.5, "fplus.vasti": 0.8})
    ctrl = Controller(creature.model, params=params, speed=0.0)
    force_on = 5  # step at which the measured force appears
    soleus, vasti = [], []
    for k in range(40):
        s = base_sensors(creature, t=k * 0.001)
        if k >= force_on:
            s.muscle_force[ix("soleus_r")] = 400.0
            s.muscle_force[ix("vasti_r")] = 500.0
        u = ctrl.step(s)
        soleus.append(u[ix("soleus_r")])
        vasti.append(u[ix("vasti_r")])
    soleus, vasti = np.array(soleus), np.array(vasti)
    assert np.all(soleus[: force_on + 20] == 0.0)
    np.testing.assert_allclose(soleus[force_on + 20 :], 1.5 * 400.0 / 1000.0)
    assert np.all(vasti[: force_on + 10] == 0.0)
    np.testing.assert_allclose(vasti[force_on + 10 :], 0.8 * 500.0 / 1000.0)


def test_constant_and_lift_off_excitations_are_not_delayed():
    creature = build_creature()
    ix = creature.index
    params = zero_constants(creature.model)
    params.update(
        {"const.stance.hip_flexor": 0.2, "lift.hip": 0.3, "lift.knee": -0.1, "const.stance.vasti": 0.25}
    )
    ctrl = Controller(creature.model, params=params, speed=0.0)
    ctrl.reset(("stance", "stance_preparation"))
    s = base_sensors(creature, contact=(True, True))
    s.foot_pos[0, 0] = -0.2  # right foot behind: rear leg at dual stance
    s.foot_pos[1, 0] = 0.2
    s.body_R[0] = facing_rotations(0.0, -0.1, 0.0)[0]  # trunk leans forward: stance hip feedback
    u = ctrl.step(s)  # first step: every delay buffer is still empty
    assert ctrl.leg_states == ("lift_off", "stance")
    assert u[ix("hip_flexor_r")] == pytest.approx(0.2 + 0.3)
    assert u[ix("hip_extensor_r")] == 0.0  # 0 - 0.3, clipped
    assert u[ix("hamstrings_r")] == 0.0  # hip extensor too
    assert u[ix("hip_abductor_r")] == 0.0  # neither flexor nor extensor: no lift constant
    assert u[ix("vasti_r")] == pytest.approx(0.25 - 0.1)
    # stance leg: trunk feedback was computed this step but is still in the delay line
    assert ctrl.feedback[ix("hip_extensor_l")] > 0.0
    assert u[ix("hip_extensor_l")] == 0.0
    assert u[ix("hip_flexor_l")] == pytest.approx(0.2)
