"""The rendered factsheet read as a reader sees it: sections, headings, tables of cell texts, figures
and visible text. Render tests assert on this, not on markup, so the templates can be restyled freely."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

_VOID = {"br", "img", "meta", "link", "hr", "input", "col", "wbr"}
_BLOCK = {"p", "div", "tr", "li", "h1", "h2", "h3", "h4", "table", "section", "figure", "figcaption", "br"}


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    children: list[Element | str] = field(default_factory=list)

    def iter(self, tag: str | None = None):
        if tag is None or self.tag == tag:
            yield self
        for c in self.children:
            if isinstance(c, Element):
                yield from c.iter(tag)

    @property
    def text(self) -> str:
        """Visible text, whitespace collapsed; block elements and cells separated by a space."""
        parts: list[str] = []

        def walk(e: Element) -> None:
            if e.tag in ("style", "script", "title", "head"):
                return
            for c in e.children:
                if isinstance(c, str):
                    parts.append(c)
                else:
                    walk(c)
                    if c.tag in _BLOCK or c.tag in ("td", "th"):
                        parts.append(" ")

        walk(self)
        return re.sub(r"\s+", " ", "".join(parts)).strip()

    def headings(self) -> list[str]:
        return [h.text for h in self.iter() if h.tag in ("h1", "h2", "h3", "h4")]

    def tables(self) -> list[list[list[str]]]:
        """Each table as rows of cell texts (header rows included)."""
        return [
            [[c.text for c in tr.iter() if c.tag in ("td", "th")] for tr in t.iter("tr")]
            for t in self.iter("table")
        ]

    def table_after(self, heading: str) -> list[list[str]]:
        """The first table after the heading whose text starts with `heading`."""
        seen = False
        for e in self.iter():
            if e.tag in ("h2", "h3", "h4") and e.text.startswith(heading):
                seen = True
            elif seen and e.tag == "table":
                return [[c.text for c in tr.iter() if c.tag in ("td", "th")] for tr in e.iter("tr")]
        raise KeyError(heading)

    def figures(self) -> list[tuple[str, str, str]]:
        """(caption, alt text, image src) of every figure, in page order."""
        out = []
        for f in self.iter("figure"):
            img = next(f.iter("img"))
            cap = next(f.iter("figcaption"))
            out.append((cap.text, img.attrs.get("alt", ""), img.attrs.get("src", "")))
        return out


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        e = Element(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(e)
        if tag not in _VOID:
            self.stack.append(e)

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        self.stack[-1].children.append(data)


@dataclass
class Page:
    root: Element

    @classmethod
    def parse(cls, html: str) -> Page:
        b = _Builder()
        b.feed(html)
        b.close()
        return cls(b.root)

    @property
    def text(self) -> str:
        return self.root.text

    def section(self, sid: str) -> Element:
        for e in self.root.iter("section"):
            if e.attrs.get("id") == sid:
                return e
        raise KeyError(sid)

    def section_ids(self) -> list[str]:
        return [e.attrs["id"] for e in self.root.iter("section") if "id" in e.attrs]
