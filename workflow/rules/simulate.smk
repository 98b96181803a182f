# Re-simulate the best controller of a run (longer than t_max when the budget says so).
rule simulate_best:
    input:
        "results/optimize/{creature}-{task}-{speed}",
    output:
        summary="results/simulate/{creature}-{task}-{speed}/summary.json",
    log:
        "results/logs/simulate_{creature}-{task}-{speed}.log",
    params:
        out="results/simulate/{creature}-{task}-{speed}",
        duration=BUDGET["simulate_duration"],
    conda:
        CONDA_ENV
    shell:
        "musclewalk simulate {input}/optimized.osim --params {input}/best.json "
        "--speed {wildcards.speed} --duration {params.duration} --out {params.out} "
        "> {log} 2>&1"
