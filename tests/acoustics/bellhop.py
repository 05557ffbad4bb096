#!/usr/bin/env python3
"""BELLHOP as a reference for the beam tracer (src/model/beam/): reads one case as JSON on
stdin, writes it as a BELLHOP environment (.env, and .bty when the case has bathymetry), runs
the Fortran `bellhop.exe` (aubellhop's, unpacked by `scripts/setup --test` into
.venv-test/aubellhop/) or the `pelagic` port, and prints the result as JSON on stdout.

    .venv-test/bin/python tests/acoustics/bellhop.py [--engine fortran|pelagic] [--run NAME]
        [--keep DIR] < case.json

The case (SI units but for the bathymetry's ranges, in km as a .bty holds them):

    {"title": "...", "frequency_hz": 250,
     "ssp": [[depth_m, speed_mps], ...],               # from 0 down to the deepest bottom
     "ssp_ranges_km": [r0, r1, ...],                    # optional: a range-dependent profile
     "bottom": {"speed_mps": 1590, "density_ratio": 1.2, "attenuation_db_per_wavelength": 0.5},
     "bathymetry": [[range_km, depth_m], ...],          # optional: a range-dependent bottom
     "thorp": false,                                    # Thorp volume absorption
     "source_depth_m": 36,
     "receiver_depths_m": [...], "receiver_ranges_m": [...],
     "run": "arrivals" | "incoherent" | "coherent",
     "beams": 400, "angles_deg": [-20, 20],             # launch fan, positive down
     "step_m": 0,                                       # optional: 0 is BELLHOP's automatic step
     "apply_absorption": false,                         # arrivals: fold Im(delay) into amplitude
     "merge_adjacent": false,                           # arrivals: one per eigenray (below)
     "runs": {"NAME": {...}}}                           # optional: named sets of keys (--run)

With `ssp_ranges_km` each `ssp` row holds a depth and one speed per range (`[depth_m, c(r0),
c(r1), ...]`): BELLHOP's `Q` option, the matrix written to a `.ssp` file and the first column
in the `.env` (BELLHOP stops a ray that leaves the columns' ranges, so they must span the
receivers). A list of receiver depths or ranges may be written {"linspace": [first, last, count]}. With
`--run NAME` the keys of `runs[NAME]` replace the case's own (so one case file holds the
environment once, with its field and arrivals runs).

The output: for "arrivals", `{"engine", "receivers": [{"range_m", "depth_m", "arrivals": [
{"amplitude", "phase_deg", "delay_s", "delay_imag_s", "launch_deg", "arrival_deg",
"surface_bounces", "bottom_bounces"}, ...]}, ...]}` (receivers by depth, then range). BELLHOP's
arrival amplitudes exclude volume absorption, which sits in the imaginary part of the delay; with
`apply_absorption` each amplitude is multiplied by exp(−2πf·|Im τ|). A geometric hat beam adds
to a receiver its share of the ray's amplitude, so an eigenray reaches the arrivals file as the
two (or more) beams that bracket it, each with part of the amplitude; with `merge_adjacent`
arrivals of launch angles at most 1.5 fan steps apart with the same surface and bottom bounce
counts and delays within 0.1 ms merge into one: amplitudes summed, delay, launch and arrival
angles and Im(delay) their amplitude-weighted means, the phase the stronger's. For a transmission-loss run,
`{"engine", "ranges_m", "depths_m", "tl_db": [[...per range...] per depth]}` (null where
nothing arrives). Errors go to stderr with exit status 1.
"""
import argparse
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BELLHOP_EXE = os.path.join(ROOT, ".venv-test", "aubellhop", "aubellhop", "bin", "bellhop.exe")

RUN_TYPES = {"arrivals": "A", "incoherent": "I", "coherent": "C"}


def fail(msg):
    print(f"bellhop.py: {msg}", file=sys.stderr)
    sys.exit(1)


def numbers(values):
    return " ".join(repr(float(v)) for v in values)


def write_env(case, base):
    """Writes base.env (and base.bty) for the case."""
    ssp = case["ssp"]
    ssp_ranges = case.get("ssp_ranges_km")
    bottom = case["bottom"]
    bathy = case.get("bathymetry")
    deepest = ssp[-1][0]
    thorp = "T" if case.get("thorp") else " "
    run = RUN_TYPES.get(case["run"])
    if run is None:
        fail(f"run {case['run']!r} is not one of {sorted(RUN_TYPES)}")
    ranges_km = [r / 1000.0 for r in case["receiver_ranges_m"]]
    depths = case["receiver_depths_m"]
    max_range_km = max(ranges_km)
    if bathy:
        max_range_km = max(max_range_km, max(p[0] for p in bathy))
    lines = [
        "'" + str(case.get("title", "case")).replace("'", "")[:78] + "'",
        repr(float(case["frequency_hz"])),
        "1",
        f"'{'Q' if ssp_ranges else 'C'}VW{thorp}'",
        f"0 0.0 {float(deepest)!r}",
    ]
    lines += [f"{float(row[0])!r} {float(row[1])!r} /" for row in ssp]
    lines += [
        "'A*' 0.0" if bathy else "'A' 0.0",
        f"{float(deepest)!r} {float(bottom['speed_mps'])!r} 0.0 "
        f"{float(bottom['density_ratio'])!r} {float(bottom['attenuation_db_per_wavelength'])!r} /",
        "1",
        f"{float(case['source_depth_m'])!r} /",
        str(len(depths)),
        numbers(depths) + " /",
        str(len(ranges_km)),
        numbers(ranges_km) + " /",
        f"'{run}'",
        str(int(case["beams"])),
        numbers(case["angles_deg"]) + " /",
        f"{float(case.get('step_m', 0.0))!r} {float(deepest) * 1.1 + 1.0!r} "
        f"{max_range_km * 1.01 + 0.001!r}",
    ]
    with open(base + ".env", "w") as f:
        f.write("\n".join(lines) + "\n")
    if ssp_ranges:
        if any(len(row) != len(ssp_ranges) + 1 for row in ssp):
            fail(f"every ssp row needs a depth and {len(ssp_ranges)} speeds (ssp_ranges_km)")
        with open(base + ".ssp", "w") as f:
            f.write(f"{len(ssp_ranges)}\n")
            f.write(numbers(ssp_ranges) + "\n")
            for row in ssp:
                f.write(numbers(row[1:]) + "\n")
    if bathy:
        with open(base + ".bty", "w") as f:
            f.write("'L'\n")
            f.write(f"{len(bathy)}\n")
            for r, z in bathy:
                f.write(f"{float(r)!r} {float(z)!r}\n")


def read_arr(path):
    """BELLHOP's ASCII arrivals file (the 2D layout with its '2D' header, or the older one)."""
    with open(path) as f:
        tokens = f.read().split()
    pos = 0

    def take():
        nonlocal pos
        pos += 1
        return tokens[pos - 1]

    first = tokens[0].strip("'")
    if first == "2D":
        take()
    freq = float(take())
    nsd = int(take())
    sds = [float(take()) for _ in range(nsd)]
    nrd = int(take())
    rds = [float(take()) for _ in range(nrd)]
    nr = int(take())
    rrs = [float(take()) for _ in range(nr)]
    receivers = []
    for _ in range(nsd):
        take()  # the most arrivals at any receiver
        for rd in rds:
            for rr in rrs:
                n = int(take())
                arr = []
                for _ in range(n):
                    amp, ph, dre, dim, sa, ra, tb, bb = (take() for _ in range(8))
                    arr.append({
                        "amplitude": float(amp), "phase_deg": float(ph),
                        "delay_s": float(dre), "delay_imag_s": float(dim),
                        "launch_deg": float(sa), "arrival_deg": float(ra),
                        "surface_bounces": int(float(tb)), "bottom_bounces": int(float(bb)),
                    })
                receivers.append({"range_m": rr, "depth_m": rd, "arrivals": arr})
        break  # one source
    return freq, receivers


def read_shd(path):
    """BELLHOP's binary shade file: (ranges, depths, pressure[depth][range] as complex)."""
    with open(path, "rb") as f:
        data = f.read()
    recl = struct.unpack_from("<i", data, 0)[0] * 4
    rec = lambda k: k * recl
    nfreq, ntheta, nsx, nsy, nsz, nrz, nrr = struct.unpack_from("<7i", data, rec(2))
    rz = struct.unpack_from(f"<{nrz}f", data, rec(8))
    rr = struct.unpack_from(f"<{nrr}f", data, rec(9))
    p = []
    for irz in range(nrz):
        vals = struct.unpack_from(f"<{2 * nrr}f", data, rec(10 + irz))
        p.append([complex(vals[2 * i], vals[2 * i + 1]) for i in range(nrr)])
    return list(rr), list(rz), p


def merge_adjacent(arrivals, step_deg):
    """Merges the beams that bracket one eigenray (see the module's docs)."""
    out = []
    for a in sorted(arrivals, key=lambda a: a["launch_deg"]):
        match = None
        for m in reversed(out):
            if (m["surface_bounces"] == a["surface_bounces"]
                    and m["bottom_bounces"] == a["bottom_bounces"]
                    and abs(m["_last_launch"] - a["launch_deg"]) <= 1.5 * step_deg
                    and abs(m["delay_s"] - a["delay_s"]) < 1e-4):
                match = m
                break
        if match is None:
            out.append(dict(a, _last_launch=a["launch_deg"], _max=a["amplitude"]))
            continue
        wa, wb = match["amplitude"], a["amplitude"]
        total = wa + wb
        if total > 0.0:
            for k in ("delay_s", "delay_imag_s", "launch_deg", "arrival_deg"):
                match[k] = (wa * match[k] + wb * a[k]) / total
        if wb > match["_max"]:
            match["phase_deg"] = a["phase_deg"]
            match["_max"] = wb
        match["amplitude"] = total
        match["_last_launch"] = a["launch_deg"]
    for m in out:
        del m["_last_launch"], m["_max"]
    return sorted(out, key=lambda a: a["delay_s"])


def tl_of(p):
    a = abs(p)
    return -20.0 * math.log10(a) if a > 0.0 and math.isfinite(a) else None


def run_fortran(case, base):
    if not os.access(BELLHOP_EXE, os.X_OK):
        fail(f"{BELLHOP_EXE} is missing: run scripts/setup --test")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run([BELLHOP_EXE, base], capture_output=True, text=True, env=env,
                          cwd=os.path.dirname(base))
    if proc.returncode != 0:
        fail(f"bellhop.exe exited {proc.returncode}: {proc.stderr.strip()[-400:]}")
    if case["run"] == "arrivals":
        if not os.path.exists(base + ".arr"):
            fail(f"bellhop.exe wrote no .arr; its .prt ends: {tail(base + '.prt')}")
        return read_arr(base + ".arr")[1]
    if not os.path.exists(base + ".shd"):
        fail(f"bellhop.exe wrote no .shd; its .prt ends: {tail(base + '.prt')}")
    rr, rz, p = read_shd(base + ".shd")
    return rr, rz, p


def tail(path):
    try:
        with open(path) as f:
            return f.read()[-400:]
    except OSError:
        return "(no .prt)"


def run_pelagic(case, base):
    import numpy as np
    import pelagic.bellhop

    result = pelagic.bellhop.load(base + ".env").run()
    if case["run"] == "arrivals":
        a = result.arrivals
        ro = np.asarray(a.receiver_offset)
        ao = np.asarray(a.arrival_offset)
        receivers = []
        for k in range(int(ro[1] - ro[0])):
            lo, hi = int(ao[k]), int(ao[k + 1])
            arr = [{
                "amplitude": float(a.amplitude[i]),
                "phase_deg": math.degrees(float(a.phase_radians[i])),
                "delay_s": float(a.travel_time_s[i]),
                "delay_imag_s": float(a.attenuation_time_s[i]),
                "launch_deg": float(a.source_angle_degrees[i]),
                "arrival_deg": float(a.receiver_angle_degrees[i]),
                "surface_bounces": int(a.top_bounces[i]),
                "bottom_bounces": int(a.bottom_bounces[i]),
            } for i in range(lo, hi)]
            receivers.append({"range_m": float(a.ranges_m[k]), "depth_m": float(a.depths_m[k]),
                              "arrivals": arr})
        return receivers
    fld = result.field
    p = np.asarray(fld.pressure)[0]
    return list(map(float, fld.ranges_m)), list(map(float, fld.depths_m)), p.tolist()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", choices=["fortran", "pelagic"], default="fortran")
    ap.add_argument("--run", help="apply the case's runs[RUN] keys")
    ap.add_argument("--keep", help="write the BELLHOP files into this directory and keep them")
    args = ap.parse_args()
    try:
        case = json.load(sys.stdin)
    except json.JSONDecodeError as e:
        fail(f"the case on stdin is not JSON: line {e.lineno} column {e.colno}: {e.msg}")
    if args.run is not None:
        runs = case.get("runs", {})
        if args.run not in runs:
            fail(f"the case has no run {args.run!r} (it has {sorted(runs)})")
        case.update(runs[args.run])
    for key in ("receiver_depths_m", "receiver_ranges_m"):
        v = case.get(key)
        if isinstance(v, dict):
            try:
                a, b, n = v["linspace"]
                n = int(n)
            except (KeyError, TypeError, ValueError):
                fail(f"{key} is neither a list nor {{\"linspace\": [first, last, count]}}")
            case[key] = [a + (b - a) * i / max(n - 1, 1) for i in range(n)]
    for key in ("frequency_hz", "ssp", "bottom", "source_depth_m", "receiver_depths_m",
                "receiver_ranges_m", "run", "beams", "angles_deg"):
        if key not in case:
            fail(f"the case lacks {key!r}")
    with tempfile.TemporaryDirectory() as tmp:
        directory = args.keep or tmp
        os.makedirs(directory, exist_ok=True)
        base = os.path.join(directory, "case")
        write_env(case, base)
        run = run_fortran if args.engine == "fortran" else run_pelagic
        out = run(case, base)
    if case["run"] == "arrivals":
        if case.get("apply_absorption"):
            w = 2.0 * math.pi * float(case["frequency_hz"])
            for rcv in out:
                for a in rcv["arrivals"]:
                    a["amplitude"] *= math.exp(-w * abs(a["delay_imag_s"]))
        if case.get("merge_adjacent"):
            lo, hi = case["angles_deg"]
            step = (hi - lo) / max(int(case["beams"]) - 1, 1)
            for rcv in out:
                rcv["arrivals"] = merge_adjacent(rcv["arrivals"], step)
        doc = {"engine": args.engine, "receivers": out}
    else:
        rr, rz, p = out
        doc = {"engine": args.engine, "ranges_m": rr, "depths_m": rz,
               "tl_db": [[tl_of(complex(v)) for v in row] for row in p]}
    json.dump(doc, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
