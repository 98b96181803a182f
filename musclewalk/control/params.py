"""The controller's parameters (Table 1: state transition, target features, feedback control,
constant excitations) as one flat, named, ordered list with defaults and bounds.

Defaults are one common set for every creature, as in the paper (§6: "all parameters were initialized
using a single set of values for all models"); only the target angles start from the model's base
pose (§4.2). The paper does not publish its values: the defaults below are this project's rough
estimates. Units are dimensionless (scaled by the creature) so the same numbers suit any size:
L = leg_length, M = total_mass, g = gravity, speeds in sqrt(g L), times in sqrt(L/g).

Gain scaling (§4.3, eq 14-15): kP = kp M g / L [N/m], kV = kv M g / sqrt(g L) [N s/m],
kQ = kq M g L [N m/rad], kω = kw M g L sqrt(L/g) [N m s/rad]. For the head gains (eq 22) M is the
head chain's mass where the model's ``features.head_gain_mass`` says ``head_chain`` (the neck-tail
creatures: a neck of 5 kg on a body of 100).

==========================  ==============  ==================  ==========================================
name                        default         bounds              meaning
==========================  ==============  ==================  ==========================================
fsm.contact_force           0.05            [0.001, 0.5]        F_contact, body weights (§4.1)
fsm.d_lift                  -0.3            [-1.0, 0.5]         lift-off when d_S < d_lift, leg lengths
fsm.d_prep                  0.0             [-0.5, 1.0]         stance prep. when d_S > d_prep, leg lengths
fsm.prep_touchdown_ahead    -1 (off: every  [-1, 0.5]           beyond the paper: a stance-preparation
                            contact)                            contact is a touch-down only with d_S
                                                                above this, leg lengths, or the other
                                                                leg out of stance (else: a scuff)
trunk.theta0                base pose       base -0.6 .. +0.8   trunk forward lean offset, rad (eq 10)
trunk.k_speed               0.3             [0, 3]              lean per Froude speed error (eq 10)
trunk.k_heading             0.2             [0, 2]              side lean per rad heading error (eq 11)
swing.theta0                base + 0.4      base -0.5 .. +1.5   swing hip flexion offset, rad (eq 12)
swing.kp_sagittal           0.5             [-2, 3]             per leg length of d_S (eq 12)
swing.kd_sagittal           -0.5            [-3, 2]             per Froude speed error (eq 12)
prep.theta0                 base + 0.3      base -0.5 .. +1.5   as swing.*, stance preparation (eq 12)
prep.kp_sagittal            0.5             [-2, 3]
prep.kd_sagittal            -0.5            [-3, 2]
coronal.phi0                0.0             [-0.3, 0.5]         hip abduction offset, rad (eq 13)
swing.toe_out               0 (off)         [-0.2, 0.5]         beyond the paper: swing / prep upper-leg
                                                                axial target turned outward (hip external
                                                                rotation), rad; eq 26-27 face the heading
coronal.kp                  0.2             [-2, 3]             per leg length of d_C (eq 13)
coronal.kd                  -0.5            [-3, 2]             per Froude speed of v_C (eq 13)
knee.theta                  base pose       base -0.3 .. +1.5   prep knee flexion target, rad (§4.2)
ankle.theta                 base pose       base -1.0 .. +1.0   swing/prep foot pitch (toes up), rad
gain.trunk.kq / .kw         2.0 / 0.5       [0, 10] / [0, 5]    stance trunk feedback (eq 21)
gain.head.kp / .kv          3.0 / 0.3       [0, 10] / [0, 5]    head position / velocity (eq 22)
gain.head.kq / .kw          0.3 / 0.03      [0, 2] / [0, 1]     head orientation (eq 22)
gain.swing.kq               0.5             [0, 5]              swing upper leg, no ω term (eq 26)
gain.prep.kq / .kw          0.5 / 0.1       [0, 5] / [0, 2]     prep upper leg (eq 27)
gain.knee.kq                0.05            [0, 2]              prep lower leg (eq 28)
gain.knee.kw                0 (off)         [0, 2]              beyond the paper: prep lower-leg angular-
                                                                velocity gain (eq 28 has none: the shank
                                                                swings on undamped into the strike)
gain.stance_knee.kq         0 (off)         [0, 2]              beyond the paper: eq 28's lower-leg law on
                                                                a stance leg (no kw term)
stance_knee.theta           base + 0.25     base -0.3 .. +1.0   ... its knee flexion target, rad
gain.ankle.kq               0.1             [0, 2]              swing/prep foot (eq 29)
gain.ankle.kw               0 (off)         [0, 2]              beyond the paper: swing/prep foot damping,
                                                                on the rate of eq 29's error (the foot's
                                                                angular velocity less follow_shank times
                                                                the shank's)
prep_foot.kv                0 (off)         [0, 1]              beyond the paper: prep foot ground-speed
                                                                gain, an eq 14 kv force on the foot toward
                                                                zero horizontal speed through its hip and
                                                                knee muscles (swing-leg retraction)
prep_foot.ahead             -1 (from the    [-1, 1]             beyond the paper: the retraction acts only
                            start of stance                     while the foot is this far ahead of the
                            preparation)                        COM, leg lengths (terminal swing)
fplus.<unique>              2.0 knee,      [0, 3]              k_F+ per knee/ankle extensor, per F_max (eq 23)
                            1.2 ankle,
                            0 hip flexors
ankle_fplus.onset           1 (off: F+      [-0.5, 1]           beyond the paper: the ankle extensors' F+
                            from the                            (stance, lift-off) acts in full once their
                            strike)                             foot is less than this far ahead of the
                                                                COM, leg lengths
ankle_fplus.ramp            0.1             [0.01, 0.5]         ... ramping in from 0 at onset + ramp
lift.hip                    0.5             [0, 1]              c_lift_hip: +flexors, -extensors (eq 24)
lift.knee                   -0.3            [-1, 0]             c_lift_knee for knee extensors (eq 25)
lift.ankle                  0 (off)         [0, 1]              beyond the paper: lift-off excitation of
                                                                ankle extensors (a push-off)
const.stance.<unique>       0.05            [0, 1]              constant in stance and lift-off (eq 30)
const.swing.<unique>        0.01 / 0.08 /   [0, 1]              constant in swing and stance prep. (eq 31):
                            0.02 / 0.05                         plantarflexors / dorsiflexors / knee
                                                                extensors / others
knee_overextension.gain     0 (off)         [0, 5]              beyond the paper (GH10, W12): knee extensor
                                                                inhibition per rad below theta_off
knee_overextension          base + 0.15     base -0.1 .. +0.8   knee flexion below which an extending
  .theta_off                                                    stance knee inhibits, rad
swing_foot.follow_shank     0 (off)         [0, 1]              beyond the paper: the swing foot pitch
                                                                target follows this fraction of the
                                                                lower leg's pitch (1: ankle angle held)
swing_foot.heading_share    0 (off)         [0, 1]              beyond the paper: swing / prep foot target
                                                                yaw moved this share of the way from the
                                                                trunk's heading to the target heading
swing_foot.toe_out          0 (off)         [-0.2, 0.5]         beyond the paper: swing / prep foot target
                                                                yaw turned outward from it, rad
swing_foot.release_time     0 (off)         [0, 0.4]            beyond the paper: the foot's pitch at the
                                                                start of swing handed over to eq 29's
                                                                target linearly over this time, s
stance_tibialis             0 (off)         [0, 5]              beyond the paper (W12 u_TA^L): stance
  .stretch_gain                                                 dorsiflexor excitation per rad of
                                                                ankle plantarflexion past theta_off
stance_tibialis.theta_off   -0.1            [-0.5, 0.3]         ankle dorsiflexion from the base pose
                                                                below which the reflex acts, rad
stance_tibialis             0 (off)         [0, 2]              beyond the paper (GH10, W12): stance
  .soleus_inhibition                                            dorsiflexor inhibition per soleus F/F_max
angular_velocity_filter     0 (off)         [0, 0.05]           beyond the paper: time constant (s) of a
  .time_constant                                                first-order low-pass on the angular
                                                                velocities of the kw terms (eq 15)
jt_equal_activation.weight  0 (off)         [0, 1]              beyond the paper: blend of eq 18 and a
                                                                share of each joint's desired torque by
                                                                muscle capacity F_max ||r|| (1: equal
                                                                activation of the joint's muscles)
==========================  ==============  ==================  ==========================================

Parameters of a controller feature beyond the paper carry its name in ``ParamSpec.extension``; at their
defaults the feature is off and the controller is the paper's. An optimization keeps them at the
defaults unless its parameter overrides free them (optimize.space).

The sagittal/coronal kd defaults are negative because with the sign conventions of `targets.py`
(d = COM - stance foot, positive = foot forward / outward) a negative kd places the swing foot further
forward / outward when the COM is faster than the target or moving outward (SIMBICON's c_v > 0).
Head gains exist only for models with a head and head_chain muscles; ``fplus.*`` only for unique
muscles with a knee_extensor or ankle_extensor role.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

GROUPS = ("state_transition", "target_features", "feedback", "constant_excitation")
KNEE_OVEREXTENSION = "knee_overextension"
STANCE_TIBIALIS = "stance_tibialis"
ANGULAR_VELOCITY_FILTER = "angular_velocity_filter"
JT_EQUAL_ACTIVATION = "jt_equal_activation"
SWING_FOOT_FOLLOWS_SHANK = "swing_foot_follows_shank"
KNEE_DAMPING = "knee_damping"
SWING_LEG_RETRACTION = "swing_leg_retraction"
TERMINAL_SWING_RETRACTION = "terminal_swing_retraction"
ANKLE_FORCE_FEEDBACK_ONSET = "ankle_force_feedback_onset"
LIFT_OFF_PUSH = "lift_off_push"
FOOT_DAMPING = "foot_damping"
STANCE_KNEE_TARGET = "stance_knee_target"
SWING_TOE_OUT = "swing_toe_out"
SWING_FOOT_YAW = "swing_foot_yaw"
PREPARATION_SCUFF = "preparation_scuff"
SWING_FOOT_RELEASE = "swing_foot_release"
# fsm.prep_touchdown_ahead at or below this: every stance-preparation contact is a touch-down (the
# paper); it is below fsm.d_prep's lower bound, so no foot in stance preparation is that far behind
PREP_TOUCHDOWN_OFF = -1.0


class ParameterError(ValueError):
    """A parameter value that is unknown, missing, not a finite number or outside its bounds;
    the message names the source (file or option) and the parameter."""


@dataclass(frozen=True)
class ParamSpec:
    """One optimizable parameter: controller, initial state or (normalized to [0, 1]) model
    routing, muscle property or passive gain. The one description and validator of every
    parameter vector (controller, simulation parameter files, optimizer space, warm starts)."""

    name: str
    default: float
    lower: float
    upper: float
    group: str
    doc: str = ""
    extension: str = ""  # a controller feature beyond the paper this parameter belongs to; the
    # feature is off at its parameters' defaults

    def check(self, value, source: str = "parameters") -> float:
        """``value`` as a float; ParameterError unless a finite number within the bounds."""
        if isinstance(value, bool):
            raise ParameterError(f"{source}: {self.name}: expected a number, got {value!r}")
        try:
            x = float(value)
        except (TypeError, ValueError):
            raise ParameterError(f"{source}: {self.name}: expected a number, got {value!r}") from None
        if not math.isfinite(x):
            raise ParameterError(f"{source}: {self.name}: value {x} is not finite")
        if not self.lower <= x <= self.upper:
            raise ParameterError(
                f"{source}: {self.name}: {x:g} is outside the bounds [{self.lower:g}, {self.upper:g}]"
            )
        return x


def controller_parameter_specs(control_model) -> list:
    """All control parameters of ``control_model`` in a fixed order (groups in GROUPS order)."""
    cm = control_model
    specs: list = []

    def add(name, default, lower, upper, group, doc):
        specs.append(ParamSpec(name, float(default), float(lower), float(upper), group, doc))

    st, tf, fb, ce = GROUPS
    add(
        "fsm.contact_force",
        0.05,
        0.001,
        0.5,
        st,
        "F_contact: vertical GRF threshold for contact, body weights",
    )
    add("fsm.d_lift", -0.3, -1.0, 0.5, st, "lift-off when (foot - COM).forward < d_lift, leg lengths")
    add(
        "fsm.d_prep", 0.0, -0.5, 1.0, st, "stance preparation when (foot - COM).forward > d_prep, leg lengths"
    )
    specs.append(
        ParamSpec(
            "fsm.prep_touchdown_ahead",
            PREP_TOUCHDOWN_OFF,
            PREP_TOUCHDOWN_OFF,
            0.5,
            st,
            "a stance-preparation contact is a touch-down only with (foot - COM).forward above this, "
            "leg lengths, or the other leg out of stance; else a scuff, as in swing (at -1 every "
            "contact: the paper)",
            PREPARATION_SCUFF,
        )
    )

    t0, h0, k0, a0 = cm.trunk_pitch0, cm.upper_leg_pitch0, cm.knee0, cm.ankle0
    add("trunk.theta0", t0, t0 - 0.6, t0 + 0.8, tf, "trunk forward-lean offset theta_trunk^0, rad (eq 10)")
    add(
        "trunk.k_speed",
        0.3,
        0.0,
        3.0,
        tf,
        "k_v: forward lean per (target - COM) speed, rad per sqrt(gL) (eq 10)",
    )
    add(
        "trunk.k_heading",
        0.2,
        0.0,
        2.0,
        tf,
        "k_h: side lean toward the target heading per rad of heading error (eq 11)",
    )
    for phase, offset, doc in (("swing", 0.4, "swing"), ("prep", 0.3, "stance preparation")):
        add(
            f"{phase}.theta0",
            h0 + offset,
            h0 - 0.5,
            h0 + 1.5,
            tf,
            f"{doc} hip-flexion offset theta_hip^0, rad (eq 12)",
        )
        add(
            f"{phase}.kp_sagittal",
            0.5,
            -2.0,
            3.0,
            tf,
            f"{doc} k_p^theta: rad per leg length of d_S = COM - stance foot (eq 12)",
        )
        add(
            f"{phase}.kd_sagittal",
            -0.5,
            -3.0,
            2.0,
            tf,
            f"{doc} k_d^theta: rad per sqrt(gL) of (target speed - v_S) (eq 12)",
        )
    add("coronal.phi0", 0.0, -0.3, 0.5, tf, "hip-abduction offset phi_hip^0, rad (eq 13)")
    add("coronal.kp", 0.2, -2.0, 3.0, tf, "k_p^phi: rad per leg length of d_C (outward) (eq 13)")
    add(
        "coronal.kd",
        -0.5,
        -3.0,
        2.0,
        tf,
        "k_d^phi: rad per sqrt(gL) of outward COM speed v_C, enters as -k_d v_C (eq 13)",
    )
    # beyond the paper: eq 26-27's upper-leg targets face the target heading about the vertical, so
    # that a swing leg lands with its foot along the heading; a person's foot lands and stays turned
    # out about 13 deg (foot progression, the largest part of the human-objective Human's GPS:
    # docs/human-like-gait.md). Each swing / stance-preparation upper leg's target yaw turned outward
    # by this angle (hip external rotation); 0 (the default) is the paper's target
    specs.append(
        ParamSpec(
            "swing.toe_out",
            0.0,
            -0.2,
            0.5,
            tf,
            "swing/preparation upper-leg axial target turned outward from the heading, rad",
            SWING_TOE_OUT,
        )
    )
    add(
        "knee.theta",
        k0,
        k0 - 0.3,
        k0 + 1.5,
        tf,
        "stance-preparation knee flexion target (lower vs upper leg), rad",
    )
    add(
        "ankle.theta",
        a0,
        a0 - 1.0,
        a0 + 1.0,
        tf,
        "swing/preparation foot pitch target relative to ground (toes up), rad",
    )

    # beyond the paper: the swing / stance-preparation foot's pitch target (§4.2: relative to the
    # ground) follows this fraction of the lower leg's pitch change from the base pose; 0 (the
    # default) is the paper's target, 1 holds the ankle angle instead
    specs.append(
        ParamSpec(
            "swing_foot.follow_shank",
            0.0,
            0.0,
            1.0,
            tf,
            "fraction of the lower leg's pitch (from its base pose) added to the swing foot pitch target",
            SWING_FOOT_FOLLOWS_SHANK,
        )
    )

    # beyond the paper: eq 29's swing / stance-preparation foot target faces the trunk's heading
    # (the facing frame, §4.2), which swings with the pelvis by ±5-12 deg a step, so the foot lands
    # turned in; a person's stays turned out about 13 deg from the walking direction (foot
    # progression, the largest part of the human-objective Human's GPS: docs/human-like-gait.md).
    # The foot target's yaw moved this share of the way to the target heading and turned outward by
    # swing_foot.toe_out; both 0 (the default) is the paper's target
    specs.append(
        ParamSpec(
            "swing_foot.heading_share",
            0.0,
            0.0,
            1.0,
            tf,
            "share of the way from the trunk's heading to the target heading of the swing foot's target yaw",
            SWING_FOOT_YAW,
        )
    )
    specs.append(
        ParamSpec(
            "swing_foot.toe_out",
            0.0,
            -0.2,
            0.5,
            tf,
            "swing/preparation foot target yaw turned outward, rad",
            SWING_FOOT_YAW,
        )
    )
    # beyond the paper: eq 29's target applies from the first step of swing, so a foot leaving the
    # ground plantarflexed from push-off is pulled up at once (the human-objective Human's ankle
    # turns from -5 to +3 deg within 4 % of the cycle after toe-off, where a person's goes on to
    # -11 deg and comes back to neutral by mid-swing: docs/human-like-gait.md). The foot's pitch
    # error at the start of swing fades out linearly over this time instead; 0 is the paper's
    specs.append(
        ParamSpec(
            "swing_foot.release_time",
            0.0,
            0.0,
            0.4,
            tf,
            "time over which the swing foot's pitch at the start of swing fades into eq 29's target, s",
            SWING_FOOT_RELEASE,
        )
    )

    add("gain.trunk.kq", 2.0, 0.0, 10.0, fb, "stance trunk orientation gain, M g L per rad (eq 21)")
    add(
        "gain.trunk.kw",
        0.5,
        0.0,
        5.0,
        fb,
        "stance trunk angular-velocity gain, M g L sqrt(L/g) per rad/s (eq 21)",
    )
    if cm.has_head:
        add("gain.head.kp", 3.0, 0.0, 10.0, fb, "head position gain, M g per leg length (eq 22)")
        add("gain.head.kv", 0.3, 0.0, 5.0, fb, "head velocity gain, M g per sqrt(gL) (eq 22)")
        add("gain.head.kq", 0.3, 0.0, 2.0, fb, "head orientation gain, M g L per rad (eq 22)")
        add(
            "gain.head.kw",
            0.03,
            0.0,
            1.0,
            fb,
            "head angular-velocity gain, M g L sqrt(L/g) per rad/s (eq 22)",
        )
    add("gain.swing.kq", 0.5, 0.0, 5.0, fb, "swing upper-leg orientation gain, M g L per rad (eq 26)")
    add(
        "gain.prep.kq",
        0.5,
        0.0,
        5.0,
        fb,
        "stance-preparation upper-leg orientation gain, M g L per rad (eq 27)",
    )
    add("gain.prep.kw", 0.1, 0.0, 2.0, fb, "stance-preparation upper-leg angular-velocity gain (eq 27)")
    add(
        "gain.knee.kq",
        0.05,
        0.0,
        2.0,
        fb,
        "stance-preparation lower-leg orientation gain, M g L per rad (eq 28)",
    )
    # beyond the paper: eq 28 guides the lower leg by its orientation alone, so the shank swings
    # into the strike undamped (every walker's foot still moves forward at 1.2-2.7 m/s when it
    # lands: README, "Toward a human-like gait"); 0 is the paper's
    specs.append(
        ParamSpec(
            "gain.knee.kw",
            0.0,
            0.0,
            2.0,
            fb,
            "stance-preparation lower-leg angular-velocity gain, M g L sqrt(L/g) per rad/s (eq 28 + "
            "an eq 15 kw term)",
            KNEE_DAMPING,
        )
    )
    # beyond the paper: eq 28 guides the knee in stance preparation only; in stance the knee follows
    # the vasti's F+ (eq 23) and the ground, and every human-objective walker's stance knee yields to
    # 33 deg within 5 % of the cycle and then locks straight from 29 % on, where a person's flexes to
    # 15-20 deg and comes back to about 5 deg (docs/human-like-gait.md); eq 28's law on a stance
    # leg's lower leg with its own target and gain, no kw term (the stance shank's angular velocity
    # is the body's forward rotation over the foot); gain 0 (the default) is the paper's controller
    specs.append(
        ParamSpec(
            "gain.stance_knee.kq",
            0.0,
            0.0,
            2.0,
            fb,
            "stance lower-leg orientation gain, M g L per rad (eq 28 on a stance leg)",
            STANCE_KNEE_TARGET,
        )
    )
    specs.append(
        ParamSpec(
            "stance_knee.theta",
            k0 + 0.25,
            k0 - 0.3,
            k0 + 1.0,
            fb,
            "stance knee flexion target (lower vs upper leg), rad",
            STANCE_KNEE_TARGET,
        )
    )
    add("gain.ankle.kq", 0.1, 0.0, 2.0, fb, "swing/preparation foot orientation gain, M g L per rad (eq 29)")
    # beyond the paper: eq 29 guides the swing foot by its orientation alone, and a walker's swing
    # ankle rings (two 8-10 deg dorsiflexion bumps in each swing of the human-objective Human
    # committed on 2026-12-04, where a person's ankle returns smoothly from push-off); a k_w term
    # on the rate of the foot's error: its angular velocity less swing_foot.follow_shank times the
    # shank's (the target's own rate); 0 is the paper's
    specs.append(
        ParamSpec(
            "gain.ankle.kw",
            0.0,
            0.0,
            2.0,
            fb,
            "swing/preparation foot angular-velocity gain on the rate of eq 29's error, "
            "M g L sqrt(L/g) per rad/s (eq 29 + an eq 15 kw term)",
            FOOT_DAMPING,
        )
    )
    # beyond the paper: the stance-preparation targets are orientations with zero angular velocity,
    # which can stop a swinging leg but not retract it, so every walker's foot lands still moving
    # forward at 2-3 m/s (people: under 1 m/s, the hamstrings retracting the leg in terminal
    # swing); an eq 14 velocity term on the foot toward zero horizontal ground speed, mapped by eq
    # 16-18 onto the leg's hip and knee muscles; 0 is the paper's
    specs.append(
        ParamSpec(
            "prep_foot.kv",
            0.0,
            0.0,
            1.0,
            fb,
            "stance-preparation foot ground-speed gain (eq 14 kv term on the foot toward zero "
            "horizontal speed, through its hip and knee muscles), M g per sqrt(g L)",
            SWING_LEG_RETRACTION,
        )
    )
    # the retraction above acts through the whole stance preparation, which starts with the foot
    # about 0.2 L behind the centre of mass, so it also brakes mid-swing; a person's hamstrings pull
    # the leg back in terminal swing, the foot ahead of the body. At -1 (below fsm.d_prep's lower
    # bound) it acts from the start of stance preparation
    specs.append(
        ParamSpec(
            "prep_foot.ahead",
            -1.0,
            -1.0,
            1.0,
            fb,
            "forward distance of the stance-preparation foot from the COM beyond which its retraction "
            "(prep_foot.kv) acts, leg lengths",
            TERMINAL_SWING_RETRACTION,
        )
    )
    uniques = cm.unique_names()
    for unique in uniques:
        roles = cm.unique_roles(unique)
        if roles & {"knee_extensor", "ankle_extensor"}:
            # the loop gain k F_L(l) must exceed 1 to sustain stance support (GSB06: 1.15-1.2 /
            # F_max near l_opt); knee extensors work at 0.6-0.8 l_opt in a flexed stance knee
            # (F_L 0.5-0.8), hence 2.0. A biarticular hip flexor (rectus femoris) starts without
            # it: F+ in lift-off keeps that leg straight.
            default = 0.0 if "hip_flexor" in roles else 2.0 if "knee_extensor" in roles else 1.2
            add(
                f"fplus.{unique}",
                default,
                0.0,
                3.0,
                fb,
                f"positive force feedback gain of {unique}, per F_max (eq 23)",
            )
    # beyond the paper: with eq 23's F+ a stance leg's ankle extensors push from the strike on, and
    # a walker's ankle can do its work in the loading response instead of at push-off (README,
    # issue 14's notes); the onset holds it back until the body passes over the foot. At 1 L (the
    # default; no stance foot is that far ahead) F+ acts from the strike, the paper's
    specs.append(
        ParamSpec(
            "ankle_fplus.onset",
            1.0,
            -0.5,
            1.0,
            fb,
            "forward distance of the stance foot from the COM below which its ankle extensors' F+ "
            "(eq 23) acts in full, leg lengths",
            ANKLE_FORCE_FEEDBACK_ONSET,
        )
    )
    specs.append(
        ParamSpec(
            "ankle_fplus.ramp",
            0.1,
            0.01,
            0.5,
            fb,
            "distance over which the ankle extensors' F+ ramps in, from 0 at onset + ramp to full at "
            "onset, leg lengths",
            ANKLE_FORCE_FEEDBACK_ONSET,
        )
    )
    add("lift.hip", 0.5, 0.0, 1.0, fb, "lift-off excitation of hip muscles: + flexors, - extensors (eq 24)")
    add("lift.knee", -0.3, -1.0, 0.0, fb, "lift-off excitation of knee extensors (eq 25)")
    # beyond the paper: eq 24-25 excite the hip and knee of a leg in lift-off (the double support
    # before its swing), where a person's ankle extensors do the gait's largest positive work, the
    # push-off (static optimization of the committed walkers: their stance hips do it instead,
    # docs/human-like-gait.md); 0 (the default) is the paper's controller
    specs.append(
        ParamSpec(
            "lift.ankle",
            0.0,
            0.0,
            1.0,
            fb,
            "lift-off excitation of ankle extensors (a push-off)",
            LIFT_OFF_PUSH,
        )
    )
    # beyond the paper (Geyer & Herr 2010; Wang et al. 2012): inhibit the uniarticular knee extensors
    # of a stance leg whose knee extends past theta_off; gain 0 (the default) is the paper's controller
    specs.append(
        ParamSpec(
            "knee_overextension.gain",
            0.0,
            0.0,
            5.0,
            fb,
            "inhibition of stance knee extensors per rad of knee flexion below theta_off while extending",
            KNEE_OVEREXTENSION,
        )
    )
    specs.append(
        ParamSpec(
            "knee_overextension.theta_off",
            k0 + 0.15,
            k0 - 0.1,
            k0 + 0.8,
            fb,
            "knee flexion below which an extending stance knee inhibits its extensors, rad",
            KNEE_OVEREXTENSION,
        )
    )
    if any(is_uniarticular_dorsiflexor(m.roles) for m in cm.muscles):
        specs.extend(_stance_tibialis_specs(fb))
    # beyond the paper: the kw terms of eq 15 act on low-pass filtered angular velocities. On the
    # committed Human the stance hip muscles switch 0 <-> 1 at about 25 Hz, driven by the trunk's
    # kw term through the 5 ms hip delay (README, "Toward a human-like gait"); 0 is the paper's
    specs.append(
        ParamSpec(
            "angular_velocity_filter.time_constant",
            0.0,
            0.0,
            0.05,
            fb,
            "time constant of a first-order low-pass on the feature angular velocities (eq 15 kw terms), s",
            ANGULAR_VELOCITY_FILTER,
        )
    )
    # beyond the paper: eq 18 asks each muscle crossing a joint for the joint's whole desired torque
    # on its own, so weak synergists saturate (the human-objective Human's anterior hip abductor:
    # mean stance excitation 0.87, its trunk term asking 1.57); the weight blends in a share by
    # capacity, F_max ||r|| over the joint's mean (control/jacobian.py); 0 is the paper's
    specs.append(
        ParamSpec(
            "jt_equal_activation.weight",
            0.0,
            0.0,
            1.0,
            fb,
            "blend of eq 18 (0) and an equal-activation share of each joint's desired torque (1)",
            JT_EQUAL_ACTIVATION,
        )
    )

    for unique in uniques:
        add(
            f"const.stance.{unique}",
            0.05,
            0.0,
            1.0,
            ce,
            f"constant excitation of {unique} in stance and lift-off (eq 30)",
        )
    for unique in uniques:
        add(
            f"const.swing.{unique}",
            _swing_constant(cm.unique_roles(unique)),
            0.0,
            1.0,
            ce,
            f"constant excitation of {unique} in swing and stance preparation (eq 31)",
        )
    return specs


def is_uniarticular_dorsiflexor(roles) -> bool:
    """A uniarticular ankle dorsiflexor (tibialis anterior): spans the ankle, not the knee, and is no
    ankle extensor."""
    return "ankle" in roles and "ankle_extensor" not in roles and "knee" not in roles


def is_uniarticular_plantarflexor(roles) -> bool:
    """Soleus: an ankle extensor that does not span the knee."""
    return "ankle_extensor" in roles and "knee" not in roles


def _stance_tibialis_specs(group: str) -> list:
    """Beyond the paper: Wang et al. 2012's stance law u_TA = p_TA + u_TA^L - u_SOL^F (Geyer & Herr
    2010 with its own inhibition gain). The paper leaves the stance ankle to the plantarflexors' F+
    alone; here a stance foot that plantarflexes past theta_off excites the dorsiflexors (their
    stretch reflex, on the ankle angle: the TA lengthens as the ankle plantarflexes), and the
    soleus force inhibits them. Gains 0 (the defaults) are the paper's controller."""
    return [
        ParamSpec(
            "stance_tibialis.stretch_gain",
            0.0,
            0.0,
            5.0,
            group,
            "stance dorsiflexor excitation per rad of ankle plantarflexion past theta_off "
            "(TA stretch reflex)",
            STANCE_TIBIALIS,
        ),
        ParamSpec(
            "stance_tibialis.theta_off",
            -0.1,
            -0.5,
            0.3,
            group,
            "ankle dorsiflexion (rad, from the base pose) below which the stance TA stretch reflex acts",
            STANCE_TIBIALIS,
        ),
        ParamSpec(
            "stance_tibialis.soleus_inhibition",
            0.0,
            0.0,
            2.0,
            group,
            "stance dorsiflexor inhibition per soleus force / F_max",
            STANCE_TIBIALIS,
        ),
    ]


def _swing_constant(roles) -> float:
    """Initial swing constants: low for plantarflexors and knee extensors, higher for the ankle
    dorsiflexors, so that the constant excitations alone do not point the swing foot down
    (with 0.05 everywhere the net ankle torque at the base pose is about -7 N m, plantarflexion)."""
    if "ankle_extensor" in roles:
        return 0.01
    if "ankle" in roles:
        return 0.08
    if "knee_extensor" in roles:
        return 0.02
    return 0.05


def default_parameters(control_model) -> dict:
    return {s.name: s.default for s in controller_parameter_specs(control_model)}


def validate_parameters(
    params: Mapping[str, float], specs: list, strict: bool = False, source: str = "controller parameters"
) -> dict:
    """Return the complete parameter dict (spec order), missing names filled with defaults unless
    ``strict``. ParameterError (a ValueError) naming the parameter for unknown names, missing
    names (strict), non-finite or out-of-bounds values."""
    by_name = {s.name: s for s in specs}
    unknown = [name for name in params if name not in by_name]
    if unknown:
        raise ParameterError(f"{source}: unknown parameter(s): {', '.join(sorted(unknown))}")
    if strict:
        missing = [s.name for s in specs if s.name not in params]
        if missing:
            raise ParameterError(f"{source}: missing parameter(s): {', '.join(missing)}")
    return {s.name: s.check(params[s.name], source) if s.name in params else s.default for s in specs}


def group_counts(specs: list) -> dict:
    counts = {g: 0 for g in GROUPS}
    for s in specs:
        counts[s.group] += 1
    return counts


def format_group_counts(specs: list) -> str:
    """E.g. 'state_transition 3, target_features 14, feedback 16, constant_excitation 20 (total 53)'."""
    counts = group_counts(specs)
    return ", ".join(f"{g} {n}" for g, n in counts.items()) + f" (total {sum(counts.values())})"


def format_parameter_table(specs: list) -> str:
    """One line per parameter: name, default, bounds, group."""
    width = max(len(s.name) for s in specs)
    return "\n".join(
        f"{s.name:<{width}}  {s.default:>9.4g}  [{s.lower:.4g}, {s.upper:.4g}]  {s.group}" for s in specs
    )
