"""musclewalk's metabolic model (musclewalk.measures.metabolics, Wang et al. 2012 as SCONE has it,
what `musclewalk analyze` charges for the cost of transport) against OpenSim's own
Bhargava2004MuscleMetabolicsProbe, on the same motion: every recorded control step of a
`musclewalk simulate` folder is replayed in OpenSim (the state of states.sto, the excitation of
muscles.csv held by the model's PrescribedController, as the simulation held it over the step that
follows) and the probe evaluated there.

    musclewalk simulate models/optimized/HumanLegs-walk-1.3/optimized.osim \\
        --params models/optimized/HumanLegs-walk-1.3/best.json --duration 2 --out run/
    python3.11 analysis/metabolics_crosscheck.py run/ [-o crosscheck.json]

The probes are configured as close to Wang 2012 as the probe allows: basal 1.51 W/kg x the
system mass (exponent 1), the force-independent shortening constant (0.25 F while shortening, 0
while lengthening), no negative mechanical work, no 1 W/kg floor on a muscle's heat rate, no
clamp of negative power, slow-twitch ratio 0.5, the activation / maintenance constants 40 / 133
/ 74 / 111 W/kg, musclewalk's muscle masses given per muscle (F_max / 0.25 MPa x 1059.7 kg/m^3 x
l_opt of the metadata; the masses OpenSim computes from the model are reported beside them) and
the maintenance heat's fibre-length curve set to the piecewise-linear g(l) of both models. One
probe per heat term (only that term on) gives the terms per muscle.

What the probe cannot be configured to match: its maintenance heat is charged on the excitation
(Bhargava et al. 2004: fibre recruitment), Wang 2012 / SCONE / musclewalk charge it on the
activation. The table therefore also has musclewalk's formula evaluated with the excitation in
place of the activation ("ours, u"), which should equal the probe; the remaining difference is
what the replay and the 6 digits of muscles.csv leave. The probe with OpenSim's default settings
(basal 1.2 W/kg, negative work counted, the 1 W/kg heat floor, the negative-power clamp) is
reported too, with what each of those settings changes on its own (and the force-dependent
shortening constant, not a default).

Mean rates are over the run's control intervals (every sample but the last, as `musclewalk
analyze`). The replayed muscle state is checked against muscles.csv (largest difference per
quantity, relative to the quantity's largest magnitude).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

import musclewalk  # noqa: F401  (pins numpy's CPU dispatch before numpy loads)
from musclewalk.analysis.summary import read_run_summary
from musclewalk.measures.metabolics import (
    BASAL_RATE,
    MUSCLE_DENSITY,
    SLOW_TWITCH,
    SPECIFIC_TENSION,
    fiber_length_factor,
    metabolic_rates,
    muscle_masses,
)
from musclewalk.model.meta import load_meta
from musclewalk.model.metadata import IDEAL_MUSCLES
from musclewalk.model.osim import CONTROLLER_NAME
from musclewalk.opensim_env import import_opensim
from musclewalk.sim.outputs import read_storage

TERMS = ("activation_heat", "maintenance_heat", "shortening_heat", "positive_work")
# the probe's per-term switches, in TERMS order
TERM_SWITCHES = ("activation_rate_on", "maintenance_rate_on", "shortening_rate_on", "mechanical_work_rate_on")
SWITCHES = (*TERM_SWITCHES, "basal_rate_on")
# Wang 2012 / SCONE constants (W/kg): activation slow, fast; maintenance slow, fast
HEAT_CONSTANTS = (40.0, 133.0, 74.0, 111.0)
# g(l) of the maintenance heat: 0.5 below l = 0.5, l up to 1, 3 - 2 l up to 1.5, 0 beyond
LENGTH_CURVE = ((0.0, 0.5, 1.0, 1.5, 2.0), (0.5, 0.5, 1.0, 0.0, 0.0))
# muscles.csv quantities and the Muscle getter that gives each in OpenSim
READ_BACK = {
    "excitation": "getExcitation",
    "activation": "getActivation",
    "norm_fiber_length": "getNormalizedFiberLength",
    "fiber_velocity": "getFiberVelocity",
    "fiber_force": "getFiberForce",
    "active_fiber_force": "getActiveFiberForce",
}
# settings of the matched probe; DEFAULT_VARIANTS switches one at a time to OpenSim's default
MATCHED = {
    "basal_coefficient": BASAL_RATE,
    "basal_exponent": 1.0,
    "use_force_dependent_shortening_prop_constant": False,
    "include_negative_mechanical_work": False,
    "enforce_minimum_heat_rate_per_muscle": False,
    "forbid_negative_total_power": False,
    "muscle_effort_scaling_factor": 1.0,
}
DEFAULT_VARIANTS = {
    "include_negative_mechanical_work": True,
    "enforce_minimum_heat_rate_per_muscle": True,
    "forbid_negative_total_power": True,
    "basal_coefficient": 1.2,
}


class RunError(ValueError):
    """A run folder that cannot be cross-checked (the message names the file)."""


def load_run(run_dir: Path) -> dict:
    """The run's summary, muscles.csv, states.sto, model path and metadata; RunError naming the
    file that is missing or unusable."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise RunError(f"{run_dir}: not a folder (a `musclewalk simulate` output folder)")
    for name in ("summary.json", "muscles.csv", "states.sto"):
        if not (run_dir / name).is_file():
            raise RunError(f"{run_dir / name}: missing (not a `musclewalk simulate` folder)")
    try:
        summary = read_run_summary(run_dir)
    except (ValueError, FileNotFoundError) as exc:
        raise RunError(str(exc)) from None
    model = Path(summary["model"])
    if not model.is_file():
        raise RunError(
            f"{run_dir / 'summary.json'}: model {model}: not found "
            f"(a relative model path is read from the working directory, {Path.cwd()})"
        )
    try:
        meta = load_meta(model)
    except (ValueError, FileNotFoundError) as exc:
        raise RunError(str(exc)) from None
    if meta.muscle_model == IDEAL_MUSCLES:
        raise RunError(f"{model}: ideal muscles (F = u F_max) have no metabolic model")
    names = [m.name for m in meta.muscles]
    try:
        muscles = pd.read_csv(run_dir / "muscles.csv")
        states = read_storage(run_dir / "states.sto")
    except (ValueError, pd.errors.ParserError) as exc:
        raise RunError(f"{run_dir}: {exc}") from None
    missing = [f"{n}.{q}" for n in names for q in READ_BACK if f"{n}.{q}" not in muscles.columns]
    if missing:
        raise RunError(f"{run_dir / 'muscles.csv'}: columns missing: {missing[:3]}")
    if len(states) != len(muscles) or not np.allclose(states["time"], muscles["time"], atol=1e-6):
        raise RunError(f"{run_dir / 'states.sto'}: its times differ from muscles.csv's")
    return {
        "dir": run_dir,
        "summary": summary,
        "model": model,
        "meta": meta,
        "names": names,
        "muscles": muscles,
        "states": states,
    }


def columns(run: dict, quantity: str) -> np.ndarray:
    """(samples, muscles) of one muscles.csv quantity in the metadata's muscle order."""
    return run["muscles"][[f"{n}.{quantity}" for n in run["names"]]].to_numpy(float)


def ours(run: dict, maintenance_on_excitation: bool = False) -> np.ndarray:
    """musclewalk's heat terms (4, samples, muscles), W, from muscles.csv; with
    ``maintenance_on_excitation`` the maintenance heat charged on the excitation (the probe's form)."""
    meta = run["meta"]
    mass = muscle_masses(
        [m.max_isometric_force for m in meta.muscles], [m.optimal_fiber_length for m in meta.muscles]
    )
    exc = columns(run, "excitation")
    act = exc if maintenance_on_excitation else columns(run, "activation")
    return np.stack(
        metabolic_rates(
            mass,
            exc,
            act,
            columns(run, "norm_fiber_length"),
            columns(run, "fiber_velocity"),
            columns(run, "fiber_force"),
            columns(run, "active_fiber_force"),
        )
    )


def make_probe(osim, name: str, names, masses, switches: dict, settings: dict):
    """A Bhargava2004MuscleMetabolicsProbe reporting per muscle, ``switches`` (SWITCHES: bool)
    and ``settings`` (probe properties) set, each muscle with Wang's constants and the given mass
    (``masses`` None: the mass OpenSim computes with its default specific tension and density)."""
    probe = osim.Bhargava2004MuscleMetabolicsProbe()
    probe.setName(name)
    probe.set_report_total_metabolics_only(False)
    for key in SWITCHES:
        getattr(probe, f"set_{key}")(bool(switches.get(key, False)))
    for key, value in settings.items():
        getattr(probe, f"set_{key}")(value)
    x, y = LENGTH_CURVE
    curve = osim.PiecewiseLinearFunction()
    for xi, yi in zip(x, y):
        curve.addPoint(xi, yi)
    probe.set_normalized_fiber_length_dependence_on_maintenance_rate(curve)
    for j, muscle in enumerate(names):
        if masses is None:  # OpenSim computes the mass: F_max / specific tension x density x l_opt
            probe.addMuscle(muscle, SLOW_TWITCH, *HEAT_CONSTANTS)
        else:
            probe.addMuscle(muscle, SLOW_TWITCH, *HEAT_CONSTANTS, float(masses[j]))
    return probe


def probe_specs() -> dict:
    """Probe name -> (switches, settings): one per term and the basal rate, all terms matched,
    OpenSim's defaults, and each default setting alone on top of the matched probe."""
    specs = {t: ({s: True}, MATCHED) for t, s in zip(TERMS, TERM_SWITCHES)}
    specs["basal"] = ({"basal_rate_on": True}, MATCHED)
    everything = dict.fromkeys(SWITCHES, True)
    specs["matched"] = (everything, MATCHED)
    specs["opensim_defaults"] = (everything, {})
    for key, value in DEFAULT_VARIANTS.items():
        specs[f"matched_with_{key}_{value}"] = (everything, {**MATCHED, key: value})
    # not a default, but a common choice (Bhargava 2004's force-dependent alpha: 0.16 F_iso + 0.18 F
    # while shortening, 0.157 F while lengthening, which makes the shortening heat negative then)
    key = "use_force_dependent_shortening_prop_constant"
    specs[f"matched_with_{key}_True"] = (everything, {**MATCHED, key: True})
    # negative work counted and then clamped per muscle: the two defaults act together
    both = {"include_negative_mechanical_work": True, "forbid_negative_total_power": True}
    specs["matched_with_negative_work_clamped"] = (everything, {**MATCHED, **both})
    return specs


def replay(run: dict) -> dict:
    """Every recorded sample replayed in OpenSim: probe name -> (samples, 2 + muscles) of the
    probe's outputs (total, basal, per muscle), the read-back muscle quantities (READ_BACK ->
    (samples, muscles)), the masses the probes use and those OpenSim computes, the system mass."""
    osim = import_opensim()
    meta, names = run["meta"], run["names"]
    masses = muscle_masses(
        [m.max_isometric_force for m in meta.muscles], [m.optimal_fiber_length for m in meta.muscles]
    )
    model = osim.Model(str(run["model"]))
    specs = probe_specs()
    for name, (switches, settings) in specs.items():
        model.addProbe(make_probe(osim, name, names, masses, switches, settings))
    # the masses OpenSim computes from the model's own F_max and l_opt (default tension, density)
    model.addProbe(make_probe(osim, "computed_masses", names, None, {}, {}))
    s = model.initSystem()
    probes = {
        n: osim.Bhargava2004MuscleMetabolicsProbe.safeDownCast(model.getProbeSet().get(n)) for n in specs
    }
    computed = osim.Bhargava2004MuscleMetabolicsProbe.safeDownCast(model.getProbeSet().get("computed_masses"))
    muscle_set = model.getMuscles()
    muscles = [muscle_set.get(n) for n in names]
    # the excitations go where the simulation put them: the PrescribedController's Constants,
    # one per actuator of its socket (by name, checked against the muscles)
    controller = osim.PrescribedController.safeDownCast(model.getControllerSet().get(CONTROLLER_NAME))
    socket = controller.getSocket("actuators")
    actuators = [socket.getConnecteePath(i).split("/")[-1] for i in range(socket.getNumConnectees())]
    functions = controller.get_ControlFunctions()
    constants = {a: osim.Constant.safeDownCast(functions.get(i)) for i, a in enumerate(actuators)}
    if sorted(constants) != sorted(names) or any(c is None for c in constants.values()):
        raise RunError(f"{run['model']}: the controller's Constants are not one per muscle")
    state_names = [model.getStateVariableNames().get(i) for i in range(model.getNumStateVariables())]
    table = run["states"]
    absent = [n for n in state_names if n not in table.columns]
    if absent:
        raise RunError(f"{run['dir'] / 'states.sto'}: state variables missing: {absent[:3]}")
    values = table[state_names].to_numpy(float)
    excitation = columns(run, "excitation")
    n = len(table)
    outputs = {name: np.empty((n, 2 + len(names))) for name in specs}
    read_back = {q: np.empty((n, len(names))) for q in READ_BACK}
    for k in range(n):
        model.setStateVariableValues(s, osim.Vector(values[k].tolist()))
        for muscle, u in zip(names, excitation[k]):
            constants[muscle].setValue(float(u))
        s.setTime(float(table["time"].iloc[k]))  # invalidates the cached controls too
        model.realizeDynamics(s)
        for name, probe in probes.items():
            outputs[name][k] = probe.computeProbeInputs(s).to_numpy()
        for quantity, getter in READ_BACK.items():
            read_back[quantity][k] = [getattr(m, getter)(s) for m in muscles]
    return {
        "outputs": outputs,
        "read_back": read_back,
        "masses": masses,
        "opensim_masses": np.array([computed.getMuscleMass(m) for m in names]),
        "system_mass": model.getMatterSubsystem().calcSystemMass(s),
        "length_curve": [
            probes["matched"]
            .get_normalized_fiber_length_dependence_on_maintenance_rate()
            .calcValue(osim.Vector([float(x)]))
            for x in CURVE_CHECK
        ],
    }


CURVE_CHECK = np.linspace(-0.5, 2.5, 61)  # normalized fibre lengths where the curves are compared


def crosscheck(run: dict) -> dict:
    """The numbers of the report (see the module docstring); JSON-ready."""
    rep = replay(run)
    names = run["names"]
    intervals = slice(0, max(len(run["muscles"]) - 1, 1))  # every sample but the last
    mean = lambda x: x[intervals].mean(axis=0)  # per muscle, W
    our = ours(run)
    our_u = ours(run, maintenance_on_excitation=True)
    body_mass = run["meta"].total_mass
    out = rep["outputs"]
    theirs = {t: mean(out[t][:, 2:]) for t in TERMS}
    terms = {}
    for i, t in enumerate(TERMS):
        a, a_u, b = mean(our[i]).sum(), mean(our_u[i]).sum(), theirs[t].sum()
        terms[t] = {
            "ours_W": a,
            "ours_u_W": a_u,
            "opensim_W": b,
            "ratio": b / a if a else None,
            "ratio_to_ours_u": b / a_u if a_u else None,
        }
    basal_ours, basal_theirs = BASAL_RATE * body_mass, float(mean(out["basal"][:, 1]))
    terms["basal"] = {
        "ours_W": basal_ours,
        "ours_u_W": basal_ours,
        "opensim_W": basal_theirs,
        "ratio": basal_theirs / basal_ours,
        "ratio_to_ours_u": basal_theirs / basal_ours,
    }
    total_ours = sum(v["ours_W"] for v in terms.values())
    total_u = sum(v["ours_u_W"] for v in terms.values())
    matched = float(mean(out["matched"][:, 0]))
    terms["total"] = {
        "ours_W": total_ours,
        "ours_u_W": total_u,
        "opensim_W": matched,
        "ratio": matched / total_ours,
        "ratio_to_ours_u": matched / total_u,
    }
    per_term_sum = sum(terms[t]["opensim_W"] for t in (*TERMS, "basal"))
    ours_muscle = sum(mean(our[i]) for i in range(len(TERMS)))
    ours_u_muscle = sum(mean(our_u[i]) for i in range(len(TERMS)))
    theirs_muscle = mean(out["matched"][:, 2:])
    rel = (theirs_muscle - ours_muscle) / np.where(ours_muscle > 0, ours_muscle, np.nan)
    by_muscle = {
        n: {
            "ours_W": float(ours_muscle[j]),
            "ours_u_W": float(ours_u_muscle[j]),
            "opensim_W": float(theirs_muscle[j]),
            "relative_difference": float(rel[j]),
            **{f"{t}_ours_W": float(mean(our[i])[j]) for i, t in enumerate(TERMS)},
            **{f"{t}_opensim_W": float(theirs[t][j]) for t in TERMS},
            "mean_excitation": float(mean(columns(run, "excitation"))[j]),
            "mean_activation": float(mean(columns(run, "activation"))[j]),
        }
        for j, n in enumerate(names)
    }
    # a muscle with no heat of ours (NaN difference) last
    largest = sorted(names, key=lambda n: -np.nan_to_num(abs(by_muscle[n]["relative_difference"]), nan=-1.0))[
        :5
    ]
    read_back = {}
    for quantity, values in rep["read_back"].items():
        recorded = columns(run, quantity)
        scale = float(np.abs(recorded).max()) or 1.0
        read_back[quantity] = float(np.abs(values - recorded).max() / scale)
    variants = {name: float(mean(out[name][:, 0])) for name in out if name.startswith(("matched", "opensim"))}
    simulated = float(run["summary"]["simulated_time"])
    distance = float(run["summary"]["distance"])
    cot = lambda watts: watts * simulated / (body_mass * distance) if distance > 0.1 else None
    return {
        "run": str(run["dir"]),
        "model": str(run["model"]),
        "simulated_time_s": simulated,
        "samples": len(run["muscles"]),
        "body_mass_kg": body_mass,
        "opensim_system_mass_kg": rep["system_mass"],
        "probe_settings": {
            **MATCHED,
            "ratio_slow_twitch_fibers": SLOW_TWITCH,
            "heat_constants_W_per_kg": HEAT_CONSTANTS,
            "masses": "provided (musclewalk's)",
            "normalized_fiber_length_dependence_on_maintenance_rate": LENGTH_CURVE,
        },
        "masses_kg": dict(zip(names, rep["masses"].tolist())),
        "mass_max_relative_difference_opensim_computed": float(
            np.abs(rep["opensim_masses"] / rep["masses"] - 1.0).max()
        ),
        "mass_constants": {"specific_tension_Pa": SPECIFIC_TENSION, "density_kg_per_m3": MUSCLE_DENSITY},
        "length_curve_max_difference": float(
            np.abs(np.array(rep["length_curve"]) - fiber_length_factor(CURVE_CHECK)).max()
        ),
        "terms": terms,
        "matched_total_minus_sum_of_term_probes_W": matched - per_term_sum,
        "probe_variants_total_W": variants,
        "cost_of_transport_J_per_kg_m": {
            "ours": cot(total_ours),
            "opensim_matched": cot(matched),
            "opensim_defaults": cot(variants["opensim_defaults"]),
        },
        "largest_relative_difference": largest,
        "by_muscle": by_muscle,
        "read_back_max_relative_difference": read_back,
    }


def table(result: dict) -> str:
    t = result["terms"]
    lines = [
        f"{result['run']}: {result['simulated_time_s']:.2f} s, {result['samples']} samples, "
        f"model {result['model']}",
        "",
        "| term | ours W | ours, maintenance on u W | OpenSim probe W | OpenSim / ours | OpenSim / ours, u |",
        "|---|---|---|---|---|---|",
    ]
    for term, v in t.items():
        ratios = [f"{r:.6f}" if r is not None else "-" for r in (v["ratio"], v["ratio_to_ours_u"])]
        lines.append(
            f"| {term} | {v['ours_W']:.2f} | {v['ours_u_W']:.2f} | {v['opensim_W']:.2f} | "
            f"{ratios[0]} | {ratios[1]} |"
        )
    cot = result["cost_of_transport_J_per_kg_m"]
    if cot["ours"] is not None:
        lines += [
            "",
            "cost of transport, J/(kg m): ours {ours:.3f}, OpenSim matched {opensim_matched:.3f}, "
            "OpenSim defaults {opensim_defaults:.3f}".format(**cot),
        ]
    lines += ["", "| OpenSim probe | total W | vs matched W |", "|---|---|---|"]
    matched = result["probe_variants_total_W"]["matched"]
    for name, watts in result["probe_variants_total_W"].items():
        lines.append(f"| {name} | {watts:.2f} | {watts - matched:+.2f} |")
    lines += [
        "",
        "largest relative differences (muscle total, OpenSim matched vs ours):",
        "",
        "| muscle | ours W | ours, u W | OpenSim W | relative | mean u | mean a |",
        "|---|---|---|---|---|---|---|",
    ]
    for n in result["largest_relative_difference"]:
        m = result["by_muscle"][n]
        lines.append(
            f"| {n} | {m['ours_W']:.2f} | {m['ours_u_W']:.2f} | {m['opensim_W']:.2f} | "
            f"{m['relative_difference']:+.4f} | {m['mean_excitation']:.3f} | {m['mean_activation']:.3f} |"
        )
    rb = ", ".join(f"{q} {v:.1e}" for q, v in result["read_back_max_relative_difference"].items())
    lines += [
        "",
        f"replayed muscle state vs muscles.csv (largest difference / largest magnitude): {rb}",
        f"masses: OpenSim's computed vs ours, largest relative difference "
        f"{result['mass_max_relative_difference_opensim_computed']:.1e}; system mass "
        f"{result['opensim_system_mass_kg']:.4f} kg vs metadata {result['body_mass_kg']:.4f} kg; "
        f"fibre-length curve largest difference {result['length_curve_max_difference']:.1e}; "
        f"matched probe minus its terms {result['matched_total_minus_sum_of_term_probes_W']:.1e} W",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path, help="a `musclewalk simulate` output folder")
    ap.add_argument("-o", "--out", type=Path, help="also write the numbers to this JSON file")
    args = ap.parse_args(argv)
    if args.out is not None and args.out.is_dir():
        ap.error(f"{args.out}: is a directory")
    try:
        result = crosscheck(load_run(args.run))
    except RunError as exc:
        print(f"{ap.prog}: error: {exc}", file=sys.stderr)
        return 2
    print(table(result))
    if args.out is not None:
        tmp = args.out.with_name(args.out.name + ".tmp")
        tmp.write_text(json.dumps(result, indent=1) + "\n")
        tmp.replace(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
