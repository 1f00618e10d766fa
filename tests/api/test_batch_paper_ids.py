"""Paper ids of a ``recommend --batch`` file resolve as ``--citing`` / ``--cited`` do, or stop the batch by line."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from tiny_graph import tiny_batch

from api.cli.main import main
from api.paper_ids import KIND_NAMES, looked_up_as, resolve_paper_ids
from gnn.recommend.service import read_batch
from graph import GraphBatch, GraphStore, ingest
from loaders.ids import ID_PREFERENCE

# p1 is arXiv 0708.3686, p2 the old-style hep-ph/0604064, p3 MAG work 2100837269, p5 DOI 10.1234/p5.
ALIASES = {"arxiv:0708.3686": "p1", "arxiv:hep-ph/0604064": "p2", "mag:2100837269": "p3", "doi:10.1234/p5": "p5"}


@pytest.fixture
def aliased(empty_store: GraphStore) -> GraphStore:
    ingest(empty_store, tiny_batch())
    ids = list(ALIASES)
    ingest(
        empty_store,
        GraphBatch(
            "aliases",
            nodes={"Alias": pd.DataFrame({"id": ids, "kind": [i.partition(":")[0] for i in ids]})},
            rels={"ALIAS_OF": pd.DataFrame({"source": ids, "target": list(ALIASES.values())})},
        ),
    )
    return empty_store


def _write(path: Path, lines: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_batch_ids_in_every_shape_resolve_to_stored_keys(aliased: GraphStore, tmp_path: Path) -> None:
    shapes = {"0708.3686": "p1", "arXiv:0708.3686v2": "p1", "hep-ph/0604064": "p2", "2100837269": "p3", "p4": "p4"}
    lines: list[dict[str, object]] = [
        {"id": f"q{n}", "context": "parsing [CIT]", "citing_paper_id": given} for n, given in enumerate(shapes)
    ]
    lines.append({"id": "cited", "context": "tagging [CIT]", "cited_ids": [*shapes, "10.1234/P5"]})
    path = _write(tmp_path / "q.jsonl", lines)
    batch = read_batch(path, k=5, resolve=lambda ids: resolve_paper_ids(aliased, ids))
    assert batch.unresolved == []
    assert [r.citing_paper_id for r in batch.requests[:-1]] == list(shapes.values())
    assert batch.requests[-1].cited_ids == ("p1", "p2", "p3", "p4", "p5")  # one key once, in the order given


def test_an_unknown_batch_id_stops_the_batch_naming_file_line_and_kinds(
    aliased: GraphStore, store_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    aliased.close()
    lines: list[dict[str, object]] = [
        {"id": "q1", "context": "parsing [CIT]", "citing_paper_id": "0708.3686"},
        {"id": "q2", "context": "tagging [CIT]", "cited_ids": ["p2", "no-such-paper-xyz"]},
    ]
    path = _write(tmp_path / "q.jsonl", lines)
    out = tmp_path / "ranked.jsonl"
    # no index, no encoder: the ids are refused before either loads
    assert main(["--db", str(store_path), "-q", "recommend", "--batch", str(path), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "q.jsonl:2: `cited_ids`: no paper" in err and "'no-such-paper-xyz'" in err and "'p2'" not in err
    assert "MAG" in err and "--on-error skip" in err
    assert not out.exists()


def test_every_id_kind_is_named_in_the_messages(aliased: GraphStore, store_path: Path, capsys) -> None:
    text = looked_up_as()
    assert all(KIND_NAMES[kind] in text for kind in ID_PREFERENCE if kind != "own")
    aliased.close()
    assert main(["--db", str(store_path), "recommend", "parsing [CIT]", "--citing", "999"]) == 1
    err = capsys.readouterr().err
    assert "--citing: no paper" in err and "MAG" in err and "PubMed" in err
