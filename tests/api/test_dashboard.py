"""The science-mapping dashboard in a real browser: Chromium driven by selenium through Debian's chromedriver.

Two live servers: the API tests' rich store (tests/api/conftest.py: five papers, co-citation computed) and a store
of the Web of Science sample ``formats/wos/savedrecs.txt`` (32 records, 958 cited references; skipped without
``$CITEGRAPH_DATA``). The pages may load nothing but what the server serves (``--host-resolver-rules``). Each test
loads a view, acts as an analyst does (clicks a node and an edge on the WebGL canvas, moves the year slider,
exports), reads what the panels show, compares it with the GraphQL answer and saves a screenshot under
``test-artifacts/dashboard/``; the map test also writes docs/dashboard-map.png (the README's screenshot).

Why selenium + chromedriver: both come from the package registries (PyPI, Debian) the project already uses, the
tests stay in pytest beside the server fixtures, and chromedriver matches the system Chromium's version exactly
(one Debian source package). Skipped with the reason when Chromium, chromedriver or selenium is missing
(``make browser-tools``, the ``dev`` extra). The default run has the map test only (about 25 s with its store
and browser); ``pytest -m browser tests/api/test_dashboard.py`` runs them all (about 2 minutes on two cores; the
bundled-store test also needs ``CITEGRAPH_DASHBOARD_STORE``).
"""

from __future__ import annotations

import json
import shutil
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import httpx
import pandas as pd
import pytest

from api.settings import AppSettings
from graph import GraphBatch, StoreConfig, ingest, open_store
from tests.api.conftest import linked_batch, rich_batch
from tests.api.live import live_server
from tests.tiny_graph import tiny_batch

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e '.[dev]')")
from selenium.common.exceptions import TimeoutException  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts" / "dashboard"
SCREENSHOT = REPO / "docs" / "dashboard-map.png"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make browser-tools)"),
    pytest.mark.skipif(CHROMEDRIVER is None, reason="chromedriver is not installed (apt-get install chromium-driver)"),
]


@pytest.fixture(scope="module")
def downloads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("downloads")


@pytest.fixture(scope="module")
def browser(downloads: Path) -> Iterator[Any]:
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless=new",
        "--no-sandbox",  # tests run as root in containers
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",  # offline: nothing but loopback resolves
        "--window-size=1024,768",  # the smallest screen the dashboard is built for
        "--use-angle=swiftshader",  # WebGL on the CPU: sigma.js draws without a GPU
        "--enable-unsafe-swiftshader",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
    driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)})
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def rich_base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from gnn.cocitation.compute import compute_cocitation

    path = tmp_path_factory.mktemp("rich") / "graph.db"
    store = open_store(StoreConfig(db_path=path))
    quoted = pd.DataFrame(  # a title as some exports carry it, HTML entities and all
        {
            "id": ["p6"],
            "title": ["The &quot;noisy channel&quot; &amp; its model"],
            "abstract": [None],
            "year": [1990],
            "_origin": ["papers.jsonl:6"],
        }
    )
    for batch in (tiny_batch(), rich_batch(), linked_batch(), GraphBatch("quoted", nodes={"Paper": quoted})):
        ingest(store, batch)
    compute_cocitation(store)
    store.close()
    with live_server(path, AppSettings.from_env()) as url:
        yield url


@pytest.fixture(scope="module")
def wos_base(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Iterator[str]:
    from gnn.cocitation.compute import compute_cocitation
    from loaders import wos

    sample = data_dir / "formats" / "wos" / "savedrecs.txt"
    if not sample.is_file():
        pytest.skip(f"the Web of Science sample is not at {sample}")
    path = tmp_path_factory.mktemp("wos") / "graph.db"
    store = open_store(StoreConfig(db_path=path))
    ingest(store, wos.load(sample))
    compute_cocitation(store)
    store.close()
    with live_server(path, AppSettings.from_env()) as url:
        yield url


def gql(base: str, query: str, variables: dict[str, Any] | None = None) -> Any:
    body = httpx.post(f"{base}/graphql", json={"query": query, "variables": variables or {}}, timeout=30).json()
    assert "errors" not in body, body
    return body["data"]


def wait(driver: Any, condition: Callable[[Any], Any], timeout: float = 30, what: str = "") -> Any:
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.1).until(condition)
    except TimeoutException:
        status = driver.find_element(By.ID, "graph-status").text
        raise AssertionError(f"waited {timeout}s for {what}; status: {status!r}; console: {console(driver)}") from None


def console(driver: Any) -> list[dict[str, Any]]:
    return [entry for entry in driver.get_log("browser") if entry["level"] in ("SEVERE", "WARNING")]


def open_map(driver: Any, url: str) -> dict[str, Any]:
    """Load ``url`` and wait until the map is drawn and its layout has stopped; the page's map summary."""
    driver.get(url)
    wait(
        driver,
        lambda d: d.execute_script("return window.citegraphMap && window.citegraphMap.layout === 'done'"),
        what="the map's layout",
    )
    wait(driver, lambda d: "Loading" not in d.find_element(By.ID, "graph-status").text, what="the status")
    return driver.execute_script("return {...window.citegraphMap, state: window.citegraph.state()}")


def click_at(driver: Any, x: float, y: float) -> None:
    """A real mouse click at page pixel (x, y) on the WebGL canvas (sigma picks the node or edge under it)."""
    graph = driver.find_element(By.ID, "graph")
    box = graph.rect
    ActionChains(driver).move_to_element_with_offset(
        graph, int(x - box["x"] - box["width"] / 2), int(y - box["y"] - box["height"] / 2)
    ).click().perform()


def details_text(driver: Any, needle: str) -> str:
    wait(driver, lambda d: needle in d.find_element(By.ID, "details-panel").text, what=f"{needle!r} in the details")
    return driver.find_element(By.ID, "details-panel").text


def listed_ids(driver: Any, container: str) -> list[str]:
    return [b.get_attribute("data-paper-id") for b in driver.find_elements(By.CSS_SELECTOR, f"#{container} li button")]


def downloaded(folder: Path, name: str, timeout: float = 15) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        path = folder / name
        if path.is_file() and path.stat().st_size > 0 and not (folder / f"{name}.crdownload").exists():
            return path
        time.sleep(0.1)
    raise AssertionError(f"{name} was not downloaded into {folder}: {sorted(p.name for p in folder.iterdir())}")


def no_console_errors(driver: Any) -> None:
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


def test_map_node_and_edge_details_on_the_rich_store(browser: Any, rich_base: str) -> None:
    """The map of every co-cited pair (min count 1), a node's details (the papers citing it = GraphQL's citedBy),
    an edge's details (the documents citing both = GraphQL's coCitationPair.citedBy), Back, and a reload."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    summary = open_map(browser, f"{rich_base}/?min=1")
    assert (summary["nodes"], summary["edges"], summary["source"]) == (3, 3, "mapNetwork"), summary
    assert "3 nodes, 3 links (references, count, min count 1)" in browser.find_element(By.ID, "graph-status").text
    legend = browser.find_element(By.ID, "legend").text
    clusters = gql(rich_base, "{ clusters { id label } }")["clusters"]
    assert clusters and all(f"{c['id']}: {c['label']}" in legend for c in clusters)  # colours named by the store
    browser.save_screenshot(str(ARTIFACTS / "map.png"))

    # a node: click p2 where sigma drew it
    position = browser.execute_script("return window.citegraph.nodePosition('p2')")
    click_at(browser, position["x"], position["y"])
    text = details_text(browser, "Cited by (2)")
    assert "Word alignment models" in text and "citations (window)" in text
    expected = gql(rich_base, '{ paper(id: "p2") { citedBy(first: 10) { edges { node { id } } } } }')
    assert listed_ids(browser, "node-cited-by") == [e["node"]["id"] for e in expected["paper"]["citedBy"]["edges"]]
    assert "sel=p2" in browser.current_url
    browser.save_screenshot(str(ARTIFACTS / "node.png"))

    # an edge: the midpoint of p2–p3
    a = browser.execute_script("return window.citegraph.nodePosition('p2')")
    b = browser.execute_script("return window.citegraph.nodePosition('p3')")
    click_at(browser, (a["x"] + b["x"]) / 2, (a["y"] + b["y"]) / 2)
    text = details_text(browser, "Documents citing both (2)")
    assert "co-cited by" in text and "association" in text
    pair = gql(
        rich_base,
        '{ coCitationPair(source: "p2", target: "p3") { ... on CoCitationPair { count '
        "citedBy(first: 10) { edges { node { id } } } countsByYear { year count } } } }",
    )["coCitationPair"]
    assert listed_ids(browser, "edge-cited-by") == [e["node"]["id"] for e in pair["citedBy"]["edges"]]
    chart = browser.find_element(By.CSS_SELECTOR, "#details svg.years-chart").get_attribute("aria-label")
    assert chart.endswith(", ".join(f"{c['year']} {c['count']}" for c in pair["countsByYear"]))
    assert {"edge=p2~p3", "edge=p3~p2"} & set(unquote(browser.current_url).split("&"))
    browser.save_screenshot(str(ARTIFACTS / "edge.png"))

    # Back returns to the node; a reload of that URL shows the same
    browser.find_element(By.ID, "back").click()
    wait(browser, lambda d: "sel=p2" in d.current_url, what="Back to the node")
    details_text(browser, "Cited by (2)")
    browser.refresh()
    details_text(browser, "Cited by (2)")
    no_console_errors(browser)


@pytest.mark.slow
def test_year_slider_redraws_the_window_and_the_timeline(browser: Any, rich_base: str) -> None:
    """Moving the slider to 2003– keeps only p4's citations (2004): every pair once; the timeline has lanes."""
    open_map(browser, f"{rich_base}/?min=1")
    slider = browser.find_element(By.ID, "year-from")
    browser.execute_script(
        "const s = arguments[0]; s.value = 2003; s.dispatchEvent(new Event('input')); s.dispatchEvent(new Event('change'))",
        slider,
    )
    wait(browser, lambda d: "citing years 2003" in d.find_element(By.ID, "graph-status").text, what="the 2003 window")
    assert "from=2003" in browser.current_url
    late = gql(rich_base, "{ coCitationPairs(measure: COUNT, yearMin: 2003) { edges { node { count } } } }")
    assert browser.execute_script("return window.citegraphMap.edges") == len(late["coCitationPairs"]["edges"]) == 3
    browser.find_element(By.CSS_SELECTOR, "#views button[data-view=timeline]").click()
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#timeline svg circle"), what="the timeline")
    circles = browser.find_elements(By.CSS_SELECTOR, "#timeline svg circle")
    assert sorted(c.get_attribute("data-id") for c in circles) == ["p1", "p2", "p3"]
    # CiteSpace's timeline: each work where it entered the field (its burst, else its first citation in the window:
    # p4's, 2004), not its publication year (p2: 1993); the lanes' bands are clusterTimeline's citations per year
    nodes = gql(rich_base, "{ mapNetwork(minCount: 1, yearMin: 2003) { nodes { id year firstYear burstBegin } } }")
    expected = {n["id"]: n["burstBegin"] or n["firstYear"] for n in nodes["mapNetwork"]["nodes"]}
    assert expected["p2"] == 2004 != next(n["year"] for n in nodes["mapNetwork"]["nodes"] if n["id"] == "p2")
    assert {c.get_attribute("data-id"): int(c.get_attribute("data-year")) for c in circles} == expected
    lanes = gql(rich_base, "{ clusterTimeline(yearMin: 2003) { cluster years { year citations } } }")["clusterTimeline"]
    drawn = {
        (
            int(b.get_attribute("data-cluster")),
            int(r.get_attribute("data-year")),
            int(r.get_attribute("data-citations")),
        )
        for b in browser.find_elements(By.CSS_SELECTOR, "#timeline svg g.band")
        for r in b.find_elements(By.CSS_SELECTOR, "rect")
    }
    on_map = set(browser.execute_script("return window.citegraph.graph().mapNodes((n, a) => a.data.cluster)"))
    assert drawn and drawn == {
        (c["cluster"], y["year"], y["citations"]) for c in lanes if c["cluster"] in on_map for y in c["years"]
    }
    browser.execute_script("arguments[0].dispatchEvent(new MouseEvent('click'))", circles[0])  # they overlap at 2004
    details_text(browser, "Cited by")
    browser.save_screenshot(str(ARTIFACTS / "timeline.png"))
    no_console_errors(browser)


@pytest.mark.slow
def test_a_unit_the_store_has_not_built_is_disabled_and_the_map_refits(browser: Any, rich_base: str) -> None:
    """The unit list comes from the schema and `mapUnits`: a unit the store has nothing for (the rich store has no
    keywords, affiliations or countries) is listed disabled with the command that builds it, and a URL asking for it
    says so without asking for the map. After the window shrinks to 1024×768 every node is still inside the map's
    box (sigma refits)."""
    browser.get(f"{rich_base}/?unit=KEYWORDS")
    wait(browser, lambda d: "not built" in d.find_element(By.ID, "graph-status").text, what="the unit's status")
    units = {u["unit"]: u for u in gql(rich_base, "{ mapUnits { unit built command } }")["mapUnits"]}
    assert units["KEYWORDS"]["command"] in browser.find_element(By.ID, "graph-status").text
    options = {o.get_attribute("value"): o for o in browser.find_elements(By.CSS_SELECTOR, "#unit option")}
    assert set(options) == set(units)
    for name, unit in units.items():
        assert (options[name].get_attribute("disabled") is None) == unit["built"], name
        if not unit["built"]:
            assert unit["command"] in options[name].get_attribute("title")
    assert {"REFERENCES", "AUTHORS", "SOURCES", "COAUTHORS", "COUPLING"} <= {n for n, u in units.items() if u["built"]}
    asked = browser.execute_script("return performance.getEntriesByType('measure').map(e => e.name)")
    assert "graphql:Map" not in asked  # never listed, then refused
    browser.set_window_size(1400, 1000)
    open_map(browser, f"{rich_base}/?min=1")
    browser.set_window_size(1024, 768)
    time.sleep(0.5)
    box = browser.find_element(By.ID, "graph").rect
    for node in ("p1", "p2", "p3"):
        at = browser.execute_script("return window.citegraph.nodePosition(arguments[0])", node)
        assert box["x"] <= at["x"] <= box["x"] + box["width"] and box["y"] <= at["y"] <= box["y"] + box["height"]
    # the keyboard: the map takes focus; + zooms in, an arrow pans, 0 fits it again
    camera = "const c = window.citegraph.renderer().getCamera(); return [c.x, c.y, c.ratio]"
    before = browser.execute_script(camera)
    browser.find_element(By.ID, "graph").send_keys("+")
    wait(browser, lambda d: d.execute_script(camera)[2] < before[2], what="+ to zoom in")
    browser.find_element(By.ID, "graph").send_keys(Keys.ARROW_RIGHT)
    wait(browser, lambda d: d.execute_script(camera)[0] > before[0], what="→ to pan")
    browser.find_element(By.ID, "graph").send_keys("0")
    wait(browser, lambda d: d.execute_script(camera) == [0.5, 0.5, 1], what="0 to fit")
    no_console_errors(browser)


@pytest.mark.slow
def test_edge_documents_of_author_and_coupling_maps(browser: Any, rich_base: str) -> None:
    """A link of a map of other units than references (cited authors, coupled documents): its panel lists the
    documents behind it, paged, equal to GraphQL's mapEdgeDocuments."""
    query = (
        "query($unit: MapUnit!, $s: ID!, $t: ID!) { mapEdgeDocuments(unit: $unit, source: $s, target: $t, first: 10) "
        "{ totalCount edges { node { id } } } }"
    )
    headings = {
        "AUTHORS": "Documents citing both",
        "SOURCES": "Documents citing both",
        "COAUTHORS": "Papers written together",
        "COUPLING": "References both cite",
    }
    shown = []
    for unit, heading in headings.items():
        edges = gql(rich_base, f"{{ mapNetwork(unit: {unit}, minCount: 1) {{ edges {{ source target count }} }} }}")
        if not edges["mapNetwork"]["edges"]:
            continue
        edge = edges["mapNetwork"]["edges"][0]
        shown.append(unit)
        answer = gql(rich_base, query, {"unit": unit, "s": edge["source"], "t": edge["target"]})["mapEdgeDocuments"]
        assert answer["totalCount"] == edge["count"] > 0
        open_map(browser, f"{rich_base}/?unit={unit}&min=1&edge={quote(edge['source'] + '~' + edge['target'])}")
        details_text(browser, f"{heading} ({answer['totalCount']})")
        assert listed_ids(browser, "edge-documents") == [e["node"]["id"] for e in answer["edges"]]
        browser.save_screenshot(str(ARTIFACTS / f"edge-{unit.lower()}.png"))
    assert "COUPLING" in shown and len(shown) >= 2, shown
    no_console_errors(browser)


@pytest.mark.slow
def test_export_svg_and_graphml(browser: Any, rich_base: str, downloads: Path) -> None:
    open_map(browser, f"{rich_base}/?min=1&measure=ASSOCIATION")
    browser.find_element(By.ID, "export-svg").click()
    svg = ET.parse(downloaded(downloads, "citegraph-map-references.svg")).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    assert sorted(c.get("data-id") for c in svg.iter(f"{ns}circle") if c.get("data-id")) == ["p1", "p2", "p3"]
    assert len([line for line in svg.iter(f"{ns}line")]) == 3
    browser.find_element(By.ID, "export-file").click()  # GraphML is the default format
    graphml = downloaded(downloads, "citegraph-map.graphml")
    import networkx as nx

    graph = nx.read_graphml(graphml)
    assert set(graph.nodes) == {"p1", "p2", "p3"} and graph.number_of_edges() == 3
    pairs = gql(
        rich_base,
        "{ coCitationPairs(measure: ASSOCIATION) { edges { node { source { id } target { id } association } } } }",
    )["coCitationPairs"]["edges"]
    for edge in pairs:
        node = edge["node"]
        weight = float(graph.edges[node["source"]["id"], node["target"]["id"]]["weight"])
        assert weight == pytest.approx(node["association"])
    browser.find_element(By.ID, "export-png").click()
    assert downloaded(downloads, "citegraph-map-references.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    no_console_errors(browser)


@pytest.mark.slow
def test_search_by_id_and_author_then_ego_and_linkage(browser: Any, rich_base: str) -> None:
    """Search finds a paper by its id and by an author's name; from it the ego network and the linkage panel."""
    open_map(browser, f"{rich_base}/?min=1&search=p3")
    wait(browser, lambda d: "by id" in d.find_element(By.ID, "results").text, what="the id match")
    assert listed_ids(browser, "results")[0] == "p3"
    search = browser.find_element(By.ID, "search")
    search.clear()
    search.send_keys("noisy\n")
    wait(browser, lambda d: "p6" in listed_ids(d, "results"), what="the title match")
    assert 'The "noisy channel" & its model' in browser.find_element(By.ID, "results").text  # entities decoded
    search.clear()
    search.send_keys("Turing\n")
    wait(browser, lambda d: "author Alan Turing" in d.find_element(By.ID, "results").text, what="the author match")
    browser.find_element(By.CSS_SELECTOR, "#results li button[data-paper-id=p1]").click()
    details_text(browser, "Cited by (1)")
    browser.find_element(By.ID, "act-ego").click()
    wait(browser, lambda d: "papers," in d.find_element(By.ID, "graph-status").text, what="the ego network")
    assert "view=ego" in browser.current_url and "paper=p1" in browser.current_url
    assert browser.find_element(By.ID, "seed-title").text == "Statistical machine translation"
    assert browser.find_element(By.ID, "graph-status").text == "5 papers, 6 edges"  # egoNetwork's depth-2 answer
    wait(browser, lambda d: d.find_elements(By.ID, "act-link"), what="the selected paper's actions")[0].click()
    wait(browser, lambda d: d.find_element(By.ID, "citance-links-status").text, what="the linkage panel")
    browser.save_screenshot(str(ARTIFACTS / "ego.png"))
    no_console_errors(browser)


@pytest.mark.slow
def test_wos_sample_map_with_edge_documents(browser: Any, wos_base: str) -> None:
    """The Web of Science sample: the map of its co-cited references, an edge's documents = GraphQL's answer;
    the screenshot is the README's."""
    summary = open_map(browser, f"{wos_base}/?min=2&top=300")
    assert summary["nodes"] > 20 and summary["edges"] > 20, summary
    first = gql(
        wos_base,
        "{ coCitationPairs(measure: COUNT, minCount: 2, first: 1) { edges { node { source { id } "
        "target { id } count citedBy(first: 10) { edges { node { id } } } } } } }",
    )
    pair = first["coCitationPairs"]["edges"][0]["node"]
    s, t = pair["source"]["id"], pair["target"]["id"]
    browser.get(f"{wos_base}/?min=2&top=300&edge={quote(s + '~' + t)}")
    text = details_text(browser, f"Documents citing both ({pair['count']})")
    assert "&quot;" not in text
    assert listed_ids(browser, "edge-cited-by") == [e["node"]["id"] for e in pair["citedBy"]["edges"]]
    browser.get(f"{wos_base}/?min=2&top=300")
    open_map(browser, f"{wos_base}/?min=2&top=300")
    time.sleep(0.5)
    browser.save_screenshot(str(ARTIFACTS / "wos-map.png"))
    shutil.copyfile(ARTIFACTS / "wos-map.png", SCREENSHOT)
    no_console_errors(browser)
    json.dumps(summary)  # the summary is plain data (what the benchmark reads too)


@pytest.fixture(scope="module")
def bundled_base() -> Iterator[str]:
    """``$CITEGRAPH_DASHBOARD_STORE``: a copy of the bundled store (never the original: the server opens it
    read-only, but ``recover`` must have run on it first), served live."""
    import os

    given = os.environ.get("CITEGRAPH_DASHBOARD_STORE")
    if not given:
        pytest.skip("set CITEGRAPH_DASHBOARD_STORE to a copy of the bundled store (cp -r var/citegraph.db* …)")
    with live_server(Path(given), AppSettings.from_env()) as url:
        yield url


@pytest.mark.slow
def test_bundled_store_map_search_node_and_edge(browser: Any, bundled_base: str) -> None:
    """The bundled store (~130k papers): the map, search by an ACL id and by an author (the issue's examples),
    a clicked node's citing papers and an edge's documents equal to GraphQL's answers."""
    summary = open_map(browser, f"{bundled_base}/?min=5&top=500")
    assert summary["nodes"] > 100 and summary["source"] == "mapNetwork", summary
    browser.save_screenshot(str(ARTIFACTS / "bundled-map.png"))
    node = browser.execute_script(
        "const g = window.citegraph.graph(); return g.nodes().sort((a, b) => g.degree(b) - g.degree(a))[0]"
    )
    position = browser.execute_script("return window.citegraph.nodePosition(arguments[0])", node)
    click_at(browser, position["x"], position["y"])
    wait(browser, lambda d: "sel=" in d.current_url, what="a node selected")
    chosen = browser.execute_script("return window.citegraph.state().sel")
    expected = gql(
        bundled_base,
        "query($id: ID!) { paper(id: $id) { citedBy(first: 10) { totalCount edges { node { id } } } } }",
        {"id": chosen},
    )["paper"]["citedBy"]
    details_text(browser, f"Cited by ({expected['totalCount']})")
    assert listed_ids(browser, "node-cited-by") == [e["node"]["id"] for e in expected["edges"]]
    other = browser.execute_script("return window.citegraph.graph().neighbors(arguments[0])[0]", chosen)
    browser.get(f"{bundled_base}/?min=5&top=500&edge={quote(chosen + '~' + other)}")
    pair = gql(
        bundled_base,
        "query($a: ID!, $b: ID!) { coCitationPair(source: $a, target: $b) { ... on CoCitationPair { count "
        "citedBy(first: 10) { totalCount edges { node { id } } } } } }",
        {"a": chosen, "b": other},
    )["coCitationPair"]
    details_text(browser, f"Documents citing both ({pair['citedBy']['totalCount']})")
    assert listed_ids(browser, "edge-cited-by") == [e["node"]["id"] for e in pair["citedBy"]["edges"]]
    browser.save_screenshot(str(ARTIFACTS / "bundled-edge.png"))
    browser.get(f"{bundled_base}/?min=5&top=500&search=A00-1031")
    wait(browser, lambda d: "by id" in d.find_element(By.ID, "results").text, timeout=60, what="A00-1031 by id")
    assert listed_ids(browser, "results")[0] == "A00-1031"
    browser.get(f"{bundled_base}/?min=5&top=500&search=Brants")
    wait(browser, lambda d: "author" in d.find_element(By.ID, "results").text, timeout=60, what="Brants as author")
    no_console_errors(browser)
