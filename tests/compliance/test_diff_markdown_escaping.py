"""Issue 30: diff.md (posted by CI as a pull-request comment) carries text from both factsheets: load-point
labels, reasons, paths. Before the fix a label holding a newline, `|`, `# heading` and `<img src=…>` added a
heading, a table cell and a raw image to the comment. Parsed back here with markdown-it (CommonMark plus
GFM tables, as GitHub renders it): one heading, no raw HTML, no image, and every label in its own cell."""

from __future__ import annotations

from markdown_it import MarkdownIt

from factsheet.compliance.diff import DiffReport, FigureDiff, Limit, Noise

HOSTILE = "c=4\n# pwned | x\n<img src=https://evil.example/t.png> ![i](https://evil.example/i.png) `a`"


def _report(label: str) -> DiffReport:
    compared = FigureDiff(
        figure="e2el_ms.p99", scope=label, unit="ms", higher_is_better=False, status="compared",
        old=100.0, new=101.0, change=1.0, change_rel=0.01,
        noise=Noise(method="bootstrap", lower=-2.0, upper=3.0), beyond_noise=False,
        limit=Limit(value=0.1, relative=True, source="default"),
    )  # fmt: skip
    other = FigureDiff(
        figure="goodput", scope=label, unit="req/s", higher_is_better=True, status="not_comparable",
        reason=f"workload differs at {label}",
    )  # fmt: skip
    return DiffReport(
        old="old|<b>/factsheet.json", new="new`x`\n# h/factsheet.json", old_sha256="sha256:0", new_sha256="sha256:1",
        verdict="no_regression", verdict_reason=f"1 of 2 compared at {label}", limits={},
        figures=[compared, other], generated_at="2026-12-02T00:00:00Z", tool_version="0",
    )  # fmt: skip


def _tokens(text: str):
    md = MarkdownIt("commonmark").enable("table")
    out = []

    def walk(tokens):
        for tok in tokens:
            out.append(tok)
            walk(tok.children or [])

    walk(md.parse(text))
    return out


def _rows(tokens) -> list[list[str]]:
    """Each table row's cells as rendered text."""
    rows, cells = [], None
    for t in tokens:
        if t.type == "tr_open":
            cells = []
        elif t.type == "tr_close":
            rows.append(cells)
        elif t.type == "inline" and cells is not None:
            cells.append("".join(c.content for c in t.children if c.type in ("text", "code_inline")))
    return rows


def test_a_hostile_label_stays_in_its_table_cell():
    tokens = _tokens(_report(HOSTILE).markdown())
    kinds = [t.type for t in tokens]
    assert kinds.count("heading_open") == 1  # the report's own "### factsheet diff"
    assert not {"html_inline", "html_block", "image", "link_open"} & set(kinds), kinds
    header, *rows = _rows(tokens)
    assert len(rows) == 2 and all(len(r) == len(header) == 8 for r in rows), rows
    assert all(r[1] == " ".join(HOSTILE.split()) for r in rows), rows  # the label, literally, on one line


def test_an_honest_report_reads_as_before():
    text = _report("concurrency=4").markdown()
    assert text.startswith("### factsheet diff: No regression\n")
    header, compared, _ = _rows(_tokens(text))
    assert compared == [
        "e2el_ms.p99",
        "concurrency=4",
        "100",
        "101",
        "1 (+1.0%)",
        "[-2, 3]",
        "10%",
        "within noise",
    ]
