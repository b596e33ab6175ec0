"""The built site in a real browser: Debian's headless Chromium (driven by chromedriver through
selenium) opens the home page, a claims page, the second paper's notes, the recipes and the
figure galleries from a static server on 127.0.0.1, checks the title and that every image loaded
(natural width > 0), and writes a screenshot into the test's temporary folder. Skips without the
docs extra, selenium, chromium or chromedriver (``.ci/run`` installs them). The home page's
theorem → verdict table is read as a reader sees it, and the notes' formulas must be typeset by
the site's own KaTeX."""

from __future__ import annotations

import functools
import shutil
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.docs._site import require_docs_extra

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
#: page → the text its <title> starts with (material: "<page title> - theorylab").
PAGES = {
    "index.html": "theorylab",
    "papers/huang2024/index.html": "Notes (huang2024) - theorylab",
    "recipes/index.html": "Recipes - theorylab",
    "claims/jelassi2022/thm3.1/index.html": "Theorem 3.1",
    "gallery/jelassi2022/index.html": "Figure gallery (jelassi2022) - theorylab",
    "gallery/huang2024/index.html": "Figure gallery (huang2024) - theorylab",
}


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep the test output clean
        pass


@pytest.fixture(scope="module")
def served_site(request):
    require_docs_extra()
    pytest.importorskip("selenium")
    for exe in (CHROMIUM, CHROMEDRIVER):
        if not Path(exe).exists():
            pytest.skip(f"{exe} not installed (apt-get install chromium chromium-driver)")
    site = request.getfixturevalue("built_site")  # built only when the browser can run
    server = ThreadingHTTPServer(("127.0.0.1", 0),
                                 functools.partial(_Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser(served_site, tmp_path_factory):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    profile = tmp_path_factory.mktemp("chromium-profile")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                 f"--user-data-dir={profile}", "--window-size=1280,1000"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


@pytest.mark.parametrize("page", list(PAGES))
def test_page_renders_with_its_images(page, served_site, browser, tmp_path):
    browser.get(served_site + page)
    assert browser.title.startswith(PAGES[page]), browser.title
    # wait for every image (lazy ones are forced to load) and read its natural width
    widths = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const imgs = Array.from(document.images);
        imgs.forEach(i => { i.loading = "eager"; });
        Promise.all(imgs.map(i => i.complete ? null :
            new Promise(r => { i.onload = r; i.onerror = r; })))
          .then(() => done(imgs.map(i => [i.getAttribute("src"), i.naturalWidth])));
    """)
    broken = [src for src, width in widths if not width > 0]
    assert not broken, broken
    if page.startswith(("claims/", "gallery/")):  # they show figures
        assert widths
    shot = tmp_path / (page.replace("/", "_") + ".png")
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 0


def test_home_page_shows_both_papers_verdicts(served_site, browser):
    """The home page's theorem → verdict table, as a reader sees it: one row per claim of both
    papers, each verdict a link to its results page that opens."""
    browser.get(served_site + "index.html")
    rows = browser.execute_script("""
        const table = document.querySelector("#claims-and-verdicts ~ div table, "
                                             + "#claims-and-verdicts ~ table");
        return Array.from(table.querySelectorAll("tbody tr")).map(tr => {
            const cells = Array.from(tr.cells);
            const link = cells[2].querySelector("a");
            return [cells[0].innerText.trim(), cells[2].innerText.trim(),
                    link ? link.getAttribute("href") : null];
        });
    """)
    papers = {paper for paper, _, _ in rows}
    assert {"jelassi2022", "huang2024"} <= papers, rows
    linked = [href for _, _, href in rows if href]
    assert linked and all(v for _, v, _ in rows)
    browser.get(served_site + linked[-1])
    assert "generated results" in browser.title


def test_formulas_are_typeset(served_site, browser):
    """KaTeX (served by the site) typesets the notes' formulas: no raw TeX is left."""
    browser.get(served_site + "papers/huang2024/index.html")
    found = browser.execute_script("""
        return [document.querySelectorAll(".arithmatex .katex").length,
                document.querySelectorAll(".arithmatex").length];""")
    assert found[0] > 0 and found[0] >= found[1], found
