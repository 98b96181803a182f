"""Muscle-based locomotion control of Geijtenbeek, van de Panne & van der Stappen 2013, §4.

Pure numpy, no simulator: the sim stage builds a `ControlModel` once per creature, fills a `Sensors`
snapshot every control step and calls `Controller.step`, which returns the muscle excitations.
"""

from .controller import FEEDBACK_SOURCES, Controller
from .delays import DelayLine, delay_steps_from_seconds
from .fsm import STATE_NAMES, GaitStateMachine, LegState, next_leg_states
from .jacobian import crossing_segment, feature_muscle_forces, moment_arm_vectors
from .model import ControlModel, JointInfo, MuscleInfo, base_pose_features
from .params import (
    GROUPS,
    ParameterError,
    ParamSpec,
    controller_parameter_specs,
    default_parameters,
    format_group_counts,
    format_parameter_table,
    group_counts,
    validate_parameters,
)
from .sensors import Sensors

__all__ = [
    "Controller",
    "FEEDBACK_SOURCES",
    "ControlModel",
    "MuscleInfo",
    "JointInfo",
    "Sensors",
    "base_pose_features",
    "ParamSpec",
    "ParameterError",
    "GROUPS",
    "controller_parameter_specs",
    "default_parameters",
    "validate_parameters",
    "group_counts",
    "format_group_counts",
    "format_parameter_table",
    "LegState",
    "STATE_NAMES",
    "GaitStateMachine",
    "next_leg_states",
    "DelayLine",
    "delay_steps_from_seconds",
    "moment_arm_vectors",
    "crossing_segment",
    "feature_muscle_forces",
]
