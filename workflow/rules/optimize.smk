# CMA-ES optimization of one run {creature}-{task}-{speed} (task: walk = straight walking).
rule optimize:
    input:
        osim="results/models/{creature}.osim",
        init=warm_start,
    output:
        directory("results/optimize/{creature}-{task}-{speed}"),
    threads: config["workers"]
    resources:
        runtime=60 * 24,
    log:
        "results/logs/optimize_{creature}-{task}-{speed}.log",
    params:
        init=lambda wc, input: f"--init {input.init} --sigma {BUDGET['sigma']}" if input.init else "",
    shell:
        "musclewalk optimize {input.osim} --speed {wildcards.speed} "
        "--duration {BUDGET[duration]} --generations {BUDGET[generations]} --seed {BUDGET[seed]} "
        "--workers {threads} {params.init} --quiet --out {output} > {log} 2>&1"
