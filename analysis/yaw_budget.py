"""Where a walker's turning comes from: the whole body's angular momentum about the vertical axis
through its centre of mass, and the ground's moment about that axis foot by foot, stance by stance,
of a `musclewalk simulate` folder.

    musclewalk simulate RUN/optimized.osim --params RUN/best.json --duration 2 --out s/
    python3.11 analysis/yaw_budget.py s/ [s2/ ...] [--out FILE.md]

Only external forces change the whole body's angular momentum: here the ground reaction forces
(gravity acts at the centre of mass; a balance aid's torque, if the run had one, is not counted,
and the line "change of L against the ground's moment" then shows it; the forces are sampled every
5 ms control step, so a hard landing's impulse is only approximated). The ground's moment about
the vertical through the centre of mass is that of each foot's force at its centre of pressure
(grf.mot) plus its free moment: a fore-aft force at a foot beside the centre of mass, or a sideways
force at a foot ahead of or behind it, turns the body. A stance whose ground moment has the same
sign as the one before turns the body further the same way; in a straight gait they alternate
and cancel. Positive is a turn to the left (the heading convention of musclewalk/control).

Why: every aided walker of the balance-aid runs for the Table 4 creatures ends by the heading rule
once its aid is taken away (analysis/aid_dependence.py), and stiffer passive hip and ankle
rotation springs do not change that: the yaw is the whole body's, not a twist between segments.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

import musclewalk  # noqa: F401  (pins numpy's CPU dispatch before numpy loads)
from musclewalk.analysis import gait
from musclewalk.opensim_env import import_opensim
from musclewalk.sim.outputs import read_storage


def yaw_budget(sim_dir: Path) -> dict:
    """{time, L (whole-body angular momentum about the vertical through the centre of mass, kg m²/s),
    moment: side -> the ground's moment of that foot about the same axis (N m), stances: [{side,
    start, end, impulse (N m s)}], mass, model}."""
    osim = import_opensim()
    summary = json.loads((sim_dir / "summary.json").read_text())
    trial = gait.from_simulation(sim_dir, kinetics=False)
    model = osim.Model(str(summary["model"]))
    state = model.initSystem()
    states = read_storage(sim_dir / "states.sto")
    time = states["time"].to_numpy(float)
    poses = gait.coordinate_rows(model, states, False, sim_dir / "states.sto", speeds=True)
    com = np.empty((len(time), 3))
    momentum = np.empty(len(time))
    mass = model.getTotalMass(state)
    for k in range(len(time)):
        poses.pose(state, k)
        model.realizeVelocity(state)
        c = model.calcMassCenterPosition(state).to_numpy()
        v = model.calcMassCenterVelocity(state).to_numpy()
        about_origin = model.getMatterSubsystem().calcSystemMomentumAboutGroundOrigin(state)
        com[k] = c
        momentum[k] = about_origin.get(0).get(1) - np.cross(c, mass * v)[1]
    grf = read_storage(sim_dir / "grf.mot")
    grf_time = grf["time"].to_numpy(float)
    com_at_grf = np.column_stack([np.interp(grf_time, time, com[:, i]) for i in range(3)])
    moment = {}
    for side in ("r", "l"):
        prefix = f"ground_force_{side}_"
        force = np.column_stack([grf[f"{prefix}v{a}"].to_numpy(float) for a in "xyz"])
        point = np.column_stack([grf[f"{prefix}p{a}"].to_numpy(float) for a in "xyz"])
        free = grf[f"ground_torque_{side}_y"].to_numpy(float)
        moment[side] = np.cross(point - com_at_grf, force)[:, 1] + free
    stances = []
    for side in ("r", "l"):
        strikes, offs = gait.foot_events(trial.grf_time, trial.vgrf[side], trial.body_mass)
        loaded = trial.vgrf[side][0] > gait.CONTACT_ON * trial.body_mass * gait.GRAVITY
        starts = ([grf_time[0]] if loaded else []) + list(strikes)
        for start in starts:
            later = offs[offs > start]
            end = float(later[0]) if len(later) else float(grf_time[-1])
            window = (grf_time >= start) & (grf_time <= end)
            impulse = float(np.trapezoid(moment[side][window], grf_time[window])) if window.sum() > 1 else 0.0
            stances.append({"side": side, "start": float(start), "end": end, "impulse": impulse})
    stances.sort(key=lambda s: s["start"])
    return {
        "time": time,
        "L": momentum,
        "grf_time": grf_time,
        "moment": moment,
        "stances": stances,
        "mass": mass,
        "model": summary["model"],
    }


def report(sim_dir: Path, budget: dict) -> str:
    time, L = budget["time"], budget["L"]
    total = budget["moment"]["r"] + budget["moment"]["l"]
    ground = float(np.trapezoid(total, budget["grf_time"]))
    lines = [
        f"{sim_dir}: {budget['model']}, {time[-1]:.2f} s",
        "",
        f"- whole-body angular momentum about the vertical through the centre of mass, kg m²/s: "
        f"{L[0]:+.2f} at the start, {L[-1]:+.2f} at the end (largest |L| {np.abs(L).max():.2f})",
        f"- change of L against the ground's moment integrated over the run: {L[-1] - L[0]:+.2f} / "
        f"{ground:+.2f}",
        "",
        "| side | stance from, s | to, s | the ground's yaw impulse at that foot, N m s |",
        "|---|---|---|---|",
    ]
    for s in budget["stances"]:
        lines.append(f"| {s['side']} | {s['start']:.3f} | {s['end']:.3f} | {s['impulse']:+.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sims", nargs="+", type=Path, help="`musclewalk simulate` output folders")
    ap.add_argument("--out", type=Path, help="write the report here (default: print it)")
    args = ap.parse_args(argv)
    for sim in args.sims:
        for name in ("summary.json", "states.sto", "grf.mot"):
            if not (sim / name).is_file():
                ap.error(f"{sim / name}: not found (a `musclewalk simulate` folder has it)")
    text = "\n".join(report(sim, yaw_budget(sim)) for sim in args.sims)
    if args.out:
        tmp = args.out.with_name(args.out.name + ".tmp")
        tmp.write_text(text)
        tmp.replace(args.out)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
