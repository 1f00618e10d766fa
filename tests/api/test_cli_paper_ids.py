"""The CLI's paper-id options take any id a source gave a paper, and name an id that resolves to nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from tiny_graph import tiny_batch

from api.cli.main import main
from gnn.cocitation import compute_cocitation
from graph import GraphBatch, GraphStore, ingest


@pytest.fixture
def built(empty_store: GraphStore, store_path: Path) -> Path:
    """The tiny graph with co-citations, p2 also known as W2741809807 and 10.1234/P2; closed for the CLI."""
    ingest(empty_store, tiny_batch())
    aliases = ["openalex:W2741809807", "doi:10.1234/p2"]
    ingest(
        empty_store,
        GraphBatch(
            "aliases",
            nodes={"Alias": pd.DataFrame({"id": aliases, "kind": ["openalex", "doi"]})},
            rels={"ALIAS_OF": pd.DataFrame({"source": aliases, "target": ["p2", "p2"]})},
        ),
    )
    compute_cocitation(empty_store)
    empty_store.close()
    return store_path


@pytest.mark.parametrize("seed", ["p2", "W2741809807", "https://doi.org/10.1234/P2"])
def test_export_seed_paper_by_any_of_its_ids(built: Path, tmp_path: Path, seed: str) -> None:
    out = tmp_path / "net.csv"
    assert main(["--db", str(built), "--quiet", "export", "cocitation", str(out), "--seed-paper", seed]) == 0
    assert "p2" in out.read_text(encoding="utf-8")


def test_unknown_ids_are_user_errors_naming_them(
    built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "net.csv"
    assert main(["--db", str(built), "export", "cocitation", str(out), "--seed-paper", "0704.3011"]) == 1
    assert "--seed-paper: no paper" in capsys.readouterr().err and not out.exists()
    # recommend refuses before it loads an index or an encoder
    code = main(["--db", str(built), "recommend", "parsing [CIT]", "--cited", "p1", "--cited", "no-such-paper-xyz"])
    err = capsys.readouterr().err
    assert code == 1 and "--cited" in err and "'no-such-paper-xyz'" in err and "'p1'" not in err


def test_recipes_take_any_id_of_a_paper_and_name_unknown_ones(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--db", str(built), "cypher", "--recipe", "papers_citing_both", "--format", "json"]
    assert main([*args, "--param", "paper_a=W2741809807", "--param", "paper_b=p3"]) == 0
    assert {row["id"] for row in json.loads(capsys.readouterr().out)} == {"p1", "p4"}
    assert main([*args, "--param", "paper_a=10.9999/nothing", "--param", "paper_b=p3"]) == 1
    assert "--param paper_a: no paper" in capsys.readouterr().err
