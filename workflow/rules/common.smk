# Config checks and helpers shared by the rule files: the config is validated against
# workflow/schemas/config.schema.yaml and cross-checked before any job is planned.
import jsonschema
import yaml
from snakemake.utils import validate


def _config_error(key, message):
    raise ValueError(f"config/config.yaml: {key}: {message}")


def _first_schema_error(schema_path):
    """The first schema violation as one line naming the key (snakemake's own validate prints
    the whole schema)."""
    schema = yaml.safe_load(open(schema_path))
    error = jsonschema.exceptions.best_match(
        jsonschema.validators.validator_for(schema)(schema).iter_errors(config))
    if error is not None:
        key = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        _config_error(key.lstrip(".") or "(top level)", error.message)


def _known_creatures():
    from musclewalk.model.template import list_creatures
    return list_creatures()


_first_schema_error(workflow.source_path("../schemas/config.schema.yaml"))
validate(config, "../schemas/config.schema.yaml")
if config["budget"] not in config["budgets"]:
    _config_error("budget", f"{config['budget']!r} is not a budget "
                  f"(known: {', '.join(config['budgets'])})")
for _i, _name in enumerate(config["creatures"]):
    if _name not in _known_creatures():
        _config_error(f"creatures[{_i}]", f"unknown creature {_name!r} "
                      f"(known: {', '.join(_known_creatures())})")
for _i, _run in enumerate(config["runs"]):
    if _run["creature"] not in _known_creatures():
        _config_error(f"runs[{_i}].creature", f"unknown creature {_run['creature']!r} "
                      f"(known: {', '.join(_known_creatures())})")

BUDGET = config["budgets"][config["budget"]]
RUNS = [f"{r['creature']}-{r['task']}-{r['speed']}" for r in config["runs"]]


wildcard_constraints:
    creature=r"[A-Za-z0-9_]+",
    task=r"[a-z]+",
    speed=r"[0-9]+(\.[0-9]+)?",
    run=r"[A-Za-z0-9_]+-[a-z]+-[0-9]+(\.[0-9]+)?",
