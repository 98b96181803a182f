"""YAML parsing for every input file: PyYAML's safe loader, in libyaml's C parser when the PyYAML
wheel has it (the same data, about 8x faster; experiment files, creature templates and objectives
are read many times per command)."""

from __future__ import annotations

import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def safe_load(text: str):
    """yaml.safe_load(text), with the C parser when there is one."""
    return yaml.load(text, Loader=_LOADER)
