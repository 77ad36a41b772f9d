"""What every API call returns: one base for the typed results, and the exit code the CLI gives them.

A result names the files the call wrote and, for a call that judges something (a policy gate, a diff, a
signature, a validation), whether the judgement failed and why. Bad input never gets this far: it raises
the `InputError` family (probes.core.errors) before anything is written. The CLI prints a result and then
calls `raise_for_status()`, which is how a failed judgement becomes exit 1 there (httpx's pattern: the
answer first, the exception only when asked for)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from probes.core.errors import CheckFailed


class Result(BaseModel):
    """The base of every API result: files written, and the failed judgement, if any."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    written: tuple[Path, ...] = Field((), description="files written by the call, in the order written")
    failure: str | None = Field(None, description="why the judgement failed (one line); None: it passed")

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    @property
    def exit_code(self) -> int:
        """The `factsheet` command's exit code for this result: 0 passed, 1 a failed judgement."""
        return 0 if self.failure is None else 1

    def raise_for_status(self) -> None:
        """Raise `CheckFailed` with `failure` when the judgement failed; do nothing when it passed."""
        if self.failure is not None:
            raise CheckFailed(self.failure)
