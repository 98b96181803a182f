"""results/report.md: one table row and filmstrip per run (rule report)."""
import json
import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821 (snakemake injects it)


def fmt(value, spec):
    return "n/a" if value is None else format(value, spec)


def main(sm):
    budget = sm.params.budget
    lines = ["# musclewalk results", "",
             f"Budget: {sm.params.budget_name} ({budget['generations']} generations, "
             f"t_max {budget['duration']} s, re-simulated {budget['simulate_duration']} s)", "",
             "| run | simulated s | termination | distance m | speed m/s | target | "
             "CoT J/(kg m) | stride Hz |", "|---|---|---|---|---|---|---|---|"]
    for run, path in zip(sm.params.runs, sm.input.summaries):
        r = json.load(open(path))
        lines.append(f"| {run} | {r['simulated_time']:.2f} | {r['termination_reason'] or 'none'} | "
                     f"{r['distance']:.2f} | {r['mean_forward_speed']:.2f} | {r['target_speed']} | "
                     f"{fmt(r['cost_of_transport_J_per_kg_m'], '.2f')} | "
                     f"{fmt(r['stride_frequency_Hz'], '.2f')} |")
    lines += ["", "Side-view filmstrips (every 0.1 s):", ""]
    lines += [f"![{run}](analysis/{run}.png)" for run in sm.params.runs]
    with open(sm.output[0], "w") as f:
        f.write("\n".join(lines) + "\n")


main(snakemake)  # noqa: F821
