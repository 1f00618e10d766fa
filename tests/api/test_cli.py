from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_recommend import _citances

from api.cli.main import main
from gnn.recommend.service import RecommendationService, ServiceSettings
from gnn.text.embeddings import compute_embeddings
from gnn.text.encoder import TextEncoder
from graph import GraphStore, StoreConfig, ingest, open_store
from graph.files import StoreFiles


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
    from gnn.recommend import train

    store_path = embedded_citances
    served = StoreFiles(store_path).reranker
    assert served is not None
    served.mkdir(parents=True)
    (served / "config.json").write_text('{"data_hash": "served"}', encoding="utf-8")
    calls: list[tuple[Path, bool]] = []

    def run_training(store: GraphStore, encoder: TextEncoder, index: object, *, out_dir: Path, **options: Any) -> Any:
        """What the real training does with ``out_dir``: save the chosen model there."""
        calls.append((out_dir, options["ablation"]))
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "config.json").write_text('{"data_hash": "new"}', encoding="utf-8")
        return {"chosen": {"saved": str(out_dir)}}

    monkeypatch.setattr(train, "run_training", run_training)
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
