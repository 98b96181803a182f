"""Build a creature: template -> .osim + metadata sidecar, validated before anything is kept."""

from __future__ import annotations

import tempfile
from pathlib import Path

from .meta import build_meta, meta_path, write_meta
from .osim import model_xml, write_atomic, xml_bytes
from .template import load_creature
from .validate import ModelValidationError, validate_model


def build_creature(creature: str, overrides: dict | None, out_osim, validate: bool = True):
    """Write ``out_osim`` and ``<stem>.meta.json``. Nothing is written if the model fails
    validation. Returns (spec, meta, report)."""
    spec = load_creature(creature, overrides)
    meta = build_meta(spec)
    out_osim = Path(out_osim)
    xml = xml_bytes(model_xml(spec))
    report = None
    with tempfile.TemporaryDirectory(prefix="musclewalk-build-") as tmp:
        tmp_osim = Path(tmp) / out_osim.name
        tmp_osim.write_bytes(xml)
        if validate:
            report = validate_model(tmp_osim, meta)
            if not report.ok:
                raise ModelValidationError(
                    f"{spec.source}: the generated model fails validation:\n  " + "\n  ".join(report.problems)
                )
    write_meta(meta_path(out_osim), meta)
    write_atomic(out_osim, xml)
    return spec, meta, report
