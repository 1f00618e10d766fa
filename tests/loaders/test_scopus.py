"""Scopus importer: both real samples (both column sets, both reference formats), the failure variants,
resolution by fields and by title, idempotency, the CLI."""

from __future__ import annotations

import csv
import gzip
import itertools
import json
import re
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from api.cli.main import main
from graph import GraphStore, StoreConfig, ingest, open_store
from graph.errors import ValidationError
from graph.schema import ORIGIN_COLUMN
from loaders import SOURCES, scopus

pytestmark = pytest.mark.shared_data


@pytest.fixture(scope="module")
def samples(data_dir: Path) -> Path:
    path = data_dir / "formats" / "scopus"
    if not path.is_dir():
        pytest.skip(f"Scopus samples not found at {path}")
    return path


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as f:
        return list(csv.DictReader(f))


def expected_counts(path: Path) -> tuple[int, int, int, int]:
    """Records, references, author names (distinct per record) and records with a DOI, in plain Python.

    References: the current format (scopus_sample.csv) ends each one with "(YYYY)" before ";" or the end;
    the older one (scopus_testing.csv.scopus) separates them with "; ".
    """
    records = rows(path)
    references = names = 0
    for record in records:
        value = record["References"].strip()
        if re.search(r"\(\d{4}\)$", value):
            references += len(re.findall(r"\(\d{4}\)(?:\s*;|$)", value))
        elif value:
            references += len(value.split("; "))
        if record.get("Author full names"):
            names += len({n.strip() for n in record["Author full names"].split(";")})
        elif record["Authors"] and not record["Authors"].startswith("[No author"):
            names += len(set(record["Authors"].split(", ")))
    return len(records), references, names, sum(1 for r in records if r["DOI"])


# the same numbers, for the eye: 8 records, 381 references (not the 1,196 a naive "; " split gives:
# authors are "; "-separated too), 38 authors; 220 records (175 with references), 10,412 references,
# 2,015 authors (16 names repeated in two consortium papers), 160 DOIs
SAMPLES = {"scopus_sample.csv": (8, 381, 38, 8), "scopus_testing.csv.scopus": (220, 10412, 2015, 160)}


@pytest.mark.parametrize("name", list(SAMPLES))
def test_every_sample(samples: Path, name: str) -> None:
    assert expected_counts(samples / name) == SAMPLES[name]
    records, references, names, with_doi = SAMPLES[name]
    batch, report = scopus.load_with_report(samples / name)
    assert batch.rejects == [] and batch.source == f"scopus:{name}"
    papers = batch.nodes["Paper"]
    assert (~papers["stub"]).sum() == records and papers["id"].is_unique and set(papers["dataset"]) == {"scopus"}
    assert report.references == references
    cites = batch.rels["CITES"]
    assert len(cites) + report.repeated + report.self_citations + report.skipped == references
    assert len(batch.rels["WROTE"]) == names
    assert (batch.nodes["Alias"]["kind"] == "scopus").sum() == with_doi
    stubs = papers[papers["stub"]]
    assert set(stubs["id"]) == set(cites["target"]) - set(papers.loc[~papers["stub"], "id"])


def test_record_fields_current_columns(samples: Path) -> None:
    batch = scopus.load(samples / "scopus_sample.csv")
    papers = batch.nodes["Paper"].set_index("id")
    first = papers.loc["doi:10.1177/20552076261415846"]  # row 1, EID 2-s2.0-105030721984
    assert first["title"].startswith("Quantitative analysis of studies that use artificial intelligence on spinal")
    assert (first["year"], first["venue"], first["doi"], first[ORIGIN_COLUMN]) == (
        2026,
        "Digital Health",
        "10.1177/20552076261415846",
        "scopus_sample.csv:2",
    )
    wrote = batch.rels["WROTE"]
    assert wrote[wrote["target"] == "doi:10.1177/20552076261415846"]["source"].tolist() == [
        "author:fengyuan liu",  # "Liu, Fengyuan (60410297700)"
        "author:chunyun li",
        "author:yong liu",
        "author:yufei li",
    ]
    aliases = dict(zip(batch.rels["ALIAS_OF"]["source"], batch.rels["ALIAS_OF"]["target"]))
    assert aliases["scopus:2-s2.0-105030721984"] == "doi:10.1177/20552076261415846"
    # a stub of the current reference format keeps its parsed title and year
    stub = papers.loc["ref:theglobalepidemicoflowbackpainlancetrheumatol52023"]
    assert (stub["title"], stub["year"], stub["stub"]) == ("The global epidemic of low back pain", 2023, True)


def test_record_fields_older_columns(samples: Path) -> None:
    batch = scopus.load(samples / "scopus_testing.csv.scopus")
    papers = batch.nodes["Paper"].set_index("id")
    hallmarks = papers.loc["doi:10.1016/s0092-8674(00)81683-9"]  # EID 2-s2.0-0034614637
    assert hallmarks["title"] == "The hallmarks of cancer" and pd_isna(
        hallmarks["abstract"]
    )  # "[No abstract available]"
    wrote = batch.rels["WROTE"]
    assert wrote[wrote["target"] == "doi:10.1016/s0092-8674(00)81683-9"]["source"].tolist() == [
        "author:d hanahan",  # "Hanahan D." turned into "D. Hanahan"
        "author:r a weinberg",
    ]
    assert papers.loc["scopus:2-s2.0-0019365237", "title"] == "Reporting results of cancer treatment"  # no DOI


def pd_isna(value: object) -> bool:
    return value is None or value != value


def test_references_resolve_to_records(samples: Path) -> None:
    batch, report = scopus.load_with_report(samples / "scopus_testing.csv.scopus")
    cites = set(zip(batch.rels["CITES"]["source"], batch.rels["CITES"]["target"]))
    # "Hanahan, D., Weinberg, R.A., The hallmarks of cancer (2000) Cell, 100, pp. 57-70" in the references of
    # 2-s2.0-0037180757 (Coussens & Werb 2002): first author, year, volume and page of 2-s2.0-0034614637
    assert ("doi:10.1038/nature01322", "doi:10.1016/s0092-8674(00)81683-9") in cites
    # "Tamoxifen for early breast cancer: An overview of the randomised trials (1998) Lancet, 351, ..." has no
    # author: found by title (2-s2.0-0032537396, whose first author is Abe O.)
    tamoxifen = "doi:10.1016/s0140-6736(97)11423-4"
    assert sum(target == tamoxifen for _, target in cites) >= 3
    # Carmichael et al. 1987 "...: assessment of radiosensitivity" (pp. 943-946) in the row of line 174, which is
    # their "...: assessment of chemosensitivity testing" (pp. 936-942): a similar title, not the same paper
    carmichael = [r for r in batch.rels["CITES"].itertuples() if r.source == "scopus:2-s2.0-0023130372"]
    radiosensitivity = [r.target for r in carmichael if r.target.endswith("assessmentofradiosensitivity1987")]
    assert len(radiosensitivity) == 1 and radiosensitivity[0].startswith("ref:carmichaelj")
    assert report.self_citations == 0
    assert report.to_records["fields"] > 100 and report.to_records["title"] > 0 and report.to_records["doi"] > 0


@pytest.mark.parametrize("name", list(SAMPLES))
def test_ingesting_twice_gives_the_same_graph(samples: Path, empty_store: GraphStore, name: str) -> None:
    first = ingest(empty_store, scopus.load(samples / name))
    stats = empty_store.stats()
    second = ingest(empty_store, scopus.load(samples / name))
    assert empty_store.stats() == stats
    assert first.rejected == second.rejected == 0 and first.records == first.stored
    assert all(c.created == 0 for c in second.tables.values())


# --- failure variants, derived from the real samples ----------------------------------------------


def test_truncated(samples: Path, tmp_path: Path) -> None:
    data = (samples / "scopus_sample.csv").read_bytes()
    start = data.index(b"\n", data.index(b"2-s2.0-105015466930")) + 1  # the last row begins here (line 9)
    cut = tmp_path / "cut.csv"
    cut.write_bytes(data[: start + 4000])  # inside its quoted Abstract
    batch = scopus.load(cut)
    assert [(r.table, r.origin) for r in batch.rejects] == [("Paper", "cut.csv:9")]
    assert re.fullmatch(
        r"row has \d+ values, the header 45: the file ends inside this record .*", batch.rejects[0].reason
    )
    assert (~batch.nodes["Paper"]["stub"]).sum() == 7


def test_not_utf8(samples: Path, tmp_path: Path) -> None:
    data = (samples / "scopus_sample.csv").read_bytes()
    bad = tmp_path / "latin1.csv"
    bad.write_bytes(data.replace("Akdağ F.".encode(), "Akda\xf0 F.".encode("latin-1"), 1))  # row of line 5
    rejects = scopus.load(bad).rejects
    assert [(r.table, r.origin) for r in rejects] == [("Paper", "latin1.csv:5")]
    assert rejects[0].reason.startswith("`Authors` is not UTF-8 (byte 0xf0); save the export as UTF-8")


def test_wrong_type_is_rejected_by_validation(samples: Path, tmp_path: Path, empty_store: GraphStore) -> None:
    data = (samples / "scopus_sample.csv").read_text(encoding="utf-8")
    bad = tmp_path / "undated.csv"
    bad.write_text(data.replace('",2026,"Digital Health"', '","n.d.","Digital Health"', 1), encoding="utf-8")
    with pytest.raises(ValidationError) as caught:
        ingest(empty_store, scopus.load(bad))
    assert empty_store.stats()["nodes"]["Paper"] == 0
    reasons = {(r.table, r.origin): r.reason for r in caught.value.rejects}
    assert reasons[("Paper", "undated.csv:2")] == "`year` is 'n.d.', expected an integer"


def test_other_broken_rows_and_files(samples: Path, tmp_path: Path) -> None:
    records = rows(samples / "scopus_sample.csv")
    records[0]["DOI"] = records[0]["EID"] = ""
    folder = tmp_path / "exports"
    folder.mkdir()
    with (folder / "noid.csv").open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(records[0]), quoting=csv.QUOTE_ALL)
        writer.writeheader()
        writer.writerows(records)
    (folder / "other.csv").write_text("id,name\n1,x\n", encoding="utf-8")
    batch = scopus.load(folder)
    assert [(r.table, r.origin) for r in batch.rejects] == [("Paper", "noid.csv:2"), ("file", "other.csv:1")]
    assert batch.rejects[0].reason == "row has neither DOI nor EID; export with the EID column included"
    assert batch.rejects[1].reason.startswith("not a Scopus CSV export")
    # the same records again, gzipped (read first: names sort before noid.csv): noid.csv's 7 good rows repeat them
    (folder / "gzipped.scopus.gz").write_bytes(gzip.compress((samples / "scopus_sample.csv").read_bytes()))
    batch, report = scopus.load_with_report(folder)
    assert report.duplicate_records == 7 and (~batch.nodes["Paper"]["stub"]).sum() == 8


def test_cli_ingest(samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert not SOURCES["scopus"].bundled
    db = str(tmp_path / "graph.db")
    assert main(["--db", db, "ingest", "scopus", str(samples / "scopus_sample.csv")]) == 0
    out = capsys.readouterr().out
    assert re.search(r"scopus:scopus_sample\.csv: (\d+) records in = \1 stored \+ 0 rejected", out), out
    assert main(["--db", db, "stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["relationships"]["CITES"] == 381 and stats["relationships"]["WROTE"] == 38


def test_an_export_without_records_warns(samples: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    header_only = tmp_path / "none.csv"
    header_only.write_bytes((samples / "scopus_sample.csv").read_bytes().split(b"\n")[0] + b"\n")
    with caplog.at_level("WARNING", logger="loaders.scopus"):
        batch = scopus.load(header_only)
    assert batch.nodes == {} and batch.rejects == []
    assert f"{header_only}: no records in it, nothing loaded" in caplog.text


# --- done-when: co-citation counts by volume + first page, and one work across WoS and Scopus ----

# "…, Journal of Informetrics, 11, 4, pp. 959-975, (2017)" and "… (2017) Journal of Informetrics, 11 (4), pp. 959-975"
_SCOPUS_VOLUME_PAGE = re.compile(
    r"(?:\(\d{4}\) |, )([^,()]+), ([A-Za-z]?\d+)(?: \([^)]*\))?(?:, [\w-]+)?, pp?\. ?([A-Za-z]?\d+)"
)


def scopus_cited_lists(path: Path) -> list[list[str]]:
    """Each record's references, split as in :func:`expected_counts`."""
    lists = []
    for record in rows(path):
        value = record["References"].strip()
        if re.search(r"\(\d{4}\)$", value):
            lists.append([part for part in re.split(r"(?<=\(\d{4}\))\s*;\s*", value) if part.strip()])
        else:
            lists.append([part for part in value.split("; ") if part.strip()] if value else [])
    return lists


# A reference the regular expression cannot read, read by eye: no pages, but author, title, year, source and
# volume of Tiwari et al. 2004, CA Cancer J Clin 54:30-40, which the same records cite in full elsewhere.
READ_BY_HAND = {
    "Tiwari, R.C., Ghosh, K., Jemal, A., A new method of predicting US and state-level cancer mortality counts "
    "for the current calendar year (2004) CA Cancer J. Clin., 54. , 00-00": ("C", "54", "30"),
}


@pytest.mark.slow
def test_cocitation_counts_by_volume_and_page(
    samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both Scopus samples: the top 20 co-cited pairs and the 10 most cited works, counted by (first letter
    of the source, volume, first page) from the raw references, are citegraph's after ingest + co-citation."""
    from tests.loaders.test_wos import assert_top_counts_agree, stored_volume_page_counts

    lists = [cited for name in SAMPLES for cited in scopus_cited_lists(samples / name)]
    pairs: Counter[frozenset[tuple[str, ...]]] = Counter()
    cited: Counter[tuple[str, ...]] = Counter()
    for references in lists:
        keys = {
            (m.group(1).strip()[:1].upper(), m.group(2), m.group(3))
            for ref in references
            if (m := _SCOPUS_VOLUME_PAGE.search(ref))
        } | {READ_BY_HAND[ref] for ref in references if ref in READ_BY_HAND}
        cited.update(keys)
        pairs.update(frozenset(pair) for pair in itertools.combinations(sorted(keys), 2))
    db = tmp_path / "graph.db"
    assert main(["--db", str(db), "ingest", "scopus", str(samples)]) == 0
    assert main(["--db", str(db), "compute", "cocitation", "--device", "cpu"]) == 0
    capsys.readouterr()
    stored_pairs, stored_cited, shared, _ = stored_volume_page_counts(db, source_letter=True)
    # 41 keys of 9,900 works are shared by two stored works: mostly two journals of one initial (Cell 80:293 and
    # Cancer 80:293), some a variant left apart (text glued before the author: "author reply 513Farwell, W.R.")
    assert len(shared) <= 45
    assert_top_counts_agree(pairs, cited, stored_pairs, stored_cited, shared)


@pytest.mark.slow
def test_a_work_cited_in_wos_and_scopus_is_one_node(
    samples: Path, data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Aria & Cuccurullo 2017 (bibliometrix) is a record of wos_sample.txt and cited by four Scopus records
    in two formats, without a DOI: after both loads, in either order, every citation reaches the WoS record."""
    wos_sample = data_dir / "formats" / "wos" / "wos_sample.txt"
    aria = "doi:10.1016/j.joi.2017.08.007"
    for order in (("wos", "scopus"), ("scopus", "wos")):
        db = tmp_path / f"{order[0]}-first.db"
        for source in order:
            path = wos_sample if source == "wos" else samples / "scopus_sample.csv"
            assert main(["--db", str(db), "ingest", source, str(path)]) == 0
        store = open_store(StoreConfig(db_path=db, read_only=True))
        try:
            cites = store.read_edges("CITES")
            papers = pd.concat(store.iter_nodes("Paper", 10_000), ignore_index=True)
        finally:
            store.close()
        aria_like = papers[papers["label"].fillna("").str.startswith("Aria M, 2017")]
        assert len(aria_like) == 1, aria_like[["id", "label"]]
        node = aria_like.iloc[0]
        assert not node["stub"] and node["title"].lower().startswith("bibliometrix")
        scopus_citing = set(cites.loc[(cites["target"] == node["id"]) & (cites["dataset"] == "scopus"), "source"])
        assert len(scopus_citing) == 4, (order, scopus_citing)
        if order[0] == "wos":
            assert node["id"] == aria
    capsys.readouterr()
