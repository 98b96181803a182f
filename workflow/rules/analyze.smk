# Gait summary per run, and one report over all runs.
rule analyze:
    input:
        "results/simulate/{run}/summary.json",
    output:
        summary="results/analysis/{run}.json",
        picture=report("results/analysis/{run}.png", caption="../report/filmstrip.rst",
                       category="Gaits", subcategory="{run}", labels={"run": "{run}",
                                                                       "figure": "filmstrip"}),
    log:
        "results/logs/analyze_{run}.log",
    conda:
        CONDA_ENV
    shell:
        "musclewalk analyze $(dirname {input}) -o {output.summary} --picture {output.picture} > {log} 2>&1"


# The gait against the human normative reference (gaitutils): cycles after 2 s, clinical angles,
# GRF, joint moments and powers (inverse dynamics), spatiotemporal parameters, Gait Profile Score.
rule compare:
    input:
        "results/simulate/{run}/summary.json",
    output:
        comparison="results/compare/{run}/comparison.json",
        kinematics=report("results/compare/{run}/kinematics.png",
                          caption="../report/kinematics.rst", category="Against human data",
                          subcategory="{run}", labels={"run": "{run}", "figure": "kinematics"}),
        grf=report("results/compare/{run}/grf.png", caption="../report/grf.rst",
                   category="Against human data", subcategory="{run}",
                   labels={"run": "{run}", "figure": "vertical GRF"}),
        kinetics=report("results/compare/{run}/kinetics.png", caption="../report/kinetics.rst",
                        category="Against human data", subcategory="{run}",
                        labels={"run": "{run}", "figure": "joint moments and powers"}),
    log:
        "results/logs/compare_{run}.log",
    params:
        out="results/compare/{run}",
    conda:
        CONDA_ENV
    shell:
        "musclewalk compare $(dirname {input}) --record-failure -o {params.out} > {log} 2>&1"


# Table 4 of this project beside the paper's: committed controllers (generations, wall time,
# robustness: models/optimized of the musclewalk in use) and the gaits of this workflow's runs.
rule table4:
    input:
        expand("results/analysis/{run}.json", run=RUNS),
        committed=lambda wc: sorted(
            str(p) for pattern in ("*/log.txt", "*/history.csv", "*/robustness/*.json")
            for p in Path("models/optimized").glob(pattern)
        ),
    output:
        "results/table4.md",
    log:
        "results/logs/table4.log",
    conda:
        CONDA_ENV
    shell:
        "mkdir -p results/analysis && musclewalk table4 --analysis results/analysis -o {output} > {log} 2>&1"


rule report:
    input:
        table4="results/table4.md",
        summaries=expand("results/analysis/{run}.json", run=RUNS),
        pictures=expand("results/analysis/{run}.png", run=RUNS),
        comparisons=expand("results/compare/{run}/comparison.json", run=RUNS),
        simulations=expand("results/simulate/{run}/summary.json", run=RUNS),
    output:
        "results/report.md",
    log:
        "results/logs/report.log",
    params:
        runs=RUNS,
        budget=BUDGET,
        budget_name=config["budget"],
        # the committed walkers' record (analysis/reproducibility.py; a param, not an input: the
        # docs rule that writes it is not part of `all`)
        record="docs/tables/reproducibility.json",
    conda:
        CONDA_ENV
    script:
        "../scripts/report.py"
