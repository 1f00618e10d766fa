"""The Spark co-citation jobs (gnn/cocitation/spark.py) against hand-checked numbers and the single-machine step.

One SparkSession (local[2], 1 GiB heap, two shuffle partitions) serves every test; the module skips
with the reason when pyspark or Java is missing (``pip install '.[spark]'``, Java 17).
"""

from __future__ import annotations

import csv
import gzip
import json
import math
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.gnn.cocite_graph import CITES, open_cocite_store

pytest.importorskip("pyspark", reason="pyspark is not installed: pip install '.[spark]'")
if shutil.which("java") is None:
    pytest.skip("Spark needs Java 17 and `java` is not on the PATH", allow_module_level=True)

from api.cli.main import main
from gnn.cocitation.compute import CocitationSettings, cocitation_edges, compute_cocitation
from gnn.cocitation.counts import cooccurrence, normalised_strengths
from gnn.cocitation.noise import noise_distributions, top_partners
from gnn.cocitation.spark import (
    SparkCocitationSettings,
    pair_incidences,
    read_citations,
    read_openalex_works,
    run_cocitation,
    run_coupling,
    spark_session,
)
from graph.neo4j_admin import node_header, rel_header
from graph.schema import build_schema

TOLERANCE = {"rtol": 1e-9, "atol": 1e-9}


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    session = spark_session(
        "local[2]",
        app_name="citegraph-tests",
        driver_memory="1g",
        shuffle_partitions=2,
        # tiny inputs: compiling each stage's whole-stage code costs more than running it interpreted
        conf={"spark.sql.codegen.wholeStage": "false"},
    )
    yield session
    session.stop()


def _write_edges(
    folder: Path, cites: list[tuple[str, str]] | pd.DataFrame, mentions: list[tuple[str, str]] | None = None
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    frame = cites if isinstance(cites, pd.DataFrame) else pd.DataFrame(cites, columns=["source", "target"])
    frame.to_parquet(folder / "CITES.parquet", index=False)
    if mentions is not None:
        pd.DataFrame(mentions, columns=["source", "target"]).to_parquet(folder / "MENTIONS.parquet", index=False)
    return folder


def _table(folder: Path, keys: list[str]) -> pd.DataFrame:
    return pd.read_parquet(folder).sort_values(keys, ignore_index=True)


# the hand-checked fixture (tests/gnn/cocite_graph.py) ------------------------------------------


def test_coupling_and_top_k_by_hand(spark: object, tmp_path: Path) -> None:
    """Coupling: (x,y) = 2 [a, b], (x,z) = (y,z) = 1 [b]; s = references (x 3, y 2, z 3), N = 5 cited papers.

    top_k = 1 keeps a pair when it is either end's strongest partner (ties by id): x→y, y→x, z→x; (y,z) goes.
    """
    citations = read_citations(spark, _write_edges(tmp_path / "in", CITES))
    report = run_coupling(spark, citations, tmp_path / "out", SparkCocitationSettings(top_k=1, block_size=2))
    assert (report.members, report.items, report.pairs, report.written) == (5, 3, 3, 2)
    got = _table(tmp_path / "out" / "COUPLING", ["source", "target"])
    expected = pd.DataFrame(
        [("x", "y", 2, 5 * 2 / (3 * 2), 2 / math.sqrt(6), 2 / 3, 1.0), ("x", "z", 1, 5 / 9, 1 / 3, 1 / 5, 1 / 3)],
        columns=["source", "target", "count", "association", "cosine", "jaccard", "inclusion"],
    )
    pd.testing.assert_frame_equal(got, expected, check_dtype=False, rtol=1e-12)


def test_a_heavy_member_spreads_over_every_task(spark: object) -> None:
    """One member with 40 items in blocks of 4: its 55 block pairs land in both shuffle partitions, not one."""
    from pyspark.sql import functions as F

    incidence = spark.createDataFrame([("review", f"p{i:02d}") for i in range(40)], ["member", "item"])
    rows = pair_incidences(incidence, block_size=4).withColumn("task", F.spark_partition_id())
    assert rows.count() == 40 * 39 // 2 and rows.select("a", "b").distinct().count() == 40 * 39 // 2
    assert rows.select("task").distinct().count() == 2  # the session's shuffle partitions


# a generated graph against the single-machine step ---------------------------------------------


def generated_citations(seed: int = 7) -> pd.DataFrame:
    """~100k citations among 10k papers: uniform citing papers, Zipf(0.5) cited papers, two reviews of 700 references.

    The rows keep the draws' duplicates and self-citations: both paths must drop the one and keep the other.
    """
    rng = np.random.default_rng(seed)
    papers = 10_000
    ids = np.array([f"P{i:05d}" for i in range(papers)])
    cdf = np.cumsum(np.arange(1, papers + 1) ** -0.5)
    popular = rng.permutation(papers)
    citing = rng.integers(0, papers, 100_000)
    cited = popular[np.minimum(np.searchsorted(cdf / cdf[-1], rng.random(len(citing))), papers - 1)]
    frame = pd.DataFrame({"source": ids[citing], "target": ids[cited]})
    reviews = [
        pd.DataFrame({"source": f"R{k}", "target": ids[rng.choice(papers, 700, replace=False)]}) for k in range(2)
    ]
    return pd.concat([frame, *reviews], ignore_index=True)


@pytest.mark.slow  # a generated graph against the single-machine step; the by-hand tests stay in the default run
def test_generated_graph_equals_the_single_machine_step(spark: object, tmp_path: Path) -> None:
    cites = generated_citations()
    settings = SparkCocitationSettings(top_m=8, block_size=100)  # each review: 7 blocks, 28 block pairs
    report = run_cocitation(
        spark, read_citations(spark, _write_edges(tmp_path / "in", cites)), tmp_path / "out", settings
    )
    assert report.heavy_members == 2 and report.max_items == 700

    cocite = cooccurrence(cites["source"], cites["target"], device="cpu")
    expected = cocitation_edges(cocite, min_count=1)
    got = _table(tmp_path / "out" / "CO_CITED", ["source", "target"])
    assert report.pairs == len(cocite) == len(got) and report.members == cocite.n_members
    assert report.pair_incidences > 2 * 700 * 699 // 2
    assert (
        got["source"].tolist() == expected["source"].tolist() and got["target"].tolist() == expected["target"].tolist()
    )
    assert np.array_equal(got["count"], expected["count"]) and (got["sentence_count"] == 0).all()
    for name in ("association", "cosine", "jaccard", "inclusion"):
        np.testing.assert_allclose(got[name], expected[name], **TOLERANCE, err_msg=name)

    noise = noise_distributions(cocite, power=settings.power, device="cpu")
    partners = top_partners(noise, settings.top_m)
    papers = _table(tmp_path / "out" / "papers", ["id"])
    assert papers["id"].tolist() == list(cocite.ids)
    assert np.array_equal(papers["n_cited"], cocite.occurrences)
    np.testing.assert_allclose(papers["negative_weight"], noise.negative.numpy(), **TOLERANCE)
    with_partners = papers[papers["cocite_partners"].notna()].reset_index(drop=True)
    assert with_partners["id"].tolist() == list(partners["id"])
    assert [list(p) for p in with_partners["cocite_partners"]] == [list(p) for p in partners["cocite_partners"]]
    np.testing.assert_allclose(
        np.concatenate(with_partners["cocite_probs"].to_numpy()),
        np.concatenate([np.asarray(p) for p in partners["cocite_probs"]]),
        **TOLERANCE,
    )
    np.testing.assert_allclose(with_partners["cocite_tail"], partners["cocite_tail"], **TOLERANCE)


@pytest.mark.slow  # a generated graph against the single-machine step; the by-hand tests stay in the default run
def test_generated_coupling_equals_the_single_machine_step(spark: object, tmp_path: Path) -> None:
    cites = generated_citations()
    citations = read_citations(spark, _write_edges(tmp_path / "in", cites))
    report = run_coupling(spark, citations, tmp_path / "out", SparkCocitationSettings(min_count=2, block_size=128))
    coupling = cooccurrence(cites["target"], cites["source"], device="cpu")
    table = pd.concat([coupling.frame(), normalised_strengths(coupling)], axis=1)
    expected = table[table["count"] >= 2].reset_index(drop=True)
    got = _table(tmp_path / "out" / "COUPLING", ["source", "target"])
    assert report.pairs == len(coupling) and report.written == len(expected) > 10_000
    assert (
        got["source"].tolist() == expected["source"].tolist() and got["target"].tolist() == expected["target"].tolist()
    )
    assert np.array_equal(got["count"], expected["count"])
    for name in ("association", "cosine", "jaccard", "inclusion"):
        np.testing.assert_allclose(got[name], expected[name], **TOLERANCE, err_msg=name)


# through the CLI, into the store and into neo4j-admin files ------------------------------------


def _read_import_file(header: Path, folder: Path) -> tuple[list[str], list[list[str]]]:
    """Header fields and rows of every part file, read as tests/graph/test_neo4j_admin.py reads the export."""
    fields = next(csv.reader(header.open(encoding="utf-8", newline="")))
    rows = []
    for part in sorted(folder.glob("part-*")):
        with part.open(encoding="utf-8", newline="") as data:
            rows += list(csv.reader(data))
    return fields, rows


def test_cli_job_by_hand_store_write_back_and_neo4j_admin_files(
    spark: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The hand-checked graph through `export tables` -> `spark cocitation` -> `ingest cocitation`, and neo4j-admin.

    N = 3; s_a = 2, s_b = 3, s_c = s_d = s_y = 1; --block-size 2 splits x and z (3 references) into blocks.
    """
    with open_cocite_store(tmp_path) as store:
        compute_cocitation(store, CocitationSettings(top_m=2))
        computed_edges = store.read_edges("CO_CITED").sort_values(["source", "target"], ignore_index=True)
        computed_papers = pd.DataFrame.from_records(
            store.query("noise_weights"),
            columns=["id", "negative_weight", "cocite_partners", "cocite_probs", "cocite_tail"],
        ).sort_values("id", ignore_index=True)
    db = str(tmp_path / "cocite.db")
    assert main(["-q", "--db", db, "export", "tables", str(tmp_path / "tables"), "--format", "parquet"]) == 0
    out = tmp_path / "spark"
    argv = ["spark", "cocitation", "--edges", str(tmp_path / "tables"), "--out", str(out)]
    assert main(["-q", *argv, "--top-m", "2", "--block-size", "2", "--neo4j-admin"]) == 0
    assert "6 pairs, 6 written" in capsys.readouterr().out
    manifest = json.loads((out / "manifest.json").read_text())
    assert [manifest[k] for k in ("citations", "members", "items", "pair_incidences")] == [8, 3, 5, 7]
    assert [manifest[k] for k in ("pairs", "written", "heavy_members", "max_items")] == [6, 6, 2, 3]

    got = _table(out / "CO_CITED", ["source", "target"])
    expected = pd.DataFrame(
        [
            # source, target, count, sentence_count, association N c/(s s), cosine, jaccard, inclusion
            ("a", "b", 2, 2, 3 * 2 / (2 * 3), 2 / math.sqrt(6), 2 / 3, 1.0),
            ("a", "c", 1, 0, 3 / 2, 1 / math.sqrt(2), 1 / 2, 1.0),
            ("b", "c", 1, 0, 3 / 3, 1 / math.sqrt(3), 1 / 3, 1.0),
            ("b", "d", 1, 1, 3 / 3, 1 / math.sqrt(3), 1 / 3, 1.0),
            ("b", "y", 1, 0, 3 / 3, 1 / math.sqrt(3), 1 / 3, 1.0),
            ("d", "y", 1, 0, 3.0, 1.0, 1.0, 1.0),
        ],
        columns=["source", "target", "count", "sentence_count", "association", "cosine", "jaccard", "inclusion"],
    )
    pd.testing.assert_frame_equal(got, expected, check_dtype=False, rtol=1e-12)

    papers = _table(out / "papers", ["id"])
    assert papers["id"].tolist() == ["a", "b", "c", "d", "y"] and papers["n_cited"].tolist() == [2, 3, 1, 1, 1]
    w2, w3 = 2**0.75, 3**0.75  # freq^α and s^α with α = 3/4
    negative_total = w2 + w3 + 3
    np.testing.assert_allclose(
        papers["negative_weight"], [w2 / negative_total, w3 / negative_total, *[1 / negative_total] * 3]
    )
    # top 2 by descending p(j|t), ties by id: b's partners a (count 2), then c, d, y (count 1 each)
    assert [list(p) for p in papers["cocite_partners"]] == [["b", "c"], ["a", "c"], ["a", "b"], ["b", "y"], ["b", "d"]]
    probs = [list(p) for p in papers["cocite_probs"]]
    np.testing.assert_allclose(probs[0], [w2 / (w2 + 1), 1 / (w2 + 1)])
    np.testing.assert_allclose(probs[1], [w2 / (w2 + 3), 1 / (w2 + 3)])
    assert probs[2:] == [[0.5, 0.5]] * 3
    np.testing.assert_allclose(papers["cocite_tail"], [0.0, 2 / (w2 + 3), 0.0, 0.0, 0.0])

    stats = []
    for _ in range(2):  # idempotent: the second load replaces what the first wrote
        assert main(["-q", "--db", db, "ingest", "cocitation", str(out)]) == 0
        with open_cocite_store_readonly(db) as store:
            stats.append(store.stats())
            edges = store.read_edges("CO_CITED").sort_values(["source", "target"], ignore_index=True)
            papers = pd.DataFrame.from_records(store.query("noise_weights"), columns=computed_papers.columns)
            papers = papers.sort_values("id", ignore_index=True)
    assert stats[0] == stats[1] and stats[0]["relationships"]["CO_CITED"] == 6
    pd.testing.assert_frame_equal(edges, computed_edges, check_dtype=False, rtol=1e-9)
    assert papers["id"].tolist() == computed_papers["id"].tolist()
    np.testing.assert_allclose(papers["negative_weight"], computed_papers["negative_weight"], **TOLERANCE)
    for column in ("cocite_partners", "cocite_probs"):
        for got, want in zip(papers[column], computed_papers[column]):
            assert (got is None) == (want is None), column
            if got is not None:
                assert len(got) == len(want) and (column == "cocite_probs" or list(got) == list(want))
                if column == "cocite_probs":
                    np.testing.assert_allclose(got, want, **TOLERANCE)
    np.testing.assert_allclose(
        papers["cocite_tail"].astype(float), computed_papers["cocite_tail"].astype(float), **TOLERANCE
    )

    # neo4j-admin: the headers of `citegraph export neo4j-admin`, every row as wide as its header
    admin = out / "neo4j-admin"
    schema = build_schema()
    expected_headers = {
        "Paper": node_header(schema.node("Paper")),
        "CITES": rel_header(schema.rel("CITES")),
        "CO_CITED": rel_header(schema.rel("CO_CITED")),
    }
    read = {name: _read_import_file(admin / f"{name}.header.csv", admin / name) for name in expected_headers}
    for name, (fields, rows) in read.items():
        assert fields == expected_headers[name], name
        assert rows and all(len(row) == len(fields) for row in rows), name
    fields, rows = read["CO_CITED"]
    by_pair = {(r[0], r[1]): dict(zip(fields, r)) for r in rows}
    assert set(by_pair) == {tuple(p) for p in computed_edges[["source", "target"]].to_numpy()}
    ab = by_pair[("a", "b")]
    assert (ab[":TYPE"], ab["count:long"], ab["sentence_count:long"]) == ("CO_CITED", "2", "2")
    assert float(ab["cosine:double"]) == computed_edges.loc[0, "cosine"]  # the text reads back to the same double
    fields, rows = read["Paper"]
    paper = {r[0]: dict(zip(fields, r)) for r in rows}
    assert sorted(paper) == ["a", "b", "c", "d", "x", "y", "z"]  # every paper of the citations, once
    assert paper["b"]["cocite_partners:string[]"] == "a;c" and paper["b"]["n_cited:long"] == "3"
    assert paper["x"]["n_cited:long"] == "0" and paper["x"]["cocite_partners:string[]"] == ""
    assert len(read["CITES"][1]) == len(CITES)
    script = (admin / "import.sh").read_text(encoding="utf-8")
    assert (
        "--nodes='Paper.header.csv,Paper/part-.*'" in script
        and "--relationships='CO_CITED.header.csv,CO_CITED/part-.*'" in script
    )


def open_cocite_store_readonly(db: str) -> object:
    from graph import StoreConfig, open_store

    return open_store(StoreConfig(db_path=Path(db), read_only=True))


# OpenAlex snapshot works ------------------------------------------------------------------------


@pytest.mark.shared_data
def test_openalex_works_jsonl(spark: object, data_dir: Path, tmp_path: Path) -> None:
    """The real OpenAlex API sample as snapshot JSON lines (gzipped): its references, counted with plain json."""
    sample = data_dir / "formats" / "openalex" / "json_chunk_1_results_page_1.json"
    if not sample.exists():
        pytest.skip(f"{sample} is missing")
    works = json.loads(sample.read_text(encoding="utf-8"))["results"]
    path = tmp_path / "works" / "part_000.gz"
    path.parent.mkdir()
    with gzip.open(path, "wt", encoding="utf-8") as out:
        for work in works:
            out.write(json.dumps(work) + "\n")
    pairs = sorted(
        {
            ("openalex:" + w["id"].rsplit("/", 1)[1], "openalex:" + r.rsplit("/", 1)[1])
            for w in works
            for r in w["referenced_works"]
        }
    )
    assert len(pairs) == 1063  # docs: 1063 references in 38 works

    citations, rejected = read_openalex_works(spark, path.parent)
    assert rejected.count() == 0
    got = sorted((row["citing"], row["cited"]) for row in citations.collect())  # 1,063 rows: a test may collect
    assert got == pairs
