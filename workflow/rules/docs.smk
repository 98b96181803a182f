# The README's tables and figures from committed results (analysis/; not part of `all`):
#   snakemake --cores 2 docs
rule docs:
    input:
        "docs/tables/committed_comparison.md",
        "docs/tables/spine_stiffness_sweep.md",
        "docs/tables/human_targets.md",
        "docs/tables/excitation_sources.md",
        "docs/tables/static_optimization.md",
        "docs/tables/reproducibility.json",


rule committed_comparison:
    input:
        runs=lambda wc: sorted(str(p) for p in Path("models/optimized").glob("*/best.json")),
    output:
        "docs/tables/committed_comparison.md",
    log:
        "results/logs/committed_comparison.log",
    conda:
        CONDA_ENV
    shell:
        "python3.11 analysis/committed_comparison.py --out {output} > {log} 2>&1"


# what every committed walker gives re-simulated 10 s straight (distance to the last bit, a digest of
# its states), the record `analysis/reproducibility.py --check` compares a machine under load with
rule reproducibility:
    input:
        runs=lambda wc: sorted(str(p) for p in Path("models/optimized").glob("*/best.json")),
    output:
        "docs/tables/reproducibility.json",
    log:
        "results/logs/reproducibility.log",
    conda:
        CONDA_ENV
    shell:
        "python3.11 analysis/reproducibility.py --out {output} > {log} 2>&1"


rule spine_stiffness_sweep:
    input:
        "models/optimized/Human-walk-1.3/earlier/smooth-contact/warm_start.json",
    output:
        "docs/tables/spine_stiffness_sweep.md",
    log:
        "results/logs/spine_stiffness_sweep.log",
    conda:
        CONDA_ENV
    shell:
        "python3.11 analysis/spine_stiffness_sweep.py --params {input} --out {output} > {log} 2>&1"


# issue 14's targets on the committed paper-objective Human (and a human-objective one once
# committed as models/optimized/Human-walk-1.3-human)
rule human_targets:
    input:
        unpack(committed_inputs("Human-walk-1.3", "Human-walk-1.3-human")),
    output:
        "docs/tables/human_targets.md",
    log:
        "results/logs/human_targets.log",
    conda:
        CONDA_ENV
    shell:
        "python3.11 analysis/human_targets.py {input.runs} --out {output} > {log} 2>&1"


# where each muscle's excitation comes from (constant, each feedback term, clipping) in the
# committed walkers of 1.3 m/s (docs/human-like-gait.md, "Where the excitation comes from")
rule excitation_sources:
    input:
        unpack(committed_inputs("Human-walk-1.3", "Human-walk-1.3-human", "HumanLegs-walk-1.3")),
    output:
        "docs/tables/excitation_sources.md",
    log:
        "results/logs/excitation_sources.log",
    conda:
        CONDA_ENV
    shell:
        "python3.11 analysis/excitation_sources.py {input.runs} --out {output} > {log} 2>&1"


# what the committed walkers' motions would cost with the least muscle activation that reproduces
# them, against what their controllers pay (docs/human-like-gait.md, "What the gait itself costs")
rule static_optimization:
    input:
        unpack(
            committed_inputs(
                "Human-walk-1.3", "Human-walk-1.3-human", "HumanLegs-walk-1.3", "HumanLegs-walk-1.3-human"
            )
        ),
    output:
        "docs/tables/static_optimization.md",
    log:
        "results/logs/static_optimization.log",
    conda:
        CONDA_ENV
    shell:
        "python3.11 analysis/static_optimization.py {input.runs} --out {output} > {log} 2>&1"
