"""The deployment's own facts, read from what the server serves: the chat template that wraps every chat
request and the generation config whose sampling values the server applies to a request that leaves them
out. CycloneDX (#862) counts a chat template as part of the model, since a changed one changes every answer
without touching a weight.

Read the way the engine reads them (vLLM 0.x on transformers 5):

- the chat template: `--chat-template` (a file, the template itself when no such file exists and the value
  holds `{`, `}` or a newline, else the name of a template vLLM ships: not read, so not measured) wins; else
  a multimodal processor's `chat_template.json` (beside its processor config), which vLLM prefers; else the
  folder's `chat_template.jinja`, which transformers prefers to `tokenizer_config.json`'s `chat_template`; a
  list of named templates serves the one named `default` (the others, e.g. `tool_use`, are recorded by
  digest);
- the generation config: `--generation-config` `auto` (vLLM's default: the served folder), `vllm` (no file:
  the engine's neutral defaults) or a folder; `--override-generation-config` (JSON) is laid over it.

An endpoint target serves no files the tool can read: both are not measured, with the reason. A file the
engine would read that is malformed is bad input (exit 2) before the server starts.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, ValidationError

from probes.core.digests import sha256_bytes
from probes.core.errors import describe_validation_error
from probes.core.measurement import Model, NotMeasured
from probes.core.untrusted.limits import KIB, MAX_MODEL_CONFIG_BYTES
from probes.core.untrusted.parsing import parse_json
from probes.core.untrusted.reading import read_given
from probes.targets.errors import TargetError

# The template's text is kept in the factsheet up to this size (UTF-8 bytes); its digest always. Chat
# templates in use run from ~0.3 KiB (SmolLM2) to ~10 KiB (Llama 3.1 with tools); a longer one is named by
# its digest alone so a factsheet does not grow by a file the model folder already holds.
TEXT_KEPT_MAX_BYTES = 16 * KIB
TEMPLATE_FILE = "chat_template.jinja"
TOKENIZER_CONFIG = "tokenizer_config.json"
# A multimodal model's processor: vLLM prefers its template (chat_template.json) to the tokenizer's.
PROCESSOR_TEMPLATE = "chat_template.json"
PROCESSOR_CONFIGS = ("processor_config.json", "preprocessor_config.json")
GENERATION_FILE = "generation_config.json"
ENDPOINT_REASON = (
    "an endpoint target serves no files the tool can read: its {what} is not visible to the tool"
)


class ChatTemplate(Model):
    """The chat template as served. `text` is the template itself when its UTF-8 encoding is at most
    16 KiB (TEXT_KEPT_MAX_BYTES = 16384 bytes), else None; `sha256` and `size_bytes` are always stated, and
    `factsheet validate` checks a stated text against them."""

    source: str = Field(
        description="where the server reads it: 'chat_template.jinja', \"tokenizer_config.json: "
        "chat_template\" (named: chat_template[default]), '--chat-template <file name>' or "
        "'--chat-template (inline)'"
    )
    sha256: str = Field(description="sha256 of the template text, UTF-8")
    size_bytes: int = Field(ge=0, description="length of the template text, UTF-8 bytes")
    text: str | None = Field(
        None, description=f"the template text when size_bytes ≤ {TEXT_KEPT_MAX_BYTES}; None: longer"
    )
    named: dict[str, str] = Field(
        default_factory=dict,
        description="the folder's other named templates (e.g. tool_use), name → sha256 of the text; the "
        "server applies the `default` one (this one) to a request without tools",
    )


class GenerationFields(Model):
    """Sampling values of a generation config, typed; None: not set (the engine's neutral default applies).
    vLLM applies temperature, top_p, top_k, min_p, the three penalties and max_new_tokens (as a server-wide
    max_tokens); do_sample is recorded as the file states it (vLLM does not read it)."""

    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    min_p: float | None = None
    repetition_penalty: float | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    max_new_tokens: int | None = None
    do_sample: bool | None = None


class GenerationDefaults(Model):
    """The sampling defaults the server applies to a request that leaves them out."""

    source: str = Field(
        description="'generation_config.json' (the served folder, --generation-config auto), "
        "'--generation-config <folder name>/generation_config.json', or where no file applies why: "
        "'none: ...'"
    )
    sha256: str | None = Field(None, description="sha256 of the whole file; None: no file applies")
    fields: GenerationFields = Field(description="the file's sampling values")
    other_keys: list[str] = Field(
        default_factory=list, description="the file's other keys by name (token ids, versions), sorted"
    )
    overrides: GenerationFields | None = Field(
        None, description="--override-generation-config, laid over the file's values; None: not given"
    )


class DeploymentFacts(Model):
    """What wraps and completes every request besides the weights."""

    chat_template: ChatTemplate | NotMeasured
    generation_config: GenerationDefaults | NotMeasured


def endpoint_facts() -> DeploymentFacts:
    """An endpoint target: nothing it serves can be read from here, so nothing is claimed."""
    return DeploymentFacts(
        chat_template=NotMeasured(reason=ENDPOINT_REASON.format(what="chat template")),
        generation_config=NotMeasured(reason=ENDPOINT_REASON.format(what="default generation config")),
    )


def served_facts(folder: Path | str, command: list[str]) -> DeploymentFacts:
    """The facts of a server started with `command` on the model `folder` (TargetError on a malformed file)."""
    folder = Path(folder)
    return DeploymentFacts(
        chat_template=chat_template(folder, flag_value(command, "--chat-template")),
        generation_config=generation_defaults(
            folder,
            flag_value(command, "--generation-config") or "auto",
            flag_value(command, "--override-generation-config"),
        ),
    )


def flag_value(command: list[str], flag: str) -> str | None:
    """The value the last `flag` of `command` gives (`--flag v` or `--flag=v`), as argparse keeps the last."""
    found = None
    for i, part in enumerate(command):
        if part == flag and i + 1 < len(command):
            found = command[i + 1]
        elif part.startswith(flag + "="):
            found = part[len(flag) + 1 :]
    return found


def template_of(text: str, source: str, named: dict[str, str] | None = None) -> ChatTemplate:
    data = text.encode()
    return ChatTemplate(
        source=source,
        sha256=sha256_bytes(data),
        size_bytes=len(data),
        text=text if len(data) <= TEXT_KEPT_MAX_BYTES else None,
        named=named or {},
    )


def _read_text(path: Path, what: str) -> str:
    try:
        return read_given(path, MAX_MODEL_CONFIG_BYTES, what).decode()
    except UnicodeDecodeError:
        raise TargetError(f"{what} {path.name}: not UTF-8 text") from None
    except OSError as exc:
        raise TargetError(f"{what} {path.name}: cannot read: {exc.strerror}") from None


def _served_text(path: Path, what: str) -> str:
    """A template file's text as the engine holds it: Python's text mode (vLLM's and transformers' `open`)
    reads every line ending as a newline, so a file saved with CRLF serves the same template."""
    return _read_text(path, what).replace("\r\n", "\n").replace("\r", "\n")


def _object(text: str, where: str) -> dict:
    data = parse_json(text, where)
    if not isinstance(data, dict):
        raise TargetError(f"{where}: not a JSON object")
    return data


def _read_object(path: Path, what: str) -> dict:
    return _object(_read_text(path, what), f"{what} {path.name}")


def chat_template(folder: Path, flag: str | None) -> ChatTemplate | NotMeasured:
    """The template the server applies: the flag's, the folder's file, or tokenizer_config.json's."""
    if flag is not None:
        path = Path(flag).expanduser()
        if path.is_file():
            return template_of(_served_text(path, "--chat-template"), f"--chat-template {path.name}")
        if not any(c in flag for c in "{}\n"):
            # vLLM then looks the name up among the templates it ships (or fails to start): the engine's
            # own file, which the tool does not read.
            return NotMeasured(
                reason=f"--chat-template {Path(flag).name}: no such file here, so a template built into the "
                "engine (by that name), which the tool does not read"
            )
        return template_of(flag, "--chat-template (inline)")
    processor = folder / PROCESSOR_TEMPLATE
    if processor.is_file() and any((folder / name).is_file() for name in PROCESSOR_CONFIGS):
        stated = _read_object(processor, "processor chat template").get("chat_template")
        if not isinstance(stated, str):
            raise TargetError(f"{PROCESSOR_TEMPLATE}: chat_template is not a string")
        return template_of(stated, f"{PROCESSOR_TEMPLATE}: chat_template")
    if (folder / TEMPLATE_FILE).is_file():
        return template_of(_served_text(folder / TEMPLATE_FILE, "chat template"), TEMPLATE_FILE)
    config = folder / TOKENIZER_CONFIG
    stated = _read_object(config, "tokenizer config").get("chat_template") if config.is_file() else None
    if stated is None:
        return NotMeasured(
            reason=f"the served folder has no chat template ({TEMPLATE_FILE} or {TOKENIZER_CONFIG}'s "
            "chat_template) and the server is given none (--chat-template): the engine refuses chat requests "
            "or, for some model types, applies a fallback it ships, which the tool does not read"
        )
    where = f"{TOKENIZER_CONFIG}: chat_template"
    if isinstance(stated, str):
        return template_of(stated, where)
    named = _named_templates(stated, where)
    if "default" not in named:
        return NotMeasured(reason=f"{where} names no `default` template (only {', '.join(sorted(named))})")
    others = {k: sha256_bytes(v.encode()) for k, v in sorted(named.items()) if k != "default"}
    return template_of(named["default"], f"{where}[default]", others)


def _named_templates(stated: object, where: str) -> dict[str, str]:
    """transformers' list form: [{"name": ..., "template": ...}, ...]."""
    ok = isinstance(stated, list) and all(
        isinstance(t, dict) and isinstance(t.get("name"), str) and isinstance(t.get("template"), str)
        for t in stated
    )
    if not ok:
        raise TargetError(f"{where}: neither a string nor a list of {{name, template}} objects")
    return {t["name"]: t["template"] for t in stated}


def generation_defaults(folder: Path, mode: str, override: str | None) -> GenerationDefaults | NotMeasured:
    """The sampling defaults the server applies under `--generation-config mode` and its override."""
    flag = "--override-generation-config"
    overrides = _fields(_object(override, flag), flag) if override is not None else None
    if mode == "vllm":
        return GenerationDefaults(
            source="none: --generation-config vllm (the engine's neutral defaults, no file)",
            fields=GenerationFields(),
            overrides=overrides,
        )
    base = folder if mode == "auto" else Path(mode).expanduser()
    path = base / GENERATION_FILE
    shown = GENERATION_FILE if mode == "auto" else f"--generation-config {base.name}/{GENERATION_FILE}"
    if not path.is_file():
        return GenerationDefaults(
            source=f"none: no {shown} (the engine's neutral defaults apply)",
            fields=GenerationFields(),
            overrides=overrides,
        )
    text = _read_text(path, "generation config")
    data = _object(text, shown)
    return GenerationDefaults(
        source=shown,
        sha256=sha256_bytes(text.encode()),  # the file's bytes: read as UTF-8, they encode back unchanged
        fields=_fields(data, shown),
        other_keys=sorted(k for k in data if k not in GenerationFields.model_fields),
        overrides=overrides,
    )


def _fields(data: dict, where: str) -> GenerationFields:
    """The sampling values of `data`; its other keys are not sampling values the engine applies."""
    try:
        return GenerationFields.model_validate(
            {k: v for k, v in data.items() if k in GenerationFields.model_fields}
        )
    except ValidationError as exc:
        raise TargetError(f"{where}: {describe_validation_error(exc, shown=1)}") from None
