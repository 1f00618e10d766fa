from __future__ import annotations

import json
from pathlib import Path

import pytest

from api.cli.main import main
from graph import GraphStore


@pytest.fixture
def built(store: GraphStore, store_path: Path) -> Path:
    """The tiny graph, closed so the CLI can open it."""
    store.close()
    return store_path


def test_stats_json(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", str(built), "stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["nodes"]["Paper"] == 5 and stats["relationships"]["CITES"] == 6


def test_cypher_json_and_params(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", str(built), "cypher", "MATCH (p:Paper) RETURN count(p) AS n", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"n": 5}]
    query = "MATCH (p:Paper) WHERE p.year >= $y RETURN p.id AS id ORDER BY id"
    assert main(["--db", str(built), "cypher", query, "--param", "y=2004", "--format", "csv"]) == 0
    assert capsys.readouterr().out.split() == ["id", "p4", "p5"]


def test_cypher_refuses_writes_with_one_line(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", str(built), "cypher", "MATCH (p:Paper) DETACH DELETE p"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("citegraph: error:") and "read-only" in err and "Traceback" not in err
    assert err.count("\n") == 1


def test_missing_store_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", str(tmp_path / "none.db"), "stats"]) == 1
    assert "make build" in capsys.readouterr().err


def test_compute_cocitation_is_idempotent(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for _ in range(2):
        assert main(["--db", str(built), "compute", "all"]) == 0
    assert "co-citation" in capsys.readouterr().out
    query = "MATCH (p:Paper) RETURN p.id AS id, p.n_cited AS n ORDER BY id"
    assert main(["--db", str(built), "cypher", query, "--format", "json"]) == 0
    assert [r["n"] for r in json.loads(capsys.readouterr().out)] == [1, 2, 2, 1, 0]
    query = "MATCH (x:Paper)-[c:CO_CITED]->(y:Paper) RETURN x.id AS a, y.id AS b, c.count AS n ORDER BY a, b"
    assert main(["--db", str(built), "cypher", query, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == [
        {"a": "p1", "b": "p2", "n": 1},
        {"a": "p1", "b": "p3", "n": 1},
        {"a": "p2", "b": "p3", "n": 2},
    ]


def test_export_tables(built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["--db", str(built), "export", "tables", str(out)]) == 0
    assert main(["--db", str(built), "export", "cocitation", str(tmp_path / "net.graphml"), "--format", "graphml"]) == 0
    assert (out / "CITES.csv").read_text().splitlines()[0].startswith("source,target")
    assert len((out / "CITES.csv").read_text().splitlines()) == 7


def test_compute_all_skips_taxonomy_steps_without_a_taxonomy(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", str(built), "compute", "all"]) == 0
    out = capsys.readouterr().out
    assert "taxonomy: skipped" in out and "hyperbolic: skipped" in out
    assert main(["--db", str(built), "compute", "taxonomy"]) == 65  # asked for by name: a data error saying what to do
    assert "ingest taxonomy" in capsys.readouterr().err
