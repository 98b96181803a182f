"""Issue 10 item 5: a bad config/config.yaml fails before any job, naming the key."""
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
GOOD = yaml.safe_load((REPO / "config" / "config.yaml").read_text())


def dry_run(tmp_path, config):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return subprocess.run([sys.executable, "-m", "snakemake", "all", "-n", "--cores", "1",
                           "--configfile", str(path)], cwd=REPO, capture_output=True,
                          text=True, timeout=300)


def with_run(**changes):
    config = yaml.safe_load(yaml.safe_dump(GOOD))
    config["runs"][0].update(changes)
    return config


@pytest.mark.parametrize("config, words", [
    (with_run(speed=-1), ["speed", "-1"]),
    (with_run(speed="fast"), ["speed", "fast"]),
    (with_run(task="run"), ["task", "run"]),
    (with_run(creature="NoSuchBeast"), ["runs[0].creature", "NoSuchBeast"]),
    ({**GOOD, "budget": "nonsense"}, ["budget", "nonsense", "quick"]),
    ({**GOOD, "workers": 0}, ["workers"]),
    ({**GOOD, "creatures": ["HumanLegs", "Dragon"]}, ["creatures[1]", "Dragon"]),
])
def test_a_bad_config_fails_before_any_job(tmp_path, config, words):
    result = dry_run(tmp_path, config)
    assert result.returncode != 0
    out = result.stdout + result.stderr
    for word in words:
        assert word in out, out[-2000:]
    assert "Job stats" not in out and "rule optimize" not in out


def test_the_run_name_cannot_split_wrongly(tmp_path):
    """speed -1 used to plan HumanLegs-walk--1 and run --speed 1; now refused (above), and the
    wildcards only match a positive decimal speed."""
    result = dry_run(tmp_path, GOOD)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "HumanLegs-walk-1.3" in result.stdout + result.stderr
