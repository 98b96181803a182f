"""The complete §4 controller: FSM, target features, muscle-based JT feature control, excitation
rules (eq 20-31) and neural delays.

Excitation of muscle M at control step t (clipped to [0, 1] after summing):

    u_M(t) = c_M(state_t) + lift_M(state_t) + fb_M(t - Δ_M)

- c_M: constant excitation (eq 30-31) by the state of the leg on the muscle's side: const.stance in
  {stance, lift_off}, const.swing in {swing, stance_preparation}. Arm, tail, head-chain and any other
  muscle with side 'r' / 'l' follows that leg; a midline muscle (side None) gets the mean of the two
  legs' values (c_stance when both legs are in stance/lift-off, c_swing when both swing, halfway
  otherwise).
- lift_M: eq 24-25 while the muscle's leg is in lift_off: +lift.hip for hip flexors, -lift.hip for hip
  extensors (0 for hip muscles that are neither, or both), plus lift.knee (negative) for knee extensors;
  beyond the paper, off at 0: plus lift.ankle for ankle extensors (a push-off).
- fb_M: the feedback excitation, computed from the sensors and FSM state at step t and delivered
  Δ_M later (per-muscle ring buffer, zeros at start):
  * eq 21: stance leg's hip muscles, ã(Q̃_trunk, ω̃_trunk) over the stance hip (trunk on the parent
    side). When both legs are in stance the trunk wrench is split equally between them.
  * eq 22: head_chain muscles, ã(Q̃, ω̃, P̃, ṽ of the head) over all head_chain joints.
  * eq 23: knee/ankle extensors of a leg in stance or lift_off, fplus * F_M / F_max.
  * beyond the paper, off at onset 1: the ankle extensors' eq 23 term (stance and lift-off) scaled
    by a ramp on their foot's d_S, 0 while the foot is more than ankle_fplus.onset +
    ankle_fplus.ramp leg lengths ahead of the COM, 1 from ankle_fplus.onset on (push-off after
    mid-stance);
  * eq 26-27: swing / stance-preparation upper-leg target through the hip muscles of that leg.
  * beyond the paper, off at 0: the swing / stance-preparation upper legs' target yaw turned
    outward from the heading (swing.toe_out; eq 26-27's targets face the heading).
  * beyond the paper, off at 0: the swing / stance-preparation feet's target yaw moved from the
    trunk's heading toward the target heading (swing_foot.heading_share) and turned outward
    (swing_foot.toe_out; eq 29's targets face the trunk's heading).
  * eq 28: stance-preparation lower-leg target through the knee muscles.
  * beyond the paper, off at gain 0: eq 28's law on a stance leg, with its own knee target and gain
    (gain.stance_knee.kq, stance_knee.theta; no kw term).
  * eq 29: swing and stance-preparation foot target through the ankle muscles.
  * beyond the paper, off at 0: the swing foot's pitch target follows the lower leg's pitch
    (swing_foot.follow_shank; the paper's target is relative to the ground);
  * beyond the paper, off at 0: the swing foot's pitch error at the start of swing faded out
    linearly over swing_foot.release_time (eq 29's target otherwise applies from swing's first step);
  * beyond the paper, off at 0: a k_ω term on the stance-preparation lower leg (gain.knee.kw; eq 28
    has none);
  * beyond the paper, off at 0: a k_ω term on the swing and stance-preparation foot (gain.ankle.kw;
    eq 29 has none), on the rate of its error: the foot's angular velocity less
    swing_foot.follow_shank times the shank's;
  * beyond the paper, off at 0: swing-leg retraction, eq 14's velocity term on a stance-preparation
    foot (its origin, the ankle centre) toward zero horizontal ground speed, through that leg's hip
    and knee pairs (prep_foot.kv), while the foot is more than prep_foot.ahead leg lengths ahead
    of the COM (at -1, the default, from the start of stance preparation);
  * beyond the paper, off at gains 0: the stance dorsiflexors' law of Wang et al. 2012 (seed 003),
    u_TA += {k (theta_off - theta_a)}^+ - k_SOL F_SOL / F_max on a leg in stance or lift_off: a stretch
    reflex on the ankle's dorsiflexion theta_a from the base pose (the TA lengthens as the ankle
    plantarflexes) and the soleus force inhibiting it (stance_tibialis.*);
  * beyond the paper, off at 0: the kw terms of eq 15 act on angular velocities through a first-order
    low-pass filter of time constant tau (angular_velocity_filter.time_constant);
  * beyond the paper, off at 0: eq 18's shares blended with shares by capacity, F_max ||r_k|| over the
    mean of the muscles crossing joint k (jt_equal_activation.weight; control/jacobian.py);
  * beyond the paper, off at gain 0: knee-overextension inhibition (Geyer & Herr 2010, Wang et al. 2012,
    u_VAS += {k (theta_k - theta_off)}^- while theta_k' < 0) of the knee extensors that do not span the
    hip, on a leg in stance or lift_off.
  Contributions of one muscle to several features are summed (a biarticular muscle gets each joint's
  share τ̃_k / (m ||r_k||)). Negative feedback values are kept (they inhibit the constant part), only
  the final sum is clipped.

Constant and lift-off excitations are not delayed; the FSM itself uses undelayed sensors.
"""

from __future__ import annotations

import math
from typing import Callable, Mapping, Sequence

import numpy as np

from .delays import DelayLine
from .fsm import STATE_NAMES, GaitStateMachine, LegState
from .jacobian import add_force_moments, equal_activation_factors, feature_muscle_forces
from .model import SIDE_INDEX, ControlModel
from .params import (
    PREP_TOUCHDOWN_OFF,
    controller_parameter_specs,
    is_uniarticular_dorsiflexor,
    is_uniarticular_plantarflexor,
    validate_parameters,
)
from .rotations import few_facing_rotations, heading_of, rot_z, rotation_log, wrap_angle
from .sensors import Sensors
from .targets import (
    ankle_dorsiflexion,
    foot_pitch,
    knee_flexion,
    swing_foot_pitch_targets,
    trunk_angles,
    trunk_target_angles,
    upper_leg_angles,
    upper_leg_target_angles,
)

# feature slots
_TRUNK = (0, 1)  # trunk, through the right / left stance hip
_UPPER = (2, 3)
_LOWER = (4, 5)
_FOOT = (6, 7)
_HEAD = 8
_N_SLOTS = 9
# slot -> row of concat(facing-frame targets [trunk, upper r, upper l, foot r, foot l, head],
#                       lower-leg targets [r, l])
_TARGET_ORDER = np.array([0, 0, 1, 2, 6, 7, 3, 4, 5])
# pair groups (joint kind x side)
_GROUP_HIP = (0, 1)
_GROUP_KNEE = (2, 3)
_GROUP_ANKLE = (4, 5)
_GROUP_HEAD = 6
_GROUP_NONE = 7
_N_GROUPS = 8

_STANCE, _LIFT_OFF, _SWING, _PREP = (int(s) for s in LegState)

# where the feedback excitation (before its neural delay) comes from: `Controller.feedback_by_source`.
# The orientation features (eq 15) by the plane of their torque in the trunk's frame: sagittal
# (about its lateral Z axis), coronal (about its forward X axis), axial (about its vertical Y axis)
_ORIENTATION_FEATURES = (
    "trunk",  # eq 21, through the stance hips
    "upper_leg",  # eq 26-27, swing and stance-preparation hip targets
    "lower_leg",  # eq 28 (+ gain.knee.kw), stance-preparation knee (+ the stance knee's)
    "foot",  # eq 29 (+ gain.ankle.kw), swing and stance-preparation foot
    "head_orientation",  # eq 22, Q and omega of the head
)
_PLANES = (("sagittal", 2), ("coronal", 0), ("axial", 1))
FEEDBACK_SOURCES = tuple(
    f"{feature}_{plane}" for feature in _ORIENTATION_FEATURES for plane, _ in _PLANES
) + (
    "head_position",  # eq 14 / 22, P and v of the head
    "prep_foot_speed",  # beyond the paper: eq 14's v term on the stance-preparation foot
    "force_feedback",  # eq 23, F+
    "knee_overextension",  # beyond the paper
    "stance_tibialis",  # beyond the paper
)
_SLOT_SOURCE = np.array(  # slot -> its feature's index in _ORIENTATION_FEATURES
    [
        next(f for f, slots in enumerate((_TRUNK, _UPPER, _LOWER, _FOOT, (_HEAD,))) if slot in slots)
        for slot in range(_N_SLOTS)
    ]
)
_ROW = {name: i for i, name in enumerate(FEEDBACK_SOURCES)}


def _evaluate(value, t: float) -> float:
    return float(value(t)) if callable(value) else float(value)


def _lift_excitations(muscles, lift_hip: float, lift_knee: float, lift_ankle: float = 0.0) -> np.ndarray:
    """Eq 24-25 per muscle: +lift_hip for hip flexors, -lift_hip for hip extensors, plus lift_knee
    for knee extensors; beyond the paper, plus lift_ankle for ankle extensors (a push-off)."""
    lift = np.zeros(len(muscles))
    for i, m in enumerate(muscles):
        if "hip" in m.roles:
            lift[i] += lift_hip * (("hip_flexor" in m.roles) - ("hip_extensor" in m.roles))
        if "knee_extensor" in m.roles:
            lift[i] += lift_knee
        if "ankle_extensor" in m.roles:
            lift[i] += lift_ankle
    return lift


def _leg_masks(muscles, has_roles: Callable) -> np.ndarray:
    """(2, n_muscles) of 0/1: row 0 the right leg's muscles whose roles pass ``has_roles``, row 1
    the left's."""
    return np.array(
        [[m.side == side and has_roles(m.roles) for m in muscles] for side in ("r", "l")], dtype=float
    )


def _pair_groups(cm: ControlModel, has_head: bool) -> np.ndarray:
    """Group (joint kind x side) of each (muscle, joint) pair; _GROUP_NONE where the muscle does not
    serve that joint's features."""
    group_of_kind = {"hip": _GROUP_HIP, "knee": _GROUP_KNEE, "ankle": _GROUP_ANKLE}
    groups = np.full(cm.n_pairs, _GROUP_NONE, dtype=np.intp)
    for k, (m, j) in enumerate(zip(cm.pair_muscle.tolist(), cm.pair_joint.tolist())):
        joint, roles = cm.joints[j], cm.muscles[m].roles
        if joint.kind in group_of_kind and joint.kind in roles:
            groups[k] = group_of_kind[joint.kind][SIDE_INDEX[joint.side]]
        elif joint.kind == "head_chain" and "head_chain" in roles and has_head:
            groups[k] = _GROUP_HEAD
    return groups


def _com_relative_in_facing_frame(s: Sensors, psi: float) -> tuple:
    """(d_forward, d_right) of (right, left) foot - COM, and the COM velocity (v_forward, v_right),
    in the facing frame of heading psi (scalar work in plain Python)."""
    cpsi, spsi = math.cos(psi), math.sin(psi)
    (rx, _, rz), (lx, _, lz) = s.foot_pos.tolist()
    cx, _, cz = s.com_pos.tolist()
    vx, _, vz = s.com_vel.tolist()
    d_forward = ((rx - cx) * cpsi - (rz - cz) * spsi, (lx - cx) * cpsi - (lz - cz) * spsi)
    d_right = ((rx - cx) * spsi + (rz - cz) * cpsi, (lx - cx) * spsi + (lz - cz) * cpsi)
    v_forward = vx * cpsi - vz * spsi
    v_right = vx * spsi + vz * cpsi
    return d_forward, d_right, v_forward, v_right


class _StateTables:
    """Everything that depends only on the (right, left) leg states, per muscle / pair / slot."""

    __slots__ = ("constant", "fplus", "pair_slot", "pair_weight", "kq", "kw", "n_stance", "knee_relative")


class Controller:
    """Muscle-based locomotion controller of §4 for one creature.

    speed: target forward speed ṽ_forward (m/s), heading: target heading ψ (rad, about +Y, positive =
    left); each a float or a callable of time.
    """

    def __init__(
        self,
        control_model: ControlModel,
        params: Mapping[str, float] | None = None,
        speed: float | Callable[[float], float] = 1.0,
        heading: float | Callable[[float], float] = 0.0,
    ):
        cm = control_model
        self.model = cm
        self.specs = controller_parameter_specs(cm)
        self.params = validate_parameters(params or {}, self.specs)
        self.speed = speed
        self.heading = heading
        self._has_head = cm.has_head
        self._L = cm.leg_length
        self._froude = math.sqrt(cm.gravity * cm.leg_length)

        self._init_fsm_thresholds()
        self._init_target_laws()
        self._init_feature_gains()
        self._init_feature_bodies()
        self._init_muscle_terms()
        self._init_pair_terms()

        self._tables: dict = {}
        self.fsm = GaitStateMachine()
        self._delay = DelayLine(cm.delay_steps)
        self.reset()

    def _init_fsm_thresholds(self) -> None:
        """§4.1: contact force and foot distances, scaled by body weight and leg length."""
        p, cm = self.params, self.model
        self._contact_threshold = p["fsm.contact_force"] * cm.total_mass * cm.gravity
        self._d_lift = p["fsm.d_lift"] * self._L
        self._d_prep = p["fsm.d_prep"] * self._L
        touchdown_ahead = p.get("fsm.prep_touchdown_ahead", PREP_TOUCHDOWN_OFF)
        self._d_touch = None if touchdown_ahead <= PREP_TOUCHDOWN_OFF else touchdown_ahead * self._L

    def _init_target_laws(self) -> None:
        """§4.2: coefficients of the target laws (eq 10-13) and the fixed knee, ankle and head
        targets."""
        p = self.params
        self._trunk_law = (p["trunk.theta0"], p["trunk.k_speed"], p["trunk.k_heading"])
        self._upper_law = {
            phase: (
                p[f"{phase}.theta0"],
                p[f"{phase}.kp_sagittal"],
                p[f"{phase}.kd_sagittal"],
                p["coronal.phi0"],
                p["coronal.kp"],
                p["coronal.kd"],
            )
            for phase in ("swing", "prep")
        }
        self._toe_out = p["swing.toe_out"]
        self._knee_relative = rot_z(-p["knee.theta"])
        self._stance_knee_relative = rot_z(-p["stance_knee.theta"])
        self._stance_knee_on = p["gain.stance_knee.kq"] > 0.0
        self._ankle_target = p["ankle.theta"]
        self._follow_shank = p["swing_foot.follow_shank"]
        self._release_time = p.get("swing_foot.release_time", 0.0)
        self._foot_heading_share = p["swing_foot.heading_share"]
        self._foot_toe_out = p["swing_foot.toe_out"]
        self._foot_yaw_on = self._foot_heading_share != 0.0 or self._foot_toe_out != 0.0
        self._ankle_twist = self.model.ankle_twist
        # lower-leg frame pitch in the base pose (sagittal chain: upper-leg pitch minus knee flexion)
        self._lower_leg_pitch0 = self.model.upper_leg_pitch0 - self.model.knee0
        self._head_pitch = self.model.head_pitch0

    def _init_feature_gains(self) -> None:
        """Dimensional PD gains per feature: (kq, kw) of eq 15 in units of M g L, and the head's
        force gains (kp, kv) of eq 14; M of the head's is the head chain's mass where the model
        says so (ControlModel.head_gain_mass)."""
        p, cm = self.params, self.model
        g, L, M = cm.gravity, cm.leg_length, cm.total_mass

        def units(mass: float) -> tuple:  # (M g L, M g L sqrt(L/g)) for this mass
            torque = mass * g * L
            return torque, torque * math.sqrt(L / g)

        torque_unit, rate_torque_unit = units(M)
        self._gains = {
            "trunk": (p["gain.trunk.kq"] * torque_unit, p["gain.trunk.kw"] * rate_torque_unit),
            "swing": (p["gain.swing.kq"] * torque_unit, 0.0),
            "prep": (p["gain.prep.kq"] * torque_unit, p["gain.prep.kw"] * rate_torque_unit),
            "knee": (p["gain.knee.kq"] * torque_unit, p.get("gain.knee.kw", 0.0) * rate_torque_unit),
            "stance_knee": (p["gain.stance_knee.kq"] * torque_unit, 0.0),
            "ankle": (p["gain.ankle.kq"] * torque_unit, p.get("gain.ankle.kw", 0.0) * rate_torque_unit),
        }
        if self._has_head:
            head_M = M if cm.head_gain_mass is None else cm.head_gain_mass
            head_torque_unit, head_rate_torque_unit = units(head_M)
            self._gains["head"] = (
                p["gain.head.kq"] * head_torque_unit,
                p["gain.head.kw"] * head_rate_torque_unit,
            )
            self._kp_head = p["gain.head.kp"] * head_M * g / L
            self._kv_head = p["gain.head.kv"] * head_M * g / self._froude
        self._kv_prep_foot = p.get("prep_foot.kv", 0.0) * M * g / self._froude
        self._prep_foot_ahead_distance = p.get("prep_foot.ahead", -1.0) * L
        # the kw terms' angular velocities: first-order low-pass, one exact update per control
        # interval (for an input held over the interval)
        tau = p["angular_velocity_filter.time_constant"]
        self._omega_filter_rate = -math.expm1(-cm.dt / tau) if tau > 0.0 else 1.0

    def _init_feature_bodies(self) -> None:
        """Body of each feature slot (the trunk stands in for a missing head) and the upper legs the
        lower-leg targets are relative to."""
        cm = self.model
        head = cm.head_body if cm.head_body is not None else cm.trunk_body
        self._slot_body = np.array(
            [cm.trunk_body, cm.trunk_body, *cm.upper_body, *cm.lower_body, *cm.foot_body, head], dtype=np.intp
        )
        self._upper_bodies = np.array(cm.upper_body, dtype=np.intp)
        self._lower_bodies = np.array(cm.lower_body, dtype=np.intp)
        # gain.ankle.kw damps the rate of eq 29's error: the foot's angular velocity less the
        # moving target's, swing_foot.follow_shank times the shank's
        self._foot_rate_shank_share = (
            self.params["swing_foot.follow_shank"] if self.params.get("gain.ankle.kw", 0.0) > 0.0 else 0.0
        )

    def _init_muscle_terms(self) -> None:
        """Per muscle: side, 1 / F_max, constant (eq 30-31), F+ (eq 23) and lift-off (eq 24-25) terms."""
        p, muscles = self.params, self.model.muscles
        self._side = np.array([SIDE_INDEX[m.side] for m in muscles], dtype=np.intp)
        self._inv_fmax = 1.0 / np.array([m.fmax for m in muscles])
        self._c_stance = np.array([p[f"const.stance.{m.unique}"] for m in muscles])
        self._c_swing = np.array([p[f"const.swing.{m.unique}"] for m in muscles])
        self._fplus = np.array([p.get(f"fplus.{m.unique}", 0.0) for m in muscles])
        self._lift = _lift_excitations(muscles, p["lift.hip"], p["lift.knee"], p["lift.ankle"])
        self._ankle_onset = p["ankle_fplus.onset"] * self._L
        self._ankle_onset_ramp = p["ankle_fplus.ramp"] * self._L
        self._ankle_onset_on = p["ankle_fplus.onset"] < 1.0
        self._ankle_extensor = _leg_masks(muscles, lambda roles: "ankle_extensor" in roles)
        self._knee_inhibition_gain = p["knee_overextension.gain"]
        self._knee_inhibition_offset = p["knee_overextension.theta_off"]
        self._knee_inhibited = _leg_masks(
            muscles, lambda roles: "knee_extensor" in roles and "hip" not in roles
        )
        self._init_stance_tibialis()

    def _init_stance_tibialis(self) -> None:
        """Stance dorsiflexor law (beyond the paper): per leg, its dorsiflexors and the weights that
        average its soleus-like muscles' F / F_max."""
        p, cm, muscles = self.params, self.model, self.model.muscles
        self._ta_stretch_gain = p.get("stance_tibialis.stretch_gain", 0.0)
        self._ta_theta_off = p.get("stance_tibialis.theta_off", 0.0)
        self._ta_soleus_inhibition = p.get("stance_tibialis.soleus_inhibition", 0.0)
        self._ankle_dorsiflexion0 = cm.ankle0 - self._lower_leg_pitch0
        self._stance_dorsiflexor = _leg_masks(muscles, is_uniarticular_dorsiflexor)
        soleus = _leg_masks(muscles, is_uniarticular_plantarflexor)
        counts = np.maximum(soleus.sum(axis=1, keepdims=True), 1.0)
        self._soleus_force_weight = soleus * self._inv_fmax / counts

    def _init_pair_terms(self) -> None:
        """Per (muscle, joint) pair: feature group, indices and the eq 18-19 divisor m F_max."""
        cm = self.model
        groups = _pair_groups(cm, self._has_head)
        self._pair_group = groups
        self._pair_muscle = cm.pair_muscle
        self._pair_joint = cm.pair_joint
        self._pair_inv_m_fmax = self._inv_fmax[cm.pair_muscle] / cm.n_spanned[cm.pair_muscle]
        self._head_pairs = np.flatnonzero(groups == _GROUP_HEAD)
        self._head_pair_joints = cm.pair_joint[self._head_pairs]
        self._leg_pairs = [
            np.flatnonzero((groups == _GROUP_HIP[leg]) | (groups == _GROUP_KNEE[leg])) for leg in (0, 1)
        ]
        self._leg_pair_joints = [cm.pair_joint[pairs] for pairs in self._leg_pairs]
        self._equal_activation = self.params.get("jt_equal_activation.weight", 0.0)
        self._pair_fmax = 1.0 / self._inv_fmax[cm.pair_muscle]

    def _pair_factor(self, s: Sensors) -> np.ndarray | None:
        """Per pair, the capacity share blended into eq 18 (None at weight 0: eq 18 itself)."""
        if self._equal_activation <= 0.0:
            return None
        return equal_activation_factors(
            s.pair_r, self._pair_fmax, self._pair_joint, len(self.model.joints), self._equal_activation
        )

    # ----------------------------------------------------------------------------------------------
    def reset(self, initial_leg_states: Sequence = ("stance", "swing")) -> None:
        """Start a new run; (right, left) states; the paper starts with the left leg in swing."""
        self.fsm.reset(initial_leg_states)
        self._delay.reset()
        self._last: dict = {}
        self._last_sensors: Sensors | None = None
        self._omega_filtered: np.ndarray | None = None
        # per leg: (start time, foot pitch error at the start) of the swing foot's release
        self._release = [(0.0, 0.0), (0.0, 0.0)]
        self.feedback = np.zeros(self.model.n_muscles)
        self.excitation = np.zeros(self.model.n_muscles)

    @property
    def leg_states(self) -> tuple:
        return self.fsm.names

    def _state_tables(self, states: tuple) -> _StateTables:
        """Rule selection for a (right, left) state pair (§4.4), cached."""
        tables = self._tables.get(states)
        if tables is not None:
            return tables
        tables = _StateTables()
        stance_like = np.array([states[0] <= _LIFT_OFF, states[1] <= _LIFT_OFF, False], dtype=float)
        swing_like = 1.0 - stance_like
        swing_like[2] = 0.5 * (swing_like[0] + swing_like[1])
        lifting = np.array([states[0] == _LIFT_OFF, states[1] == _LIFT_OFF, False], dtype=float)
        side = self._side
        tables.constant = (
            self._c_stance + (self._c_swing - self._c_stance) * swing_like[side] + self._lift * lifting[side]
        )
        tables.fplus = self._fplus * stance_like[side] * self._inv_fmax
        tables.n_stance = (states[0] == _STANCE) + (states[1] == _STANCE)

        kq, kw = np.zeros(_N_SLOTS), np.zeros(_N_SLOTS)
        group_slot = np.full(_N_GROUPS, _HEAD, dtype=np.intp)
        group_weight = np.zeros(_N_GROUPS)
        trunk_share = 1.0 / max(tables.n_stance, 1)
        for leg in (0, 1):
            state = states[leg]
            if state == _STANCE:
                kq[_TRUNK[leg]], kw[_TRUNK[leg]] = (gain * trunk_share for gain in self._gains["trunk"])
                group_slot[_GROUP_HIP[leg]] = _TRUNK[leg]
                group_weight[_GROUP_HIP[leg]] = -1.0  # trunk on the parent side of the hip
                if self._stance_knee_on:
                    kq[_LOWER[leg]], kw[_LOWER[leg]] = self._gains["stance_knee"]
                    group_slot[_GROUP_KNEE[leg]] = _LOWER[leg]
                    group_weight[_GROUP_KNEE[leg]] = 1.0
            elif state == _SWING or state == _PREP:
                phase = "prep" if state == _PREP else "swing"
                kq[_UPPER[leg]], kw[_UPPER[leg]] = self._gains[phase]
                group_slot[_GROUP_HIP[leg]] = _UPPER[leg]
                group_weight[_GROUP_HIP[leg]] = 1.0
                kq[_FOOT[leg]], kw[_FOOT[leg]] = self._gains["ankle"]
                group_slot[_GROUP_ANKLE[leg]] = _FOOT[leg]
                group_weight[_GROUP_ANKLE[leg]] = 1.0
                if state == _PREP:
                    kq[_LOWER[leg]], kw[_LOWER[leg]] = self._gains["knee"]
                    group_slot[_GROUP_KNEE[leg]] = _LOWER[leg]
                    group_weight[_GROUP_KNEE[leg]] = 1.0
        if self._has_head:
            kq[_HEAD], kw[_HEAD] = self._gains["head"]
            group_weight[_GROUP_HEAD] = 1.0
        tables.kq, tables.kw = kq[:, None], kw[:, None]
        # lower-leg targets relative to the upper legs: a stance leg's by the stance knee target
        tables.knee_relative = (
            np.stack([self._stance_knee_relative if st == _STANCE else self._knee_relative for st in states])
            if self._stance_knee_on
            else self._knee_relative
        )
        tables.pair_slot = group_slot[self._pair_group]
        tables.pair_weight = group_weight[self._pair_group] * self._pair_inv_m_fmax
        self._tables[states] = tables
        return tables

    def state_terms(self, states: tuple) -> tuple[np.ndarray, np.ndarray]:
        """(constant and lift-off excitation, F+ gain per newton of the muscle's own force) that a
        (right, left) pair of LegState values gives each muscle (eq 23-25, 30-31): the parts of
        the excitation that depend only on the leg states."""
        tables = self._state_tables(tuple(int(s) for s in states))
        return tables.constant, tables.fplus

    def step(self, sensors: Sensors) -> np.ndarray:
        """Excitations (n_muscles,) in [0, 1] for this control step."""
        s = sensors
        t = float(s.t)
        target_speed = _evaluate(self.speed, t)
        target_heading = _evaluate(self.heading, t)
        R_trunk = s.body_R[self.model.trunk_body]
        psi = heading_of(R_trunk)
        d_forward, d_right, v_forward, v_right = _com_relative_in_facing_frame(s, psi)

        contact, states = self._update_leg_states(s.foot_grf, d_forward)
        tables = self._state_tables(states)

        # §4.2, dimensionless speeds / distances
        lean, side_lean = trunk_target_angles(
            *self._trunk_law, target_speed / self._froude, v_forward / self._froude, target_heading, psi
        )
        flexion, abduction = self._upper_leg_targets(
            states, d_forward, d_right, target_speed, v_forward, v_right
        )
        target_R = self._target_orientations(
            s.body_R,
            psi,
            target_heading,
            lean,
            side_lean,
            flexion,
            abduction,
            tables.knee_relative,
            states,
            t,
        )

        torque = self._feature_torques(s, tables, target_R)
        jt_activation = self._jt_activations(
            s, tables, torque, R_trunk, target_speed, target_heading, states, d_forward
        )
        # eq 23
        force_feedback = tables.fplus * s.muscle_force
        if self._ankle_onset_on:
            force_feedback = force_feedback * self.ankle_fplus_gate(d_forward)
        feedback = jt_activation + force_feedback
        if self._knee_inhibition_gain > 0.0:
            feedback += self._knee_overextension_inhibition(s, states)
        if self._ta_stretch_gain > 0.0 or self._ta_soleus_inhibition > 0.0:
            feedback += self._stance_tibialis(s, states)
        excitation = self._delayed_excitation(feedback, tables)

        self.feedback = feedback
        self.excitation = excitation
        self._last_sensors = s
        self._last = {
            "t": t,
            "contact": contact,
            "d_forward": d_forward,
            "heading": psi,
            "target_heading": target_heading,
            "target_speed": target_speed,
            "v_forward": v_forward,
            "lean": lean,
            "side_lean": side_lean,
            "flexion": flexion,
            "abduction": abduction,
            "n_stance": tables.n_stance,
            "states": states,
            "tables": tables,
            "torque": torque,
            "force_feedback": force_feedback,
        }
        return excitation

    def feedback_by_source(self) -> np.ndarray:
        """The last step's feedback excitation (eq 23's sum, before its neural delay) split by where
        it comes from, (len(FEEDBACK_SOURCES), n_muscles); the rows sum to ``self.feedback``.
        Eq 17-18 are linear in the feature torques, so each feature's share, and each plane's
        share of it, is its own JT term.
        For recorded runs (`musclewalk simulate`), not the control loop."""
        last, s = self._last, self._last_sensors
        n = self.model.n_muscles
        out = np.zeros((len(FEEDBACK_SOURCES), n))
        if not last:
            return out
        tables = last["tables"]
        moment = last["torque"][tables.pair_slot]
        pair_source = _SLOT_SOURCE[tables.pair_slot]
        R_trunk = s.body_R[self.model.trunk_body]
        factor = self._pair_factor(s)
        for source, feature in enumerate(_ORIENTATION_FEATURES):
            of_source = moment * (pair_source == source)[:, None]
            for plane, axis in _PLANES:
                direction = R_trunk[:, axis]
                out[_ROW[f"{feature}_{plane}"]] = feature_muscle_forces(
                    np.outer(of_source @ direction, direction),
                    s.pair_r,
                    tables.pair_weight,
                    self._pair_muscle,
                    n,
                    pair_factor=factor,
                )
        if self._has_head:
            head = np.zeros_like(moment)
            self._add_head_force_moments(head, s, R_trunk, last["target_speed"], last["target_heading"])
            out[_ROW["head_position"]] = feature_muscle_forces(
                head, s.pair_r, tables.pair_weight, self._pair_muscle, n, pair_factor=factor
            )
        if self._kv_prep_foot > 0.0:
            feet = np.zeros_like(moment)
            self._add_prep_foot_moments(feet, s, last["states"], last["d_forward"])
            out[_ROW["prep_foot_speed"]] = feature_muscle_forces(
                feet, s.pair_r, tables.pair_weight, self._pair_muscle, n, pair_factor=factor
            )
        out[_ROW["force_feedback"]] = last["force_feedback"]
        if self._knee_inhibition_gain > 0.0:
            out[_ROW["knee_overextension"]] = self._knee_overextension_inhibition(s, last["states"])
        if self._ta_stretch_gain > 0.0 or self._ta_soleus_inhibition > 0.0:
            out[_ROW["stance_tibialis"]] = self._stance_tibialis(s, last["states"])
        return out

    def _update_leg_states(self, grf: np.ndarray, d_forward: tuple) -> tuple:
        """§4.1: foot contacts from the vertical GRF, then the FSM; returns (contact, states)."""
        contact = (grf[0, 1] > self._contact_threshold, grf[1, 1] > self._contact_threshold)
        states = tuple(self.fsm.update(contact, d_forward, self._d_lift, self._d_prep, self._d_touch))
        return contact, states

    def _upper_leg_targets(
        self,
        states: tuple,
        d_forward: tuple,
        d_right: tuple,
        target_speed: float,
        v_forward: float,
        v_right: float,
    ) -> tuple:
        """Eq 12-13 per leg, balancing over the other foot: ([flexion r, l], [abduction r, l])."""
        fr, L = self._froude, self._L
        flexion = [0.0, 0.0]
        abduction = [0.0, 0.0]
        for leg in (0, 1):
            other = 1 - leg
            outward = 1.0 if leg == 0 else -1.0
            flexion[leg], abduction[leg] = upper_leg_target_angles(
                *self._upper_law["prep" if states[leg] == _PREP else "swing"],
                -d_forward[other] / L,
                -outward * d_right[other] / L,
                target_speed / fr,
                v_forward / fr,
                outward * v_right / fr,
            )
        return flexion, abduction

    def _target_orientations(
        self,
        R: np.ndarray,
        psi: float,
        target_heading: float,
        lean: float,
        side_lean: float,
        flexion: list,
        abduction: list,
        knee_relative: np.ndarray,
        states: tuple = (),
        t: float = 0.0,
    ) -> np.ndarray:
        """Target rotation per feature slot (_N_SLOTS, 3, 3): facing-frame targets for trunk, upper
        legs, feet and head; lower legs relative to the current upper legs by ``knee_relative``
        (the state tables' knee targets)."""
        if self._follow_shank > 0.0:
            lower = self.model.lower_body
            ankle_r, ankle_l = swing_foot_pitch_targets(
                self._ankle_target,
                self._follow_shank,
                (foot_pitch(R[lower[0]]), foot_pitch(R[lower[1]])),
                self._lower_leg_pitch0,
            )
        else:
            ankle_r = ankle_l = self._ankle_target
        if self._release_time > 0.0:
            ankle_r, ankle_l = self._released_foot_pitch_targets(R, (ankle_r, ankle_l), states, t)
        self._foot_pitch_targets = (ankle_r, ankle_l)
        foot_yaw_r = foot_yaw_l = psi
        if self._foot_yaw_on:
            foot_yaw = psi + self._foot_heading_share * wrap_angle(target_heading - psi)
            foot_yaw_r, foot_yaw_l = foot_yaw - self._foot_toe_out, foot_yaw + self._foot_toe_out
        # a twisted ankle's foot (tibial torsion) aims its own neutral yaw, not the leg's, along eq 29's
        # target (ankle_twist 0 in the paper's creatures)
        foot_yaw_r += self._ankle_twist[0]
        foot_yaw_l += self._ankle_twist[1]
        facing_targets = few_facing_rotations(
            # + yaw turns the forward axis to the left (-Z): the right leg turns out by - toe_out
            (
                target_heading,
                target_heading - self._toe_out,
                target_heading + self._toe_out,
                foot_yaw_r,
                foot_yaw_l,
                target_heading,
            ),
            (-lean, flexion[0], flexion[1], ankle_r, ankle_l, -self._head_pitch),
            (-side_lean, -abduction[0], abduction[1], 0.0, 0.0, 0.0),
        )
        lower_targets = R[self._upper_bodies] @ knee_relative
        return np.concatenate((facing_targets, lower_targets))[_TARGET_ORDER]

    def _released_foot_pitch_targets(self, R: np.ndarray, targets: tuple, states: tuple, t: float) -> tuple:
        """Eq 29's (right, left) foot pitch targets plus, in swing and stance preparation, the
        foot's pitch error at the start of swing times 1 - (time since) / swing_foot.release_time
        (while positive)."""
        out = list(targets)
        previous = self._last["states"] if self._last else self.fsm.initial
        for leg in (0, 1):
            if states[leg] == _SWING and previous[leg] != _SWING:
                error = foot_pitch(R[self.model.foot_body[leg]]) - targets[leg]
                self._release[leg] = (t, error)
            if states[leg] == _SWING or states[leg] == _PREP:
                start, error = self._release[leg]
                remaining = 1.0 - (t - start) / self._release_time
                if remaining > 0.0:
                    out[leg] += error * remaining
        return tuple(out)

    def _feature_torques(self, s: Sensors, tables: _StateTables, target_R: np.ndarray) -> np.ndarray:
        """§4.3 eq 15 per slot (zero gains for inactive slots)."""
        current_R = s.body_R[self._slot_body]
        error = rotation_log(target_R @ current_R.transpose(0, 2, 1))
        omega = s.body_omega[self._slot_body]
        if self._foot_rate_shank_share > 0.0:
            omega[_FOOT[0] : _FOOT[1] + 1] -= self._foot_rate_shank_share * s.body_omega[self._lower_bodies]
        if self._omega_filter_rate < 1.0:
            if self._omega_filtered is None:
                self._omega_filtered = omega.copy()
            else:
                self._omega_filtered += self._omega_filter_rate * (omega - self._omega_filtered)
            omega = self._omega_filtered
        return tables.kq * error - tables.kw * omega

    def _jt_activations(
        self,
        s: Sensors,
        tables: _StateTables,
        torque: np.ndarray,
        R_trunk: np.ndarray,
        target_speed: float,
        target_heading: float,
        states: tuple,
        d_forward: tuple,
    ) -> np.ndarray:
        """Eq 16-19 over all pairs at once: moment = T̃ (+ (P - j) x F̃ for the head chain and the
        stance-preparation feet)."""
        moment = torque[tables.pair_slot]
        if self._has_head:
            self._add_head_force_moments(moment, s, R_trunk, target_speed, target_heading)
        if self._kv_prep_foot > 0.0:
            self._add_prep_foot_moments(moment, s, states, d_forward)
        return feature_muscle_forces(
            moment,
            s.pair_r,
            tables.pair_weight,
            self._pair_muscle,
            self.model.n_muscles,
            pair_factor=self._pair_factor(s),
        )

    def _add_head_force_moments(
        self, moment: np.ndarray, s: Sensors, R_trunk: np.ndarray, target_speed: float, target_heading: float
    ) -> None:
        """Eq 14: head PD force F̃ toward its place over the trunk at the target velocity; adds
        (P_head - j_k) x F̃ to the head-chain pairs' rows of moment (in place)."""
        head = self.model.head_body
        target_head_pos, target_head_vel = self._head_target(s, R_trunk, target_speed, target_heading)
        force = self._kp_head * (target_head_pos - s.body_pos[head]) + self._kv_head * (
            target_head_vel - s.body_vel[head]
        )
        lever = s.body_pos[head] - s.joint_pos[self._head_pair_joints]
        add_force_moments(moment, self._head_pairs, lever, force.tolist())

    def _add_prep_foot_moments(self, moment: np.ndarray, s: Sensors, states: tuple, d_forward: tuple) -> None:
        """Beyond the paper: for each leg in stance preparation whose foot is more than
        prep_foot.ahead ahead of the COM, eq 14's velocity term on its foot toward zero horizontal
        ground speed, F̃ = -k_v v_horizontal (no position term); adds (P_foot - j_k) x F̃ to the rows
        of that leg's hip and knee pairs (in place)."""
        for leg in (0, 1):
            if states[leg] != _PREP or d_forward[leg] <= self._prep_foot_ahead_distance:
                continue
            foot = self.model.foot_body[leg]
            vx, _, vz = s.body_vel[foot].tolist()
            force = (-self._kv_prep_foot * vx, 0.0, -self._kv_prep_foot * vz)
            lever = s.body_pos[foot] - s.joint_pos[self._leg_pair_joints[leg]]
            add_force_moments(moment, self._leg_pairs[leg], lever, force)

    def _head_target(
        self, s: Sensors, R_trunk: np.ndarray, target_speed: float, target_heading: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """Eq 14's targets: the head's place over the trunk (its base-pose offset in the trunk's
        frame) and the target velocity along the target heading."""
        position = s.body_pos[self.model.trunk_body] + R_trunk @ self.model.head_offset
        velocity = np.array(
            (target_speed * math.cos(target_heading), 0.0, -target_speed * math.sin(target_heading))
        )
        return position, velocity

    @property
    def ankle_fplus_gated(self) -> bool:
        """Whether ankle_fplus.onset is on (below 1 leg length)."""
        return self._ankle_onset_on

    def ankle_fplus_gate(self, d_forward: tuple) -> np.ndarray:
        """Per muscle, the factor on its eq 23 term for (right, left) d_S in m: for each leg's ankle
        extensors the ramp on that leg's d_S (0 at onset + ramp and beyond, 1 at onset and behind),
        1 for every other muscle; all 1 with the feature off. F+ itself is 0 outside stance and
        lift-off."""
        gate = np.ones(self.model.n_muscles)
        if not self._ankle_onset_on:
            return gate
        for leg in (0, 1):
            ahead = (d_forward[leg] - self._ankle_onset) / self._ankle_onset_ramp
            share = min(max(1.0 - ahead, 0.0), 1.0)
            if share < 1.0:
                gate -= (1.0 - share) * self._ankle_extensor[leg]
        return gate

    def _knee_overextension_inhibition(self, s: Sensors, states: tuple) -> np.ndarray:
        """Negative feedback per muscle for each stance / lift-off leg whose knee is extending below
        theta_off (flexion rate from the bodies' world angular velocities)."""
        cm = self.model
        out = np.zeros(cm.n_muscles)
        for leg in (0, 1):
            if states[leg] > _LIFT_OFF:
                continue
            R_upper = s.body_R[cm.upper_body[leg]]
            flexion = knee_flexion(R_upper, s.body_R[cm.lower_body[leg]])
            below = flexion - self._knee_inhibition_offset
            if below >= 0.0:
                continue
            relative_omega = s.body_omega[cm.lower_body[leg]] - s.body_omega[cm.upper_body[leg]]
            flexion_rate = -float(R_upper[:, 2] @ relative_omega)
            if flexion_rate < 0.0:
                out += self._knee_inhibition_gain * below * self._knee_inhibited[leg]
        return out

    def _stance_tibialis(self, s: Sensors, states: tuple) -> np.ndarray:
        """Feedback per muscle: each stance / lift-off leg's dorsiflexors get the stretch reflex on
        its ankle angle minus the inhibition by its soleus force."""
        cm = self.model
        out = np.zeros(cm.n_muscles)
        for leg in (0, 1):
            if states[leg] > _LIFT_OFF:
                continue
            dorsiflexion = (
                ankle_dorsiflexion(
                    s.body_R[cm.lower_body[leg]], s.body_R[cm.foot_body[leg]], cm.ankle_twist[leg]
                )
                - self._ankle_dorsiflexion0
            )
            stretch = max(0.0, self._ta_theta_off - dorsiflexion)
            soleus = float(self._soleus_force_weight[leg] @ s.muscle_force)
            out += (
                self._ta_stretch_gain * stretch - self._ta_soleus_inhibition * soleus
            ) * self._stance_dorsiflexor[leg]
        return out

    def _delayed_excitation(self, feedback: np.ndarray, tables: _StateTables) -> np.ndarray:
        """§4.4: undelayed constant and lift-off terms plus the feedback delivered Δ_M later,
        clipped to [0, 1]."""
        delayed = self._delay.push(feedback)
        return np.minimum(np.maximum(tables.constant + delayed, 0.0), 1.0)

    # ----------------------------------------------------------------------------------------------
    def log_row(self) -> dict:
        """Flat dict describing the last step (for controller.csv); empty before the first step.

        d_S_* = (foot - COM) . forward in m (the FSM's d_S); angles in rad with the conventions of
        `targets.py`; *_target = the value the controller aimed for at this step."""
        last, s = self._last, self._last_sensors
        if not last:
            return {}
        cm = self.model
        states = self.fsm.states
        _, lean, side_lean = trunk_angles(s.body_R[cm.trunk_body])
        row = {
            "t": last["t"],
            "state_r": STATE_NAMES[states[0]],
            "state_l": STATE_NAMES[states[1]],
            "contact_r": bool(last["contact"][0]),
            "contact_l": bool(last["contact"][1]),
            "d_S_r": float(last["d_forward"][0]),
            "d_S_l": float(last["d_forward"][1]),
            "n_stance": int(last["n_stance"]),
            "target_speed": last["target_speed"],
            "com_forward_speed": float(last["v_forward"]),
            "target_heading": last["target_heading"],
            "trunk_heading": last["heading"],
            "trunk_lean_target": last["lean"],
            "trunk_lean": lean,
            "trunk_side_lean_target": last["side_lean"],
            "trunk_side_lean": side_lean,
        }
        for leg, tag in ((0, "r"), (1, "l")):
            flex, abd = upper_leg_angles(s.body_R[cm.upper_body[leg]], leg)
            row[f"hip_flexion_target_{tag}"] = last["flexion"][leg]
            row[f"hip_flexion_{tag}"] = flex
            row[f"hip_abduction_target_{tag}"] = last["abduction"][leg]
            row[f"hip_abduction_{tag}"] = abd
            row[f"knee_flexion_{tag}"] = knee_flexion(
                s.body_R[cm.upper_body[leg]], s.body_R[cm.lower_body[leg]]
            )
            row[f"foot_pitch_{tag}"] = foot_pitch(s.body_R[cm.foot_body[leg]])
            # the swing / stance-preparation foot's target (with swing_foot.follow_shank, per leg)
            row[f"foot_pitch_target_{tag}"] = self._foot_pitch_targets[leg]
        row["knee_flexion_target"] = self.params["knee.theta"]
        if self._has_head:
            row.update(self._head_log(s, last["target_speed"], last["target_heading"]))
        row["excitation_mean"] = float(self.excitation.mean())
        return row

    def _head_log(self, s: Sensors, target_speed: float, target_heading: float) -> dict:
        """The head's errors behind eq 14 and 22 (target minus actual): position along the target
        heading and up in m, velocity along the target heading in m/s, pitch in rad (nose down
        positive)."""
        head = self.model.head_body
        position, velocity = self._head_target(
            s, s.body_R[self.model.trunk_body], target_speed, target_heading
        )
        forward = np.array((math.cos(target_heading), 0.0, -math.sin(target_heading)))
        return {
            "head_forward_error": float((position - s.body_pos[head]) @ forward),
            "head_up_error": float(position[1] - s.body_pos[head][1]),
            "head_forward_speed_error": float((velocity - s.body_vel[head]) @ forward),
            "head_pitch_target": self._head_pitch,
            "head_pitch": trunk_angles(s.body_R[head])[1],
        }
