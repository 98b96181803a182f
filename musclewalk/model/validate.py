"""Validation of a generated model in OpenSim 4.6: it loads and initializes, its structure
matches the template's documented counts, muscles are of the model's muscle class and (Millard)
equilibrate with sane normalized fibre lengths in the base pose, and each muscle's moment arms
have the signs its function says."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..opensim_env import import_opensim
from .metadata import IDEAL_MUSCLES, ModelMeta, Muscle
from .osim import MUSCLE_CLASS

FIBER_LENGTH_BAND = (0.5, 1.5)  # normalized fibre length in the base pose
MIN_MOMENT_ARM = 1e-3  # m; smaller counts as "no moment arm"


class ModelValidationError(ValueError):
    pass


@dataclass
class ValidationReport:
    bodies: int = 0
    dofs: int = 0
    muscles: int = 0
    mass: float = 0.0
    fiber_lengths: dict = field(default_factory=dict)
    moment_arms: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def coordinate_for(function_name: str, muscle: Muscle, coordinates: set[str]) -> str | None:
    """Resolve a template's generic coordinate name for a muscle: sided (``knee_angle_r``),
    unsided (``lumbar_flexion``) or, for chain muscles, the coordinate of the spanned joint
    (``neck_flexion_3``)."""
    side = muscle.side
    if side and f"{function_name}_{side}" in coordinates:
        return f"{function_name}_{side}"
    if function_name in coordinates:
        return function_name
    for span in muscle.spans:
        suffix = span.joint.rsplit("_", 1)[-1]
        if f"{function_name}_{suffix}" in coordinates:
            return f"{function_name}_{suffix}"
    return None


def validate_model(osim_path, meta: ModelMeta) -> ValidationReport:
    osim = import_opensim()
    path = Path(osim_path)
    rep = ValidationReport()
    try:
        model = osim.Model(str(path))
        state = model.initSystem()
    except Exception as exc:  # OpenSim raises RuntimeError with its own message
        raise ModelValidationError(f"{path}: OpenSim cannot load the model: {exc}") from None
    rep.bodies = model.getBodySet().getSize()
    cs = model.getCoordinateSet()
    rep.dofs = cs.getSize()
    rep.mass = model.getTotalMass(state)
    ideal = meta.muscle_model == IDEAL_MUSCLES
    muscle_class = MUSCLE_CLASS[meta.muscle_model]
    forces = model.getForceSet()
    classes = {forces.get(i).getName(): forces.get(i).getConcreteClassName() for i in range(forces.getSize())}
    rep.muscles = sum(c == muscle_class for c in classes.values())
    expected = meta.expected
    for what, got, extra in (("bodies", rep.bodies, 1), ("dofs", rep.dofs, 6), ("muscles", rep.muscles, 0)):
        if what in expected and got != expected[what] + extra:
            rep.problems.append(f"{what}: expected {expected[what] + extra}, model has {got}")
    for name, cls in classes.items():
        if (cls.endswith("Muscle") or cls in MUSCLE_CLASS.values()) and cls != muscle_class:
            rep.problems.append(f"{name}: not a {muscle_class} (muscles: {meta.muscle_model})")
    if ideal:
        # F = u F_max: no fibre to equilibrate; the path's moment arms are the same
        handles = {m.name: osim.PathActuator.safeDownCast(forces.get(m.name)) for m in meta.muscles}
    else:
        for i in range(model.getMuscles().getSize()):
            mus = model.getMuscles().get(i)
            mus.setActivation(state, 0.02)
        model.equilibrateMuscles(state)
        handles = {m.name: model.getMuscles().get(m.name) for m in meta.muscles}
    lo, hi = FIBER_LENGTH_BAND
    coordinates = {cs.get(i).getName() for i in range(cs.getSize())}
    for m in meta.muscles:
        mus = handles[m.name]
        if not ideal:
            nfl = mus.getNormalizedFiberLength(state)
            rep.fiber_lengths[m.name] = nfl
            if not lo <= nfl <= hi:
                rep.problems.append(
                    f"{m.name}: normalized fibre length {nfl:.3f} in the base pose is outside [{lo}, {hi}]"
                )
        for generic, sign in m.function.items():
            cname = coordinate_for(generic, m, coordinates)
            if cname is None:
                rep.problems.append(f"{m.name}: function names unknown coordinate '{generic}'")
                continue
            arm = mus.computeMomentArm(state, cs.get(cname))
            rep.moment_arms[(m.name, cname)] = arm
            if arm * sign < MIN_MOMENT_ARM:
                rep.problems.append(
                    f"{m.name}: moment arm about {cname} is {arm:+.4f} m, expected sign {sign:+d}"
                )
    return rep
