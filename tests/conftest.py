"""Shared fixtures: real third-party PDFs, generated edge-case PDFs, settings, servers.

Fixtures build servers but never open clients (fastmcp's advice on event loops).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pymupdf
import pytest

os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")
os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from taskloom.tools.environment.appstate import StateFolder  # noqa: E402
from taskloom.tools.runtime import Runtime  # noqa: E402
from taskloom.tools.settings import Settings  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PDF_CACHE = ROOT / "tests" / "data" / "cache"
EXAMPLES = ROOT / "examples"
TEST_ROOTS = [EXAMPLES, ROOT / "tests" / "data"]  # read-only material tests allow tools to read

#: Test files that share an expensive session fixture (one tracker crawl and generation each, ~2.5 and
#: ~1.3 min; the penguins browser's ``penguins_graph`` crawl, ~0.5 min, which three workers each built):
#: ``--dist loadfile`` sends each group to one worker as one unit, so the fixture is built once.
SHARED_FIXTURE_GROUPS = {
    **{f"tests/tools/generate/{name}.py": "trackers"
       for name in ("test_trac_tasks", "test_trac_lookups", "test_wiki_tasks", "test_bulk_tasks", "test_roundup_tasks", "test_roundup_families")},
    **{f"tests/tools/generate/{name}.py": "penguins"
       for name in ("test_compare_tasks", "test_composite_scores", "test_confirm_gold", "test_find_tasks", "test_flow_compose", "test_lookup_tasks", "test_query_tasks")},
}


class _FixtureGroupScheduler:
    """``--dist loadfile``, but the files of one :data:`SHARED_FIXTURE_GROUPS` group are one unit of work."""

    @staticmethod
    def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
        if config.getvalue("dist") != "loadfile":
            return None
        from xdist.scheduler import LoadFileScheduling

        class FileOrFixtureGroup(LoadFileScheduling):
            def _split_scope(self, nodeid: str) -> str:
                file = nodeid.split("::", 1)[0]
                return SHARED_FIXTURE_GROUPS.get(file, file)

        return FileOrFixtureGroup(config, log)


def _file_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Files of the slow tier first, then integration files, then the rest (order kept within each; a file stays whole).

    With ``--dist loadfile --no-loadscope-reorder`` (``make test``) xdist hands out files in this
    order, so the long ones start at once and the quick unit files fill the end: neither worker waits
    idle on the other's last long file.
    """
    weight: dict[str, int] = {}
    for item in items:
        marks = {m.name for m in item.iter_markers()}
        unit = SHARED_FIXTURE_GROUPS.get(_file_of(item), _file_of(item))
        weight[unit] = min(weight.get(unit, 2), 0 if "slow" in marks else 1 if "integration" in marks else 2)
    items.sort(key=lambda item: weight[SHARED_FIXTURE_GROUPS.get(_file_of(item), _file_of(item))])


def pytest_configure(config: pytest.Config) -> None:
    if config.pluginmanager.hasplugin("xdist"):  # the hook exists only with pytest-xdist (not under -p no:xdist)
        config.pluginmanager.register(_FixtureGroupScheduler(), "taskloom-fixture-groups")


@pytest.fixture(scope="session")
def real_pdfs() -> dict[str, Path]:
    """countreg.pdf and lmer.pdf from Debian's r-cran-pscl and r-cran-lme4 (fetched on demand)."""
    wanted = {name: PDF_CACHE / f"{name}.pdf" for name in ("countreg", "lmer")}
    if not all(p.is_file() for p in wanted.values()):
        subprocess.run(["bash", str(ROOT / "tests" / "data" / "fetch-pdfs.sh")], check=True)
    return wanted


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings over a fresh workspace with the fast hashing embedder.

    Tools may read the test's own folder and the bundled examples and test data besides
    the workspace, as a user would allow with ``--allow-root``.
    """
    return Settings(workspace=tmp_path / "ws", embedder="hashing", allow_roots=[tmp_path, *TEST_ROOTS])


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


LOREM = (
    "Knowledge graphs connect facts drawn from documents. Each paragraph here talks about a "
    "different measurement station and the numbers it reported during the spring survey."
)


def _paragraph(i: int, words: int = 40) -> str:
    base = f"Paragraph {i} describes station S{i:02d} which recorded {i * 3} millimetres of rain. "
    filler = " ".join(f"word{i}x{j}" for j in range(words))
    return base + filler + "."


@pytest.fixture
def two_column_pdf(tmp_path: Path) -> Path:
    """One page, two columns of three paragraphs each (left: 1–3, right: 4–6)."""
    doc = pymupdf.open()
    page = doc.new_page()
    for col, x0 in enumerate((50, 310)):
        y = 60
        for k in range(3):
            i = col * 3 + k + 1
            rect = pymupdf.Rect(x0, y, x0 + 235, y + 200)
            used = page.insert_textbox(rect, _paragraph(i, 30), fontsize=10, fontname="helv")
            y += 200 - used + 20
    path = tmp_path / "two-columns.pdf"
    doc.save(path)
    return path


@pytest.fixture
def table_across_pages_pdf(tmp_path: Path) -> Path:
    """A ruled 3-column table: caption and rows 1–12 on page 1, rows 13–20 on page 2 (header repeated)."""
    doc = pymupdf.open()
    rows = [("Station", "Rain", "Wind")] + [(f"S{i:02d}", f"{i * 3}", f"{i + 10}") for i in range(1, 21)]

    def draw(page: pymupdf.Page, top: float, body: list[tuple[str, str, str]]) -> None:
        xs = [72, 222, 372, 522]
        height = 20
        lines = [rows[0], *body]
        for r, row in enumerate(lines):
            y = top + r * height
            for c, text in enumerate(row):
                page.insert_text((xs[c] + 4, y + 14), text, fontsize=10, fontname="helv")
        bottom = top + len(lines) * height
        for r in range(len(lines) + 1):
            page.draw_line((xs[0], top + r * height), (xs[-1], top + r * height))
        for x in xs:
            page.draw_line((x, top), (x, bottom))

    first = doc.new_page()
    first.insert_text((72, 60), "1. Rainfall survey", fontsize=16, fontname="hebo")
    first.insert_textbox(pymupdf.Rect(72, 80, 522, 300), LOREM + " " + LOREM + " See Table 1 for all stations.", fontsize=10)
    first.insert_text((72, 532), "Table 1: Rain and wind per station.", fontsize=10, fontname="helv")
    draw(first, 540, rows[1:13])
    second = doc.new_page()
    draw(second, 60, rows[13:])
    second.insert_textbox(pymupdf.Rect(72, 300, 522, 500), LOREM, fontsize=10)
    path = tmp_path / "table-across-pages.pdf"
    doc.save(path)
    return path


@pytest.fixture
def hyphenated_pdf(tmp_path: Path) -> Path:
    """Lines broken with hyphens: 'measure-/ments' and 'Smith-/Jones'."""
    doc = pymupdf.open()
    page = doc.new_page()
    lines = [
        "The network collects rainfall measure-",
        "ments every hour from eleven stations and",
        "reports them to the Smith-",
        "Jones archive once a day.",
    ]
    for i, line in enumerate(lines):
        page.insert_text((72, 100 + i * 13), line, fontsize=11)
    path = tmp_path / "hyphenated.pdf"
    doc.save(path)
    return path


@pytest.fixture
def image_only_pdf(tmp_path: Path) -> Path:
    """A scanned-looking page: one image, no text layer."""
    doc = pymupdf.open()
    page = doc.new_page()
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 64, 64), 0)
    pix.clear_with(200)
    page.insert_image(pymupdf.Rect(72, 72, 472, 472), pixmap=pix)
    path = tmp_path / "scan.pdf"
    doc.save(path)
    return path


@pytest.fixture
def encrypted_pdf(tmp_path: Path) -> Path:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "secret text", fontsize=12)
    path = tmp_path / "encrypted.pdf"
    doc.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="user", owner_pw="owner")
    return path


@pytest.fixture
def zero_page_pdf(tmp_path: Path) -> Path:
    """A syntactically valid PDF whose page tree is empty."""
    body = b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n"
    xref_at = len(body)
    xref = b"xref\n0 3\n0000000000 65535 f \n0000000009 00000 n \n0000000058 00000 n \n"
    trailer = b"trailer\n<< /Size 3 /Root 1 0 R >>\nstartxref\n" + str(xref_at).encode() + b"\n%%EOF\n"
    path = tmp_path / "empty.pdf"
    path.write_bytes(body + xref + trailer)
    return path


@pytest.fixture(scope="session")
def crawl_site() -> Callable[[Runtime, str, int], str]:
    """``crawl_site(runtime, site_url, max_pages=12)``: crawl a served site (from ``/index.html``) into a web graph; its id.

    The runtime's browser is closed afterwards, so the caller can go on in a new event loop.
    """

    def crawl(runtime: Runtime, site_url: str, max_pages: int = 12) -> str:
        async def go() -> str:
            return (await runtime.graphs.ingest_website(site_url + "/index.html", max_pages=max_pages, max_depth=2)).graph_id

        return runtime.run(go)

    return crawl


# --------------------------------------------------------------------------- real sites on 127.0.0.1

PYTHON_DOCS = Path("/usr/share/doc/python3.11/html")  # Debian python3.11-doc (make system installs it)
PENGUINS_DB = PDF_CACHE / "penguins.sqlite"  # tests/data/build-penguins.py (make test-data builds it)
TODOMVC = PDF_CACHE / "todomvc-vanillajs"  # tests/data/fetch-todomvc.sh


@pytest.fixture(scope="session")
def python_docs_site() -> Iterator[str]:
    """Base URL of the Python 3.11 documentation (Debian's python3.11-doc) served on 127.0.0.1."""
    from taskloom.tools.environment.site import serve_static

    assert (PYTHON_DOCS / "library" / "stdtypes.html").is_file(), "python3.11-doc is missing: run make system"
    with serve_static(PYTHON_DOCS) as site:
        yield site.url


@pytest.fixture(scope="session")
def todomvc_site() -> Iterator[str]:
    """Base URL of TodoMVC's VanillaJS app (npm todomvc@0.1.1) served on 127.0.0.1."""
    from taskloom.tools.environment.site import serve_static

    if not (TODOMVC / "index.html").is_file():
        subprocess.run(["bash", str(ROOT / "tests" / "data" / "fetch-todomvc.sh")], check=True)
    with serve_static(TODOMVC) as site:
        yield site.url


@pytest.fixture(scope="session")
def penguins_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of ``sqlite-web -r`` over the palmerpenguins penguins-raw records (344 rows, 50 per page)."""
    import socket
    import sys
    import time
    import urllib.request

    if not PENGUINS_DB.is_file():
        subprocess.run([sys.executable, str(ROOT / "tests" / "data" / "build-penguins.py")], check=True)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path_factory.mktemp("sqlite-web") / "server.log"
    command = [str(Path(sys.executable).with_name("sqlite_web")), "-r", "-x", "-q", "-H", "127.0.0.1", "-p", str(port), str(PENGUINS_DB)]
    with log.open("wb") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(url + "/", timeout=1).close()
                break
            except OSError:
                if server.poll() is not None:
                    raise RuntimeError(f"sqlite_web exited: {log.read_text()}") from None
                time.sleep(0.1)
        else:
            raise RuntimeError(f"sqlite_web did not answer on {url}: {log.read_text()}")
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


TRAC_ENV = PDF_CACHE / "trac-env"  # tests/data/build-trac.sh (make test-data runs it): 300 tickets from tests/data/trac-tickets.csv
TRAC_VENV = PDF_CACHE / "trac-venv"  # Trac 1.6 in a venv of its own (see tests/data/build-trac.sh)


@dataclass
class TracSite:
    """A Trac served by ``tracd`` on 127.0.0.1: its base URL and its live state folder (reset to the seeded copy with ``state.reset()``)."""

    url: str
    state: StateFolder

    @property
    def db(self) -> Path:
        """The live ``trac.db`` (the truth the tests compare the application's answers with)."""
        return self.state.live / "db" / "trac.db"


@pytest.fixture(scope="session")
def trac_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TracSite]:
    """Trac 1.6 (PyPI ``trac``, in tests/data/cache/trac-venv, started by tests/data/tracd.py) over a fresh copy of the seeded environment, for the session; anonymous users may file and edit tickets."""
    import socket
    import time
    import urllib.request

    if not (TRAC_ENV / "db" / "trac.db").is_file() or not (TRAC_VENV / "bin" / "tracd").is_file():
        subprocess.run(["bash", str(ROOT / "tests" / "data" / "build-trac.sh")], check=True)
    state = StateFolder.copy_of(TRAC_ENV, tmp_path_factory.mktemp("trac") / "env")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = state.live.parent / "tracd.log"
    command = [str(TRAC_VENV / "bin" / "python"), str(ROOT / "tests" / "data" / "tracd.py"), "-s", "-b", "127.0.0.1", "-p", str(port), str(state.live)]
    with log.open("wb") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(url + "/", timeout=2).close()
                break
            except OSError:
                if server.poll() is not None:
                    raise RuntimeError(f"tracd exited: {log.read_text()}") from None
                time.sleep(0.1)
        else:
            raise RuntimeError(f"tracd did not answer on {url}: {log.read_text()}")
        yield TracSite(url, state)
    finally:
        server.terminate()
        server.wait(timeout=10)


ROUNDUP_ENV = PDF_CACHE / "roundup-env"  # tests/data/build-roundup.sh (make test-data runs it): 200 issues from tests/data/roundup-issues.csv
ROUNDUP_VENV = PDF_CACHE / "roundup-venv"  # Roundup in a venv of its own (see tests/data/build-roundup.sh)


@dataclass
class RoundupSite:
    """A Roundup tracker served by ``roundup-server`` on 127.0.0.1: its base URL and its live ``db`` folder (reset to the seeded copy with ``state.reset()``)."""

    url: str
    state: StateFolder

    @property
    def db(self) -> Path:
        """The live SQLite database (the truth the tests compare the application's answers with)."""
        return self.state.live / "db"


@pytest.fixture(scope="session")
def roundup_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RoundupSite]:
    """Roundup's classic tracker (PyPI ``roundup``, in tests/data/cache/roundup-venv) over a fresh copy of the seeded tracker, for the session; anonymous users may file and edit issues.

    The tracker's home is copied with its ``web`` URL set to the port it is served on; its
    state is the ``db`` folder (the SQLite database, the message files; the one-time-key
    and session databases Roundup adds are removed on reset).
    """
    import shutil
    import socket
    import time
    import urllib.request

    if not (ROUNDUP_ENV / "db" / "db").is_file() or not (ROUNDUP_VENV / "bin" / "roundup-server").is_file():
        subprocess.run(["bash", str(ROOT / "tests" / "data" / "build-roundup.sh")], check=True)
    home = tmp_path_factory.mktemp("roundup") / "tracker"
    shutil.copytree(ROUNDUP_ENV, home, ignore=shutil.ignore_patterns("db"))
    state = StateFolder.copy_of(ROUNDUP_ENV / "db", home / "db")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/tracker"
    config = home / "config.ini"
    config.write_text("".join(f"web = {url}/\n" if line.startswith("web = ") else line for line in config.read_text().splitlines(keepends=True)))
    log = home.parent / "roundup-server.log"
    # -u: roundup-server refuses to run as root unless told which user to be (ignored when not root)
    command = [str(ROUNDUP_VENV / "bin" / "roundup-server"), "-u", str(os.getuid()), "-n", "127.0.0.1", "-p", str(port), f"tracker={home}"]
    with log.open("wb") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(url + "/", timeout=2).close()
                break
            except OSError:
                if server.poll() is not None:
                    raise RuntimeError(f"roundup-server exited: {log.read_text()}") from None
                time.sleep(0.1)
        else:
            raise RuntimeError(f"roundup-server did not answer on {url}: {log.read_text()}")
        yield RoundupSite(url, state)
    finally:
        server.terminate()
        server.wait(timeout=10)
