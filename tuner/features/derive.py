"""Derive a feature model's cross-tree constraints from the installed library, and write them into the model.

For every strategy (child of the root's first alternative group, or the root itself) and every option level,
then every pair of option levels, the smallest configuration containing them that the hand-written
constraints allow is turned into keyword arguments and checked by the library itself (library_check.py,
run with the serving environment's python). A rejected single becomes `Strategy => !level`; a rejected
pair `Strategy => !(a & b)`; both are folded to a whole option (`!TopK`) when all its levels are rejected,
and to all strategies when every strategy rejects them. A rejection that only the strict check makes
(the option has no effect under that strategy: the library would warn) is marked `no effect`. Interactions
of three or more options are not probed: the sample test checks sampled configurations against the library.

    python -m tuner.features.derive generation_config [--python .venv-vllm/bin/python]
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import subprocess
import sys
from importlib import resources
from pathlib import Path

from probes.core.settings import settings
from tuner.features.configs import BUNDLED, kwargs_of, library_of
from tuner.features.space import FeatureSpace
from tuner.features.uvl import FeatureModel, parse_uvl

MARKER = "    // derived"


def serving_python(explicit: str | None = None) -> str | None:
    """The serving environment's python (which has torch/transformers/vLLM), or None when absent."""
    cand = explicit or settings().vllm_python or ".venv-vllm/bin/python"
    return str(Path(cand).absolute()) if Path(cand).exists() else None


def check_with_library(model: FeatureModel, kwargs_list: list[dict], python: str) -> tuple[dict, list[dict]]:
    """The library's verdict on each configuration's keyword arguments (one subprocess for all)."""
    library, _ = library_of(model)
    script = resources.files("tuner.features").joinpath("library_check.py").read_text(encoding="utf-8")
    payload = {
        "library": library,
        "configs": kwargs_list,
        "max_model_len": model.root.attributes.get("max_model_len", 2048),
    }
    proc = subprocess.run(
        [python, "-c", script], input=json.dumps(payload), capture_output=True, text=True, timeout=1800
    )
    if proc.returncode != 0:
        raise RuntimeError(f"library check failed: {proc.stderr.strip().splitlines()[-1:]}")
    last = proc.stdout.strip().splitlines()[-1]
    data = json.loads(last)
    return data["versions"], data["results"]


def _strategies(model: FeatureModel) -> list[str]:
    for g in model.root.groups:
        for f in g.children:
            for gg in f.groups:
                if gg.kind == "alternative" and f.attributes.get("abstract"):
                    return [c.name for c in gg.children]
    return [model.root.name]


def _levels(model: FeatureModel) -> dict[str, list[str]]:
    """Option (feature with a param) -> its level features (itself when it carries a value)."""
    out: dict[str, list[str]] = {}
    for f in model.features():
        if "param" in f.attributes:
            leaves = [c.name for c in f.children if "value" in c.attributes]
            out[f.name] = leaves or [f.name]
    return out


def derive(model: FeatureModel, python: str) -> tuple[dict, list[tuple[str, str]]]:
    """(library versions, [(constraint text, reason)]) derived from the library's verdicts."""
    space = FeatureSpace(model)
    strategies = _strategies(model)
    options = _levels(model)
    level_option = {lv: opt for opt, lvs in options.items() for lv in lvs}

    versions: dict = {}

    def probe(cases: list[tuple[str, tuple[str, ...]]], u, completions: int = 0) -> dict:
        """The library's verdict on each case's smallest completion (or on `completions` random ones)."""
        feasible, kws = [], []
        rng = random.Random(0)
        for s, lits in cases:
            given = {s: True, **dict.fromkeys(lits, True)}
            if space.restrict(u, given) != space.bdd.false:
                configs = space.uniform(rng, completions, given) if completions else [space.pick_min(given)]
                for config in configs:
                    feasible.append((s, lits))
                    kws.append(kwargs_of(model, config))
        got, results = check_with_library(model, kws, python) if kws else ({}, [])
        versions.update(got)
        verdict: dict = {}
        for case, res in zip(feasible, results, strict=True):
            if case not in verdict or res["ok"]:  # one accepted completion clears the case
                verdict[case] = res
        return verdict

    # each strategy alone (its smallest configuration): a strategy the library rejects is dead
    alone = probe([(s, ()) for s in strategies], space.root)
    dead = [(f"!{s}", _reason([r])) for (s, _), r in alone.items() if not r["ok"]]
    strategies = [s for s in strategies if alone.get((s, ()), {"ok": False})["ok"]]
    # singles
    singles = probe([(s, (lv,)) for s in strategies for lv in level_option], space.root)
    rejected1 = {case: r for case, r in singles.items() if not r["ok"]}
    # a single rejected only through the rest of its smallest completion is an interaction, left to the pairs
    again = probe(list(rejected1), space.root, completions=16)
    rejected1 = {case: r for case, r in rejected1.items() if not again.get(case, r)["ok"]}
    u = space.root
    for (s, (lv,)), _ in rejected1.items():
        u &= ~(space.v(s) & space.v(lv))
    # pairs of levels of different options, under what the singles left
    pairs = [
        (s, (a, b))
        for s in strategies
        for a, b in itertools.combinations(level_option, 2)
        if level_option[a] != level_option[b]
    ]
    doubles = probe(pairs, u)
    rejected2 = {case: r for case, r in doubles.items() if not r["ok"]}
    again = probe(list(rejected2), u, completions=16)
    rejected2 = {case: r for case, r in rejected2.items() if not again.get(case, r)["ok"]}
    folded = _fold(strategies, options, level_option, singles, rejected1, doubles, rejected2)
    return versions, dead + folded


def _reason(results: list[dict]) -> str:
    kind = "no effect (strict check only)" if all(r["strict_only"] for r in results) else "rejected"
    return f"{kind}: {results[0]['error'][:160]}"


def _fold(strategies, options, level_option, singles, rejected1, doubles, rejected2) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    reason = _reason

    # singles: by strategy, folded to whole options, then to all strategies
    by_opt: dict[tuple[str, str], list] = {}
    for (s, (lv,)), r in rejected1.items():
        by_opt.setdefault((s, level_option[lv]), []).append((lv, r))
    grouped: dict[tuple[str, ...], list] = {}  # (what) -> [(strategy, results)]
    for (s, opt), items in by_opt.items():
        lvs = [lv for lv, _ in items]
        what = (opt,) if sorted(lvs) == sorted(options[opt]) else tuple(sorted(lvs))
        grouped.setdefault(what, []).append((s, [r for _, r in items]))
    for what, per_s in sorted(grouped.items()):
        tested = {s for (s, (lv,)) in singles if lv in what or level_option[lv] in what}
        ss = sorted(s for s, _ in per_s)
        rhs = " & ".join(f"!{w}" for w in what)
        results = [r for _, rs in per_s for r in rs]
        if set(ss) >= tested and len(ss) > 1:
            out.append((rhs, reason(results)))
        else:
            lhs = ss[0] if len(ss) == 1 else "(" + " | ".join(ss) + ")"
            out.append((f"{lhs} => {rhs}" if len(what) == 1 else f"{lhs} => ({rhs})", reason(results)))
    # pairs: folded to option pairs when every level pair of the two options is rejected
    by_pair: dict[tuple[str, str, str], list] = {}
    for (s, (a, b)), r in rejected2.items():
        by_pair.setdefault((s, level_option[a], level_option[b]), []).append(((a, b), r))
    lines: dict[str, list] = {}
    for (s, oa, ob), items in sorted(by_pair.items()):
        tested = [
            ab for (ss, ab) in doubles if ss == s and level_option[ab[0]] == oa and level_option[ab[1]] == ob
        ]
        if len(items) == len(tested):
            lines.setdefault(f"!({oa} & {ob})", []).append((s, [r for _, r in items]))
        else:
            for (a, b), r in items:
                lines.setdefault(f"!({a} & {b})", []).append((s, [r]))
    for body, per_s in lines.items():
        ss = sorted(s for s, _ in per_s)
        results = [r for _, rs in per_s for r in rs]
        prefix = (
            ""
            if len(ss) == len(strategies)
            else (ss[0] if len(ss) == 1 else "(" + " | ".join(ss) + ")") + " => "
        )
        out.append((prefix + body, reason(results)))
    return out


def write_derived(text: str, versions: dict, derived: list[tuple[str, str]]) -> str:
    """The model text with its derived block (after the `// derived` marker) and version record replaced."""
    head = text.split(MARKER)[0].rstrip("\n")
    lib, ver = next(iter(versions.items())) if versions else ("", "")
    head = _set_root_attr(head, "library_version", ver)
    block = [MARKER + f" from {lib} {ver} by `python -m tuner.features.derive`"]
    for c, why in derived:
        block.append(f"    {c}    // {why}")
    return head + "\n" + "\n".join(block) + "\n"


def _set_root_attr(text: str, key: str, value: str) -> str:
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if (
            line.startswith("    ")
            and not line.startswith("     ")
            and "{" in line
            and "features" not in line
        ):
            body = line[line.index("{") + 1 : line.rindex("}")]
            attrs = [a.strip() for a in body.split(",") if a.strip() and not a.strip().startswith(key + " ")]
            attrs.append(f"{key} '{value}'")
            lines[i] = line[: line.index("{")] + "{" + ", ".join(attrs) + "}"
            break
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", choices=sorted(BUNDLED))
    ap.add_argument("--python", default=None, help="serving environment's python")
    args = ap.parse_args(argv)
    python = serving_python(args.python)
    if python is None:
        print(
            "serving environment's python not found (set --python or FACTSHEET_VLLM_PYTHON)", file=sys.stderr
        )
        return 2
    path = Path(__file__).parent / "models" / BUNDLED[args.model]
    text = path.read_text(encoding="utf-8")
    base = parse_uvl(text.split(MARKER)[0])
    versions, derived = derive(base, python)
    new = write_derived(text, versions, derived)
    model = parse_uvl(new)
    space = FeatureSpace(model)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(new, encoding="utf-8")
    tmp.replace(path)
    print(
        f"{args.model}: {versions}; {len(derived)} derived constraints; {len(space.names)} features, "
        f"{len(model.constraints)} constraints, {space.count()} valid configurations; dead: {space.dead_features()}"
    )
    for c, why in derived:
        print(f"  {c}  -- {why}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
