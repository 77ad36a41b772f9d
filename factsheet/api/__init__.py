"""The pipeline as Python calls: each `factsheet` command is one of these functions, and the CLI only
turns flags into the call and prints its result.

    from factsheet import build_factsheet, check_factsheet, sign_factsheet, verify_factsheet

Every call takes typed arguments and returns a typed result (factsheet.api.results.Result: the files
written, the verdict, and the `exit_code` the command gives it). Bad input raises the `InputError` family
(probes.core.errors) before anything is written; nothing is printed (a `log` callback or a progress `bars`
factory may be passed where a call takes long). The names are imported when first used (PEP 562), so
importing `factsheet` stays cheap.
"""

from __future__ import annotations

import importlib

# name -> the module that defines it; `factsheet` and `factsheet.api` both resolve names through this map.
EXPORTS = {
    "build_factsheet": "build",
    "BuildResult": "build",
    "check_factsheet": "check",
    "CheckResult": "check",
    "policy_profiles": "check",
    "diff_factsheets": "diff",
    "DiffResult": "diff",
    "render_factsheet": "documents",
    "export_factsheet": "documents",
    "ExportFormat": "factsheet.export.formats",
    "ExportResult": "documents",
    "RenderResult": "documents",
    "generate_keys": "signing",
    "sign_factsheet": "signing",
    "verify_factsheet": "signing",
    "SignResult": "signing",
    "VerifyResult": "signing",
    "validate_factsheet": "validate",
    "ValidateResult": "validate",
    "probe_load": "probe",
    "ProbeLoadArgs": "probe",
    "ProbeLoadResult": "probe",
    "evaluate_humaneval": "evaluate",
    "publish_factsheet": "publish",
    "build_catalogue": "publish",
    "count_features": "predictor",
    "sample_features": "predictor",
    "run_campaign": "predictor",
    "predict_campaign": "predictor",
    "Result": "results",
    "InputError": "probes.core.errors",
    "CheckFailed": "probes.core.errors",
}
__all__ = sorted(EXPORTS)


def resolve(name: str):
    """The exported object `name` (AttributeError when it is not one)."""
    where = EXPORTS.get(name)
    if where is None:
        raise AttributeError(name)
    module = where if "." in where else f"factsheet.api.{where}"
    return getattr(importlib.import_module(module), name)


def __getattr__(name: str):
    try:
        return resolve(name)
    except AttributeError:
        raise AttributeError(f"module 'factsheet.api' has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return __all__
