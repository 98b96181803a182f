"""Checks of command-line inputs and outputs made before the work starts, so that a bad path or
a broken model is one clear error naming the file, and never a result lost after a long
simulation: output paths (not a directory where a file is meant, a writable folder), the .osim
model (well-formed XML, and the components its metadata names), and writing several files
together (all or none). No OpenSim here: lxml only."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Callable, Mapping

from .model.metadata import MILLARD_MUSCLES, ModelMeta


class OutputError(ValueError):
    """An output path that cannot be written; the message names the path and the option."""


def _existing_ancestor(path: Path) -> Path:
    p = Path(path).absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def check_writable_folder(folder: Path, what: str) -> None:
    """``folder`` (or the nearest ancestor that exists: missing folders are created on writing)
    is a directory this process may create files in."""
    folder = Path(folder)
    existing = _existing_ancestor(folder)
    if not existing.is_dir():
        raise OutputError(f"{what}: {existing} is not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise OutputError(f"{what}: cannot write into {existing} (read-only)")


def check_output_file(path, option: str) -> Path:
    """An output file (written with write_atomic: temporary file beside it, then rename)."""
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"{path}: {option} is an existing directory, expected a file name")
    check_writable_folder(path.parent, f"{path}: {option}")
    return path


# written into every folder replace_folder fills: a folder with it is musclewalk's to replace
RUN_MARKER = ".musclewalk-run"


def check_output_folder(path, option: str, owned_names, keep=()) -> Path:
    """An output folder that is replaced as a whole (see replace_folder): missing, empty, a
    folder musclewalk wrote (it holds RUN_MARKER), or one holding nothing but ``owned_names``;
    its parent writable; none of the ``keep`` files (inputs) inside it."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise OutputError(f"{path}: {option} exists and is not a directory")
    root = path.resolve()  # where replace_folder works (a symlink's target)
    check_writable_folder(root.parent, f"{path}: {option}")
    if path.is_dir():
        if not os.access(path, os.W_OK | os.X_OK):
            raise OutputError(f"{path}: {option} is a read-only directory")
        cwd = Path.cwd().resolve()
        if root == cwd or root in cwd.parents:
            raise OutputError(
                f"{path}: {option} is (or holds) the current directory, which the "
                "run would replace as a whole; give a folder below it"
            )
        names = {p.name for p in path.iterdir()}
        if names and RUN_MARKER not in names and not names <= set(owned_names):
            raise OutputError(
                f"{path}: {option} is a directory that musclewalk did not write "
                f"(no {RUN_MARKER} in it, and files other than its outputs); it "
                "would be replaced as a whole, choose a new or empty folder"
            )
        for f in keep:
            if f is not None and root in Path(f).resolve().parents:
                raise OutputError(
                    f"{path}: {option} contains the input {f}, which replacing the folder would delete"
                )
    return path


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2 RENAME_EXCHANGE); False where unsupported."""
    try:
        import ctypes
        import errno

        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(str(a)), at_fdcwd, os.fsencode(str(b)), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def replace_folder(out_dir, fill) -> Path:
    """Write a folder as a whole: ``fill(tmp)`` writes every file into a temporary sibling
    folder, which then takes the place of ``out_dir`` (swapped atomically where the system
    allows). A failure or interrupt leaves the old folder as it was; afterwards no file of the
    old folder remains."""
    import shutil

    out_dir = Path(out_dir).resolve()  # a symlink's target is replaced, not the link
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".tmp", dir=out_dir.parent))
    old, placed = None, False
    try:
        fill(tmp)
        (tmp / RUN_MARKER).write_text(
            "written by musclewalk; the folder is replaced as a whole by the next run into it\n"
        )
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)  # mkdtemp creates 0700 folders
        if not out_dir.exists():
            os.rename(tmp, out_dir)
        elif _exchange(tmp, out_dir):
            old = tmp  # now holds the old folder's files
        else:
            old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".old", dir=out_dir.parent))
            os.rename(out_dir, old)  # replaces the empty folder `old`
            try:
                os.rename(tmp, out_dir)
            except BaseException:
                os.rename(old, out_dir)
                old = None
                raise
        placed = True
    finally:
        if not placed:
            shutil.rmtree(tmp, ignore_errors=True)
        elif old is not None:
            shutil.rmtree(old, ignore_errors=True)
    return out_dir


def write_files_together(files: Mapping[Path, bytes]) -> None:
    """Write several files all or none: each to a temporary file beside it first, then all
    renamed into place (a failure before the renames leaves every old file as it was)."""
    staged = []
    try:
        for path, data in files.items():
            path = Path(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            staged.append((tmp, path))
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        for tmp, path in staged:
            os.replace(tmp, path)
    finally:
        for tmp, _ in staged:
            if os.path.exists(tmp):
                os.unlink(tmp)


# ---------------------------------------------------------------------------------- models
def parse_model_file(path):
    """The .osim's XML tree, strictly parsed: a truncated or corrupt file is a ValueError naming
    the file (before OpenSim sees it)."""
    from lxml import etree

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: model file not found")
    if not path.is_file():
        raise ValueError(f"{path}: model is not a file")
    try:
        tree = etree.parse(str(path), etree.XMLParser(huge_tree=True))
    except etree.XMLSyntaxError as exc:
        what = exc.msg.split(" line ")[0]
        raise ValueError(
            f"{path}: not a readable OpenSim model: truncated or corrupt XML at line {exc.lineno} ({what})"
        ) from None
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the model file ({exc})") from None
    root = tree.getroot()
    if root.tag != "OpenSimDocument" or root.find("Model") is None:
        raise ValueError(f"{path}: not an OpenSim model (no <OpenSimDocument><Model>)")
    return tree


def model_mismatches(tree, meta: ModelMeta) -> dict[str, list[str]]:
    """What the metadata names and the model (XML tree) lacks, by kind: bodies, coordinates,
    muscles and their path points, springs, contact spheres and forces, the excitation
    controller (empty: they match)."""
    from .model.osim import (
        CONTROLLER_NAME,
        EXPONENTIAL_CONTACT_PREFIX,
        MUSCLE_CLASS,
        ROOT_COORDINATES,
        SMOOTH_CONTACT_PREFIX,
    )

    model = tree.getroot().find("Model")

    def names(xpath):
        return {e.get("name") for e in model.xpath(xpath)}

    missing: dict[str, list[str]] = {}

    def lack(kind, wanted, have):
        gone = [w for w in dict.fromkeys(wanted) if w not in have]
        if gone:
            missing.setdefault(kind, []).extend(gone)

    lack("body", [b.name for b in meta.bodies], names("BodySet/objects/Body"))
    lack(
        "coordinate",
        [c[0] for c in ROOT_COORDINATES] + [c for j in meta.joints for c in j.coordinates],
        names(".//Coordinate"),
    )
    muscle_class = MUSCLE_CLASS[meta.muscle_model]
    muscles = {m.get("name"): m for m in model.xpath(f"ForceSet/objects/{muscle_class}")}
    # "no ideal muscle (PathActuator) ..." for a Millard model beside ideal-muscle metadata
    muscle = (
        "muscle" if meta.muscle_model == MILLARD_MUSCLES else f"{meta.muscle_model} muscle ({muscle_class})"
    )
    lack(muscle, [m.name for m in meta.muscles], muscles)
    for m in meta.muscles:
        if m.name in muscles:
            lack(
                "path point",
                [f"{m.name}/{p.name}" for p in m.points],
                {f"{m.name}/{p.get('name')}" for p in muscles[m.name].iter("PathPoint")},
            )
    lack(
        "spring",
        [t for e in meta.passive for t in e.targets],
        names("ForceSet/objects/SpringGeneralizedForce"),
    )
    lack("contact sphere", [c.name for c in meta.contacts], names("ContactGeometrySet/objects/ContactSphere"))
    if meta.physics is not None and meta.physics.contact.model == "exponential":
        lack(
            "contact force",
            [f"{EXPONENTIAL_CONTACT_PREFIX}{c.name}" for c in meta.contacts],
            names("ForceSet/objects/ExponentialContactForce"),
        )
    else:
        lack(
            "contact force",
            [f"{SMOOTH_CONTACT_PREFIX}{c.name}" for c in meta.contacts],
            names("ForceSet/objects/SmoothSphereHalfSpaceForce"),
        )
    lack("controller", [CONTROLLER_NAME], names("ControllerSet/objects/PrescribedController"))
    n_meta = len(meta.muscles)
    if len(muscles) != n_meta and muscle not in missing:
        missing["count"] = [f"the model has {len(muscles)} muscles, the metadata {n_meta}"]
    return missing


def describe_mismatches(missing: Mapping[str, list[str]], shown: int = 2) -> str:
    """'no body a, b, ... (6 missing); no muscle c; ...' for an error line."""
    parts = []
    for kind, items in missing.items():
        if kind == "count":
            parts += items
            continue
        more = f", ... ({len(items)} missing)" if len(items) > shown else ""
        parts.append(f"no {kind} {', '.join(items[:shown])}{more}")
    return "; ".join(parts)


def check_model(path, meta: ModelMeta | None = None) -> ModelMeta:
    """The metadata of a musclewalk model, after checking that the .osim is readable and holds
    every component its metadata (``MODEL.meta.json``) names. ValueError / FileNotFoundError
    naming the file: a truncated or corrupt .osim, missing or unreadable metadata, or a model
    and metadata that do not belong together (e.g. an OpenSim model musclewalk did not build)."""
    from .model.meta import load_meta, meta_path

    tree = parse_model_file(path)
    meta = load_meta(path) if meta is None else meta
    missing = model_mismatches(tree, meta)
    if missing:
        raise ValueError(
            f"{path}: the model does not match its metadata {meta_path(path)} "
            f"(of '{meta.creature}'): {describe_mismatches(missing)}; "
            "use a model and the .meta.json "
            "'musclewalk build' wrote with it"
        )
    return meta


def _read_input(path, error: type[Exception], what: str, parse, kind: str, malformed: tuple):
    """``parse`` of an input file's text, or ``error`` naming the file when it is missing, a
    folder, unreadable or not ``kind`` (``malformed``: the parser's exceptions)."""
    path = Path(path)
    try:
        return parse(path.read_text())
    except FileNotFoundError:
        raise error(f"{path}: {what} not found") from None
    except IsADirectoryError:
        raise error(f"{path}: a folder, not a {what}") from None
    except OSError as exc:
        raise error(f"{path}: cannot read the {what} ({exc.strerror or exc})") from None
    except malformed as exc:
        raise error(f"{path}: not valid {kind} ({exc})") from None


def read_yaml(path, error: type[Exception], what: str):
    """The data of a YAML input file, or ``error`` naming the file (``what``: e.g. "objective
    file")."""
    import yaml

    from . import yaml_io

    return _read_input(path, error, what, yaml_io.safe_load, "YAML", (yaml.YAMLError, UnicodeDecodeError))


def extended_file(
    path: Path, data: dict, chain: tuple, error: type[Exception], kind: str, named: Callable | None = None
) -> tuple[Path, tuple[Path, ...]]:
    """The file that an input file extends, checked as every extending file (objective, task,
    experiment) is: ``extends`` (popped from ``data``, the file's values) a .yaml path relative to
    ``path`` or, with ``named``, a name that ``named`` maps to its file (raising ``error`` for an
    unknown one); a description in ``data``; the extended file there; and not one of ``chain``,
    the files extending this one. Returns the extended file and the chain to pass on (``path``
    added); ``error`` names ``path`` and the key otherwise."""
    value = data.pop("extends")
    as_file = isinstance(value, str) and value.endswith((".yaml", ".yml"))
    if not as_file and not (named is not None and isinstance(value, str) and value):
        article = "an" if kind[0] in "aeiou" else "a"
        expected = f"{article} {kind} name or a .yaml file" if named else f"{article} {kind} .yaml file"
        raise error(f"{path}: extends: expected {expected}, got {value!r}")
    if not data.get("description"):
        raise error(
            f"{path}: description: required in a file that extends another {kind} (the extended "
            f"one's would describe another {kind} in every log)"
        )
    if as_file:
        parent = Path(path).parent / value
    else:
        try:
            parent = named(value)
        except error as exc:
            raise error(f"{path}: extends: {exc}") from None
    if not parent.is_file():
        raise error(f"{path}: extends: {parent}: no such {kind} file")
    chain = (*chain, Path(path).resolve())
    if parent.resolve() in chain:
        raise error(f"{path}: extends: {value!r} extends this file again (a cycle)")
    return parent, chain


def read_json(path, error: type[Exception], what: str):
    """The data of a JSON input file, or ``error`` naming the file (``what``: e.g. "parameter
    file")."""
    malformed = (ValueError,)  # json.JSONDecodeError and UnicodeDecodeError are ValueErrors
    return _read_input(path, error, what, json.loads, "JSON", malformed)


def read_json_object(path, error: type[Exception], what: str) -> dict:
    """As read_json, and ``error`` when the data is not a JSON object."""
    data = read_json(path, error, what)
    if not isinstance(data, dict):
        raise error(f"{Path(path)}: expected a JSON object")
    return data
