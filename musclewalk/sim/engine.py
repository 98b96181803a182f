"""Thin OpenSim adapter: the only code that talks to OpenSim while a creature is simulated.

One model and one Manager per process, reused across runs (opensim-python notes §0): a
PrescribedController with one Constant per muscle carries the excitations computed in Python,
set between ``Manager.integrate`` calls (zero-order hold over the control interval);
the integrator and accuracy the model was built for (its metadata's physics; SemiExplicitEuler2
at 1e-3 for models without); storage and analyses off; logging quiet. Foot contact is an
ExponentialContactForce per contact sphere (forces read after realizeDynamics) or, in models
built before the physics settings, a SmoothSphereHalfSpaceForce.

Muscles are Millard muscles, or with ideal muscles (the metadata's ``physics.muscles``; Geijtenbeek
et al. 2013 §6.3, thesis §7.5.3) PathActuators whose force is u F_max: no activation or fibre state, and their
forces one bulk read of the model's controls times F_max (PathActuator::computeActuation).

A minimum integrator step (1e-6 s) turns a state the error control cannot resolve into an
integrator failure (a terminated run) instead of an integrate call that shrinks its steps without
end: a Human whose 4 cm hip-flexor fibres stalled (Millard fiber-velocity Newton solve) took
minutes per 0.1 ms and could not be interrupted from Python.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, NamedTuple

import numpy as np

from ..constants import FIXED_STEP_RANGE
from ..model.metadata import IDEAL_MUSCLES, ModelMeta
from ..model.osim import (
    CONTACT,
    CONTROLLER_NAME,
    EXPONENTIAL_CONTACT_PREFIX,
    INITIAL_EXCITATION,
    SMOOTH_CONTACT_PREFIX,
)
from ..opensim_env import import_opensim

MIN_STEP = 1e-6  # s; smaller steps are an integrator failure

INTEGRATORS = {
    "semi_explicit_euler2": "IntegratorMethod_SemiExplicitEuler2",
    "runge_kutta_merson": "IntegratorMethod_RungeKuttaMerson",
    "runge_kutta2": "IntegratorMethod_RungeKutta2",
    "runge_kutta3": "IntegratorMethod_RungeKutta3",
    "explicit_euler": "IntegratorMethod_ExplicitEuler",
    "verlet": "IntegratorMethod_Verlet",
}
PUSH_FORCE_NAME = "push"


class EngineError(RuntimeError):
    """The model cannot be simulated (unreadable, or missing expected components)."""


@dataclass
class RawSensors:
    """Bulk reads of one control step, all numpy (world frame)."""

    t: float
    body_pos: np.ndarray  # (nb, 3) body frame origins
    body_R: np.ndarray  # (nb, 3, 3) body -> world
    body_vel: np.ndarray  # (nb, 3) origin velocities
    body_omega: np.ndarray  # (nb, 3)
    com_pos: np.ndarray
    com_vel: np.ndarray
    contact_force: np.ndarray  # (nc, 3) ground reaction on each contact sphere
    muscle_force: np.ndarray  # (nm,) tendon forces (ideal muscles: u F_max)


@dataclass
class MuscleState:
    """Per muscle (nm,) at one instant. Ideal muscles (F = u F_max) have no activation dynamics and
    no fibre: activation is the excitation u applied, fibre length and velocity are NaN, and the
    fibre force, all of it active, is u F_max."""

    activation: np.ndarray
    norm_fiber_length: np.ndarray  # fibre length / optimal fibre length
    fiber_velocity: np.ndarray  # m/s, negative = shortening
    fiber_force: np.ndarray  # N
    active_fiber_force: np.ndarray  # N

    FIELDS = ("activation", "norm_fiber_length", "fiber_velocity", "fiber_force", "active_fiber_force")

    def as_array(self) -> np.ndarray:
        """(5, nm) in the order of FIELDS."""
        return np.stack([getattr(self, f) for f in self.FIELDS])


def rotations_from_xyz(angles: np.ndarray) -> np.ndarray:
    """Stack of rotation matrices R = Rx(a) Ry(b) Rz(c) from body-fixed XYZ angles (n, 3)."""
    a, b, c = angles[:, 0], angles[:, 1], angles[:, 2]
    ca, sa, cb, sb, cc, sc = np.cos(a), np.sin(a), np.cos(b), np.sin(b), np.cos(c), np.sin(c)
    R = np.empty((len(angles), 3, 3))
    R[:, 0, 0] = cb * cc
    R[:, 0, 1] = -cb * sc
    R[:, 0, 2] = sb
    R[:, 1, 0] = ca * sc + sa * sb * cc
    R[:, 1, 1] = ca * cc - sa * sb * sc
    R[:, 1, 2] = -sa * cb
    R[:, 2, 0] = sa * sc - ca * sb * cc
    R[:, 2, 1] = sa * cc + ca * sb * sc
    R[:, 2, 2] = ca * cb
    return R


FIXED_STEP_OVERRIDE = (
    f"a step in [{FIXED_STEP_RANGE[0]:g}, {FIXED_STEP_RANGE[1]:g}] s, or 0 for error-controlled steps"
)


def is_fixed_step_override(step: float) -> bool:
    """Whether ``step`` may override a model's fixed step for one run (FIXED_STEP_OVERRIDE)."""
    return step == 0 or FIXED_STEP_RANGE[0] <= step <= FIXED_STEP_RANGE[1]


class IntegratorSetting(NamedTuple):
    method: str
    accuracy: float  # of the error-controlled steps
    fixed_step: float | None  # s; None: error-controlled steps


def integrator_settings(meta: ModelMeta) -> IntegratorSetting:
    """The integrator the model was built for (models/physics.yaml); models built before the
    physics settings existed ran SemiExplicitEuler2 at 1e-3."""
    if meta.physics is None:
        return IntegratorSetting("semi_explicit_euler2", 1e-3, None)
    integrator = meta.physics.integrator
    return IntegratorSetting(integrator.method, float(integrator.accuracy), integrator.fixed_step)


class OpenSimEngine:
    def __init__(
        self,
        osim_path,
        meta: ModelMeta,
        integrator: str | None = None,
        accuracy: float | None = None,
        min_step: float = MIN_STEP,
        push_body: str | None = None,
        terrain=None,
        fixed_step: float | None = None,
    ):
        self.osim = import_opensim()
        self.meta, self.path, self.terrain = meta, Path(osim_path), terrain
        self.model = self._load_model()
        self.push_body = push_body or meta.features.trunk
        self._add_push_force()
        if terrain is not None:
            self._add_terrain(self.model, meta, terrain)
        try:
            self.state0 = self.model.initSystem()
        except Exception as exc:
            raise EngineError(f"{self.path}: OpenSim cannot initialize the model: {exc}") from None
        # component handles only after initSystem (it re-clones the functions)
        self._find_bodies_and_muscles()
        self._find_controls()
        self._find_contacts()
        self._find_limit_forces()
        if terrain is not None:
            self._setup_terrain_state(self.model.getForceSet())
        coords = self.model.getCoordinateSet()
        self.coordinates = [coords.get(i) for i in range(coords.getSize())]
        self.coordinate_index = {c.getName(): i for i, c in enumerate(self.coordinates)}
        own = integrator_settings(meta)
        self.accuracy = accuracy if accuracy is not None else own.accuracy
        # fixed_step: None the model's, 0 error-controlled steps whatever the model says
        self.fixed_step = own.fixed_step if fixed_step is None else (fixed_step or None)
        self.manager = self._make_manager(integrator or own.method, self.accuracy, min_step)
        if self.fixed_step is not None:
            self.manager.setIntegratorFixedStepSize(self.fixed_step)
        self.state = None

    def _load_model(self):
        path = self.path
        if not path.is_file():
            raise FileNotFoundError(f"{path}: model file not found")
        try:
            model = self.osim.Model(str(path))
        except Exception as exc:
            raise EngineError(f"{path}: OpenSim cannot read the model: {exc}") from None
        missing = [b.name for b in self.meta.bodies if not model.getBodySet().contains(b.name)]
        if missing:
            raise EngineError(f"{path}: bodies {missing} of the metadata are not in the model")
        try:
            # validate the properties first: if addForce() threw, the push force would be owned
            # by both Python and the model and freed twice (segfault)
            model.finalizeFromProperties()
        except Exception as exc:
            raise EngineError(f"{path}: invalid model properties: {exc}") from None
        return model

    def _add_push_force(self) -> None:
        """External push on the trunk, and the balance aid's force and torque (scenario.Assist):
        a PrescribedForce whose Constant components we set, world frame."""
        osim = self.osim
        push = osim.PrescribedForce(PUSH_FORCE_NAME, self.model.getBodySet().get(self.push_body))
        push.setForceFunctions(osim.Constant(0.0), osim.Constant(0.0), osim.Constant(0.0))
        push.setTorqueFunctions(osim.Constant(0.0), osim.Constant(0.0), osim.Constant(0.0))
        push.setPointIsInGlobalFrame(False)
        push.setForceIsInGlobalFrame(True)
        self.model.addForce(push)

    def _find_bodies_and_muscles(self) -> None:
        body_set = self.model.getBodySet()
        names = [b.name for b in self.meta.bodies]
        self.bodies = [body_set.get(n) for n in names]
        self.body_index = {n: i for i, n in enumerate(names)}
        mnames = [m.name for m in self.meta.muscles]
        self.ideal_muscles = self.meta.muscle_model == IDEAL_MUSCLES
        if self.ideal_muscles:
            self.muscles = self._find_ideal_muscles(mnames)
            return
        muscle_set = self.model.getMuscles()
        missing = [n for n in mnames if not muscle_set.contains(n)]
        if missing:
            raise EngineError(f"{self.path}: muscles {missing} of the metadata are not in the model")
        self.muscles = [muscle_set.get(n) for n in mnames]

    def _find_ideal_muscles(self, names: list[str]) -> list:
        """The PathActuators of the metadata's muscles, and for the bulk force read their indices
        in the model's control vector (one control per actuator, in actuator order) and F_max."""
        osim, actuators = self.osim, self.model.getActuators()
        order = {actuators.get(i).getName(): i for i in range(actuators.getSize())}
        found = {n: osim.PathActuator.safeDownCast(actuators.get(n)) if n in order else None for n in names}
        missing = [n for n, a in found.items() if a is None or a.getConcreteClassName() != "PathActuator"]
        if missing:
            raise EngineError(
                f"{self.path}: physics.muscles: ideal muscles (PathActuator) {missing} of the metadata "
                "are not in the model"
            )
        controls = self.model.getNumControls()
        if controls != actuators.getSize():
            raise EngineError(
                f"{self.path}: physics.muscles: ideal muscles are read as one control per actuator, "
                f"but the model has {controls} controls for {actuators.getSize()} actuators"
            )
        self._control_index = np.array([order[n] for n in names], dtype=np.intp)
        self._max_force = np.array([found[n].getOptimalForce() for n in names])
        return [found[n] for n in names]

    def _find_controls(self) -> None:
        """The Constant per muscle of the PrescribedController and the push's three."""
        osim, path, n = self.osim, self.path, len(self.muscles)
        controllers = self.model.getControllerSet()
        if not controllers.contains(CONTROLLER_NAME):
            raise EngineError(f"{path}: no PrescribedController '{CONTROLLER_NAME}'")
        pc = osim.PrescribedController.safeDownCast(controllers.get(CONTROLLER_NAME))
        functions = pc.get_ControlFunctions()
        if functions.getSize() != n:
            raise EngineError(
                f"{path}: controller has {functions.getSize()} control functions for {n} muscles"
            )
        # the functions follow the controller's actuator list, written in metadata order
        self.constants = [osim.Constant.safeDownCast(functions.get(i)) for i in range(n)]
        push = osim.PrescribedForce.safeDownCast(self.model.getForceSet().get(PUSH_FORCE_NAME))
        self._push_constants = self._prescribed_constants(push.getForceFunctions())
        self._torque_constants = self._prescribed_constants(push.getTorqueFunctions())

    def _find_limit_forces(self) -> None:
        """The CoordinateLimitForces (joint limits, the model's ligaments) and their
        coordinates, for the measures that penalize loading them."""
        forces = self.model.getForceSet()
        self.limit_forces, self.limit_names = [], []
        for i in range(forces.getSize()):
            f = forces.get(i)
            if f.getConcreteClassName() == "CoordinateLimitForce":
                self.limit_forces.append(self.osim.CoordinateLimitForce.safeDownCast(f))
                self.limit_names.append(f.getName())

    def body_inertia(self, index: int) -> np.ndarray:
        """A body's (3, 3) inertia tensor about its centre of mass, in its own frame (kg m²)."""
        inertia = self.bodies[index].getInertia()
        moments, products = inertia.getMoments(), inertia.getProducts()
        xx, yy, zz = (moments.get(i) for i in range(3))
        xy, xz, yz = (products.get(i) for i in range(3))
        return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])

    def limit_torques(self) -> np.ndarray:
        """Generalized force of each joint limit now, N m (0 inside the limits)."""
        s = self.state
        return np.array([f.calcLimitForce(s) for f in self.limit_forces])

    def _find_contacts(self) -> None:
        osim, meta, forces = self.osim, self.meta, self.model.getForceSet()
        contact = meta.physics.contact if meta.physics is not None else None
        self.exponential_contact = contact is not None and contact.model == "exponential"
        self.ground_clearance = float(contact.ground_clearance) if contact is not None else 0.0
        kind, prefix = (
            (osim.ExponentialContactForce, EXPONENTIAL_CONTACT_PREFIX)
            if self.exponential_contact
            else (osim.SmoothSphereHalfSpaceForce, SMOOTH_CONTACT_PREFIX)
        )
        self.contacts = []
        for c in meta.contacts:
            name = f"{prefix}{c.name}"
            f = kind.safeDownCast(forces.get(name)) if forces.contains(name) else None
            if f is None:
                raise EngineError(f"{self.path}: contact force '{name}' not found")
            self.contacts.append(f)
        self.contact_body = np.array([self.body_index[c.body] for c in meta.contacts])
        self.contact_local = np.array([c.location for c in meta.contacts], float)
        self.contact_radius = np.array([c.radius for c in meta.contacts], float)
        self.contact_foot = np.array([{"r": 0, "l": 1}.get(c.foot, -1) for c in meta.contacts])

    def _make_manager(self, integrator: str, accuracy: float, min_step: float):
        if integrator not in INTEGRATORS:
            raise ValueError(f"unknown integrator {integrator!r} (known: {', '.join(INTEGRATORS)})")
        manager = self.osim.Manager(self.model)
        manager.setIntegratorMethod(getattr(self.osim.Manager, INTEGRATORS[integrator]))
        manager.setIntegratorAccuracy(accuracy)
        manager.setIntegratorMinimumStepSize(min_step)
        manager.setWriteToStorage(False)
        manager.setPerformAnalyses(False)
        return manager

    # ------------------------------------------------------------------ terrain
    def _add_terrain(self, model, meta, terrain) -> None:
        """One contact force per (sphere, segment): with the model's exponential contact a copy of
        its flat force against the segment's plane, else a smooth sphere against a half-space per
        segment."""
        contact = meta.physics.contact if meta.physics is not None else None
        if contact is not None and contact.model == "exponential":
            self._add_exponential_terrain(model, meta, terrain)
            return
        osim = self.osim
        ground = model.getGround()
        geoms = model.getContactGeometrySet()
        forces = model.getForceSet()
        planes = []
        for i in range(terrain.n_segments):
            loc, ori = terrain.plane(i)
            plane = osim.ContactHalfSpace(osim.Vec3(*loc), osim.Vec3(*ori), ground, f"terrain_{i}")
            model.addContactGeometry(plane)
            planes.append(plane)
        for c in meta.contacts:
            # ramps use the spheres' smooth contact (with the model's own settings when it has
            # them); an exponential contact model's forces are switched off on ramps
            name = f"{SMOOTH_CONTACT_PREFIX}{c.name}"
            flat = (
                osim.SmoothSphereHalfSpaceForce.safeDownCast(forces.get(name))
                if forces.contains(name)
                else None
            )
            sphere = osim.ContactSphere.safeDownCast(geoms.get(c.name))
            for i in range(terrain.n_segments):
                f = osim.SmoothSphereHalfSpaceForce(f"terrain_{c.name}_{i}", sphere, planes[i])
                for prop in (
                    "stiffness",
                    "dissipation",
                    "static_friction",
                    "dynamic_friction",
                    "viscous_friction",
                    "transition_velocity",
                    "hertz_smoothing",
                    "hunt_crossley_smoothing",
                ):
                    value = getattr(flat, f"get_{prop}")() if flat is not None else CONTACT[prop]
                    getattr(f, f"set_{prop}")(value)
                model.addForce(f)

    def _add_exponential_terrain(self, model, meta, terrain) -> None:
        """Per (sphere, segment) an ExponentialContactForce with the parameters of the sphere's flat
        one and the segment's plane as its contact plane: z along the ramp's normal, x up the ramp
        (R_z(slope) R_x(-90 deg); the flat ground's is R_x(-90 deg)), through the segment's start."""
        osim = self.osim
        forces = model.getForceSet()
        z_then_x = (osim.BodyRotationSequence, osim.CoordinateAxis(2), osim.CoordinateAxis(0))
        for c in meta.contacts:
            flat = osim.ExponentialContactForce.safeDownCast(
                forces.get(f"{EXPONENTIAL_CONTACT_PREFIX}{c.name}")
            )
            station = flat.getStation()
            for i in range(terrain.n_segments):
                sequence, z, x = z_then_x
                plane = osim.Transform(
                    osim.Rotation(sequence, float(terrain.slopes[i]), z, -math.pi / 2, x),
                    osim.Vec3(float(terrain.x_anchor[i]), float(terrain.h_start[i]), 0.0),
                )
                f = osim.ExponentialContactForce(plane, station.getParentFrame(), station.get_location())
                f.setName(f"terrain_{c.name}_{i}")
                f.setExponentialShapeParameters(flat.getExponentialShapeParameters())
                f.setNormalViscosity(flat.getNormalViscosity())
                f.setMaxNormalForce(flat.getMaxNormalForce())
                f.setFrictionElasticity(flat.getFrictionElasticity())
                f.setFrictionViscosity(flat.getFrictionViscosity())
                f.setSettleVelocity(flat.getSettleVelocity())
                f.setInitialMuStatic(flat.getInitialMuStatic())
                f.setInitialMuKinetic(flat.getInitialMuKinetic())
                model.addForce(f)

    def _setup_terrain_state(self, forces) -> None:
        osim = self.osim
        n = self.terrain.n_segments
        kind = osim.ExponentialContactForce if self.exponential_contact else osim.SmoothSphereHalfSpaceForce
        self.terrain_forces = [
            [kind.safeDownCast(forces.get(f"terrain_{c.name}_{i}")) for i in range(n)]
            for c in self.meta.contacts
        ]
        for f in self.contacts:
            f.setAppliesForce(self.state0, False)
        for row in self.terrain_forces:
            for i, f in enumerate(row):
                f.setAppliesForce(self.state0, i == 0)
        self.active_segment = np.zeros(len(self.terrain_forces), dtype=int)

    def update_terrain(self, contact_x: np.ndarray) -> None:
        """Enable, for every sphere, the force of the segment under its centre."""
        segments = self.terrain.segment_of(contact_x)
        changed = np.nonzero(segments != self.active_segment)[0]
        for k in changed:
            self.terrain_forces[k][int(self.active_segment[k])].setAppliesForce(self.state, False)
            entered = self.terrain_forces[k][int(segments[k])]
            entered.setAppliesForce(self.state, True)
            if self.exponential_contact:
                # its friction anchor starts where the point is, not where it was last enabled
                entered.resetAnchorPoint(self.state)
            self.active_segment[k] = segments[k]

    @staticmethod
    def _prescribed_constants(functions):
        """The three Constant components of the push PrescribedForce's force or torque
        functions (after initSystem)."""
        osim = import_opensim()
        return [osim.Constant.safeDownCast(functions.get(i)) for i in range(3)]

    # ------------------------------------------------------------------ state set-up
    def initial_state(
        self,
        coordinates: Mapping[str, float],
        speeds: Mapping[str, float],
        ground_clearance: float | None = None,
    ):
        """A copy of the default state with coordinate values (rad / m) and speeds set, the
        root lowered or raised so that the lowest contact sphere touches the ground (the terrain
        height under it, on uneven terrain)."""
        osim = self.osim
        s = osim.State(self.state0)
        for name, value in coordinates.items():
            self._coord(name).setValue(s, float(value), False)
        for name, value in speeds.items():
            self._coord(name).setSpeedValue(s, float(value))
        self.model.realizePosition(s)
        world = self.contact_centres(*self._poses(s))
        ground = self.terrain.height(world[:, 0]) if self.terrain is not None else 0.0
        lowest = float(np.min(world[:, 1] - self.contact_radius - ground))
        if ground_clearance is None:
            ground_clearance = (
                self.ground_clearance if self.terrain is None or self.exponential_contact else 0.0
            )
        ty = self._coord("root_ty")
        ty.setValue(s, ty.getValue(s) - lowest + ground_clearance, False)
        self.model.realizeVelocity(s)
        if self.exponential_contact:
            # each contact point's friction anchor starts where the point is
            self.osim.ExponentialContactForce.resetAnchorPoints(self.model, s)
        return s

    def _coord(self, name):
        if name not in self.coordinate_index:
            raise KeyError(f"{self.path}: no coordinate '{name}'")
        return self.coordinates[self.coordinate_index[name]]

    def _poses(self, s) -> tuple[np.ndarray, np.ndarray]:
        """Body frame origins (nb, 3) and rotations body -> world (nb, 3, 3) in state ``s``."""
        pos = np.empty((len(self.bodies), 3))
        xyz = np.empty((len(self.bodies), 3))
        for i, b in enumerate(self.bodies):
            X = b.getTransformInGround(s)
            pos[i] = X.p().to_numpy()
            xyz[i] = X.R().convertRotationToBodyFixedXYZ().to_numpy()
        return pos, rotations_from_xyz(xyz)

    def contact_centres(self, body_pos: np.ndarray, body_R: np.ndarray) -> np.ndarray:
        """World centres of the contact spheres (nc, 3) from the bodies' poses."""
        R = body_R[self.contact_body]
        return body_pos[self.contact_body] + np.einsum("nij,nj->ni", R, self.contact_local)

    # ------------------------------------------------------------------ stepping
    def start(self, state, excitations: np.ndarray | None = None) -> None:
        """Begin a run from ``state`` (copied): muscles equilibrated and the state realized for
        the first sensor read. The Manager is initialized at the first ``advance``, after the
        controller's first excitations are set: ``initialize`` realizes the state with the
        Constants as they are then, and the first interval would otherwise run on whatever was
        set before (notes §4.3)."""
        s = self.osim.State(state)
        s.setTime(0.0)
        self.state = None
        if self.terrain is not None:
            # the Manager copies the state at initialize(): set the segments under the spheres now
            self.model.realizePosition(s)
            x = self.contact_centres(*self._poses(s))[:, 0]
            self.active_segment[:] = self.terrain.segment_of(x)
            for k, row in enumerate(self.terrain_forces):
                for i, f in enumerate(row):
                    f.setAppliesForce(s, bool(i == self.active_segment[k]))
        if excitations is None and self.ideal_muscles:
            # the force sensed at the start is u F_max: the initial excitation, as a Millard
            # muscle starts at that activation, not the controls a previous run left
            excitations = np.full(len(self.muscles), INITIAL_EXCITATION)
        if excitations is not None:
            self.set_excitations(excitations)
        self.set_push(np.zeros(3), np.zeros(3))
        if not self.ideal_muscles:
            for m in self.muscles:
                m.setActivation(s, INITIAL_EXCITATION)
            self.model.equilibrateMuscles(s)
        self.model.realizeVelocity(s)
        self.state = s
        self._initialized = False

    def set_excitations(self, u: np.ndarray) -> None:
        """Excitations for the next interval. Call after reading the sensors: it invalidates the
        state's cached controls (notes §4.2), which drops the state below Position stage."""
        for c, v in zip(self.constants, u):
            c.setValue(float(v))
        if self.state is not None:
            self.state.setTime(self.state.getTime())

    def set_push(self, force: np.ndarray, torque: np.ndarray | None = None) -> None:
        """The trunk's external force (N) and, when given, torque (N m), world frame, for the
        next interval."""
        for c, v in zip(self._push_constants, force):
            if c is not None:
                c.setValue(float(v))
        if torque is not None:
            for c, v in zip(self._torque_constants, torque):
                if c is not None:
                    c.setValue(float(v))

    def advance(self, t_next: float) -> bool:
        """Integrate to ``t_next``; False when the integrator failed or time did not advance."""
        try:
            if not self._initialized:
                self.manager.initialize(self.state)
                self._initialized = True
            s = self.manager.integrate(t_next)
        except RuntimeError:
            return False
        if s.getTime() < t_next - 1e-9:
            return False
        self.state = s
        return True

    def read(self) -> RawSensors:
        s = self.state
        bodies = self.bodies
        pos, R = self._poses(s)
        vel = np.empty((len(bodies), 3))
        omega = np.empty((len(bodies), 3))
        for i, b in enumerate(bodies):
            V = b.getVelocityInGround(s)
            omega[i] = V.get(0).to_numpy()
            vel[i] = V.get(1).to_numpy()
        if self.exponential_contact:
            self.model.realizeDynamics(s)
            active = (
                self.contacts
                if self.terrain is None
                else [self.terrain_forces[k][i] for k, i in enumerate(self.active_segment)]
            )
            contact = np.array([c.getForce(s).to_numpy() for c in active])
        elif self.terrain is None:
            contact = np.array([c.getSphereForce(s).get(1).to_numpy() for c in self.contacts])
        else:
            contact = np.array(
                [
                    self.terrain_forces[k][i].getSphereForce(s).get(1).to_numpy()
                    for k, i in enumerate(self.active_segment)
                ]
            )
        forces = self._muscle_forces(s)
        return RawSensors(
            t=s.getTime(),
            body_pos=pos,
            body_R=R,
            body_vel=vel,
            body_omega=omega,
            com_pos=self.model.calcMassCenterPosition(s).to_numpy(),
            com_vel=self.model.calcMassCenterVelocity(s).to_numpy(),
            contact_force=contact,
            muscle_force=forces,
        )

    def _muscle_forces(self, s) -> np.ndarray:
        """Tendon force per muscle (N); ideal muscles: u F_max with the controls held now."""
        if self.ideal_muscles:
            return self._controls(s) * self._max_force
        return np.array([m.getTendonForce(s) for m in self.muscles])

    def _controls(self, s) -> np.ndarray:
        """The muscles' controls u in state ``s`` (one bulk read of the model's controls)."""
        return self.model.getControls(s).to_numpy()[self._control_index]

    def muscle_states(self) -> "MuscleState":
        """The muscles' state for the metabolic model and the recorder."""
        s = self.state
        if self.ideal_muscles:
            u = self._controls(s)
            force = u * self._max_force
            nan = np.full(len(self.muscles), np.nan)
            return MuscleState(u, nan, nan.copy(), force, force.copy())
        out = np.empty((5, len(self.muscles)))
        for i, m in enumerate(self.muscles):
            out[0, i] = m.getActivation(s)
            out[1, i] = m.getNormalizedFiberLength(s)
            out[2, i] = m.getFiberVelocity(s)
            out[3, i] = m.getFiberForce(s)
            out[4, i] = m.getActiveFiberForce(s)
        return MuscleState(*out)

    def state_values(self) -> np.ndarray:
        return self.model.getStateVariableValues(self.state).to_numpy()

    def state_names(self) -> list[str]:
        names = self.model.getStateVariableNames()
        return [names.get(i) for i in range(names.getSize())]
