"""What the free text of a factsheet may become in an export, decided once for every format.

A factsheet someone else made is hostile input, and its free text (the model's name, labels, reasons,
descriptions) lands in documents that registries parse and show: a model card's Markdown and its YAML front
matter, CycloneDX and SPDX JSON. Per field, it is refused or escaped:

- **names** (the model's name, version, owner and licence, the factsheet's name, load-point labels, the
  file name: what a registry shows as a title or keeps as a key) are *refused* (exit 2, naming the field)
  when they hold a control character, a line or paragraph separator or a bidirectional-text control. No
  honest name holds one, and any rewriting would publish a name the factsheet does not state.
- **prose** (reasons, intended use, benchmark and dataset descriptions, energy boundaries, the tool
  version) may honestly span lines (a library's error message), so it is kept and *escaped*.

Then each format escapes everything from the factsheet in its own way: YAML only through PyYAML's safe
dumper, JSON only through json.dumps with `<`, `>`, `&` and U+2028/U+2029 as \\u escapes (`json_for_html`: a
document pasted into an HTML <script> element cannot close it), Markdown through `markdown_text` /
`markdown_code` (markup characters backslash-escaped, line breaks and control characters folded into one
space, so nothing from the factsheet starts a block, a comment or a table cell).

The tool's own pages and messages use the same character classes (`shown_text`, one rule for HTML, the
terminal and one-line messages, in probes/core/untrusted/text.py): a control, separator or
bidirectional-text character from the document is *shown* as its code
point (`<U+202E>`), never sent, so a U+202E in a model name cannot reverse the page's own "build 1" and an
escape sequence cannot reach the terminal; and a text longer than MAX_SHOWN_CHARS is cut, saying by how
much. HTML then escapes markup (jinja2's autoescape, after `shown_text` in its finalize step).
"""

from __future__ import annotations

import re
import unicodedata

from probes.core.errors import InputError

# The one rule for what the tool shows of someone else's text (pages, terminal, one-line messages) lives
# below the factsheet, where the probes' /metrics messages use it too.
from probes.core.untrusted.text import (
    PAGE_WHITESPACE,
    TERMINAL_WHITESPACE,
    shown_text,
    terminal_text,
)
from probes.core.untrusted.text import unsafe as _unsafe

__all__ = [
    "PAGE_WHITESPACE",
    "TERMINAL_WHITESPACE",
    "UnsafeText",
    "checked_name",
    "json_for_html",
    "markdown_code",
    "markdown_text",
    "shown_text",
    "terminal_text",
]


class UnsafeText(InputError):
    """A name in the factsheet holds a character no export can carry faithfully."""


# Characters that open or close inline markup in CommonMark / GitHub-flavoured Markdown as the Hub renders
# it (emphasis, code, links and images, raw HTML and comments, entities, table cells, strikethrough, maths,
# an ATX heading's closing #). Others (- + . : = ( ) ...) only mean something at the start of a line,
# which text from a factsheet never is: it always follows fixed text on its line.
_MARKUP = re.compile(r"([\\`*_\[\]<>&|~$#!])")
_JSON_HTML = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def checked_name(field: str, value: str | None) -> str | None:
    """`value` unchanged, or UnsafeText naming `field` and the character."""
    if value is None:
        return None
    for ch in value:
        if _unsafe(ch):
            raise UnsafeText(
                f"{field}: holds {unicodedata.name(ch, f'U+{ord(ch):04X}')} (U+{ord(ch):04X}), which no export "
                "can carry as a name; a name is one line of visible text"
            )
    return value


def _one_line(text: str) -> str:
    """Line breaks and other control or bidirectional characters folded into single spaces."""
    return " ".join("".join(" " if _unsafe(ch) else ch for ch in text).split())


def markdown_text(text: object) -> str:
    """`text` as inline Markdown that renders as exactly that text, on one line."""
    return _MARKUP.sub(r"\\\1", _one_line(str(text)))


def markdown_code(text: object) -> str:
    """`text` as an inline code span (CommonMark: its fence is longer than any run of backticks inside)."""
    flat = _one_line(str(text))
    fence = "`" * (max((len(run) for run in re.findall(r"`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def json_for_html(text: str) -> str:
    """JSON text with the characters that matter to an HTML or JavaScript host written as \\u escapes.
    They can only occur inside JSON strings, where the escape means the same character."""
    return re.sub("[<>&\u2028\u2029]", lambda m: _JSON_HTML[m.group()], text)
