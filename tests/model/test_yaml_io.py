"""yaml_io.safe_load reads every committed YAML file (creatures, templates, objectives, tasks,
experiments, the workflow config) to the same data as PyYAML's pure-Python safe loader."""

from pathlib import Path

import pytest
import yaml

from musclewalk import yaml_io

REPO = Path(__file__).resolve().parents[2]


def test_the_fast_loader_reads_every_committed_file_as_the_safe_loader_does():
    files = sorted(p for folder in ("models", "config", "workflow") for p in (REPO / folder).rglob("*.y*ml"))
    assert len(files) > 100
    for path in files:
        text = path.read_text()
        assert yaml_io.safe_load(text) == yaml.load(text, Loader=yaml.SafeLoader), path


def test_it_uses_libyaml_when_pyyaml_has_it():
    assert yaml_io._LOADER is (yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader)


@pytest.mark.parametrize(
    "text",
    ["a: [1, 2\nb: 3", "a: 1\n\tb: 2\n", "a: {b: 1\n", "- a\nb: 1\n", "a: 'open\n"],
    ids=["unclosed-flow", "tab", "unclosed-map", "sequence-then-map", "open-quote"],
)
def test_a_malformed_file_gets_the_pure_python_parsers_error(text):
    with pytest.raises(yaml.YAMLError) as expected:
        yaml.load(text, Loader=yaml.SafeLoader)
    with pytest.raises(yaml.YAMLError) as got:
        yaml_io.safe_load(text)
    assert type(got.value) is type(expected.value) and str(got.value) == str(expected.value)
