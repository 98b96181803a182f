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
neck-tail-*    the neck-tail creatures (Ostrich, LongNeck, LongLegs; skipped for a walker without
               neck or tail segments), baseline physics, on the model of:
               inertia-x10: every neck, tail and head segment's inertia times 10;
               axial-inertia-x10: each segment's smallest diagonal moment (about its long axis)
               times 10, half of what it adds also about the two other axes (a ring around the
               long axis); segment-damping: each neck and tail spring's damping 2 sqrt(k I) for
               its 5 N m/rad on its child segment's own moment about the DOF's axis (the paper's
               "low-force critically damped spring" for the segment alone) instead of one value
               for all; twist-damping: the same on the twist DOFs (rotation about the long axis)
               alone; twist-locked: every twist DOF locked; spring-damping-x0.1: every neck and
               tail spring's damping times 0.1; fiber-damping-0: no fibre damping in the neck and
               tail muscles (on a model built with twist: 0 the twist variants change nothing)
max-step-*     SemiExplicitEuler2 at the model's accuracy with its step capped
               (Manager.setIntegratorMaximumStepSize)

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
import math
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
NECK_TAIL_ROLES = ("neck", "tail", "head")  # body roles of the neck-tail template
# name: (integrator or None = the model's, accuracy or None = the model's, fixed step s (negative:
#        the largest step of the error control), model edit or None = the model as it is)
VARIANTS = {
    "baseline": (None, None, None, None),
    "accuracy-2e-2": ("semi_explicit_euler2", 2e-2, None, None),
    "accuracy-5e-2": ("semi_explicit_euler2", 5e-2, None, None),
    "rk2": ("runge_kutta2", None, None, None),
    "rk3": ("runge_kutta3", None, None, None),
    "merson": ("runge_kutta_merson", None, None, None),
    "fixed-0.5ms": ("semi_explicit_euler2", None, 0.5e-3, None),
    "fixed-1ms": ("semi_explicit_euler2", None, 1e-3, None),
    "fixed-2ms": ("semi_explicit_euler2", None, 2e-3, None),
    "max-step-0.5ms": ("semi_explicit_euler2", None, -0.5e-3, None),
    "max-step-1ms": ("semi_explicit_euler2", None, -1e-3, None),
    "euler-fixed-0.25ms": ("explicit_euler", None, 0.25e-3, None),
    "euler-fixed-0.5ms": ("explicit_euler", None, 0.5e-3, None),
    "rigid-tendons": (None, None, None, "rigid_tendons"),
    "neck-tail-inertia-x10": (None, None, None, "neck_tail_inertia"),
    "neck-tail-axial-inertia-x10": (None, None, None, "neck_tail_axial_inertia"),
    "neck-tail-segment-damping": (None, None, None, "neck_tail_segment_damping"),
    "neck-tail-twist-locked": (None, None, None, "neck_tail_twist_locked"),
    "neck-tail-twist-damping": (None, None, None, "neck_tail_twist_damping"),
    "neck-tail-spring-damping-x0.1": (None, None, None, "neck_tail_spring_damping_tenth"),
    "neck-tail-fiber-damping-0": (None, None, None, "neck_tail_fiber_damping_zero"),
}


def rigid_tendons(tree, meta: dict) -> list[str]:
    """Rigid tendons on every Millard muscle whose tendon slack / optimal fibre length <
    RIGID_BELOW (tree and metadata edited in place); the names newly made rigid."""
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
    for m in meta["muscles"]:
        m["rigid_tendon"] = m["rigid_tendon"] or m["name"] in changed
    return changed


def _neck_tail_bodies(meta: dict) -> set[str]:
    """The neck, tail and head bodies of a neck-tail creature (none for a humanoid)."""
    if "neck_tail" not in meta.get("templates", {}).values():
        return set()
    return {b["name"] for b in meta["bodies"] if b["role"] in NECK_TAIL_ROLES}


def _scale_neck_tail_inertia(tree, meta: dict, axial_only: bool) -> list[str]:
    """Whole inertia x10, or 9 times the smallest diagonal moment (about the segment's long axis)
    added as a ring around that axis would add it: the full amount about the axis, half about
    each other one, so that the moments still obey the triangle inequality."""
    bodies = _neck_tail_bodies(meta)
    changed = []
    for body in tree.getroot().iter("Body"):
        if body.get("name") not in bodies:
            continue
        el = body.find("inertia")
        moments = [float(v) for v in el.text.split()]
        if axial_only:
            axial = moments[:3].index(min(moments[:3]))
            added = 9 * moments[axial]
            moments[:3] = [m + (added if i == axial else added / 2) for i, m in enumerate(moments[:3])]
        else:
            moments = [10 * m for m in moments]
        el.text = " ".join(repr(v) for v in moments)
        changed.append(body.get("name"))
    return changed


def neck_tail_inertia(tree, meta: dict) -> list[str]:
    return _scale_neck_tail_inertia(tree, meta, axial_only=False)


def neck_tail_axial_inertia(tree, meta: dict) -> list[str]:
    return _scale_neck_tail_inertia(tree, meta, axial_only=True)


def neck_tail_segment_damping(tree, meta: dict, twist_only: bool = False) -> list[str]:
    """Each neck and tail spring's damping 2 sqrt(k I), with I its child segment's moment about
    its own centre of mass and the DOF's axis (joint axes are segment axes in the neck-tail
    template): critical for the segment alone, less than critical for the chain it carries."""
    bodies = _neck_tail_bodies(meta)
    root = tree.getroot()
    inertia = {b.get("name"): [float(v) for v in b.findtext("inertia").split()] for b in root.iter("Body")}
    axis_of = {}  # coordinate -> (child body, axis index)
    for joint in root.iter("CustomJoint"):
        frames = {
            f.get("name"): f.findtext("socket_parent").split("/")[-1]
            for f in joint.iter("PhysicalOffsetFrame")
        }
        child = joint.findtext("socket_child_frame")
        child = frames.get(child, child)
        if child not in bodies:
            continue
        for axis in joint.iter("TransformAxis"):
            coords = (axis.findtext("coordinates") or "").split()
            if coords and axis.get("name").startswith("rotation"):
                direction = [abs(float(v)) for v in axis.findtext("axis").split()]
                axis_of[coords[0]] = (child, direction.index(max(direction)))
    changed = []
    for spring in root.iter("SpringGeneralizedForce"):
        coord = spring.findtext("coordinate")
        if coord not in axis_of:
            continue
        body, i = axis_of[coord]
        if twist_only and "_rotation_" not in coord:
            continue
        stiffness = float(spring.findtext("stiffness"))
        spring.find("viscosity").text = repr(2 * math.sqrt(stiffness * inertia[body][i]))
        changed.append(coord)
    return changed


def neck_tail_twist_damping(tree, meta: dict) -> list[str]:
    """neck_tail_segment_damping on the twist DOFs (rotation about the long axis) alone."""
    return neck_tail_segment_damping(tree, meta, twist_only=True)


def _neck_tail_coordinates(tree, meta: dict) -> list:
    """Coordinate elements of the joints whose child is a neck, tail or head body."""
    bodies = _neck_tail_bodies(meta)
    out = []
    for joint in tree.getroot().iter("CustomJoint"):
        frames = {
            f.get("name"): f.findtext("socket_parent").split("/")[-1]
            for f in joint.iter("PhysicalOffsetFrame")
        }
        child = joint.findtext("socket_child_frame")
        if frames.get(child, child) in bodies:
            out.extend(joint.iter("Coordinate"))
    return out


def neck_tail_twist_locked(tree, meta: dict) -> list[str]:
    """Every neck and tail joint's rotation about the segment's long axis locked at 0."""
    changed = []
    for c in _neck_tail_coordinates(tree, meta):
        if "_rotation_" in c.get("name"):
            c.find("locked").text = "true"
            changed.append(c.get("name"))
    return changed


def neck_tail_spring_damping_tenth(tree, meta: dict) -> list[str]:
    """A tenth of the damping of every neck and tail spring (0.4 -> 0.04 N m s/rad)."""
    names = {c.get("name") for c in _neck_tail_coordinates(tree, meta)}
    changed = []
    for spring in tree.getroot().iter("SpringGeneralizedForce"):
        if spring.findtext("coordinate") in names:
            el = spring.find("viscosity")
            el.text = repr(0.1 * float(el.text))
            changed.append(spring.findtext("coordinate"))
    return changed


def neck_tail_fiber_damping_zero(tree, meta: dict) -> list[str]:
    """No fibre damping in the neck and tail muscles (Millard's default 0.1 otherwise)."""
    if not _neck_tail_bodies(meta):
        return []
    chain = {m["name"] for m in meta["muscles"] if m["name"].startswith(("neck_", "tail_"))}
    changed = []
    for m in tree.getroot().iter("Millard2012EquilibriumMuscle"):
        if m.get("name") in chain:
            el = m.find("fiber_damping")
            if el is None:
                el = etree.SubElement(m, "fiber_damping")
            el.text = "0"
            changed.append(m.get("name"))
    return changed


MODEL_EDITS = {
    "neck_tail_twist_locked": neck_tail_twist_locked,
    "neck_tail_twist_damping": neck_tail_twist_damping,
    "neck_tail_spring_damping_tenth": neck_tail_spring_damping_tenth,
    "neck_tail_fiber_damping_zero": neck_tail_fiber_damping_zero,
    "rigid_tendons": rigid_tendons,
    "neck_tail_inertia": neck_tail_inertia,
    "neck_tail_axial_inertia": neck_tail_axial_inertia,
    "neck_tail_segment_damping": neck_tail_segment_damping,
}


def edited_model(w, edit: str, folder: Path) -> tuple[Path, list[str]]:
    """A copy of the walker's model (and metadata) with one of MODEL_EDITS; (path, what changed)."""
    tree = parse_osim(w.model)
    meta = json.loads(meta_path(w.model).read_text())
    changed = MODEL_EDITS[edit](tree, meta)
    path = folder / f"{w.name.replace('/', '-')}-{edit}.osim"
    write_atomic(path, xml_bytes(tree))
    write_atomic(meta_path(path), json.dumps(meta, indent=1).encode())
    return path, changed


def simulate(w, variant: str, duration: float, objective: Objective) -> dict:
    method, accuracy, step, edit = VARIANTS[variant]
    model, meta = w.edited[edit] if edit else (w.model, w.meta)
    sim = Simulator(model, meta=meta, integrator=method, accuracy=accuracy)
    if step is not None and step > 0:
        sim.engine.manager.setIntegratorFixedStepSize(step)
    elif step is not None:
        sim.engine.manager.setIntegratorMaximumStepSize(-step)
    scenario = Scenario(speed=w.speed, duration=duration)
    with IntegratorLog() as log:
        run = scored_run(sim, scenario, w.params, objective)
    res, score, terms = run.result, run.score, run.terms
    t = res.simulated_time
    own_method, own_accuracy, _ = integrator_settings(meta)
    physics = f"{method or own_method} " + (
        f"h={step * 1e3:g}ms"
        if step is not None and step > 0
        else f"{accuracy or own_accuracy:g}" + (f" h<={-step * 1e3:g}ms" if step else "")
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
        skip = set()  # (walker, variant) whose model edit changes nothing
        for w in walkers:
            w.edited = {}
            for v in variants:
                edit = VARIANTS[v][3]
                if edit is None:
                    continue
                path, changed = edited_model(w, edit, tmp)
                w.edited[edit] = (path, load_meta(path))
                print(f"{w.name}: {v} changes {len(changed)}: {', '.join(changed) or '-'}", flush=True)
                if not changed and v != "rigid-tendons":
                    skip.add((w.name, v))
        for w in walkers:  # untimed: the first run in a process pays one-off costs
            simulate(w, "baseline", min(args.duration, 0.5), objective)
        rows = {(w.name, v): [] for w in walkers for v in variants}
        for k in range(args.rounds):
            for w in walkers:
                for v in variants:
                    if (w.name, v) in skip:
                        continue
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
        f"{'variant':29s} {'physics':34s} {'sim s':>6s} {'termination':>18s} {'score':>7s} "
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
            if not runs:
                continue
            r = runs[0]
            ratio = min(x["wall"] / b["wall"] for x, b in zip(runs, base))
            same = all((x["score"], x["steps"]) == (r["score"], r["steps"]) for x in runs)
            print(
                f"{v:29s} {r['physics']:34s} {r['t']:6.2f} {r['reason']:>18s} {r['score']:7.2f} "
                + " ".join(f"{r['terms'][n]:7.2f}" for n in names)
                + f" {r['steps']:7.0f} {r['real']:7.0f} {ratio:5.2f}"
                + ("" if same else f"  (differs between the {rounds} rounds)")
            )


if __name__ == "__main__":
    main()
