"""The build spec's `publish:` section (and the target of `factsheet publish`)."""

from __future__ import annotations

from pydantic import Field, model_validator

from probes.core.measurement import Model


class PublishSpec(Model):
    """Publish the factsheet to an MLflow tracking server at the end of the build (one run per factsheet)."""

    mlflow_uri: str = Field(description="MLflow tracking URI, e.g. http://mlflow.internal:5000")
    experiment: str | None = Field(None, description="experiment name; default: the factsheet's name")
    registered_model: str | None = Field(
        None,
        description="also tag a version of this registered model with the factsheet's digest and verdict",
    )
    model_version: str | None = Field(
        None,
        description="the existing version of registered_model to tag; omitted: a new version is registered "
        "from the run's artifacts",
    )

    @model_validator(mode="after")
    def _version_needs_model(self) -> PublishSpec:
        if self.model_version is not None and self.registered_model is None:
            raise ValueError("model_version needs registered_model (the model whose version it is)")
        for field in ("experiment", "registered_model"):
            if "'" in (getattr(self, field) or ""):
                # MLflow's search filters quote names with ', and have no escape for it.
                raise ValueError(f"{field} may not contain a single quote (')")
        return self
