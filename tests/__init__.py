"""The test suite is a package: helpers are imported by their path under `tests.` (shared ones from
`tests.support`), never through sys.path."""
