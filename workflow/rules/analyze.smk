# Gait summary per run, and one report over all runs.
rule analyze:
    input:
        "results/simulate/{run}/summary.json",
    output:
        summary="results/analysis/{run}.json",
        picture="results/analysis/{run}.png",
    log:
        "results/logs/analyze_{run}.log",
    conda:
        CONDA_ENV
    shell:
        "musclewalk analyze $(dirname {input}) -o {output.summary} --picture {output.picture} > {log} 2>&1"


rule report:
    input:
        summaries=expand("results/analysis/{run}.json", run=RUNS),
        pictures=expand("results/analysis/{run}.png", run=RUNS),
    output:
        "results/report.md",
    log:
        "results/logs/report.log",
    params:
        runs=RUNS,
        budget=BUDGET,
        budget_name=config["budget"],
    conda:
        CONDA_ENV
    script:
        "../scripts/report.py"
