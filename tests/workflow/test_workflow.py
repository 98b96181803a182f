"""The Snakemake workflow parses and plans the whole chain; analyze works on a simulation."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from musclewalk.cli import main

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("budget", ["quick", "paper"])
def test_snakemake_plans_the_chain(tmp_path, budget):
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--cores", "2", "all", "--directory",
         str(tmp_path), "--snakefile", str(REPO / "Snakefile"), "--configfile",
         str(REPO / "config" / "config.yaml"), "--config", f"budget={budget}"],
        capture_output=True, text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    for rule in ("build_model", "render_model", "optimize", "simulate_best", "analyze", "report"):
        assert rule in out


def test_analyze_summary(built_models, tmp_path, capsys):
    sim_dir = tmp_path / "sim"
    assert main(["simulate", str(built_models["HumanLegs"]), "--speed", "1.3", "--duration", "0.5",
                 "--out", str(sim_dir)]) == 0
    out = tmp_path / "analysis.json"
    assert main(["analyze", str(sim_dir), "-o", str(out)]) == 0
    result = json.loads(out.read_text())
    summary = json.loads((sim_dir / "summary.json").read_text())
    assert result["distance"] == pytest.approx(summary["distance"])
    # basal metabolism alone is 1.51 W/kg; muscles add to it
    assert result["mean_metabolic_rate_W"] > 1.51 * result["body_mass_kg"]
    assert main(["analyze", str(tmp_path / "nothing"), "-o", str(out)]) == 2
