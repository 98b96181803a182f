"""An objective: weighted, thresholded measures read from a file (``models/objectives/NAME.yaml``,
format in that folder's files), and the simulation observer that scores a run with it.

    E = sum over terms  W_m {(1/t_max) integral E_m dt}_{H_m},   {x}_H = 0 if x < H   (eqs. 32-33)

The integral is divided by t_max (a time average), so that a threshold compares with an average
error. After an early termination each measure counts its ``after_termination`` value for the
rest of t_max (E_speed = 1, the others 0)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from ..io_checks import extended_file, read_yaml
from ..model.template import models_dir
from .gait import MEASURES, MeasureContext, MuscleForcePerBodyWeight, StepSample
from .integral import StepIntegral

DEFAULT_OBJECTIVE = "geijtenbeek2013"


class ObjectiveError(ValueError):
    """A bad objective file; the message names the file and the key."""


def objective_file(name_or_path) -> Path:
    """The file of an objective name (models/objectives/NAME.yaml) or the .yaml path itself."""
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml"):
        return path
    path = models_dir() / "objectives" / f"{name_or_path}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in (models_dir() / "objectives").glob("*.yaml"))
        raise ObjectiveError(
            f"objective {name_or_path!r}: unknown (known: {', '.join(known)}; or give a .yaml file)"
        )
    return path


def _resolved(path: Path, seen: tuple[Path, ...] = ()) -> dict:
    """An objective file's values with what it ``extends`` resolved: the parent's terms (a name in
    models/objectives/ or a .yaml path relative to the file), each term of this file replacing
    the fields it gives of the parent's term of that name (a new name adds a term, ``null``
    removes one); a file that extends another must say in its description how it differs."""
    data = read_yaml(path, ObjectiveError, "objective file")
    if not isinstance(data, dict) or "extends" not in data:
        return data
    data = dict(data)
    parent_path, chain = extended_file(path, data, seen, ObjectiveError, "objective", objective_file)
    base = _resolved(parent_path, chain)
    if not isinstance(base, dict) or not isinstance(base.get("terms"), dict):
        raise ObjectiveError(f"{parent_path}: expected a mapping with 'terms'")
    terms = {name: dict(spec) if isinstance(spec, dict) else spec for name, spec in base["terms"].items()}
    changes = data.get("terms", {})
    if not isinstance(changes, dict):
        raise ObjectiveError(f"{path}: terms: expected a mapping of term name -> fields to change")
    for name, spec in changes.items():
        if spec is None:
            if name not in terms:
                raise ObjectiveError(f"{path}: terms.{name}: removes a term {parent_path.stem} does not have")
            del terms[name]
        elif isinstance(spec, dict) and isinstance(terms.get(name), dict):
            terms[name].update(spec)
        else:
            terms[name] = spec
    data["terms"] = terms
    return data


@dataclass(frozen=True)
class Term:
    name: str  # the term's name in history.csv and best.json
    measure: str  # a key of gait.MEASURES
    weight: float
    threshold: float


@dataclass(frozen=True)
class Objective:
    name: str
    terms: tuple[Term, ...]
    description: str = ""
    source: str = field(default="objective", compare=False)  # the file it was read from

    @property
    def term_names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.terms)

    def check_muscle_model(self, muscle_model: str, model) -> None:
        """ObjectiveError naming the file and the term when a term's measure is not defined for the
        muscles of ``model`` (the metabolic rate of a model with ideal muscles)."""
        for t in self.terms:
            needs = MEASURES[t.measure].muscle_models
            if muscle_model not in needs:
                raise ObjectiveError(
                    f"{self.source}: terms.{t.name}.measure: {t.measure} needs {' or '.join(needs)} "
                    f"muscles, {model} has {muscle_model} muscles (physics.muscles); measure its effort "
                    f"as {MuscleForcePerBodyWeight.name} (e.g. objective geijtenbeek2013-ideal-muscles)"
                )

    def combine(self, averages: Mapping[str, float]) -> tuple[float, dict]:
        """Weighted, thresholded terms and their sum from time-averaged measures (by term)."""
        terms = {
            t.name: t.weight * (0.0 if averages[t.name] < t.threshold else averages[t.name])
            for t in self.terms
        }
        return float(sum(terms.values())), terms

    def thresholds_met(self, averages: Mapping[str, float]) -> bool:
        return all(averages[t.name] < t.threshold or t.threshold == 0.0 for t in self.terms)

    def check_stop_terms(self, names) -> None:
        """ObjectiveError unless each of ``names`` is a term with a threshold (one that can be met)."""
        thresholds = {t.name: t.threshold for t in self.terms}
        for name in names:
            if name not in thresholds:
                raise ObjectiveError(f"{name}: not a term of {self.source} (terms: {', '.join(thresholds)})")
            if thresholds[name] <= 0.0:
                raise ObjectiveError(f"{name}: has no threshold in {self.source}, so it is never met")

    def met(self, result, names) -> bool:
        """Whether ``result`` (an evaluation) ran its full t_max with each of the terms ``names``
        averaging under its threshold; scored by several trials, in every one of them."""
        if result is None or result.terminated:
            return False
        thresholds = {t.name: t.threshold for t in self.terms}
        trials = getattr(result, "trial_averages", None) or [result.averages]
        return all(averages[n] < thresholds[n] for averages in trials for n in names)

    def as_dict(self) -> dict:
        return {
            "description": self.description,
            "terms": {
                t.name: {"measure": t.measure, "weight": t.weight, "threshold": t.threshold}
                for t in self.terms
            },
        }

    # ------------------------------------------------------------------ reading
    @classmethod
    def load(cls, name_or_path: str | Path = DEFAULT_OBJECTIVE) -> "Objective":
        """An objective by name (a file in models/objectives/) or by path."""
        path = objective_file(name_or_path)
        return cls.from_dict(_resolved(path), path.stem, source=str(path))

    @classmethod
    def from_dict(cls, data, name: str, source: str = "objective") -> "Objective":
        def err(key, message):
            return ObjectiveError(f"{source}: {key}: {message}")

        if not isinstance(data, dict):
            raise ObjectiveError(f"{source}: expected a mapping with 'terms'")
        unknown = set(data) - {"description", "terms"}
        if unknown:
            raise err(sorted(unknown)[0], "unknown key (known: description, terms)")
        raw_terms = data.get("terms")
        if not isinstance(raw_terms, dict) or not raw_terms:
            raise err("terms", "expected a non-empty mapping of term name -> measure, weight, threshold")
        terms = []
        for tname, spec in raw_terms.items():
            key = f"terms.{tname}"
            if not isinstance(spec, dict):
                raise err(key, "expected a mapping with measure, weight, threshold")
            unknown = set(spec) - {"measure", "weight", "threshold"}
            if unknown:
                raise err(f"{key}.{sorted(unknown)[0]}", "unknown key")
            measure = spec.get("measure")
            if measure not in MEASURES:
                raise err(f"{key}.measure", f"unknown measure {measure!r} (known: {', '.join(MEASURES)})")
            values = {}
            for field_name, default in (("weight", None), ("threshold", 0.0)):
                value = spec.get(field_name, default)
                if (
                    isinstance(value, bool)
                    or not isinstance(value, (int, float))
                    or not math.isfinite(value)
                    or value < 0
                ):
                    raise err(f"{key}.{field_name}", f"expected a number >= 0, got {value!r}")
                values[field_name] = float(value)
            terms.append(Term(str(tname), measure, values["weight"], values["threshold"]))
        return cls(name, tuple(terms), str(data.get("description", "")), source)


class ObjectiveRecorder:
    """Observer for Simulator.run: evaluates the objective's measures every control step and
    integrates them over the run; `finish` gives the time averages by term."""

    def __init__(self, sim, scenario, objective: Objective | None = None):
        self.objective = objective or Objective.load(DEFAULT_OBJECTIVE)
        self.scenario = scenario
        self.context = MeasureContext.from_simulator(sim, scenario)
        self.measures = {t.name: MEASURES[t.measure](self.context) for t in self.objective.terms}
        self.needs_muscles = any(m.needs_muscles for m in self.measures.values())
        self.needs_limit_torques = any(m.needs_limit_torques for m in self.measures.values())
        self.integral = StepIntegral(self.measures, scenario.control_interval)
        self.steps = 0

    def __call__(self, sensors, excitation, engine, raw) -> None:
        muscles = engine.muscle_states() if self.needs_muscles else None
        limits = engine.limit_torques() if self.needs_limit_torques else None
        sample = StepSample.at(sensors, raw, excitation, self.scenario.heading_at, muscles, limits)
        self.integral.add(sample.t, {name: m.value(sample) for name, m in self.measures.items()})
        self.steps += 1

    def finish(self, simulated_time: float, terminated: bool) -> dict:
        """Time-averaged measures over t_max by term, with the termination penalty applied."""
        duration = self.scenario.duration
        integrals = self.integral.totals(simulated_time)
        if terminated:
            for name, m in self.measures.items():
                if m.after_termination:
                    integrals[name] += max(0.0, duration - simulated_time) * m.after_termination
        return {k: v / duration for k, v in integrals.items()}


@dataclass(frozen=True)
class ScoredRun:
    """One simulation scored by an objective: the simulator's result, the time-averaged measures
    by term (termination penalty applied), the weighted thresholded terms and their sum."""

    result: object
    averages: dict
    terms: dict
    score: float


def scored_run(sim, scenario, values, objective: Objective, observers=()) -> ScoredRun:
    """``values`` simulated by ``sim`` under ``scenario`` and scored by ``objective`` (as an
    optimization evaluates a candidate); ``observers`` run beside the objective's recorder."""
    recorder = ObjectiveRecorder(sim, scenario, objective)
    result = sim.run(scenario, values, observers=[recorder, *observers])
    averages = recorder.finish(result.simulated_time, result.terminated)
    score, terms = objective.combine(averages)
    return ScoredRun(result, averages, terms, score)
