"""The simulation loop: engine + controller + termination rules, one control interval at a
time, optionally recording everything the output files need."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

from ..constants import CONTROL_INTERVAL
from ..control.controller import Controller
from ..cpu_dispatch import check_cpu_dispatch
from ..model.meta import load_meta
from ..model.metadata import ModelMeta
from .bridge import SensorBridge, control_model_from_meta
from .engine import EngineError, OpenSimEngine
from .parameters import split_parameters
from .scenario import Scenario, initial_coordinates
from .termination import TerminationRules


class SimulationError(ValueError):
    """A model or a state OpenSim refuses (`simulate`): one line naming the model."""


@dataclass
class Recording:
    time: list = field(default_factory=list)
    states: list = field(default_factory=list)
    excitation: list = field(default_factory=list)
    muscle_force: list = field(default_factory=list)
    foot_force: list = field(default_factory=list)  # (2, 3) per step
    foot_cop: list = field(default_factory=list)  # (2, 3) per step
    # (2, 3) per step: each foot's contact forces' moment about its centre of pressure (the free
    # moment), so that force at the COP plus this torque equals the contact points' forces
    foot_torque: list = field(default_factory=list)
    controller: list = field(default_factory=list)
    com: list = field(default_factory=list)
    muscle_state: list = field(default_factory=list)  # (5, nm): MuscleState.as_array()
    limit_torque: list = field(default_factory=list)  # (n_limits,) N m, engine.limit_names order
    feedback_sources: list = field(default_factory=list)  # (n_sources, nm): Controller.feedback_by_source


class Recorder:
    """Observer that records everything the output files need at every control step (the
    recording of `Simulator.run(record=True)`)."""

    def __init__(self, bridge, controller):
        self.bridge, self.controller = bridge, controller
        self.recording = Recording()

    def __call__(self, sensors, u, engine, raw) -> None:
        rec = self.recording
        rec.time.append(raw.t)
        rec.states.append(engine.state_values() if engine.state is not None else None)
        rec.excitation.append(np.array(u, float))
        rec.muscle_force.append(raw.muscle_force.copy())
        points = self.bridge.contact_points(raw)
        forces, cops, torques = np.zeros((2, 3)), np.zeros((2, 3)), np.zeros((2, 3))
        for foot in (0, 1):
            mask = self.bridge.contact_foot == foot
            f = raw.contact_force[mask]
            forces[foot] = f.sum(axis=0)
            w = np.clip(f[:, 1], 0.0, None)
            cops[foot] = (w @ points[mask]) / w.sum() if w.sum() > 1e-9 else points[mask].mean(axis=0)
            if forces[foot, 1] == 0:
                cops[foot, 1] = 0.0
            torques[foot] = np.cross(points[mask] - cops[foot], f).sum(axis=0)
        rec.foot_force.append(forces)
        rec.foot_cop.append(cops)
        rec.foot_torque.append(torques)
        rec.controller.append(self.controller.log_row())
        rec.com.append(raw.com_pos.copy())
        rec.muscle_state.append(engine.muscle_states().as_array())
        rec.limit_torque.append(engine.limit_torques())
        rec.feedback_sources.append(self.controller.feedback_by_source())


@dataclass
class SimulationResult:
    simulated_time: float
    terminated: bool
    reason: str | None
    steps: int
    wall_time: float
    timing: dict
    initial_com: np.ndarray
    final_com: np.ndarray
    recording: Recording | None = None

    def summary(self, scenario: Scenario) -> dict:
        distance = float(self.final_com[0] - self.initial_com[0])
        return {
            "simulated_time": self.simulated_time,
            "duration": scenario.duration,
            "terminated": self.terminated,
            "termination_reason": self.reason,
            "termination_time": self.simulated_time if self.terminated else None,
            "distance": distance,
            "displacement": float(np.linalg.norm((self.final_com - self.initial_com)[[0, 2]])),
            "mean_forward_speed": distance / self.simulated_time if self.simulated_time > 0 else 0.0,
            "target_speed": scenario.speed,
            **({"speed_change": scenario.speed_change.as_dict()} if scenario.speed_change else {}),
            "control_interval": scenario.control_interval,
            "steps": self.steps,
            "wall_time": self.wall_time,
            "wall_per_simulated_second": self.wall_time / max(self.simulated_time, 1e-9),
        }


class Simulator:
    """One creature in one process: model, Manager, controller description and sensor bridge
    are built once and reused for every run."""

    def __init__(
        self,
        osim_path,
        meta: ModelMeta | None = None,
        control_interval: float = CONTROL_INTERVAL,
        integrator: str | None = None,
        accuracy: float | None = None,
        terrain=None,
        fixed_step: float | None = None,
    ):
        check_cpu_dispatch()
        self.meta = meta if meta is not None else load_meta(osim_path)
        self.terrain = terrain
        self.engine = OpenSimEngine(
            osim_path, self.meta, integrator, accuracy, terrain=terrain, fixed_step=fixed_step
        )
        self.control_model = control_model_from_meta(self.meta, control_interval)
        self.bridge = SensorBridge(self.meta, self.engine)
        trunk = self.meta.features.trunk
        self._trunk = self.engine.body_index[trunk]  # the balance aid's body (Scenario.assist)
        self._trunk_inertia = self.engine.body_inertia(self._trunk)
        self.rules = TerminationRules(self.meta, self.engine.body_index, trunk, terrain)
        self.control_interval = control_interval

    def split(self, params: Mapping[str, float] | None, source="parameters"):
        return split_parameters(params or {}, self.control_model, source)

    def run(
        self,
        scenario: Scenario,
        params: Mapping[str, float] | None = None,
        record: bool = False,
        observers: Sequence[Callable] = (),
    ) -> SimulationResult:
        """Simulate ``scenario``; the run ends at the duration or when a termination rule
        fires (the reason is reported, never raised). ``observers`` are called each control step
        with (sensors, excitation, engine, raw sensors)."""
        scenario.validate()
        if abs(scenario.control_interval - self.control_interval) > 1e-12:
            raise ValueError("scenario control interval differs from the simulator's")
        controller_params, init_params = self.split(params)
        controller = Controller(
            self.control_model,
            controller_params,
            speed=scenario.speed_at if scenario.speed_change else scenario.speed,
            heading=scenario.heading,
        )
        coords, speeds = initial_coordinates(init_params, scenario.speed, self.meta.leg_length)
        state = self.engine.initial_state(coords, speeds)
        wall0 = time.perf_counter()
        self.engine.start(state)
        raw = self.engine.read()
        sensors = self.bridge.sensors(raw)
        initial_com = raw.com_pos.copy()
        self.rules.reset(raw.com_pos[1], raw.body_pos)
        recorder = Recorder(self.bridge, controller) if record else None
        # the recorder reads the state first, like every observer before new controls
        # invalidate it
        observers = ([recorder] if recorder else []) + list(observers)
        timing = dict.fromkeys(("integrate", "sensors", "controller", "observers", "actuate"), 0.0)
        dt = scenario.control_interval
        n_steps = int(round(scenario.duration / dt))
        aid_gains = None
        if scenario.assist and scenario.assist.upright > 0:
            aid_gains = scenario.assist.held_gains(
                self.meta.total_mass, self.meta.leg_length, self._trunk_inertia, dt
            )
        reason, k = None, 0
        while True:
            self._control_step(controller, sensors, raw, observers, scenario, k * dt, timing, aid_gains)
            if k >= n_steps:
                break
            raw, reason = self._advance((k + 1) * dt, raw, timing)
            if reason:
                break
            k += 1
            c0 = time.perf_counter()
            sensors = self.bridge.sensors(raw)
            timing["sensors"] += time.perf_counter() - c0
            if scenario.terminate:
                reason = self.rules.check(sensors, scenario.heading_at(k * dt), scenario.max_heading_error)
                if reason:
                    if recorder is not None:
                        controller.step(sensors)
                        recorder(sensors, controller.excitation, self.engine, raw)
                    break
        wall = time.perf_counter() - wall0
        return SimulationResult(
            simulated_time=k * dt,
            terminated=reason is not None,
            reason=reason,
            steps=k,
            wall_time=wall,
            timing=timing,
            initial_com=initial_com,
            final_com=raw.com_pos.copy() if np.all(np.isfinite(raw.com_pos)) else initial_com,
            recording=recorder.recording if recorder else None,
        )

    def _control_step(self, controller, sensors, raw, observers, scenario, t, timing, aid_gains=None) -> None:
        """Excitations from the controller, the observers' look at the state, then the new
        controls (excitations, push, the terrain planes under the feet) set on the engine."""
        c0 = time.perf_counter()
        u = controller.step(sensors)
        c1 = time.perf_counter()
        for obs in observers:
            obs(sensors, u, self.engine, raw)
        c2 = time.perf_counter()
        self.engine.set_excitations(u)
        if scenario.assist:
            i = self._trunk
            force, torque = scenario.assist.wrench(
                raw.body_R[i],
                raw.body_omega[i],
                scenario.heading_at(t),
                self.meta.total_mass,
                self.meta.leg_length,
                aid_gains,
            )
            self.engine.set_push(scenario.push_at(t) + force, torque)
        else:
            self.engine.set_push(scenario.push_at(t))
        if self.terrain is not None:
            self.engine.update_terrain(self.bridge.contact_centres(raw)[:, 0])
        c3 = time.perf_counter()
        timing["controller"] += c1 - c0
        timing["observers"] += c2 - c1
        timing["actuate"] += c3 - c2

    def _advance(self, t_next: float, raw, timing) -> tuple:
        """(raw sensors at t_next, None), or with a termination reason when the integrator fails
        (the previous ``raw`` returned) or the state is no longer finite."""
        c0 = time.perf_counter()
        ok = self.engine.advance(t_next)
        c1 = time.perf_counter()
        timing["integrate"] += c1 - c0
        if not ok:
            return raw, "integrator_failure"
        raw = self.engine.read()
        timing["sensors"] += time.perf_counter() - c1
        if not (np.all(np.isfinite(raw.body_pos)) and np.all(np.isfinite(raw.com_vel))):
            return raw, "nan_state"
        return raw, None


def simulate(
    model,
    scenario: Scenario,
    params: Mapping[str, float] | None = None,
    *,
    meta: ModelMeta | None = None,
    terrain=None,
    source: str = "parameters",
    accuracy: float | None = None,
    fixed_step: float | None = None,
) -> tuple[Simulator, SimulationResult]:
    """(simulator, recorded result) of one run of ``model`` (.osim; ``meta`` its metadata, read
    from beside it if None) in ``scenario``, on ``terrain`` (a RampTerrain; None: flat ground),
    with controller and initial-state ``params`` (None: the defaults), at the integrator
    ``accuracy`` (None: the model's, models/physics.yaml) or ``fixed_step`` (s; None: the
    model's, 0: error-controlled steps), with the parameters checked
    (ParameterError naming ``source``) before anything is simulated. A model OpenSim cannot
    build, or a state it refuses while simulating (e.g. an extreme initial pose), raises
    SimulationError with one line; an interrupt is passed on."""
    try:
        sim = Simulator(
            model,
            meta=meta,
            control_interval=scenario.control_interval,
            terrain=terrain,
            accuracy=accuracy,
            fixed_step=fixed_step,
        )
    except EngineError as exc:
        raise SimulationError(str(exc)) from None
    sim.split(params, source=source)  # bad parameters fail before simulating
    try:
        result = sim.run(scenario, params, record=True)
    except RuntimeError as exc:  # OpenSim refused the state (e.g. an extreme initial pose)
        text = str(exc).strip()
        first = text.splitlines()[0] if text else type(exc).__name__
        raise SimulationError(f"{model}: OpenSim failed while simulating: {first}") from None
    return sim, result
