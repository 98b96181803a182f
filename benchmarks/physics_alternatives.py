"""Simulation-speed levers measured and rejected (issue 11): the committed walkers simulated closed
loop and scored as the optimizer does, with the model's own physics (baseline) and with a looser
accuracy, other integrators, fixed steps, or more rigid tendons.

    python3.11 benchmarks/physics_alternatives.py [--runs DIR [DIR ...]] [--duration 10]
        [--rounds 1] [--variants NAME ...]

Each DIR is an optimization run with optimized.osim (+ optimized.meta.json) and best.json;
default: models/optimized/HumanLegs-walk-1.3 and models/optimized/Human-walk-1.3 (target speed of
the run, termination rules on, the default objective; musclewalk.optimize.evaluate).

baseline       the model's physics (metadata: SemiExplicitEuler2, accuracy 1e-2)
accuracy-*     SemiExplicitEuler2, error control at a looser accuracy
rk2, rk3, merson
               Runge-Kutta 2 / 3 / Merson at the model's accuracy
fixed-*, euler-fixed-*
               no error control: SemiExplicitEuler2 or explicit Euler at a fixed step
               (Manager.setIntegratorFixedStepSize)
rigid-tendons  ignore_tendon_compliance on every Millard muscle with tendon slack length /
               optimal fibre length < 1.0 (the models' rule rigidifies below 0.5), baseline physics

How to read it: a lever only counts if the walker still walks the full duration with about the
same objective (speed, headori, headvel, slide, effort are its weighted terms; lower is better).
steps/s and realizations/s (integrator steps and realizations per simulated s, from the OpenSim
Manager's info log, on in every run) are deterministic and the load-independent cost figure.
"wall" is wall s per simulated s relative to the baseline of the same walker in the same round
(minimum over --rounds interleaved rounds); it drifts with the machine's load; "base s/s" is the
baseline's own minimum wall s per simulated s.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from lxml import etree

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from musclewalk.measures.objective import DEFAULT_OBJECTIVE, Objective, scored_run  # noqa: E402
from musclewalk.model.meta import load_meta, meta_path  # noqa: E402
from musclewalk.model.osim import write_atomic, xml_bytes  # noqa: E402
from musclewalk.model.vectors import parse_osim  # noqa: E402
from musclewalk.opensim_env import import_opensim  # noqa: E402
from musclewalk.sim.engine import integrator_settings  # noqa: E402
from musclewalk.sim.runner import Simulator  # noqa: E402
from musclewalk.sim.scenario import Scenario  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from simulation_speed import (  # noqa: E402
    IntegratorLog,
    load_walkers,
    machine,
    parse_walker_arguments,
    walker_arguments,
)

RIGID_BELOW = 1.0  # tendon slack / optimal fibre length under which rigid-tendons rigidifies
# name: (integrator or None = the model's, accuracy or None = the model's, fixed step s, rigid)
VARIANTS = {
    "baseline": (None, None, None, False),
    "accuracy-2e-2": ("semi_explicit_euler2", 2e-2, None, False),
    "accuracy-5e-2": ("semi_explicit_euler2", 5e-2, None, False),
    "rk2": ("runge_kutta2", None, None, False),
    "rk3": ("runge_kutta3", None, None, False),
    "merson": ("runge_kutta_merson", None, None, False),
    "fixed-0.5ms": ("semi_explicit_euler2", None, 0.5e-3, False),
    "fixed-1ms": ("semi_explicit_euler2", None, 1e-3, False),
    "fixed-2ms": ("semi_explicit_euler2", None, 2e-3, False),
    "euler-fixed-0.25ms": ("explicit_euler", None, 0.25e-3, False),
    "euler-fixed-0.5ms": ("explicit_euler", None, 0.5e-3, False),
    "rigid-tendons": (None, None, None, True),
}


def rigid_tendon_model(w, folder: Path) -> tuple[Path, list[str]]:
    """A copy of the walker's model (and metadata) with rigid tendons on every Millard muscle
    whose tendon slack / optimal fibre length < RIGID_BELOW; (path, names newly made rigid)."""
    tree = parse_osim(w.model)
    changed = []
    for m in tree.getroot().iter("Millard2012EquilibriumMuscle"):
        ratio = float(m.findtext("tendon_slack_length")) / float(m.findtext("optimal_fiber_length"))
        flag = m.find("ignore_tendon_compliance")  # stored as <...>true</...>, the last child
        if ratio >= RIGID_BELOW or (flag is not None and flag.text.strip() == "true"):
            continue
        if flag is None:
            flag = etree.SubElement(m, "ignore_tendon_compliance")
        flag.text = "true"
        changed.append(m.get("name"))
    path = folder / f"{w.name.replace('/', '-')}-rigid.osim"
    write_atomic(path, xml_bytes(tree))
    meta = json.loads(meta_path(w.model).read_text())
    for m in meta["muscles"]:
        m["rigid_tendon"] = m["rigid_tendon"] or m["name"] in changed
    write_atomic(meta_path(path), json.dumps(meta, indent=1).encode())
    return path, changed


def simulate(w, variant: str, duration: float, objective: Objective) -> dict:
    method, accuracy, step, rigid = VARIANTS[variant]
    model, meta = (w.rigid_model, w.rigid_meta) if rigid else (w.model, w.meta)
    sim = Simulator(model, meta=meta, integrator=method, accuracy=accuracy)
    if step is not None:
        sim.engine.manager.setIntegratorFixedStepSize(step)
    scenario = Scenario(speed=w.speed, duration=duration)
    with IntegratorLog() as log:
        run = scored_run(sim, scenario, w.params, objective)
    res, score, terms = run.result, run.score, run.terms
    t = res.simulated_time
    own_method, own_accuracy = integrator_settings(meta)
    physics = f"{method or own_method} " + (
        f"h={step * 1e3:g}ms" if step is not None else f"{accuracy or own_accuracy:g}"
    )
    return {
        "physics": physics,
        "t": t,
        "reason": res.reason or "none",
        "score": score,
        "terms": terms,
        "wall": res.wall_time / t if t > 0 else float("nan"),
        "steps": log.steps / t if log.steps is not None and t > 0 else float("nan"),
        "real": log.realizations / t if log.realizations is not None and t > 0 else float("nan"),
    }


def main(argv=None):
    ap = walker_arguments(__doc__.split("\n")[0], rounds=1)
    ap.add_argument(
        "--variants",
        nargs="+",
        choices=list(VARIANTS),
        default=list(VARIANTS),
        metavar="NAME",
        help=f"subset of {', '.join(VARIANTS)} (the baseline always runs: the wall ratios need it)",
    )
    args = parse_walker_arguments(ap, argv)
    variants = ["baseline"] + [v for v in VARIANTS if v in args.variants and v != "baseline"]
    import_opensim()
    objective = Objective.load(DEFAULT_OBJECTIVE)
    walkers = load_walkers(args.runs)
    print(machine(), flush=True)
    print(
        f"{args.duration:g} s per run, {args.rounds} interleaved round(s); wall: minimum over the "
        "rounds of (wall s / sim s) / the baseline's in the same round",
        flush=True,
    )
    tmp = Path(tempfile.mkdtemp(prefix="musclewalk-physics-"))
    try:
        for w in walkers:
            if "rigid-tendons" in variants:
                w.rigid_model, changed = rigid_tendon_model(w, tmp)
                w.rigid_meta = load_meta(w.rigid_model)
                print(
                    f"{w.name}: rigid-tendons adds {len(changed)} rigid tendons: {', '.join(changed) or '-'}",
                    flush=True,
                )
        for w in walkers:  # untimed: the first run in a process pays one-off costs
            simulate(w, "baseline", min(args.duration, 0.5), objective)
        rows = {(w.name, v): [] for w in walkers for v in variants}
        for k in range(args.rounds):
            for w in walkers:
                for v in variants:
                    r = simulate(w, v, args.duration, objective)
                    rows[w.name, v].append(r)
                    print(
                        f"  round {k + 1}/{args.rounds} {w.name} {v}: {r['t']:.2f} s "
                        f"{r['reason']}, {r['wall']:.2f} wall s/s",
                        file=sys.stderr,
                        flush=True,
                    )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report(walkers, variants, rows, objective, args.rounds)


def report(walkers, variants, rows, objective, rounds: int) -> None:
    names = objective.term_names
    head = (
        f"{'variant':19s} {'physics':30s} {'sim s':>6s} {'termination':>18s} {'score':>7s} "
        + " ".join(f"{n:>7s}" for n in names)
        + f" {'steps/s':>7s} {'real./s':>7s} {'wall':>5s}"
    )
    for w in walkers:
        base = rows[w.name, "baseline"]
        print(f"\n{w.name} (base s/s {min(r['wall'] for r in base):.2f})")
        print(head)
        print("-" * len(head))
        for v in variants:
            runs = rows[w.name, v]
            r = runs[0]
            ratio = min(x["wall"] / b["wall"] for x, b in zip(runs, base))
            same = all((x["score"], x["steps"]) == (r["score"], r["steps"]) for x in runs)
            print(
                f"{v:19s} {r['physics']:30s} {r['t']:6.2f} {r['reason']:>18s} {r['score']:7.2f} "
                + " ".join(f"{r['terms'][n]:7.2f}" for n in names)
                + f" {r['steps']:7.0f} {r['real']:7.0f} {ratio:5.2f}"
                + ("" if same else f"  (differs between the {rounds} rounds)")
            )


if __name__ == "__main__":
    main()
