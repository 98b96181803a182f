"""What an aided walker owes its balance aid: each run folder of a balance-aid stage (a task with an
``assist`` section: an experiment's aid_steps, config/experiments/tasks/aid.yaml) re-simulated
straight on flat ground at the stage's speed under its own aid, the same aid with the heading
left free (``hold_heading: false``), half of it, and none, with the stance trunk gains of eq. 21
that the aid can stand in for and the largest heading error of the trunk (the target heading is 0) each
run reaches, and, for a best that starts at another speed, once more under its own aid started
at the target speed (``init.forward_speed`` 1, the initial state's speed as a fraction of the
target; the bound is 1.5); every run under the
paper's termination rules (a stage whose task tightened the
heading rule, ``termination.max_heading_error``, is held to 45 degrees here: the column says
whether it kept within its own limit).

    python3.11 analysis/aid_dependence.py STAGE_DIR [STAGE_DIR ...] [--duration 5] [--out FILE.md]

Why: the aidsteps runs found 5 s walkers at every step of their aid down to 0.03-0.18 of it, and
each fell within about 1 s without it; re-simulated under its own aid with the heading free each
fell about as soon, and the HumanLegs runs had let the trunk gains wither to 0.01-0.09 (the
defaults: kq 2.0, kw 0.5). A stage whose best keeps walking without the yaw hold and with half
its aid is ready for the next step; one that needs all of it is a gait the aid holds up. And
every aided best of the LongLegs', Ostrich's and LongNeck's runs started at 1.1-1.5 of its target
speed (the committed walkers: 0.92-1.08): under the bootstrap objective's progress term a fast
start is free distance, and one that falls once started at the target speed coasted on it.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

from run_folders import runs_parser, tables_of_runs

import musclewalk  # noqa: F401  (pins numpy's CPU dispatch before numpy loads)
from musclewalk.control.rotations import heading_of, wrap_angle
from musclewalk.optimize.task import TaskError, scored_conditions
from musclewalk.sim.runner import Simulator
from musclewalk.sim.scenario import Assist, Scenario


def stage_aid(run: Path) -> tuple[Assist, float]:
    """(the aid of the task the stage's best was scored under, its speed); no aid: Assist()."""
    scored = scored_conditions(run / "best.json")
    return scored.task.assist or Assist(), scored.speed


def variants(aid: Assist) -> list[tuple[str, Assist | None]]:
    """The aids to walk under: its own, the heading free (when it holds it), half, none."""
    out = [("its aid", aid if aid else None)]
    if aid.upright > 0 and aid.hold_heading:
        out.append(("its aid, heading free", replace(aid, hold_heading=False)))
    if aid:
        out.append(("half its aid", replace(aid, upright=aid.upright / 2, support=aid.support / 2)))
        out.append(("no aid", None))
    return out


class HeadingTrace:
    """An observer of Simulator.run: the largest heading error of the trunk (target heading 0)."""

    def __init__(self, trunk: int):
        self.trunk, self.largest_error = trunk, 0.0

    def __call__(self, sensors, *_):
        error = abs(wrap_angle(heading_of(sensors.body_R[self.trunk])))
        self.largest_error = max(self.largest_error, error)


def table(run: Path, duration: float) -> str:
    aid, speed = stage_aid(run)
    best = json.loads((run / "best.json").read_text())
    params = best["parameters"]
    controller = params["controller"]
    sim = Simulator(run / "optimized.osim")
    trunk = sim.rules.trunk
    lines = [
        f"{run}: {aid.describe() if aid else 'no aid'}; {speed:g} m/s, {duration:g} s straight; "
        f"stance trunk gains kq {controller['gain.trunk.kq']:.2f}, kw {controller['gain.trunk.kw']:.2f}, "
        f"theta0 {controller['trunk.theta0']:.2f} rad; starts at "
        f"{params['initial_state']['init.forward_speed']:.2f} of the target speed (init.forward_speed)",
        "",
        "| aid | upright, M g L per rad | support, body weight | stays up, s | ended by | distance, m "
        "| speed, m/s | largest heading error, deg |",
        "|---|---|---|---|---|---|---|---|",
    ]
    values = {**controller, **params["initial_state"]}
    rows = [(name, assist, values) for name, assist in variants(aid)]
    if values["init.forward_speed"] != 1.0:
        rows.append(
            (
                "its aid, started at the target speed",
                aid if aid else None,
                {**values, "init.forward_speed": 1.0},
            )
        )
    for name, assist, run_values in rows:
        scenario = Scenario(speed=speed, duration=duration, assist=assist)
        heading = HeadingTrace(trunk)
        result = sim.run(scenario, run_values, observers=[heading])
        largest = math.degrees(heading.largest_error)
        summary = result.summary(scenario)
        upright = ""
        if assist is not None:
            upright = f"{assist.upright:g}" + ("" if assist.hold_heading else " (no yaw)")
        support = "" if assist is None else f"{assist.support:g}"
        lines.append(
            f"| {name} | {upright} | {support} | {result.simulated_time:.2f} | "
            f"{result.reason or 'walked'} | {summary['distance']:.2f} | {summary['mean_forward_speed']:.2f} "
            f"| {largest:.1f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = runs_parser(__doc__.splitlines()[0], "stage folders of balance-aid runs")
    ap.add_argument("--duration", type=float, default=5.0, help="s (default 5, the aid stages' t_max)")
    args = ap.parse_args(argv)
    if args.duration <= 0:
        ap.error("--duration: expected > 0")
    for run in args.runs:
        try:
            scored = scored_conditions(run / "best.json")
        except TaskError as exc:
            ap.error(f"{exc} (an optimization stage's best.json, or its settings.json, keeps its task)")
        if not scored.task.assist:
            ap.error(f"{run / 'best.json'}: scored without a balance aid (task {scored.task.name})")
    return tables_of_runs(ap, args, lambda run, work: table(run, args.duration), "aid_dependence_")


if __name__ == "__main__":
    raise SystemExit(main())
