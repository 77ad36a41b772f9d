"""Rebuild reproducibility: N builds of one spec on one host, and what a gate comparing them would say.

Issue 28 asks what a rebuild of the same deployment shows: each headline figure's spread over N ≥ 5
builds, how many later builds fall inside the first build's rebuild interval (the 95 % prediction interval
page 1 states beside a repeated figure), and how many `factsheet diff`s between builds of one deployment
call a regression (the aim: none beyond the stated false-alarm rate, 5 % of diffs).

How: the spec (default: the demo's, models/smollm2-cpu.yaml) is built N times, one after another, with
`repeats` set on every capacity search (default 3), by the installed `factsheet build`, each into its own
folder; then every pair (i < j) is diffed with `factsheet diff`. Nothing else should run on the host: each
build records the host's load and a run measured on a busy host is flagged, and a flagged row never decides
a diff (it says "not decided: busy host").

Compared figures:
- capacity at SLO per workload profile: value, verdict, range, how many of the k runs at the confirmed value
  held (page 1's words, `Figure.words`);
- each figure with a rebuild interval (the repeated run's p99s, goodput, attainment): its value in each
  build, and whether build j's value lies inside build 1's interval. Only builds whose repeated run is at
  the same load (the same knob value) are compared: at another value the figure measures another load.

Usage: .venv/bin/python bench/rebuilds.py [--spec models/smollm2-cpu.yaml] [-n 5] [--repeats 3]
       [--work DIR] [--analyse-only] [--results bench/rebuilds_results.txt]
--analyse-only reads DIR/b1 … DIR/bN made before (their wall times from DIR/bK.seconds when present).
A demo build with repeats 3 takes about 10 minutes on a 2-core host: N = 5 takes about an hour.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import combinations
from pathlib import Path

import yaml

from factsheet.document.headline.figures import headline
from factsheet.document.headline.repeated import repeated
from factsheet.document.headline_model import Figure
from factsheet.document.schema import SCHEMA_VERSION, Factsheet
from probes.core.measurement import NotMeasured
from probes.load.metrics import LATENCY_METRICS, LoadMetrics

ROOT = Path(__file__).resolve().parent.parent
FACTSHEET = Path(sys.executable).parent / "factsheet"


@dataclass(frozen=True)
class Build:
    """One build's page 1, read from its factsheet."""

    name: str
    seconds: float | None
    figures: dict[str, Figure]
    restated: dict[str, Figure]  # page 1 as this tool states it (its schema's rules), from the same runs
    values: dict[str, float | None]  # each figure's run's knob value (None: not a capacity run)
    busy_runs: int
    runs: int


def _spec_with_repeats(spec: Path, repeats: int, out: Path) -> Path:
    """The spec with `repeats` on every capacity search, written beside the builds."""
    data = yaml.safe_load(spec.read_text())
    load = data["load"]
    load["capacity"]["repeats"] = repeats
    for compared in load.get("compared_workloads", []):
        compared["capacity"]["repeats"] = repeats
    path = out / "spec.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _build(spec: Path, folder: Path) -> float:
    started = time.monotonic()
    with (folder.parent / f"{folder.name}.log").open("w") as log:
        rc = subprocess.call([str(FACTSHEET), "build", str(spec), "-o", str(folder)], stdout=log, stderr=log)
    seconds = time.monotonic() - started
    (folder.parent / f"{folder.name}.seconds").write_text(f"{seconds:.1f}\n")
    if rc != 0:
        raise SystemExit(f"{folder.name}: factsheet build exited {rc}; see {folder.name}.log")
    return seconds


def _pointer(doc: dict, pointer: str):
    node = doc
    for part in pointer.strip("/").split("/"):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def _run_value(doc: dict, source: str) -> float | None:
    """The knob value of the capacity run a figure's source points into (None: not a capacity run)."""
    path = source.removesuffix("/metrics")
    if "/result/points/" not in path and "/repeats/runs/" not in path:
        return None
    node = _pointer(doc, path)
    return node.get("value") if "value" in node else node.get("point", {}).get("value")


def _read(folder: Path) -> Build:
    text = (folder / "factsheet.json").read_text()
    doc, sheet = json.loads(text), Factsheet.model_validate_json(text)
    figures = {f.id: f for f in sheet.headline.figures}
    now = sheet.model_copy(update={"schema_version": SCHEMA_VERSION})
    restated = {f.id: f for f in headline(now).figures}
    # A figure with a rebuild interval is of its repeated run: the value that run was at.
    values = {
        id: _run_value(doc, f.rebuild.sources[0] if f.rebuild else f.source) for id, f in figures.items()
    }
    loads = [h for h in _host_loads(doc)]
    seconds = folder.parent / f"{folder.name}.seconds"
    return Build(folder.name, float(seconds.read_text()) if seconds.exists() else None, figures, restated, values,
                 sum(1 for h in loads if h.get("busy")), len(loads))  # fmt: skip


def _host_loads(doc: dict):
    """Every run's host load the factsheet states (sweep points, searches, repeats)."""
    load = doc.get("load") or {}
    for p in load.get("points", []):
        if isinstance(p.get("host_load"), dict):
            yield p["host_load"]
    caps = [load.get("capacity")] + [c.get("capacity") for c in load.get("compared_workloads", [])]
    for cap in caps:
        if not isinstance(cap, dict) or "result" not in cap:
            continue
        yield from (h for h in cap.get("host_load", []) if isinstance(h, dict) and "busy" in h)
        for r in (cap.get("repeats") or {}).get("runs", []):
            if isinstance(r.get("host_load"), dict):
                yield r["host_load"]


def _diff(a: Path, b: Path) -> tuple[int, dict]:
    with tempfile.TemporaryDirectory() as out:
        rc = subprocess.call(
            [str(FACTSHEET), "diff", str(a / "factsheet.json"), str(b / "factsheet.json"), "-o", out],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        return rc, json.loads((Path(out) / "diff.json").read_text())


def _fmt(x: float | None, digits: int | None = None) -> str:
    """A value for the results; by default 1 decimal, 3 below 10 (a rate, a share: 0.9 says nothing)."""
    if x is None:
        return "—"
    return f"{x:,.{digits if digits is not None else (3 if abs(x) < 10 else 1)}f}"


def _against(
    first: Build, later: list[Build], out: list[str], every: bool = True, restated: bool = False
) -> tuple[int, int]:
    """How many of the later builds' values at first's load lie inside first's rebuild intervals, of how
    many were at that load. Each comparison is written to `out`; with every=False only the comparable ones,
    on one line each. `restated`: first's intervals as this tool states them, not as the build did."""
    inside = total = 0
    for id, f in (first.restated if restated else first.figures).items():
        if f.rebuild is None or f.rebuild.interval is None:
            continue
        rb, at = f.rebuild, first.values.get(id)
        lo, hi = rb.interval.lower, rb.interval.upper
        if every:
            out.append(f"{id} ({rb.of}) at {at if at is not None else '—'}: {first.name} repeats "
                       f"{', '.join(_fmt(v) for v in rb.values)}; interval [{_fmt(lo)}, {_fmt(hi)}]")  # fmt: skip
        for b in later:
            g = b.figures.get(id)
            if g is None or b.values.get(id) != at:
                if every:
                    out.append(f"  {b.name}: not comparable (its run is at {b.values.get(id)}, not {at})")
                continue
            if g.rebuild is not None:
                v = g.rebuild.values[0]
            elif id.startswith("capacity_at_slo"):  # its value is users, the interval the run's p99 in ms
                if every:
                    out.append(f"  {b.name}: not comparable (its capacity has no repeated run)")
                continue
            else:
                v = g.value
            ok = v is not None and lo is not None and hi is not None and lo <= v <= hi
            inside, total = inside + ok, total + 1
            verdict = "inside" if ok else "OUTSIDE"
            if every:
                out.append(f"  {b.name}: {_fmt(v)} {verdict}")
            else:
                out.append(
                    f"{first.name} → {b.name}, {id} at {at:g}: {_fmt(v)} {verdict} [{_fmt(lo)}, {_fmt(hi)}]"
                )
    return inside, total


def _host_speeds(builds: list[Build], folders: list[Path]) -> list[str]:
    """The host's speed before each confirmation run and repeat (schema >= 1.12.0): what diff compares at."""
    out = [
        "## host speed: the reference kernel before each confirmation run and repeat (ms; the build's median)"
    ]
    for folder, b in zip(folders, builds, strict=True):
        doc = json.loads((folder / "factsheet.json").read_text())
        times = [h["speed"]["reference_ms"] for h in _host_loads(doc) if isinstance(h.get("speed"), dict)]
        if times:
            runs = ", ".join(f"{t:.2f}" for t in times)
            out.append(f"{b.name}: median {statistics.median(times):.2f} over {len(times)} runs: {runs}")
        else:
            out.append(f"{b.name}: not timed (a factsheet before schema 1.12.0)")
    return [*out, ""]


RUN_FIGURES = [f"{m}.p{q}" for m in LATENCY_METRICS for q in (50, 99)] + ["goodput", "slo_attainment"]


def _figure(m: LoadMetrics, name: str) -> float | None:
    if name in ("goodput", "slo_attainment"):
        return getattr(m, name)
    metric, q = name.rsplit(".p", 1)
    return getattr(m, metric).p(float(q))


def _repeats_by_search(folder: Path) -> dict[str, tuple[float, list[LoadMetrics]]]:
    """Each capacity search's repeated run: its knob value and the k runs' metrics, by the search's profile."""
    sheet = Factsheet.model_validate_json((folder / "factsheet.json").read_text())
    load = sheet.load
    if isinstance(load, NotMeasured):
        return {}
    sections = [("synthetic", load.capacity)] + [
        (c.workload.profile, c.capacity) for c in load.compared_workloads
    ]
    out = {}
    for name, section in sections:
        rep = repeated(section, "")
        if rep is not None and not isinstance(section, NotMeasured):
            out[name] = (section.result.points[rep.index].value, [r.metrics for r in rep.runs])
    return out


def between_within(folders: list[Path]) -> list[str]:
    """One-way random effects over the builds whose repeated run is at one load: does a rebuild move a
    figure further than the k repeats within one build spread it? Within: the pooled variance of the
    repeats (MSW); between: MSB = k · variance of the build means; the between-build component
    σ_b² = max(0, (MSB − MSW) / k), and F = MSB / MSW with its p-value (builds as groups). Welch's test on two
    builds' repeats assumes σ_b = 0; page 1's rebuild interval too."""
    from scipy.stats import f as f_dist

    out = [
        "## between builds against within one build (one-way random effects, the builds at the modal load)"
    ]
    per = [_repeats_by_search(f) for f in folders]
    for search in sorted({s for p in per for s in p}):
        got = [(folders[i].name, p[search]) for i, p in enumerate(per) if search in p]
        loads = [v for _, (v, _) in got]
        at = max(set(loads), key=loads.count)
        groups = [(name, runs) for name, (v, runs) in got if v == at]
        k = min(len(r) for _, r in groups)
        g = len(groups)
        out.append(f"{search} at {at:g}: {g} builds ({', '.join(n for n, _ in groups)}), {k} runs each")
        if g < 2 or k < 2:
            out.append("  too few builds at one load")
            continue
        for name in RUN_FIGURES:
            values = [[_figure(m, name) for m in runs[:k]] for _, runs in groups]
            if any(v is None for row in values for v in row):
                continue
            means = [statistics.fmean(row) for row in values]
            msw = statistics.fmean([statistics.variance(row) for row in values])
            msb = k * statistics.variance(means)
            sb = max(0.0, (msb - msw) / k) ** 0.5
            f = msb / msw if msw > 0 else float("inf")
            p = float(f_dist.sf(f, g - 1, g * (k - 1))) if msw > 0 else 0.0
            grand = statistics.fmean(means)
            sw = msw**0.5
            rw, rb = (f"{100 * x / grand:.1f} %" if grand else "—" for x in (sw, sb))
            out.append(
                f"  {name}: build means {', '.join(_fmt(x) for x in means)}; sd within {_fmt(sw)} ({rw}), "
                f"between-build sd {_fmt(sb)} ({rb}); F {f:.2f}, p {p:.3g}"
            )
    return [*out, ""]


def _diff_pairs(builds: list[Build], folders: list[Path]) -> list[str]:
    """`factsheet diff` of every pair of builds (old → new): its verdict, exit code and what decided it."""
    out: list[str] = []
    out.append("## factsheet diff, every pair (old → new)")
    verdicts: dict[str, int] = {}
    for (i, a), (j, b) in combinations(enumerate(folders), 2):
        rc, report = _diff(a, b)
        verdicts[report["verdict"]] = verdicts.get(report["verdict"], 0) + 1
        regressed = [f"{f['figure']} ({f['scope']})" for f in report["figures"] if f.get("regression")]
        held: dict[str, list[str]] = {}  # why (busy host, no between-run noise) → rows
        for f in report["figures"]:
            if f.get("not_decided"):
                held.setdefault(f["not_decided"], []).append(f"{f['figure']} ({f['scope']})")
        between = sum(
            1
            for f in report["figures"]
            if f.get("old_repeats") is not None and f["status"] == "compared" and not f["indicative"]
        )
        between += sum(1 for f in report["figures"] if f.get("capacity_check"))
        words = f"{builds[i].name} → {builds[j].name}: {report['verdict']} (exit {rc}); {between} row(s) decided by repeats"
        if regressed:
            words += f"; regression: {', '.join(regressed)}"
        # Rows the repeats found beyond noise, worse or better: how far each moved, against what level.
        moved = [
            f"{f['figure']} {100 * f['change_rel']:+.1f} % (p {f['noise']['p_value']:.2g} < {f['noise']['alpha']:.2g})"
            for f in report["figures"]
            if f.get("old_repeats") is not None and f.get("beyond_noise") and f.get("change_rel") is not None
        ]
        if moved:
            words += f"; beyond between-run noise: {', '.join(moved)}"
        for f in report["figures"]:  # a capacity that fell, decided at the load it failed
            if (c := f.get("capacity_check")) and c.get("noise"):
                words += (
                    f"; {f['scope']} {f['old']:g} → {f['new']:g}: {c['figure']} at {c['new_value']:g} "
                    f"p {c['noise']['p_value']:.2g} vs alpha {c['noise']['alpha']:.2g}"
                )
        for why, rows in held.items():
            words += f"; not decided ({why}): {', '.join(rows)}"
        out.append(words)
    n = sum(verdicts.values())
    out.append("verdicts: " + ", ".join(f"{k} {v} of {n}" for k, v in sorted(verdicts.items())))
    return out


def analyse(builds: list[Build], folders: list[Path]) -> list[str]:
    out: list[str] = []
    first = builds[0]
    out.append("## builds")
    for b in builds:
        out.append(f"{b.name}: {_fmt(b.seconds, 0)} s, {b.busy_runs} of {b.runs} runs on a busy host")
    out.append("")
    out += _host_speeds(builds, folders)
    out.append("## capacity at SLO (page 1's words)")
    for id in [i for i in first.figures if i.startswith("capacity_at_slo")]:
        out.append(f"{id}:")
        vals = []
        for b in builds:
            f = b.figures.get(id)
            out.append(f"  {b.name}: {f.words() if f else 'absent'}")
            if f and f.value is not None:
                vals.append(f.value)
        if vals:
            out.append(f"  spread: {min(vals):g} … {max(vals):g} ({len(set(vals))} distinct of {len(vals)})")
    out.append("")
    out.append("## page 1's other figures across builds (the run each rests on, knob value in brackets)")
    for id in [i for i in first.figures if not i.startswith("capacity_at_slo")]:
        got = [(b.figures[id].value, b.values.get(id)) for b in builds if id in b.figures]
        known = [v for v, _ in got if v is not None]
        spread = ""
        if len(known) >= 2:
            mean = statistics.fmean(known)
            spread = f"; mean {_fmt(mean, 2)}, sd {_fmt(statistics.stdev(known), 2)}"
            spread += f", range {_fmt(min(known), 2)} … {_fmt(max(known), 2)}"
        runs = ", ".join(f"{_fmt(v, 2)} [{at:g}]" if at is not None else _fmt(v, 2) for v, at in got)
        out.append(f"{id}: {runs}{spread}")
    out.append("")
    out.append("## figures with a rebuild interval: build 1's interval against the later builds")
    inside, total = _against(builds[0], builds[1:], out)
    out.append(f"inside build 1's rebuild interval: {inside} of {total} comparable values")
    out.append("")
    # Build 1's repeated run is often at another load than a later build's (their answers differ), so
    # every earlier build's interval is tried too: each pair at one load is one more test of the interval.
    out.append("## every earlier build's interval against each later build at the same load")
    inside = total = 0
    for i, earlier in enumerate(builds[:-1]):
        got, of = _against(earlier, builds[i + 1 :], out, every=False)
        inside, total = inside + got, total + of
    out.append(f"inside the earlier build's rebuild interval: {inside} of {total} comparable pairs")
    out.append("")
    # The builds state the intervals of their own schema; the same runs under this tool's rules (e.g. 1.9.0's
    # guards) show what the change does to the same evidence.
    out.append(
        f"## the same, with the intervals this tool states from the same runs (schema {SCHEMA_VERSION})"
    )
    inside = total = 0
    for i, earlier in enumerate(builds[:-1]):
        got, of = _against(earlier, builds[i + 1 :], out, every=False, restated=True)
        inside, total = inside + got, total + of
    out.append(f"inside the earlier build's rebuild interval: {inside} of {total} comparable pairs")
    out.append("")
    out += between_within(folders)
    out += _diff_pairs(builds, folders)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spec", type=Path, default=ROOT / "models" / "smollm2-cpu.yaml")
    ap.add_argument("-n", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument(
        "--work", type=Path, default=None, help="folder for the builds (default: a new temporary one)"
    )
    ap.add_argument("--analyse-only", action="store_true", help="read WORK/b1 … WORK/bN built before")
    ap.add_argument("--results", type=Path, default=ROOT / "bench" / "rebuilds_results.txt")
    args = ap.parse_args()

    def refuse(why: str) -> None:  # bad input: one line, exit 2
        ap.exit(2, f"rebuilds.py: {why}\n")

    if args.n < 2:
        refuse("-n: at least 2 builds")
    if args.repeats < 3:
        refuse(f"--repeats: {args.repeats}: at least 3 (a rebuild interval needs k >= 3 runs)")
    if not args.analyse_only and not args.spec.is_file():
        refuse(f"--spec: {args.spec.name}: no such file")
    if args.analyse_only and args.work is None:
        refuse("--analyse-only: needs --work DIR, the folder of the builds made before")
    work = args.work or Path(tempfile.mkdtemp(prefix="rebuilds-"))
    if work.exists() and not work.is_dir():
        refuse(f"--work: {work.name}: not a folder")
    work.mkdir(parents=True, exist_ok=True)
    folders = [work / f"b{k}" for k in range(1, args.n + 1)]
    missing = [f.name for f in folders if args.analyse_only and not (f / "factsheet.json").is_file()]
    if missing:
        refuse(f"--analyse-only: no factsheet.json in {', '.join(missing)} of --work")
    if not args.analyse_only:
        spec = _spec_with_repeats(args.spec, args.repeats, work)
        for folder in folders:
            if folder.exists():
                shutil.rmtree(folder)
            print(f"{folder.name}: building …", flush=True)
            print(f"{folder.name}: {_build(spec, folder):.0f} s", flush=True)
    builds = [_read(f) for f in folders]
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()  # fmt: skip
    # No machine path in the results: a folder given as an absolute path is named DIR.
    command = "bench/rebuilds.py " + " ".join("DIR" if a.startswith("/") else a for a in sys.argv[1:])
    head = [
        f"# {command.strip()}",
        f"# {datetime.now(UTC):%Y-%m-%dT%H:%MZ}, commit {commit}, {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.2f} at the end; spec {args.spec.name} with repeats {args.repeats} on every capacity search",
        "",
    ]
    lines = head + analyse(builds, folders)
    args.results.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
