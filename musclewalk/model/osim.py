"""Write a :class:`CreatureSpec` as an OpenSim 4.6 model (.osim XML, lxml).

Muscles are Millard2012EquilibriumMuscle with PathPoints and 10 ms activation/deactivation time
constants (c_a = 100 s^-1, paper eq. 7); with ideal muscles (models/physics.yaml ``muscles: ideal``,
the paper's §6.3 ablation) each is a PathActuator on the same path whose force is u F_max
(optimal_force F_max, controls in [0, 1]). A PrescribedController with one Constant per muscle
receives the excitations computed in Python during simulation.
Contact (models/physics.yaml): an ExponentialContactForce at the lowest point of each foot sphere
(the spheres stay as geometry, for pictures and ramps), or SmoothSphereHalfSpaceForces.
"""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path

import numpy as np
from lxml import etree

from ..constants import GRAVITY
from .metadata import IDEAL_MUSCLES, MILLARD_MUSCLES
from .spec import CreatureSpec

ACTIVATION_TIME_CONSTANT = 0.01
INITIAL_EXCITATION = 0.02
CONTROLLER_NAME = "excitation_controller"
# the OpenSim class of a muscle by models/physics.yaml ``muscles``
MUSCLE_CLASS = {MILLARD_MUSCLES: "Millard2012EquilibriumMuscle", IDEAL_MUSCLES: "PathActuator"}
GROUND_NAME = "ground_contact"
# SmoothSphereHalfSpaceForce settings (documented choice; the paper used an ODE spring-damper
# with k_p = 75 000 N/m, k_d = 2 000 N s/m and mu = 10 at 0.3 ms steps).
CONTACT = {
    "stiffness": 1.0e6,
    "dissipation": 2.0,
    "static_friction": 0.9,
    "dynamic_friction": 0.8,
    "viscous_friction": 0.5,
    "transition_velocity": 0.1,
    "hertz_smoothing": 300.0,
    "hunt_crossley_smoothing": 50.0,
}
SMOOTH_CONTACT_PREFIX = "contact_"  # + sphere name: SmoothSphereHalfSpaceForce
EXPONENTIAL_CONTACT_PREFIX = "ecf_"  # + sphere name: ExponentialContactForce
OPENSIM_EXPONENTIAL_SHAPE = "0.0065905 0.5336 1150"  # d0 m, d1 N, d2 1/m: OpenSim's defaults
ROOT_COORDINATES = [  # body-fixed yaw, pitch, roll then translations (no gimbal lock in yaw)
    ("root_yaw", "rotation1", (0, 1, 0)),
    ("root_pitch", "rotation2", (0, 0, 1)),
    ("root_roll", "rotation3", (1, 0, 0)),
    ("root_tx", "translation1", (1, 0, 0)),
    ("root_ty", "translation2", (0, 1, 0)),
    ("root_tz", "translation3", (0, 0, 1)),
]


def fmt(x) -> str:
    if isinstance(x, (list, tuple, np.ndarray)):
        return " ".join(fmt(v) for v in x)
    return repr(float(x))


def _sub(parent, tag, text=None, **attrib):
    el = etree.SubElement(parent, tag, **attrib)
    if text is not None:
        el.text = text
    return el


def _offset_frame(parent, name, socket_parent, translation, orientation):
    frame = _sub(parent, "PhysicalOffsetFrame", name=name)
    _sub(frame, "socket_parent", socket_parent)
    _sub(frame, "translation", fmt(translation))
    _sub(frame, "orientation", fmt(orientation))
    return frame


def _spatial_transform(joint_el, rotations, translations=()):
    st = _sub(joint_el, "SpatialTransform")
    used = {name: (coord, axis) for coord, name, axis in list(rotations) + list(translations)}
    defaults = {
        "rotation1": (1, 0, 0),
        "rotation2": (0, 1, 0),
        "rotation3": (0, 0, 1),
        "translation1": (1, 0, 0),
        "translation2": (0, 1, 0),
        "translation3": (0, 0, 1),
    }
    # unused rotation axes must complete an orthogonal set with the used ones
    rot_axes = [np.asarray(used[n][1], float) for n in ("rotation1", "rotation2", "rotation3") if n in used]
    free_axes = _complete_basis(rot_axes)
    for name in ("rotation1", "rotation2", "rotation3", "translation1", "translation2", "translation3"):
        ta = _sub(st, "TransformAxis", name=name)
        if name in used:
            coord, axis = used[name]
            _sub(ta, "coordinates", coord)
            _sub(ta, "axis", fmt(axis))
            if name.startswith("rotation") or coord:
                lf = _sub(ta, "LinearFunction")
                _sub(lf, "coefficients", "1 0")
        else:
            _sub(ta, "coordinates", "")
            axis = free_axes.pop(0) if name.startswith("rotation") else defaults[name]
            _sub(ta, "axis", fmt(axis))
    return st


def _complete_basis(axes):
    basis = [a / np.linalg.norm(a) for a in axes]
    out = []
    for cand in np.eye(3):
        if len(basis) + len(out) >= 3:
            break
        vecs = basis + out
        if all(abs(np.dot(cand, v)) < 1e-9 for v in vecs):
            out.append(cand)
            continue
        v = cand - sum(np.dot(cand, b) * b for b in vecs)
        if np.linalg.norm(v) > 1e-6:
            out.append(v / np.linalg.norm(v))
    return out


def _coordinate(parent, name, default, rng_deg, clamped=False):
    c = _sub(parent, "Coordinate", name=name)
    _sub(c, "default_value", fmt(default))
    _sub(c, "default_speed_value", "0")
    _sub(c, "range", fmt(rng_deg))
    _sub(c, "clamped", "true" if clamped else "false")
    _sub(c, "locked", "false")
    return c


def _geometry(body_el, body, name):
    """Visible shapes for the OpenSim GUI (no mesh files needed)."""
    comps = _sub(body_el, "components")
    for i, s in enumerate(body.shapes):
        # orient the shape's Y axis along the capsule axis
        if s.kind == "capsule":
            a = s.axis / np.linalg.norm(s.axis)
            ori = _orientation_from_y(a)
        else:
            ori = np.zeros(3)
        frame = _offset_frame(comps, f"{name}_shape{i}", "..", s.center, ori)
        geo = _sub(frame, "attached_geometry")
        if s.kind == "capsule":
            el = _sub(geo, "Cylinder", name=f"{name}_shape{i}_geometry")
            _sub(el, "socket_frame", "..")
            _sub(el, "radius", fmt(s.radius))
            _sub(el, "half_height", fmt(s.length / 2 + s.radius))
        elif s.kind == "box":
            el = _sub(geo, "Brick", name=f"{name}_shape{i}_geometry")
            _sub(el, "socket_frame", "..")
            _sub(el, "half_lengths", fmt(np.asarray(s.size) / 2))
        elif s.kind == "sphere":
            el = _sub(geo, "Sphere", name=f"{name}_shape{i}_geometry")
            _sub(el, "socket_frame", "..")
            _sub(el, "radius", fmt(s.radius))
        else:
            el = _sub(geo, "Ellipsoid", name=f"{name}_shape{i}_geometry")
            _sub(el, "socket_frame", "..")
            _sub(el, "radii", fmt(s.size))
        app = _sub(el, "Appearance")
        _sub(app, "color", "0.85 0.8 0.7")
        _sub(app, "opacity", "0.6")


def _orientation_from_y(a):
    """XYZ body-fixed angles rotating +Y onto unit vector a."""
    y = np.array([0.0, 1.0, 0.0])
    v = np.cross(y, a)
    s, c = np.linalg.norm(v), float(np.dot(y, a))
    if s < 1e-12:
        return np.zeros(3) if c > 0 else np.array([math.pi, 0, 0])
    k = v / s
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    r = np.eye(3) + s * kx + (1 - c) * kx @ kx
    # decompose R = Rx Ry Rz
    ay = math.asin(max(-1.0, min(1.0, r[0, 2])))
    ax = math.atan2(-r[1, 2], r[2, 2])
    az = math.atan2(-r[0, 1], r[0, 0])
    return np.array([ax, ay, az])


def model_xml(spec: CreatureSpec) -> etree._ElementTree:
    doc = etree.Element("OpenSimDocument", Version="40600")
    model = _sub(doc, "Model", name=spec.name)
    _sub(model, "credits", "Generated by musclewalk from " + Path(spec.source).name)
    _sub(model, "gravity", fmt([0.0, -GRAVITY, 0.0]))
    _sub(model, "length_units", "meters")
    _sub(model, "force_units", "N")
    _sub(model, "Ground", name="ground")
    _body_set(model, spec)
    _joint_set(model, spec)
    _controller_set(model, spec)
    _force_set(model, spec)
    _contact_geometry_set(model, spec)
    return etree.ElementTree(doc)


def _object_set(model, tag, name):
    """``<tag name=name><objects/></tag>`` under the model; returns the objects element."""
    return _sub(_sub(model, tag, name=name), "objects")


def _body_set(model, spec: CreatureSpec) -> None:
    bodyset = _object_set(model, "BodySet", "bodyset")
    for body in spec.bodies:
        b = _sub(bodyset, "Body", name=body.name)
        _geometry(b, body, body.name)
        _sub(b, "mass", fmt(body.mass))
        _sub(b, "mass_center", fmt(body.com))
        i = body.inertia
        _sub(b, "inertia", fmt([i[0, 0], i[1, 1], i[2, 2], i[0, 1], i[0, 2], i[1, 2]]))


def _joint_set(model, spec: CreatureSpec) -> None:
    jointset = _object_set(model, "JointSet", "jointset")
    _root_joint(jointset, spec)
    for joint in spec.joints:
        _custom_joint(jointset, joint)


def _root_joint(jointset, spec: CreatureSpec) -> None:
    """Six-DOF joint of the root body to the ground (ROOT_COORDINATES)."""
    root = spec.bodies[0].name
    rj = _sub(jointset, "CustomJoint", name="root")
    _sub(rj, "socket_parent_frame", "ground_offset")
    _sub(rj, "socket_child_frame", f"{root}_offset")
    coords = _sub(rj, "coordinates")
    for cname, _, _axis in ROOT_COORDINATES:
        default = spec.root_height if cname == "root_ty" else 0.0
        rng = (-180, 180) if cname[5] in "ypr" else (-50, 50)
        _coordinate(coords, cname, default, np.radians(rng) if cname[5] in "ypr" else rng)
    frames = _sub(rj, "frames")
    _offset_frame(frames, "ground_offset", "/ground", (0, 0, 0), (0, 0, 0))
    _offset_frame(frames, f"{root}_offset", f"/bodyset/{root}", (0, 0, 0), (0, 0, 0))
    _spatial_transform(rj, ROOT_COORDINATES[:3], ROOT_COORDINATES[3:])


def _custom_joint(jointset, joint) -> None:
    """Rotational joint, its coordinates about the joint's axes."""
    j = _sub(jointset, "CustomJoint", name=joint.name)
    _sub(j, "socket_parent_frame", f"{joint.parent}_offset")
    _sub(j, "socket_child_frame", f"{joint.child}_offset")
    coords = _sub(j, "coordinates")
    for c in joint.coordinates:
        _coordinate(coords, c.name, 0.0, np.radians(c.range_deg))
    frames = _sub(j, "frames")
    _offset_frame(
        frames, f"{joint.parent}_offset", f"/bodyset/{joint.parent}", joint.location, joint.orientation
    )
    _offset_frame(frames, f"{joint.child}_offset", f"/bodyset/{joint.child}", (0, 0, 0), (0, 0, 0))
    names = ("rotation1", "rotation2", "rotation3")
    _spatial_transform(j, [(c.name, n, tuple(c.axis)) for c, n in zip(joint.coordinates, names)])


def _controller_set(model, spec: CreatureSpec) -> None:
    """The PrescribedController: one Constant per muscle, set from Python during simulation."""
    controllers = _object_set(model, "ControllerSet", "controllerset")
    pc = _sub(controllers, "PrescribedController", name=CONTROLLER_NAME)
    _sub(pc, "socket_actuators", " ".join(f"/forceset/{m.name}" for m in spec.muscles))
    fs = _sub(_sub(pc, "FunctionSet", name="ControlFunctions"), "objects")
    for _ in spec.muscles:
        _sub(_sub(fs, "Constant"), "value", fmt(INITIAL_EXCITATION))


def _force_set(model, spec: CreatureSpec) -> None:
    """Muscles, foot contacts, passive springs and joint-limit forces, in this order."""
    forces = _object_set(model, "ForceSet", "forceset")
    ideal = spec.physics.get("muscles") == IDEAL_MUSCLES
    for m in spec.muscles:
        if ideal:
            _ideal_muscle(forces, m)
        else:
            _muscle(forces, m)
    contact = spec.physics.get("contact", {"model": "smooth_sphere"})
    for c in spec.contacts:
        if contact["model"] == "exponential":
            _exponential_contact(forces, c, contact)
        else:
            _smooth_sphere_contact(forces, c)
    for s in spec.springs:
        _spring(forces, s)
    for lim in spec.limits:
        _limit_force(forces, lim)


def _geometry_path(actuator, m) -> None:
    path = _sub(actuator, "GeometryPath", name="path")
    pps = _sub(_sub(path, "PathPointSet"), "objects")
    for p in m.points:
        pp = _sub(pps, "PathPoint", name=p.name)
        _sub(pp, "socket_parent_frame", f"/bodyset/{p.body}")
        _sub(pp, "location", fmt(p.location))
    app = _sub(path, "Appearance")
    _sub(app, "color", "0.8 0.1 0.1")


def _ideal_muscle(forces, m) -> None:
    """F_M = u F_max (Geijtenbeek et al. 2013 §6.3, thesis §7.5.3): a PathActuator's actuation is its control
    times optimal_force, applied along the path."""
    el = _sub(forces, "PathActuator", name=m.name)
    _sub(el, "min_control", "0")
    _sub(el, "max_control", "1")
    _geometry_path(el, m)
    _sub(el, "optimal_force", fmt(m.max_isometric_force))


def _muscle(forces, m) -> None:
    mel = _sub(forces, "Millard2012EquilibriumMuscle", name=m.name)
    _sub(mel, "min_control", "0.01")
    _sub(mel, "max_control", "1")
    _geometry_path(mel, m)
    _sub(mel, "max_isometric_force", fmt(m.max_isometric_force))
    _sub(mel, "optimal_fiber_length", fmt(m.optimal_fiber_length))
    _sub(mel, "tendon_slack_length", fmt(m.tendon_slack_length))
    _sub(mel, "pennation_angle_at_optimal", fmt(m.pennation))
    _sub(mel, "max_contraction_velocity", "10")
    _sub(mel, "activation_time_constant", fmt(ACTIVATION_TIME_CONSTANT))
    _sub(mel, "deactivation_time_constant", fmt(ACTIVATION_TIME_CONSTANT))
    _sub(mel, "default_activation", fmt(INITIAL_EXCITATION))
    _sub(mel, "minimum_activation", "0.01")
    if m.rigid_tendon:
        _sub(mel, "ignore_tendon_compliance", "true")


def _spring(forces, s) -> None:
    f = _sub(forces, "SpringGeneralizedForce", name=s.name)
    _sub(f, "coordinate", s.coordinate)
    _sub(f, "stiffness", fmt(s.stiffness))
    _sub(f, "rest_length", "0")
    _sub(f, "viscosity", fmt(s.damping))


def _limit_force(forces, lim) -> None:
    f = _sub(forces, "CoordinateLimitForce", name=lim.name)
    _sub(f, "coordinate", lim.coordinate)
    _sub(f, "upper_stiffness", fmt(lim.stiffness))
    _sub(f, "upper_limit", fmt(lim.upper_deg))
    _sub(f, "lower_stiffness", fmt(lim.stiffness))
    _sub(f, "lower_limit", fmt(lim.lower_deg))
    _sub(f, "damping", fmt(lim.damping))
    _sub(f, "transition", "2")


def _contact_geometry_set(model, spec: CreatureSpec) -> None:
    """The ground half-space and one sphere per contact."""
    geoms = _object_set(model, "ContactGeometrySet", "contactgeometryset")
    hs = _sub(geoms, "ContactHalfSpace", name=GROUND_NAME)
    _sub(hs, "socket_frame", "/ground")
    _sub(hs, "location", "0 0 0")
    _sub(hs, "orientation", fmt((0, 0, -math.pi / 2)))
    for c in spec.contacts:
        cs = _sub(geoms, "ContactSphere", name=c.name)
        _sub(cs, "socket_frame", f"/bodyset/{c.body}")
        _sub(cs, "location", fmt(c.location))
        _sub(cs, "orientation", "0 0 0")
        _sub(cs, "radius", fmt(c.radius))


def _smooth_sphere_contact(forces, c) -> None:
    f = _sub(forces, "SmoothSphereHalfSpaceForce", name=f"{SMOOTH_CONTACT_PREFIX}{c.name}")
    _sub(f, "socket_sphere", f"/contactgeometryset/{c.name}")
    _sub(f, "socket_half_space", f"/contactgeometryset/{GROUND_NAME}")
    for k, v in CONTACT.items():
        _sub(f, k, fmt(v))


def _exponential_contact(forces, c, contact: dict) -> None:
    """ExponentialContactForce at the sphere's lowest point (body frame) against the ground
    plane y = 0 (its contact plane's z axis is the ground's y axis)."""
    f = _sub(forces, "ExponentialContactForce", name=f"{EXPONENTIAL_CONTACT_PREFIX}{c.name}")
    _sub(f, "contact_plane_transform", fmt((-math.pi / 2, 0, 0, 0, 0, 0)))
    shape = contact.get("exponential_shape")
    _sub(f, "exponential_shape_parameters", OPENSIM_EXPONENTIAL_SHAPE if shape is None else fmt(shape))
    _sub(f, "normal_viscosity", "0.5")
    _sub(f, "max_normal_force", "100000")
    _sub(f, "friction_elasticity", fmt(contact["friction_elasticity"]))
    _sub(f, "friction_viscosity", fmt(contact["friction_viscosity"]))
    _sub(f, "settle_velocity", fmt(contact["settle_velocity"]))
    _sub(f, "initial_mu_static", fmt(contact["static_friction"]))
    _sub(f, "initial_mu_kinetic", fmt(contact["kinetic_friction"]))
    station = _sub(f, "Station", name="station")
    _sub(station, "socket_parent_frame", f"/bodyset/{c.body}")
    _sub(station, "location", fmt(np.asarray(c.location) - np.array([0.0, c.radius, 0.0])))


def write_atomic(path: Path, data: bytes) -> None:
    """Write to a temporary file in the same folder, then rename (no half-written output)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600 files
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def xml_bytes(tree: etree._ElementTree) -> bytes:
    return etree.tostring(tree, pretty_print=True, xml_declaration=True, encoding="UTF-8")
