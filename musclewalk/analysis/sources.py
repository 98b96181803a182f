"""Where each muscle's excitation comes from, as a table: `musclewalk analyze`'s
``excitation_sources`` (constant, each delivered feedback term by controller feature and plane,
clipping) and ``metabolic_by_muscle`` for each muscle with a right and a left side (legs, and
arms or spine halves where the creature has them), both sides averaged, in its side's leg's
stance (stance and lift-off) and swing (swing and stance preparation)."""

from __future__ import annotations

PHASES = ("stance", "swing")


def leg_muscles(sources: dict) -> list[str]:
    """Muscle names without their side, in the model's order, for the muscles with a right and
    a left side that the run saw in a leg phase (stance, swing)."""
    names = []
    for name, phases in sources.items():
        base, _, side = name.rpartition("_")
        if side == "r" and f"{base}_l" in sources and set(PHASES) & set(phases):
            names.append(base)
    return names


def _mean(values) -> float:
    return sum(values) / len(values)


def table(run: str, analysis: dict, minimum: float = 0.05) -> str:
    """One Markdown table of a run's `musclewalk analyze` output: a row per sided muscle."""
    sources = analysis.get("excitation_sources") or {}
    if not any("feedback_by_source" in e for phases in sources.values() for e in phases.values()):
        return (
            f"{run}: no excitation split (a model with ideal muscles, or a simulation folder "
            "without feedback_sources.npz)\n"
        )
    heat = analysis.get("metabolic_by_muscle") or {}
    lines = [
        f"{run}: {analysis['simulated_time']:.2f} s, {analysis['mean_forward_speed']:.2f} m/s, CoT "
        f"{analysis['cost_of_transport_J_per_kg_m'] or float('nan'):.1f} J/(kg m); mean excitation "
        f"(both sides) by phase = constant + feedback terms of at least {minimum:g} + clipping",
        "",
        "| muscle | W each | stance u | stance: constant, feedback, clipping | swing u | "
        "swing: constant, feedback, clipping |",
        "|---|---|---|---|---|---|",
    ]
    for base in leg_muscles(sources):
        sides = (f"{base}_r", f"{base}_l")
        watts = [sum(v for k, v in heat[s].items() if k.endswith("_W")) for s in sides if s in heat]
        cells = []
        for phase in PHASES:
            parts = [sources[s][phase] for s in sides if phase in sources[s]]
            if not parts:  # a run too short for this phase
                cells += ["—", "—"]
                continue
            terms = {}
            for p in parts:
                for k, v in p["feedback_by_source"].items():
                    terms[k] = terms.get(k, 0.0) + v / len(parts)
            largest_first = sorted(terms.items(), key=lambda kv: -abs(kv[1]))
            shown = ", ".join(f"{k} {v:+.2f}" for k, v in largest_first if abs(v) >= minimum)
            cells.append(f"{_mean([p['excitation'] for p in parts]):.2f}")
            cells.append(
                f"{_mean([p['constant'] for p in parts]):+.2f}; {shown or '—'}; "
                f"{_mean([p['clipping'] for p in parts]):+.2f}"
            )
        watts_cell = f"{_mean(watts):.0f}" if watts else "—"
        lines.append(f"| {base} | {watts_cell} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
