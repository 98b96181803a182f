"""YAML parsing for the package's input files (creatures, templates, objectives, tasks,
experiments; Snakemake reads its own config): PyYAML's safe loader, in libyaml's C parser when the
PyYAML wheel has it (the same data, about 8x faster; experiment files and creature templates are
read many times per command). A file the C parser refuses is parsed again by the pure-Python one,
whose error names the line, shows the text and says what is wrong (libyaml's marks can point a
line past the end and its messages show no snippet)."""

from __future__ import annotations

import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def safe_load(text: str):
    """yaml.safe_load(text), with the C parser when there is one."""
    try:
        return yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError:
        if _LOADER is yaml.SafeLoader:
            raise
        return yaml.safe_load(text)  # raises the pure-Python parser's error
