"""From a model's metadata to the controller's static description, and from the engine's bulk
reads to the controller's sensor snapshot (all numpy)."""

from __future__ import annotations

import numpy as np

from ..control.jacobian import cross3, moment_arm_vectors
from ..control.model import ControlModel
from ..control.sensors import Sensors
from ..control.targets import base_pose_features
from ..model.kinematics import bodies_beyond
from ..model.metadata import ModelMeta

# joint kinds of the model templates -> the controller's joint kinds
CONTROL_JOINT_KIND = {
    "hip": "hip",
    "knee": "knee",
    "ankle": "ankle",
    "toe": "toe",
    "spine": "head_chain",
    "neck": "head_chain",
    "head_chain": "head_chain",
}


def control_model_from_meta(meta: ModelMeta, dt: float) -> ControlModel:
    bodies = [b.name for b in meta.bodies]
    feats = meta.features
    legs = feats.legs
    joints = [
        {
            "name": j.name,
            "kind": CONTROL_JOINT_KIND.get(j.kind, "other"),
            "side": j.side if CONTROL_JOINT_KIND.get(j.kind) in ("hip", "knee", "ankle", "toe") else None,
        }
        for j in meta.joints
    ]
    pairs = [(m.name, s.joint) for m in meta.muscles for s in m.spans]
    head = feats.head
    trunk = feats.trunk
    pose = meta.base_pose
    pos = np.array([pose[b].p for b in bodies])
    rot = np.array([np.reshape(pose[b].R, (3, 3)) for b in bodies])
    index = {n: i for i, n in enumerate(bodies)}
    head_index = index[head] if head and head != trunk else None
    base = base_pose_features(
        pos,
        rot,
        index[trunk],
        head_index,
        [index[legs[s].upper] for s in "rl"],
        [index[legs[s].lower] for s in "rl"],
        [index[legs[s].foot] for s in "rl"],
    )
    if head_index is None:
        base["head_offset"] = list(feats.head_offset)
    data = {
        "muscles": [
            {
                "name": m.name,
                "side": m.side,
                "fmax": m.max_isometric_force,
                "delay": m.delay,  # 0 with ideal muscles (written so by model.meta.build_meta)
                "unique": m.unique,
                "roles": m.roles,
            }
            for m in meta.muscles
        ],
        "joints": joints,
        "pairs": pairs,
        "body_names": bodies,
        "bodies": {
            "trunk": trunk,
            "head": head if head_index is not None else None,
            "upper": [legs[s].upper for s in "rl"],
            "lower": [legs[s].lower for s in "rl"],
            "foot": [legs[s].foot for s in "rl"],
        },
        "total_mass": meta.total_mass,
        "leg_length": meta.leg_length,
        "dt": dt,
        **base,
    }
    if feats.head_gain_mass == "head_chain":
        data["head_gain_mass"] = head_chain_mass(meta)
    return ControlModel.from_dict(data)


def head_chain_mass(meta: ModelMeta) -> float:
    """kg: the bodies the head-chain joints carry (their children and every body beyond them)."""
    links = [(b.parent, b.name) for b in meta.bodies if b.parent is not None]
    carried = set()
    for j in meta.joints:
        if CONTROL_JOINT_KIND.get(j.kind) == "head_chain":
            carried.update(bodies_beyond(links, j.child))
    mass = sum(b.mass for b in meta.bodies if b.name in carried)
    if mass <= 0.0:
        raise ValueError(f"{meta.source}: features.head_gain_mass: no body on a head-chain joint")
    return mass


class SensorBridge:
    """Precomputed index arrays that turn RawSensors into the controller's Sensors."""

    def __init__(self, meta: ModelMeta, engine):
        self.engine = engine
        index = engine.body_index
        points_body, points_local, pair_points, pair_joint = [], [], [], []
        joint_child = {j.name: index[j.child] for j in meta.joints}
        joint_names = [j.name for j in meta.joints]
        for m in meta.muscles:
            base = len(points_body)
            for p in m.points:
                points_body.append(index[p.body])
                points_local.append(p.location)
            for s in m.spans:
                child = s.child_point
                parent = s.segment + 1 if child == s.segment else s.segment
                pair_points.append((base + child, base + parent))
                pair_joint.append(joint_names.index(s.joint))
        self.points_body = np.array(points_body, dtype=np.intp)
        self.points_local = np.array(points_local, float)
        self.pair_points = np.array(pair_points, dtype=np.intp)
        self.pair_joint = np.array(pair_joint, dtype=np.intp)
        self.joint_child = np.array([joint_child[n] for n in joint_names], dtype=np.intp)
        self.contact_foot = engine.contact_foot
        self.contact_body = engine.contact_body
        self.contact_local = engine.contact_local
        self.contact_radius = engine.contact_radius
        self._foot_masks = [self.contact_foot == k for k in (0, 1)]
        self._centres_read = None  # the RawSensors whose contact centres are in _centres
        self._centres = None

    def contact_centres(self, raw) -> np.ndarray:
        """World centres of the contact spheres (nc, 3), computed once per engine read (a
        RawSensors is not changed after `engine.read`): the sensors, the recorder and the terrain
        update of one control step share one read-only array."""
        if raw is not self._centres_read:
            self._centres = self.engine.contact_centres(raw.body_pos, raw.body_R)
            self._centres.flags.writeable = False
            self._centres_read = raw
        return self._centres

    def contact_points(self, raw) -> np.ndarray:
        """World positions of the lowest point of each contact sphere."""
        points = self.contact_centres(raw).copy()
        points[:, 1] -= self.contact_radius
        return points

    def contact_velocities(self, raw) -> np.ndarray:
        b = self.contact_body
        r = np.einsum("nij,nj->ni", raw.body_R[b], self.contact_local)
        return raw.body_vel[b] + cross3(raw.body_omega[b], r)

    def sensors(self, raw) -> Sensors:
        points = raw.body_pos[self.points_body] + np.einsum(
            "nij,nj->ni", raw.body_R[self.points_body], self.points_local
        )
        joint_pos = raw.body_pos[self.joint_child]
        pair_r = moment_arm_vectors(points, self.pair_points, joint_pos, self.pair_joint)
        contact_points = self.contact_points(raw)
        foot_pos = np.array([contact_points[m].mean(axis=0) for m in self._foot_masks])
        foot_grf = np.array([raw.contact_force[m].sum(axis=0) for m in self._foot_masks])
        return Sensors(
            t=raw.t,
            body_pos=raw.body_pos,
            body_R=raw.body_R,
            body_vel=raw.body_vel,
            body_omega=raw.body_omega,
            com_pos=raw.com_pos,
            com_vel=raw.com_vel,
            foot_pos=foot_pos,
            foot_grf=foot_grf,
            muscle_force=raw.muscle_force,
            pair_r=pair_r,
            joint_pos=joint_pos,
        )
