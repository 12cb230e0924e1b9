"""The course site, built and opened in a browser: ``mkdocs build --strict`` (every example runs, so an example that
raises fails here), then every page in headless Chromium through Playwright, served from localhost. A page fails on a
console error, an unloaded file, a formula that KaTeX did not typeset, or, where it draws a graph, no inline SVG.
A screenshot of the course's first page is left in docs/screenshots/ (ignored by git) for a person to look at.

Skipped, with the reason, without the docs extra (``pip install -e '.[docs]'``) or Debian's chromium."""
import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "site"
SCREENSHOTS = ROOT / "docs" / "screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

NO_DOCS_EXTRA = "the docs extra is not installed: pip install -e '.[docs]'"
pytest.importorskip("mkdocs", reason=NO_DOCS_EXTRA)
pytest.importorskip("material", reason=NO_DOCS_EXTRA)
sync_api = pytest.importorskip("playwright.sync_api", reason=NO_DOCS_EXTRA)
if not Path(CHROMIUM).exists():
    pytest.skip("no chromium: apt-get install chromium chromium-driver", allow_module_level=True)

# Chromium's own networking is off: this machine reaches no network, and the site needs none.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def site():
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(SITE)],
                            check=False, cwd=ROOT, capture_output=True, text=True,
                            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, result.stdout + result.stderr
    return SITE


@pytest.fixture(scope="module")
def server(site):
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def pages(site):
    return sorted(str(path.relative_to(site).parent).replace("\\", "/") + "/"
                  for path in site.rglob("index.html") if path.parent.name != "404")


def test_the_site_builds_with_both_languages_complete(site):
    built = pages(site)
    english = {p[len("en/"):] for p in built if p.startswith("en/")}
    spanish = {p[len("es/"):] for p in built if p.startswith("es/")}
    assert len(english) >= 12
    assert english == spanish
    assert {"reference/", "reference/tensor/", "architecture/"} <= set(built)


def test_every_page_renders_without_errors(site, server, browser):
    """Each page: no console error, no failed request, formulas typeset, graphs inline."""
    failures = []
    for page_path in pages(site):
        html = (site / page_path / "index.html").read_text(encoding="utf-8")
        page = browser.new_page()
        errors = []
        page.on("console", lambda message, errors=errors: errors.append(message.text)
                if message.type == "error" else None)
        page.on("pageerror", lambda error, errors=errors: errors.append(str(error)))
        page.on("requestfailed", lambda request, errors=errors: errors.append(f"failed: {request.url}"))
        page.on("response", lambda response, errors=errors: errors.append(f"{response.status}: {response.url}")
                if response.status >= 400 else None)
        page.goto(f"{server}/{page_path}", wait_until="networkidle")
        if errors:
            failures.append(f"{page_path}: {errors}")
        if 'class="arithmatex"' in html:
            math = page.locator(".arithmatex").count()
            typeset = page.locator(".arithmatex .katex").count()
            if math == 0 or typeset != math:
                failures.append(f"{page_path}: {typeset} of {math} formulas typeset by KaTeX")
            if page.locator(".katex-error").count():
                failures.append(f"{page_path}: a formula KaTeX could not parse")
        if 'class="result graph"' in html:
            drawn = page.locator(".graph svg g.node").count()
            if drawn == 0:
                failures.append(f"{page_path}: a graph is on the page but no inline SVG node was drawn")
        if page_path == "en/01-tensors-remember/":
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / "course-first-page.png"), full_page=False)
        page.close()
    assert not failures, "\n".join(failures)
    assert (SCREENSHOTS / "course-first-page.png").stat().st_size > 10_000


def test_pages_that_teach_show_formulas_and_graphs(site):
    """The course's chapters draw graphs and typeset formulas in both languages (the browser test checks them)."""
    for lang in ("en", "es"):
        for chapter in ("01-tensors-remember", "02-backward", "03-vjp", "08-exercises", "09-neural-network"):
            html = (site / lang / chapter / "index.html").read_text(encoding="utf-8")
            assert 'class="result graph"' in html and "<svg" in html, (lang, chapter)
            assert 'class="arithmatex"' in html, (lang, chapter)
        explained = (site / lang / "02-backward" / "index.html").read_text(encoding="utf-8")
        assert ("chain rule" if lang == "en" else "regla de la cadena") in explained
