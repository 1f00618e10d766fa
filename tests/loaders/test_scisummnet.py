"""ScisummNet 2019: tiny inline folders, then the real 978 reference papers; both CL-SciSumm sets in one store."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pandas as pd
import pytest

import graph
from graph.errors import IngestError
from graph.ingest import GraphBatch, ingest
from loaders import scisumm, scisummnet
from loaders.ids import author_key, canonical_paper_id
from loaders.sentences import citance_id, clean_text


def _entry(no: int, citing: str, text: str, authors: str = "Ann, Lee") -> dict[str, object]:
    return {
        "citance_No": no,
        "citing_paper_id": citing,
        "citing_paper_authority": 3,
        "citing_paper_authors": authors,
        "raw_text": text,
        "clean_text": text + ".",
        "keep_for_gold": 0,
    }


SHARED = "Taggers such as TnT (Brants, 2000) and C99 (Choi, 2000) are used"  # cites both RPs

RPS: dict[str, dict[str, object]] = {
    "A00-1031": {
        "xml": b'<PAPER>\n<S sid="0">TnT - A Tagger</S>\n<ABSTRACT>\n<S sid="1" ssid="1">TnT is fast.</S>\n'
        b'<S sid="2" ssid="2"></S>\n</ABSTRACT>\n<SECTION title="Model" number="1">\n'
        b'<S sid="3" ssid="1">Trigrams &amp; tags.</S>\n</SECTION>\n</PAPER>\n',
        "json": json.dumps(
            [
                _entry(1, "W00-1326", "Tagged using TnT (Brants, 2000) on Brown", "David, Martinez | Eneko, Agirre"),
                _entry(
                    2, "W06-3120", "It&apos;s TnT (Brants, 2000)", "Marta Ruiz, Costa-Juss&agrave; | James, P., Callan"
                ),
                _entry(3, "W06-1320", SHARED, "Ann, Lee"),
                _entry(4, "W06-1320", SHARED, "Ann, Lee"),  # the same sentence listed twice
                _entry(5, "A00-1031", "We (Brants, 2000) cite ourselves"),  # the RP itself
                _entry(6, "W07-1002", ""),  # no text
            ],
            indent=1,
        ).encode(),
        "ann": [
            (1, "['0','3']"),  # line 1: two silver links
            (2, "['1']"),  # line 2
            (3, "['2']"),  # line 3: sentence 2 is empty
            (99, "['1']"),  # line 4: no citance 99
            (4, "['50']"),  # line 5: no sentence 50
            (5, "['1']"),  # line 6: its citing sentence was rejected
        ],
        "abstract": "TnT is fast.\n\nIt is free.\n",
        "summary": "TnT - A Statistical Tagger\nTnT is a tagger.\nIt is fast.\n",
    },
    "A00-2004": {
        "xml": b'<PAPER>\n<S sid="0"></S>\n<S sid="1" ssid="1">Segment text.</S>\n</PAPER>\n',  # empty title
        "json": json.dumps([_entry(1, "W06-1320", SHARED), _entry(2, "A00-1031", "See Choi (2000)")]).encode(),
        "ann": [(1, "['1']")],
        "summary": "Advances In Linear Text Segmentation\nC99 segments text.\n",  # no abstract file
    },
    "J93-2005": {
        "xml": b'<PAPER><S sid="0">Structural Ambiguity</S><S sid="1">Nouns.</S></PAPER>',
        "json": b'[\n {"citance_No": 1, "citing_paper_id": "W07-1002",\n  "raw_text": }\n]',  # not JSON
        "ann": [(1, "['1']")],
    },
    "D07-1104": {
        "xml": b'<PAPER><S sid="0">Suffix Arrays</S><S sid="1">Fast lookup.</S></PAPER>',
        # Windows-1252 quotes inside an otherwise UTF-8 file; an entry that is not an object
        "json": b'[\n {"citance_No": 1, "citing_paper_id": "D08-1010", "citing_paper_authors": "Adam, Lopez",\n'
        b'  "raw_text": "\x93Suffix arrays\x94 (Lopez, 2007)", "clean_text": "x", "keep_for_gold": 0},\n 7\n]',
        "ann": [(1, "['1']"), (2, "['1']")],
    },
}


def _ann_line(rp: str, number: int, offsets: str) -> str:
    return (
        f"Citance Number: {number} | Reference Article:  {rp}.txt | Citing Article:  X.txt | "
        "Citation Marker Offset:  NA | Citation Marker: NA | Citation Offset: NA | "
        "Citation Text:  <S sid =  ssid = >...</S> | "
        f"Reference Offset:  {offsets} | Reference Text:  <S sid = 0 ssid = >...</S> | "
        "Discourse Facet:  NA | Annotator: Automatic"
    )


@pytest.fixture
def scisummnet_dir(tmp_path: Path) -> Path:
    root = tmp_path / "ScisummNet-2019"
    for rp, parts in RPS.items():
        for sub in ("Reference_XML", "annotation", "summary"):
            (root / rp / sub).mkdir(parents=True)
        (root / rp / "Reference_XML" / f"{rp}.xml").write_bytes(parts["xml"])  # type: ignore[arg-type]
        (root / rp / "citing_sentences.json").write_bytes(parts["json"])  # type: ignore[arg-type]
        lines = [_ann_line(rp, n, offsets) for n, offsets in parts["ann"]]  # type: ignore[attr-defined]
        (root / rp / "annotation" / f"{rp}.ann.txt").write_text("\n\n".join(lines) + "\n", encoding="utf-8")
        for kind in ("abstract", "summary"):
            if kind in parts:
                name = f"{rp}.abstract.txt" if kind == "abstract" else f"{rp}.scisummnet_human.txt"
                (root / rp / "summary" / name).write_text(str(parts[kind]), encoding="utf-8")
    return root


@pytest.fixture
def batch(scisummnet_dir: Path) -> GraphBatch:
    return scisummnet.load(scisummnet_dir)


def _pairs(frame: pd.DataFrame, *extra: str) -> set[tuple[object, ...]]:
    return set(frame[["source", "target", *extra]].itertuples(index=False, name=None))


def test_tiny_reference_papers(batch: GraphBatch) -> None:
    papers = batch.nodes["Paper"].set_index("id")
    assert list(papers.index[:4]) == ["A00-1031", "A00-2004", "D07-1104", "J93-2005"]
    tnt = papers.loc["A00-1031"]
    assert tnt.title == "TnT - A Tagger" and tnt.year == 2000 and tnt.dataset == "scisummnet" and not tnt.stub
    assert tnt.abstract == "TnT is fast.\nIt is free." and tnt.summary == "TnT is a tagger.\nIt is fast."
    c99 = papers.loc["A00-2004"]
    assert c99.title == "Advances In Linear Text Segmentation"  # sid 0 is empty: the summary's title line
    assert pd.isna(c99.abstract) and c99.summary == "C99 segments text."
    assert papers.loc["J93-2005", "year"] == 1993

    sentences = batch.nodes["Sentence"].set_index("id")
    rp_sentences = sentences[sentences["sid"].notna()]
    assert set(rp_sentences.index) == {
        "A00-1031#0", "A00-1031#1", "A00-1031#3", "A00-2004#1", "J93-2005#0", "J93-2005#1", "D07-1104#0", "D07-1104#1",
    }  # fmt: skip
    assert rp_sentences.loc["A00-1031#3", "text"] == "Trigrams & tags."
    assert rp_sentences.loc["A00-1031#3", "section"] == "Model"


def test_tiny_citing_sentences(batch: GraphBatch) -> None:
    papers = batch.nodes["Paper"].set_index("id")
    citing = papers.iloc[4:]
    assert set(citing.index) == {"W00-1326", "W06-3120", "W06-1320", "D08-1010"}  # A00-1031 is an RP already
    assert citing["title"].isna().all() and citing["dataset"].isna().all() and not citing["stub"].any()
    assert citing.loc["W06-1320", "year"] == 2006

    sentences = batch.nodes["Sentence"].set_index("id")
    shared = citance_id("W06-1320", SHARED)
    assert shared.startswith("W06-1320#c")
    assert sentences.loc[shared, "paper_id"] == "W06-1320" and pd.isna(sentences.loc[shared, "sid"])
    assert sentences.loc[citance_id("W06-3120", "It's TnT (Brants, 2000)"), "text"] == "It's TnT (Brants, 2000)"
    lopez = citance_id("D08-1010", "\u201cSuffix arrays\u201d (Lopez, 2007)")
    assert sentences.loc[lopez, "_origin"] == "D07-1104/citing_sentences.json:2"

    mentions = batch.rels["MENTIONS"]
    assert (shared, "A00-1031") in _pairs(mentions) and (shared, "A00-2004") in _pairs(mentions)
    assert len(mentions) == 6  # 3 distinct sentences for A00-1031, 2 for A00-2004, 1 for D07-1104
    cites = batch.rels["CITES"].set_index(["source", "target"])
    assert cites.loc[("W06-1320", "A00-1031"), "n_contexts"] == 1  # one sentence, listed twice
    assert cites.loc[("A00-1031", "A00-2004"), "n_contexts"] == 1  # an RP that cites another RP
    assert set(cites["dataset"]) == {"scisummnet"}
    assert _pairs(batch.rels["HAS_SENTENCE"]) >= {("W06-1320", shared), ("D08-1010", lopez)}


def test_tiny_authors_are_first_last(batch: GraphBatch) -> None:
    authors = batch.nodes["Author"].set_index("id")["name"]
    assert authors[author_key("David Martinez")] == "David Martinez"
    assert authors[author_key("Marta Ruiz Costa-Jussà")] == "Marta Ruiz Costa-Jussà"
    assert authors[author_key("James P. Callan")] == "James P. Callan"
    wrote = _pairs(batch.rels["WROTE"], "position")
    assert (author_key("Eneko Agirre"), "W00-1326", 2) in wrote
    assert (author_key("Ann Lee"), "W06-1320", 1) in wrote
    assert scisummnet.author_name("Mausam, ") == "Mausam"


def test_tiny_silver_links(batch: GraphBatch) -> None:
    links = batch.rels["LINKS_TO"]
    assert set(links["method"]) == {"silver"} and set(links["annotator"]) == {"Automatic"}
    first = citance_id("W00-1326", "Tagged using TnT (Brants, 2000) on Brown")
    assert _pairs(links) == {
        (first, "A00-1031#0"),
        (first, "A00-1031#3"),
        (citance_id("W06-3120", "It's TnT (Brants, 2000)"), "A00-1031#1"),
        (citance_id("W06-1320", SHARED), "A00-2004#1"),
        (citance_id("D08-1010", "\u201cSuffix arrays\u201d (Lopez, 2007)"), "D07-1104#1"),
    }


def test_tiny_rejects_name_file_line_and_reason(batch: GraphBatch) -> None:
    rejects = {r.origin: (r.table, r.reason) for r in batch.rejects}
    ann = "A00-1031/annotation/A00-1031.ann.txt"
    # json.dumps(indent=1): entry k of A00-1031 starts on line 2 + 9 * (k - 1); annotation lines are 1, 3, 5, ...
    assert set(rejects) == {
        "A00-1031/citing_sentences.json:38",  # entry 5: cites itself
        "A00-1031/citing_sentences.json:47",  # entry 6: no text
        f"{ann}:5",  # citance 3 -> empty sentence 2
        f"{ann}:7",  # no citance 99
        f"{ann}:9",  # no sentence 50
        f"{ann}:11",  # citance 5 was rejected
        "D07-1104/citing_sentences.json:4",  # `7` is not an object
        "D07-1104/annotation/D07-1104.ann.txt:3",  # no citance 2
        "J93-2005/citing_sentences.json:3",  # not JSON from line 3 on
        "J93-2005/annotation/J93-2005.ann.txt:1",  # so citance 1 is unknown
    }
    assert rejects["A00-1031/citing_sentences.json:38"][0] == "MENTIONS"
    assert "cannot cite itself" in rejects["A00-1031/citing_sentences.json:38"][1]
    assert "`raw_text` is ''" in rejects["A00-1031/citing_sentences.json:47"][1]
    assert "sentence 2 of A00-1031 is empty" in rejects[f"{ann}:5"][1]
    assert "99 is not in A00-1031/citing_sentences.json" in rejects[f"{ann}:7"][1]
    assert "sentence 50 of A00-1031 does not exist" in rejects[f"{ann}:9"][1]
    assert "was rejected at A00-1031/citing_sentences.json:38" in rejects[f"{ann}:11"][1]
    assert "JSON int" in rejects["D07-1104/citing_sentences.json:4"][1]
    assert rejects["J93-2005/citing_sentences.json:3"][0] == "Sentence"
    assert "not JSON" in rejects["J93-2005/citing_sentences.json:3"][1]


def test_text_field_clean_text(scisummnet_dir: Path) -> None:
    batch = scisummnet.load(scisummnet_dir, text_field="clean_text")
    texts = set(batch.nodes["Sentence"]["text"])
    assert "It's TnT (Brants, 2000)." in texts and "It's TnT (Brants, 2000)" not in texts
    with pytest.raises(IngestError, match="text_field"):
        scisummnet.load(scisummnet_dir, text_field="text")  # type: ignore[arg-type]


def test_tiny_batch_ingests_cleanly_twice(batch: GraphBatch, tmp_path: Path) -> None:
    with graph.open_store(graph.StoreConfig(db_path=tmp_path / "g.db")) as store:
        report = ingest(store, batch, on_error="skip")
        assert report.rejects[len(batch.rejects) :] == []
        first = store.stats()
        ingest(store, batch, on_error="skip")
        assert store.stats() == first


# ---------------------------------------------------------------------------------------------
# The real data


@pytest.fixture(scope="module")
def scisumm_root(data_dir: Path) -> Path:
    root = data_dir / "scisumm"
    if not (root / "ScisummNet-2019").is_dir() or not (root / "Training-Set-2018").is_dir():
        pytest.skip(f"{root} lacks ScisummNet-2019 or Training-Set-2018")
    return root


@pytest.fixture(scope="module")
def real(scisumm_root: Path) -> tuple[GraphBatch, float]:
    started = time.perf_counter()
    batch = scisummnet.load(scisumm_root / "ScisummNet-2019")
    return batch, time.perf_counter() - started


@pytest.mark.shared_data
def test_real_scisummnet(real: tuple[GraphBatch, float], scisumm_root: Path) -> None:
    batch, seconds = real
    papers, sentences = batch.nodes["Paper"], batch.nodes["Sentence"]
    mentions, links = batch.rels["MENTIONS"], batch.rels["LINKS_TO"]
    rps = papers[papers["dataset"] == "scisummnet"]
    print(
        f"\nscisummnet in {seconds:.1f}s: {len(rps)} RPs, {len(papers) - len(rps)} other citing papers, "
        f"{int(sentences['sid'].notna().sum())} RP sentences, {mentions['source'].nunique()} citing sentences, "
        f"{len(mentions)} MENTIONS, {len(links)} silver LINKS_TO, {len(batch.nodes['Author'])} authors, "
        f"{len(batch.rels['WROTE'])} WROTE, {len(batch.rejects)} rejects"
    )
    assert len(rps) == 978 and rps["title"].notna().all()
    # Four summary files hold only the title line; 21 abstract files are empty.
    assert rps["summary"].isna().sum() == 4 and rps["abstract"].isna().sum() == 21
    assert sentences.loc[sentences["sid"].notna(), "paper_id"].nunique() == 978

    # Every one of the 13,701 entries is a MENTIONS edge, a duplicate of one, or a reject.
    entries = 0
    expected: set[tuple[str, str]] = set()
    for path in sorted((scisumm_root / "ScisummNet-2019").glob("*/citing_sentences.json")):
        for entry in json.loads(path.read_bytes()):
            entries += 1
            if entry["raw_text"] and entry["citing_paper_id"] != path.parent.name:
                expected.add(
                    (
                        citance_id(canonical_paper_id(entry["citing_paper_id"]), clean_text(entry["raw_text"])),
                        canonical_paper_id(path.parent.name),
                    )
                )
    assert entries == 13_701
    assert _pairs(mentions) == expected
    from_json = [r for r in batch.rejects if "citing_sentences.json" in r.origin]
    assert len(from_json) == 3  # an empty raw_text (J93-2005) and two self-citations (D07-1104)
    assert len(mentions) == 13_690 and mentions["source"].nunique() == 13_008

    assert set(links["target"].str.split("#").str[0]) <= set(rps["id"]) and len(links) > 27_000
    assert set(links["source"]) <= set(mentions["source"])
    empty_targets = [r for r in batch.rejects if r.table == "LINKS_TO" and "is empty" in r.reason]
    assert len(empty_targets) == 101 and len(batch.rejects) == 107
    for label, frame in batch.nodes.items():
        assert not frame["id"].duplicated().any(), label


@pytest.mark.shared_data
def test_real_subset_ingests_twice_to_the_same_graph(scisumm_root: Path, tmp_path: Path) -> None:
    """Both loaders on a few real RP folders (linked into tmp_path): clean validation, idempotent ingest."""
    for name, rps in (("ScisummNet-2019", ["A00-1031", "J04-4002", "P03-1009"]), ("Training-Set-2018", ["C00-2123"])):
        (tmp_path / name).mkdir()
        for rp in rps:
            (tmp_path / name / rp).symlink_to(scisumm_root / name / rp, target_is_directory=True)
    batches = [scisumm.load(tmp_path / "Training-Set-2018"), scisummnet.load(tmp_path / "ScisummNet-2019")]
    with graph.open_store(graph.StoreConfig(db_path=tmp_path / "g.db")) as store:
        for batch in batches:
            report = ingest(store, batch, on_error="skip")
            assert report.rejects[len(batch.rejects) :] == []
        first = store.stats()
        for batch in batches:
            ingest(store, batch, on_error="skip")
        assert store.stats() == first
    # J04-4002 is both a citing paper of C00-2123 (2018) and a ScisummNet RP: two texts, no clash.
    assert first["nodes"]["Sentence"] == sum(len(b.nodes["Sentence"]) for b in batches)


@pytest.mark.shared_data
@pytest.mark.slow
def test_real_both_sets_ingest_twice_to_the_same_graph(
    real: tuple[GraphBatch, float], scisumm_root: Path, tmp_path: Path
) -> None:
    """The full sets (~20 s): zero validation rejects, and a second ingest changes nothing."""
    batches = [scisumm.load(scisumm_root / "Training-Set-2018"), real[0]]
    with graph.open_store(graph.StoreConfig(db_path=tmp_path / "g.db")) as store:
        for batch in batches:
            report = ingest(store, batch, on_error="skip")
            validation = report.rejects[len(batch.rejects) :]
            assert validation == [], validation[:5]
        first = store.stats()
        print(f"\nstore after both sets: {first}")
        for batch in batches:
            ingest(store, batch, on_error="skip")
        assert store.stats() == first
    assert first["nodes"]["Sentence"] == sum(len(b.nodes["Sentence"]) for b in batches)
    assert first["relationships"]["LINKS_TO"] == sum(len(b.rels["LINKS_TO"]) for b in batches)
