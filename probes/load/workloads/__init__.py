"""Named, versioned workload profiles: what a load point sends (see README "Workload profiles").

`profiles` holds each profile's parameters (the spec's `load.workload`), `registry.build_plan` builds the
requests a point sends. This file stays empty of imports: `probes.load.workloads.workload` (the synthetic, code and
jsonl generators every profile module builds on) types its record with `profiles`, and a package that
imported the generators here would import that module while it is still loading.
"""
