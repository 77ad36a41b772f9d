"""llm-factsheet: measured, justified, verifiable system factsheets for LLM deployments.

The whole pipeline is importable from here (see factsheet/api/ and README "Use from Python"):

    from factsheet import build_factsheet, check_factsheet, sign_factsheet, verify_factsheet

The names are loaded on first use (PEP 562), so `python -m factsheet` does not import the pipeline
before a command needs it.
"""

from __future__ import annotations

__all__ = [  # the public names of factsheet.api (kept equal to factsheet.api.EXPORTS by a test)
    "BuildResult", "CheckFailed", "CheckResult", "DiffResult", "ExportFormat", "ExportResult", "InputError",
    "ProbeLoadArgs", "ProbeLoadResult", "RenderResult", "Result", "SignResult", "ValidateResult",
    "VerifyResult", "build_catalogue", "build_factsheet", "check_factsheet", "count_features",
    "diff_factsheets", "evaluate_humaneval", "export_factsheet", "generate_keys", "policy_profiles",
    "predict_campaign", "probe_load", "publish_factsheet", "render_factsheet", "run_campaign",
    "sample_features", "sign_factsheet", "validate_factsheet", "verify_factsheet",
]  # fmt: skip


def __getattr__(name: str):
    if name in __all__:
        # deferred: `import factsheet` loads none of its modules until a name is used (PEP 562)
        from factsheet.api import resolve

        return resolve(name)
    raise AttributeError(f"module 'factsheet' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
