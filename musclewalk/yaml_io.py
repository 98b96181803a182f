"""YAML parsing for the package's input files (creatures, templates, objectives, tasks,
experiments; Snakemake reads its own config): PyYAML's safe loader, in libyaml's C parser when the
PyYAML wheel has it (the same data, about 8x faster; experiment files and creature templates are
read many times per command). A file the C parser refuses is parsed again by the pure-Python one,
whose error names the line, shows the text and says what is wrong (libyaml's marks can point a
line past the end and its messages show no snippet). Each text parsed is kept, pickled, for the
process (an experiment's chain of extended files and its creature templates are read once per
file loaded): a repeated text costs a pickle round trip, about 70x less than parsing, and gives
fresh objects as parsing does."""

from __future__ import annotations

import pickle

import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_PARSED: dict[str, bytes] = {}  # text -> its data, pickled
_PARSED_MAX = 512


def safe_load(text: str):
    """yaml.safe_load(text), with the C parser when there is one."""
    cached = _PARSED.get(text)
    if cached is not None:
        return pickle.loads(cached)
    try:
        data = yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError:
        if _LOADER is yaml.SafeLoader:
            raise
        return yaml.safe_load(text)  # raises the pure-Python parser's error
    if len(_PARSED) >= _PARSED_MAX:
        _PARSED.clear()
    _PARSED[text] = pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
    return data
