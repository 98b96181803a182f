"""A copy of an optimization run folder whose parameters are the CMA-ES distribution's mean, not
its best candidate: what the search currently believes, for re-simulation.

    python3.11 analysis/distribution_mean.py RUN OUT
    python3.11 analysis/human_targets.py OUT          # re-simulate, analyze and compare the copy

Under a task with random perturbations every generation draws new pushes (common random numbers
within a generation only), so a run's best is the candidate that scored lowest under its own
generation's draw: partly a lucky draw, which a straight re-simulation may not repeat (issue 14's
tries table). The mean (pycma's ``result.xfavorite``, in the bounds) is not scored under any one
draw. RUN needs its checkpoint.pkl (a running optimization's is read as it was last written);
held and fixed parameters keep the run's values, and the model values are written into the copy's
optimized.osim as the optimizer writes a best's. The copy's best.json keeps the run's settings
(creature, speed, task) with ``objective`` and ``terms`` emptied, since no simulation scored this
point, and says where it came from under ``distribution_mean``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import numpy as np

import musclewalk  # noqa: F401  (pins numpy's CPU dispatch before numpy loads)
from musclewalk.constants import CONTROL_INTERVAL
from musclewalk.model.meta import load_meta, meta_path
from musclewalk.optimize.driver import (
    CHECKPOINT,
    MODEL_DIR,
    OptimizationError,
    load_checkpoint,
    run_model,
    write_result,
)
from musclewalk.optimize.space import ParameterSpace
from musclewalk.sim.bridge import control_model_from_meta


def _run_model(run: Path, settings) -> Path:
    """The run's model (its copy in RUN/model/ when it has one), with its metadata beside it."""
    model = run_model(run, settings.model)
    if not model.is_file() or not meta_path(model).is_file():
        raise SystemExit(f"{run / CHECKPOINT}: model: {model} not found with its .meta.json")
    return model


def mean_parameters(run: Path) -> tuple[dict, dict, Path]:
    """(best.json's ``parameters`` layout at the distribution mean, what it came from, the model)."""
    try:
        settings, state = load_checkpoint(run / CHECKPOINT)
    except OptimizationError as exc:
        raise SystemExit(str(exc)) from None
    model = _run_model(run, settings)
    meta = load_meta(model)
    space = ParameterSpace(
        meta, control_model_from_meta(meta, CONTROL_INTERVAL), settings.parameters, settings.hold_values
    )
    es = state.es
    x = np.asarray(es.result.xfavorite, float)
    if x.shape != (len(space),):
        raise SystemExit(f"{run / CHECKPOINT}: a mean of {x.size} coordinates for a space of {len(space)}")
    origin = {
        "generation": int(state.generation),
        "sigma": float(es.sigma),
        "best_generation": int(state.best_generation),
    }
    return space.structured(space.values(x)), origin, model


def write_copy(run: Path, out: Path) -> None:
    parameters, origin, model = mean_parameters(run)
    if out.exists():
        raise SystemExit(f"{out}: exists (choose a new folder)")
    best = json.loads((run / "best.json").read_text())
    best.update(
        {
            "parameters": parameters,
            "objective": None,
            "terms": {},
            "averages": {},
            "generation": origin["generation"],
            "distribution_mean": {"run": str(run), **origin},
        }
    )
    for stale in ("perturbation_seed", "trials", "simulated_time", "terminated", "termination_reason"):
        best.pop(stale, None)
    shutil.copytree(
        run,
        out,
        ignore=shutil.ignore_patterns(
            "stages", "generation-*", "checkpoint.pkl", ".musclewalk.lock", MODEL_DIR, "robustness", "earlier"
        ),
    )
    (out / MODEL_DIR).mkdir()
    for f in (model, meta_path(model)):
        shutil.copy2(f, out / MODEL_DIR / f.name)
    write_result(out, best, model, load_meta(model))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path, help="run folder (checkpoint.pkl, best.json, model/)")
    ap.add_argument("out", type=Path, help="new folder for the copy")
    args = ap.parse_args(argv)
    write_copy(args.run, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
