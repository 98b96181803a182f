# Re-simulate the best controller of a run (longer than t_max when the budget says so).
rule simulate_best:
    input:
        "results/optimize/{run}",
    output:
        summary="results/simulate/{run}/summary.json",
    log:
        "results/logs/simulate_{run}.log",
    params:
        out="results/simulate/{run}",
        duration=BUDGET["simulate_duration"],
        speed=lambda wc: run_parts(wc.run)["speed"],
    conda:
        CONDA_ENV
    shell:
        "musclewalk simulate {input}/optimized.osim --params {input}/best.json "
        "--speed {params.speed} --duration {params.duration} --out {params.out} "
        "> {log} 2>&1"
