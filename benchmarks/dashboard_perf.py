"""The dashboard's speed as Chromium measures it: first render of a large map, frames per second while panning,
filter change to new map, and the GraphQL latency of every query the dashboard issues.

Chromium (headless, WebGL on the CPU through SwiftShader unless ``--gpu``) is driven by selenium through Debian's
chromedriver; every figure is read from the page's own Performance API (the dashboard marks ``map:request``,
``map:data``, ``map:drawn`` and measures each GraphQL round trip as ``graphql:<operation>``):

* **first render**: a synthetic map of ``--nodes`` nodes and ``--edges`` edges (clusters, years, weights and bursts
  drawn from a seeded generator, as ``mapNetwork`` answers) handed to ``window.citegraph.draw``; the time from the
  answer to sigma.js's first frame (``map:data`` → ``map:drawn``), median of ``--repeats`` page loads.
* **panning**: on that map, once ForceAtlas2 has stopped, for ``--pan-seconds`` each: (a) *by mouse drag*, as a user
  pans: a mouse press on the map, a mouse move on every animation frame, a release (sigma's mouse captor moves the
  camera and knows the camera is moving: links and labels hidden on move where the dashboard asks for it); (b) *by
  camera*, the camera set on every animation frame as a script or the keyboard does (sigma draws everything at
  each frame). Frames per second = sigma's frames drawn (``afterRender``) / seconds.
* **filter change**: on a live ``citegraph serve`` of ``--store`` (default: a store of the Web of Science samples
  under ``$CITEGRAPH_DATA``, co-citation computed), each filter of :data:`FILTER_CHANGES` changed in the page as a
  user does; the time from the change to the new map's first frame (``map:request`` → ``map:drawn``): the
  ``mapNetwork`` query, the graph build and the first render.
* **GraphQL latency**: a scripted session on that server (map, node and edge details with their paged lists,
  search, ego network, export) and every request's round trip, grouped by operation.

With ``--baseline REV`` the first render, both pans and the filter changes are measured twice in the same run,
with the dashboard of git revision ``REV`` (``api/static/dashboard`` as committed there, served by this checkout's
API) and with this checkout's; ``--runs`` repeats the whole measurement (on a shared machine a second run shows
how much the load moved the figures).

Run::

    nice python benchmarks/dashboard_perf.py --baseline efda69c --runs 2 --out docs/results/dashboard_perf.json
    python benchmarks/render_results.py
"""

from __future__ import annotations

import argparse
import random
import shlex
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere: this checkout's packages (and dashboard) must import
    sys.path.insert(0, str(ROOT))

FILTER_CHANGES = (  # (what a user changes, the control's id, the value)
    ("minimum count 2 → 3", "min-count", "3"),
    ("measure count → association", "measure", "ASSOCIATION"),
    ("top 300 → 150", "top", "150"),
    ("unit references → authors", "unit", "AUTHORS"),
)
START = "/?min=2&top=300"  # the filter benchmark's first map


def synthetic_network(nodes: int, edges: int, seed: int = 0) -> dict[str, Any]:
    """A map shaped like ``mapNetwork``'s answer: 12 clusters, links mostly inside a cluster, heavy-tailed weights."""
    rng = random.Random(seed)
    clusters = 12
    members: dict[int, list[str]] = defaultdict(list)
    out_nodes = []
    for i in range(nodes):
        cluster = min(clusters - 1, int(rng.expovariate(0.35)))
        node_id = f"n{i}"
        members[cluster].append(node_id)
        year = 1950 + int(rng.random() * 70)
        out_nodes.append(
            {
                "id": node_id,
                "label": f"Author{i % 977} X, {year}, J Synth {i % 300}:{i % 1000}",
                "weight": int(rng.paretovariate(1.3) * 3),
                "year": year,
                "avgYear": year + rng.random() * 10,
                "cluster": cluster,
                "clusterLabel": f"topic {cluster}",
                "burstStrength": rng.random() * 8 if rng.random() < 0.02 else None,
                "burstBegin": None,
                "burstEnd": None,
                "betweenness": None,
                "sigma": None,
            }
        )
    ids = [n["id"] for n in out_nodes]
    seen: set[tuple[str, str]] = set()
    out_edges = []
    while len(out_edges) < edges:
        a = rng.choice(ids)
        cluster = next(n["cluster"] for n in (out_nodes[int(a[1:])],))
        b = rng.choice(members[cluster]) if rng.random() < 0.8 else rng.choice(ids)
        key = (a, b) if a < b else (b, a)
        if a == b or key in seen:
            continue
        seen.add(key)
        count = 1 + int(rng.expovariate(0.5))
        out_edges.append({"source": key[0], "target": key[1], "count": count, "strength": float(count)})
    return {"unit": "REFERENCES", "truncated": False, "nodes": out_nodes, "edges": out_edges, "source": "synthetic"}


def wos_store(data: Path, folder: Path) -> Path:
    """A store of every Web of Science sample under ``data/formats/wos``, co-citation computed."""
    from gnn.cocitation.compute import compute_cocitation
    from graph import StoreConfig, ingest, open_store
    from loaders import wos

    path = folder / "wos.db"
    store = open_store(StoreConfig(db_path=path))
    for sample in sorted((data / "formats" / "wos").glob("*.txt")):
        ingest(store, wos.load(sample))
    compute_cocitation(store)
    store.close()
    return path


def dashboard_at(revision: str, folder: Path) -> Path:
    """``api/static/dashboard`` as committed at ``revision``, written under ``folder``."""
    import io
    import subprocess
    import tarfile

    archive = subprocess.run(
        ["git", "archive", "--format=tar", revision, "api/static/dashboard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return folder / "api" / "static" / "dashboard"


@contextmanager
def serve(store: Path, dashboard: Path | None = None) -> Iterator[str]:
    """``citegraph serve``'s app on a free loopback port, read-only; ``dashboard``: the page's folder instead of
    this checkout's (a baseline revision's)."""
    import httpx
    import uvicorn

    import api.app
    from api.app import create_app
    from api.settings import AppSettings
    from graph import StoreConfig

    own = api.app.DASHBOARD_DIR
    if dashboard is not None:  # the app mounts the folder when it is built and reads index.html from it per request
        api.app.DASHBOARD_DIR = dashboard

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    app = create_app(StoreConfig(db_path=store, read_only=True), AppSettings.from_env())
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.1)
    try:
        yield base
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        api.app.DASHBOARD_DIR = own


def chrome(width: int, height: int, gpu: bool) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "chromium"
    arguments = ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", f"--window-size={width},{height}"]
    arguments += ["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
    if not gpu:
        arguments += ["--use-angle=swiftshader", "--enable-unsafe-swiftshader"]
    for argument in arguments:
        options.add_argument(argument)
    return webdriver.Chrome(options=options, service=Service(shutil.which("chromedriver") or "chromedriver"))


def wait_for(driver: Any, script: str, timeout: float = 120) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.05)
    raise SystemExit(f"timed out after {timeout}s waiting for: {script}")


def measure(driver: Any, name: str) -> float | None:
    entries = driver.execute_script(f"return performance.getEntriesByName({name!r}, 'measure').map(e => e.duration)")
    return entries[-1] if entries else None


def first_render(driver: Any, base: str, network: dict[str, Any], repeats: int, seconds: float) -> dict[str, Any]:
    """Milliseconds from the answer to the first frame, per page load; fps while panning the last one."""
    times = []
    for _ in range(repeats):
        driver.get(f"{base}/?view=map&top=1&min=1000000")  # a page whose own map is empty: nothing else draws
        wait_for(
            driver,
            "return window.citegraph && window.citegraphMap && !document.getElementById('graph-status').textContent.startsWith('Loading')",
        )
        driver.execute_script("performance.clearMeasures(); window.citegraph.draw(arguments[0])", network)
        wait_for(driver, "return performance.getEntriesByName('map:data-to-drawn', 'measure').length > 0")
        times.append(float(measure(driver, "map:data-to-drawn") or 0))
    wait_for(driver, "return window.citegraphMap.layout === 'done'", timeout=120)
    return {
        "first_render_ms": times,
        "fps_drag": pan_fps(driver, DRAG, seconds),
        "fps_camera": pan_fps(driver, PAN, seconds),
    }


# Frames are counted as sigma draws them (afterRender), not as the browser offers animation frames: a frame sigma
# cannot draw in time is a frame the user does not see.
PAN = """
const done = arguments[arguments.length - 1];
const seconds = arguments[0];
const renderer = window.citegraph.renderer();
const camera = renderer.getCamera();
let frames = 0;
const count = () => { frames += 1; };
renderer.on("afterRender", count);
const start = performance.now();
function step(now) {
  const t = (now - start) / 1000;
  camera.setState({ x: 0.5 + 0.2 * Math.sin(t * 2), y: 0.5 + 0.2 * Math.cos(t * 2) });
  if (now - start < seconds * 1000) requestAnimationFrame(step);
  else { renderer.off("afterRender", count); done(frames / ((performance.now() - start) / 1000)); }
}
requestAnimationFrame(step);
"""

DRAG = """
const done = arguments[arguments.length - 1];
const seconds = arguments[0];
const renderer = window.citegraph.renderer();
const target = renderer.getMouseCaptor().container;
const box = target.getBoundingClientRect();
const cx = box.left + box.width / 2, cy = box.top + box.height / 2;
const mouse = (type, x, y, on) => on.dispatchEvent(new MouseEvent(type, { clientX: x, clientY: y, button: 0, buttons: 1, bubbles: true, cancelable: true }));
let frames = 0;
const count = () => { frames += 1; };
renderer.on("afterRender", count);
mouse("mousedown", cx, cy, target);
const start = performance.now();
function step(now) {
  const t = (now - start) / 1000;
  mouse("mousemove", cx + 120 * Math.sin(t * 2), cy + 120 * Math.cos(t * 2) - 120, document);
  if (now - start < seconds * 1000) requestAnimationFrame(step);
  else {
    mouse("mouseup", cx, cy, document);
    renderer.off("afterRender", count);
    done(frames / ((performance.now() - start) / 1000));
  }
}
requestAnimationFrame(step);
"""


def pan_fps(driver: Any, script: str, seconds: float = 3.0) -> float:
    driver.set_script_timeout(seconds + 60)
    return float(driver.execute_async_script(script, seconds))


def filter_changes(driver: Any, base: str) -> list[tuple[str, float | None, int]]:
    """(change, ms from the change to the new map's first frame, nodes drawn) for each of FILTER_CHANGES."""
    driver.get(base + START)
    wait_for(driver, "return window.citegraphMap && window.citegraphMap.layout === 'done'")
    out = []
    for what, control, value in FILTER_CHANGES:
        driver.execute_script("performance.clearMeasures('map:filter-to-drawn')")
        driver.execute_script(
            "const c = document.getElementById(arguments[0]); c.value = arguments[1];"
            "c.dispatchEvent(new Event('change'))",
            control,
            value,
        )
        wait_for(driver, "return performance.getEntriesByName('map:filter-to-drawn', 'measure').length > 0")
        out.append(
            (
                what,
                measure(driver, "map:filter-to-drawn"),
                int(driver.execute_script("return window.citegraphMap.nodes")),
            )
        )
        wait_for(driver, "return window.citegraphMap.layout === 'done'")
    return out


def session(driver: Any, base: str) -> dict[str, list[float]]:
    """Every query the dashboard issues, as a user's session triggers them; round trips by operation (ms)."""
    latencies: dict[str, list[float]] = defaultdict(list)
    driver.get(base + START)
    wait_for(driver, "return window.citegraphMap && window.citegraphMap.layout === 'done'")
    top = driver.execute_script(
        "const g = window.citegraph.graph();"
        "const n = g.nodes().sort((a, b) => g.degree(b) - g.degree(a))[0];"
        "return [n, g.neighbors(n)[0]]"
    )
    steps = [
        f"/?min=2&top=300&sel={quote(top[0])}",
        f"/?min=2&top=300&edge={quote(top[0] + '~' + top[1])}",
        "/?min=2&top=300&view=timeline",
        "/?min=2&top=300&search=laser",
        f"/?view=ego&paper={quote(top[0])}",
    ]
    for step in steps:
        driver.get(base + step)
        wait_for(
            driver,
            "const d = document.getElementById('details'); return d && !d.textContent.includes('Loading')",
        )
        wait_for(driver, "return window.citegraphMap && window.citegraphMap.layout === 'done'")
        more = driver.execute_script(
            "const b = [...document.querySelectorAll('#details button')].find(x => x.textContent === 'more' && !x.hidden); if (b) { b.click(); return true } return false"
        )
        if more:
            time.sleep(0.5)
        if "view=ego" not in step and "search" not in step:
            driver.execute_script("document.getElementById('export-file').click()")
            wait_for(driver, "return !!window.citegraphExported || document.getElementById('graph-status').className")
        timings = driver.execute_script(
            "return performance.getEntriesByType('measure').filter(e => e.name.startsWith('graphql:'))"
            ".map(e => [e.name.slice(8), e.duration])"
        )
        for name, duration in timings:
            latencies[name].append(float(duration))
    return latencies


def measure_variant(driver: Any, base: str, network: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """First render, both pans and the filter changes of the dashboard ``base`` serves."""
    out = first_render(driver, base, network, args.repeats, args.pan_seconds)
    out["filter_changes"] = filter_changes(driver, base)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--edges", type=int, default=50000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pan-seconds", type=float, default=3.0)
    parser.add_argument("--baseline", default=None, help="a git revision whose dashboard is measured beside this one")
    parser.add_argument("--runs", type=int, default=1, help="measure everything this many times")
    parser.add_argument("--store", help="a built store to serve (default: the WoS samples of $CITEGRAPH_DATA)")
    parser.add_argument("--data", default=None, help="the shared data folder (default $CITEGRAPH_DATA)")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=800)
    parser.add_argument("--gpu", action="store_true", help="let Chromium use the GPU (default: SwiftShader, CPU)")
    parser.add_argument("--machine", default=None, help="what the record says about the machine")
    parser.add_argument("--note", action="append", default=[], help="a sentence for the record's notes (repeatable)")
    parser.add_argument("--out", default="docs/results/dashboard_perf.json")
    args = parser.parse_args()

    import os

    from benchmarks.run_record import commit, run_record, write_json

    network = synthetic_network(args.nodes, args.edges)
    here = commit(short=True)
    runs: list[dict[str, dict[str, Any]]] = []
    with tempfile.TemporaryDirectory(prefix="dashboard-perf-") as folder:
        if args.store:
            store = Path(args.store)
        else:
            data = Path(args.data or os.environ.get("CITEGRAPH_DATA", "../shared/data"))
            store = wos_store(data, Path(folder))
        variants: list[tuple[str, Path | None]] = []
        if args.baseline:
            variants.append((f"before ({args.baseline})", dashboard_at(args.baseline, Path(folder) / "baseline")))
        variants.append(("after" if args.baseline else "this commit", None))
        driver = chrome(args.width, args.height, args.gpu)
        try:
            for _ in range(args.runs):
                run: dict[str, dict[str, Any]] = {}
                for name, page in variants:
                    with serve(store, page) as base:
                        run[name] = measure_variant(driver, base, network, args)
                runs.append(run)
            with serve(store) as base:
                by_query = session(driver, base)
        finally:
            driver.quit()
    record = run_record("benchmarks/dashboard_perf.py", args)
    # the command as given (run_record spells out every default, and a flag such as --gpu as "--gpu False")
    record["command"] = "nice python benchmarks/dashboard_perf.py " + shlex.join(sys.argv[1:])
    if args.machine:
        record["machine"] = args.machine
    size = f"{args.nodes:,} nodes / {args.edges:,} edges"
    rows: list[dict[str, Any]] = []
    for k, run in enumerate(runs, start=1):
        for name, got in run.items():
            column = f"{name}, run {k}" if len(runs) > 1 else name
            rows += [
                {
                    "system": f"first render, {size} (ms, median of {len(got['first_render_ms'])})",
                    "metric": column,
                    "value": round(statistics.median(got["first_render_ms"])),
                },
                {
                    "system": f"panning that map by mouse drag (frames/s, {args.pan_seconds:g} s)",
                    "metric": column,
                    "value": round(got["fps_drag"], 1),
                },
                {
                    "system": f"panning that map by camera script (frames/s, {args.pan_seconds:g} s)",
                    "metric": column,
                    "value": round(got["fps_camera"], 1),
                },
            ]
            for what, ms, nodes in got["filter_changes"]:
                rows.append(
                    {
                        "system": f"filter change: {what}, {nodes} nodes (ms)",
                        "metric": column,
                        "value": None if ms is None else round(ms),
                    }
                )
    query_rows = [
        {"system": name, "metric": metric, "value": value}
        for name, values in sorted(by_query.items())
        for metric, value in (
            ("requests", len(values)),
            ("median ms", round(statistics.median(values))),
            ("max ms", round(max(values))),
        )
    ]
    compared = (
        f"Before: the dashboard as committed at {args.baseline}; after: at {here}; both served by the API of {here} "
        "on the same store, one after the other in each run, in one browser."
        if args.baseline
        else None
    )
    record.update(
        {
            "capability": "mapping",
            "kind": "speed",
            "title": "The dashboard in Chromium: first render, panning, filter change, GraphQL latency per query",
            "commit": here,
            "notes": [
                f"Headless Chromium {'on the GPU' if args.gpu else 'with WebGL on the CPU (SwiftShader)'}, "
                f"{args.width}×{args.height}, driven by selenium; all times from the page's Performance API.",
                *([compared] if compared else []),
                "The first render is sigma.js's first frame of the synthetic map after the answer arrives (graph build, "
                "WebGL upload, first frame; ForceAtlas2 then runs in its worker for 6 s).",
                "Panning counts the frames sigma draws: by mouse drag as a user pans (sigma knows the camera moves), "
                "by camera script as the keyboard or a script moves it (every layer drawn each frame).",
                f"Filter changes and queries ran against `citegraph serve` on {'the store ' + str(args.store) if args.store else 'a store of the Web of Science samples (all four files)'}.",
                *args.note,
            ],
            "tables": [
                {
                    "title": "Map rendering and filter changes",
                    "row_header": "measure",
                    "baselines": [],
                    "served": None,
                    "rows": rows,
                },
                {
                    "title": "GraphQL round trip of each dashboard query (scripted session)",
                    "row_header": "query",
                    "baselines": [],
                    "served": None,
                    "rows": query_rows,
                },
            ],
            "raw": {"runs": runs, "graphql_ms": by_query},
        }
    )
    print(write_json(args.out, record))


if __name__ == "__main__":
    main()
