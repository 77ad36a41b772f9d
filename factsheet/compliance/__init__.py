"""The compliance reporter: policies checked against a factsheet, with evidence rules, and a release gate.

- `policy`: the policy model (versioned, schema published), loading, built-in profiles, parameters;
- `paths`: readable field paths over the factsheet, checked against its JSON Schema;
- `evidence`: what a figure rests on (raw records, samples, confidence intervals);
- `support`: what the raw records support (every figure re-derived, every records file's digest) before any
  decision rests on a figure;
- `evaluate`: rules -> outcomes (pass, fail, insufficient evidence, not measured, not applicable), and the
  built-in integrity check;
- `recheck`: a factsheet's compliance summary re-run from the policies it names (`factsheet validate`);
- `report`: the report model; `junit`, `render`: its outputs; `diff`: the regression gate between builds.

Kept light: `factsheet.spec.build` and `factsheet.document.schema` import `spec` and `summary` from here.
"""
