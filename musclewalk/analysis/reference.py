"""Human reference gait data.

Default: the normative data that the PyPI package `gaitutils` (GPLv3, Helsinki University
Hospital gait lab; https://github.com/Gait-lab-HUS/gaitutils) ships as package data: ``normal.gcd``
(Vicon Plug-in Gait curves, mean and SD at 51 points over the gait cycle) and
``timedist_normaldata.json`` (time-distance norms). The files are read where pip installed them,
without importing gaitutils (its ``__init__`` imports modules whose dependencies it does not
declare). A user's own reference: a CSV of normative bands with the columns
``variable, percent, mean, sd`` (variables named as in `CURVES` or `KINETICS`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

PERCENT = np.linspace(0.0, 100.0, 51)  # the reference's sampling of the gait cycle

# the template pairs of the bodies whose gait human data can referee (the Human, HumanLegs and
# their variants); `compare` reads any creature's hips, knees and ankles, but the Ostrich's,
# LongNeck's and LongLegs' bodies are not a person's
HUMAN_BODIES = (
    {"legs": "humanoid_legs", "upper_body": "humanoid_upper"},
    {"legs": "humanoid_legs", "upper_body": "single_trunk"},
)


def human_bodied(model_meta: Path) -> bool:
    """Whether a model (its ``.meta.json``) is built from the human templates."""
    return json.loads(Path(model_meta).read_text()).get("templates") in HUMAN_BODIES


# our clinical variables -> (the GCD's name, the figures' label); Plug-in Gait conventions:
# flexion, adduction, internal rotation, dorsiflexion, anterior pelvic tilt positive; pelvic
# obliquity and rotation positive when the side is up / forward; foot progression internal +
VARIABLES = {
    "pelvis_tilt": ("PelvicTilt", "Pelvic tilt (ant +)"),
    "pelvis_obliquity": ("PelvicObliquity", "Pelvic obliquity (up +)"),
    "pelvis_rotation": ("PelvicRotation", "Pelvic rotation (int +)"),
    "hip_flexion": ("HipFlexExt", "Hip flexion (+)"),
    "hip_adduction": ("HipAbAdduct", "Hip adduction (+)"),
    "hip_rotation": ("HipRotation", "Hip rotation (int +)"),
    "knee_flexion": ("KneeFlexExt", "Knee flexion (+)"),
    "ankle_dorsiflexion": ("DorsiPlanFlex", "Ankle dorsiflexion (+)"),
    "foot_progression": ("FootProgression", "Foot progression (int +)"),
}
CURVES = {k: v[0] for k, v in VARIABLES.items()}


@dataclass(frozen=True)
class KineticVariable:
    gcd: str  # the GCD's name
    label: str
    unit: str
    joint: str  # hip, knee or ankle (analysis.kinetics.LEG_JOINTS)
    angle: str | None  # the clinical angle whose axis the moment is about (None: joint power)
    sign: float  # Plug-in Gait's moment per the moment toward the angle's positive direction


# Plug-in Gait kinetics: internal moments per kg, extensor / abductor / plantarflexor positive
# (each opposite to its angle's positive direction: flexion, adduction, dorsiflexion), and joint
# power per kg, generation positive (analysis.kinetics)
KINETICS = {
    "hip_extension_moment": KineticVariable(
        "HipFlexExtMoment", "Hip moment (ext +)", "N m/kg", "hip", "hip_flexion", -1.0
    ),
    "hip_abduction_moment": KineticVariable(
        "HipAbAdductMoment", "Hip moment (abd +)", "N m/kg", "hip", "hip_adduction", -1.0
    ),
    "knee_extension_moment": KineticVariable(
        "KneeFlexExtMoment", "Knee moment (ext +)", "N m/kg", "knee", "knee_flexion", -1.0
    ),
    "ankle_plantarflexion_moment": KineticVariable(
        "DorsiPlanFlexMoment", "Ankle moment (plantarflexor +)", "N m/kg", "ankle", "ankle_dorsiflexion", -1.0
    ),
    "hip_power": KineticVariable("HipPower", "Hip power (generation +)", "W/kg", "hip", None, 1.0),
    "knee_power": KineticVariable("KneePower", "Knee power (generation +)", "W/kg", "knee", None, 1.0),
    "ankle_power": KineticVariable("AnklePower", "Ankle power (generation +)", "W/kg", "ankle", None, 1.0),
}
# the nine variables of the Gait Profile Score (Baker et al. 2009)
GPS_VARIABLES = tuple(CURVES)


class ReferenceError(ValueError):
    """A missing or unreadable reference; the message names the file."""


@dataclass
class Reference:
    name: str
    source: str
    curves: dict = field(
        default_factory=dict
    )  # variable -> (mean (51,), sd (51,)), deg (KINETICS: their unit)
    scalars: dict = field(default_factory=dict)  # time-distance norms
    emg: dict = field(default_factory=dict)  # "R"/"L" + channel -> (101,) envelope


def _gaitutils_file(relative: str) -> Path:
    from importlib import metadata

    try:
        dist = metadata.distribution("gaitutils")
    except metadata.PackageNotFoundError:
        raise ReferenceError(
            "the default reference needs the gaitutils package: python3.11 -m pip install gaitutils"
        ) from None
    path = Path(dist.locate_file(f"gaitutils/data/{relative}"))
    if not path.is_file():
        raise ReferenceError(f"{path}: not found in the installed gaitutils package")
    return path


def read_gcd(path) -> dict:
    """Variables of a GCD file: name -> (n, 2) array of (mean, sd) rows."""
    path = Path(path)
    data: dict = {}
    name = None
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ReferenceError(f"{path}: cannot read ({exc})") from None
    for line in lines:
        parts = line.split()
        if not parts:
            continue
        if line.startswith("!"):
            name = parts[0][1:]
            data[name] = []
        elif name is not None:
            try:
                data[name].append([float(v) for v in parts[:2]])
            except ValueError:
                name = None
    return {k: np.array(v) for k, v in data.items() if v}


def normative() -> Reference:
    """gaitutils' normative data (adults, Plug-in Gait)."""
    gcd = _gaitutils_file("normal.gcd")
    table = read_gcd(gcd)
    curves = {}
    for ours, theirs in {**CURVES, **{k: v.gcd for k, v in KINETICS.items()}}.items():
        rows = table.get(theirs)
        if rows is None or rows.shape != (51, 2):
            raise ReferenceError(f"{gcd}: {theirs}: expected 51 rows of mean and SD")
        curves[ours] = (rows[:, 0], rows[:, 1])
    td_path = _gaitutils_file("timedist_normaldata.json")
    try:
        td = json.loads(td_path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ReferenceError(f"{td_path}: not valid JSON ({exc})") from None
    scalars = {
        "cadence_steps_per_min": td.get("Cadence"),
        "stride_length_m": td.get("Stride Length"),
        "speed_m_per_s": td.get("Walking Speed"),
        "stance_percent": td.get("Foot Off"),
        "double_support_percent": 100.0 * td["Double Support"] / td["Stride Time"]
        if td.get("Double Support") and td.get("Stride Time")
        else None,
        "step_width_m": td.get("Step Width"),
    }
    emg_path = _gaitutils_file("emg_normaldata.json")
    try:
        emg = {k: np.asarray(v, float) for k, v in json.loads(emg_path.read_text()).items()}
    except (OSError, json.JSONDecodeError, TypeError, ValueError) as exc:
        raise ReferenceError(f"{emg_path}: not EMG envelopes ({exc})") from None
    return Reference("normative (gaitutils)", f"{gcd} (gaitutils {_version()}, GPLv3)", curves, scalars, emg)


def _version() -> str:
    from importlib import metadata

    return metadata.version("gaitutils")


def from_csv(path) -> Reference:
    """A user's normative bands: columns variable, percent, mean, sd (degrees; the kinetic
    variables, KINETICS, in their units)."""
    import pandas as pd

    path = Path(path)
    try:
        table = pd.read_csv(path)
    except (OSError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise ReferenceError(f"{path}: cannot read as CSV ({exc})") from None
    missing = {"variable", "percent", "mean", "sd"} - set(table.columns)
    if missing:
        raise ReferenceError(f"{path}: missing columns {sorted(missing)}")
    curves = {}
    for name, rows in table.groupby("variable"):
        if name not in CURVES and name not in KINETICS:
            known = ", ".join([*CURVES, *KINETICS])
            raise ReferenceError(f"{path}: variable {name!r} unknown (known: {known})")
        rows = rows.sort_values("percent")
        curves[name] = (
            np.interp(PERCENT, rows["percent"], rows["mean"]),
            np.interp(PERCENT, rows["percent"], rows["sd"]),
        )
    return Reference(path.stem, str(path), curves, {})


def load(name_or_path: str | None) -> Reference:
    if name_or_path in (None, "normative"):
        return normative()
    return from_csv(name_or_path)
