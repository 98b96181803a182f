"""CMA-ES driver (pycma ask/tell) with checkpoints, resume, parallel evaluators and run outputs.

Run directory:
  checkpoint.pkl   CMA state + history + best, written atomically after every generation
  history.csv      per generation: best, median, sigma, evaluations, each term of the best
  best.json        named parameters of the best solution so far, with its objective terms
  optimized.osim   the creature with the best routing, muscle properties and passive gains
                   written back (+ optimized.meta.json), opens in the OpenSim GUI
  log.txt          command, seed, versions, machine, wall time, stop reason
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import pickle
import platform
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

from ..model.meta import load_meta, meta_path, write_meta
from ..model.osim import write_atomic
from ..model.vectors import ModelVectors, parse_osim, write_model_with
from ..sim.bridge import control_model_from_meta
from ..sim.parameters import ParameterError, read_parameter_sections
from .evaluate import EvaluationTask
from .evaluators import make_evaluator
from .objective import TERMS
from .space import ParameterSpace

CHECKPOINT = "checkpoint.pkl"
POPULATION = 20          # paper §5
SIGMA0 = 1.0             # paper §5


class OptimizationError(ValueError):
    pass


@dataclass
class Settings:
    model: str
    speed: float
    duration: float = 10.0
    generations: int = 100
    seed: int = 1
    workers: int = 0                       # 0: all cores
    evaluator: str = "process"             # process | serial | dask
    scheduler: str | None = None
    popsize: int = POPULATION
    sigma: float = SIGMA0
    init: str | None = None                # best.json of an earlier run (warm start)
    init_other_creature: bool = False      # allow --init from another creature (shared names)
    extra_generations: int = 20            # keep improving after all thresholds are met
    stagnation: int = 200                  # generations without improvement before stopping
    timeout: float = 60.0                  # wall s per evaluation (a grinding simulation)
    command: str = ""


@dataclass
class State:
    es: object
    generation: int = 0
    evaluations: int = 0
    wall_time: float = 0.0
    best_score: float = math.inf
    best_x: np.ndarray | None = None
    best_result: dict | None = None
    best_generation: int = -1
    thresholds_met_at: int | None = None
    history: list = field(default_factory=list)
    failures: int = 0


def _scheduler_address(client) -> str | None:
    try:
        return str(client.scheduler.address)
    except Exception:
        return None


def _atomic_pickle(path: Path, obj) -> None:
    write_atomic(path, pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def load_checkpoint(path: Path) -> tuple[Settings, State]:
    try:
        data = pickle.loads(path.read_bytes())
        return data["settings"], data["state"]
    except FileNotFoundError:
        raise OptimizationError(f"{path}: no checkpoint to resume from") from None
    except Exception as exc:
        raise OptimizationError(f"{path}: corrupt checkpoint ({type(exc).__name__}: {exc})") from None


def best_key(result: Mapping | None) -> tuple:
    """Ordering of the reported best (CMA-ES itself ranks by objective alone): a candidate that ran
    the full t_max beats any that a termination rule stopped, however low the latter's objective
    (§5 charges a fall only E_speed = 1 for the time left, so one near the end can score lower
    than a walker); among equals the lower objective wins. No result yet: worst of all."""
    if result is None:
        return (True, math.inf)
    return (bool(result["terminated"]), result["score"])


class Optimization:
    def __init__(self, settings: Settings, out_dir: Path, resume: bool = False,
                 progress: bool = True, on_generation: Callable | None = None):
        import cma
        self.out = Path(out_dir)
        self.progress = progress
        self.on_generation = on_generation
        ckpt = self.out / CHECKPOINT
        if resume:
            saved, self.state = load_checkpoint(ckpt)
            # the budget may be extended on resume; everything else comes from the checkpoint
            saved.generations = max(saved.generations, settings.generations)
            # a run directory that moved (e.g. committed under models/optimized/) keeps its model
            # copy in <run>/model/: use that one
            local = self.out / "model" / Path(saved.model).name
            if Path(saved.model).parent.name == "model" and local.exists():
                saved.model = str(local)
            self.settings = saved
        else:
            if ckpt.exists():
                raise OptimizationError(f"{ckpt}: a checkpoint exists; use --resume to continue "
                                        "or choose another --out")
            self.settings = settings
        s = self.settings
        if not (s.speed > 0 and math.isfinite(s.speed)):
            raise OptimizationError(f"speed: must be positive, got {s.speed}")
        self.meta = load_meta(s.model)
        self.control_model = control_model_from_meta(self.meta, 0.005)
        self.space = ParameterSpace(self.meta, self.control_model)
        if not resume:
            x0 = np.zeros(len(self.space))
            if s.init:
                x0 = self._warm_start(Path(s.init))
            opts = {"popsize": s.popsize, "seed": s.seed, "verbose": -9,
                    "bounds": [list(self.space.lower_x), list(self.space.upper_x)],
                    "tolfun": 0, "tolfunhist": 0, "tolx": 1e-12, "maxiter": 10 ** 9}
            es = cma.CMAEvolutionStrategy(np.clip(x0, self.space.lower_x, self.space.upper_x),
                                          s.sigma, opts)
            if s.init:
                # the warm start itself is a candidate of the first generation, so a short run
                # (the quick budget) never reports a best worse than the result it started from;
                # injected as the genotype whose bound-transformed candidate is exactly x0
                x0c = np.clip(x0, self.space.lower_x, self.space.upper_x)
                es.inject([es.boundary_handler.inverse(x0c)], force=True)
            self.state = State(es=es)
        self.task = EvaluationTask(str(Path(s.model).resolve()), s.speed, s.duration,
                                   timeout=s.timeout)

    def _warm_start(self, path: Path) -> np.ndarray:
        try:
            creature, params = read_parameter_sections(path)
        except ParameterError as exc:
            raise OptimizationError(str(exc).replace("parameter file not found",
                                                     "--init file not found")) from None
        if creature and creature != self.meta["creature"] and not self.settings.init_other_creature:
            raise OptimizationError(f"{path}: creature: parameters of '{creature}' cannot start "
                                    f"an optimization of '{self.meta['creature']}' (use --init-from-other-creature to "
                                    "carry over the parameters both share)")
        flat = self.space.flatten(params)
        unknown = [k for k in flat if k not in self.space.names]
        known = len(flat) - len(unknown)
        if known == 0:
            raise OptimizationError(f"{path}: parameters: none of them belongs to this model")
        for name, value in flat.items():
            if name in unknown:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value):
                raise OptimizationError(f"{path}: {name}: expected a finite number, got {value!r}")
        # parameters of another creature's shared structure (e.g. HumanLegs -> Human) carry over;
        # the rest keep their defaults
        return self.space.x_from_values({k: v for k, v in flat.items() if k not in unknown})

    # ------------------------------------------------------------------ loop
    def run(self) -> State:
        s, st = self.settings, self.state
        self.out.mkdir(parents=True, exist_ok=True)
        evaluator = make_evaluator(s.evaluator, s.workers, s.scheduler)
        bar = None
        if self.progress:
            from tqdm import tqdm
            bar = tqdm(total=s.generations, initial=st.generation, unit="gen",
                       dynamic_ncols=True, file=sys.stderr)
        stop = None
        try:
            while stop is None:
                stop = self._stop_reason()
                if stop:
                    break
                t0 = time.perf_counter()
                X = st.es.ask()
                values = [self.space.values(x) for x in X]
                results = evaluator.map(self.task, values)
                scores = [r["score"] for r in results]
                st.es.tell(X, scores)
                st.generation += 1
                st.evaluations += len(X)
                st.failures += sum(r["error"] is not None for r in results)
                elapsed = time.perf_counter() - t0
                st.wall_time += elapsed
                lowest = int(np.argmin(scores))
                preferred = min(range(len(X)), key=lambda k: best_key(results[k]))
                if best_key(results[preferred]) < best_key(st.best_result):
                    st.best_score, st.best_x = scores[preferred], np.array(X[preferred])
                    st.best_result, st.best_generation = results[preferred], st.generation
                if st.best_result and st.best_result.get("thresholds_met") and st.thresholds_met_at is None:
                    st.thresholds_met_at = st.generation
                row = {"generation": st.generation, "evaluations": st.evaluations,
                       "best": st.best_score, "generation_best": scores[lowest],
                       "median": float(np.median(scores)), "sigma": float(st.es.sigma),
                       "wall_time": st.wall_time, "failures": st.failures,
                       "generation_wall": elapsed,
                       "best_simulated_time": st.best_result["simulated_time"]}
                row.update({f"term_{k}": st.best_result["terms"][k] for k in TERMS})
                row.update({f"avg_{k}": st.best_result["averages"][k] for k in TERMS})
                st.history.append(row)
                self._save()
                if bar is not None:
                    evals_per_min = len(X) / elapsed * 60
                    bar.update(1)
                    bar.set_postfix_str(
                        f"best {st.best_score:.2f} [" + " ".join(
                            f"{k} {st.best_result['terms'][k]:.2f}" for k in TERMS)
                        + f"] {evals_per_min:.0f} eval/min")
                if self.on_generation:
                    self.on_generation(st)
        finally:
            evaluator.close()
            if bar is not None:
                bar.close()
        self._write_log(stop)
        return st

    def _stop_reason(self) -> str | None:
        s, st = self.settings, self.state
        if st.generation >= s.generations:
            return f"generation limit ({s.generations})"
        if st.thresholds_met_at is not None and \
                st.generation >= st.thresholds_met_at + s.extra_generations:
            return (f"all objective thresholds met at generation {st.thresholds_met_at}, then "
                    f"{s.extra_generations} more generations")
        if st.best_generation >= 0 and st.generation - st.best_generation >= s.stagnation:
            return f"stagnation ({s.stagnation} generations without improvement)"
        return None

    # ------------------------------------------------------------------ outputs
    def _save(self) -> None:
        """Outputs first, the checkpoint last: a run killed in between redoes this generation
        on resume (the same candidates: the pickled CMA state carries its random generator) and
        rewrites the same outputs, instead of never writing the best of a generation the
        checkpoint already holds."""
        st, s = self.state, self.settings
        import pandas as pd
        tmp = self.out / ".history.csv.tmp"
        pd.DataFrame(st.history).to_csv(tmp, index=False, float_format="%.6g")
        os.replace(tmp, self.out / "history.csv")
        if st.best_x is not None and st.best_generation == st.generation:
            self._write_best()
        self._write_log(None)
        if s.scheduler is not None and not isinstance(s.scheduler, str):
            # a dask Client object cannot be pickled: keep its scheduler's address
            s = dataclasses.replace(s, scheduler=_scheduler_address(s.scheduler))
        _atomic_pickle(self.out / CHECKPOINT, {"settings": s, "state": st})

    def _write_best(self) -> None:
        st, s = self.state, self.settings
        values = self.space.values(st.best_x)
        structured = self.space.structured(values)
        best = {
            "creature": self.meta["creature"], "model": s.model, "speed": s.speed,
            "duration": s.duration, "seed": s.seed, "generation": st.best_generation,
            "evaluations": st.evaluations, "wall_time": st.wall_time,
            "objective": st.best_score, "terms": st.best_result["terms"],
            "averages": st.best_result["averages"],
            "simulated_time": st.best_result["simulated_time"],
            "terminated": st.best_result["terminated"],
            "termination_reason": st.best_result["reason"],
            "parameters": structured,
        }
        write_atomic(self.out / "best.json", (json.dumps(best, indent=1) + "\n").encode())
        model_values = structured["model"]
        write_model_with(s.model, self.meta, model_values, self.out / "optimized.osim")
        meta = ModelVectors(self.meta).updated_meta(parse_osim(self.out / "optimized.osim"))
        meta["optimized_from"] = str(s.model)
        write_meta(meta_path(self.out / "optimized.osim"), meta)

    def _write_log(self, stop: str | None) -> None:
        import cma
        import opensim
        s, st = self.settings, self.state
        lines = [
            f"command: {s.command}",
            f"model: {s.model} (creature {self.meta['creature']})",
            f"speed: {s.speed} m/s, duration (t_max): {s.duration} s",
            f"seed: {s.seed}, population: {s.popsize}, sigma0: {s.sigma}, "
            f"evaluator: {s.evaluator}, workers: {s.workers or os.cpu_count()}",
            f"warm start: {s.init or 'none (template defaults)'}",
            f"parameters: {len(self.space)} " + json.dumps(self.space.group_counts()),
            f"generations: {st.generation}, evaluations: {st.evaluations}, "
            f"failed evaluations: {st.failures}",
            f"wall time: {st.wall_time:.1f} s ({st.wall_time / 3600:.2f} h)",
            f"best objective: {st.best_score:.4f} at generation {st.best_generation}",
            "best terms: " + json.dumps(st.best_result["terms"] if st.best_result else {}),
            f"thresholds met at generation: {st.thresholds_met_at}",
            f"stop: {stop or 'running (written after every generation)'}",
            f"versions: python {platform.python_version()}, opensim {opensim.__version__}, "
            f"cma {cma.__version__}, numpy {np.__version__}",
            f"machine: {platform.node()} {platform.machine()} {os.cpu_count()} cores, "
            f"{platform.platform()}",
            f"written: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}",
        ]
        write_atomic(self.out / "log.txt", ("\n".join(lines) + "\n").encode())
