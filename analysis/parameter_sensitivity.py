"""How marginal a committed walker is in its own parameters: the run's controller and initial-state
values moved all at once by a random sign times epsilon times each parameter's range, and how long
the walker then walks (the paper's termination rules, straight and flat, the run's speed).

    python3.11 analysis/parameter_sensitivity.py RUN_DIR [--epsilon 1e-9 1e-6 1e-3] [--seeds 5]
                                                 [--duration 10] [--fixed-step S] [--out FILE.md]
                                                 [--group NAME ...] [--work DIR]

A walker whose survival drops at epsilon 1e-9 is chaotic at the scale of rounding: no optimizer
step, continuation or other machine (see the README's "The same bits on every machine") keeps its
gait, and the search around it sees mostly falls. Seed k draws the signs; epsilon 0 is the walker
as committed. --fixed-step simulates on a fixed integrator step of S seconds instead of the
model's own physics (0: error-controlled steps; README "Smooth in the parameters"). --group moves
only the parameters of those groups of the space (Table 1: state_transition, target_features,
feedback, constant_excitation, initial_state), one table per group, to tell which
part of a walker is the knife-edge a search at a given sigma falls off.

--work keeps each probe: DIR/[GROUP-]eps<EPSILON>-seed<K>/ holds its recorded simulation (the
files of `musclewalk simulate`: controller.csv, kinematics.mot, ..., to read why it fell) and
params.json, the run's best.json with the moved values, which re-simulates the probe on its own:
`musclewalk simulate RUN/optimized.osim --params DIR/.../params.json --duration D --out SIM`
(with `--fixed-step S` when the probes had it; its summary.json records the integrator's step).
Recording does not change a run: the times walked are the same with and without it.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

from run_folders import emit, require_run_folder, write_whole

import musclewalk  # noqa: F401  (pins numpy's CPU dispatch before numpy loads)
from musclewalk.optimize.space import ParameterSpace
from musclewalk.sim.engine import FIXED_STEP_OVERRIDE, is_fixed_step_override
from musclewalk.sim.outputs import run_settings, write_outputs
from musclewalk.sim.runner import Simulator
from musclewalk.sim.scenario import Scenario


class Walked(float):
    """The time one probe walked, s, with the termination rule that ended it (None: it ran on)."""

    reason: str | None

    def __new__(cls, time: float, reason: str | None = None):
        walked = super().__new__(cls, time)
        walked.reason = reason
        return walked

    def __str__(self) -> str:
        return f"{float(self):.2f}" + (f" ({self.reason})" if self.reason else "")


def walked_full(times, duration: float) -> int:
    """How many of the times walked reach the full ``duration``."""
    return sum(t >= duration - 1e-9 for t in times)


def fall_reasons(times) -> str:
    """The termination rules that ended the probes that fell, counted: "com_height 2, leg_crossing 1"."""
    counts = Counter(t.reason for t in times if getattr(t, "reason", None))
    return ", ".join(f"{reason} {n}" for reason, n in sorted(counts.items()))


def perturbed(values: dict, bounds: dict, epsilon: float, seed: int) -> dict:
    """``values`` moved by +-epsilon x range (signs from ``seed``), kept within the bounds."""
    rng = random.Random(seed)
    out = dict(values)
    for name in sorted(values):
        if name not in bounds or epsilon == 0.0:
            continue
        lower, upper = bounds[name]
        step = rng.choice((-1.0, 1.0)) * epsilon * (upper - lower)
        out[name] = float(min(max(values[name] + step, lower), upper))
    return out


def moved_bounds(space: ParameterSpace, values: dict, group: str | None = None) -> dict:
    """The (lower, upper) bounds of the values a probe moves: every one, or those of one group."""
    return {
        e.name: (e.lower, e.upper)
        for e in space.entries
        if e.name in values and (group is None or e.group == group)
    }


def check_groups(ap, run: Path, groups) -> None:
    """One error naming the groups that have no controller or initial-state value in ``run``."""
    best = json.loads((run / "best.json").read_text())["parameters"]
    values = {**best["controller"], **best["initial_state"]}
    space = ParameterSpace.of_creature(str(run / "optimized.osim"))
    known = sorted({e.group for e in space.entries if e.name in values})
    empty = [g for g in groups if not moved_bounds(space, values, g)]
    if empty:
        ap.error(
            f"--group {' '.join(empty)}: no value of {run / 'best.json'} in it (groups: {', '.join(known)})"
        )


def probe_folder(work: Path, epsilon: float, seed: int, group: str | None = None) -> Path:
    """Where --work keeps the probe of ``epsilon`` and ``seed`` (and ``group``)."""
    return work / f"{group + '-' if group else ''}eps{epsilon:g}-seed{seed}"


def probe_parameters(best: dict, moved: dict, run: Path, epsilon: float, seed: int, group) -> dict:
    """``best`` (a run's best.json) with the probe's ``moved`` values in its controller and
    initial state, and what moved them; its recorded objective belongs to the run, not the probe."""
    params = best["parameters"]
    out = dict(best)
    out["parameters"] = {
        **params,
        "controller": {k: moved[k] for k in params["controller"]},
        "initial_state": {k: moved[k] for k in params["initial_state"]},
    }
    out["probe"] = {
        "run": str(run),
        "epsilon": epsilon,
        "seed": seed,
        "group": group,
        "note": "the run's values moved by parameter_sensitivity.py; objective and terms are the run's",
    }
    return out


def keep_probe(folder: Path, sim, result, scenario, params: dict) -> None:
    """The probe's recorded simulation and its params.json, each written whole or not at all."""
    settings = run_settings(
        scenario,
        folder / "params.json",
        integrator_accuracy=sim.engine.accuracy,
        integrator_fixed_step=sim.engine.fixed_step,
    )
    write_outputs(folder, sim, result, scenario, settings)
    write_whole(json.dumps(params, indent=1) + "\n", folder / "params.json")


def survival(
    run: Path,
    epsilons,
    seeds: int,
    duration: float,
    fixed_step: float | None = None,
    group: str | None = None,
    work: Path | None = None,
) -> dict:
    """{epsilon: [Walked per seed]}; ``work``: keep each probe there (probe_folder)."""
    best = json.loads((run / "best.json").read_text())
    params = best["parameters"]
    values = {**params["controller"], **params["initial_state"]}
    bounds = moved_bounds(ParameterSpace.of_creature(str(run / "optimized.osim")), values, group)
    sim = Simulator(run / "optimized.osim", fixed_step=fixed_step)
    scenario = Scenario(speed=best["speed"], duration=duration)
    table = {}
    for epsilon in epsilons:
        times = []
        for seed in range(1, (1 if epsilon == 0.0 else seeds) + 1):
            moved = perturbed(values, bounds, epsilon, seed)
            result = sim.run(scenario, moved, record=work is not None)
            if work is not None:
                kept = probe_parameters(best, moved, run, epsilon, seed, group)
                keep_probe(probe_folder(work, epsilon, seed, group), sim, result, scenario, kept)
            reason = result.reason if result.terminated else None
            times.append(Walked(result.simulated_time, reason))
        table[epsilon] = times
        print(f"epsilon {epsilon:g}: " + ", ".join(map(str, times)), flush=True)
    return table


def markdown(
    run: Path, table: dict, duration: float, fixed_step: float | None = None, group: str | None = None
) -> str:
    steps = (
        ""
        if fixed_step is None
        else f", on a fixed {fixed_step * 1e3:g} ms step"
        if fixed_step
        else ", on error-controlled steps"
    )
    moved = "controller and initial state" if group is None else f"the {group} parameters"
    lines = [
        f"{run}: {moved} moved by ±epsilon × each range (random signs per seed), "
        f"{duration:g} s straight at the run's speed{steps}",
        "",
        "| epsilon | walks the full time | time walked per seed, s (the rule that ended a fall) |",
        "|---|---|---|",
    ]
    for epsilon, times in table.items():
        full = walked_full(times, duration)
        lines.append(f"| {epsilon:g} | {full} of {len(times)} | {', '.join(map(str, times))} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path, help="run folder (best.json + optimized.osim)")
    ap.add_argument("--epsilon", type=float, nargs="+", default=[0.0, 1e-12, 1e-9, 1e-6, 1e-3])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument(
        "--fixed-step", type=float, metavar="S", help="fixed integrator step, s (default: the model's)"
    )
    ap.add_argument("--out", type=Path, help="also write the table to this Markdown file")
    ap.add_argument(
        "--group", nargs="+", metavar="NAME", help="move only these parameter groups, one table each"
    )
    ap.add_argument("--work", type=Path, help="keep each probe's simulation and parameters here")
    args = ap.parse_args(argv)
    if args.seeds < 1 or args.duration <= 0 or any(e < 0 for e in args.epsilon):
        ap.error("--seeds >= 1, --duration > 0 and --epsilon >= 0")
    if args.fixed_step is not None and not is_fixed_step_override(args.fixed_step):
        ap.error(f"--fixed-step: {FIXED_STEP_OVERRIDE}")
    require_run_folder(ap, args.run)
    if args.group:
        check_groups(ap, args.run, args.group)
    texts = []
    for group in args.group or [None]:
        if group is not None:
            print(f"group {group}", flush=True)
        table = survival(args.run, args.epsilon, args.seeds, args.duration, args.fixed_step, group, args.work)
        texts.append(markdown(args.run, table, args.duration, args.fixed_step, group))
    emit("\n".join(texts), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
