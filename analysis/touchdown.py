"""How each foot lands: at every foot strike after 2 s of a run re-simulated from its folder
(10 s by default), the velocity of each foot contact sphere's centre in the last sample before
the strike (forward along the centre of mass' horizontal velocity, and down; m/s) and the largest
raw vertical GRF in the 40 ms after the strike (body weights); mean and range per side, and the
sphere that lands first (the lowest in that sample).

    python3.11 analysis/touchdown.py RUN_DIR [RUN_DIR ...] [--duration S] [--work DIR]

A person's heel meets the ground at about 0.1-0.3 m/s down and under about 1 m/s forward, after
the hamstrings have slowed the swinging leg (Winter 1992, "Foot trajectory in human gait"); the
heel-strike transient in walking stays well under a body weight above the loading curve.

A second table gives the leg at the strike: the time the foot was in the air since its last foot
off, the knee's flexion and how far the sphere that lands first is ahead of the centre of mass
along the walking direction. A person at about 1.3 m/s swings each foot for about 0.4 s
(40 % of a 1.0-1.1 s stride) and strikes with the knee nearly extended (about 0-5 deg), the heel
about 0.3 m ahead of the centre of mass (Perry & Burnfield 2010, "Gait Analysis", ch. 2-3;
Winter 1991, "The biomechanics and motor control of human gait").
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from committed_comparison import simulate_run  # noqa: E402

from musclewalk.analysis import gait  # noqa: E402
from musclewalk.sim.outputs import read_storage  # noqa: E402

AFTER = 2.0  # s: strikes before are the start's
IMPACT_WINDOW = 0.04  # s after a strike


def landings(sim_dir: Path, model_path: Path) -> dict:
    """side -> list of {t, peak_bw, first, velocity: sphere -> (forward, down), air, knee, ahead}:
    ``air`` the s since the foot's last foot off (None before the first), ``knee`` the knee flexion
    in degrees (None for a model without a ``knee_angle_<side>`` coordinate), ``ahead`` the sphere that
    lands first (the lowest) ahead of the centre of mass along the walking direction, m."""
    import opensim as osim

    trial = gait.from_simulation(sim_dir, kinetics=False)
    model = osim.Model(str(model_path))
    state = model.initSystem()
    states = read_storage(sim_dir / "states.sto")
    time = states["time"].to_numpy(float)
    poses = gait.coordinate_rows(model, states, False, sim_dir / "states.sto", speeds=True)
    spheres = {}
    geometry = model.getContactGeometrySet()
    for i in range(geometry.getSize()):
        sphere = osim.ContactSphere.safeDownCast(geometry.get(i))
        if sphere is not None:
            spheres[sphere.getName()] = sphere
    if model.getConstraintSet().getSize():
        raise SystemExit(f"{model_path}: a model with constraints (this script sets coordinates freely)")
    weight = trial.body_mass * gait.GRAVITY
    out = {}
    coordinates = model.getCoordinateSet()
    for side in ("r", "l"):
        strikes, offs = gait.foot_events(trial.grf_time, trial.vgrf[side], trial.body_mass)
        knee = coordinates.get(f"knee_angle_{side}") if coordinates.contains(f"knee_angle_{side}") else None
        rows = []
        for t_strike in strikes[strikes > AFTER]:
            # the last sample in the air: at the strike sample the foot already carries load
            k = max(min(int(np.searchsorted(time, t_strike)), len(time)) - 1, 0)
            poses.pose(state, k)
            model.realizeVelocity(state)
            forward = model.calcMassCenterVelocity(state).to_numpy()
            forward[1] = 0.0
            forward /= max(np.linalg.norm(forward), 1e-9)  # the walking direction at the strike
            com = model.calcMassCenterPosition(state).to_numpy()
            velocity, height, position = {}, {}, {}
            for name, sphere in spheres.items():
                if not name.endswith(f"_{side}"):
                    continue
                frame, location = sphere.getFrame(), sphere.get_location()
                v = frame.findStationVelocityInGround(state, location).to_numpy()
                p = frame.findStationLocationInGround(state, location).to_numpy()
                velocity[name] = (float(v @ forward), float(-v[1]))
                height[name] = float(p[1] - sphere.getRadius())
                position[name] = p
            before = offs[offs < t_strike]
            window = (trial.grf_time >= t_strike) & (trial.grf_time <= t_strike + IMPACT_WINDOW)
            rows.append(
                {
                    "t": float(t_strike),
                    "peak_bw": float(trial.vgrf[side][window].max() / weight),
                    "first": (first := min(height, key=height.get)),
                    "velocity": velocity,
                    "air": float(t_strike - before[-1]) if len(before) else None,
                    "knee": float(np.degrees(knee.getValue(state))) if knee is not None else None,
                    "ahead": float((position[first] - com) @ forward),
                }
            )
        out[side] = rows
    return out


def summary(name: str, found: dict) -> str:
    lines = [
        f"{name}: foot strikes after {AFTER:g} s; sphere centre velocity at the strike, m/s "
        "(mean, min-max), and the largest raw vertical GRF in the 40 ms after it",
        "",
        "| side | strikes | lands first | sphere | forward | down | vGRF peak, BW |",
        "|---|---|---|---|---|---|---|",
    ]
    for side, rows in found.items():
        if not rows:
            continue
        firsts = [r["first"] for r in rows]
        first = max(set(firsts), key=firsts.count)
        peaks = _spread([r["peak_bw"] for r in rows])
        for sphere in sorted(rows[0]["velocity"]):
            fwd = _spread([r["velocity"][sphere][0] for r in rows])
            down = _spread([r["velocity"][sphere][1] for r in rows])
            lines.append(
                f"| {side} | {len(rows)} | {first} ({firsts.count(first)} of {len(rows)}) | {sphere} | "
                f"{fwd} | {down} | {peaks} |"
            )
    lines += [
        "",
        "| side | strikes | in the air before it, s | knee flexion at the strike, ° "
        "| the first sphere ahead of the centre of mass, m |",
        "|---|---|---|---|---|",
    ]
    for side, rows in found.items():
        if rows:
            lines.append(
                f"| {side} | {len(rows)} | {_spread([r['air'] for r in rows])} | "
                f"{_spread([r['knee'] for r in rows], 1)} | {_spread([r['ahead'] for r in rows])} |"
            )
    return "\n".join(lines) + "\n"


def _spread(values, digits: int = 2) -> str:
    """'mean (min-max)' of the values that are known, '—' when none is."""
    known = np.array([v for v in values if v is not None], float)
    if not known.size:
        return "—"
    return f"{known.mean():.{digits}f} ({known.min():.{digits}f}-{known.max():.{digits}f})"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", type=Path, nargs="+", help="run folders (best.json + optimized.osim)")
    ap.add_argument("--duration", type=float, default=10.0, help="simulated time, s (default 10)")
    ap.add_argument("--work", type=Path, help="keep the simulations here (default: a temp folder)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="musclewalk-touchdown-") as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        for run in args.runs:
            sim = simulate_run(run, work, args.duration)
            print(summary(str(run), landings(sim, run / "optimized.osim")), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
