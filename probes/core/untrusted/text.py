"""Text from someone else as the tool shows it, one rule for every layer and every surface: a page's HTML
(then escaped for markup by jinja2), a terminal, a one-line message, a stored error.

A control character, a line or paragraph separator or a bidirectional-text control is *shown* as its code
point (`<U+001B>`, `<U+202E>`), never sent: an escape sequence cannot reach the terminal, a carriage return
cannot rewrite a line, a U+202E in a model name cannot reverse the page's own "build 1". Text longer than its
limit is cut, saying how many characters are left out (never silently dropped). The factsheet's exports add
their own formats on top (factsheet/export/text.py: Markdown, YAML, JSON) with the same character classes.
"""

from __future__ import annotations

import unicodedata

from probes.core.untrusted.limits import MAX_SHOWN_CHARS

# Line breaks in any of the senses a reader may apply (\n, \r, VT, FF, FS/GS/RS, NEL, U+2028/9), tabs.
BREAKS = "\t\n\v\f\r\x1c\x1d\x1e\x85\u2028\u2029"
BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"

# Kept as they are by `shown_text`: whitespace to HTML (a tuning justification is shown with its line
# breaks), and tab and line feed to a terminal; every other line break (VT, FF, NEL, U+2028) is shown.
PAGE_WHITESPACE = "\t\n\r"
TERMINAL_WHITESPACE = "\t\n"
# A one-line message (a scrape's error, a refusal) keeps nothing: its line feeds are shown too.
ONE_LINE = ""
# Characters of a one-line message quoting someone else's text (a /metrics page's error, a name).
MESSAGE_CHARS = 200


def unsafe(ch: str) -> bool:
    """A character no surface may carry as it is: a control, a line break, a bidirectional control."""
    return ch in BREAKS or ch in BIDI or unicodedata.category(ch) == "Cc"


def shown_text(text: str, limit: int | None = MAX_SHOWN_CHARS, keep: str = PAGE_WHITESPACE) -> str:
    """`text` as a page or a terminal shows it: unsafe characters (but those in `keep`) as `<U+XXXX>`,
    and at most `limit` characters of it, the rest stated as left out (never silently dropped)."""
    cut = len(text) - limit if limit is not None else 0
    head = text[:limit] if cut > 0 else text
    if any(unsafe(ch) and ch not in keep for ch in head):
        head = "".join(f"<U+{ord(ch):04X}>" if unsafe(ch) and ch not in keep else ch for ch in head)
    return head + (f"… [{cut:,} more characters not shown]" if cut > 0 else "")


def terminal_text(text: str) -> str:
    """A message for the terminal: control and bidi characters shown, never sent (a carriage return or
    an escape sequence could rewrite what the terminal shows); tabs and line feeds kept."""
    return shown_text(text, limit=None, keep=TERMINAL_WHITESPACE)


def printable(text: str, keep: int = MESSAGE_CHARS) -> str:
    """A one-line message quoting someone else's text: every unsafe character shown (line feeds too), at
    most `keep` characters of it."""
    return shown_text(text, limit=keep, keep=ONE_LINE)
