"""Text from someone else shown on a terminal or in a one-line message: control characters (escape
sequences, carriage returns, bidi overrides) are shown escaped, never sent, and the text is cut short."""

from __future__ import annotations

import unicodedata


def printable(text: str, keep: int = 200) -> str:
    """`text` with every control or format character (C0, DEL, C1, U+202E and the other bidi controls)
    written as its escape (\\x1b, \\u202e), at most `keep` characters before the cut is marked."""
    out = []
    for ch in text[: keep + 1]:
        if ch == "\\" or unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            out.append(ch.encode("unicode_escape").decode("ascii") if ch != "\\" else "\\\\")
        else:
            out.append(ch)
    shown = "".join(out)
    return shown if len(text) <= keep else f"{shown[:keep]}… ({len(text):,} characters)"
