# musclewalk workflow: creature template -> model (.osim + metadata + picture) -> ...
# Later stages (simulate, optimize, analyze) are added as rule files under workflow/rules/.
configfile: "config/config.yaml"

include: "workflow/rules/model.smk"


rule all:
    input:
        expand("results/models/{creature}.osim", creature=config["creatures"]),
        expand("results/models/{creature}.png", creature=config["creatures"]),
