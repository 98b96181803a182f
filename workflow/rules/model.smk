# Build a creature (a preset or a creature file) as an OpenSim model, with its metadata sidecar
# and a picture.
rule build_model:
    input:
        creature=lambda wc: creature_file(wc.creature),
        data=lambda wc: model_data_files(),
    output:
        osim="results/models/{creature}.osim",
        meta="results/models/{creature}.meta.json",
    log:
        "results/logs/build_{creature}.log",
    conda:
        CONDA_ENV
    shell:
        "musclewalk build {input.creature} -o {output.osim} > {log} 2>&1"


rule render_model:
    input:
        osim="results/models/{creature}.osim",
        meta="results/models/{creature}.meta.json",
    output:
        "results/models/{creature}.png",
    log:
        "results/logs/render_{creature}.log",
    conda:
        CONDA_ENV
    shell:
        "musclewalk render {input.osim} -o {output} > {log} 2>&1"
