"""Co-citation by delta equals co-citation from scratch, after any sequence of changes to CITES and MENTIONS."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gnn.cocitation.basis import PENDING, basis_folder, mark_pending, read_basis_record
from gnn.cocitation.compute import (
    CocitationSettings,
    cocitation_edges,
    compute_cocitation,
    count_cocitation,
    read_cocitation_input,
)
from gnn.cocitation.delta import update_cocitation
from gnn.cocitation.noise import noise_distributions, top_partners
from gnn.cocitation.spark_load import load_spark_output
from graph import GraphBatch, GraphStore, StoreConfig, ingest, open_store
from tests.gnn.cocite_graph import open_cocite_store

SETTINGS = CocitationSettings(device="cpu", top_m=3)
FLOATS = ["association", "cosine", "jaccard", "inclusion"]


@pytest.fixture
def cocite_store(tmp_path: Path) -> Iterator[GraphStore]:
    with open_cocite_store(tmp_path) as store:
        yield store


# what a from-scratch step would write, computed without writing ------------------------------------


def scratch_edges(store: GraphStore) -> pd.DataFrame:
    cocite, sentence = count_cocitation(read_cocitation_input(store), device="cpu")
    return _sorted_edges(cocitation_edges(cocite, sentence))


def scratch_papers(store: GraphStore) -> pd.DataFrame:
    data = read_cocitation_input(store)
    cocite, _ = count_cocitation(data, device="cpu")
    noise = noise_distributions(cocite, power=SETTINGS.power, device="cpu")
    head = top_partners(noise, SETTINGS.top_m).set_index("id")
    negative = pd.Series(noise.negative.numpy(), index=cocite.ids)
    n_cited = pd.Series(cocite.occurrences, index=cocite.ids)
    rows = []
    for paper in data.papers:
        partners = head.loc[paper] if paper in head.index else None
        rows.append(
            {
                "id": paper,
                "n_cited": int(n_cited.get(paper, 0)),
                "negative_weight": float(negative.get(paper, 0.0)),
                "partners": None if partners is None else list(partners["cocite_partners"]),
                "probs": None if partners is None else list(partners["cocite_probs"]),
                "tail": None if partners is None else float(partners["cocite_tail"]),
            }
        )
    return pd.DataFrame(rows).set_index("id")


def stored_edges(store: GraphStore) -> pd.DataFrame:
    return _sorted_edges(store.read_edges("CO_CITED"))


def stored_papers(store: GraphStore) -> pd.DataFrame:
    result = store._conn.execute(  # type: ignore[attr-defined]  # test-only peek at the embedded store
        "MATCH (p:Paper) RETURN p.id AS id, p.n_cited AS n_cited, p.negative_weight AS negative_weight, "
        "p.cocite_partners AS partners, p.cocite_probs AS probs, p.cocite_tail AS tail ORDER BY id"
    )
    return pd.DataFrame(result.get_as_arrow().to_pylist()).set_index("id")


def _sorted_edges(edges: pd.DataFrame) -> pd.DataFrame:
    columns = ["source", "target", "count", "sentence_count", *FLOATS]
    return edges[columns].sort_values(["source", "target"], ignore_index=True)


def assert_as_from_scratch(store: GraphStore) -> None:
    """Counts exactly, floats within 1e-6 (relative), partner lists exactly."""
    delta, scratch = stored_edges(store), scratch_edges(store)
    pd.testing.assert_frame_equal(
        delta[["source", "target", "count", "sentence_count"]],
        scratch[["source", "target", "count", "sentence_count"]],
        check_dtype=False,
    )
    np.testing.assert_allclose(delta[FLOATS].to_numpy(), scratch[FLOATS].to_numpy(), rtol=1e-6)
    got, want = stored_papers(store), scratch_papers(store)
    assert got.index.tolist() == want.index.tolist()
    assert got["n_cited"].tolist() == want["n_cited"].tolist()
    np.testing.assert_allclose(
        got["negative_weight"].to_numpy(float), want["negative_weight"].to_numpy(float), rtol=1e-6
    )
    for paper in want.index:
        assert got.loc[paper, "partners"] == want.loc[paper, "partners"], paper
        if want.loc[paper, "probs"] is None:
            assert got.loc[paper, "probs"] is None and pd.isna(got.loc[paper, "tail"]), paper
        else:
            np.testing.assert_allclose(got.loc[paper, "probs"], want.loc[paper, "probs"], rtol=1e-6)
            assert got.loc[paper, "tail"] == pytest.approx(want.loc[paper, "tail"], rel=1e-6, abs=1e-12)


# changes to the graph, as ingest, a merge or a deletion make them ---------------------------------------


def add_papers(store: GraphStore, cites: list[tuple[str, str]], papers: list[str]) -> None:
    ingest(
        store,
        GraphBatch(
            "delta-test",
            nodes={"Paper": pd.DataFrame({"id": papers})},
            rels={"CITES": pd.DataFrame(cites, columns=["source", "target"])},
        ),
    )


def set_citations(store: GraphStore, cites: set[tuple[str, str]]) -> None:
    """Replace CITES as a whole (references removed or moved)."""
    store.replace_edges("CITES", pd.DataFrame(sorted(cites), columns=["source", "target"]))


def delete_paper(store: GraphStore, paper: str) -> None:
    store._conn.execute("MATCH (p:Paper {id: $id}) DETACH DELETE p", {"id": paper})  # type: ignore[attr-defined]


def citations_of(store: GraphStore) -> set[tuple[str, str]]:
    edges = store.read_edges("CITES")
    return set(zip(edges["source"], edges["target"]))


# tests -------------------------------------------------------------------------------------------------


def test_the_first_update_runs_the_full_step_and_leaves_a_basis(cocite_store: GraphStore) -> None:
    report = update_cocitation(cocite_store, SETTINGS)
    assert report.mode == "full" and "no co-citation basis" in report.reason
    record = read_basis_record(basis_folder(cocite_store))
    assert record is not None and record["citations"] == 8 and record["updates_since_full"] == 0
    again = update_cocitation(cocite_store, SETTINGS)
    assert again.mode == "current"
    assert_as_from_scratch(cocite_store)


def test_a_new_citing_paper_adds_one_to_each_pair_of_its_references(cocite_store: GraphStore) -> None:
    compute_cocitation(cocite_store, SETTINGS)
    add_papers(cocite_store, [("w", "a"), ("w", "c"), ("w", "d")], ["w"])
    report = update_cocitation(cocite_store, SETTINGS)
    assert report.mode == "delta" and report.changed_citing == 1
    counts = stored_edges(cocite_store).set_index(["source", "target"])["count"].to_dict()
    assert counts[("a", "c")] == 2 and counts[("a", "d")] == 1 and counts[("c", "d")] == 1
    assert counts[("a", "b")] == 2  # untouched
    assert_as_from_scratch(cocite_store)
    assert read_basis_record(basis_folder(cocite_store))["updates_since_full"] == 1


def test_a_merge_and_a_deletion_are_seen_through_the_edges(cocite_store: GraphStore) -> None:
    compute_cocitation(cocite_store, SETTINGS)
    # y is merged into its survivor d: y's references and its citations move to d, then y goes
    moved = {(("d" if s == "y" else s), ("d" if t == "y" else t)) for s, t in citations_of(cocite_store)}
    set_citations(cocite_store, {(s, t) for s, t in moved if s != t})
    delete_paper(cocite_store, "y")
    assert update_cocitation(cocite_store, SETTINGS).mode == "delta"
    assert_as_from_scratch(cocite_store)
    delete_paper(cocite_store, "x")  # a withdrawn citing paper: its pairs go
    assert update_cocitation(cocite_store, SETTINGS).mode == "delta"
    assert_as_from_scratch(cocite_store)


def test_a_changed_sentence_changes_sentence_counts(cocite_store: GraphStore) -> None:
    compute_cocitation(cocite_store, SETTINGS)
    mentions = pd.DataFrame({"source": ["x#2", "x#2"], "target": ["a", "b"]})  # x#2 now also mentions a and b
    ingest(cocite_store, GraphBatch("delta-test", rels={"MENTIONS": mentions}))
    report = update_cocitation(cocite_store, SETTINGS)
    assert report.mode == "delta" and report.changed_sentences == 1 and report.changed_citing == 0
    sentence = stored_edges(cocite_store).set_index(["source", "target"])["sentence_count"].to_dict()
    assert sentence[("a", "b")] == 3 and sentence[("a", "c")] == 1 and sentence[("b", "c")] == 1
    assert_as_from_scratch(cocite_store)


def test_a_half_written_update_or_other_settings_run_the_full_step(cocite_store: GraphStore) -> None:
    compute_cocitation(cocite_store, SETTINGS)
    folder = basis_folder(cocite_store)
    assert folder is not None
    mark_pending(folder, "`citegraph update` was writing its results and stopped half-way")
    add_papers(cocite_store, [("w", "a"), ("w", "b")], ["w"])
    report = update_cocitation(cocite_store, SETTINGS)
    assert report.mode == "full" and "half-way" in report.reason
    assert not (folder / PENDING).exists()
    other = CocitationSettings(device="cpu", top_m=2)
    assert "top_m 3 -> 2" in update_cocitation(cocite_store, other).reason
    assert update_cocitation(cocite_store, other, recluster=True).mode == "full"


@pytest.mark.parametrize("seed", [0, 1])
def test_random_sequences_of_changes_equal_the_full_step(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    papers = [f"p{k:02d}" for k in range(14)]
    cites = {(a, b) for a in papers for b in papers if a != b and rng.random() < 0.25}
    store = open_store(StoreConfig(db_path=tmp_path / "random.db"))
    try:
        add_papers(store, sorted(cites), papers)
        compute_cocitation(store, SETTINGS)
        alive = list(papers)
        for step in range(4):
            action = rng.choice(["add", "remove", "change", "delete"])
            now = citations_of(store)
            if action == "add":
                paper = f"n{step}"
                refs = rng.sample(alive, k=min(len(alive), rng.randint(1, 5)))
                add_papers(store, [(paper, r) for r in refs], [paper])
                alive.append(paper)
            elif action == "remove" and now:
                citing = rng.choice(sorted({s for s, _ in now}))
                set_citations(store, {(s, t) for s, t in now if s != citing})
            elif action == "change" and now:
                citing = rng.choice(sorted({s for s, _ in now}))
                keep = {(s, t) for s, t in now if s != citing or rng.random() < 0.5}
                extra = {(citing, t) for t in rng.sample(alive, k=min(2, len(alive))) if t != citing}
                set_citations(store, keep | extra)
            elif action == "delete" and len(alive) > 3:
                gone = rng.choice(alive)
                delete_paper(store, gone)
                alive.remove(gone)
            report = update_cocitation(store, SETTINGS)
            assert report.mode in ("delta", "current"), report.reason
            assert_as_from_scratch(store)
    finally:
        store.close()


@pytest.mark.parametrize(("run", "seed"), [("full", 5), ("update", 29)])
def test_steps_run_as_separate_commands_keep_every_paper_s_probabilities(tmp_path: Path, run: str, seed: int) -> None:
    """Each step in its own open of the store, as separate CLI commands run: every close is a checkpoint.

    With the engine's column compression on, these seeds lost ``cocite_probs`` values (zeros) of papers after
    the second or third command, in the full step (``compute cocitation`` rerun after CITES changed) and in
    the update alike (``benchmarks/ladybug_list_property_loss.py``; ``graph.embedded.COMPRESSION``).
    """
    rng = random.Random(seed)
    path = tmp_path / "commands.db"
    papers = [f"p{k:02d}" for k in range(14)]
    cites = {(a, b) for a in papers for b in papers if a != b and rng.random() < 0.25}
    store = open_store(StoreConfig(db_path=path))
    try:
        add_papers(store, sorted(cites), papers)
        compute_cocitation(store, SETTINGS)
        for _ in range(4):
            store.close()
            store = open_store(StoreConfig(db_path=path))
            now = citations_of(store)
            citing = rng.choice(sorted({s for s, _ in now}))
            keep = {(s, t) for s, t in now if s != citing or rng.random() < 0.5}
            set_citations(store, keep | {(citing, t) for t in rng.sample(papers, 2) if t != citing})
            if run == "full":
                compute_cocitation(store, SETTINGS)
            else:
                update_cocitation(store, SETTINGS)
            store.close()
            store = open_store(StoreConfig(db_path=path))
            assert_as_from_scratch(store)
    finally:
        store.close()


def test_counts_loaded_from_spark_make_the_next_update_run_the_full_step(
    cocite_store: GraphStore, tmp_path: Path
) -> None:
    compute_cocitation(cocite_store, SETTINGS)
    out = tmp_path / "spark"
    (out / "CO_CITED").mkdir(parents=True)
    (out / "papers").mkdir()
    stored_edges(cocite_store).to_parquet(out / "CO_CITED" / "part-0.parquet")
    papers = stored_papers(cocite_store).reset_index()
    papers = papers.rename(columns={"partners": "cocite_partners", "probs": "cocite_probs", "tail": "cocite_tail"})
    papers[papers["n_cited"] > 0].to_parquet(out / "papers" / "part-0.parquet")
    load_spark_output(cocite_store, out)
    report = update_cocitation(cocite_store, SETTINGS)
    assert report.mode == "full" and "Spark" in report.reason
