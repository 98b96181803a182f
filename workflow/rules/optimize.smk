# CMA-ES optimization of one run <creature>-<task>-<speed>[-<variant>] (task: a file of
# models/tasks/): the run's experiment file (config/experiments/) or its creature and speed, with
# the budget's settings (common.smk: optimize_arguments).
rule optimize:
    input:
        osim=run_model,
        init=warm_start,
        experiment=experiment_file,
    output:
        directory("results/optimize/{run}"),
    threads: config["workers"]
    resources:
        runtime=60 * 24,
    log:
        "results/logs/optimize_{run}.log",
    params:
        arguments=lambda wc, input, threads: optimize_arguments(wc, input, threads),
    conda:
        CONDA_ENV
    shell:
        "musclewalk optimize {params.arguments} --quiet --out {output} > {log} 2>&1"
