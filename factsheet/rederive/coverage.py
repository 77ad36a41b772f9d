"""Which figures `validate` vouches for, and how: every field of a factsheet is in exactly one class.

- **re-derived**: recomputed from raw records, or bound to them as the context they were measured in (the
  records file's header names the digest of that context);
- **re-checked**: recomputed by running something again on re-derived figures (the compliance section: the
  named policies run on the re-derived sheet);
- **attested only**: stated by the author and not checkable from the folder (host and provenance facts, the
  tuning trace, the predictor section, method names, inputs such as the carbon intensity): a signature
  vouches for who stated them, nothing vouches for their truth.

Fields are named by their path in factsheet.json with `[]` for any list item and `{}` for any key of a map;
a rule covers its path and everything under it, the longest matching rule decides. `leaf_fields()` lists
every leaf the Factsheet model can hold, so a test fails naming a field a future change adds unclassified.
"""

from __future__ import annotations

from typing import Literal

from factsheet.document.schema import Factsheet

Class = Literal["re-derived", "re-checked", "attested only"]
CLASSES: tuple[Class, ...] = ("re-derived", "re-checked", "attested only")

P = "load.points[].result"
A = "accuracy.result"


def _client_rules(at: str, whose: str) -> tuple[tuple[str, Class, str], ...]:
    """A run's client check (rule client-check/recomputed; before it, a many-worker point's only): recomputed from the records
    but for what they do not keep, each worker's event-loop lag and how the workers ran."""
    lag = "sampled during the run and not kept in the records: the verdict is re-derived with it as stated"
    return (
        (at, "re-derived", f"{whose} client check from its records (before: attested whole): each "
         "worker's share of the arrivals, the write delay, every verdict and reason"),
        (f"{at}.loop_lag_ms", "attested only", f"every worker's event-loop lag pooled, {lag}; its count, "
         "mean, spread and extremes must pool the rows' (one worker: its row's whole)"),
        (f"{at}.loop_lag_interval_ms", "attested only", "the lag sampler's timer, as the run set it"),
        (f"{at}.per_worker[].loop_lag_ms", "attested only", f"the worker's event-loop lag, {lag}"),
        (f"{at}.per_worker[].sent", "re-derived", "the records naming the worker (single process: all); "
         "every worker the records name has its row"),
        (f"{at}.executor", "attested only", "how the workers ran (processes, Ray), as the run reported"),
        (f"{at}.event_loop", "attested only", "the workers' event loop (uvloop, asyncio), as found"),
        (f"{at}.clock_offsets", "attested only", "Ray: each node's clock offset, measured by round trips"),
    )  # fmt: skip


def _capacity_rules(section: str) -> tuple[tuple[str, Class, str], ...]:
    """The rules of a capacity section at `section` (the load section's own, or a compared workload's)."""
    c = f"{section}.result"
    return (
        (f"{section}.status", "attested only", "whether the capacity search ran"),
        (f"{section}.reason", "attested only", "why the capacity search did not run"),
        (f"{section}.records", "re-derived", "the records' digest, count and header"),
        (f"{section}.server_records", "re-derived", "the /metrics scrapes' digest, count and header"),
        (f"{section}.system_prompts", "attested only", "the digests of the system prompts its runs sent "
         ": the prompts are not kept"),
        (f"{section}.host_load", "attested only", "the host's CPU over each probe from /proc as found"),
        (f"{section}.host_load[].speed.reference_ms", "re-derived", "bound: part of the capacity step's context "
         "(what diff notes beside the run), the kernel's time as found"),
        (f"{c}.points[].server_view.status", "attested only", "whether a /metrics page was read, as found"),
        (f"{c}.points[].server_view.reason", "attested only", "why no /metrics page was read, as found"),
        (f"{c}.points[].stopped_early", "attested only", "why the run stopped before its count, as it reported"),
        (f"{c}.points[].isolation", "attested only", "a confirmation step's further run: what the "
         "target answered to the fresh start or prefix-cache reset before it, as found: no record keeps it"),
        *_client_rules(f"{c}.points[].client", "the probe's"),
        (c, "re-derived", "the search replayed on the probes' records (without its parameters, in the first schema: verdicts and answer)"),
        (f"{c}.points[].value", "re-derived", "bound: part of the capacity step's context"),
        (f"{c}.points[].confirmation", "re-derived", "bound: part of the capacity step's context"),
        (f"{c}.knob", "re-derived", "bound: part of every capacity step's context"),
        (f"{c}.slo", "re-derived", "bound: part of every capacity step's context"),
        (f"{c}.method", "attested only", "the name of the search method"),
        (f"{c}.pass_rule", "attested only", "the statement of the pass rule"),
        (f"{c}.range_method", "attested only", "the name of the range method"),
        (f"{section}.seeds", "re-derived", "bound: part of each step's context; each checked against "
         "load.seed_rule"),
        (f"{section}.repeats", "re-derived", "the repeats of the headline run: each one's figures and "
         "verdict recomputed from its records; which run was repeated (the last confirmation) and how often"),
        (f"{section}.repeats.runs[].seed", "re-derived", "bound: part of the repeat's context; checked against "
         "load.seed_rule"),
        (f"{section}.repeats.runs[].point.value", "re-derived", "bound: part of the repeat's context; the "
         "repeated run's value"),
        (f"{section}.repeats.runs[].isolation", "attested only", "what the target answered to the fresh start or "
         "prefix-cache reset before the repeat, as found: no record keeps it"),
        (f"{section}.repeats.runs[].system_prompts", "attested only", "the digests of the system prompts the "
         "repeat sent: the prompts are not kept"),
        (f"{section}.repeats.runs[].host_load", "attested only", "the host's CPU over the repeat from /proc as "
         "found: no record keeps it"),
        (f"{section}.repeats.runs[].host_load.speed.reference_ms", "re-derived", "bound: part of the repeat's "
         "context (what diff notes beside the run), the kernel's time as found"),
        (f"{section}.repeats.runs[].point.server_view.status", "attested only", "whether a /metrics page was "
         "read, as found"),
        (f"{section}.repeats.runs[].point.server_view.reason", "attested only", "why no /metrics page was read, "
         "as found"),
        (f"{section}.repeats.runs[].point.stopped_early", "attested only", "why the run stopped before its "
         "count, as it reported"),
        *_client_rules(f"{section}.repeats.runs[].point.client", "the repeat's"),
    )  # fmt: skip


# (path prefix, class, why): longest prefix wins.
RULES: tuple[tuple[str, Class, str], ...] = (
    # Document framing.
    ("schema_version", "attested only", "the version the document states, no lower than its records' writer's (rule records/writer: their headers name it, their outcomes show it)"),
    ("kind", "attested only", "document type"),
    ("rules", "re-derived", "the ids of the judging rules it was judged by: each one in the registry and a rule of "
     "its version, none of its version's left out (factsheet/document/rules)"),
    ("name", "attested only", "the factsheet's name"),
    ("plan", "attested only", "the build's plan and estimate from its calibration request, what its budget cut and "
     "what it took: an estimate, no record keeps the calibration"),
    ("headline", "re-derived", "page 1's figures recomputed from the rest of the sheet, itself re-derived from "
     "the records"),
    ("headline.figures[].rebuild", "re-derived", "each figure over its run's repeats (values, mean, sd, the "
     "rebuild interval) recomputed from the repeats' re-derived figures"),
    ("identity", "attested only", "the model named and the weights' digests as found at build time"),
    ("governance", "attested only", "the author's governance statements as the spec declares them"),
    ("system", "attested only", "host, engine and library versions as found at build time"),
    ("system.deployment", "attested only", "the chat template and generation defaults as read from the served "
     "folder at build time: the folder is not beside the factsheet"),
    ("system.deployment.chat_template.sha256", "re-checked", "recomputed from the kept template text ("
     "attested only where the text is over 16 KiB and not kept)"),
    ("system.deployment.chat_template.size_bytes", "re-checked", "recomputed from the kept template text "
     "(attested only where the text is not kept)"),
    ("conformance", "attested only", "the engine found and each preflight check's verdict, as the server "
     "answered before the first measured request: the preflight's requests are not kept"),
    ("provenance", "attested only", "tool version, commit, spec digest, command and times of the build"),
    ("tuning", "attested only", "the tuning trace: its evaluations ran against servers that are gone"),
    ("predictor", "attested only", "the performance predictor's section as stated (before rule keeps/predictor-records "
     "its measurements were not kept)"),
    ("predictor.records", "re-derived", "the campaign's measurements: digest and count; each one's latency "
     "figures from its request records"),
    ("predictor.campaign.measurements", "re-derived", "the measurements kept"),
    ("predictor.targets", "re-derived", "model selection, CV scores, learning curve, importance and "
     "learnability re-run on the measurements"),
    ("predictor.pareto", "re-derived", "the front re-computed from the measurements"),
    ("predictor.recommendation", "re-derived", "re-run, seeded, on the measurements: the pick and every "
     "prediction (a bundled feature model: a .uvl file is not read from a factsheet)"),
    ("predictor.summary", "re-derived", "from the re-derived figures"),
    ("predictor.summary.verified", "attested only", "the live verification ran against a server that is gone"),
    ("predictor.verification", "attested only", "live measurements of the recommendation, not kept"),
    ("compliance", "re-checked", "the named policies run again on the re-derived sheet"),
    # Load points.
    ("load.status", "attested only", "whether the load section was measured"),
    ("load.reason", "attested only", "why the load section was not measured"),
    ("load.percentile_method", "attested only", "the name of the percentile method used"),
    ("load.seed_rule", "attested only", "the statement of the seed rule; every run's seed is checked against "
     "it and bound to its records"),
    ("load.rationale", "attested only", "the spec author's statement of why the load is shaped as it is"),
    ("load.points[].records", "re-derived", "the records' digest, count and header"),
    (f"{P}.metrics", "re-derived", "every metric recomputed from the per-request records"),
    (f"{P}.window_epoch", "re-derived", "the steady window from the records and the start time"),
    (f"{P}.arrivals", "re-derived", "open-loop arrival fidelity from the records' send times (sent_s) and, "
     "by rule client-bound/last-byte, their last bytes (written_s: achieved rate and write lag)"),
    (f"{P}.sent", "re-derived", "the number of records"),
    (f"{P}.not_sent", "re-derived", "the point's request count less the records"),
    (f"{P}.requests", "re-derived", "planned, sent, completed, truncated, failed and never sent, from the "
     "records and their re-derived outcomes"),
    (f"{P}.model", "attested only", "the model id the requests named: the bodies are not kept, "
     "their digest is"),
    (f"{P}.point", "re-derived", "bound: the settings are part of the records' context"),
    (f"{P}.label", "re-derived", "bound: part of the records' context"),
    (f"{P}.started_at", "re-derived", "bound: part of the records' context"),
    (f"{P}.stop_reason", "attested only", "what ended sending (count or duration), as the run reported"),
    (f"{P}.aborted", "attested only", "why a run stopped early, as the run reported"),
    (f"{P}.workload", "attested only", "profile, parameters, generator version and digests of the prompts "
     "and request bodies sent (the requests are not kept)"),
    (f"{P}.workload.system_prompts", "attested only", "the digests of the system prompts sent: "
     "the prompts are not kept"),
    (f"{P}.turns", "re-derived", "chat-sessions figures by turn, recomputed from the records' session and turn"),
    (f"{P}.records", "attested only", "never written (the records are the file named by .records); unused"),
    ("load.points[].server_records", "re-derived", "the /metrics scrapes' digest, count and header"),
    (f"{P}.server_view", "re-derived", "every server-view figure from the run's /metrics scrapes"),
    (f"{P}.server_view.status", "attested only", "whether a /metrics page was read, as the run found it"),
    (f"{P}.server_view.reason", "attested only", "why no /metrics page was read (no endpoint), as found"),
    (f"{P}.saturation", "re-derived", "the trend tests on the scrapes' waiting queue and the records' TTFT"),
    (f"{P}.scrapes", "attested only", "never written (the scrapes are the file named by .server_records)"),
    (f"{P}.host_load", "attested only", "never written (the run's host load is load.points[].host_load)"),
    ("load.points[].host_load", "attested only", "the host's CPU over the run from /proc as found: "
     "no record keeps it"),
    *_client_rules(f"{P}.client", "the point's"),
    # Capacity: the load section's search, and each compared workload's (below).
    *_capacity_rules("load.capacity"),
    # Compared workloads.
    ("load.compared_workloads", "attested only", "which workload profiles were compared (empty: none)"),
    ("load.compared_workloads[].workload", "re-derived", "bound: part of every step's context of its search"),
    ("load.compared_workloads[].template", "re-derived", "bound: part of every step's context of its search"),
    *_capacity_rules("load.compared_workloads[].capacity"),
    # Accuracy.
    ("accuracy.status", "attested only", "whether accuracy was measured"),
    ("accuracy.reason", "attested only", "why accuracy was not measured"),
    ("accuracy.records", "re-derived", "the records' digest, count and header"),
    (f"{A}.pass_rates", "re-derived", "pass@k from the per-sample verdicts"),
    (f"{A}.per_task", "re-derived", "the per-sample records the JSON repeats"),
    (f"{A}.generation_failures", "re-derived", "counted from the per-sample records"),
    (f"{A}.benchmark", "re-derived", "bound: part of the accuracy run's context"),
    (f"{A}.dataset", "re-derived", "bound: part of the accuracy run's context"),
    (f"{A}.tests_run", "re-derived", "bound: part of the accuracy run's context"),
    (f"{A}.mode", "re-derived", "bound: part of the accuracy run's context"),
    (f"{A}.prompting", "re-derived", "bound: part of the accuracy run's context"),
    (f"{A}.subset", "re-derived", "bound: part of the accuracy run's context"),
    (f"{A}.temperature", "re-derived", "bound: part of the accuracy run's context"),
    (f"{A}.sampling", "re-derived", "bound: part of the accuracy run's context"),
    (f"{A}.max_tokens", "re-derived", "bound: part of the accuracy run's context"),
    (f"{A}.isolation", "attested only", "the sandbox mechanisms in force, as the judge reported them"),
    (f"{A}.judge_parity", "attested only", "the judge's agreement with EvalPlus, measured elsewhere"),
    (f"{A}.timings", "attested only", "wall-clock times of generation and judging"),
    # Energy and carbon.
    ("energy.status", "attested only", "whether energy was measured"),
    ("energy.reason", "attested only", "why energy was not measured"),
    ("energy.records", "re-derived", "the counters' samples: digest, count and header"),
    ("energy.energy", "re-derived", "window energies and idle power from the samples, every "
     "derived figure, the window and counts against the load point covered"),
    ("energy.carbon", "attested only", "carbon inputs and method as stated"),
    ("energy.carbon.energy_kwh", "re-derived", "from the re-derived energy"),
    ("energy.carbon.g_co2e.value", "re-derived", "from the re-derived energy, the intensity and PUE"),
    ("energy.carbon.status", "attested only", "whether carbon was computed"),
    ("energy.carbon.reason", "attested only", "why carbon was not computed"),
)  # fmt: skip


def classify(path: str) -> tuple[Class, str] | None:
    """The class of a field (path as in `leaf_fields`) and why; None when no rule covers it."""
    best: tuple[str, Class, str] | None = None
    for prefix, cls, why in RULES:
        covers = path == prefix or path.startswith((prefix + ".", prefix + "[", prefix + "{"))
        if covers and (best is None or len(prefix) > len(best[0])):
            best = (prefix, cls, why)
    return None if best is None else (best[1], best[2])


def leaf_fields() -> list[str]:
    """Every leaf field a factsheet of this schema can hold, from the Factsheet model's JSON Schema."""
    schema = Factsheet.model_json_schema()
    defs = schema.get("$defs", {})
    out: set[str] = set()

    def walk(node: dict, path: str, seen: frozenset[str]) -> None:
        ref = node.get("$ref")
        if ref is not None:
            name = ref.rsplit("/", 1)[-1]
            if name not in seen:  # a recursive model: its fields are listed once
                walk(defs[name], path, seen | {name})
            return
        branches = [b for key in ("anyOf", "oneOf", "allOf") for b in node.get(key, [])]
        for branch in branches:
            walk(branch, path, seen)
        if branches:
            return
        properties = node.get("properties")
        if properties:
            for key, sub in properties.items():
                walk(sub, f"{path}.{key}" if path else key, seen)
            return
        items = node.get("items") or node.get("prefixItems")
        if isinstance(items, list):
            for item in items:
                walk(item, f"{path}[]", seen)
            return
        if isinstance(items, dict):
            walk(items, f"{path}[]", seen)
            return
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and extra:
            walk(extra, f"{path}{{}}", seen)
            return
        out.add(path)

    walk(schema, "", frozenset())
    return sorted(out)


def unclassified() -> list[str]:
    return [path for path in leaf_fields() if classify(path) is None]


def explain() -> list[str]:
    """The three classes, each with its rules, for `factsheet validate --explain`."""
    lines: list[str] = []
    for cls in CLASSES:
        lines.append(f"{cls}:")
        lines += [f"  {prefix}: {why}" for prefix, c, why in RULES if c == cls]
    return lines
