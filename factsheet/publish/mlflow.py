"""One MLflow run per factsheet, all or nothing, idempotent by the factsheet's digest.

The run is created RUNNING, filled (params, metrics, tags, artifacts, the registry step) and only then marked
FINISHED: a failure anywhere in between marks it FAILED and undoes what the registry step changed, so a
reader who trusts FINISHED runs never sees a half-published factsheet. A later publish of the same bytes
finds the FINISHED run by its digest tag and changes nothing. Everything is checked (the factsheet, its
records, the experiment, the model version to tag) before the run is created."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

from factsheet.publish.contents import (
    ARTIFACT_DIR,
    DIGEST_TAG,
    TAG_PREFIX,
    VERDICT_TAG,
    PublishContents,
    collect,
)
from factsheet.spec.publish import PublishSpec, shown_uri
from factsheet.untrusted.limits import MAX_MLFLOW_RESPONSE_BYTES, MAX_MLFLOW_RESPONSE_S
from probes.core.errors import InputError

RUN_ID_TAG = TAG_PREFIX + "run_id"
# Bounded network waits (MLflow's own defaults retry for minutes): an unreachable server fails in seconds.
# Set only where the user has not: these are MLflow's documented variables, read on every request.
HTTP_DEFAULTS = {
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "1",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "10",
}
# MLflow's batch limits (log_batch): 100 params, 1000 metrics, 100 tags a call.
BATCH = 100
MESSAGE_CHARS = 300  # a server's error page can be long; one line of it is enough


class PublishError(InputError):
    """The publish could not be done (unreachable server, refused write, missing extra): exit 2, one line."""


@dataclass(frozen=True)
class PublishResult:
    tracking_uri: str
    experiment: str
    experiment_id: str
    run_id: str
    sha256: str  # 'sha256:<hex>' of the published factsheet
    verdict: str
    metrics: tuple[str, ...]
    artifacts: tuple[str, ...]  # paths under the run's artifact root
    already_published: bool  # a FINISHED run of this digest existed: nothing was sent
    registered_model: str | None = None
    model_version: str | None = None
    model_version_changed: bool = False  # the registry step created or re-tagged a version

    def lines(self) -> list[str]:
        state = "published"
        if self.already_published:
            state = "already published" + ("" if self.model_version_changed else " (nothing changed)")
        out = [
            f"{state}: run {self.run_id} in experiment {self.experiment!r} at {self.tracking_uri}",
            f"  factsheet {self.sha256}, compliance verdict {self.verdict}",
            f"  {len(self.metrics)} metrics, {len(self.artifacts)} artifacts",
        ]
        if self.registered_model:
            what = "tagged" if self.model_version_changed else "already tagged"
            out.append(f"  registered model {self.registered_model} version {self.model_version}: {what}")
        return out


def _short(exc: BaseException, uri: str) -> str:
    """One line of `exc`, with what `uri` holds secret (user:password, the query) hidden: MLflow and
    requests quote the URL they failed on."""
    text = " ".join(str(exc).split())
    parts = urlsplit(uri)
    for secret in sorted({parts.netloc.rpartition("@")[0], parts.password or "", parts.query}, key=len)[::-1]:
        if secret:
            text = text.replace(secret, "***")
    return text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS] + "…"


def _client(uri: str):
    try:
        # deferred: mlflow (the `publish` extra, ~1.5 s to import) loads only when publishing
        from mlflow import MlflowClient
    except ImportError:
        raise PublishError(
            "publishing needs MLflow: pip install 'llm-factsheet[publish]' (mlflow-skinny)"
        ) from None
    for name, value in HTTP_DEFAULTS.items():
        os.environ.setdefault(name, value)
    logging.getLogger("mlflow").setLevel(logging.WARNING)
    return MlflowClient(tracking_uri=uri, registry_uri=uri)


def _remote_errors() -> tuple[type[BaseException], ...]:
    """What a tracking server, its transport or a local artifact store can raise for a refused or lost
    request (anything else is a bug and keeps its traceback under --debug)."""
    # deferred: requests and mlflow come with the `publish` extra and load only when publishing
    import requests
    from mlflow.exceptions import MlflowException

    return (MlflowException, requests.RequestException, OSError)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """MLflow prints 'View run … at …' to stdout when a run ends; the command's output is its result."""
    with contextlib.redirect_stdout(io.StringIO()):
        yield


class ResponseTooLarge(OSError):
    """A tracking server's answer over the size or time limit (caught with the other remote errors)."""


def _read_bounded(response) -> None:
    """Read `response`'s body (requested streamed) into it, at most MAX_MLFLOW_RESPONSE_BYTES within
    MAX_MLFLOW_RESPONSE_S, as requests would have read it whole."""
    deadline, chunks, size = time.monotonic() + MAX_MLFLOW_RESPONSE_S, [], 0
    try:
        while chunk := response.raw.read1(64 * 1024, decode_content=True):  # what has arrived, decoded
            size += len(chunk)
            if size > MAX_MLFLOW_RESPONSE_BYTES:
                raise ResponseTooLarge(
                    f"the server's answer is over the limit of {MAX_MLFLOW_RESPONSE_BYTES:,} bytes"
                )
            if time.monotonic() > deadline:
                raise ResponseTooLarge(f"the server's answer took over {MAX_MLFLOW_RESPONSE_S:g} s")
            chunks.append(chunk)
    finally:
        response.close()
    response._content = b"".join(chunks)  # what requests keeps for .text and .json()


@contextlib.contextmanager
def _bounded_responses() -> Iterator[None]:
    """Every response body MLflow reads while publishing is bounded (MLflow reads them whole with requests,
    which has no limit). MLflow makes its own requests.Session, so `Session.send` is wrapped for the
    duration of the publish (and restored after): a body MLflow asked for whole is streamed and read here."""
    # deferred: requests comes with the `publish` extra (not a core dependency) and loads only when publishing
    import requests
    from requests.adapters import HTTPAdapter

    original, from_adapter = requests.Session.send, HTTPAdapter.send

    def send(self, request, **kwargs):
        whole = not kwargs.get("stream", False)
        response = original(self, request, **{**kwargs, "stream": True})
        if whole:
            _read_bounded(response)
        return response

    def adapter_send(self, request, **kwargs):
        # A redirect's body is read by the session itself (`resp.content`) before it follows the redirect,
        # or even when it does not: read here first, within the same bounds, as each response arrives.
        response = from_adapter(self, request, **kwargs)
        if response.is_redirect:
            _read_bounded(response)
        return response

    requests.Session.send, HTTPAdapter.send = send, adapter_send
    try:
        yield
    finally:
        requests.Session.send, HTTPAdapter.send = original, from_adapter


def check_reachable(spec: PublishSpec) -> None:
    """Before a build measures anything: MLflow installed and the server answering (exit 2 in seconds)."""
    client = _client(spec.mlflow_uri)
    try:
        with _bounded_responses():
            client.search_experiments(max_results=1)
    except _remote_errors() as exc:
        raise PublishError(
            f"MLflow at {shown_uri(spec.mlflow_uri)}: not reachable: {_short(exc, spec.mlflow_uri)}"
        ) from None


def publish_factsheet(json_path: Path, spec: PublishSpec) -> PublishResult:
    """Publish the factsheet at `json_path` (and the files beside it) to `spec.mlflow_uri`."""
    contents = collect(Path(json_path))  # every local check before the first request
    with _bounded_responses():
        return _publish(contents, spec)


def _publish(contents: PublishContents, spec: PublishSpec) -> PublishResult:
    client = _client(spec.mlflow_uri)
    errors = _remote_errors()
    name = spec.experiment or contents.sheet.name
    try:
        experiment_id = _experiment(client, name)
        found = client.search_runs(
            [experiment_id],
            filter_string=f"tags.`{DIGEST_TAG}` = '{contents.sha256}' and attributes.status = 'FINISHED'",
            max_results=1,
        )
        registry = _Registry(client, spec, contents)  # checks the version to tag before any run exists
    except errors as exc:
        raise PublishError(
            f"MLflow at {shown_uri(spec.mlflow_uri)}: {_short(exc, spec.mlflow_uri)}"
        ) from None
    if found:
        run_id = found[0].info.run_id
        try:
            changed = registry.apply(run_id)
            names = _artifact_names(client, run_id)
        except errors as exc:
            registry.undo()
            raise PublishError(
                f"MLflow at {shown_uri(spec.mlflow_uri)}: registry step failed: {_short(exc, spec.mlflow_uri)}"
            ) from None
        return _result(spec, name, experiment_id, run_id, contents, names, True, registry, changed)
    run_id = _new_run(client, experiment_id, contents, spec, errors)
    step = "logging params, metrics and tags"
    try:
        _log_values(client, run_id, contents)
        step = "uploading artifacts"
        for a in contents.artifacts:
            parent = str(PurePosixPath(ARTIFACT_DIR, a.name).parent)
            client.log_artifact(run_id, str(a.path), artifact_path=parent)
        step = "the registry step"
        changed = registry.apply(run_id)
        step = "marking the run FINISHED"
        with _quiet():
            client.set_terminated(run_id, "FINISHED", end_time=max(contents.finished_ms, contents.started_ms))
    except BaseException as exc:
        registry.undo()
        _mark_failed(client, run_id)
        if isinstance(exc, errors):
            raise PublishError(
                f"MLflow at {shown_uri(spec.mlflow_uri)}: {step} failed, run {run_id} marked FAILED: {_short(exc, spec.mlflow_uri)}"
            ) from None
        raise
    names = tuple(f"{ARTIFACT_DIR}/{a.name}" for a in contents.artifacts)
    return _result(spec, name, experiment_id, run_id, contents, names, False, registry, changed)


def _experiment(client, name: str) -> str:
    exp = client.get_experiment_by_name(name)
    if exp is None:
        return client.create_experiment(name)
    if exp.lifecycle_stage != "active":
        raise PublishError(
            f"MLflow experiment {name!r} is deleted: restore it or name another (--experiment)"
        )
    return exp.experiment_id


def _new_run(client, experiment_id: str, contents: PublishContents, spec: PublishSpec, errors) -> str:
    sheet = contents.sheet
    try:
        run = client.create_run(
            experiment_id,
            start_time=contents.started_ms,
            tags=contents.tags,
            run_name=f"{sheet.name} {sheet.provenance.finished_at}",
        )
    except errors as exc:
        raise PublishError(
            f"MLflow at {shown_uri(spec.mlflow_uri)}: cannot create a run: {_short(exc, spec.mlflow_uri)}"
        ) from None
    return run.info.run_id


def _log_values(client, run_id: str, contents: PublishContents) -> None:
    # deferred: mlflow (the `publish` extra, ~1.5 s to import) loads only when publishing
    from mlflow.entities import Metric, Param

    params = [Param(k, v) for k, v in contents.params.items()]
    metrics = [Metric(k, v, contents.finished_ms, 0) for k, v in contents.metrics.items()]
    for i in range(0, max(len(params), len(metrics)), BATCH):
        client.log_batch(run_id, metrics=metrics[i : i + BATCH], params=params[i : i + BATCH])


def _mark_failed(client, run_id: str) -> None:
    """Best effort: when the server itself is gone the run stays RUNNING, which no reader takes as published."""
    with contextlib.suppress(Exception), _quiet():
        client.set_terminated(run_id, "FAILED")


def _artifact_names(client, run_id: str, path: str = ARTIFACT_DIR) -> tuple[str, ...]:
    out: list[str] = []
    for info in client.list_artifacts(run_id, path):
        out += _artifact_names(client, run_id, info.path) if info.is_dir else [info.path]
    return tuple(sorted(out))


def _result(spec, name, experiment_id, run_id, contents, names, already, registry, changed) -> PublishResult:
    return PublishResult(
        tracking_uri=shown_uri(spec.mlflow_uri),  # what output may show: no credentials
        experiment=name,
        experiment_id=experiment_id,
        run_id=run_id,
        sha256=contents.sha256,
        verdict=contents.verdict,
        metrics=tuple(sorted(contents.metrics)),
        artifacts=tuple(names),
        already_published=already,
        registered_model=spec.registered_model,
        model_version=registry.version,
        model_version_changed=changed,
    )


class _Registry:
    """The registry step: tag an existing version (--model-version) or register a new one from the run's
    artifacts, tagged with the factsheet's digest, verdict and run. `undo` reverts what `apply` changed."""

    def __init__(self, client, spec: PublishSpec, contents: PublishContents):
        self.client, self.spec, self.contents = client, spec, contents
        self.name = spec.registered_model
        self.version: str | None = spec.model_version
        self.previous: dict[str, str | None] = {}  # tags overwritten on an existing version
        self.created_model = self.created_version = False
        if self.name is None:
            return
        if self.version is not None:
            # deferred: mlflow (the `publish` extra, ~1.5 s to import) loads only when publishing
            from mlflow.exceptions import MlflowException

            try:
                self.existing = client.get_model_version(self.name, self.version)
            except MlflowException as exc:
                if exc.error_code == "RESOURCE_DOES_NOT_EXIST":
                    raise PublishError(
                        f"registered model {self.name!r} has no version {self.version!r} to tag "
                        "(omit --model-version to register a new version)"
                    ) from None
                raise
        else:
            versions = client.search_model_versions(
                f"name = '{self.name}' and tags.`{DIGEST_TAG}` = '{contents.sha256}'"
            )
            self.version = versions[0].version if versions else None

    def _tags(self, run_id: str) -> dict[str, str]:
        return {DIGEST_TAG: self.contents.sha256, VERDICT_TAG: self.contents.verdict, RUN_ID_TAG: run_id}

    def apply(self, run_id: str) -> bool:
        """True when something changed in the registry."""
        if self.name is None:
            return False
        wanted = self._tags(run_id)
        if self.spec.model_version is None:
            if self.version is not None:  # a version of this factsheet was registered before
                return False
            # deferred: mlflow (the `publish` extra, ~1.5 s to import) loads only when publishing
            from mlflow.exceptions import MlflowException

            try:
                self.client.get_registered_model(self.name)
            except MlflowException as exc:
                if exc.error_code != "RESOURCE_DOES_NOT_EXIST":
                    raise
                self.client.create_registered_model(self.name)
                self.created_model = True
            mv = self.client.create_model_version(
                self.name, source=f"runs:/{run_id}/{ARTIFACT_DIR}", run_id=run_id, tags=wanted
            )
            self.version, self.created_version = mv.version, True
            return True
        current = self.client.get_model_version(self.name, self.version).tags
        if all(current.get(k) == v for k, v in wanted.items()):
            return False
        for key, value in wanted.items():
            self.previous[key] = current.get(key)
            self.client.set_model_version_tag(self.name, self.version, key, value)
        return True

    def undo(self) -> None:
        """Best effort, like marking the run FAILED: a registry that refuses the undo is left as it is."""
        with contextlib.suppress(Exception):
            if self.created_version:
                self.client.delete_model_version(self.name, self.version)
                self.version = None
            if self.created_model:
                self.client.delete_registered_model(self.name)
            for key, old in self.previous.items():
                if old is None:
                    self.client.delete_model_version_tag(self.name, self.spec.model_version, key)
                else:
                    self.client.set_model_version_tag(self.name, self.spec.model_version, key, old)
