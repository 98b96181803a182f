"""Measures of one control step (Geijtenbeek et al. 2013, eqs. 34-37, the metabolic rate of
Wang et al. 2012, and the summed muscle force of the paper's ablation, §6.3). A measure is built
once per run from the `MeasureContext` and gives one value per control step from a `StepSample`;
the objective integrates and averages the values over t_max. After an early termination a measure
counts ``after_termination`` for the rest of t_max. A measure names the muscle models it is
defined for (``muscle_models``; the metabolic rate needs Millard muscles).

Adding a measure: a class here with ``name``, ``unit`` and ``value``, listed in `MEASURES`; an
objective file then refers to it by that name."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, ClassVar

import numpy as np

from ..constants import GRAVITY
from ..control.targets import knee_flexion
from ..model.metadata import MILLARD_MUSCLES, MUSCLE_MODELS
from .events import StepDetector, contact_threshold
from .metabolics import metabolic_rate, muscle_masses

LOADED_SPHERE_FORCE = 1.0  # N: a contact sphere carries load above this


@dataclass
class MeasureContext:
    """What the measures need to know about the creature and the task, fixed for a run."""

    body_mass: float  # kg
    dt: float  # control interval, s
    target_speed: float  # m/s, at the start
    heading_at: Callable[[float], float]
    head_body: int  # index of the head body (the trunk when there is none)
    head_offset: np.ndarray  # head point in the head body's frame, m
    head_base_R: np.ndarray  # head body orientation in the base pose (3, 3)
    muscle_mass: np.ndarray  # kg per muscle
    contact_velocities: Callable  # raw sensors -> (n_spheres, 3) sphere centre velocities
    leg_length: float = 1.0  # m
    muscle_model: str = MILLARD_MUSCLES  # models/physics.yaml ``muscles``
    upper_leg_bodies: tuple[int, int] | None = None  # (right, left) indices of Sensors.body_*
    lower_leg_bodies: tuple[int, int] | None = None
    knee0: float = 0.0  # rad, knee flexion of the bodies' frames in the base pose (ControlModel)
    shared: dict = field(default_factory=dict)  # per-run records the measures share (CycleRecord)
    # the target speed at a time and the distance it covers between two, when it changes within
    # the run (Scenario.speed_change); None: target_speed throughout
    speed_at: Callable[[float], float] | None = None
    distance_between: Callable[[float, float], float] | None = None

    def target_speed_at(self, t: float) -> float:
        return self.target_speed if self.speed_at is None else self.speed_at(t)

    def target_distance(self, t0: float, t1: float) -> float:
        if self.distance_between is None:
            return self.target_speed * (t1 - t0)
        return self.distance_between(t0, t1)

    def mean_target_speed(self, t0: float, t1: float) -> float:
        """The target speed averaged over [t0, t1] (at t1 when they are equal): what a speed
        measured over that interval is compared with."""
        if self.speed_at is None:
            return self.target_speed
        if t1 <= t0:
            return self.speed_at(t1)
        return self.distance_between(t0, t1) / (t1 - t0)

    @classmethod
    def from_simulator(cls, sim, scenario) -> "MeasureContext":
        meta = sim.meta
        cm = sim.control_model
        head = cm.head_body if cm.head_body is not None else cm.trunk_body
        offset = np.zeros(3) if cm.head_body is not None else np.asarray(cm.head_offset, float)
        head_name = meta.bodies[head].name
        return cls(
            body_mass=meta.total_mass,
            dt=scenario.control_interval,
            target_speed=scenario.speed,
            heading_at=scenario.heading_at,
            head_body=head,
            head_offset=offset,
            head_base_R=np.reshape(meta.base_pose[head_name].R, (3, 3)),
            muscle_mass=muscle_masses(
                [m.max_isometric_force for m in meta.muscles], [m.optimal_fiber_length for m in meta.muscles]
            ),
            contact_velocities=sim.bridge.contact_velocities,
            leg_length=float(meta.leg_length),
            muscle_model=meta.muscle_model,
            upper_leg_bodies=tuple(cm.upper_body),
            lower_leg_bodies=tuple(cm.lower_body),
            knee0=float(cm.knee0),
            speed_at=scenario.speed_at if scenario.speed_change else None,
            distance_between=scenario.target_distance if scenario.speed_change else None,
        )


@dataclass
class StepSample:
    """One control step as the measures see it."""

    t: float
    sensors: object  # control.sensors.Sensors
    raw: object  # sim.engine.RawSensors
    excitation: np.ndarray
    heading: float  # target heading, rad
    forward: np.ndarray  # horizontal unit vector of the target heading
    muscles: object = None  # sim.engine.MuscleState, when a measure needs it
    limit_torques: np.ndarray | None = None  # N m per joint limit, when a measure needs them

    @classmethod
    def at(cls, sensors, raw, excitation, heading_at, muscles=None, limit_torques=None) -> "StepSample":
        heading = heading_at(sensors.t)
        forward = np.array([math.cos(heading), 0.0, -math.sin(heading)])
        return cls(sensors.t, sensors, raw, excitation, heading, forward, muscles, limit_torques)


class Measure:
    name: ClassVar[str]
    unit: ClassVar[str]
    needs_muscles: ClassVar[bool] = False
    needs_limit_torques: ClassVar[bool] = False
    after_termination: ClassVar[float] = 0.0
    muscle_models: ClassVar[tuple[str, ...]] = MUSCLE_MODELS  # those it is defined for

    def __init__(self, context: MeasureContext):
        if context.muscle_model not in self.muscle_models:
            raise ValueError(
                f"{self.name}: needs {' or '.join(self.muscle_models)} muscles, the model has "
                f"{context.muscle_model} muscles (physics.muscles)"
            )
        self.context = context

    def value(self, sample: StepSample) -> float:
        raise NotImplementedError


class SpeedError(Measure):
    """|1 - v_base / v_target| (eq. 34). v_base is the forward speed of the average foot position
    between the last two touch-downs of alternating feet, (p_k - p_k-1) / max(t_k - t_k-1,
    t - t_k): it decays while no new step comes (no step, no progress); 0 until two touch-downs
    were seen. A fall counts 1 for the rest of t_max. Under a target that changes within the run
    (beyond the paper) v_target is the target averaged over the same step, t_k-1 to t_k, so that
    a walker that keeps up with a ramp is not charged the half step by which v_base lags it."""

    name, unit = "speed_error", "1"
    after_termination = 1.0

    def __init__(self, context):
        super().__init__(context)
        self.steps = StepDetector(contact_threshold(context.body_mass))
        self.initiations: list[tuple[float, float]] = []
        self.v_base = 0.0

    def value(self, sample):
        s = sample.sensors
        if self.steps.update(s.foot_grf[:, 1]):
            self.initiations.append((sample.t, float(s.foot_pos.mean(axis=0) @ sample.forward)))
        if len(self.initiations) >= 2:
            (t0, p0), (t1, p1) = self.initiations[-2], self.initiations[-1]
            self.v_base = (p1 - p0) / max(t1 - t0, sample.t - t1, 1e-9)
            target = self.context.mean_target_speed(t0, t1)
        else:
            target = self.context.target_speed_at(sample.t)
        return abs(1.0 - self.v_base / target)


class SpeedErrorFromStart(SpeedError):
    """eq. 34 as speed_error, with the start counted as the first contact initiation: the run
    starts on its stance foot (§6), so the average foot position at t = 0 is p_0 and v_base is
    known from the first touch-down on, where speed_error waits for the second. A reading of
    "updated at each contact initiation" for optimizations from the template defaults, whose
    candidates fall before their second step: with speed_error every one of them scores 1 until it
    falls (and the other terms, 0 after a fall, favour falling sooner); with this one a candidate
    that steps forward before it falls scores better. For a walker the two differ in the first
    step only."""

    name = "speed_error_from_start"

    def value(self, sample):
        if not self.initiations and self.steps.in_contact is None:
            self.initiations.append((sample.t, float(sample.sensors.foot_pos.mean(axis=0) @ sample.forward)))
        return super().value(sample)


class TimeAfterTermination(Measure):
    """0 while the run goes on and 1 for the rest of t_max after an early termination: averaged,
    the share of t_max a fall cut off. Not in the paper: its speed term (eq. 34) is 1 before the
    second touch-down and after a fall alike, so candidates that fall before stepping, as every
    one does from the Ostrich's and LongNeck's template defaults, score the same however long they
    stay up; this term orders them (a bootstrap stage's objective,
    models/objectives/geijtenbeek2013-survive.yaml)."""

    name, unit = "time_after_termination", "1"
    after_termination = 1.0

    def value(self, sample):
        return 0.0


class ProgressShortfall(Measure):
    """How far the centre of mass' progress along the target heading falls short of the target
    speed: 1 - d(t) / (v_target t), held in [0, 1], with d(t) the distance the centre of mass
    travelled along the (possibly turning) target heading since the start; 1 for the rest of t_max
    after an early termination. Averaged over t_max: 0 for a creature that keeps up with the target
    speed throughout, 1 for one that stands still, walks backward or falls at once, and in between
    how far it got before it fell. Not in the paper: a bootstrap term like SCONE's GaitMeasure
    (min_velocity, the rest of the run counted lost after a fall), for optimizations from the
    template defaults; time_after_termination rewards staying up however little the creature
    moves, and the Ostrich's search under it stood still (models/objectives/geijtenbeek2013-progress.yaml)."""

    name, unit = "progress_shortfall", "1"
    after_termination = 1.0

    def __init__(self, context):
        super().__init__(context)
        self.start: float | None = None
        self.distance = 0.0

    def value(self, sample):
        if self.start is None:
            self.start = sample.t
        elapsed = sample.t - self.start
        if elapsed > 0.0:
            target = self.context.target_distance(self.start, sample.t)
            shortfall = min(1.0, max(0.0, 1.0 - self.distance / target))
        else:
            shortfall = 1.0
        self.distance += float(sample.sensors.com_vel @ sample.forward) * self.context.dt
        return shortfall


class DistanceShortfall(Measure):
    """1 - (centre of mass velocity along the target heading) / target speed, unclipped, and 1
    after an early termination: averaged over t_max it is 1 - D / (v_target t_max), with D the
    distance the centre of mass travelled along the heading before the run ended. Not in the
    paper: a pace gate for the steps of a balance-aid continuation (a term of weight 0 with a
    threshold, named in ``stop_when_met``). progress_shortfall averages the running ratio
    1 - d(t) / (v_target t), which a start at the target speed keeps low for a while: the
    Ostrich's 0.06 aid walker averaged below 0.5 there while it covered 0.40 of the target's
    distance (models/objectives/geijtenbeek2013-progress-pace.yaml)."""

    name, unit = "distance_shortfall", "1"
    after_termination = 1.0

    def value(self, sample):
        return 1.0 - float(sample.sensors.com_vel @ sample.forward) / self.context.target_speed_at(sample.t)


class HeadOrientationError(Measure):
    """Rotation angle between the head's orientation and its target: the base-pose orientation
    turned to the target heading (eq. 35)."""

    name, unit = "head_orientation_error", "rad"

    def value(self, sample):
        c = self.context
        R_head = sample.sensors.body_R[c.head_body]
        ch, sh = math.cos(sample.heading), math.sin(sample.heading)
        R_target = np.array([[ch, 0.0, sh], [0.0, 1.0, 0.0], [-sh, 0.0, ch]]) @ c.head_base_R
        cos_angle = (np.trace(R_head.T @ R_target) - 1.0) / 2.0
        return math.acos(max(-1.0, min(1.0, cos_angle)))


class HeadVelocityError(Measure):
    """|v_target - v_head| of the head point, v_target = target speed along the heading (eq. 36)."""

    name, unit = "head_velocity_error", "m/s"

    def value(self, sample):
        c, s = self.context, sample.sensors
        r = s.body_R[c.head_body] @ c.head_offset
        v_head = s.body_vel[c.head_body] + np.cross(s.body_omega[c.head_body], r)
        return float(np.linalg.norm(c.target_speed_at(sample.t) * sample.forward - v_head))


class FootSlide(Measure):
    """Mean horizontal speed of the contact spheres that carry load (eq. 37); 0 without load."""

    name, unit = "foot_slide", "m/s"

    def value(self, sample):
        loaded = sample.raw.contact_force[:, 1] > LOADED_SPHERE_FORCE
        if not np.any(loaded):
            return 0.0
        vel = self.context.contact_velocities(sample.raw)[loaded]
        return float(np.mean(np.hypot(vel[:, 0], vel[:, 2])))


class MetabolicRatePerKg(Measure):
    """Whole-body metabolic rate per body mass, basal included (Wang et al. 2012; see
    `metabolics`)."""

    name, unit = "metabolic_rate_per_kg", "W/kg"
    needs_muscles = True
    # the heat rates need activation, fibre length and velocity: an ideal muscle has none
    muscle_models = (MILLARD_MUSCLES,)

    def rate(self, excitation, muscles) -> float:
        """W, from the excitations and a MuscleState."""
        c = self.context
        return metabolic_rate(
            c.body_mass,
            c.muscle_mass,
            excitation,
            muscles.activation,
            muscles.norm_fiber_length,
            muscles.fiber_velocity,
            muscles.fiber_force,
            muscles.active_fiber_force,
        )

    def value(self, sample):
        return self.rate(sample.excitation, sample.muscles) / self.context.body_mass


class MetabolicCostPerTargetDistance(MetabolicRatePerKg):
    """Metabolic energy per body mass and metre at the target speed, J/(kg m): the metabolic
    rate per kg divided by the target speed, so that its average over t_max is the energy per
    kg and per metre the task asks for (Wang et al. 2012 make metabolic energy a main term; at a
    held speed this is the cost of transport). Under a target that changes within the run each
    step's rate is divided by the target of that step: the average is then not the energy over
    the target's distance, but it charges each moment at its own pace."""

    name, unit = "metabolic_cost_per_target_distance", "J/(kg m)"

    def value(self, sample):
        return super().value(sample) / self.context.target_speed_at(sample.t)


class CubedActivation(Measure):
    """Muscle-mass-weighted mean of the cubed activations, sum_i m_i a_i^3 / sum_i m_i (0 to 1;
    ideal muscles: the excitation). Beyond the paper: SCONE's CubedMuscleActivation effort, which
    its gait objectives weigh beside Wang et al. 2012's metabolic rate (Ackermann & van den Bogert
    2010 found activation cubed, a fatigue-like criterion, predicts human gait best). The Wang
    2012 heat rates grow about linearly with activation (their slope at a = 0.7 is 2.3 times their
    slope at 0.1), so a muscle held at 0.75 costs little more per unit of activation than one at
    0.25; a^3 charges the step from 0.65 to 0.75 5.4 times as much as the step from 0.25 to 0.35
    and so favours spreading a joint's load over its muscles and dropping co-contraction."""

    name, unit = "cubed_activation", "1"
    needs_muscles = True

    def __init__(self, context):
        super().__init__(context)
        self.weights = np.asarray(context.muscle_mass, float) / float(np.sum(context.muscle_mass))

    def value(self, sample):
        a = np.clip(sample.muscles.activation, 0.0, 1.0)
        return float(self.weights @ (a * a * a))


class ExcitationTremor(Measure):
    """Mean over the muscles of the squared excitation above the gait band: each muscle's excitation
    (what the controller sends, clipped to 0-1) through a causal second-order Butterworth high-pass
    at ``CUTOFF`` Hz, run on the control steps, squared (1; the time average is the mean power of
    the excitations' tremor, ``musclewalk analyze``'s ``rms_above_6Hz`` squared and averaged over
    the muscles). Beyond the paper: delayed feedback at high gains drives excitations between 0 and
    1 at 10-25 Hz (the human-objective Human's hip abductors, lateral hip flexors and tibialis
    anterior, RMS 0.2-0.3 above 6 Hz), which people's EMG does not (issue 14: "abductors and
    hamstrings chatter") and which shakes the swing ankle by 3-5 deg, a mean-curve ripple that lowers
    the ankle's correlation with the norm (docs/human-like-gait.md)."""

    name, unit = "excitation_tremor", "1"
    CUTOFF = 6.0  # Hz: the gait band's upper end, as the analysis reads it

    def __init__(self, context):
        super().__init__(context)
        from scipy.signal import butter, lfilter_zi

        b, a = butter(2, self.CUTOFF, btype="high", fs=1.0 / context.dt)
        self.b, self.a = b.tolist(), a.tolist()
        self.rest = lfilter_zi(b, a)  # the state of a filter at rest on a unit input
        self.state: np.ndarray | None = None  # (2, muscles): transposed direct form II

    def value(self, sample):
        u = np.clip(np.asarray(sample.excitation, float), 0.0, 1.0)
        if self.state is None:
            self.state = np.outer(self.rest, u)  # at rest on the first excitations: no step at t = 0
        b0, b1, b2 = self.b
        _, a1, a2 = self.a
        z1, z2 = self.state
        y = b0 * u + z1
        self.state = np.stack((b1 * u - a1 * y + z2, b2 * u - a2 * y))
        return float(np.mean(y * y))


class MuscleForcePerBodyWeight(Measure):
    """Summed muscle force in body weights, sum_M F_M / (M g): the effort of Geijtenbeek et al.
    2013's "no biomechanical constraints" ablation (§6.3, E_effort = sum F_M), made dimensionless
    by the body weight. F_M is the force each muscle applies (ideal muscles: u F_max; Millard: the
    tendon force), never negative."""

    name, unit = "muscle_force_per_body_weight", "M g"

    def value(self, sample):
        return float(sample.raw.muscle_force.sum() / (self.context.body_mass * GRAVITY))


def passive_fibre_force(fiber_force: np.ndarray, active_fiber_force: np.ndarray) -> np.ndarray:
    """Per muscle (and sample), the fibre force less its active part, never negative, N: the
    parallel elastic and damping force a fibre carries without activation."""
    return np.clip(fiber_force - active_fiber_force, 0.0, None)


class PassiveFibreForcePerBodyWeight(Measure):
    """Summed passive fibre force in body weights, sum_M max(0, F_fibre - F_active) / (M g): what
    the fibres carry without activation, their parallel elastic and damping force (Millard
    muscles). Beyond the paper: the metabolic rate charges none of it, so a search may route the
    gait's work through muscles stretched past their working range and used as springs. In the
    human-objective Human committed on 2026-12-04 each hamstring carries 1.0 kN of it on average
    at 1.35-1.61 optimal fibre lengths (4.1 body weights summed over its muscles, 10 s straight),
    extends the hip through stance and holds the knee flexed in terminal swing against its vasti
    (issue 14; docs/human-like-gait.md, "Springs the metabolic rate does not charge")."""

    name, unit = "passive_fibre_force", "M g"
    needs_muscles = True
    muscle_models = (MILLARD_MUSCLES,)

    def value(self, sample):
        passive = passive_fibre_force(sample.muscles.fiber_force, sample.muscles.active_fiber_force)
        return float(passive.sum() / (self.context.body_mass * GRAVITY))


class VerticalGrfExcess(Measure):
    """Vertical ground reaction force above 1.4 body weights, summed over the feet, in body
    weights (0 below): heel-strike impacts that human gait avoids (SCONE's ReactionForceMeasure,
    max 1.4 BW)."""

    name, unit = "vertical_grf_excess", "BW"
    LIMIT = 1.4

    def value(self, sample):
        weight = self.context.body_mass * GRAVITY
        excess = sample.sensors.foot_grf[:, 1] / weight - self.LIMIT
        return float(np.clip(excess, 0.0, None).sum())


class FirstGrfPeakExcess(Measure):
    """Per landing, how far the foot's largest vertical GRF within ``WINDOW`` s of its touch-down
    (the heel-strike impact and the weight-acceptance peak: the first peak of a person's vertical
    GRF, 0-35 % of the cycle) rises above ``LIMIT`` body weights, summed over the landings and
    divided by t_max: body weights per second of walking. The value of a control step is the rise
    of the current landing's running peak excess over the step, divided by dt, so that the
    objective's time average gives that sum. Beyond the paper (issue 14's target, the first peak
    0.95-1.3 BW): vertical_grf_excess averages the force over time, so that a 20 ms impact of
    3.4 BW costs a walker little (docs/human-like-gait.md, the thirty-sixth try)."""

    name, unit = "first_grf_peak_excess", "BW / s"
    LIMIT = 1.3
    WINDOW = 0.25  # s after a touch-down: past a person's first peak at about 15 % of the cycle

    def __init__(self, context):
        super().__init__(context)
        self.feet = StepDetector(contact_threshold(context.body_mass))  # the starting stance is no landing
        self.weight = context.body_mass * GRAVITY
        self.landed_at: np.ndarray | None = None
        self.peak_excess: np.ndarray | None = None

    def value(self, sample):
        grf = np.asarray(sample.sensors.foot_grf[:, 1], float)
        if self.landed_at is None:
            self.landed_at = np.full(len(grf), -np.inf)
            self.peak_excess = np.zeros(len(grf))
        landing = self.feet.landings(grf)
        self.landed_at[landing] = sample.t
        self.peak_excess[landing] = 0.0
        within = self.feet.in_contact & (sample.t - self.landed_at <= self.WINDOW)
        excess = np.where(within, np.clip(grf / self.weight - self.LIMIT, 0.0, None), 0.0)
        rise = np.clip(excess - self.peak_excess, 0.0, None)
        self.peak_excess += rise
        return float(rise.sum() / self.context.dt)


CYCLE_PERCENT = np.linspace(0.0, 100.0, 51)  # the gait comparison's points: the normative curves' 2 %
CYCLE_FRACTION = CYCLE_PERCENT / 100.0


class CycleRecord:
    """Each foot's gait cycles (touch-down to its next touch-down) that start after ``SKIP`` s:
    their vertical GRF read at the cycle's 2 % points (``CYCLE_PERCENT``, linear between control
    steps) and summed over the foot's cycles in body weights, and every cycle's duration. Kept
    once per run in ``MeasureContext.shared`` (``of``) and updated once per control step however
    many cycle measures read it: the starting stance is no landing, an unfinished cycle counts
    nothing."""

    SKIP = 2.0  # s of start-up left out: `musclewalk compare`'s default for a simulation

    def __init__(self, body_mass: float):
        self.feet = StepDetector(contact_threshold(body_mass))
        self.weight = body_mass * GRAVITY
        self.t: float | None = None  # the control step last recorded
        self.ended = False  # whether a cycle ended at that step
        self.landing = np.zeros(0, bool)  # per foot, whether it touched down at that step
        self.times: list[list[float]] = []  # per foot, the current cycle's control steps
        self.forces: list[list[float]] = []
        self.curve_sum: np.ndarray | None = None  # (feet, points) summed cycle curves, BW
        self.cycles: np.ndarray | None = None  # per foot
        self.durations: list[float] = []  # s, every counted cycle's, in the order they ended

    @classmethod
    def of(cls, context) -> "CycleRecord":
        """The run's record: one per ``context``, shared by the measures built on it."""
        if "cycle_record" not in context.shared:
            context.shared["cycle_record"] = cls(context.body_mass)
        return context.shared["cycle_record"]

    def update(self, sample) -> bool:
        """Record the control step (again for the same step: nothing); whether a cycle ended."""
        if sample.t == self.t:
            return self.ended
        self.t = sample.t
        grf = sample.sensors.foot_grf[:, 1]
        landing = self.landing = self.feet.landings(grf)
        if self.curve_sum is None:
            self.times = [[] for _ in grf]
            self.forces = [[] for _ in grf]
            self.curve_sum = np.zeros((len(grf), len(CYCLE_PERCENT)))
            self.cycles = np.zeros(len(grf))
        self.ended = False
        for foot, force in enumerate(grf):
            if landing[foot]:
                times = self.times[foot]
                if times and times[0] >= self.SKIP:
                    grid = times[0] + CYCLE_FRACTION * (sample.t - times[0])
                    self.curve_sum[foot] += np.interp(grid, times, self.forces[foot]) / self.weight
                    self.cycles[foot] += 1
                    self.durations.append(sample.t - times[0])
                    self.ended = True
                self.times[foot], self.forces[foot] = [], []
            if landing[foot] or self.times[foot]:
                self.times[foot].append(sample.t)
                self.forces[foot].append(float(force))
        return self.ended


class _CycleTotal(Measure):
    """A total over the gait cycles of the run's `CycleRecord`, per second of walking: at a
    cycle's end the value of the control step is the total's change since the last one divided by
    dt, so that the objective's time average over t_max gives the total / t_max."""

    def __init__(self, context):
        super().__init__(context)
        self.record = CycleRecord.of(context)
        self.charged = 0.0

    def _total(self) -> float:
        raise NotImplementedError

    def value(self, sample):
        return self._charge(self._total()) if self.record.update(sample) else 0.0

    def _charge(self, total: float) -> float:
        change, self.charged = total - self.charged, total
        return change / self.context.dt


class _CycleGrfPeakOutside(_CycleTotal):
    """The peak of each foot's mean vertical GRF curve over its cycles within the cycle's points
    ``WINDOW``, how far it lies outside ``LOWER``-``UPPER`` body weights, times the foot's cycles,
    summed over the feet and divided by t_max: body weights per second of walking. The value of a
    control step is the change of that sum at a cycle's end divided by dt (negative when the mean
    curve's peak comes back toward the band). A peak as `musclewalk compare` measures it (compare
    also drops cycles far from the median duration)."""

    WINDOW: ClassVar[np.ndarray]  # a mask of CYCLE_PERCENT
    LOWER: ClassVar[float] = 0.0  # BW; 0: no lower end (the force is never negative)
    UPPER: ClassVar[float]

    def _total(self) -> float:
        cycles = self.record.cycles
        counted = cycles > 0
        if not counted.any():
            return 0.0
        peaks = (self.record.curve_sum[counted][:, self.WINDOW] / cycles[counted, None]).max(axis=1)
        outside = np.clip(self.LOWER - peaks, 0.0, None) + np.clip(peaks - self.UPPER, 0.0, None)
        return float((outside * cycles[counted]).sum())


class CycleFirstGrfPeakExcess(_CycleGrfPeakOutside):
    """The first peak of each foot's mean vertical GRF curve, read at the cycle's 2 % points up to
    35 %, above ``UPPER`` body weights (issue 14's target: at most 1.3 BW). Beyond the paper:
    first_grf_peak_excess charges each landing's raw peak, a transient of a few milliseconds that
    the cycle's points catch or miss; the forty-sixth try's later bests lowered it and lost the
    target (docs/human-like-gait.md)."""

    name, unit = "cycle_first_grf_peak_excess", "BW / s"
    WINDOW = CYCLE_PERCENT <= 35.0
    UPPER = 1.3


class CycleSecondGrfPeakOutside(_CycleGrfPeakOutside):
    """The second peak of each foot's mean vertical GRF curve, read at the cycle's 2 % points after
    35 % up to 62 % (`musclewalk compare`'s second-peak window), outside ``LOWER``-``UPPER`` body
    weights (issue 14's target, 0.95-1.3; people about 1.15). Beyond the paper: walkers with a
    weak push-off carry less than their weight at the second peak (the sixty-sixth try's
    generation-4 best 0.93-0.94 BW)."""

    name, unit = "cycle_second_grf_peak_outside", "BW / s"
    WINDOW = (CYCLE_PERCENT > 35.0) & (CYCLE_PERCENT <= 62.0)
    LOWER, UPPER = 0.95, 1.3


class CycleCadenceExcess(_CycleTotal):
    """How far the cadence of the cycles after 2 s lies outside ``LOWER``-``UPPER`` steps per
    minute, as `musclewalk compare` reads it: the mean of 120 / cycle duration over both feet's
    cycles, its excess relative to the band's nearer end times the cycles, divided by t_max: per
    second of walking, like cycle_first_grf_peak_excess. 0 within the band (issue 14's target,
    100-130; people walk at about 105-125). Beyond the paper: step_frequency_error reads each step
    from the start, pulls toward the dynamically similar frequency and does not see the cycles
    compare counts; the fiftieth and fifty-third tries weighted it up and their bests still
    stepped 131-136 times a minute."""

    name, unit = "cycle_cadence_excess", "1 / s"
    LOWER, UPPER = 100.0, 130.0  # steps per minute

    def _total(self) -> float:
        durations = self.record.durations
        cadence_sum = 0.0  # in the order the cycles ended
        for duration in durations:
            cadence_sum += 120.0 / duration
        cadence = cadence_sum / len(durations)
        outside = max(cadence - self.UPPER, 0.0) / self.UPPER + max(self.LOWER - cadence, 0.0) / self.LOWER
        return outside * len(durations)


class LandingKneeFlexionExcess(Measure):
    """Per touch-down after ``CycleRecord.SKIP`` s, how far the landing leg's knee is flexed beyond
    ``LIMIT`` (its bodies' flexion minus the base pose's, the knee coordinate), summed over the
    landings and divided by t_max: rad per second of walking (the value of a landing's control
    step is its excess / dt). People land on a nearly straight knee (the normative curve 0.4° at
    initial contact, 15° at 14 % of the cycle). Beyond the paper: the human-objective walkers land
    with the knee flexed about 20°, where 46 % of their knee's squared error against the normative
    curve lies (issue 14's knee RMSE target; docs/human-like-gait.md)."""

    name, unit = "landing_knee_flexion_excess", "rad / s"
    LIMIT = math.radians(5.0)

    def __init__(self, context):
        super().__init__(context)
        if context.upper_leg_bodies is None or context.lower_leg_bodies is None:
            raise ValueError(f"{self.name}: needs the legs' bodies (MeasureContext.upper_leg_bodies)")
        self.record = CycleRecord.of(context)

    def value(self, sample):
        self.record.update(sample)
        if sample.t < self.record.SKIP or not self.record.landing.any():
            return 0.0
        c, R = self.context, sample.sensors.body_R
        excess = 0.0
        for leg in np.nonzero(self.record.landing)[0]:
            flexion = knee_flexion(R[c.upper_leg_bodies[leg]], R[c.lower_leg_bodies[leg]]) - c.knee0
            excess += max(flexion - self.LIMIT, 0.0)
        return excess / c.dt


def dynamically_similar_step_frequency(speed: float, hip_height: float) -> float:
    """Steps per second of a walker of this hip height at this speed by Alexander's (1976)
    dynamic similarity of stride length: lambda / h = 2.3 (v^2 / (g h))^0.3 (stride = 2 steps);
    1.3 m/s with h 0.9 m: 2.06 steps/s, 124 steps/min (humans: about 105-125)."""
    stride = 2.3 * hip_height * (speed**2 / (GRAVITY * hip_height)) ** 0.3
    return 2.0 * speed / stride


class StepFrequencyError(Measure):
    """|f / f_similar - 1|: the step frequency f, 1 / max(t_k - t_k-1, t - t_k) over the last two
    touch-downs of alternating feet (as the speed measure's steps: it falls while no new step
    comes), relative to the dynamically similar one at the target speed (under a changing target
    its mean over the last step; leg length as hip height, `dynamically_similar_step_frequency`);
    0 until two touch-downs. Beyond the paper: a gait that minimizes speed error and effort may
    take short, fast steps (the paper-objective Human walks 1.3 m/s at 146-173 steps per minute
    where humans take about 120)."""

    name, unit = "step_frequency_error", "1"

    def __init__(self, context):
        super().__init__(context)
        self.steps = StepDetector(contact_threshold(context.body_mass))
        self.touch_downs: list[float] = []
        self.similar = dynamically_similar_step_frequency(context.target_speed, context.leg_length)

    def value(self, sample):
        if self.steps.update(sample.sensors.foot_grf[:, 1]):
            self.touch_downs = [*self.touch_downs[-1:], sample.t]
        if len(self.touch_downs) < 2:
            return 0.0
        t0, t1 = self.touch_downs
        frequency = 1.0 / max(t1 - t0, sample.t - t1, 1e-9)
        similar = self.similar
        if self.context.speed_at is not None:
            similar = dynamically_similar_step_frequency(
                self.context.mean_target_speed(t0, t1), self.context.leg_length
            )
        return abs(frequency / similar - 1.0)


class JointLimitTorque(Measure):
    """Summed magnitude of the joint-limit (ligament) torques, in units of body weight times leg
    length: what a gait that leans on its joint limits (a knee locked in hyperextension) pays
    (Wang et al. 2012 penalize the soft joint-limit torques; SCONE's DofLimitMeasure)."""

    name, unit = "joint_limit_torque", "M g L"
    needs_limit_torques = True

    def value(self, sample):
        scale = self.context.body_mass * GRAVITY * self.context.leg_length
        return float(np.abs(sample.limit_torques).sum() / scale)


MEASURES: dict[str, type[Measure]] = {
    m.name: m
    for m in (
        SpeedError,
        SpeedErrorFromStart,
        TimeAfterTermination,
        ProgressShortfall,
        DistanceShortfall,
        HeadOrientationError,
        HeadVelocityError,
        FootSlide,
        MetabolicRatePerKg,
        MetabolicCostPerTargetDistance,
        MuscleForcePerBodyWeight,
        CubedActivation,
        ExcitationTremor,
        PassiveFibreForcePerBodyWeight,
        VerticalGrfExcess,
        FirstGrfPeakExcess,
        CycleFirstGrfPeakExcess,
        CycleSecondGrfPeakOutside,
        CycleCadenceExcess,
        LandingKneeFlexionExcess,
        StepFrequencyError,
        JointLimitTorque,
    )
}
