"""Where a gait's muscle work goes: each run folder re-simulated (its speed, 10 s by default) and,
after --after s, the mean power of the muscles' active fibres (positive, negative, net), of their
passive fibres (the elastic part returns what it stores, so over many strides the net is the
Millard fibre damping), the dissipation of the joints' passive spring-dampers (viscosity x speed^2
of each SpringGeneralizedForce) and the net power of the joint-limit forces. On level ground at
a steady speed the muscles' net fibre work equals what the passive elements take out, so the
remainder is the foot contact's (plus the small change of mechanical energy over the window).

    python3.11 analysis/energy_audit.py RUN_DIR [RUN_DIR ...] [--after 2] [--duration S]
                                        [--out FILE.md] [--work DIR]

The muscle rows are `musclewalk analyze`'s ``fibre_work`` (musclewalk.analysis.summary), taken
over the window. Positive fibre work costs metabolic energy (Wang et al. 2012: the work itself plus shortening
heat); work the passive elements absorb has to be done again by the fibres.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from lxml import etree

sys.path.insert(0, str(Path(__file__).resolve().parent))
from committed_comparison import simulate_run  # noqa: E402
from run_folders import runs_parser, tables_of_runs  # noqa: E402

from musclewalk.analysis.summary import fibre_work  # noqa: E402
from musclewalk.sim.outputs import read_storage  # noqa: E402


def coordinate_speeds(states: pd.DataFrame) -> dict[str, np.ndarray]:
    """Coordinate name -> speed column of a states table (…/<coordinate>/speed)."""
    return {c.split("/")[-2]: states[c].to_numpy() for c in states.columns if c.endswith("/speed")}


def spring_dampers(model: Path) -> dict[str, tuple[str, float]]:
    """SpringGeneralizedForce name -> (coordinate, viscosity) of a model file."""
    root = etree.parse(str(model)).getroot()
    out = {}
    for el in root.iter("SpringGeneralizedForce"):
        out[el.get("name")] = (el.findtext("coordinate").strip(), float(el.findtext("viscosity") or 0.0))
    return out


def audit(sim: Path, model: Path, after: float) -> dict:
    """Mean powers (W) over t > ``after`` of a `musclewalk simulate` folder: totals and per element."""
    muscles = pd.read_csv(sim / "muscles.csv")
    window = muscles["time"].to_numpy() > after
    names = [c[: -len(".excitation")] for c in muscles.columns if c.endswith(".excitation")]

    def columns(quantity: str) -> np.ndarray:
        return muscles[[f"{n}.{quantity}" for n in names]].to_numpy()[window]

    work = fibre_work(
        names, columns("fiber_force"), columns("fiber_velocity"), columns("active_fiber_force")
    )["by_muscle"]
    per_muscle = {
        name: {
            "active_positive": work[name]["active_produced_W"],
            "active_negative": -work[name]["active_absorbed_W"],
            "passive_net": -work[name]["passive_absorbed_W"],
        }
        for name in names
    }
    states = read_storage(sim / "states.sto")
    speeds = coordinate_speeds(states)
    state_window = states["time"].to_numpy() > after
    dampers = {
        name: float(viscosity * np.mean(speeds[coordinate][state_window] ** 2))
        for name, (coordinate, viscosity) in spring_dampers(model).items()
    }
    limits_table = pd.read_csv(sim / "joint_limits.csv")
    limit_time = limits_table["time"].to_numpy()
    limit_window = limit_time > after
    limits = {}
    for column in limits_table.columns[1:]:
        coordinate = column[len("limit_") :]
        speed = np.interp(limit_time, states["time"].to_numpy(), speeds[coordinate])
        limits[coordinate] = float(
            np.mean(limits_table[column].to_numpy()[limit_window] * speed[limit_window])
        )
    active_net = sum(m["active_positive"] + m["active_negative"] for m in per_muscle.values())
    passive_net = sum(m["passive_net"] for m in per_muscle.values())
    totals = {
        "active_positive": sum(m["active_positive"] for m in per_muscle.values()),
        "active_negative": sum(m["active_negative"] for m in per_muscle.values()),
        "active_net": active_net,
        "passive_fibre_net": passive_net,
        "spring_damper_dissipation": sum(dampers.values()),
        "joint_limit_net": sum(limits.values()),
    }
    totals["remainder"] = -(
        active_net + passive_net - totals["spring_damper_dissipation"] + totals["joint_limit_net"]
    )
    return {"totals": totals, "muscles": per_muscle, "dampers": dampers, "limits": limits}


def table(name: str, result: dict, rows: int = 6) -> str:
    t = result["totals"]
    lines = [
        f"{name}: mean power after the window's start, W",
        "",
        "| where | W |",
        "|---|---|",
        f"| muscles' active fibres: positive work | {t['active_positive']:.1f} |",
        f"| muscles' active fibres: negative work | {t['active_negative']:.1f} |",
        f"| muscles' active fibres: net | {t['active_net']:.1f} |",
        f"| muscles' passive fibres: net (fibre damping) | {t['passive_fibre_net']:.1f} |",
        f"| joint spring-dampers: dissipated | {-t['spring_damper_dissipation']:.1f} |",
        f"| joint limits: net | {t['joint_limit_net']:.1f} |",
        f"| remainder: foot contact (and the change of mechanical energy) | {t['remainder']:.1f} |",
        "",
        "| muscle | active + | active − | passive net |",
        "|---|---|---|---|",
    ]
    by_passive = sorted(result["muscles"].items(), key=lambda kv: kv[1]["passive_net"])[:rows]
    for muscle, m in by_passive:
        lines.append(
            f"| {muscle} | {m['active_positive']:.1f} | {m['active_negative']:.1f} | {m['passive_net']:.1f} |"
        )
    lines += ["", "| spring-damper | dissipated W |", "|---|---|"]
    for damper, watts in sorted(result["dampers"].items(), key=lambda kv: -kv[1])[:rows]:
        lines.append(f"| {damper} | {watts:.1f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = runs_parser(__doc__.splitlines()[0])
    ap.add_argument("--after", type=float, default=2.0, help="start of the window, s (default 2)")
    ap.add_argument("--duration", type=float, default=10.0, help="simulated time, s (default 10)")
    args = ap.parse_args(argv)

    def run_table(run: Path, work: Path) -> str:
        sim = simulate_run(run, work, args.duration)
        return table(str(run), audit(sim, run / "optimized.osim", args.after))

    return tables_of_runs(ap, args, run_table, "musclewalk-energy-")


if __name__ == "__main__":
    sys.exit(main())
