"""The build spec's `publish:` section (and the target of `factsheet publish`)."""

from __future__ import annotations

import unicodedata
from urllib.parse import urlsplit

from pydantic import Field, field_validator, model_validator

from probes.core.measurement import Model

# A tracking *server*: any other scheme MLflow accepts makes it write a store of its own where the command
# runs ('' and a bare path: ./mlruns and mlflow.db in the working directory; file:, sqlite:) or is not
# an MLflow server at all (ftp:). An unset variable in CI gives '' and must fail, not publish locally.
URI_SCHEMES = ("http", "https")


def shown_uri(uri: str) -> str:
    """`uri` as output may show it: credentials (user:password@) and the query (where tokens go) hidden.
    Never raises: an unparseable URI is shown by its scheme alone."""
    try:
        parts = urlsplit(uri)
        host = parts.netloc.rpartition("@")[2]
    except ValueError:
        return "<unparseable URI>"
    userinfo = "***@" if "@" in parts.netloc else ""
    query = "?***" if parts.query else ""
    return f"{parts.scheme}://{userinfo}{host}{parts.path}{query}"


def checked_uri(uri: str) -> str:
    """`uri` unchanged if it names an http(s) tracking server, else ValueError naming the cause (never
    quoting the URI whole: it may hold credentials)."""
    if not uri:
        raise ValueError("empty (an unset variable?): give the tracking server's http(s) URI")
    bad = next((ch for ch in uri if ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf")), None)
    if bad is not None:
        raise ValueError(f"holds U+{ord(bad):04X} (a space or control character); a URI has none")
    try:
        parts = urlsplit(uri)
        port = parts.port  # ValueError for a port that is not a number in 0..65535
    except ValueError as exc:
        raise ValueError(f"not a URI ({exc})") from None
    if parts.scheme.lower() not in URI_SCHEMES:
        scheme = f"{parts.scheme}:" if parts.scheme else "no scheme"
        raise ValueError(
            f"{scheme} is not a tracking server's; give http:// or https:// (a local store would be written "
            "where the command runs)"
        )
    if not parts.hostname:
        raise ValueError(f"{shown_uri(uri)} names no host")
    del port
    return uri


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

    @field_validator("mlflow_uri")
    @classmethod
    def _server_uri(cls, uri: str) -> str:
        return checked_uri(uri)

    @model_validator(mode="after")
    def _version_needs_model(self) -> PublishSpec:
        if self.model_version is not None and self.registered_model is None:
            raise ValueError("model_version needs registered_model (the model whose version it is)")
        for field in ("experiment", "registered_model"):
            if "'" in (getattr(self, field) or ""):
                # MLflow's search filters quote names with ', and have no escape for it.
                raise ValueError(f"{field} may not contain a single quote (')")
        return self
