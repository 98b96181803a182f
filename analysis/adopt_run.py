"""Commit an optimization run made on a variant creature file as a run of a preset whose model is
now the same but for its name: e.g. the Ostrich's run on creatures/ostrich_fixed_step.yaml (the
Ostrich with a fixed integrator step) once the Ostrich preset has that step itself. The workflow,
`musclewalk table4` and `--init` know a committed run by its creature's name
(models/optimized/<creature>-<task>-<speed>), so the run's folder is re-written under the preset's:

    python3.11 analysis/adopt_run.py RUN PRESET --out models/optimized/Ostrich-walk-1.2

RUN is an optimization run (or stage) folder: best.json, history.csv, log.txt, settings.json and
model/<its creature>.osim (+ .meta.json). PRESET is a creature preset or creature file. The preset
is built; its model and metadata must equal the run's model/ files but for the model's and the
creature's name (the .osim's Model name and credits, the metadata's creature and source; a
template parameter added since, that the run's metadata lacks, is taken at the build's value when
the .osim is the same): anything else refuses, nothing written.

OUT gets the run's values on the preset's build, as `vary_parameters.py RUN OUT --model` writes
them (model/<PRESET>.osim (+ .meta.json), best.json with the preset's creature, optimized.osim (+
.meta.json) by the optimizer's own write-back, the rest of the run folder but stages/ and the
checkpoint), best.json naming that model where OUT has it, and log.txt with an `adopted:` line
(from where, when, checked how). OUT is written whole or not at all (a temporary folder renamed at the
end) and must not exist.

The controller, initial state and written-back model values are the run's, so `musclewalk
simulate` of OUT reproduces RUN's simulation to the last bit (check: both folders' `musclewalk
simulate` states.sto, `analysis/reproducibility.py`'s digest).
"""

from __future__ import annotations

# isort: off
import musclewalk  # noqa: F401  (pins numpy's CPU dispatch before anything loads numpy)

# isort: on
import argparse
import json
import re
import shutil
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from vary_parameters import vary

from musclewalk.model.build import build_creature
from musclewalk.model.meta import meta_path

REQUIRED = ("history.csv", "settings.json", "log.txt")
RENAMED_META_FIELDS = ("creature", "source")


class AdoptError(Exception):
    """Why a run cannot be adopted under a preset (names the file)."""


def _osim_without_name(text: str) -> str:
    text = re.sub(r'<Model name="[^"]*">', '<Model name="">', text, count=1)
    return re.sub(r"<credits>[^<]*</credits>", "<credits></credits>", text, count=1)


def _meta_without_name(path: Path) -> dict:
    data = json.loads(path.read_text())
    for key in RENAMED_META_FIELDS:
        data.pop(key, None)
    return data


def run_model(run: Path, best: dict) -> Path:
    """The run's own model copy, model/<creature>.osim."""
    model = run / "model" / f"{best['creature']}.osim"
    if not model.is_file() or not meta_path(model).is_file():
        raise AdoptError(f"{model}: not found (a run folder keeps its model in model/, with its .meta.json)")
    return model


def check_same_but_name(built: Path, model: Path) -> list[str]:
    """AdoptError naming the files unless the built model equals the run's but for the names.
    Returns the template parameters the build records and the run's metadata lacks (added to the
    templates since, at values that leave the .osim as it was)."""
    if _osim_without_name(built.read_text()) != _osim_without_name(model.read_text()):
        raise AdoptError(f"{model}: differs from the preset's build ({built}) beyond the model's name")
    ours, theirs = _meta_without_name(meta_path(built)), _meta_without_name(meta_path(model))
    added = sorted(set(ours.get("parameters", {})) - set(theirs.get("parameters", {})))
    for key in added:
        theirs.setdefault("parameters", {})[key] = ours["parameters"][key]
    if ours != theirs:
        keys = sorted(k for k in set(ours) | set(theirs) if ours.get(k) != theirs.get(k))
        raise AdoptError(
            f"{meta_path(model)}: differs from the preset's build beyond {', '.join(RENAMED_META_FIELDS)}: "
            f"{', '.join(keys)}"
        )
    return added


def adopt(run: Path, preset: str, out: Path) -> Path:
    """Write ``out`` (see the module's text); returns it."""
    run, out = Path(run), Path(out)
    if out.exists():
        raise AdoptError(f"{out}: exists (adopt writes a new folder; remove it first to replace it)")
    best_path = run / "best.json"
    try:
        best = json.loads(best_path.read_text())
    except FileNotFoundError:
        raise AdoptError(f"{best_path}: not found (RUN is an optimization run folder)") from None
    for name in REQUIRED:
        if not (run / name).is_file():
            raise AdoptError(f"{run / name}: not found (RUN is an optimization run folder)")
    best_creature = best["creature"]
    model = run_model(run, best)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        spec, _, _ = build_creature(preset, None, tmp / "build" / "creature.osim")
        built = tmp / "build" / f"{spec.name}.osim"
        (tmp / "build" / "creature.osim").rename(built)
        meta_path(tmp / "build" / "creature.osim").rename(meta_path(built))
        added = check_same_but_name(built, model)
        written = tmp / "run"
        vary(run, written, {}, model=built)  # the run's values written on the preset's build
        final_model = out / "model" / built.name
        best = json.loads((written / "best.json").read_text())
        (written / "best.json").write_text(json.dumps({**best, "model": str(final_model)}, indent=1) + "\n")
        # the written-back metadata names the model it came from: the committed copy's place
        data = json.loads(meta_path(written / "optimized.osim").read_text())
        data["optimized_from"] = str(final_model)
        meta_path(written / "optimized.osim").write_text(json.dumps(data, indent=1) + "\n")
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        since = (
            f"; template parameters added since, at their build values: {', '.join(added)}" if added else ""
        )
        with open(written / "log.txt", "a") as log:
            log.write(
                f"adopted: {stamp} from {run} as the preset {spec.name} (creature {best_creature} -> "
                f"{spec.name}): the preset's build equals this run's model but for its name "
                f"(python3.11 analysis/adopt_run.py {run} {preset} --out {out}{since}); best.json, "
                "optimized.osim and its metadata re-written for that model, the rest as the run wrote it\n"
            )
        written.rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path, help="optimization run (or stage) folder")
    ap.add_argument("preset", help="creature preset (or creature file) whose model the run's is")
    ap.add_argument(
        "--out", type=Path, required=True, help="the new folder, e.g. models/optimized/<run name>"
    )
    args = ap.parse_args(argv)
    try:
        out = adopt(args.run, args.preset, args.out)
    except (AdoptError, ValueError, FileNotFoundError) as exc:
        print(f"adopt_run: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
