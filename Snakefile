# musclewalk: creature template -> model -> optimize -> simulate the best -> analyze.
# One rule file per step under workflow/rules/; config/config.yaml says what `all` runs.
configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/model.smk"
include: "workflow/rules/optimize.smk"
include: "workflow/rules/simulate.smk"
include: "workflow/rules/analyze.smk"
include: "workflow/rules/docs.smk"


# a run name <creature>-<task>-<speed>[-<variant>] splits one way only (patterns in common.smk)
wildcard_constraints:
    creature=NAME,
    run=RUN,


rule all:
    input:
        expand("results/models/{creature}.png", creature=CREATURES),
        "results/report.md",
