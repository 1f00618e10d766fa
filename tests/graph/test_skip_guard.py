"""The embedded store never hands LadybugDB a SKIP far past the last row, which kills the process (SIGSEGV).

``benchmarks/ladybug_skip_crash.py`` reproduces the crash with ``ladybug`` alone. Here the paged statements
run in a child process, so a crash fails the test (exit status -11) instead of killing pytest.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tiny_graph import tiny_batch

import cypher
from graph import StoreConfig, ingest, open_store
from graph.embedded import SKIP_COUNTED_FROM

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent

# Pages of a title search at the given skips, printed as JSON lists of ids.
PAGES = """
import json, sys
from graph import StoreConfig, open_store
params = {"text": "translation", "year_min": 0, "year_max": 3000, "limit": 2}
with open_store(StoreConfig(db_path=sys.argv[1], read_only=True)) as store:
    for skip in map(int, sys.argv[2:]):
        print(json.dumps([row["id"] for row in store.query("search_papers_by_title", {**params, "skip": skip})]))
"""


@pytest.fixture
def loaded(store_path: Path) -> Path:
    with open_store(StoreConfig(db_path=store_path)) as store:
        ingest(store, tiny_batch())
    return store_path


def _pages(path: Path, *skips: int) -> list[list[str]]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), str(TESTS)]))
    done = subprocess.run(
        [sys.executable, "-c", PAGES, str(path), *map(str, skips)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"exit status {done.returncode}: {done.stderr[-2000:]}"
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_a_skip_far_past_the_end_gives_an_empty_page_not_a_crash(loaded: Path) -> None:
    # 12,000 and 500,000 past 3 rows: both crash LadybugDB 0.22 when they reach it
    first, second, far, further = _pages(loaded, 0, 2, 12_000, 500_000)
    assert len(first) == 2 and len(second) == 1 and second[0] not in first
    assert far == [] and further == []


def test_every_paged_statement_names_its_count() -> None:
    """A statement with ``$skip`` names a ``// counted by:`` statement that takes no parameter it lacks."""
    paged = [name for name in cypher.names() if "skip" in cypher.load(name).parameters]
    assert paged, "no statement takes $skip; this test then checks nothing"
    for name in paged:
        statement = cypher.load(name)
        assert statement.counted_by is not None, f"cypher/{name}.cypher takes $skip but names no `// counted by:`"
        counter = cypher.load(statement.counted_by)
        assert counter.parameters <= statement.parameters - {"skip", "limit"}, name


def test_a_bad_skip_is_refused_before_the_engine(loaded: Path) -> None:
    from graph.errors import QueryError

    params = {"text": "translation", "year_min": 0, "year_max": 3000, "limit": 2}
    with open_store(StoreConfig(db_path=loaded, read_only=True)) as store:
        with pytest.raises(QueryError, match="non-negative integer"):
            store.query("search_papers_by_title", {**params, "skip": -1})
        assert store.query("search_papers_by_title", {**params, "skip": SKIP_COUNTED_FROM}) == []


# An analyst's own query through `citegraph cypher` (the store's read-only path), far past the end.
AD_HOC = """
import sys
from graph import StoreConfig, open_store
from graph.errors import QueryError
with open_store(StoreConfig(db_path=sys.argv[1], read_only=True)) as store:
    try:
        store.read_only_query("MATCH (p:Paper) RETURN p.id ORDER BY p.id SKIP $s LIMIT 1", {"s": 500000})
    except QueryError as exc:
        print(exc)
    print(store.read_only_query("MATCH (p:Paper) RETURN p.id ORDER BY p.id SKIP 3 LIMIT 5")[1])
"""


def test_an_ad_hoc_skip_that_would_crash_is_refused(loaded: Path) -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), str(TESTS)]))
    done = subprocess.run(
        [sys.executable, "-c", AD_HOC, str(loaded)], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"exit status {done.returncode}: {done.stderr[-2000:]}"
    refusal, rows = done.stdout.strip().splitlines()
    assert "`SKIP 500000` after `ORDER BY`" in refusal and rows == "[['p4'], ['p5']]"
