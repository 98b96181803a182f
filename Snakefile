# musclewalk: creature template -> model -> optimize -> simulate the best -> analyze.
# One rule file per step under workflow/rules/; config/config.yaml says what `all` runs.
configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/model.smk"
include: "workflow/rules/optimize.smk"
include: "workflow/rules/simulate.smk"
include: "workflow/rules/analyze.smk"


rule all:
    input:
        expand("results/models/{creature}.png", creature=config["creatures"]),
        "results/report.md",
