"""A copy of an optimization run folder with some of its optimized values changed: how a walker
responds to one parameter moved alone (the README's probes, e.g. "moved alone it falls after
3.81 s").

    python3.11 analysis/vary_parameters.py RUN OUT [NAME=VALUE ...] [--model MODEL.osim]
    python3.11 analysis/human_targets.py OUT          # re-simulate, analyze and compare the copy

NAME is a parameter of best.json: a controller or initial-state name (``prep.theta0``,
``swing_foot.follow_shank``; also a feature beyond the paper the run kept off, e.g. ``gain.knee.kw``)
in its own units, or a model parameter by its kind
(``properties.hamstrings.tendon_slack_length``, ``routing.vasti.P1.x``, ``passive.…``) in the
normalized units best.json stores (0..1 of its range; ``musclewalk optimize`` prints the space).
The copy's optimized.osim and metadata are rewritten from the run's own model copy (model/; for a
best kept in a run's generation-N/ folder, the run's, one folder up) with the changed values, as
the optimizer writes them; best.json keeps its recorded objective, which no longer belongs to the
changed values (the copy is for re-simulation, not a result).

--model puts the run's values on another build of its creature (with its .meta.json beside it,
e.g. a later run's model/ copy built from today's templates, or a variant of it with other physics
such as config/experiments/creatures/human_soft_heel_400.yaml, whose name the copy's best.json then
carries), as a warm start carries them over:
model parameters that build has and the run lacks keep that build's values unless named here.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import musclewalk  # noqa: F401  (pins numpy's CPU dispatch before numpy loads)
from musclewalk.model.meta import load_meta, meta_path
from musclewalk.model.vectors import ModelVectors
from musclewalk.optimize.driver import write_result

MODEL_KINDS = ("routing", "properties", "passive")


def _specs(run: Path) -> dict:
    """The run model's controller and initial-state parameter specs by name (their bounds, and
    which belong to features beyond the paper)."""
    from musclewalk.constants import CONTROL_INTERVAL
    from musclewalk.control.params import controller_parameter_specs
    from musclewalk.sim.bridge import control_model_from_meta
    from musclewalk.sim.scenario import INITIAL_STATE_SPECS

    cm = control_model_from_meta(load_meta(run / "optimized.osim"), CONTROL_INTERVAL)
    return {s.name: s for s in [*controller_parameter_specs(cm), *INITIAL_STATE_SPECS]}


def _model_copy(run: Path, model: Path | None) -> Path:
    """The build the copy's values go on: --model, else the run's own model copy (for a best kept
    in a run's generation-N/ folder, the run's, one folder up)."""
    if model is not None:
        if not model.is_file() or not meta_path(model).is_file():
            raise SystemExit(f"{model}: expected a built model (.osim) with its .meta.json beside it")
        return model
    where = run.parent / "model" if run.name.startswith("generation-") else run / "model"
    models = sorted((run / "model").glob("*.osim")) or sorted(where.glob("*.osim"))
    if len(models) != 1:
        raise SystemExit(f"{where}: expected the run's one model copy (*.osim)")
    return models[0]


def vary(run: Path, out: Path, changes: dict[str, float], model: Path | None = None) -> None:
    best = json.loads((run / "best.json").read_text())
    params = best["parameters"]
    osim_in = _model_copy(run, model)
    target_meta = load_meta(meta_path(osim_in))
    vectors = ModelVectors(target_meta)
    if model is not None and best.get("creature") not in (None, target_meta.creature):
        best["creature"] = target_meta.creature  # a variant of its creature (e.g. its physics)
    # another build's model parameters: those the run lacks may be named, those it lacks are dropped
    other_names = {kind: set(vectors.names(kind)) for kind in MODEL_KINDS} if model is not None else {}
    specs = _specs(run) if any(n.partition(".")[0] not in MODEL_KINDS for n in changes) else {}
    for name, value in changes.items():
        kind, _, rest = name.partition(".")
        if kind in MODEL_KINDS:
            section, key = params["model"].setdefault(kind, {}), rest
            if key in other_names.get(kind, ()):
                section.setdefault(key, None)
            if not 0.0 <= value <= 1.0:
                raise SystemExit(f"{name}: {value:g} is outside the normalized bounds [0, 1]")
        else:
            section = next((params[s] for s in ("controller", "initial_state") if name in params[s]), None)
            key = name
            if name in specs:  # the bounds `musclewalk simulate` checks, refused before writing
                try:
                    specs[name].check(value, "NAME=VALUE")
                except ValueError as exc:
                    raise SystemExit(str(exc)) from None
            if section is None and name in specs and specs[name].extension:
                # a controller feature beyond the paper the run kept off: turned on in the copy
                section = params["controller"]
                section[name] = None
        if section is None or key not in section:
            raise SystemExit(f"{run / 'best.json'}: parameters: no {name!r} to change")
        section[key] = value
    if out.exists():
        raise SystemExit(f"{out}: exists (choose a new folder)")
    for kind, names in other_names.items():
        params["model"][kind] = {k: v for k, v in params["model"].get(kind, {}).items() if k in names}
    shutil.copytree(
        run, out, ignore=shutil.ignore_patterns("stages", "checkpoint.pkl", ".musclewalk.lock", "model")
    )
    (out / "model").mkdir()
    for f in (osim_in, meta_path(osim_in)):
        shutil.copy2(f, out / "model" / f.name)
    write_result(out, best, osim_in, target_meta)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path, help="run folder (best.json, model/, optimized.osim)")
    ap.add_argument("out", type=Path, help="new folder for the copy")
    ap.add_argument("changes", nargs="*", metavar="NAME=VALUE", help="(none: only with --model)")
    ap.add_argument(
        "--model",
        type=Path,
        help="another build of the creature (.osim, its .meta.json beside it)",
    )
    args = ap.parse_intermixed_args(argv)  # --model before or after NAME=VALUE
    if not args.changes and args.model is None:
        ap.error("nothing to change: give NAME=VALUE or --model")
    changes = {}
    for item in args.changes:
        name, sep, value = item.partition("=")
        try:
            changes[name] = float(value)
        except ValueError:
            sep = ""
        if not sep:
            ap.error(f"{item!r}: expected NAME=VALUE with a number")
    vary(args.run, args.out, changes, args.model)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
