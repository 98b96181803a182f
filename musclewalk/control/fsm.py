"""Per-leg finite state machine (§4.1).

Cycle, one-directional (no state can be re-entered without going round, so contact flicker cannot
make it chatter):

    stance --(rear leg at dual stance, or d_S < d_lift)--> lift_off
    lift_off --(contact lost)--> swing
    swing --(d_S > d_prep)--> stance_preparation
    swing --(contact, foot ahead of the COM)--> stance
    stance_preparation --(contact)--> stance
                       (beyond the paper, opt-in: only with the foot more than d_touch ahead,
                        or the other leg out of stance)

d_S = signed horizontal distance (foot - COM) along the facing direction (negative = foot behind
the COM); contact = vertical GRF > F_contact.

Judgement calls (the paper is silent):

- a swing foot that touches down ahead of the COM is in stance (the paper: transitions to
  stance follow contact changes); one touching behind it is toe scuffing with a passive knee and
  is ignored. (Ignoring every contact in swing left optimized gaits standing on a "swing" leg,
  without stance support or trunk control, whenever the foot landed before d_S > d_prep.)
- beyond the paper (the controller's `fsm.prep_touchdown_ahead`, off by default): with d_prep
  below 0 stance preparation begins while the foot is still behind the COM, where the swing rule
  above no longer applies, and a foot that scuffs the ground as it passes under the body puts a
  flexed leg into stance mid-swing (seen as falls by com_height of issue 14's walkers); with
  d_touch given, a contact in stance preparation is a touch-down only with d_S > d_touch or once
  the other leg is no longer in stance (a short landing that must carry the body);
- "dual stance" means both legs are in the stance state (after this step's contact events) and
  both feet touch the ground; the rear leg is the one with the smaller d_S;
- stance without contact (flight phase) stays stance until d_S < d_lift or dual stance;
- each step first applies the contact events of both legs, then the position/dual-stance events to
  the legs that did not change yet: at most one transition per leg per step.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Sequence


class LegState(IntEnum):
    STANCE = 0
    LIFT_OFF = 1
    SWING = 2
    STANCE_PREPARATION = 3


STATE_NAMES = ("stance", "lift_off", "swing", "stance_preparation")


def leg_state(value) -> LegState:
    """Accept a LegState, its int value or its name."""
    if isinstance(value, str):
        try:
            return LegState(STATE_NAMES.index(value))
        except ValueError:
            raise ValueError(f"unknown leg state {value!r}; expected one of {STATE_NAMES}") from None
    return LegState(int(value))


def next_leg_states(
    states: Sequence[int],
    contact: Sequence[bool],
    d_foot: Sequence[float],
    d_lift: float,
    d_prep: float,
    d_touch: float | None = None,
) -> list:
    """New (right, left) states. ``d_foot`` = (foot - COM) . forward per leg, in the same unit as
    ``d_lift`` / ``d_prep`` / ``d_touch`` (None: every stance-preparation contact is a touch-down,
    the paper)."""
    new = [int(s) for s in states]
    changed = [False, False]
    for s in (0, 1):
        if new[s] == LegState.LIFT_OFF and not contact[s]:
            new[s], changed[s] = LegState.SWING, True
        elif new[s] == LegState.STANCE_PREPARATION and contact[s]:
            supported = states[1 - s] == LegState.STANCE
            if d_touch is None or d_foot[s] > d_touch or not supported:
                new[s], changed[s] = LegState.STANCE, True
        elif new[s] == LegState.SWING and contact[s] and d_foot[s] > 0.0:
            new[s], changed[s] = LegState.STANCE, True
    after_contact = list(new)
    for s in (0, 1):
        if changed[s]:
            continue
        o = 1 - s
        if after_contact[s] == LegState.SWING and d_foot[s] > d_prep:
            new[s] = LegState.STANCE_PREPARATION
        elif after_contact[s] == LegState.STANCE:
            rear_at_dual_stance = (
                after_contact[o] == LegState.STANCE and contact[o] and contact[s] and d_foot[s] < d_foot[o]
            )
            if rear_at_dual_stance or d_foot[s] < d_lift:
                new[s] = LegState.LIFT_OFF
    return new


class GaitStateMachine:
    """Holds the two legs' states; `update` applies `next_leg_states`."""

    def __init__(self, initial: Sequence = ("stance", "swing")):
        self.initial = tuple(leg_state(s) for s in initial)
        if len(self.initial) != 2:
            raise ValueError("initial leg states: expected (right, left)")
        self.states = [int(s) for s in self.initial]

    def reset(self, initial: Sequence | None = None) -> None:
        if initial is not None:
            self.__init__(initial)
        else:
            self.states = [int(s) for s in self.initial]

    def update(self, contact, d_foot, d_lift: float, d_prep: float, d_touch: float | None = None) -> list:
        self.states = next_leg_states(self.states, contact, d_foot, d_lift, d_prep, d_touch)
        return self.states

    @property
    def names(self) -> tuple:
        return tuple(STATE_NAMES[s] for s in self.states)
