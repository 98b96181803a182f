# Gait summary per run, and one report over all runs.
rule analyze:
    input:
        "results/simulate/{run}/summary.json",
    output:
        summary="results/analysis/{run}.json",
        picture="results/analysis/{run}.png",
    log:
        "results/logs/analyze_{run}.log",
    shell:
        "musclewalk analyze $(dirname {input}) -o {output.summary} --picture {output.picture} > {log} 2>&1"


rule report:
    input:
        summaries=expand("results/analysis/{run}.json", run=RUNS),
        pictures=expand("results/analysis/{run}.png", run=RUNS),
    output:
        "results/report.md",
    run:
        import json
        lines = ["# musclewalk results", "",
                 f"Budget: {config['budget']} ({BUDGET['generations']} generations, "
                 f"t_max {BUDGET['duration']} s, re-simulated {BUDGET['simulate_duration']} s)", "",
                 "| run | simulated s | termination | distance m | speed m/s | target | "
                 "CoT J/(kg m) | stride Hz |", "|---|---|---|---|---|---|---|---|"]
        for run, path in zip(RUNS, input.summaries):
            r = json.load(open(path))
            fmt = lambda v, f: "n/a" if v is None else format(v, f)
            lines.append(f"| {run} | {r['simulated_time']:.2f} | {r['termination_reason'] or 'none'} | "
                         f"{r['distance']:.2f} | {r['mean_forward_speed']:.2f} | {r['target_speed']} | "
                         f"{fmt(r['cost_of_transport_J_per_kg_m'], '.2f')} | "
                         f"{fmt(r['stride_frequency_Hz'], '.2f')} |")
        lines += ["", "Side-view filmstrips (every 0.1 s):", ""]
        lines += [f"![{run}](analysis/{run}.png)" for run in RUNS]
        open(output[0], "w").write("\n".join(lines) + "\n")
