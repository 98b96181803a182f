"""results/report.md: one table row and filmstrip per run (rule report)."""
import json
import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821 (snakemake injects it)

from pathlib import Path  # noqa: E402

from musclewalk.analysis.compare import largest_phase_error  # noqa: E402
from musclewalk.analysis.reference import human_bodied  # noqa: E402
from musclewalk.analysis.reproducibility import reproduction_status  # noqa: E402
from musclewalk.analysis.sources import table  # noqa: E402 (its import errors go to the log)


def fmt(value, spec):
    return "n/a" if value is None else format(value, spec)


def main(sm):
    budget = sm.params.budget
    lines = ["# musclewalk results", "",
             f"Budget: {sm.params.budget_name} ({budget['generations']} generations, "
             f"t_max {budget['duration']} s, re-simulated {budget['simulate_duration']} s)", "",
             "| run | simulated s | termination | distance m | speed m/s | target | "
             "CoT J/(kg m) | stride Hz | gait (flight %) | GPS deg | cadence steps/min | stance % |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    summaries = [json.load(open(path)) for path in sm.input.summaries]
    for run, r, comparison in zip(sm.params.runs, summaries, sm.input.comparisons):
        c = json.load(open(comparison))
        st = c["spatiotemporal"]
        gait = r.get("gait") or {}
        pattern = (f"{gait['pattern']} ({100 * gait['flight_fraction']:.0f})"
                   if gait.get("pattern") else "n/a")
        lines.append(f"| {run} | {r['simulated_time']:.2f} | {r['termination_reason'] or 'none'} | "
                     f"{r['distance']:.2f} | {r['mean_forward_speed']:.2f} | {r['target_speed']} | "
                     f"{fmt(r['cost_of_transport_J_per_kg_m'], '.2f')} | "
                     f"{fmt(r['stride_frequency_Hz'], '.2f')} | {pattern} | {fmt(c['gps_deg'], '.1f')} | "
                     f"{fmt(st.get('cadence_steps_per_min'), '.0f')} | "
                     f"{fmt(st.get('stance_percent'), '.0f')} |")
    record_path = Path(sm.params.record)
    record = json.loads(record_path.read_text())["runs"] if record_path.is_file() else {}
    lines += ["", f"Reproduced on this machine: each run re-simulated here against the committed "
              f"controller's record ({record_path}: distance to the last bit, a digest of the "
              f"recorded states; `python3.11 analysis/reproducibility.py --check {record_path} "
              f"--burn 2` checks them all beside CPU burners):", ""]
    for run, summary in zip(sm.params.runs, sm.input.simulations):
        committed = Path("models/optimized") / run
        status = reproduction_status(Path(summary).parent, Path("results/optimize") / run / "best.json",
                                     committed, record.get(str(committed)))
        lines.append(f"- {run}: {status}")
    lines += ["", "Side-view filmstrips (every 0.1 s):", ""]
    lines += [f"![{run}](analysis/{run}.png)" for run in sm.params.runs]
    lines += ["", "Against the normative gait data (gaitutils; `musclewalk compare`):", ""]
    for run, comparison in zip(sm.params.runs, sm.input.comparisons):
        error = json.load(open(comparison)).get("error")
        meta = Path("results/optimize") / run / "optimized.meta.json"
        if not error and meta.is_file() and not human_bodied(meta):
            lines.append(f"{run}: not a person's body; its hips, knees and ankles against human data "
                         "for reference only")
        lines.append(f"{run}: {error}" if error else
                     f"![{run} kinematics](compare/{run}/kinematics.png)\n"
                     f"![{run} joint moments and powers](compare/{run}/kinetics.png)")
    lines += ["", "Where the knee's and the ankle's error against the norm lies (offset removed; the gait "
              "phase of Perry's seven with the largest share of the squared error, its mean error, "
              "trial minus norm; every phase in comparison.json's phase_errors and summary.md):", "",
              "| run | knee, right | knee, left | ankle, right | ankle, left |", "|---|---|---|---|---|"]
    for run, comparison in zip(sm.params.runs, sm.input.comparisons):
        c = json.load(open(comparison))
        cells = [largest_phase_error(c, f"{side}.{variable}")
                 for variable in ("knee_flexion", "ankle_dorsiflexion") for side in "rl"]
        lines.append(f"| {run} | " + " | ".join(cells) + " |")
    lines += ["", "Where each muscle's excitation comes from (`musclewalk analyze`'s "
              "excitation_sources: constant + each feedback term of the controller, by feature and "
              "plane + clipping; mean excitations in the stance and swing of the leg on its "
              "side):", ""]
    for run, r in zip(sm.params.runs, summaries):
        lines += table(run, r).splitlines() + [""]
    lines += ["", "Table 4 of the paper and of this project (`musclewalk table4`; committed "
              "controllers under models/optimized, gaits re-simulated here):", ""]
    lines += open(sm.input.table4).read().splitlines()
    with open(sm.output[0], "w") as f:
        f.write("\n".join(lines) + "\n")


main(snakemake)  # noqa: F821
