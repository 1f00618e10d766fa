from __future__ import annotations

import csv
import gzip
import json
import logging
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from taxonomy_graph import taxonomy_batch, write_fused

from api.cli.common import format_rows
from api.cli.main import build_parser, main
from api.cli.query import completeness_table, recipe_statement
from gnn.hyperbolic.compute import HYPERBOLIC_CLASSES, HYPERBOLIC_MAP
from gnn.recommend.service import RecommendationService, ServiceSettings
from gnn.text.embeddings import compute_embeddings
from gnn.text.encoder import TextEncoder
from graph import Completeness, GraphStore, StoreConfig, ingest, open_store
from graph.files import StoreFiles
from tests.gnn.recommend.test_recommend import _citances

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def built(store: GraphStore, store_path: Path) -> Path:
    """The tiny graph, closed so the CLI can open it."""
    store.close()
    return store_path


def test_stats_json(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", str(built), "stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["nodes"]["Paper"] == 5 and stats["relationships"]["CITES"] == 6


def test_stats_completeness_text_and_json(
    store: GraphStore, store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two of the five tiny papers embedded, one with taxonomy and Poincaré vectors; no sentences."""
    sizes = store.schema.sizes
    store.write_node_properties(
        "Paper",
        "id",
        pd.DataFrame({"id": ["p1", "p2"], "embedding": list(np.full((2, sizes.embedding), 0.05, np.float32))}),
    )
    store.write_node_properties(
        "Paper",
        "id",
        pd.DataFrame(
            {
                "id": ["p1"],
                "taxonomy": [np.full(sizes.taxonomy, 0.05, np.float32)],
                "poincare": [np.full(sizes.poincare, 0.01)],
            }
        ),
    )
    store.close()
    assert main(["--db", str(store_path), "stats"]) == 0
    out = capsys.readouterr().out
    section = out[out.index("completeness\n") :].splitlines()
    assert [line.split() for line in section[1:5]] == [
        ["Paper.embedding", "2", "/", "5", "(40.0%)"],
        ["Paper.taxonomy", "1", "/", "5", "(20.0%)"],
        ["Paper.poincare", "1", "/", "5", "(20.0%)"],
        ["Sentence.embedding", "0", "/", "0", "(100.0%)"],  # no sentence to embed: complete
    ]
    assert main(["--db", str(store_path), "stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["nodes"]["Paper"] == 5  # the sections before stay as they were
    assert stats["completeness"] == {
        "Paper.embedding": {"have": 2, "of": 5, "fraction": 0.4},
        "Paper.taxonomy": {"have": 1, "of": 5, "fraction": 0.2},
        "Paper.poincare": {"have": 1, "of": 5, "fraction": 0.2},
        "Sentence.embedding": {"have": 0, "of": 0, "fraction": 1.0},
    }


def test_completeness_percent_rounds_down() -> None:
    rows = [Completeness("Paper.embedding", 103_615, 103_616), Completeness("Paper.taxonomy", 10_000, 103_616)]
    lines = completeness_table(rows).splitlines()
    assert lines[0] == "completeness"
    assert lines[1].endswith("(99.9%)") and "103,615 / 103,616" in lines[1]  # never 100.0% while one is missing
    assert lines[2].endswith("(9.6%)")  # 9.651...%


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


def test_cypher_refuses_checkpoint_and_file_statements_and_the_store_stays_readable(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    before = sorted(tmp_path.rglob("*"))
    for text, named in [
        ("CHECKPOINT", "CHECKPOINT"),
        ("COPY (MATCH (p:Paper) RETURN p.id LIMIT 5) TO 'x.csv'", "COPY"),
        ("EXPORT DATABASE 'dump'", "EXPORT"),
    ]:
        assert main(["--db", str(built), "cypher", text]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"citegraph: error: `{named}` is refused") and "read-only" in err, err
    assert sorted(tmp_path.rglob("*")) == before
    for _ in range(2):  # every later read-only open works
        assert main(["--db", str(built), "stats", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["nodes"]["Paper"] == 5


def test_compute_on_a_missing_store_creates_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "typo.db"
    assert main(["--db", str(missing), "compute", "cocitation"]) == 1
    err = capsys.readouterr().err
    assert f"no store at {missing}; run `citegraph --db {missing} ingest SOURCE`" in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind", ["missing", "not a store"])
def test_serve_on_a_bad_store_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    from tests.api.live import free_port

    path = tmp_path / "bad.db"
    if kind == "not a store":
        path.write_bytes(b"this is no LadybugDB file\n" * 1000)
    assert main(["--db", str(path), "serve", "--host", "127.0.0.1", "--port", str(free_port())]) == 1
    err = capsys.readouterr().err
    assert err.startswith("citegraph: error:") and err.count("\n") == 1 and "Traceback" not in err, err


def test_an_unwritable_rejects_dir_is_a_config_error(
    built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"type": "paper", "id": "x1", "title": "Fine"}\nnot json\n', encoding="utf-8")
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")  # a folder under a file cannot be made, even by root
    args = ["--db", str(built), "ingest", "jsonl", str(corpus), "--on-error", "skip"]
    assert main([*args, "--rejects-dir", str(blocker / "rejects")]) == 1
    err = capsys.readouterr().err
    assert f"cannot write the rejected records to {blocker / 'rejects'}" in err and "--rejects-dir" in err, err
    assert main(["--db", str(built), "cypher", "MATCH (p:Paper {id: 'x1'}) RETURN p.id"]) == 0
    assert "(0 rows)" in capsys.readouterr().out


@pytest.mark.parametrize(("param", "problem"), [("x=1e400", "not a finite number"), (f"x={2**70}", "64-bit")])
def test_a_parameter_the_store_cannot_hold_is_named(
    built: Path, capsys: pytest.CaptureFixture[str], param: str, problem: str
) -> None:
    assert main(["--db", str(built), "cypher", "RETURN $x AS x", "--param", param]) == 1
    err = capsys.readouterr().err
    assert err.startswith("citegraph: error: --param x: ") and problem in err and "pybind11" not in err, err


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


def test_export_says_what_it_wrote_once(
    built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    assert main(["--db", str(built), "compute", "cocitation"]) == 0
    capsys.readouterr()
    for kind in ("cocitation", "coupling"):
        with caplog.at_level(logging.INFO):
            assert main(["--db", str(built), "export", kind, str(tmp_path / f"{kind}.csv")]) == 0
        shown = capsys.readouterr()
        said = shown.out + shown.err + caplog.text  # the terminal shows stdout and the INFO log lines
        assert said.count(f"{kind}_nodes.csv") == 1, said
        assert shown.out.count(" edges between ") == 1
        caplog.clear()


def test_compute_all_skips_taxonomy_steps_without_a_taxonomy(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", str(built), "compute", "all"]) == 0
    out = capsys.readouterr().out
    assert "taxonomy: skipped" in out and "hyperbolic: skipped" in out
    assert main(["--db", str(built), "compute", "taxonomy"]) == 65  # asked for by name: a data error saying what to do
    assert "ingest taxonomy" in capsys.readouterr().err


def test_stats_files_lists_what_the_store_consists_of(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    built.with_name(built.name + ".clusters.json").write_text("{}", encoding="utf-8")
    assert main(["--db", str(built), "stats", "--files", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["nodes"]["Paper"] == 5  # the counts as without --files
    files = stats["files"]
    assert list(files)[:6] == ["store", "index", "citances", "profiles", "reranker", "clusters"]
    assert files["store"]["exists"] and files["store"]["size"] > 0 and files["store"]["path"] == str(built)
    assert files["clusters"] == {
        "path": str(built) + ".clusters.json",
        "exists": True,
        "size": 2,
        "built_from": None,
        "current": None,
    }
    assert not files["index"]["exists"] and files["index"]["path"] == str(built) + ".index"
    assert files["linker"]["path"] == str(tmp_path / "cache" / "models" / "linker.json")
    # the capabilities' models (each declares its own ModelFile), listed where and as the store listed them before
    models = tmp_path / "cache" / "models"
    assert list(files)[6:] == [
        "coupling_clusters",
        "cocitation_basis",
        "served_encoder",
        "linker",
        "cross_encoder",
        "hyperbolic_classes",
        "hyperbolic_map",
        "encoders",
        "embeddings",
        "reranker_examples",
    ]
    assert [files[name]["path"] for name in ("cross_encoder", "hyperbolic_classes", "hyperbolic_map", "encoders")] == [
        str(models / "linker-cross-encoder"),
        str(models / "hyperbolic_classes"),
        str(models / "hyperbolic_map"),
        str(models / "encoder"),
    ]

    assert main(["--db", str(built), "stats", "--files"]) == 0
    out = capsys.readouterr().out
    table = out[out.index("\nfiles\n") + 1 :].splitlines()
    assert table[0] == "files" and len(table) == 1 + len(files)
    assert table[2].split()[:3] == ["index", "absent", str(built) + ".index"]
    assert table[6].split()[:4] == ["clusters", "2", "B", str(built) + ".clusters.json"]

    assert main(["--db", str(built), "stats", "--json"]) == 0
    assert "files" not in json.loads(capsys.readouterr().out)  # only when asked for


def _tree(root: Path, prefix: str) -> set[str]:
    """Names of the files under every ``<prefix>*`` path in ``root``, relative, with the prefix cut."""
    names = set()
    for top in root.glob(prefix + "*"):
        for path in [top, *top.rglob("*")] if top.is_dir() else [top]:
            if path.is_file():
                names.add(str(path.relative_to(root))[len(prefix) :])
    return names


@pytest.fixture
def embedded_citances(
    store: GraphStore, store_path: Path, encoder: TextEncoder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """The store at ``store_path`` holding the tiny citances with their embeddings, closed; a fresh cache."""
    ingest(store, _citances())
    compute_embeddings(store, encoder)
    store.close()
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    return store_path


def test_compute_index_builds_the_index_and_profiles_alone(
    embedded_citances: Path,
    encoder: TextEncoder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    store_path = embedded_citances

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("compute index opened the whole recommendation service")

    with monkeypatch.context() as patch:
        patch.setattr(RecommendationService, "open", refuse)
        assert main(["--db", str(store_path), "-q", "compute", "index"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("index: 5 papers (5 vectors, exact), BM25 k1=") and line.endswith("; profiles: 2 papers")
    built = _tree(tmp_path, store_path.name + ".index")
    assert {"/manifest.json", ".citances.parquet", ".citances.stamp"} <= built
    assert not any(name.startswith(".reranker") for name in built)

    # the same files as the service writes when it builds the index on the first `recommend`
    with open_store(StoreConfig(db_path=store_path, read_only=True)) as again:
        RecommendationService.open(
            again, ServiceSettings(), encoder=encoder, index_dir=tmp_path / "served.index", build=True
        )
    assert _tree(tmp_path, "served.index") == built

    assert main(["--db", str(store_path), "stats", "--files", "--json"]) == 0
    files = json.loads(capsys.readouterr().out)["files"]
    assert files["index"]["current"] is True and files["citances"]["current"] is True
    assert files["profiles"]["exists"] and not files["reranker"]["exists"]


def test_an_ablation_saves_its_models_beside_its_report_never_over_the_served_reranker(
    embedded_citances: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from gnn.recommend import studies, train

    store_path = embedded_citances
    served = StoreFiles(store_path).reranker
    assert served is not None
    served.mkdir(parents=True)
    (served / "config.json").write_text('{"data_hash": "served"}', encoding="utf-8")
    calls: list[tuple[Path, bool]] = []

    def training(ablation: bool) -> Any:
        def run(store: GraphStore, encoder: TextEncoder, index: object, *, out_dir: Path, **options: Any) -> Any:
            """What the real training does with ``out_dir``: save the chosen model there."""
            calls.append((out_dir, ablation))
            out_dir.mkdir(parents=True, exist_ok=True)
            (out_dir / "config.json").write_text('{"data_hash": "new"}', encoding="utf-8")
            return {"chosen": {"saved": str(out_dir)}}

        return run

    monkeypatch.setattr(train, "run_training", training(ablation=False))
    monkeypatch.setattr(studies, "run_ablation", training(ablation=True))
    monkeypatch.setattr(train, "report_markdown", lambda report: "")
    report = tmp_path / "eval" / "ablation.json"
    args = ["--db", str(store_path), "-q", "eval", "recommend", "--ablation", "--out", str(report)]
    assert main(args) == 0
    models = tmp_path / "eval" / "ablation.models"
    assert calls == [(models, True)] and (models / "config.json").is_file()
    assert (served / "config.json").read_text(encoding="utf-8") == '{"data_hash": "served"}'  # untouched
    assert f"ablation models saved in {models}" in capsys.readouterr().out

    assert main(["--db", str(store_path), "-q", "train", "reranker", "--out", str(tmp_path / "r.json")]) == 0
    assert calls[-1] == (served, False)  # training replaces the served model, as it should
    assert (served / "config.json").read_text(encoding="utf-8") == '{"data_hash": "new"}'


# cypher: numbers, recipes, files -------------------------------------------------------------------
@pytest.fixture
def openalex_built(tmp_path: Path) -> Path:
    """A store of one OpenAlex work citing another: the engine's Arrow export of its Paper nodes fails
    ("Expected 2 buffers for imported type float"), which the tiny graph's nodes do not show."""
    work = {"id": "https://openalex.org/W1", "title": "A", "publication_year": 2020}
    path = tmp_path / "w1.json"
    path.write_text(json.dumps(work | {"referenced_works": ["https://openalex.org/W2"]}), encoding="utf-8")
    db = tmp_path / "oa.db"
    assert main(["--db", str(db), "-q", "ingest", "openalex", str(path)]) == 0
    return db


def test_cypher_returns_whole_nodes_relationships_and_paths_as_maps(
    openalex_built: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`RETURN p` was an internal ArrowInvalid (exit 2); now a node is its label and set properties in every format."""
    assert main(["--db", str(openalex_built), "cypher", "MATCH (p:Paper) RETURN p ORDER BY p.id LIMIT 1"]) == 0
    assert '"_label": "Paper", "id": "openalex:W1"' in capsys.readouterr().out
    query = (
        "MATCH path = (p:Paper {id: 'openalex:W1'})-[r:CITES]->(q:Paper) RETURN p, r, path, [q] AS cited, q.id AS id"
    )
    assert main(["--db", str(openalex_built), "cypher", query, "--format", "json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    paper = {"_label": "Paper", "id": "openalex:W1", "title": "A", "year": 2020, "dataset": "openalex", "stub": False}
    assert {k: row["p"][k] for k in paper} == paper and None not in row["p"].values()
    assert row["r"]["_type"] == "CITES" and "_SRC" not in row["r"]
    assert [n["id"] for n in row["path"]["nodes"]] == ["openalex:W1", "openalex:W2"]
    assert [r["_type"] for r in row["path"]["relationships"]] == ["CITES"]
    assert row["cited"][0]["_label"] == "Paper" and row["cited"][0]["stub"] is True
    assert main(["--db", str(openalex_built), "cypher", query, "--format", "csv"]) == 0
    out = capsys.readouterr().out
    [header, line] = list(csv.reader(out.splitlines()))
    assert header == ["p", "r", "path", "cited", "id"]
    assert json.loads(line[0])["title"] == "A" and line[4] == "openalex:W2"  # cells as JSON
    assert main(["--db", str(openalex_built), "cypher", query, "--width", "0"]) == 0
    table = capsys.readouterr().out
    assert '"_label": "Paper"' in table and "(1 rows)" in table


def test_table_cuts_long_cells_with_an_ellipsis_and_never_id_columns() -> None:
    """Four ids sharing their first 60 characters read as one; a cut cell did not say it was cut."""
    ids = [f"{'x' * 70}{n}" for n in range(2)]
    lines = format_rows(["p.id", "title"], [[key, "t" * 100] for key in ids], "table").splitlines()
    assert [line.split(" | ")[0].strip() for line in lines[2:4]] == ids  # whole
    assert all(line.split(" | ")[1] == "t" * 59 + "…" for line in lines[2:4])  # 60 characters with the ellipsis
    assert lines[0].split(" | ")[1].strip() == "title"
    wide = format_rows(["title"], [["t" * 100]], "table", width=0).splitlines()
    assert wide[2] == "t" * 100
    short = format_rows(["title", "paper_id"], [["t" * 10, "k" * 30]], "table", width=5).splitlines()
    assert short[2] == "tttt… | " + "k" * 30


def test_cypher_json_keeps_sums_numeric(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    query = (
        "MATCH (p:Paper) RETURN sum(CASE WHEN p.year > 3000 THEN 1 ELSE 0 END) AS later, "
        "sum(CASE WHEN p.year > 2000 THEN 1 ELSE 0 END) AS recent, [sum(p.year)] AS listed"
    )
    assert main(["--db", str(built), "cypher", query, "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out) == [{"later": 0, "recent": 3, "listed": [10002]}]  # p1, p4, p5 after 2000
    assert '"0"' not in out and '"3"' not in out  # numbers, not their strings


def _recipe_files() -> dict[str, str]:
    return {path.stem: path.read_text(encoding="utf-8") for path in (REPO / "cypher" / "explore").glob("*.cypher")}


def test_recipes_are_package_data(tmp_path: Path) -> None:
    """Every recipe is shipped with the installed package (the globs setuptools expands), not only in a checkout."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = pyproject["tool"]["setuptools"]["package-data"]["cypher"]
    shipped = {path for pattern in patterns for path in (REPO / "cypher").glob(pattern)}
    assert {REPO / "cypher" / "explore" / f"{name}.cypher" for name in _recipe_files()} <= shipped


def test_recipe_runs_by_name_from_any_folder(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # no cypher/ folder here
    args = ["--db", str(built), "cypher", "--recipe", "papers_citing_both", "--param", "paper_a=p2"]
    assert main([*args, "--param", "paper_b=p3", "--format", "json"]) == 0
    # p1 (2001) and p4 (2004) cite both p2 and p3; newest first
    assert [(r["id"], r["year"]) for r in json.loads(capsys.readouterr().out)] == [("p4", 2004), ("p1", 2001)]
    assert main([*args, "--param", "paper_b=p3", "--param", "limit=1", "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "id,title,label,year,venue",
        "p4,Neural machine translation,Neural machine translation,2004,",
    ]
    assert (
        main(["--db", str(built), "cypher", "--recipe", "coauthors", "--param", "author_id=a1", "--format", "json"])
        == 0
    )
    assert json.loads(capsys.readouterr().out) == [{"coauthor_id": "a2", "name": "Alan Turing", "shared_papers": 1}]
    assert list(elsewhere.iterdir()) == []


def test_recipe_list_names_every_recipe_with_its_parameters(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cypher", "--recipe", "list", "--format", "json"]) == 0  # no store needed
    listed = {entry["name"]: entry for entry in json.loads(capsys.readouterr().out)}
    files = _recipe_files()
    assert sorted(listed) == sorted(files)
    for name, text in files.items():
        body = "\n".join(line for line in text.splitlines() if not line.startswith("//"))
        assert {p["name"] for p in listed[name]["parameters"]} == set(re.findall(r"\$(\w+)", body)), name
        assert listed[name]["description"].startswith(text.splitlines()[0].lstrip("/ ").strip()), name
        assert listed[name]["example"].startswith(f"citegraph cypher --recipe {name} "), name
    ego = {p["name"]: p for p in listed["ego_network"]["parameters"]}
    assert ego["paper_id"] == {"name": "paper_id", "type": "text", "required": True, "description": ""}
    assert ego["limit"] == {
        "name": "limit",
        "type": "integer",
        "required": False,
        "description": "most edges returned",  # the header's words after $limit are about the limit alone
        "default": 20,
    }
    assert [p["type"] for p in listed["most_cited_papers"]["parameters"]] == ["integer", "integer", "integer"]

    assert main(["cypher", "--recipe", "list"]) == 0
    out = capsys.readouterr().out
    assert "coauthors: The people an author has written with, by number of shared papers.\n" in out
    assert '    $author_id (text): e.g. "author:kathleen mckeown"\n    $limit (integer, optional, default 20)\n' in out
    assert f"({len(files)} recipes," in out


def test_an_unknown_recipe_is_a_user_error_listing_the_known_ones(
    built: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--db", str(built), "cypher", "--recipe", "top_cited"]) == 1
    err = capsys.readouterr().err
    assert (
        err.startswith("citegraph: error: no recipe named 'top_cited'; known: acm_subtree, ") and err.count("\n") == 1
    )
    assert all(name in err for name in _recipe_files()) and "--recipe list" in err


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (["author_id=a1", "year=2001"], "recipe coauthors takes no parameter 'year'; it takes: --param author_id=TEXT"),
        ([], "`coauthors` needs `author_id`"),
        (["author_id=a1", "limit=ten"], "--param limit takes an integer, got 'ten'"),
        (["author_id=a1", "limit=0"], "must be between 1 and"),
    ],
)
def test_recipe_parameters_that_do_not_fit_are_user_errors(
    built: Path, capsys: pytest.CaptureFixture[str], params: list[str], message: str
) -> None:
    args = ["--db", str(built), "cypher", "--recipe", "coauthors"]
    assert main([*args, *(x for p in params for x in ("--param", p))]) == 1
    err = capsys.readouterr().err
    assert err.startswith("citegraph: error: ") and message in err and err.count("\n") == 1, err


def test_recipe_values_follow_the_header_types() -> None:
    """Ids that look like numbers stay text (a JSON string too); integers must be integers."""
    text, values = recipe_statement(
        "papers_citing_both", ["paper_a=0704.3011", 'paper_b="1234"', "limit=3", "paper_a=2301"]
    )
    assert values == {"paper_a": "2301", "paper_b": "1234", "limit": 3}
    assert text.startswith("MATCH") and "$paper_a" in text
    assert recipe_statement("cypher/explore/coauthors.cypher", ["author_id=x"])[1] == {"author_id": "x", "limit": 20}


def test_a_missing_file_is_a_user_error_suggesting_the_recipe(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["--db", str(built), "cypher", "--file", "cypher/explore/coauthors.cypher"]) == 1
    err = capsys.readouterr().err
    assert (
        err.startswith("citegraph: error: --file cypher/explore/coauthors.cypher: no such file")
        and err.count("\n") == 1
    )
    assert str(tmp_path) in err and "`citegraph cypher --recipe coauthors`" in err
    assert main(["--db", str(built), "cypher", "--file", str(tmp_path / "mine.cypher")]) == 1
    assert "--recipe NAME" in capsys.readouterr().err
    assert main(["--db", str(built), "cypher", "--file", str(tmp_path)]) == 1  # a folder
    assert capsys.readouterr().err.startswith(f"citegraph: error: --file {tmp_path}: cannot read it")
    assert main(["--db", str(built), "cypher", "RETURN 1 AS x", "--recipe", "coauthors"]) == 1
    assert "got a query and --recipe" in capsys.readouterr().err


# ingest: where rejects go, empty inputs -------------------------------------------------------------
def test_rejects_land_beside_the_store_whatever_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("CITEGRAPH_REJECTS", raising=False)
    corpus = tmp_path / "data" / "my corpus.jsonl"
    corpus.parent.mkdir()
    corpus.write_text('{"type": "paper", "id": "x1", "title": "Fine"}\nnot json\n', encoding="utf-8")
    db = tmp_path / "stores" / "graph.db"
    db.parent.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["--db", str(db), "ingest", "jsonl", str(corpus), "--on-error", "skip"]) == 0
    report = tmp_path / "stores" / "rejects" / "jsonl_my_corpus.jsonl.rejects.jsonl"  # the name docs/data.md gives
    assert f"rejects written to {report}" in capsys.readouterr().out
    [line] = report.read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["origin"] == "my corpus.jsonl:2"
    assert list(elsewhere.iterdir()) == []

    monkeypatch.setenv("CITEGRAPH_REJECTS", str(tmp_path / "from-env"))
    assert main(["--db", str(db), "ingest", "jsonl", str(corpus), "--on-error", "skip"]) == 0
    assert (tmp_path / "from-env" / report.name).is_file()
    assert main(["--db", str(db), "ingest", "jsonl", str(corpus), "--on-error", "skip", "--rejects-dir", "flag"]) == 0
    assert (elsewhere / "flag" / report.name).is_file()  # a relative --rejects-dir is the user's own folder


def test_an_empty_input_file_warns_naming_it(
    built: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, content in [("empty.jsonl", b""), ("blank.jsonl.gz", gzip.compress(b"\n  \n"))]:
        caplog.clear()
        path = tmp_path / name
        path.write_bytes(content)
        assert main(["--db", str(built), "ingest", "jsonl", str(path)]) == 0
        assert f"jsonl:{name}: 0 records in = 0 stored + 0 rejected" in capsys.readouterr().out
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert f"{path} is empty (no record in it); check that it is the file you meant" in warnings, warnings
        assert (
            f"jsonl: {path} holds no record (0 records read, nothing stored); check that it is the jsonl export you meant"
            in warnings
        )
    caplog.clear()
    corpus = tmp_path / "one.jsonl"
    corpus.write_text('{"type": "paper", "id": "x1", "title": "Fine"}\n', encoding="utf-8")
    assert main(["--db", str(built), "ingest", "jsonl", str(corpus)]) == 0
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


# compute: one report per step ----------------------------------------------------------------------
def test_compute_cocitation_prints_its_report_once(
    built: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.INFO)
    assert main(["--db", str(built), "compute", "cocitation"]) == 0
    captured = capsys.readouterr()
    shown = captured.out + captured.err + caplog.text
    first = captured.out.splitlines()[0]
    assert first.startswith("co-citation on cpu: 6 citations from 3 papers to 4 papers")
    assert shown.count(first) == 1 and shown.count("3 co-cited pairs, 3 CO_CITED edges written") == 1


def test_every_recipe_command_of_the_docs_takes_its_parameters() -> None:
    """The `citegraph cypher --recipe` commands of docs/cypher.md and docs/cli.md name a recipe and fitting values."""
    commands = [
        shlex.split(line, comments=True)
        for doc in ("cypher.md", "cli.md")
        for line in (REPO / "docs" / doc).read_text(encoding="utf-8").splitlines()
        if line.startswith("citegraph cypher --recipe ")
    ]
    assert len(commands) >= len(_recipe_files())
    for words in commands:
        name = words[words.index("--recipe") + 1]
        if name != "list":
            params = [words[i + 1] for i, word in enumerate(words) if word == "--param"]
            recipe_statement(name, params)  # raises on an unknown recipe or parameter


def test_compute_hyperbolic_no_map_writes_coordinates_and_a_later_map_run_loads_the_class_layout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sizes = {"CITEGRAPH_EMBEDDING_DIM": "8", "CITEGRAPH_TAXONOMY_DIM": "8", "CITEGRAPH_POINCARE_DIM": "4"}
    for name, value in {**sizes, "CITEGRAPH_CACHE": str(tmp_path / "cache")}.items():
        monkeypatch.setenv(name, value)
    db = tmp_path / "taxonomy.db"
    with open_store(StoreConfig.from_env(db_path=db)) as store:
        ingest(store, taxonomy_batch())
        write_fused(store, 8)
    files = StoreFiles(cache=tmp_path / "cache")
    args = ["--db", str(db), "compute", "hyperbolic", "--dim", "2", "--epochs", "30", "--map-epochs", "50"]

    assert main([*args, "--no-map"]) == 0
    out = capsys.readouterr().out
    assert "class layout trained for" in out and "h_θ not trained: not asked for (--no-map)" in out
    hyperbolic_map, hyperbolic_classes = HYPERBOLIC_MAP.under(files), HYPERBOLIC_CLASSES.under(files)
    assert not hyperbolic_map.exists() and len(list(hyperbolic_classes.glob("*.pt"))) == 1
    with open_store(StoreConfig.from_env(db_path=db, read_only=True)) as store:
        assert len(store.query("papers_with_poincare")) == 2
        assert all(r["poincare"] is not None for r in store.query("arxiv_category_points"))

    assert main(args) == 0  # --map is the default
    out = capsys.readouterr().out
    assert f"class layout loaded from cache {hyperbolic_classes}" in out and "saved to" in out
    assert (hyperbolic_map / "latest").is_file()
    assert main(args) == 0
    assert f"loaded from cache {hyperbolic_map}" in capsys.readouterr().out


def test_every_command_a_statement_header_names_exists(capsys: pytest.CaptureFixture[str]) -> None:
    """most_cited_papers.cypher sent its users to `citegraph compute citation-counts`, which is no command."""

    def header(path: Path) -> str:  # the leading // lines as one text, so a command may run across lines
        lines = path.read_text(encoding="utf-8").splitlines()
        return " ".join(line.lstrip("/").strip() for line in lines if line.startswith("//"))

    named = [
        (path.relative_to(REPO), command)
        for path in sorted((REPO / "cypher").rglob("*.cypher"))
        for command in re.findall(r"`citegraph ([^`]+)`", header(path))
    ]
    assert any(command.startswith("compute cocitation") for _, command in named)  # the headers are read
    unknown = []
    for path, command in named:
        try:
            build_parser().parse_known_args(shlex.split(command.replace("…", "")))
        except SystemExit:
            unknown.append(f"{path}: citegraph {command}")
    capsys.readouterr()
    assert not unknown


def test_export_cocitation_in_a_year_range(built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the tiny graph: p1 (2001) cites p2, p3; p4 (2004) cites p1, p2, p3
    assert main(["--db", str(built), "compute", "cocitation"]) == 0
    out = tmp_path / "early.csv"
    args = ["--db", str(built), "export", "cocitation", str(out), "--measure", "count"]
    assert main([*args, "--year-min", "2000", "--year-max", "2002"]) == 0
    edges = out.read_text().splitlines()
    assert edges[0].startswith("source,target,count") and [e.split(",")[:3] for e in edges[1:]] == [["p2", "p3", "1"]]
    nodes = (tmp_path / "early_nodes.csv").read_text().splitlines()
    assert nodes[0].startswith("id,label,title") and nodes[1].startswith("p2,Word alignment models,")
    assert main(["--db", str(built), "export", "coupling", str(out), "--year-min", "2000"]) == 1
    assert "--year-min/--year-max apply to `export cocitation` only" in capsys.readouterr().err
