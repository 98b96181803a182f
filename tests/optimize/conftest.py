"""Shared fixtures of the optimization tests: small settings (population 4, 0.3 s evaluations)
that keep each generation to about a second."""

import pytest


@pytest.fixture(scope="session")
def small_settings(humanlegs_osim):
    """Factory of cheap optimization Settings for the HumanLegs model."""
    from musclewalk.optimize.driver import Settings

    def make(**overrides):
        base = dict(
            model=str(humanlegs_osim),
            speed=1.3,
            duration=0.3,
            generations=2,
            seed=7,
            evaluator="serial",
            workers=1,
            popsize=4,
        )
        base.update(overrides)
        return Settings(**base)

    return make


@pytest.fixture(scope="session")
def optimize_cli():
    """Runs ``musclewalk optimize ARGS...`` in a subprocess; returns the CompletedProcess."""
    from cli_run import run_cli

    return lambda *args: run_cli("optimize", *args)


@pytest.fixture(scope="session")
def one_stage_experiment():
    """Factory of an experiment file for HumanLegs at 1.3 m/s with one stage ("only") of the given
    keys, written to ``folder/exp.yaml``; returns its path."""
    import yaml

    def write(folder, stage):
        data = {"creature": "HumanLegs", "speed": 1.3, "stages": [{"name": "only", **stage}]}
        path = folder / "exp.yaml"
        path.write_text(yaml.safe_dump(data))
        return path

    return write
