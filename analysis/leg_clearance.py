"""How close the legs pass each other, against the self-collision termination rule (§5; here the
closest distance between a lower-leg or foot segment of one leg and one of the other leg, each
segment the line between its body's origin and the next body's, below
musclewalk.sim.termination.LEG_CLEARANCE, 4 cm; the segments are its leg_segments): for a
`musclewalk simulate` folder, per swing of each leg (its FSM swing and stance preparation in
controller.csv) after --after s, the smallest distance between that leg's segments and the other
leg's, and which pair it was; then the smallest and the median over the swings.

    musclewalk simulate MODEL --params P.json --speed 2 --duration 20 --turn-rate 1 --seed 2 --out s/
    python3.11 analysis/leg_clearance.py s/ [s2/ ...] [--after 2] [--out FILE.md]

A gait whose swing foot passes within a few millimetres of the rule every step falls to it as
soon as something (a turn, a push) moves the feet closer: the walker does not step wide enough.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

import musclewalk  # noqa: F401  (pins numpy's CPU dispatch before numpy loads)
from musclewalk.analysis import gait
from musclewalk.model.meta import load_meta
from musclewalk.opensim_env import import_opensim
from musclewalk.sim.outputs import read_storage
from musclewalk.sim.termination import LEG_CLEARANCE, leg_segments, segment_distance

SWING_STATES = ("swing", "stance_preparation")


def segment_pairs(segments) -> dict[str, tuple]:
    """'<right segment>-<left segment>' -> (right start, right end, left start, left end) bodies."""
    return {f"{a}_r-{b}_l": (a0, a1, b0, b1) for a, a0, a1 in segments["r"] for b, b0, b1 in segments["l"]}


def pair_distances(positions: dict[str, np.ndarray], segments) -> dict[str, float]:
    """'<right segment>-<left segment>' -> closest distance (m) for one pose; ``positions``: body
    name -> (3,) position in ground."""
    return {
        name: segment_distance(*(positions[body] for body in bodies))
        for name, bodies in segment_pairs(segments).items()
    }


def swings(states: pd.Series) -> list[tuple[int, int]]:
    """(first, last) row of each run of swing or stance-preparation rows of one leg."""
    inside = states.isin(SWING_STATES).to_numpy()
    out, start = [], None
    for i, flag in enumerate(inside):
        if flag and start is None:
            start = i
        elif not flag and start is not None:
            out.append((start, i - 1))
            start = None
    if start is not None:
        out.append((start, len(inside) - 1))
    return out


def per_swing_minima(distances: pd.DataFrame, leg_states: pd.DataFrame, after: float) -> pd.DataFrame:
    """One row per swing after ``after`` s: leg, start time, smallest distance and its pair.
    ``distances``: a ``time`` column and one column per segment pair, on the rows of
    ``leg_states`` (columns ``state_r``, ``state_l``)."""
    pairs = [c for c in distances.columns if c != "time"]
    rows = []
    for side in ("r", "l"):
        for first, last in swings(leg_states[f"state_{side}"]):
            if distances["time"].iloc[first] < after:
                continue
            window = distances.iloc[first : last + 1][pairs]
            column = window.min().idxmin()
            rows.append(
                {
                    "leg": side,
                    "start_s": float(distances["time"].iloc[first]),
                    "min_m": float(window[column].min()),
                    "pair": column,
                }
            )
    return pd.DataFrame(rows, columns=["leg", "start_s", "min_m", "pair"])


def clearance(sim_dir: Path, after: float = 0.0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(distances per output sample, leg states) of a simulation folder; samples before ``after``
    s are not posed (their distances NaN: no swing kept by `per_swing_minima` reaches them)."""
    osim = import_opensim()
    summary = json.loads((sim_dir / "summary.json").read_text())
    model_path = Path(summary["model"])
    meta = load_meta(model_path)
    segments = leg_segments(meta)
    bodies = sorted({b for side in segments.values() for _, b0, b1 in side for b in (b0, b1)})
    model = osim.Model(str(model_path))
    state = model.initSystem()
    kinematics = read_storage(sim_dir / "kinematics.mot")
    poses = gait.coordinate_rows(model, kinematics, True, sim_dir / "kinematics.mot")
    controller = pd.read_csv(sim_dir / "controller.csv", usecols=["t", "state_r", "state_l"])
    time = kinematics["time"].to_numpy(float)
    # the controller logs every control step, the kinematics every output step: match by time
    rows = np.searchsorted(controller["t"].to_numpy(float), time - 1e-9)
    rows = np.clip(rows, 0, len(controller) - 1)
    handles = {b: model.getBodySet().get(b) for b in bodies}
    out = []
    not_posed = dict.fromkeys(segment_pairs(segments), np.nan)
    for k in range(len(time)):
        if time[k] < after:
            out.append({"time": float(time[k]), **not_posed})
            continue
        poses.pose(state, k)
        model.realizePosition(state)
        positions = {b: np.array(h.getPositionInGround(state).to_numpy()) for b, h in handles.items()}
        out.append({"time": float(time[k]), **pair_distances(positions, segments)})
    return pd.DataFrame(out), controller.iloc[rows].reset_index(drop=True)


def report(name: str, minima: pd.DataFrame) -> str:
    lines = [f"{name}: the legs' closest pass per swing (rule: {100 * LEG_CLEARANCE:.0f} cm)", ""]
    if minima.empty:
        return "\n".join(lines + ["no swing after the window's start"])
    lines += ["| leg | swings | smallest, cm (at s, pair) | median, cm | swings within 1 cm of the rule |"]
    lines += ["|---|---|---|---|---|"]
    for side in ("r", "l"):
        m = minima[minima["leg"] == side]
        if m.empty:
            continue
        worst = m.loc[m["min_m"].idxmin()]
        close = int((m["min_m"] < LEG_CLEARANCE + 0.01).sum())
        lines.append(
            f"| {side} | {len(m)} | {100 * worst['min_m']:.1f} ({worst['start_s']:.2f}, {worst['pair']}) | "
            f"{100 * m['min_m'].median():.1f} | {close} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sims", nargs="+", type=Path, help="`musclewalk simulate` output folders")
    ap.add_argument("--after", type=float, default=2.0, help="swings starting before are left out (s)")
    ap.add_argument("--out", type=Path, help="also write the tables to this markdown file")
    args = ap.parse_args(argv)
    tables = []
    for sim in args.sims:
        if not (sim / "summary.json").exists():
            ap.error(f"{sim}: not a `musclewalk simulate` folder (no summary.json)")
        distances, states = clearance(sim, args.after)
        tables.append(report(str(sim), per_swing_minima(distances, states, args.after)))
    text = "\n\n".join(tables) + "\n"
    print(text, end="")
    if args.out:
        tmp = args.out.with_name(args.out.name + ".tmp")
        tmp.write_text(text)
        tmp.replace(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
