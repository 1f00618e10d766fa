"""The OpenAlex importer on the real sample works, layouts derived from them, and broken variants.

Expected numbers come from the sample files read with plain ``json`` here (:func:`_expected`),
not from the loader; the literal ones were checked by hand against the files.
"""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from api.cli.main import main
from graph.errors import IngestError, ValidationError
from graph.ingest import ingest, ingest_stream
from graph.schema import ORIGIN_COLUMN
from graph.store import GraphStore
from loaders import SOURCES, openalex
from loaders.ids import author_key

pytestmark = pytest.mark.shared_data

SINGLE = "W2741809807.json"  # /works/W2741809807, one line
PAGE = "results_page_1.json"  # an API page of 2 works (W2755950973, W2741809807)
CHUNK = "json_chunk_1_results_page_1.json"  # an API page of 49 works


@pytest.fixture(scope="module")
def samples(data_dir: Path) -> Path:
    folder = data_dir / "formats" / "openalex"
    if not folder.is_dir():
        pytest.skip(f"no OpenAlex samples at {folder}")
    return folder


def _works(path: Path) -> list[dict[str, Any]]:
    value = json.loads(path.read_text(encoding="utf-8"))
    return value.get("results", [value])


def _short(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[-1]


def _expected(works: list[dict[str, Any]]) -> dict[str, int]:
    """Table sizes from the works as OpenAlex gives them (the latest copy of a work read twice)."""
    latest: dict[str, dict[str, Any]] = {}
    for work in works:
        if work["id"] not in latest or work["updated_date"] >= latest[work["id"]]["updated_date"]:
            latest[work["id"]] = work
    ids = {_short(w["id"]) for w in latest.values()}
    cited = [{_short(r) for r in w.get("referenced_works") or []} - {_short(w["id"])} for w in latest.values()]
    authors = [{author_key(a["author"]["display_name"]) for a in w.get("authorships") or []} for w in latest.values()]
    topics = [(w.get("topics") or []) + [w["primary_topic"]] for w in latest.values()]
    classes = {t["id"] for ts in topics for t in ts} | {
        t[k]["id"] for ts in topics for t in ts for k in ("subfield", "field", "domain")
    }
    broader = {
        pair
        for ts in topics
        for t in ts
        for pair in (
            (t["id"], t["subfield"]["id"]),
            (t["subfield"]["id"], t["field"]["id"]),
            (t["field"]["id"], t["domain"]["id"]),
        )
    }
    stubs = set().union(*cited) - ids
    return {
        "Paper": len(latest) + len(stubs),
        "stubs": len(stubs),
        "CITES": sum(map(len, cited)),
        # every id but the key (the DOI: every sample work has one) is an alias
        "Alias": sum(
            sum(1 for k in ("openalex", "doi", "pmid", "mag") if w["ids"].get(k)) - 1 for w in latest.values()
        ),
        "Author": len(set().union(*authors)),
        "WROTE": sum(map(len, authors)),
        "AcmClass": len(classes),
        "IN_CLASS": sum(len({t["id"] for t in ts}) for ts in topics),
        "BROADER": len(broader),
    }


def _sizes(batch: Any) -> dict[str, int]:
    sizes = {name: len(frame) for name, frame in {**batch.nodes, **batch.rels}.items()}
    sizes["stubs"] = int(batch.nodes["Paper"]["stub"].sum())
    return sizes


def _check(batch: Any, expected: dict[str, int]) -> None:
    sizes = _sizes(batch)
    assert {k: sizes.get(k, 0) for k in expected} == expected
    assert sizes["ALIAS_OF"] == sizes["Alias"]
    assert batch.rejects == []


def test_a_single_work(samples: Path) -> None:
    batch, report = openalex.load_with_report(samples / SINGLE)
    # Hand-checked: 1 work, 45 references (none to itself), 9 authors, 3 topics in 2 fields.
    _check(batch, {"Paper": 46, "stubs": 45, "CITES": 45, "Alias": 3, "Author": 9, "WROTE": 9, "IN_CLASS": 3})
    _check(batch, _expected(_works(samples / SINGLE)))
    papers = batch.nodes["Paper"].set_index("id")
    work = papers.loc["doi:10.7717/peerj.4375"]
    assert work["title"].startswith("The state of OA: a large-scale analysis")
    assert work["year"] == 2018 and work["venue"] == "PeerJ" and work["doi"] == "10.7717/peerj.4375"
    assert work["abstract"].startswith("Despite growing interest in Open Access (OA) to scholarly literature,")
    assert not work["stub"] and work[ORIGIN_COLUMN] == "W2741809807.json:1"
    aliases = batch.rels["ALIAS_OF"]
    assert sorted(aliases["source"]) == ["mag:2741809807", "openalex:W2741809807", "pmid:29456894"]
    assert set(aliases["target"]) == {"doi:10.7717/peerj.4375"}
    assert set(batch.nodes["Alias"]["kind"]) == {"mag", "openalex", "pmid"}
    stubs = papers[papers["stub"].astype(bool)]
    assert stubs.index.str.fullmatch(r"openalex:W\d+").all() and stubs["title"].isna().all()
    wrote = batch.rels["WROTE"].set_index("source")
    assert wrote.loc["author:heather piwowar", "position"] == 1
    assert report.works == 1 and report.references == 45 and report.superseded == 0


def test_topics_are_a_taxonomy_of_their_own(samples: Path) -> None:
    batch = openalex.load(samples / SINGLE)
    classes = batch.nodes["AcmClass"].set_index("id")
    topic = classes.loc["openalex:topic/T10102"]
    assert (topic["code"], topic["scheme"], topic["level"]) == ("topic/T10102", "openalex", 4)
    assert topic["name"] == "scientometrics and bibliometrics research"
    assert classes.loc["openalex:subfield/1804", "level"] == 3 and classes.loc["openalex:field/18", "level"] == 2
    assert classes.loc["openalex:domain/2", ["name", "level"]].tolist() == ["Social Sciences", 1]
    broader = set(map(tuple, batch.rels["BROADER"][["source", "target"]].values.tolist()))
    assert {
        ("openalex:topic/T10102", "openalex:subfield/1804"),
        ("openalex:subfield/1804", "openalex:field/18"),
        ("openalex:field/18", "openalex:domain/2"),
    } <= broader
    in_class = batch.rels["IN_CLASS"].set_index("target")
    assert in_class.loc["openalex:topic/T10102", "score"] == pytest.approx(0.9969)
    assert set(in_class["source"]) == {"doi:10.7717/peerj.4375"} and not in_class["inferred"].any()


@pytest.mark.parametrize("name", [PAGE, CHUNK])
def test_api_pages(samples: Path, name: str) -> None:
    batch = openalex.load(samples / name)
    _check(batch, _expected(_works(samples / name)))
    full = batch.nodes["Paper"][~batch.nodes["Paper"]["stub"].astype(bool)]
    assert full[ORIGIN_COLUMN].tolist() == [f"{name}:record {n}" for n in range(1, len(full) + 1)]


def test_the_chunk_page_by_hand(samples: Path) -> None:
    # 49 works, all with a DOI; 1,063 references of which 945 distinct works outside the page.
    _check(
        openalex.load(samples / CHUNK),
        {"Paper": 49 + 945, "stubs": 945, "CITES": 1063, "Author": 140, "WROTE": 157, "AcmClass": 105, "BROADER": 101},
    )


def test_a_folder_keeps_the_latest_copy_of_a_work(samples: Path) -> None:
    batch, report = openalex.load_with_report(samples)
    works = [w for name in (SINGLE, PAGE, CHUNK) for w in _works(samples / name)]
    _check(batch, _expected(works))
    assert report.files == 3 and report.works == 52 and report.superseded == 1
    # W2741809807 is in the page (updated 2025-05-12) and alone (2025-06-11): the single work wins.
    papers = batch.nodes["Paper"].set_index("id")
    assert papers.loc["doi:10.7717/peerj.4375", ORIGIN_COLUMN] == "W2741809807.json:1"


def test_a_snapshot_partition_streams_the_same_tables(samples: Path, tmp_path: Path) -> None:
    works = _works(samples / CHUNK)
    partition = tmp_path / "updated_date=2025-05-01" / "part_000.gz"
    partition.parent.mkdir()
    with gzip.open(partition, "wt", encoding="utf-8") as out:
        out.writelines(json.dumps(work) + "\n" for work in works)
    from_page, from_partition = openalex.load(samples / CHUNK), openalex.load(partition)
    for name, frame in {**from_page.nodes, **from_page.rels}.items():
        other = from_partition.nodes.get(name, from_partition.rels.get(name))
        assert frame.drop(columns=ORIGIN_COLUMN).equals(other.drop(columns=ORIGIN_COLUMN)), name
    full = from_partition.nodes["Paper"][~from_partition.nodes["Paper"]["stub"].astype(bool)]
    assert full[ORIGIN_COLUMN].tolist() == [f"part_000.gz:{n}" for n in range(1, 50)]


def test_partitions_of_a_snapshot_folder_are_told_apart(samples: Path, tmp_path: Path) -> None:
    works = _works(samples / CHUNK)
    for day, part in (("2025-05-01", works[:20]), ("2025-06-01", works[20:])):
        folder = tmp_path / f"updated_date={day}"
        folder.mkdir()
        (folder / "part_000.gz").write_bytes(gzip.compress("".join(json.dumps(w) + "\n" for w in part).encode()))
    batch = openalex.load(tmp_path)
    _check(batch, _expected(works))
    origins = batch.nodes["Paper"][ORIGIN_COLUMN]
    assert "updated_date=2025-06-01/part_000.gz:1" in set(origins)
    assert origins[~batch.nodes["Paper"]["stub"].astype(bool)].is_unique


def test_ingesting_twice_gives_the_same_stats(samples: Path, empty_store: GraphStore) -> None:
    first = ingest(empty_store, openalex.load(samples))
    stats = empty_store.stats()
    second = ingest(empty_store, openalex.load(samples))
    assert empty_store.stats() == stats
    expected = _expected([w for name in (SINGLE, PAGE, CHUNK) for w in _works(samples / name)])
    assert stats["nodes"]["Paper"] == expected["Paper"] and stats["relationships"]["CITES"] == expected["CITES"]
    assert stats["nodes"]["AcmClass"] == expected["AcmClass"]
    assert first.rejected == second.rejected == 0 and first.records == first.stored
    assert all(c.created == 0 for c in second.tables.values())


def test_concepts_when_a_work_has_no_topics(samples: Path, tmp_path: Path) -> None:
    work = copy.deepcopy(_works(samples / SINGLE)[0])
    work["topics"], work["primary_topic"] = [], None
    (tmp_path / "w.json").write_text(json.dumps(work), encoding="utf-8")
    batch = openalex.load(tmp_path / "w.json")
    classes = batch.nodes["AcmClass"].set_index("id")
    assert len(classes) == len(work["concepts"]) and set(classes["scheme"]) == {"openalex-concepts"}
    assert classes.loc["openalex-concepts:C41008148", ["name", "level"]].tolist() == ["Computer science", 1]
    assert classes.loc["openalex-concepts:C2778805511", "level"] == 3  # OpenAlex level 2
    assert "BROADER" not in batch.rels
    in_class = batch.rels["IN_CLASS"].set_index("target")
    assert in_class.loc["openalex-concepts:C2778805511", "score"] == pytest.approx(0.68818974)


def test_an_arxiv_location_keys_the_work(samples: Path, tmp_path: Path) -> None:
    work = copy.deepcopy(_works(samples / SINGLE)[0])
    work["locations"].append({"landing_page_url": "http://arxiv.org/abs/1705.01523v2", "pdf_url": None})
    (tmp_path / "w.json").write_text(json.dumps(work), encoding="utf-8")
    papers = openalex.load(tmp_path / "w.json").nodes["Paper"].set_index("id")
    assert papers.loc["arxiv:1705.01523", ["doi", "arxiv_id"]].tolist() == ["10.7717/peerj.4375", "1705.01523"]


def test_two_works_claiming_one_doi_stay_two_papers(samples: Path, tmp_path: Path) -> None:
    work = _works(samples / SINGLE)[0]
    twin = {**work, "id": "https://openalex.org/W1", "ids": {"openalex": "https://openalex.org/W1", "doi": work["doi"]}}
    (tmp_path / "w.jsonl").write_text(json.dumps(work) + "\n" + json.dumps(twin) + "\n", encoding="utf-8")
    batch, report = openalex.load_with_report(tmp_path / "w.jsonl")
    full = batch.nodes["Paper"][~batch.nodes["Paper"]["stub"].astype(bool)]
    assert sorted(full["id"]) == ["doi:10.7717/peerj.4375", "openalex:W1"] and report.id_conflicts >= 1
    assert batch.nodes["Alias"]["id"].is_unique


def test_the_registry_kept_through_a_streamed_load_answers_as_the_first_pass_built_it(samples: Path) -> None:
    works = _works(samples / CHUNK) + _works(samples / SINGLE)
    arxiv = {**copy.deepcopy(works[0]), "id": "https://openalex.org/W7", "ids": {}, "doi": None}
    arxiv["locations"].append({"landing_page_url": "http://arxiv.org/abs/1705.01523v2"})
    twin = {**works[1], "id": "https://openalex.org/W8", "ids": {"doi": works[1]["doi"], "pmid": "12345/"}}
    live = openalex._Registry()
    for work in [*works, arxiv, twin]:
        live.read(int(work["id"].rsplit("W", 1)[1]), work)
    frozen = openalex._FrozenRegistry(live)
    assert (frozen.works_read, frozen.superseded, frozen.conflicts) == (len(works) + 2, live.superseded, 1)
    for number in live.current:
        wid = f"openalex:W{number}"
        assert frozen.ordinal(number) == live.ordinal(number)
        assert frozen.members(wid) == live.groups.members(wid) and frozen.canonical(wid) == live.groups.canonical(wid)
        for kind in ("doi", "arxiv", "pmid", "mag"):
            assert frozen.member(wid, kind) == live.groups.member(wid, kind)
    assert (
        frozen.canonical("openalex:W7") == "arxiv:1705.01523" and frozen.member("openalex:W8", "pmid") == "pmid:12345"
    )
    assert frozen.ordinal(3) is None and frozen.ordinal(10**12) is None


# Broken variants, each derived from the real files ---------------------------------------------


def _partition(samples: Path, tmp_path: Path, n: int = 5) -> tuple[Path, list[bytes]]:
    lines = [json.dumps(w).encode() for w in _works(samples / CHUNK)[:n]]
    return tmp_path / "part_000.jsonl", lines


def test_a_truncated_partition_rejects_its_last_line(samples: Path, tmp_path: Path) -> None:
    path, lines = _partition(samples, tmp_path)
    path.write_bytes(b"\n".join(lines[:-1]) + b"\n" + lines[-1][: len(lines[-1]) // 2])
    batch = openalex.load(path)
    assert len(batch.rejects) == 1
    reject = batch.rejects[0]
    assert (reject.table, reject.origin) == ("Paper", "part_000.jsonl:5")
    assert "not JSON" in reject.reason and "download or copy it again" in reject.reason
    assert (~batch.nodes["Paper"]["stub"].astype(bool)).sum() == 4


def test_a_truncated_gzip_partition_keeps_what_came_before(samples: Path, tmp_path: Path) -> None:
    _, lines = _partition(samples, tmp_path, n=49)
    data = gzip.compress(b"\n".join(lines) + b"\n")
    gz = tmp_path / "part_000.gz"
    gz.write_bytes(data[: len(data) * 3 // 4])
    batch = openalex.load(gz)
    reasons = [r for r in batch.rejects if "gzip stream is cut or damaged" in r.reason]
    assert len(reasons) == 1 and reasons[0].origin.startswith("part_000.gz:")
    assert "download or copy the file again" in reasons[0].reason
    assert 0 < (~batch.nodes["Paper"]["stub"].astype(bool)).sum() < 49


def test_a_truncated_page_is_one_reject_naming_the_file(samples: Path, tmp_path: Path) -> None:
    data = (samples / PAGE).read_bytes()
    (tmp_path / "page.json").write_bytes(data[: len(data) // 2])
    batch = openalex.load(tmp_path / "page.json")
    assert [(r.table, r.origin) for r in batch.rejects] == [("Paper", "page.json:1")]
    assert "truncated" in batch.rejects[0].reason and not batch.nodes


def test_a_line_that_is_not_utf8(samples: Path, tmp_path: Path) -> None:
    path, lines = _partition(samples, tmp_path)
    lines[2] = lines[2].replace(b'"title": "', b'"title": "\xff', 1)
    path.write_bytes(b"\n".join(lines) + b"\n")
    batch = openalex.load(path)
    assert [(r.origin, r.reason.split(" (")[0]) for r in batch.rejects] == [("part_000.jsonl:3", "line is not UTF-8")]
    assert "save the file as UTF-8" in batch.rejects[0].reason


def test_values_of_the_wrong_type(samples: Path, tmp_path: Path, empty_store: GraphStore) -> None:
    works = copy.deepcopy(_works(samples / CHUNK)[:4])
    works[0]["publication_year"] = "n.d."  # validation: Paper rejected with its origin
    works[1]["referenced_works"] = "W1, W2"  # loader: CITES reject, the work loads
    works[2]["abstract_inverted_index"] = {"Despite": "0"}  # loader: the work is rejected
    works[3]["authorships"] = [{"author": {"display_name": None}}]  # loader: Author reject
    path = tmp_path / "part.jsonl"
    path.write_text("".join(json.dumps(w) + "\n" for w in works), encoding="utf-8")
    batch = openalex.load(path)
    found = {(r.table, r.origin): r.reason for r in batch.rejects}
    assert "`referenced_works` is 'W1, W2', expected a list" in found[("CITES", "part.jsonl:2")]
    assert "`abstract_inverted_index` gives a word the positions '0'" in found[("Paper", "part.jsonl:3")]
    assert "authorship 1 has no author name" in found[("Author", "part.jsonl:4")]
    with pytest.raises(ValidationError) as failed:
        ingest(empty_store, batch)
    assert empty_store.stats()["nodes"]["Paper"] == 0  # nothing written
    report = ingest(empty_store, openalex.load(path), on_error="skip")
    year = [r for r in report.rejects if r.table == "Paper" and r.origin == "part.jsonl:1"]
    assert year and "`year` is 'n.d.', expected an integer" in year[0].reason
    assert "part.jsonl" in str(failed.value)


def test_a_value_that_is_no_work(tmp_path: Path) -> None:
    (tmp_path / "x.jsonl").write_text('{"meta": {}, "results": 5}\n[1]\n{"title": "no id"}\n', encoding="utf-8")
    batch = openalex.load(tmp_path / "x.jsonl")
    assert [(r.table, r.origin) for r in batch.rejects] == [
        ("Paper", "x.jsonl:1"),
        ("Paper", "x.jsonl:2 record 1"),
        ("Paper", "x.jsonl:3"),
    ]
    assert "is this an OpenAlex works export?" in batch.rejects[2].reason


def test_a_path_with_nothing_to_read(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="no input file"):
        openalex.load(tmp_path)
    with pytest.raises(IngestError, match="no input file"):  # at once, before a store is staged for the batches
        openalex.load_chunks(tmp_path)


def test_registered_outside_ingest_all() -> None:
    assert SOURCES["openalex"].load is openalex.load and not SOURCES["openalex"].bundled
    assert SOURCES["openalex"].chunks is openalex.load_chunks


def test_the_cli(samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "g.db")
    assert main(["--db", db, "ingest", "openalex", str(samples), "--rejects-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    expected = _expected([w for name in (SINGLE, PAGE, CHUNK) for w in _works(samples / name)])
    assert out.startswith("openalex: ") and "0 rejected" in out
    assert main(["--db", db, "stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["nodes"]["Paper"] == expected["Paper"] and stats["relationships"]["IN_CLASS"] == expected["IN_CLASS"]
    query = "MATCH (a:Alias {id: 'openalex:W2741809807'})-[:ALIAS_OF]->(p:Paper) RETURN p.id AS id"
    assert main(["--db", db, "cypher", query, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"id": "doi:10.7717/peerj.4375"}]


# Authors' ids and the work type ---------------------------------------------------------------------


def test_author_ids_and_the_work_type_are_stored(samples: Path, empty_store: GraphStore) -> None:
    work = _works(samples / SINGLE)[0]
    ingest(empty_store, openalex.load(samples / SINGLE))
    authors = pd.concat(empty_store.iter_nodes("Author", 100), ignore_index=True).set_index("id")
    for authorship in work["authorships"]:
        author = authorship["author"]
        row = authors.loc[author_key(author["display_name"])]
        assert row["openalex_id"] == _short(author["id"])  # A5048491430
        assert row["orcid"] == (_short(author["orcid"]) if author.get("orcid") else None)
    assert authors.loc["author:heather piwowar", ["orcid", "openalex_id"]].tolist() == [
        "0000-0003-1613-5981",
        "A5048491430",
    ]
    papers = pd.concat(empty_store.iter_nodes("Paper", 100), ignore_index=True).set_index("id")
    assert papers.loc["doi:10.7717/peerj.4375", "type"] == work["type"] == "article"
    assert papers.loc[papers["stub"].astype(bool), "type"].isna().all()


# Streamed loads (`citegraph ingest openalex`: batches, all written or none) -------------------------


def _all_rows(store: GraphStore) -> dict[str, list[tuple[object, ...]]]:
    """Every node (all properties) and edge of the tables an OpenAlex load writes, sorted."""
    out: dict[str, list[tuple[object, ...]]] = {}
    for label in ("Paper", "Alias", "Author", "AcmClass"):
        frame = pd.concat(store.iter_nodes(label, 10_000), ignore_index=True)
        out[label] = sorted(map(tuple, frame.astype(object).where(frame.notna(), None).to_numpy().tolist()))
    for rel in ("CITES", "ALIAS_OF", "WROTE", "IN_CLASS", "BROADER"):
        frame = store.read_edges(rel)
        out[rel] = sorted(map(tuple, frame.astype(object).where(frame.notna(), None).to_numpy().tolist()))
    return out


def test_a_streamed_load_gives_the_graph_of_one_batch(
    samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one, streamed = str(tmp_path / "one.db"), str(tmp_path / "streamed.db")
    from graph import StoreConfig, open_store

    with open_store(StoreConfig(db_path=Path(one))) as store:
        ingest(store, openalex.load(samples))
    # Batches of 9 of the 51 works: 6, with works cited batches before they are read (the chunk page's
    # 3rd work, in the first batch, cites its 21st, in the third) and a copy superseded (the single work, read
    # again, older, in the last file).
    assert len(list(openalex.load_chunks(samples, 9))) == 6
    assert main(["--db", streamed, "ingest", "openalex", str(samples), "--chunk-works", "9"]) == 0
    assert "0 rejected" in capsys.readouterr().out
    stats = []
    for db in (one, streamed):
        assert main(["--db", db, "stats", "--json"]) == 0
        stats.append(json.loads(capsys.readouterr().out))
    assert stats[0] == stats[1]
    with (
        open_store(StoreConfig(db_path=Path(one), read_only=True)) as a,
        open_store(StoreConfig(db_path=Path(streamed), read_only=True)) as b,
    ):
        expected, found = _all_rows(a), _all_rows(b)
    for name in expected:
        assert found[name] == expected[name], name
    assert not any(p.name.endswith(".building") for p in tmp_path.iterdir())


def _jsonl(path: Path, works: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(w) + "\n" for w in works), encoding="utf-8")
    return path


def test_a_work_cited_before_it_is_read_ends_as_one_paper(
    samples: Path, tmp_path: Path, empty_store: GraphStore
) -> None:
    works = copy.deepcopy(_works(samples / CHUNK)[:6])
    works[0]["referenced_works"] = [*works[0]["referenced_works"], works[5]["id"]]
    path = _jsonl(tmp_path / "part.jsonl", works)
    key = "doi:" + works[5]["doi"].removeprefix("https://doi.org/").lower()
    source = "doi:" + works[0]["doi"].removeprefix("https://doi.org/").lower()
    batches = list(openalex.load_chunks(path, 2))
    # No stub to upgrade later: the citation waits for the batch that reads the cited work.
    assert key not in set(batches[0].nodes["Paper"]["id"]) and key not in set(batches[0].rels["CITES"]["target"])
    last = batches[2]
    assert not last.nodes["Paper"].set_index("id").loc[key, "stub"]
    assert ((last.rels["CITES"]["source"] == source) & (last.rels["CITES"]["target"] == key)).sum() == 1
    report = ingest_stream(empty_store, "openalex", iter(batches))
    assert report.rejected == 0
    papers = pd.concat(empty_store.iter_nodes("Paper", 10_000), ignore_index=True).set_index("id")
    assert not papers.loc[key, "stub"] and papers.loc[key, "title"] == works[5]["title"]
    assert "openalex:" + _short(works[5]["id"]) not in papers.index
    cites = empty_store.read_edges("CITES")
    assert ((cites["source"] == source) & (cites["target"] == key)).sum() == 1


def test_a_newer_copy_read_in_a_later_batch_wins_whole(samples: Path, tmp_path: Path) -> None:
    works = copy.deepcopy(_works(samples / CHUNK)[:5])
    newer = copy.deepcopy(works[0])
    newer["updated_date"] = "2099-01-01T00:00:00"
    newer["title"] = "A corrected title"
    newer["authorships"] = newer["authorships"][:1]
    newer["referenced_works"] = newer["referenced_works"][:2]
    path = _jsonl(tmp_path / "part.jsonl", [*works, newer])
    from graph import StoreConfig, open_store

    rows = []
    for name, batches in (("one", [openalex.load(path)]), ("streamed", openalex.load_chunks(path, 2))):
        with open_store(StoreConfig(db_path=tmp_path / f"{name}.db")) as store:
            ingest_stream(store, "openalex", batches)
            rows.append(_all_rows(store))
    assert rows[0] == rows[1]
    key = "doi:" + works[0]["doi"].removeprefix("https://doi.org/").lower()
    assert [r[1] for r in rows[1]["Paper"] if r[0] == key] == ["A corrected title"]
    assert sum(1 for r in rows[1]["CITES"] if r[0] == key) == 2  # the older copy's references are gone
    assert sum(1 for r in rows[1]["WROTE"] if r[1] == key) == 1


def test_a_reject_in_a_late_batch_fails_the_whole_load(samples: Path, tmp_path: Path, store: GraphStore) -> None:
    lines = [json.dumps(w) for w in _works(samples / CHUNK)[:7]]
    lines[1], lines[6] = "{not json", '{"id": 5}'
    path = tmp_path / "part.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    stats = store.stats()
    with pytest.raises(ValidationError, match="2 record") as failed:
        ingest_stream(store, "openalex", openalex.load_chunks(path, 2), rejects_dir=tmp_path)
    assert [r.origin for r in failed.value.rejects] == ["part.jsonl:2", "part.jsonl:7"]
    assert store.stats() == stats  # batches 1-3 were written into the copy only
    assert len((tmp_path / "openalex.rejects.jsonl").read_text().splitlines()) == 2
    report = ingest_stream(store, "openalex", openalex.load_chunks(path, 2), on_error="skip")
    assert report.rejected == 2 and store.count_nodes("Paper") > stats["nodes"]["Paper"]
    full = pd.concat(store.iter_nodes("Paper", 10_000), ignore_index=True)
    assert int((full["dataset"] == "openalex").sum() - full["stub"].fillna(False).astype(bool).sum()) == 5


def test_recover_adds_the_new_columns_to_an_older_store(
    samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from dataclasses import replace

    from graph import StoreConfig, StoreUnavailableError, open_store
    from graph.embedded import EmbeddedStore
    from graph.schema import build_schema

    new = {"Paper": {"type"}, "Author": {"orcid", "openalex_id"}}
    current = build_schema()
    older = replace(
        current,
        nodes={
            label: replace(node, properties=tuple(p for p in node.properties if p.name not in new.get(label, ())))
            for label, node in current.nodes.items()
        },
    )
    db = tmp_path / "old.db"
    batch = openalex.load(samples / PAGE)
    for label, names in new.items():
        batch.nodes[label] = batch.nodes[label].drop(columns=list(names))
    with EmbeddedStore(db, older) as store:  # a store written before these properties existed
        store.ensure_schema()
        ingest(store, batch)
        stats = store.stats()
    with pytest.raises(StoreUnavailableError, match="recover"):
        open_store(StoreConfig(db_path=db, read_only=True))
    assert main(["--db", str(db), "recover"]) == 0
    capsys.readouterr()
    with open_store(StoreConfig(db_path=db, read_only=True)) as store:
        assert store.stats() == stats
        for label, names in new.items():
            assert names <= {row["name"] for row in store.query("table_info", identifiers={"TABLE": label})}
    assert main(["--db", str(db), "ingest", "openalex", str(samples / PAGE)]) == 0
    with open_store(StoreConfig(db_path=db, read_only=True)) as store:
        authors = pd.concat(store.iter_nodes("Author", 100), ignore_index=True).set_index("id")
        assert authors.loc["author:heather piwowar", "openalex_id"] == "A5048491430"
        assert store.stats() == stats
