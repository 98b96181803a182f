"""The objective (eqs. 32-37) on synthetic trajectories, against hand-computed values: measures
integrated over t_max and averaged, thresholds applied after averaging, the termination penalty
(E_speed = 1, the others 0 for the rest of t_max) and v_base updated at contact initiations."""

import dataclasses
import math
from types import SimpleNamespace

import numpy as np
import pytest

from musclewalk.control.sensors import Sensors
from musclewalk.measures.metabolics import metabolic_rate, muscle_masses
from musclewalk.measures.objective import Objective, ObjectiveError, ObjectiveRecorder
from musclewalk.model.metadata import BodyPose
from musclewalk.sim.engine import MuscleState
from musclewalk.sim.scenario import Scenario

DT = 0.005
T_MAX = 0.05  # 10 control intervals
N = 10
TARGET = 2.0  # m/s
PSI = 0.3  # constant target heading, rad
FORWARD = np.array([math.cos(PSI), 0.0, -math.sin(PSI)])
SIDE = np.array([math.sin(PSI), 0.0, math.cos(PSI)])  # horizontal, perpendicular to FORWARD
BODY_MASS = 50.0
HEAD_OFFSET = np.array([0.0, 0.5, 0.0])  # head point on the trunk (no head body)
M_MUSCLES = muscle_masses([1000.0, 2500.0], [0.10, 0.05])


def rot_x(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def rot_y(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def rot_z(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


BASE_R = rot_z(0.1)  # the trunk's orientation in the base pose
KNEE0 = 0.1  # rad, the knee flexion of the leg bodies' frames in the base pose


class FakeBridge:
    def contact_velocities(self, raw):
        return raw.contact_vel


class FakeEngine:
    """Every muscle fully excited and active at optimal length, not moving:
    179 W/kg of muscle (activation 86.5 + maintenance 92.5), no shortening heat or work."""

    def muscle_states(self):
        return MuscleState(
            np.ones(2), np.ones(2), np.zeros(2), np.array([300.0, 700.0]), np.array([250.0, 650.0])
        )


EXCITATION = np.ones(2)
RATE = 1.51 * BODY_MASS + 179.0 * M_MUSCLES.sum()  # W
EFFORT = RATE / BODY_MASS  # W/kg, about 4.924


def fake_sim(muscle_model="millard"):
    meta = SimpleNamespace(  # the fields of a ModelMeta that the measures read
        total_mass=BODY_MASS,
        muscle_model=muscle_model,
        leg_length=1.0,
        base_pose={
            "trunk": BodyPose(R=tuple(BASE_R.ravel().tolist()), p=(0.0, 1.0, 0.0)),
            "pelvis": BodyPose(R=tuple(np.eye(3).ravel().tolist()), p=(0.0, 0.9, 0.0)),
        },
        bodies=[SimpleNamespace(name="trunk"), SimpleNamespace(name="pelvis")],
        muscles=[
            SimpleNamespace(max_isometric_force=1000.0, optimal_fiber_length=0.10),
            SimpleNamespace(max_isometric_force=2500.0, optimal_fiber_length=0.05),
        ],
    )
    cm = SimpleNamespace(
        trunk_body=0,
        head_body=None,
        head_offset=tuple(HEAD_OFFSET),
        upper_body=(2, 3),  # (right, left): only the landing-knee test gives these bodies
        lower_body=(4, 5),
        knee0=KNEE0,
    )
    return SimpleNamespace(meta=meta, control_model=cm, bridge=FakeBridge())


# ------------------------------------------------------------------ the synthetic trajectory
# contacts (vertical GRF, N; contact above 5 % body weight = 24.5 N): the right foot (0) stands,
# the left (1) swings, a 20 N brush at k=1 is no contact, the left lands at k=3, the right lifts
# at k=4 and lands again at k=7
GRF_RIGHT = [400, 400, 400, 400, 0, 0, 0, 400, 400, 400, 400]
GRF_LEFT = [0, 20, 0, 300, 300, 300, 300, 300, 300, 300, 300]
# forward position of the average foot position; only the values at initiations matter
FOOT_FWD = [0.02, 0.03, 0.05, 0.10, 0.11, 0.115, 0.12, 0.13, 0.135, 0.14, 0.15]
# head orientation error: above the 0.2 rad threshold at k=0, 1, yet 0.18 on average; the sample
# at t = t_max (k=10) lies outside [0, t_max) and must not count
HEAD_ANGLE = [0.5, 0.5, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 3.0]
# |head velocity error|: 0.5 m/s on average (over the 0.3 threshold)
HEAD_DV = [0.4, 0.6] * 5 + [10.0]
SLIDE_LOADED = [True] * 5 + [False] * 6  # 0.3 m/s while loaded, 0.15 on average


def step(k):
    """(sensors, raw) of control step k."""
    t = k * DT
    R = rot_y(PSI) @ rot_x(HEAD_ANGLE[k]) @ BASE_R
    omega = np.array([0.3, -0.2, 1.0]) * k / 10.0
    r = R @ HEAD_OFFSET
    dv_dir = np.array([math.cos(k), 0.5, math.sin(k)])
    dv = HEAD_DV[k] * dv_dir / np.linalg.norm(dv_dir)
    vel = TARGET * FORWARD + dv - np.cross(omega, r)  # head point velocity = target + dv
    foot_pos = np.array(
        [FOOT_FWD[k] * FORWARD + 0.1 * SIDE + [0, 0.03, 0], FOOT_FWD[k] * FORWARD - 0.1 * SIDE + [0, 0.01, 0]]
    )
    foot_grf = np.array([[5.0, GRF_RIGHT[k], 1.0], [-3.0, GRF_LEFT[k], 2.0]])
    body_R = np.stack([R, np.eye(3)])
    sensors = Sensors(
        t=t,
        body_pos=np.zeros((2, 3)),
        body_R=body_R,
        body_vel=np.stack([vel, np.zeros(3)]),
        body_omega=np.stack([omega, np.zeros(3)]),
        com_pos=np.zeros(3),
        com_vel=np.zeros(3),
        foot_pos=foot_pos,
        foot_grf=foot_grf,
        muscle_force=np.zeros(2),
        pair_r=np.zeros((0, 3)),
        joint_pos=np.zeros((0, 3)),
    )
    if SLIDE_LOADED[k]:
        # spheres 0 and 2 carry load (> 1 N): horizontal speeds 0.5 and 0.1 -> mean 0.3;
        # sphere 1 (0.5 N) and sphere 3 (exactly 1 N) do not count, whatever their speed
        force = np.array([[0, 50.0, 0], [0, 0.5, 0], [0, 20.0, 0], [0, 1.0, 0]])
    else:
        force = np.array([[0, 0.9, 0], [0, 0.0, 0], [0, 0.2, 0], [0, 1.0, 0]])
    contact_vel = np.array([[0.3, 5.0, 0.4], [9.0, 9.0, 9.0], [0.0, -1.0, 0.1], [7.0, 7.0, 7.0]])
    raw = SimpleNamespace(t=t, contact_force=force, contact_vel=contact_vel)
    return sensors, raw


PAPER = Objective.load("geijtenbeek2013")
combine = PAPER.combine
all_under_thresholds = PAPER.thresholds_met


def recorder():
    scenario = Scenario(speed=TARGET, duration=T_MAX, heading=PSI, control_interval=DT)
    return ObjectiveRecorder(fake_sim(), scenario)


def feed(rec, steps, com_vel=None):
    """Control steps ``steps`` into ``rec``; ``com_vel`` (m/s, world frame) moves the centre of mass."""
    engine = FakeEngine()
    for k in steps:
        sensors, raw = step(k)
        if com_vel is not None:
            sensors = dataclasses.replace(sensors, com_vel=np.asarray(com_vel, float))
        rec(sensors, EXCITATION, engine, raw)


def test_static_parts_from_the_model_description():
    rec = recorder()
    c = rec.context
    assert rec.measures["speed"].steps.threshold == pytest.approx(0.05 * BODY_MASS * 9.80665)
    assert c.muscle_mass == pytest.approx([0.42388, 0.52985])
    assert c.head_body == 0 and c.head_offset == pytest.approx(HEAD_OFFSET)
    assert c.head_base_R == pytest.approx(BASE_R)


def test_v_base_is_updated_at_contact_initiations():
    rec = recorder()
    feed(rec, range(3))
    # the right foot standing at t=0 and the 20 N brush of the left foot are no initiations
    assert rec.measures["speed"].initiations == [] and rec.measures["speed"].v_base == 0.0
    feed(rec, [3])
    assert rec.measures["speed"].initiations == [(pytest.approx(0.015), pytest.approx(0.10))]
    assert rec.measures["speed"].v_base == 0.0  # one initiation: no speed yet
    feed(rec, range(4, 7))
    assert len(rec.measures["speed"].initiations) == 1 and rec.measures["speed"].v_base == 0.0
    feed(rec, [7])
    # average foot moved 0.13 - 0.10 m forward in 0.035 - 0.015 s
    assert rec.measures["speed"].v_base == pytest.approx(0.03 / 0.02)
    feed(rec, range(8, 11))
    assert rec.measures["speed"].v_base == pytest.approx(1.5) and len(rec.measures["speed"].initiations) == 2


def test_speed_error_from_start_counts_the_start_as_the_first_initiation():
    """speed_error_from_start: p_0 is the average foot position at t = 0, so v_base is known from
    the first touch-down (k = 3) on; afterwards it is speed_error's."""
    from musclewalk.measures.gait import SpeedErrorFromStart, StepSample

    rec = recorder()
    measure = SpeedErrorFromStart(rec.context)
    values = []
    for k in range(N):
        sensors, raw = step(k)
        sample = StepSample.at(sensors, raw, EXCITATION, rec.scenario.heading_at, None, None)
        values.append(measure.value(sample))
    assert measure.initiations[0] == (0.0, pytest.approx(0.02))
    assert values[:3] == [1.0] * 3
    # the left foot lands at k = 3: 0.10 - 0.02 m in 0.015 s
    assert values[3] == pytest.approx(abs(1 - (0.08 / 0.015) / TARGET))
    # from the second touch-down on (k = 7) as speed_error: 0.03 m in 0.02 s
    assert values[7:] == [pytest.approx(abs(1 - 1.5 / TARGET))] * 3


def test_objective_of_a_full_run_by_hand():
    rec = recorder()
    feed(rec, range(N + 1))  # the runner calls its observers at t = 0, dt, ..., t_max
    avg = rec.finish(T_MAX, terminated=False)
    # samples k = 0..9 each stand for [k dt, (k+1) dt); the average is sum(E_k dt) / t_max
    speed = (7 * 1.0 + 3 * abs(1 - 1.5 / TARGET)) / N  # 0.775
    headori = (0.5 + 0.5 + 8 * 0.1) / N  # 0.18
    headvel = 5 * (0.4 + 0.6) / N  # 0.5
    slide = 5 * 0.3 / N  # 0.15
    expected = {"speed": speed, "headori": headori, "headvel": headvel, "slide": slide, "effort": EFFORT}
    assert avg == pytest.approx(expected, rel=1e-9)

    score, terms = combine(avg)
    # thresholds after averaging: head orientation (0.18 < 0.2) and sliding (0.15 < 0.2) count
    # zero although single samples are far above their thresholds
    assert terms == pytest.approx(
        {"speed": 77.5, "headori": 0.0, "headvel": 5.0, "slide": 0.0, "effort": 0.1 * EFFORT}, rel=1e-9
    )
    assert score == pytest.approx(77.5 + 5.0 + 0.1 * EFFORT, rel=1e-9)
    assert 0.1 * EFFORT == pytest.approx(0.49244, abs=1e-5)
    assert not all_under_thresholds(avg)


def test_a_constant_measure_averages_to_itself():
    """E_speed stays 1 (v_base = 0) for a whole run: its average over t_max is exactly 1, as
    it is for a run that terminates at once (no extra weight for the sample at t_max)."""
    rec = recorder()
    feed(rec, range(3))  # no initiations: v_base = 0
    for k in range(3, N + 1):  # the left foot never lands in this variant
        sensors, raw = step(k)
        sensors.foot_grf[1, 1] = 0.0
        sensors.foot_grf[0, 1] = 400.0
        rec(sensors, EXCITATION, FakeEngine(), raw)
    avg = rec.finish(T_MAX, terminated=False)
    assert avg["speed"] == pytest.approx(1.0, rel=1e-12)
    assert avg["effort"] == pytest.approx(EFFORT, rel=1e-12)


def test_termination_penalty_by_hand():
    """Terminated after 5 control intervals (observer calls at k = 0..4, simulated 0.025 s):
    E_speed = 1 and the other measures 0 for the remaining 0.025 s of t_max."""
    rec = recorder()
    feed(rec, range(5))
    avg = rec.finish(5 * DT, terminated=True)
    expected = {
        "speed": (5 * 1.0 + 5 * 1.0) / N,  # 1.0
        "headori": (0.5 + 0.5 + 3 * 0.1) / N,  # 0.13
        "headvel": (0.4 + 0.6 + 0.4 + 0.6 + 0.4) / N,  # 0.24
        "slide": 5 * 0.3 / N,  # 0.15
        "effort": 5 * EFFORT / N,
    }
    assert avg == pytest.approx(expected, rel=1e-9)
    score, terms = combine(avg)
    assert terms == pytest.approx(
        {"speed": 100.0, "headori": 0.0, "headvel": 0.0, "slide": 0.0, "effort": 0.05 * EFFORT}, rel=1e-9
    )
    # without the penalty the same samples would average E_speed to 0.5
    rec2 = recorder()
    feed(rec2, range(5))
    assert rec2.finish(5 * DT, terminated=False)["speed"] == pytest.approx(0.5)


def test_integrator_failure_does_not_count_the_unsimulated_sample():
    """An integrator failure at step k ends the run at k dt after the observers saw t = k dt;
    that sample stands for time that was never simulated and is replaced by the penalty."""
    a, b = recorder(), recorder()
    feed(a, range(5))
    feed(b, range(6))  # one more call, at t = 0.025 = simulated time
    assert b.finish(5 * DT, True) == pytest.approx(a.finish(5 * DT, True), rel=1e-12)


def test_combine_thresholds_and_weights():
    assert {t.name: t.weight for t in PAPER.terms} == {
        "speed": 100.0,
        "headori": 10.0,
        "headvel": 10.0,
        "slide": 10.0,
        "effort": 0.1,
    }  # Table 2
    assert {t.name: t.threshold for t in PAPER.terms} == {
        "speed": 0.1,
        "headori": 0.2,
        "headvel": 0.3,
        "slide": 0.2,
        "effort": 0.0,
    }
    avg = {"speed": 0.1, "headori": 0.1999, "headvel": 0.31, "slide": 0.5, "effort": 0.0}
    score, terms = combine(avg)
    # a value equal to its threshold is kept ({x}_H = 0 only for x < H)
    assert terms == pytest.approx(
        {"speed": 10.0, "headori": 0.0, "headvel": 3.1, "slide": 5.0, "effort": 0.0}
    )
    assert score == pytest.approx(18.1)
    assert all_under_thresholds(
        {"speed": 0.09, "headori": 0.19, "headvel": 0.29, "slide": 0.19, "effort": 7.0}
    )
    assert not all_under_thresholds(
        {"speed": 0.09, "headori": 0.19, "headvel": 0.3, "slide": 0.19, "effort": 7.0}
    )


def test_recorder_on_a_real_simulation(humanlegs_osim):
    """With a real HumanLegs run the recorder's measures equal a recomputation from the raw
    quantities captured at every control step."""
    from musclewalk.sim.runner import Simulator

    sim = Simulator(humanlegs_osim)
    scenario = Scenario(speed=1.3, duration=0.1)
    rec = ObjectiveRecorder(sim, scenario)
    rows = []

    def capture(sensors, u, engine, raw):
        rows.append(
            dict(
                t=sensors.t,
                u=np.array(u),
                states=engine.muscle_states(),
                force=raw.contact_force.copy(),
                vel=sim.bridge.contact_velocities(raw).copy(),
            )
        )

    result = sim.run(scenario, {}, observers=[rec, capture])
    assert not result.terminated and len(rows) == 21
    avg = rec.finish(result.simulated_time, result.terminated)
    fmax = [m.getMaxIsometricForce() for m in sim.engine.muscles]
    lopt = [m.getOptimalFiberLength() for m in sim.engine.muscles]
    mass = 1059.7 * np.array(fmax) * np.array(lopt) / 0.25e6
    assert rec.context.muscle_mass == pytest.approx(mass, rel=1e-9)
    M = sim.meta.total_mass
    counted = rows[:-1]  # the sample at t_max lies outside [0, t_max)
    effort = sum(metabolic_rate(M, mass, r["u"], *r["states"].as_array()) for r in counted) / M * 0.005
    assert avg["effort"] == pytest.approx(effort / 0.1, rel=1e-9)
    assert avg["effort"] > 1.51  # more than the basal rate
    slide = 0.0
    for r in counted:
        loaded = r["force"][:, 1] > 1.0
        if loaded.any():
            slide += np.mean(np.hypot(r["vel"][loaded, 0], r["vel"][loaded, 2])) * 0.005
    assert avg["slide"] == pytest.approx(slide / 0.1, rel=1e-9, abs=1e-12)
    # HumanLegs has no head body: the head point sits on the trunk, whose base orientation
    # is the target's, so the error starts near 0
    assert sim.control_model.head_body is None
    assert 0 <= avg["headori"] < 0.5


def test_v_base_counts_alternating_touch_downs_and_decays_without_steps():
    """Touch-downs of the same foot twice (a bounce) are one step; v_base decays as
    (p_k - p_k-1) / (t - t_k) once no new step comes (no steps, no progress)."""
    rec = recorder()
    engine = FakeEngine()
    weight = BODY_MASS * 9.80665

    def feed_contacts(k, right, left, forward):
        sensors, raw = step(k)
        sensors.foot_grf[:, 1] = [right * weight, left * weight]
        sensors.foot_pos[:, :] = forward * FORWARD
        rec(sensors, EXCITATION, engine, raw)

    feed_contacts(0, 1, 0, 0.0)  # standing on the right foot at t = 0: no touch-down
    feed_contacts(1, 1, 1, 0.1)  # left lands at t = 0.005
    feed_contacts(2, 1, 0, 0.1)  # left bounces ...
    feed_contacts(3, 1, 1, 0.2)  # ... and lands again: not a step
    assert len(rec.measures["speed"].initiations) == 1 and rec.measures["speed"].v_base == 0.0
    feed_contacts(4, 0, 1, 0.2)
    feed_contacts(5, 1, 1, 0.4)  # right lands at t = 0.025: 0.3 m in 0.02 s
    assert len(rec.measures["speed"].initiations) == 2
    assert rec.measures["speed"].v_base == pytest.approx(0.3 / 0.02)
    for k in range(6, 10):
        feed_contacts(k, 1, 1, 0.4)  # no new step: decays once t - t_k exceeds 0.02 s
    assert rec.measures["speed"].v_base == pytest.approx(0.3 / (9 * DT - 0.025))


def test_dynamically_similar_step_frequency():
    """Alexander (1976): stride / h = 2.3 (v^2 / (g h))^0.3; at 1.3 m/s a human of hip height
    0.9 m takes about 124 steps per minute (the normative mean at that speed: about 120)."""
    from musclewalk.measures.gait import dynamically_similar_step_frequency

    f = dynamically_similar_step_frequency(1.3, 0.9)
    assert 60 * f == pytest.approx(123.7, abs=0.1)
    # dynamic similarity: the same Froude number gives the same stride per hip height
    assert dynamically_similar_step_frequency(2.0 * math.sqrt(2.0), 2.0) * 2.0 / (2.0 * math.sqrt(2.0)) == (
        pytest.approx(dynamically_similar_step_frequency(2.0, 1.0) / 2.0)
    )


def test_step_frequency_error_by_hand():
    """|f / f_similar - 1| from the last two alternating touch-downs, falling while no step
    comes; 0 before the second touch-down. At the target 2.0 m/s and leg length 1.0 m:
    f_similar = 2 v / (2.3 (v^2 / g)^0.3)."""
    objective = Objective.from_dict(
        {"terms": {"cadence": {"measure": "step_frequency_error", "weight": 1.0}}}, "cadence"
    )
    scenario = Scenario(speed=TARGET, duration=T_MAX, heading=PSI, control_interval=DT)
    rec = ObjectiveRecorder(fake_sim(), scenario, objective)
    measure = rec.measures["cadence"]
    similar = 2 * TARGET / (2.3 * (TARGET**2 / 9.80665) ** 0.3)
    assert measure.similar == pytest.approx(similar)
    weight = BODY_MASS * 9.80665
    values = []
    for k, (right, left) in enumerate([(1, 0), (1, 1), (0, 1), (1, 1), (1, 0), (1, 0), (1, 0), (1, 0)]):
        sensors, raw = step(k)
        sensors.foot_grf[:, 1] = [right * weight, left * weight]
        values.append(measure.value(SimpleNamespace(t=sensors.t, sensors=sensors)))
    # touch-downs: left at k = 1, right at k = 3 (0.01 s apart); none after
    assert values[:3] == [0.0, 0.0, 0.0]
    assert values[3] == pytest.approx(abs(100.0 / similar - 1.0))
    assert values[4] == pytest.approx(abs(100.0 / similar - 1.0))  # t - t_k = 0.005 < 0.01
    assert values[7] == pytest.approx(abs(1.0 / (7 * DT - 3 * DT) / similar - 1.0))


def test_first_grf_peak_excess_by_hand():
    """Per landing, the largest vertical GRF within 0.25 s of the foot's touch-down above 1.3 BW,
    given as the rise of that landing's running peak excess divided by dt: averaged over t_max
    it is the landings' peak excesses summed per second. The starting stance is no landing, and a
    foot's GRF later in its stance (the second peak) counts nothing."""
    from musclewalk.measures.gait import FirstGrfPeakExcess

    objective = Objective.from_dict(
        {"terms": {"first_peak": {"measure": "first_grf_peak_excess", "weight": 1.0}}}, "first_peak"
    )
    scenario = Scenario(speed=TARGET, duration=T_MAX, heading=PSI, control_interval=DT)
    rec = ObjectiveRecorder(fake_sim(), scenario, objective)
    measure = rec.measures["first_peak"]
    assert isinstance(measure, FirstGrfPeakExcess)
    weight = BODY_MASS * 9.80665
    # right foot: in stance from the start at 2.0 BW (no landing), lifts off at k = 2, lands at
    # k = 3 with 1.5, 2.0 then 1.8 BW; left foot: lands at k = 1 at 1.2 BW (below the limit)
    right = [2.0, 2.0, 0.0, 1.5, 2.0, 1.8]
    left = [0.0, 1.2, 1.2, 1.2, 0.0, 0.0]
    values = []
    for k, (r, l) in enumerate(zip(right, left)):
        sensors, _ = step(k)
        sensors.foot_grf[:, 1] = [r * weight, l * weight]
        values.append(measure.value(SimpleNamespace(t=sensors.t, sensors=sensors)))
    assert values[:3] == [0.0, 0.0, 0.0]
    assert values[3] == pytest.approx(0.2 / DT)
    assert values[4] == pytest.approx(0.5 / DT)  # the peak excess rises from 0.2 to 0.7
    assert values[5] == 0.0  # below this landing's peak
    assert sum(values) * DT == pytest.approx(0.7)  # one landing's peak excess
    # after the window the same force counts nothing
    late = FirstGrfPeakExcess(measure.context)
    for k, r in enumerate([0.0, 1.0] + [1.0] * round(0.25 / DT) + [2.5]):
        sensors = SimpleNamespace(t=k * DT, foot_grf=np.array([[0.0, r * weight, 0.0], [0.0, 0.0, 0.0]]))
        value = late.value(SimpleNamespace(t=sensors.t, sensors=sensors))
    assert value == 0.0
    assert late.value(SimpleNamespace(t=0.0, sensors=SimpleNamespace(foot_grf=np.zeros((2, 3))))) == 0.0


def _one_measure(measure: str):
    """The measure object an objective of that one measure (weight 1) runs at the test's scenario."""
    objective = Objective.from_dict({"terms": {"term": {"measure": measure, "weight": 1.0}}}, "term")
    scenario = Scenario(speed=TARGET, duration=T_MAX, heading=PSI, control_interval=DT)
    return ObjectiveRecorder(fake_sim(), scenario, objective).measures["term"]


def test_cycle_first_grf_peak_excess_reads_the_mean_cycle_at_the_comparisons_points():
    """Per foot, its cycles' vertical GRF at the cycle's 2 % points up to 35 %, as `musclewalk
    compare` samples a cycle, averaged over the cycles after 2 s: the mean curve's first peak
    above 1.3 BW times the cycles. A transient between two points counts nothing, a peak on one
    counts, later in the cycle nothing; each cycle's end gives the change of that total / dt, so
    that the time average is the total per second. The starting stance is no cycle and an
    unfinished cycle counts nothing."""
    from musclewalk.analysis.reference import PERCENT
    from musclewalk.measures.gait import CYCLE_PERCENT, CycleFirstGrfPeakExcess

    assert np.array_equal(CYCLE_PERCENT, PERCENT)
    measure = _one_measure("cycle_first_grf_peak_excess")
    assert isinstance(measure, CycleFirstGrfPeakExcess)
    weight = BODY_MASS * 9.80665
    # the right foot lands at 0.5 s (k = 100, before the 2 s skipped: not counted), at 2.0 s
    # (k = 400), 2.5 s and 3.0 s: two 0.5 s cycles after 2 s, their 2 % points every 2 control
    # steps; the left foot stands from the start
    right = np.zeros(660)
    first, second, third = 400, 500, 600
    for start in (100, 400, 500, 600):
        right[start : start + 69] = 1.0
    right[120] = 3.0  # in the cycle before 2 s
    right[first + 3] = 2.5  # between the points at 1 and 2 %: missed
    right[first + 20] = 1.6  # at 20 %
    right[first + 50] = 2.0  # at 50 %: past the first peak's 35 %
    right[second + 20] = 1.2  # the second cycle: the mean at 20 % is 1.4 BW
    right[third + 20] = 1.9  # the third cycle, never finished
    values = []
    for k, r in enumerate(right):
        sensors = SimpleNamespace(t=k * DT, foot_grf=np.array([[0.0, r * weight, 0.0], [0.0, weight, 0.0]]))
        values.append(measure.value(SimpleNamespace(t=sensors.t, sensors=sensors)))
    assert np.count_nonzero(values) == 2
    assert values[second] == pytest.approx(0.3 / DT)  # one cycle, 0.3 BW above the limit
    assert values[third] == pytest.approx((2 * 0.1 - 0.3) / DT)  # two cycles, their mean 0.1 above
    assert sum(values) * DT == pytest.approx(0.2)


def test_cycle_second_grf_peak_outside_reads_the_mean_cycle_between_35_and_62_percent():
    """As the first peak, over the 2 % points after 35 % up to 62 % (`musclewalk compare`'s
    second-peak window): the mean curve's peak below 0.95 BW (or above 1.3) times the cycles,
    each cycle's end giving the change of that total / dt; force before or after the window counts
    nothing, nor does the first peak, and neither does a cycle begun before 2 s."""
    from musclewalk.measures.gait import CycleSecondGrfPeakOutside

    measure = _one_measure("cycle_second_grf_peak_outside")
    assert isinstance(measure, CycleSecondGrfPeakOutside)
    weight = BODY_MASS * 9.80665
    right = np.zeros(660)  # the right foot lands at 0.5, 2.0, 2.5 and 3.0 s (0.5 s cycles)
    first, second, third = 400, 500, 600
    for start in (100, 400, 500, 600):
        right[start : start + 69] = 1.0
    right[100 + 36 : 100 + 69] = 0.2  # in the cycle before 2 s
    right[first + 20] = 1.6  # the first peak: not this measure's
    right[first + 36 : first + 69] = 0.9  # the second peak 0.9 BW: 0.05 short
    right[first + 34] = 2.0  # at 34 %: before the window
    right[first + 64] = 1.5  # at 64 %: after it
    right[second + 36 : second + 69] = 0.8  # the mean of the two cycles' peaks 0.85 BW
    right[third + 36 : third + 69] = 0.1  # the third cycle, never finished
    values = []
    for k, r in enumerate(right):
        sensors = SimpleNamespace(t=k * DT, foot_grf=np.array([[0.0, r * weight, 0.0], [0.0, weight, 0.0]]))
        values.append(measure.value(SimpleNamespace(t=sensors.t, sensors=sensors)))
    assert np.count_nonzero(values) == 2
    assert values[second] == pytest.approx(0.05 / DT)
    assert values[third] == pytest.approx((2 * 0.1 - 0.05) / DT)
    assert sum(values) * DT == pytest.approx(0.2)
    # a second peak within 0.95-1.3 BW counts nothing, one above 1.3 its excess
    for level, expected in ((1.0, 0.0), (1.5, 0.2)):
        fresh = _one_measure("cycle_second_grf_peak_outside")
        curve = np.zeros(560)
        for start in (100, 400, 500):
            curve[start : start + 69] = 1.0
        curve[first + 36 : first + 69] = level
        total = 0.0
        for k, r in enumerate(curve):
            grf = np.array([[0.0, r * weight, 0.0], [0.0, weight, 0.0]])
            sensors = SimpleNamespace(t=k * DT, foot_grf=grf)
            total += fresh.value(SimpleNamespace(t=sensors.t, sensors=sensors)) * DT
        assert total == pytest.approx(expected)


def test_cycle_cadence_excess_reads_the_cadence_of_the_cycles_after_2_s_outside_100_to_130():
    """Each foot's cycles after 2 s, the cadence the mean of 120 / duration over both feet's, as
    `musclewalk compare` reads it: its relative excess beyond the band's nearer end times the
    cycles, each cycle's end giving the change of that total / dt; 0 within 100-130 steps per
    minute; the starting stance, a cycle begun before 2 s and an unfinished one count nothing."""
    from musclewalk.measures.gait import CycleCadenceExcess

    measure = _one_measure("cycle_cadence_excess")
    assert isinstance(measure, CycleCadenceExcess)
    weight = BODY_MASS * 9.80665
    n = 1200  # 6 s
    right, left = np.zeros(n), np.ones(n)  # the left foot stands from the start: no landing
    # the right foot lands at 1.5 s (its cycle ends after 2 s but began before), 2.1, 2.9 and 4.0 s,
    # and at 5.5 s (a cycle of 1.5 s), and lifts 0.3 s after each landing
    landings = (300, 420, 580, 800, 1100)
    for k in landings:
        right[k : k + 60] = 1.0
    values = []
    for k in range(n):
        sensors = SimpleNamespace(
            t=k * DT, foot_grf=np.array([[0.0, right[k] * weight, 0.0], [0.0, left[k] * weight, 0.0]])
        )
        values.append(measure.value(SimpleNamespace(t=sensors.t, sensors=sensors)))
    assert np.count_nonzero(values) == 2
    first = 120.0 / 0.8  # 150 steps per minute: 20 above the band
    assert values[580] == pytest.approx(20.0 / 130.0 / DT)
    second = (first + 120.0 / 1.1) / 2.0  # 129.5: within the band
    assert second < 130.0 and values[800] == pytest.approx(-20.0 / 130.0 / DT)
    third = (first + 120.0 / 1.1 + 120.0 / 1.5) / 3.0  # 113.0: within
    assert values[1100] == 0.0 and 100.0 < third < 130.0
    assert sum(values) * DT == pytest.approx(0.0, abs=1e-12)


def test_landing_knee_flexion_excess_reads_each_landing_knee_after_2_s_beyond_5_degrees():
    """At each touch-down after 2 s, the landing leg's knee flexion (its bodies' flexion minus the
    base pose's) beyond 5°, given as excess / dt at that control step: the time average is the
    landings' excess per second. A landing before 2 s, a knee within 5° and the knee between
    landings count nothing."""
    from musclewalk.measures.gait import LandingKneeFlexionExcess

    measure = _one_measure("landing_knee_flexion_excess")
    assert isinstance(measure, LandingKneeFlexionExcess)
    weight = BODY_MASS * 9.80665
    # the right foot lands at 1.0 s (before 2 s) and 2.0 s, the left at 2.5 s; each stands 0.3 s
    right, left = np.zeros(700), np.zeros(700)
    right[200:260] = right[400:460] = 1.0
    left[500:560] = 1.0
    flexion = {200: (0.5, 0.0), 400: (0.3, 0.9), 500: (0.9, 0.05)}  # (right, left) at those steps
    values = []
    for k in range(700):
        knees = flexion.get(k, (0.9, 0.9))  # flexed between landings: not read
        body_R = np.stack([np.eye(3)] * 6)
        for leg, knee in enumerate(knees):
            body_R[2 + leg] = rot_z(0.2 * leg - 0.3)
            body_R[4 + leg] = body_R[2 + leg] @ rot_z(-(KNEE0 + knee))
        grf = np.array([[0.0, right[k] * weight, 0.0], [0.0, left[k] * weight, 0.0]])
        sensors = SimpleNamespace(t=k * DT, foot_grf=grf, body_R=body_R)
        values.append(measure.value(SimpleNamespace(t=sensors.t, sensors=sensors)))
    assert np.count_nonzero(values) == 1
    assert values[400] == pytest.approx((0.3 - math.radians(5.0)) / DT)
    assert sum(values) * DT == pytest.approx(0.3 - math.radians(5.0))


def test_the_cycle_measures_of_one_objective_share_one_record_and_score_as_each_alone():
    """The cycle measures of one run read one `CycleRecord` (the context's), updated once per
    control step whichever measure asks first, and each gives the values it gives alone."""
    from musclewalk.measures.gait import CycleRecord

    names = ("cycle_first_grf_peak_excess", "cycle_second_grf_peak_outside", "cycle_cadence_excess")
    objective = Objective.from_dict({"terms": {n: {"measure": n, "weight": 1.0} for n in names}}, "cycles")
    scenario = Scenario(speed=TARGET, duration=T_MAX, heading=PSI, control_interval=DT)
    together = ObjectiveRecorder(fake_sim(), scenario, objective).measures
    record = CycleRecord.of(together[names[0]].context)
    assert all(m.record is record for m in together.values())
    alone = {n: _one_measure(n) for n in names}
    assert len({id(m.record) for m in alone.values()}) == 3
    weight = BODY_MASS * 9.80665
    right = np.zeros(900)  # the right foot lands every 0.45 s, a first peak of 1.5 BW, a second of 0.9
    for start in range(100, 900, 90):
        right[start : start + 55] = 1.0
        right[start + 8 : start + 14] = 1.5
        right[start + 30 : start + 55] = 0.9
    for k, r in enumerate(right):
        grf = np.array([[0.0, r * weight, 0.0], [0.0, weight, 0.0]])
        sample = SimpleNamespace(t=k * DT, sensors=SimpleNamespace(t=k * DT, foot_grf=grf))
        shared = [together[n].value(sample) for n in names]
        assert shared == [alone[n].value(sample) for n in names]
    assert record.cycles[0] == len(record.durations) > 0
    assert {n: together[n].charged > 0 for n in names} == dict.fromkeys(names, True)


def test_the_humanlike_objective_measures_cost_per_distance_and_grf_above_1_4_bw():
    scenario = Scenario(speed=TARGET, duration=T_MAX, heading=PSI, control_interval=DT)
    rec = ObjectiveRecorder(fake_sim(), scenario, Objective.load("humanlike"))
    weight = BODY_MASS * 9.80665
    for k in range(N + 1):
        sensors, raw = step(k)
        # the right foot at 2.0 BW for the first 4 samples (0.6 BW above the limit), the left
        # always below it
        sensors.foot_grf[0, 1] = 2.0 * weight if k < 4 else 0.5 * weight
        sensors.foot_grf[1, 1] = 1.0 * weight
        rec(sensors, EXCITATION, FakeEngine(), raw)
    avg = rec.finish(T_MAX, terminated=False)
    assert avg["cot"] == pytest.approx(EFFORT / TARGET, rel=1e-12)  # J/(kg m)
    assert avg["grf"] == pytest.approx(4 * 0.6 / N, rel=1e-9)
    score, terms = rec.objective.combine(avg)
    assert terms["cot"] == pytest.approx(EFFORT / TARGET) and terms["grf"] == pytest.approx(2.4)
    assert rec.objective.term_names == ("speed", "headori", "headvel", "slide", "cot", "grf")


def test_joint_limit_torque_on_a_real_simulation(humanlegs_osim):
    """The joint-limit measure: summed |limit torque| / (M g L), averaged like every measure;
    recomputed here from the engine's limit forces at each control step."""
    from musclewalk.sim.runner import Simulator

    sim = Simulator(humanlegs_osim)
    assert len(sim.engine.limit_forces) == len(sim.engine.limit_names) > 0
    scenario = Scenario(speed=1.3, duration=0.2)
    objective = Objective.from_dict(
        {"terms": {"limits": {"measure": "joint_limit_torque", "weight": 1.0}}}, "limits"
    )
    rec = ObjectiveRecorder(sim, scenario, objective)
    torques = []
    result = sim.run(
        scenario, {}, observers=[rec, lambda s, u, engine, raw: torques.append(engine.limit_torques())]
    )
    avg = rec.finish(result.simulated_time, result.terminated)
    scale = sim.meta.total_mass * 9.80665 * sim.meta.leg_length
    counted = torques[:-1]
    expected = sum(np.abs(t).sum() for t in counted) * 0.005 / scale / 0.2
    assert expected > 0  # the straight knees start at their limit
    assert avg["limits"] == pytest.approx(expected, rel=1e-9, abs=1e-15)


IDEAL = Objective.load("geijtenbeek2013-ideal-muscles")


def test_summed_muscle_force_in_body_weights_by_hand():
    """The ablation's effort (§7.5.3, sum F_M) over M g, averaged over t_max like every measure."""
    scenario = Scenario(speed=TARGET, duration=T_MAX, heading=PSI, control_interval=DT)
    rec = ObjectiveRecorder(fake_sim("ideal"), scenario, IDEAL)
    for k in range(N + 1):
        sensors, raw = step(k)
        raw.muscle_force = np.array([30.0, 70.0]) * (k + 1)  # 100 (k + 1) N in all
        rec(sensors, EXCITATION, FakeEngine(), raw)
    avg = rec.finish(T_MAX, terminated=False)
    # samples k = 0..9 count: mean of 100 ... 1000 N = 550 N
    assert avg["effort"] == pytest.approx(550.0 / (BODY_MASS * 9.80665), rel=1e-12)
    assert rec.objective.combine(avg)[1]["effort"] == pytest.approx(0.12 * 550.0 / (BODY_MASS * 9.80665))
    assert [t.measure for t in IDEAL.terms if t.name != "effort"] == [
        t.measure for t in PAPER.terms if t.name != "effort"
    ]


@pytest.mark.parametrize("name, term", [("geijtenbeek2013", "effort"), ("humanlike", "cot")])
def test_metabolic_measures_refuse_ideal_muscles(name, term):
    """A model with ideal muscles has no fibre states for the metabolic rate: the objective names
    its file and term (before an optimization starts), and the measure refuses to be built."""
    objective = Objective.load(name)
    with pytest.raises(ObjectiveError) as exc:
        objective.check_muscle_model("ideal", "ideal.osim")
    message = str(exc.value)
    assert message.startswith(f"{objective.source}: terms.{term}.measure: ") and objective.source.endswith(
        f"models/objectives/{name}.yaml"
    )
    assert "needs millard muscles, ideal.osim has ideal muscles" in message and "\n" not in message
    scenario = Scenario(speed=TARGET, duration=T_MAX, control_interval=DT)
    with pytest.raises(ValueError, match="needs millard muscles, the model has ideal muscles"):
        ObjectiveRecorder(fake_sim("ideal"), scenario, objective)
    objective.check_muscle_model("millard", "human.osim")
    IDEAL.check_muscle_model("ideal", "ideal.osim")
    IDEAL.check_muscle_model("millard", "human.osim")  # the sum of tendon forces


def test_time_after_termination_is_the_share_of_t_max_a_fall_cut_off():
    """The survive objective's extra term: 0 while the run goes on, so a run that falls after 5
    of 10 control intervals averages 0.5, one that falls after 8 averages 0.2 and a full run 0;
    under the paper's terms the two falls score the same speed term (1: no second touch-down)."""
    from musclewalk.measures.objective import Objective

    survive = Objective.load("geijtenbeek2013-survive")
    scenario = Scenario(speed=TARGET, duration=T_MAX, heading=PSI, control_interval=DT)
    fallen = {}
    for steps in (5, 8, N + 1):
        rec = ObjectiveRecorder(fake_sim(), scenario, survive)
        feed(rec, range(steps))
        avg = rec.finish(min(steps, N) * DT, terminated=steps <= N)
        fallen[steps] = avg["fallen"]
    assert fallen == pytest.approx({5: 0.5, 8: 0.2, N + 1: 0.0}, abs=1e-12)
    paper = Objective.load("geijtenbeek2013")
    speeds = []
    for steps in (5, 6):  # both before the second touch-down (k = 7)
        rec = ObjectiveRecorder(fake_sim(), scenario, paper)
        feed(rec, range(steps))
        speeds.append(rec.finish(steps * DT, terminated=True)["speed"])
    assert speeds == [pytest.approx(1.0), pytest.approx(1.0)]


def test_the_survive_objective_ranks_a_longer_survival_first_whatever_the_head_terms():
    """The Ostrich's start (falls after 2.27 s, head terms 5.46) and the candidate its search
    preferred under weight 100 (falls after 1.87 s, head terms met): their averages as the run
    logged them (history.csv, best.json of Ostrich-walk-1.2-survive-headterms)."""
    from musclewalk.measures.objective import Objective

    survive = Objective.load("geijtenbeek2013-survive")
    common = {"slide": 0.0114, "effort": 2.96}
    longer = {"speed": 0.988014, "fallen": 0.773, "headori": 0.203733, "headvel": 0.341832, **common}
    shorter = {"speed": 0.981193, "fallen": 0.8135, "headori": 0.043181, "headvel": 0.253256, **common}
    assert survive.combine(longer)[0] < survive.combine(shorter)[0]
    # a tenth of a second of t_max 10 s outweighs both head terms at 1.5 times their thresholds
    a_tenth = {**shorter, "fallen": shorter["fallen"] - 0.01, "headori": 0.3, "headvel": 0.45}
    assert survive.combine(a_tenth)[0] < survive.combine(shorter)[0]


def test_progress_shortfall_by_hand():
    """1 - d(t) / (v_target t) of the centre of mass along the target heading, in [0, 1], 1 at the
    start (nothing travelled yet) and for the rest of t_max after a fall; sideways motion does not
    count, nor does going faster than the target make up for a fall."""
    progress = Objective.load("geijtenbeek2013-progress")
    scenario = Scenario(speed=TARGET, duration=T_MAX, heading=PSI, control_interval=DT)

    def average(com_vel, steps):
        rec = ObjectiveRecorder(fake_sim(), scenario, progress)
        feed(rec, range(steps), com_vel)
        return rec.finish(min(steps, N) * DT, terminated=steps <= N)["progress"]

    half = 0.5 * TARGET * FORWARD + 3.0 * SIDE  # half the target speed forward, and sideways
    # samples k = 0..9: 1 at k = 0, then d = v dt k over v_target dt k: 0.5 for k >= 1
    assert average(half, N + 1) == pytest.approx((1.0 + 0.5 * (N - 1)) / N, abs=1e-12)
    # a fall after 5 control intervals: the rest of t_max counts 1
    assert average(half, 5) == pytest.approx((1.0 + 0.5 * 4 + 1.0 * 5) / N, abs=1e-12)
    assert average(np.zeros(3), N + 1) == pytest.approx(1.0)  # standing still: as a fall at once
    assert average(-TARGET * FORWARD, N + 1) == pytest.approx(1.0)  # backward: held at 1
    assert average(1.5 * TARGET * FORWARD, N + 1) == pytest.approx(1.0 / N)  # faster: held at 0
    assert average(1.5 * TARGET * FORWARD, 5) == pytest.approx(6.0 / N)


def test_distance_shortfall_is_the_share_of_the_targets_distance_not_covered():
    """Averaged over t_max: 1 - D / (v_target t_max), D along the heading before the run ended,
    the rest of t_max counting as no distance; unclipped either way. Where progress_shortfall
    averages the running ratio, so a run that slows down scores lower there than its distance
    (the pace objective's gate, weight 0: the score is the progress objective's)."""
    pace = Objective.load("geijtenbeek2013-progress-pace")
    progress = Objective.load("geijtenbeek2013-progress")
    scenario = Scenario(speed=TARGET, duration=T_MAX, heading=PSI, control_interval=DT)

    def averages(com_vels):
        rec = ObjectiveRecorder(fake_sim(), scenario, pace)
        for k, v in enumerate(com_vels):
            feed(rec, [k], v)
        steps = len(com_vels)
        return rec.finish(min(steps, N) * DT, terminated=steps <= N)

    half = 0.5 * TARGET * FORWARD + 3.0 * SIDE
    assert averages([half] * (N + 1))["pace"] == pytest.approx(0.5, abs=1e-12)
    # a fall after 5 intervals at the target speed: half the distance, as a full run at half speed
    assert averages([TARGET * FORWARD] * 5)["pace"] == pytest.approx(0.5, abs=1e-12)
    assert averages([1.5 * TARGET * FORWARD] * (N + 1))["pace"] == pytest.approx(-0.5, abs=1e-12)
    assert averages([-TARGET * FORWARD] * (N + 1))["pace"] == pytest.approx(2.0, abs=1e-12)
    # at the target speed for the first 4 intervals, then at a tenth of it: 0.46 of the distance,
    # yet the running ratio averages 0.28, under a threshold of 0.5 the gate must not take
    slowing = averages([TARGET * FORWARD] * 4 + [0.1 * TARGET * FORWARD] * (N - 3))
    assert slowing["pace"] == pytest.approx(1.0 - (4 + 0.1 * 6) / N, abs=1e-12)
    assert slowing["progress"] < 0.5 < slowing["pace"]
    assert pace.combine(slowing)[0] == pytest.approx(progress.combine(slowing)[0])
    ran = SimpleNamespace(terminated=False, averages=slowing)
    gated_by_progress = Objective.load("geijtenbeek2013-progress-half")
    assert not pace.met(ran, ["pace"]) and gated_by_progress.met(ran, ["progress"])


def test_the_progress_objective_ranks_moving_before_falling_above_standing_still():
    """What the survive objective got wrong: the Ostrich's search under it kept a candidate that
    stood 2.81 s and moved 0.19 m (models/optimized/in-progress/Ostrich-walk-1.2-survive); under
    the progress objective standing for all of t_max scores as a fall at once, and a candidate
    that keeps up with the target speed until it falls halfway scores better than both."""
    progress = Objective.load("geijtenbeek2013-progress")
    scenario = Scenario(speed=TARGET, duration=T_MAX, heading=PSI, control_interval=DT)
    scores = {}
    for name, com_vel, steps in (
        ("stands", np.zeros(3), N + 1),
        ("falls at once", np.zeros(3), 1),
        ("walks, falls halfway", TARGET * FORWARD, 5),
    ):
        rec = ObjectiveRecorder(fake_sim(), scenario, progress)
        feed(rec, range(steps), com_vel)
        scores[name] = progress.combine(rec.finish(min(steps, N) * DT, terminated=steps <= N))[0]
    assert scores["walks, falls halfway"] < scores["stands"]
    assert scores["walks, falls halfway"] < scores["falls at once"]
    assert "fallen" not in {t.name for t in progress.terms}  # the progress term counts a fall


class VaryingActivationEngine:
    """Activations 0.2 and 0.8 at step k = 0, growing by 0.01 per step, held in [0, 1]."""

    def __init__(self, k):
        self.k = k

    def muscle_states(self):
        a = np.array([0.2, 0.8]) + 0.01 * self.k
        return MuscleState(a, np.ones(2), np.zeros(2), np.array([300.0, 700.0]), np.array([250.0, 650.0]))

    def limit_torques(self):
        return np.zeros(1)


def _landing_plus_one_term(objective_name: str, term: str) -> tuple[Objective, dict]:
    """The objective (checked to be human-landing's terms plus ``term``) and its averages over a
    run of VaryingActivationEngine steps."""
    scenario = Scenario(speed=TARGET, duration=T_MAX, heading=PSI, control_interval=DT)
    objective = Objective.load(objective_name)
    landing = Objective.load("human-landing")
    assert [(t.name, t.measure, t.weight) for t in objective.terms if t.name != term] == [
        (t.name, t.measure, t.weight) for t in landing.terms
    ]
    rec = ObjectiveRecorder(fake_sim(), scenario, objective)
    for k in range(N + 1):
        sensors, raw = step(k)
        rec(sensors, EXCITATION, VaryingActivationEngine(k), raw)
    return objective, rec.finish(T_MAX, terminated=False)


def test_cubed_activation_is_the_muscle_mass_weighted_mean_of_a_cubed():
    """cubed_activation: sum m_i a_i^3 / sum m_i per control step, averaged over t_max; the
    human-activation objective weighs it 150 beside the human-landing terms."""
    objective, avg = _landing_plus_one_term("human-activation", "activation")
    w = M_MUSCLES / M_MUSCLES.sum()
    per_step = [w @ np.minimum(np.array([0.2, 0.8]) + 0.01 * k, 1.0) ** 3 for k in range(N)]
    assert avg["activation"] == pytest.approx(np.mean(per_step), rel=1e-12)
    assert objective.combine(avg)[1]["activation"] == pytest.approx(150.0 * np.mean(per_step), rel=1e-12)


def test_passive_fibre_force_is_the_fibre_force_beyond_the_active_in_body_weights():
    """passive_fibre_force: sum max(0, F_fibre - F_active) / (M g) per control step, averaged over
    t_max (VaryingActivationEngine: 300 - 250 and 700 - 650 N); the human-passive objective weighs
    it 2 beside the human-landing terms; it is refused for ideal muscles, which have no fibre."""
    from musclewalk.constants import GRAVITY
    from musclewalk.measures.gait import PassiveFibreForcePerBodyWeight

    objective, avg = _landing_plus_one_term("human-passive", "passive")
    assert avg["passive"] == pytest.approx(100.0 / (BODY_MASS * GRAVITY), rel=1e-12)
    assert objective.combine(avg)[1]["passive"] == pytest.approx(2.0 * avg["passive"], rel=1e-12)
    with pytest.raises(ValueError, match="passive_fibre_force: needs millard muscles"):
        PassiveFibreForcePerBodyWeight(SimpleNamespace(muscle_model="ideal"))


def test_an_objective_file_extends_another_term_by_term(tmp_path):
    """``extends``: the parent's terms (by name, or a .yaml path relative to the file), each term
    given replacing only the fields it names; ``null`` removes a term; a new name adds one."""
    (tmp_path / "base.yaml").write_text(
        "description: base\nterms:\n"
        "  speed: {measure: speed_error, weight: 100.0, threshold: 0.05}\n"
        "  cadence: {measure: step_frequency_error, weight: 20.0}\n"
    )
    (tmp_path / "child.yaml").write_text(
        "extends: base.yaml\ndescription: child\nterms:\n"
        "  speed: {weight: 50.0}\n  cadence: null\n  limit: {measure: joint_limit_torque, weight: 30.0}\n"
    )
    (tmp_path / "grandchild.yaml").write_text(
        "extends: child.yaml\ndescription: grandchild\nterms:\n  limit: {weight: 1.0}\n"
    )
    child = Objective.load(tmp_path / "grandchild.yaml")
    assert child.description == "grandchild"
    assert [(t.name, t.measure, t.weight, t.threshold) for t in child.terms] == [
        ("speed", "speed_error", 50.0, 0.05),
        ("limit", "joint_limit_torque", 1.0, 0.0),
    ]
    # by name, from models/objectives/: the shipped variants equal their parent but for one term
    heavy, steps = Objective.load("human-firstpeak-heavy"), Objective.load("human-firstpeak-heavy-steps")
    assert [t for t in steps.terms if t.name != "cadence"] == [t for t in heavy.terms if t.name != "cadence"]
    assert [t.weight for t in steps.terms if t.name == "cadence"] == [100.0]
    cycle = {t.name: t for t in Objective.load("human-firstpeak-cycle").terms}
    assert cycle["firstpeak"].measure == "cycle_first_grf_peak_excess" and cycle["firstpeak"].weight == 100.0


@pytest.mark.parametrize(
    "text, message",
    [
        ("extends: base.yaml\nterms: {}\n", "description: required"),
        ("extends: nowhere.yaml\ndescription: d\n", "extends:"),
        ("extends: self.yaml\ndescription: d\n", "cycle"),
        ("extends: base.yaml\ndescription: d\nterms: {absent: null}\n", "terms.absent"),
        ("extends: base.yaml\ndescription: d\nterms: {speed: {measure: none}}\n", "terms.speed.measure"),
    ],
)
def test_a_bad_extending_objective_names_its_file_and_key(tmp_path, text, message):
    (tmp_path / "base.yaml").write_text(
        "description: base\nterms:\n  speed: {measure: speed_error, weight: 1.0}\n"
    )
    path = tmp_path / "self.yaml"
    path.write_text(text)
    with pytest.raises(ObjectiveError, match=message) as err:
        Objective.load(path)
    assert "self.yaml" in str(err.value)


def test_excitation_tremor_is_the_mean_power_of_the_excitations_above_6_hz():
    """A 20 Hz oscillation of amplitude 0.2 reads about 0.2^2 / 2 once the filter has settled, a
    1 Hz one of the same amplitude (the gait band) and a constant excitation next to nothing; the
    value is the mean over the muscles and excitations are clipped to 0-1 first."""
    from musclewalk.measures.gait import ExcitationTremor

    measure = _one_measure("excitation_tremor")
    assert isinstance(measure, ExcitationTremor)
    t = np.arange(800) * DT
    fast, slow = 0.5 + 0.2 * np.sin(2 * np.pi * 20.0 * t), 0.5 + 0.2 * np.sin(2 * np.pi * 1.0 * t)
    constant, above = np.full_like(t, 0.3), np.full_like(t, 1.7)
    values = np.array(
        [
            measure.value(SimpleNamespace(t=tk, excitation=np.array([f, s, c, a])))
            for tk, f, s, c, a in zip(t, fast, slow, constant, above)
        ]
    )
    settled = values[200:].mean() * 4  # the four muscles' sum
    assert settled == pytest.approx(0.02, rel=0.1)
    for name, signal in (("slow", slow), ("constant", constant), ("clipped at 1", above)):
        fresh = _one_measure("excitation_tremor")  # started at rest on its first excitations
        power = np.mean(
            [fresh.value(SimpleNamespace(t=tk, excitation=np.array([u]))) for tk, u in zip(t, signal)][200:]
        )
        assert power < (1e-4 if name == "slow" else 1e-20), name
