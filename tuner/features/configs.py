"""From a selected set of features to the library's keyword arguments, split by where they apply."""

from __future__ import annotations

from collections.abc import Iterable
from importlib import resources

from tuner.features.uvl import Feature, FeatureModel, parse_uvl

# Attribute keys with a meaning of their own; any other attribute of a selected feature is a keyword argument.
RESERVED = {
    "abstract",
    "param",
    "value",
    "target",
    "library",
    "library_version",
    "derived_by",
    "max_model_len",
    "doc",
}
BUNDLED = {"generation_config": "generation_config.uvl", "vllm_serving": "vllm_serving.uvl"}


def bundled_text(name: str) -> str:
    """The text of a feature model shipped as package data (`generation_config` or `vllm_serving`)."""
    if name not in BUNDLED:
        raise KeyError(f"no bundled feature model '{name}' (have: {', '.join(sorted(BUNDLED))})")
    return (
        resources.files("tuner.features")
        .joinpath("models")
        .joinpath(BUNDLED[name])
        .read_text(encoding="utf-8")
    )


def load_bundled(name: str) -> FeatureModel:
    return parse_uvl(bundled_text(name))


def kwargs_of(model: FeatureModel, config: Iterable[str]) -> dict[str, dict]:
    """{target: {keyword: value}}; target is 'request' unless a feature or an ancestor says otherwise."""
    chosen = set(config)
    parents = model.parents()
    by_name: dict[str, Feature] = {f.name: f for f in model.features()}

    def inherited(name: str, key: str):
        n: str | None = name
        while n is not None:
            if key in by_name[n].attributes:
                return by_name[n].attributes[key]
            n = parents.get(n)
        return None

    out: dict[str, dict] = {}
    for name in sorted(chosen):
        f = by_name[name]
        target = inherited(name, "target") or "request"
        a = f.attributes
        if "value" in a:
            param = a.get("param") or inherited(name, "param")
            if param is None:
                raise ValueError(f"feature {name} has a value but neither it nor an ancestor names a param")
            out.setdefault(target, {})[param] = a["value"]
        for k, v in a.items():
            if k not in RESERVED:
                out.setdefault(target, {})[k] = v
    return out


def library_of(model: FeatureModel) -> tuple[str, str | None]:
    a = model.root.attributes
    return a.get("library", ""), a.get("library_version")
