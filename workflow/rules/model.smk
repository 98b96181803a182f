# Build a creature preset as an OpenSim model, with its metadata sidecar and a picture.
rule build_model:
    input:
        creature=lambda wc: str(musclewalk_creature_file(wc.creature)),
        templates=lambda wc: musclewalk_template_files(),
    output:
        osim="results/models/{creature}.osim",
        meta="results/models/{creature}.meta.json",
    log:
        "results/logs/build_{creature}.log",
    shell:
        "musclewalk build {wildcards.creature} -o {output.osim} > {log} 2>&1"


rule render_model:
    input:
        osim="results/models/{creature}.osim",
        meta="results/models/{creature}.meta.json",
    output:
        "results/models/{creature}.png",
    log:
        "results/logs/render_{creature}.log",
    shell:
        "musclewalk render {input.osim} -o {output} > {log} 2>&1"


def musclewalk_creature_file(name):
    from musclewalk.model.template import resolve_creature
    return resolve_creature(name)


def musclewalk_template_files():
    from musclewalk.model.template import models_dir
    return sorted(str(p) for p in (models_dir() / "templates").glob("*.yaml"))
