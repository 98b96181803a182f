"""Command line interface: ``musclewalk <command> ...``."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import __version__


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


def _cmd_creatures(args):
    from .model.template import list_creatures
    import yaml
    for name, path in list_creatures().items():
        data = yaml.safe_load(path.read_text()) or {}
        parts = ", ".join(f"{p}={v.get('template')}" for p, v in (data.get("parts") or {}).items())
        print(f"{name:10s} {parts}   ({path})")


def _cmd_build(args):
    from .model.build import build_creature
    from .model.template import parse_overrides
    spec, meta, report = build_creature(args.creature, parse_overrides(args.set), args.out,
                                        validate=not args.no_validate)
    counts = {k: len(meta[k]) for k in ("routing", "properties", "passive")}
    print(f"{spec.name}: {len(spec.bodies)} bodies, {spec.dof_count + 6} DOFs "
          f"({spec.dof_count} joint + 6 root), {len(spec.muscles)} muscles, "
          f"{spec.total_mass:.1f} kg; free parameters: routing {counts['routing']}, "
          f"muscle properties {counts['properties']}, passive gains {counts['passive']}")
    print(f"wrote {args.out} and its metadata")
    if args.picture:
        from .model.render import render_model
        render_model(args.out, args.picture)
        print(f"wrote {args.picture}")


def _cmd_render(args):
    from .model.render import render_model
    render_model(args.model, args.out)
    print(f"wrote {args.out}")


def _cmd_info(args):
    from .model.meta import load_meta
    from .model.vectors import ModelVectors
    meta = load_meta(args.model)
    mv = ModelVectors(meta)
    print(f"{meta['creature']}: {len(meta['bodies'])} bodies, {len(meta['muscles'])} muscles, "
          f"{meta['total_mass']:.1f} kg, leg length {meta['leg_length']:.3f} m")
    for kind, n in mv.counts().items():
        print(f"  {kind:10s} {n:4d} free parameters")
    if args.verbose:
        for m in meta["muscles"]:
            print(f"  {m['name']:28s} delay {m['delay'] * 1000:4.0f} ms  roles {','.join(m['roles'])}")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="musclewalk", description=__doc__)
    p.add_argument("--version", action="version", version=f"musclewalk {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("creatures", help="list the creature presets")
    s.set_defaults(func=_cmd_creatures)

    s = sub.add_parser("build", help="build a creature preset (or YAML file) as an .osim model")
    s.add_argument("creature", help="preset name (see 'musclewalk creatures') or a YAML file")
    s.add_argument("--set", action="append", default=[], metavar="PART.KEY=VALUE",
                   help="override a template parameter, e.g. --set legs.upper=0.45")
    s.add_argument("-o", "--out", required=True, type=Path, help="output .osim")
    s.add_argument("--picture", type=Path, help="also render a picture (PNG)")
    s.add_argument("--no-validate", action="store_true", help="skip the OpenSim validation")
    s.set_defaults(func=_cmd_build)

    s = sub.add_parser("render", help="picture of a model from the side and the front")
    s.add_argument("model", type=Path)
    s.add_argument("-o", "--out", required=True, type=Path)
    s.set_defaults(func=_cmd_render)

    s = sub.add_parser("info", help="structure and free-parameter counts of a built model")
    s.add_argument("model", type=Path)
    s.add_argument("-v", "--verbose", action="store_true")
    s.set_defaults(func=_cmd_info)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except (UsageError, ValueError, KeyError, FileNotFoundError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"musclewalk {args.command}: error: {msg}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
