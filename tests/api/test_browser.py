"""A real browser: headless Chromium opens GraphiQL and the dashboard from a live server, offline.

The pages may load nothing but what this server serves (``--host-resolver-rules`` maps every other
host to nowhere), so a CDN reference would leave GraphiQL blank and the graph undrawn. The
dashboard page, opened at ``/?paper=p1``, runs its ``egoNetwork`` query and draws the network with
sigma.js (WebGL, on the CPU through SwiftShader); the test reads the page's DOM after its scripts ran and saves screenshots under
``test-artifacts/``. Needs Debian's ``chromium`` package (``make browser-tools``); skipped without it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from api.settings import AppSettings
from graph import GraphStore, ingest
from tests.api.conftest import linked_batch
from tests.api.live import live_server

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium, or make browser-tools)"
    ),
]


def chromium(*args: str, timeout: float = 90) -> str:
    assert CHROMIUM is not None
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",  # tests run as root in containers
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",  # offline: nothing but loopback resolves
        "--window-size=1400,900",
        "--virtual-time-budget=20000",  # let scripts, fetches and the layout finish before dumping
        *args,
    ]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    assert completed.returncode == 0, completed.stderr[-2000:]
    return completed.stdout


@pytest.fixture
def base(rich_store: GraphStore, store_path: Path) -> Iterator[str]:
    ingest(rich_store, linked_batch())  # p2's full text with stored links into it, for the linkage panel
    rich_store.close()
    with live_server(store_path, AppSettings.from_env()) as url:
        yield url


def test_dashboard_draws_an_ego_network(base: str) -> None:
    """``/?paper=p1`` opens the ego view (the dashboard's map, search and details are tested with selenium in
    tests/api/test_dashboard.py)."""
    ARTIFACTS.mkdir(exist_ok=True)
    url = f"{base}/?paper=p1"
    dom = chromium("--dump-dom", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", url)
    assert re.search(r'id="seed-title"[^>]*>Statistical machine translation<', dom), dom[-2000:]
    assert "5 papers, 6 edges" in dom  # the depth-2 egoNetwork answer, as the page reports it
    assert "<canvas" in dom  # sigma.js drew it
    assert "Word alignment models" in dom  # the co-cited list
    shot = ARTIFACTS / "dashboard.png"
    chromium(f"--screenshot={shot}", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", url)
    assert shot.stat().st_size > 10_000


def test_graphiql_loads_offline(base: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    url = f"{base}/graphql?q=%7B%20stats%20%7B%20label%20count%20%7D%20%7D"  # GraphiQL prefills `q`
    dom = chromium("--dump-dom", url)
    assert "graphiql-editor" in dom, dom[-2000:]  # React rendered GraphiQL from the local bundle
    assert "stats" in dom  # with the query from the URL in its editor
    assert "Loading..." not in dom
    shot = ARTIFACTS / "graphiql.png"
    chromium(f"--screenshot={shot}", url)
    assert shot.stat().st_size > 10_000


def test_dashboard_recommends_for_a_passage(base: str) -> None:
    """The recommend panel runs its query from ``/?passage=`` and shows the answer: ranked papers, or
    (a store whose papers were never embedded, no cache entry for them) the reason as the API gives it."""
    from urllib.parse import quote

    dom = chromium("--dump-dom", f"{base}/?passage={quote('Phrase tables [CIT] help translation.')}")
    assert 'id="recommend-status"' in dom and "Ranking…" not in dom, dom[-1500:]
    ranked = re.search(r"(\d+) of (\d+) candidates", dom)
    assert ranked or "INDEX_UNAVAILABLE:" in dom, dom[-1500:]


def test_dashboard_shows_the_linked_sentences_of_a_citance(base: str) -> None:
    """``/?paper=p2&citance=...`` lists the stored links into p2's sentences (gold with its annotator,
    silver and model with their scores) and runs ``linkage`` for the typed citance: scored sentences,
    or — no linker trained beside this store — the reason as the API gives it."""
    from urllib.parse import quote

    ARTIFACTS.mkdir(exist_ok=True)
    url = f"{base}/?paper=p2&citance={quote('Alignment error rate measures quality [1].')}"
    dom = chromium("--dump-dom", url)
    assert "3 of 3 stored links" in dom, dom[-2500:]
    assert "“Alignment (Brown, 1993) and phrases (Koehn, 1999) help.” → sentence 1: Model 1 aligns words" in dom
    assert "GOLD by Ann · from p1" in dom and "SILVER 0.70 · from p1" in dom and "MODEL 0.40 · from p1" in dom
    assert "Scoring…" not in dom, dom[-1500:]
    assert re.search(r"\d+ linked of the \d+ best sentences of p2", dom) or "LINKER_UNAVAILABLE:" in dom, dom[-1500:]
    shot = ARTIFACTS / "dashboard_linkage.png"
    chromium(f"--screenshot={shot}", url)
    assert shot.stat().st_size > 10_000
