"""The site in a real browser (Debian's chromium over file://): every page opens without a console error
or a request leaving the site, every link resolves to a file in the site, sorting and filtering work from
the keyboard-reachable buttons and the filter box, every chart has a text alternative.

`check_site` is the whole check; the tests below also break the site in each way it guards against and
see the check fail, so a check that could not fail would be caught."""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from playwright.sync_api import Error as PlaywrightError

from factsheet.catalogue.site import build_catalogue
from tests.catalogue.catalogue_browser import chromium

# One worker: the folder's signed builds (conftest `builds`) made once (tests/conftest.py).
pytestmark = [pytest.mark.system, pytest.mark.xdist_group("catalogue-builds")]


@pytest.fixture(scope="module")
def site(tmp_path_factory, releases, other_build, keys) -> Path:
    root = tmp_path_factory.mktemp("in")
    shutil.copytree(releases, root / "releases")
    shutil.copytree(other_build, root / "other")
    out = tmp_path_factory.mktemp("site") / "site"
    build_catalogue([root], out, [keys[1]])
    return out


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


def pages(site: Path) -> list[Path]:
    return [site / "index.html", *sorted((site / "deployments").glob("*.html"))]


def check_page(browser, page_path: Path, site: Path) -> list[str]:
    """Problems found on one page: console errors, page errors, requests outside the site, links to
    files that do not exist, charts without a text alternative."""
    problems: list[str] = []
    page = browser.new_page()
    page.on("console", lambda m: m.type == "error" and problems.append(f"console error: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on(
        "request",
        lambda r: not r.url.startswith(("file://", "data:")) and problems.append(f"network request: {r.url}"),
    )
    page.on("requestfailed", lambda r: problems.append(f"failed to load: {r.url}"))
    page.goto(page_path.as_uri())
    page.wait_for_load_state("load")
    root = site.resolve()
    for href in page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)"):
        url = urlparse(href)
        target = Path(unquote(url.path))
        if url.scheme != "file":
            problems.append(f"link leaves the site: {href}")
        elif not target.is_file() or not target.resolve().is_relative_to(root):
            problems.append(f"link does not resolve to a file in the site: {href}")
        elif url.fragment and target == page_path and not page.query_selector(f"#{url.fragment}"):
            problems.append(f"link to a missing anchor: {href}")
    for fig in page.query_selector_all("figure"):
        svg = fig.query_selector("svg")
        caption = (fig.query_selector("figcaption") or fig).inner_text().strip()
        label = svg.get_attribute("aria-label") if svg else None
        if svg is not None and (not label or svg.get_attribute("role") != "img"):
            problems.append(f"chart without role=img and aria-label: {page_path.name}")
        if not caption:
            problems.append(f"figure without a caption: {page_path.name}")
    for table in page.query_selector_all("table"):
        if not table.query_selector("thead th[scope=col]"):
            problems.append(f"table without column headers: {page_path.name}")
    if page.get_attribute("html", "lang") != "en":
        problems.append(f"no lang attribute: {page_path.name}")
    page.close()
    return problems


def index_rows(page) -> list[str]:
    return page.eval_on_selector_all("#builds tbody tr:not([hidden])", "rs => rs.map(r => r.dataset.sha256)")


def check_sort_and_filter(browser, site: Path) -> list[str]:
    page = browser.new_page()
    page.set_default_timeout(3000)  # a control that never appears is a problem found, not a hang
    try:
        return _sort_and_filter(page, site)
    except PlaywrightError as exc:
        return [f"sort or filter control unusable: {str(exc).splitlines()[0]}"]
    finally:
        page.close()


def _sort_and_filter(page, site: Path) -> list[str]:
    problems = []
    page.goto((site / "index.html").as_uri())
    # Sort by p99 E2EL, from the keyboard: focus the header's button and press Enter.
    values = dict(
        page.eval_on_selector_all(
            "#builds tbody tr",
            "rs => rs.map(r => [r.dataset.sha256, r.querySelector('[data-figure=e2el_p99]').dataset.value])",
        )
    )
    ascending = sorted(values, key=lambda s: float(values[s]))
    button = page.get_by_role("button", name="p99 E2EL")
    button.focus()
    page.keyboard.press("Enter")
    if index_rows(page) != ascending:
        problems.append(f"sort ascending: rows {index_rows(page)}, expected {ascending}")
    header = button.locator("xpath=..")
    if header.get_attribute("aria-sort") != "ascending":
        problems.append("aria-sort not ascending after one press")
    button.click()
    if index_rows(page) != ascending[::-1]:
        problems.append("sort descending: wrong order")
    # Filter: only the other deployment's row stays visible, and the status says so.
    page.fill("#filter", "other-deployment")
    visible = index_rows(page)
    expected = page.eval_on_selector_all(
        "#builds tbody tr",
        "rs => rs.filter(r => r.textContent.includes('other-deployment')).map(r => r.dataset.sha256)",
    )
    if visible != expected or len(expected) != 1:
        problems.append(f"filter: visible {visible}, expected {expected}")
    if page.inner_text("#filter-count") != f"1 of {len(values)} builds shown":
        problems.append(f"filter count: {page.inner_text('#filter-count')!r}")
    page.fill("#filter", "")
    if len(index_rows(page)) != len(values):
        problems.append("clearing the filter does not show every row")
    return problems


def check_print(browser, site: Path) -> list[str]:
    """Printed, the index shows every build (whatever the filter hid) and no controls."""
    page = browser.new_page()
    page.set_default_timeout(3000)
    problems = []
    try:
        page.goto((site / "index.html").as_uri())
        page.fill("#filter", "no build has this text")
        page.emulate_media(media="print")
        shown = page.eval_on_selector_all(
            "#builds tbody tr", "rs => rs.filter(r => getComputedStyle(r).display !== 'none').length"
        )
        total = page.eval_on_selector_all("#builds tbody tr", "rs => rs.length")
        if shown != total:
            problems.append(f"print: {shown} of {total} rows printed")
        if page.eval_on_selector(".controls", "e => getComputedStyle(e).display") != "none":
            problems.append("print: the filter control is printed")
    except PlaywrightError as exc:
        problems.append(f"print check: {str(exc).splitlines()[0]}")
    finally:
        page.close()
    return problems


def check_without_script(browser, site: Path) -> list[str]:
    """Without JavaScript the index is a plain table: every build shown, no inert filter box."""
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    problems = []
    try:
        page.goto((site / "index.html").as_uri())
        rows = page.eval_on_selector_all("#builds tbody tr", "rs => rs.filter(r => r.offsetParent).length")
        links = page.eval_on_selector_all("#builds tbody a[href]", "as => as.length")
        if rows != len(json_rows(site)) or links == 0:
            problems.append(f"without script: {rows} rows, {links} links shown")
        if page.is_visible(".controls"):
            problems.append("without script: a filter box that cannot work is shown")
    finally:
        context.close()
    return problems


def json_rows(site: Path) -> list[str]:
    import json

    return list(json.loads((site / "manifest.json").read_text())["entries"])


def check_site(browser, site: Path) -> list[str]:
    problems = [p for path in pages(site) for p in check_page(browser, path, site)]
    return (
        problems
        + check_sort_and_filter(browser, site)
        + check_print(browser, site)
        + check_without_script(browser, site)
    )


def test_site_in_chromium(browser, site):
    assert len(pages(site)) == 3  # the index and two deployments
    assert check_site(browser, site) == []


def _broken(site: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "broken"
    shutil.copytree(site, copy)
    return copy


@pytest.mark.parametrize(
    "breakage",
    ["console error", "dead link", "sort", "filter", "chart alternative", "network", "print", "no script"],
)
def test_check_fails_when_the_site_breaks(browser, site, tmp_path, breakage):
    broken = _broken(site, tmp_path)
    index, js = broken / "index.html", broken / "assets" / "catalogue.js"
    # pages are named by the deployment's digest: found by their heading
    (deployment,) = [p for p in pages(broken)[1:] if "<h1>catalogue-demo" in p.read_text()]
    if breakage == "console error":
        js.write_text(js.read_text().replace('"use strict";', '"use strict";\nundefinedFunction();'))
    elif breakage == "dead link":
        shutil.rmtree(next((broken / "diffs").iterdir()))
    elif breakage == "sort":
        js.write_text(js.read_text().replace("return parseFloat(a) - parseFloat(b);", "return 0;"))
    elif breakage == "filter":
        js.write_text(js.read_text().replace("r.hidden = !match;", ""))
    elif breakage == "no script":
        index.write_text(index.read_text().replace("data-filter hidden", "data-filter"))
    elif breakage == "print":
        css = broken / "assets" / "catalogue.css"
        css.write_text(css.read_text().replace("tr[hidden] { display: table-row !important; }", ""))
    elif breakage == "chart alternative":
        deployment.write_text(deployment.read_text().replace('role="img" aria-label=', "data-x="))
    else:
        index.write_text(
            index.read_text().replace("</body>", '<img src="http://127.0.0.1:9/x.png" alt=""></body>')
        )
    # Each breakage is looked for by the part of check_site that guards against it (one page, or the
    # controls), which keeps this test short; test_site_in_chromium runs all of it on the intact site.
    if breakage in ("sort", "filter"):
        found = check_sort_and_filter(browser, broken)
    elif breakage == "print":
        found = check_print(browser, broken)
    elif breakage == "no script":
        found = check_without_script(browser, broken)
    else:
        found = check_page(
            browser, deployment if breakage in ("chart alternative", "dead link") else index, broken
        )
    assert found != [], breakage
