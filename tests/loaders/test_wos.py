"""Web of Science importer: every real sample, the failure variants, idempotency, the CLI, and the
co-citation network of wos_sample.txt checked against bibliometrix's own counting."""

from __future__ import annotations

import csv
import gzip
import itertools
import json
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import networkx as nx
import pandas as pd
import pytest

from api.cli.main import main
from graph import GraphStore, StoreConfig, ingest, open_store
from graph.errors import ValidationError
from graph.schema import ORIGIN_COLUMN
from loaders import SOURCES, wos

pytestmark = pytest.mark.shared_data


@pytest.fixture(scope="module")
def samples(data_dir: Path) -> Path:
    path = data_dir / "formats" / "wos"
    if not path.is_dir():
        pytest.skip(f"Web of Science samples not found at {path}")
    return path


# Hand-derived from the files (no loader involved):
#   records      grep -c '^PT ' FILE (plain text); data rows (tab-delimited)
#   references   CR lines, awk '/^[A-Z][A-Z0-9] /{t=substr($0,1,2)} /^   /{if(t=="CR")n++; next} /^CR /{n++} END{print n}';
#                tab-delimited: the "; "-separated items of the CR column, summed (= the sum of NR: 3791)
#   WROTE        AF lines / AF items (no name repeats within a record)
#   with DI      grep -c '^DI ' / non-empty DI column: their UT becomes an Alias
SAMPLES = {
    "wos_sample.txt": (8, 252, 25, 8),  # "FN Clarivate Analytics Web of Science", no byte-order mark
    "savedrecs.txt": (32, 958, 66, 17),  # "FN Thomson Reuters Web of Science™" after a UTF-8 BOM
    "wos.txt": (125, 3791, 490, 108),  # tab-delimited, BOM, CRLF, a tab at the end of each row
    "wos_2026_04_02_4071.txt": (71, 0, 387, 37),  # tab-delimited, the CR column empty in every row
}


@pytest.mark.parametrize("name", list(SAMPLES))
def test_every_sample(samples: Path, name: str) -> None:
    records, references, wrote, with_doi = SAMPLES[name]
    batch, report = wos.load_with_report(samples / name)
    assert batch.rejects == [] and batch.source == f"wos:{name}"
    papers = batch.nodes["Paper"]
    assert (~papers["stub"]).sum() == records and set(papers["dataset"]) == {"wos"}
    assert papers["id"].is_unique
    assert report.references == references
    cites = batch.rels.get("CITES", pd.DataFrame(columns=["source", "target"]))
    assert len(cites) + report.repeated + report.self_citations + report.skipped == references
    assert report.skipped == report.self_citations == 0
    assert len(batch.rels["WROTE"]) == wrote
    aliases = batch.nodes["Alias"]
    assert (aliases["kind"] == "wos").sum() == with_doi
    stubs = set(papers.loc[papers["stub"], "id"])
    assert stubs == set(cites["target"]) - set(papers.loc[~papers["stub"], "id"])  # a stub is a cited work
    assert set(cites["source"]) <= set(papers.loc[~papers["stub"], "id"])
    if references == 0:
        assert "CITES" not in batch.rels and not stubs


def test_bibtex_export(data_dir: Path, tmp_path: Path) -> None:
    """Web of Science's BibTeX export (formats/bibtex_ris/wos_m.bib): the fields of the plain-text tags, one
    cited reference per line of Cited-References with its full stop dropped and {[} read as [. Hand-derived:
    29 entries (grep -c '^Unique-ID'), 26 with DOI, 1053 lines in Cited-References fields (1054 by
    Number-of-Cited-References: one record counts one reference more than it lists), 81 names in Author."""
    sample = data_dir / "formats" / "bibtex_ris" / "wos_m.bib"
    if not sample.is_file():
        pytest.skip(f"{sample} not found")
    batch, report = wos.load_with_report(sample)
    assert batch.rejects == [] and report.references == 1053 and report.skipped == 0
    papers = batch.nodes["Paper"].set_index("id")
    records = papers[~papers["stub"]]
    assert len(records) == 29 and len(batch.rels["WROTE"]) == 81
    assert (batch.nodes["Alias"]["kind"] == "wos").sum() == 26
    first = records.loc["doi:10.1016/j.amc.2010.04.009"]
    assert first["title"].startswith("Estimation of missing judgments in AHP pairwise matrices using a neural network")
    assert (first["year"], first["volume"], first["first_page"]) == (2010, "216", "2959")
    assert first["venue"] == "APPLIED MATHEMATICS AND COMPUTATION"
    cited = set(batch.rels["CITES"].query("source == 'doi:10.1016/j.amc.2010.04.009'")["target"])
    assert len(cited) == 18 and "ref:anonymous2005neuralnetworkscomp" in cited  # {[}Anonymous], 2005, ...
    assert "doi:10.1016/s0898-1221(03)90240-9" in cited  # DOI {[}a, b]: the first of the list
    assert papers.loc["doi:10.1007/0-306-48332-7_123", "label"] == "Chen Q, 2001, Ency Optimization p567"  # \\_
    assert papers.loc["ref:anonymous2005neuralnetworkscomp", "reference"] == "[Anonymous], 2005, NEURAL NETWORKS COMP"
    # found in a folder next to the other formats, and told apart by its content
    (tmp_path / "a.bib").write_bytes(sample.read_bytes())
    assert len(wos.load(tmp_path).nodes["Paper"]) == len(papers)


def test_both_header_variants(samples: Path) -> None:
    assert (samples / "wos_sample.txt").read_bytes().startswith(b"FN Clarivate Analytics Web of Science\nVR 1.0\n")
    assert (samples / "savedrecs.txt").read_bytes().startswith(b"\xef\xbb\xbfFN Thomson Reuters Web of Science")
    for name in ("wos_sample.txt", "savedrecs.txt"):
        papers = wos.load(samples / name).nodes["Paper"]
        assert papers.loc[~papers["stub"], ORIGIN_COLUMN].iloc[0] == f"{name}:3"  # the first PT line


def test_record_fields(samples: Path) -> None:
    papers = wos.load(samples / "wos_sample.txt").nodes["Paper"].set_index("id")
    aria = papers.loc["doi:10.1016/j.joi.2017.08.007"]  # wos_sample.txt:177
    assert aria["title"] == "bibliometrix: An R-tool for comprehensive science mapping analysis"
    assert (aria["year"], aria["venue"], aria["doi"], aria["stub"]) == (
        2017,
        "JOURNAL OF INFORMETRICS",
        "10.1016/j.joi.2017.08.007",
        False,
    )
    assert aria["abstract"].startswith("The use of bibliometrics is gradually extending to all disciplines.")
    assert aria[ORIGIN_COLUMN] == "wos_sample.txt:177"
    # TI continued on a second line, joined with a space (wos_sample.txt:6-7)
    assert papers.loc["doi:10.1080/00396265.2026.2635057", "title"] == (
        "Mapping the application of Geographic Information System (GIS) in real estate: a bibliometric "
        "analysis using bibliometrix and QGIS"
    )
    batch = wos.load(samples / "wos_sample.txt")
    wrote = batch.rels["WROTE"]
    assert wrote[wrote["target"] == "doi:10.1016/j.joi.2017.08.007"][["source", "position"]].values.tolist() == [
        ["author:massimo aria", 1],  # AF "Aria, Massimo"
        ["author:corrado cuccurullo", 2],
    ]
    aliases = dict(zip(batch.rels["ALIAS_OF"]["source"], batch.rels["ALIAS_OF"]["target"]))
    assert aliases["wos:000418020600003"] == "doi:10.1016/j.joi.2017.08.007"
    assert aliases["ref:ariam2017jinformetr"] == "doi:10.1016/j.joi.2017.08.007"
    # a cited work with a DOI is a stub keyed by it, its reference key an alias; without, keyed by the key
    stubs = papers[papers["stub"]]
    assert stubs.loc["doi:10.1108/eb026133", "year"] == 1948  # VICKERY BC, 1948, J DOC, V4, P198, DOI 10.1108/eb026133
    assert aliases["ref:vickerybc1948jdoc"] == "doi:10.1108/eb026133"
    assert "ref:amponsahm2024intjmultidisciplin" in stubs.index  # Amponsah M., 2024, INT J MULTIDISCIPLIN, V6
    assert pd.isna(stubs.loc["ref:amponsahm2024intjmultidisciplin", "doi"])
    # a stub keeps the first reference string naming it: the text it is searched by (wos_sample.txt lines 17, 60)
    assert (
        stubs.loc["ref:amponsahm2024intjmultidisciplin", "reference"] == "Amponsah M., 2024, INT J MULTIDISCIPLIN, V6"
    )
    assert stubs.loc["doi:10.1108/eb026133", "reference"] == "VICKERY BC, 1948, J DOC, V4, P198, DOI 10.1108/eb026133"
    assert papers.loc[~papers["stub"], "reference"].isna().all()


def test_tab_delimited_fields(samples: Path) -> None:
    papers = wos.load(samples / "wos.txt").nodes["Paper"].set_index("id")
    first = papers.loc["doi:10.1016/j.future.2017.04.031"]  # row 2: UT WOS:000413060400006
    assert first["year"] == 2018 and first["venue"].startswith("FUTURE GENERATION COMPUTER SYSTEMS")
    assert first[ORIGIN_COLUMN] == "wos.txt:2"
    no_doi = papers[papers.index.str.startswith("wos:")]
    assert len(no_doi) == 125 - 108 and not no_doi["stub"].any()  # keyed by UT when DI is empty


def test_references_resolve_to_records_by_fields(samples: Path) -> None:
    """savedrecs.txt: ROOSEN G 1974 has no DOI; two records cite it as "ROOSEN G, 1974, CAN J PHYS, V52, P1903"
    (lines 96 and 1605), and it is the record at line 1160 (AU ROOSEN, G; PY 1974; VL 52; BP 1903)."""
    batch, report = wos.load_with_report(samples / "savedrecs.txt")
    cites = set(zip(batch.rels["CITES"]["source"], batch.rels["CITES"]["target"]))
    roosen = "wos:A1974U757700009"
    assert ("doi:10.1016/0370-1573(79)90074-7", roosen) in cites  # the record at line 3 (BREVIK 1979)
    assert ("wos:A1975BB38100001", roosen) in cites  # the record at line 1532 (COSTADEBEAUREGARD 1975)
    aliases = dict(zip(batch.rels["ALIAS_OF"]["source"], batch.rels["ALIAS_OF"]["target"]))
    assert aliases["ref:rooseng1974canjphys"] == roosen
    assert roosen not in set(batch.nodes["Paper"].loc[batch.nodes["Paper"]["stub"], "id"])
    assert report.to_records["fields"] >= 2 and report.to_records["doi"] > 0


@pytest.mark.parametrize("name", ["wos_sample.txt", "wos.txt"])
def test_ingesting_twice_gives_the_same_graph(samples: Path, empty_store: GraphStore, name: str) -> None:
    first = ingest(empty_store, wos.load(samples / name))
    stats = empty_store.stats()
    second = ingest(empty_store, wos.load(samples / name))
    assert empty_store.stats() == stats
    assert stats["nodes"]["Paper"] == first.tables["Paper"].records
    assert first.rejected == second.rejected == 0 and first.records == first.stored
    assert all(c.created == 0 for c in second.tables.values())


# --- failure variants, derived from the real samples ----------------------------------------------


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")


def test_truncated_plain_text(samples: Path, tmp_path: Path) -> None:
    cut = tmp_path / "cut.txt"
    cut.write_bytes(b"\n".join(_lines(samples / "wos_sample.txt")[:440]))  # ends inside the record of line 423
    batch = wos.load(cut)
    assert [(r.table, r.origin) for r in batch.rejects] == [("Paper", "cut.txt:423")]
    assert "no ER line" in batch.rejects[0].reason and "export the records again" in batch.rejects[0].reason
    assert (~batch.nodes["Paper"]["stub"]).sum() == 5  # the records of lines 3, 94, 177, 297, 365


def test_truncated_tab_delimited(samples: Path, tmp_path: Path) -> None:
    data = (samples / "wos.txt").read_bytes()
    cut = tmp_path / "cut.txt"
    cut.write_bytes(data[: data.rindex(b"\r\n", 0, len(data) - 2) + 2 + 300])  # 300 bytes of the last row
    batch = wos.load(cut)
    assert [(r.table, r.origin) for r in batch.rejects] == [("Paper", "cut.txt:126")]
    assert re.fullmatch(r"row has \d+ fields, the header 66: the file ends inside this row .*", batch.rejects[0].reason)
    assert (~batch.nodes["Paper"]["stub"]).sum() == 124


def test_not_utf8(samples: Path, tmp_path: Path) -> None:
    lines = _lines(samples / "wos_sample.txt")
    assert lines[25].decode().strip().startswith("Çelik KT, 2023")  # line 26, in the record of line 3
    lines[25] = lines[25].decode().encode("latin-1")
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"\n".join(lines))
    batch = wos.load(bad)
    assert [(r.table, r.origin, r.reason) for r in batch.rejects] == [
        (
            "Paper",
            "latin1.txt:3",
            "record: line 26 is not UTF-8 (byte 0xc7 at column 4); save the export as UTF-8 and check the line",
        )
    ]
    rows = _lines(samples / "wos.txt")
    rows[1] = rows[1].replace(b"Tonyali", "Tonyal\xfd".encode("latin-1"))
    bad = tmp_path / "latin1_tab.txt"
    bad.write_bytes(b"\n".join(rows))
    rejects = wos.load(bad).rejects
    assert [(r.table, r.origin) for r in rejects] == [("Paper", "latin1_tab.txt:2")]
    assert rejects[0].reason.startswith("row is not UTF-8 (byte 0xfd at column")


def test_wrong_type_is_rejected_by_validation(samples: Path, tmp_path: Path, empty_store: GraphStore) -> None:
    text = (samples / "wos_sample.txt").read_text(encoding="utf-8")
    bad = tmp_path / "undated.txt"
    bad.write_text(text.replace("\nPY 2017\n", "\nPY n.d.\n", 1), encoding="utf-8")  # the record of line 177
    with pytest.raises(ValidationError) as caught:
        ingest(empty_store, wos.load(bad))
    assert empty_store.stats()["nodes"]["Paper"] == 0  # nothing written
    first = {(r.table, r.origin): r.reason for r in caught.value.rejects}
    assert first[("Paper", "undated.txt:177")] == "`year` is 'n.d.', expected an integer"
    report = ingest(empty_store, wos.load(bad), on_error="skip")
    assert report.records == report.stored + report.rejected
    assert empty_store.count_nodes("Paper") == 237 - 1


def test_other_broken_records(samples: Path, tmp_path: Path) -> None:
    text = (samples / "wos_sample.txt").read_text(encoding="utf-8")
    text = text.replace("DI 10.1016/j.joi.2017.08.007\n", "").replace("UT WOS:000418020600003\n", "")
    text = text.replace("ER\nPT J\nAU Jalal", "ER\nstray text\nPT J\nAU Jalal", 1)  # two lines up: line 295
    bad = tmp_path / "broken.txt"
    bad.write_text(text, encoding="utf-8")
    rejects = {(r.table, r.origin): r.reason for r in wos.load(bad).rejects}
    assert rejects == {
        ("Paper", "broken.txt:177"): "record has neither UT (accession number) nor DI (DOI); "
        "export the 'Full Record', which includes UT",
        ("line", "broken.txt:295"): "line 295 'stray text' is neither a field (a two-letter tag and a space) "
        "nor a continuation (three spaces)",
    }


def test_folder_glob_gzip_and_other_files(samples: Path, tmp_path: Path) -> None:
    folder = tmp_path / "exports"
    folder.mkdir()
    (folder / "part1.txt.gz").write_bytes(gzip.compress((samples / "wos_sample.txt").read_bytes()))
    (folder / "notes.txt").write_text("my search: TS=bibliometrix\n", encoding="utf-8")
    batch = wos.load(folder)
    assert [(r.table, r.origin) for r in batch.rejects] == [("file", "notes.txt:1")]
    assert batch.rejects[0].reason.startswith("not a Web of Science export (it starts with 'my search")
    plain = wos.load(samples / "wos_sample.txt")
    assert batch.nodes["Paper"].drop(columns=ORIGIN_COLUMN).equals(plain.nodes["Paper"].drop(columns=ORIGIN_COLUMN))
    globbed = wos.load(Path(str(folder / "*.gz")))
    assert globbed.rejects == [] and len(globbed.rels["CITES"]) == 252


def test_overlapping_exports(samples: Path, tmp_path: Path, empty_store: GraphStore) -> None:
    folder = tmp_path / "exports"
    folder.mkdir()
    for name in ("a.txt", "b.txt"):
        (folder / name).write_bytes((samples / "wos_sample.txt").read_bytes())
    batch, report = wos.load_with_report(folder)
    assert report.duplicate_records == 8 and {r.origin.split(":")[0] for r in batch.rejects} == {"b.txt"}
    assert batch.rejects[0].reason.startswith(
        "record repeats doi:10.1080/00396265.2026.2635057 of the record at a.txt:3"
    )
    ingest(empty_store, batch, on_error="skip")
    assert empty_store.count_nodes("Paper") == 237 and empty_store.count_rels("CITES") == 252


# --- the CLI, and the co-citation network against bibliometrix -----------------------------------


def test_cli_ingest(samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert not SOURCES["wos"].bundled
    db = str(tmp_path / "graph.db")
    assert main(["--db", db, "ingest", "wos", str(samples / "savedrecs.txt")]) == 0
    out = capsys.readouterr().out
    assert re.search(r"wos:savedrecs\.txt: (\d+) records in = \1 stored \+ 0 rejected", out), out
    assert main(["--db", db, "stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["relationships"]["WROTE"] == 66 and stats["relationships"]["CITES"] > 0


def _upper(text: str) -> str:
    return "".join(up if len(up := ch.upper()) == 1 else ch for ch in text)  # R's toupper leaves ß


def bibliometrix_cr_labels(cr_lines: list[str]) -> set[str]:
    """What bibliometrix makes of one record's CR field, written from its R code (convert2df(dbsource="wos",
    format="plaintext") then cocMatrix(Field="CR"), binary): isi2df joins the CR lines with ";" and
    upper-cases; convert2df removes "[," "[" "]" " .. " " . ", squeezes spaces, trims the start and turns
    ";;" into ";"; cocMatrix turns "DOI;" into "DOI ", splits at ";", trims, drops items of 10 characters
    or fewer, cuts after the first ")", turns "," and ";" into spaces, cuts before the first "V<digit>" and
    then before "DOI ", squeezes spaces. R's \\s is ASCII whitespace here (not the no-break space)."""
    field = _upper(";".join(cr_lines))
    field = re.sub(r"\[,|\[|\]| \.\. | \. ", "", field)
    field = re.sub(r"[ \t\n\r\f\v]+", " ", field).lstrip().replace(";;", ";").replace("DOI;", "DOI ")
    labels = set()
    for item in field.split(";"):
        item = item.lstrip()
        if len(item) <= 10:
            continue
        item = re.sub(r"\).*", ")", item).replace(",", " ").replace(";", " ")
        if volume := re.search("V[0-9]", item):
            item = item[: volume.start()]
        if (doi := item.find("DOI ")) >= 0:
            item = item[:doi]
        labels.add(re.sub(r"[ \t\n\r\f\v]+", " ", item))
    return labels - {""}


def cr_fields(path: Path) -> list[list[str]]:
    """The CR lines of each record of a plain-text export (tag in the first two columns, continuations indented)."""
    records: list[list[str]] = []
    tag = None
    for line in path.read_text(encoding="utf-8-sig").splitlines():
        if line.startswith("PT "):
            records.append([])
        if line[:2].strip():
            tag = line[:2]
        if tag == "CR" and records and len(line) > 3:
            records[-1].append(line[3:])
    return records


def test_cocitation_equals_bibliometrix(samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sample = samples / "wos_sample.txt"
    labels = [bibliometrix_cr_labels(cr) for cr in cr_fields(sample)]
    assert len(labels) == 8 and sum(len(cr) for cr in cr_fields(sample)) == 252
    # bibliometrix: co-citation count of two labels = records whose CR lists hold both
    expected_bx = Counter(pair for found in labels for pair in itertools.combinations(sorted(found), 2))
    cited_by = Counter(label for found in labels for label in found)  # the diagonal: records citing a label

    # our reference key only folds case, spacing and punctuation: on this file no two labels fold together,
    # so the stored counts must be bibliometrix's, pair for pair
    def fold(label: str) -> str:
        return re.sub(r"[\W_]+", "", label.lower())

    every_label = set(cited_by)
    assert len({fold(label) for label in every_label}) == len(every_label) == 230
    expected = {frozenset((fold(a), fold(b))): n for (a, b), n in expected_bx.items()}
    assert len(expected) == 5516

    db = str(tmp_path / "graph.db")
    assert main(["--db", db, "ingest", "wos", str(sample)]) == 0
    assert main(["--db", db, "compute", "cocitation", "--device", "cpu"]) == 0
    out = tmp_path / "cocitation.graphml"
    assert main(["--db", db, "export", "cocitation", str(out), "--format", "graphml", "--measure", "count"]) == 0
    capsys.readouterr()

    store = open_store(StoreConfig(db_path=Path(db), read_only=True))
    try:
        co_cited = store.read_edges("CO_CITED")
        alias_of = store.read_edges("ALIAS_OF")
        papers = pd.concat(store.iter_nodes("Paper", 10_000), ignore_index=True)
    finally:
        store.close()
    # every stored paper -> the reference keys naming it (its own id for ref: stubs, else its ref: aliases;
    # field keys "ref:<initials>-v<volume>-p<page>" are no reference keys)
    keys: dict[str, set[str]] = {}
    for alias, paper in zip(alias_of["source"], alias_of["target"]):
        if alias.startswith("ref:") and "-" not in alias:
            keys.setdefault(paper, set()).add(alias.removeprefix("ref:"))
    for paper in papers["id"]:
        if paper.startswith("ref:"):
            keys.setdefault(paper, set()).add(paper.removeprefix("ref:").split("-")[0])
    cited = set(co_cited["source"]) | set(co_cited["target"])
    assert all(len(keys[paper]) == 1 for paper in cited)  # one node per label: a bijection on this file
    key_of = {paper: next(iter(found)) for paper, found in keys.items()}
    stored = {
        frozenset((key_of[s], key_of[t])): int(n)
        for s, t, n in zip(co_cited["source"], co_cited["target"], co_cited["count"])
    }
    assert stored == expected
    n_cited = {p: int(n) for p, n in zip(papers["id"], papers["n_cited"]) if pd.notna(n) and n > 0}
    assert all(len(keys[paper]) == 1 for paper in n_cited)  # the comment at line 365 cites one work, co-cited with none
    assert {key_of[p]: n for p, n in n_cited.items()} == {fold(label): n for label, n in cited_by.items()}

    # Hand-checked pairs, read off the file by eye:
    #  Aria M 2017 J INFORMETR (lines 19, 114, 450, 524, 648: the records of lines 3, 94, 423, 491, 590) and
    #  Donthu N 2021 J BUS RES (lines 30, 120: records 3, 94) -> 2
    #  Aria M 2017 and van Eck NJ 2010 SCIENTOMETRICS (lines 145, 256, 559: records 94, 177, 491; 177 is
    #  Aria's own paper) -> 2 (records 94, 491)
    #  Hirsch JE 2005 P NATL ACAD SCI USA (lines 233, 327, 538: records 177, 297, 491) and WHITE HD 1981
    #  J AM SOC INFORM SCI (lines 260, 337: records 177, 297) -> 2
    #  BROADUS RN 1987 SCIENTOMETRICS (lines 23, 213: records 3, 177) and Aria M 2017 -> 1 (record 3)
    by_pair = {frozenset((s, t)): int(n) for s, t, n in zip(co_cited["source"], co_cited["target"], co_cited["count"])}
    aria, donthu = "doi:10.1016/j.joi.2017.08.007", "doi:10.1016/j.jbusres.2021.04.070"
    van_eck, hirsch, white = (
        "doi:10.1007/s11192-009-0146-3",
        "doi:10.1073/pnas.0507655102",
        "doi:10.1002/asi.4630320302",
    )
    assert by_pair[frozenset((aria, donthu))] == 2
    assert by_pair[frozenset((aria, van_eck))] == 2
    assert by_pair[frozenset((hirsch, white))] == 2
    assert by_pair[frozenset((aria, "doi:10.1007/bf02016680"))] == 1
    assert n_cited[aria] == 5

    # the GraphML export opens in networkx with the same edges and counts
    graph = nx.read_graphml(out)
    assert {frozenset((s, t)): int(d["count"]) for s, t, d in graph.edges(data=True)} == by_pair
    assert graph.number_of_edges() == 5516 and graph.number_of_nodes() == len(cited)


def test_an_export_without_records_warns(samples: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    header_only = tmp_path / "none.txt"
    header_only.write_bytes(b"\n".join(_lines(samples / "savedrecs.txt")[:2]) + b"\nEF\n")  # BOM, FN, VR, EF
    with caplog.at_level("WARNING", logger="loaders.wos"):
        batch = wos.load(header_only)
    assert batch.nodes == {} and batch.rels == {} and batch.rejects == []
    assert f"{header_only}: no records in it, nothing loaded" in caplog.text


# --- done-when: co-citation counts by volume + first page ------------------------------------

_VOLUME_PAGE = re.compile(r", V([^,]+), P([^,]+)")

VolumePage = tuple[str, ...]


def volume_page_counts(cited_lists: list[list[str]]) -> tuple[Counter[frozenset[VolumePage]], Counter[VolumePage]]:
    """An independent count: each cited work keyed by (volume, first page) read off the raw CR line with one
    regular expression; co-citation of two keys = records whose CR lists hold both; citations = records citing it."""
    pairs: Counter[frozenset[VolumePage]] = Counter()
    cited: Counter[VolumePage] = Counter()
    for lines in cited_lists:
        keys = {(m.group(1).strip(), m.group(2).strip()) for line in lines if (m := _VOLUME_PAGE.search(line))}
        cited.update(keys)
        pairs.update(frozenset(pair) for pair in itertools.combinations(sorted(keys), 2))
    return pairs, cited


def stored_volume_page_counts(
    db: Path, *, source_letter: bool = False
) -> tuple[dict[frozenset[VolumePage], int], dict[VolumePage, int], set[VolumePage], pd.DataFrame]:
    """The store's CO_CITED counts and n_cited keyed by each cited Paper's stored (volume, first_page), and the
    keys two cited Papers share (two works with one volume and first page, in two journals: the independent
    key cannot tell them apart, so they are left out of the comparison). ``source_letter``: the key starts
    with the first letter of the Paper's venue (a stub's source as its reference gives it)."""
    store = open_store(StoreConfig(db_path=db, read_only=True))
    try:
        co_cited = store.read_edges("CO_CITED")
        papers = pd.concat(store.iter_nodes("Paper", 10_000), ignore_index=True)
    finally:
        store.close()
    cited_ids = set(co_cited["source"]) | set(co_cited["target"])
    key_of: dict[str, Any] = {
        paper: ((str(venue)[:1].upper(),) if source_letter else ()) + (str(volume), str(page))
        for paper, venue, volume, page in zip(papers["id"], papers["venue"], papers["volume"], papers["first_page"])
        if paper in cited_ids and isinstance(volume, str) and isinstance(page, str)
    }
    shared = {key for key, n in Counter(key_of.values()).items() if n > 1}
    pairs = {
        frozenset((key_of[s], key_of[t])): int(n)
        for s, t, n in zip(co_cited["source"], co_cited["target"], co_cited["count"])
        if s in key_of and t in key_of and not {key_of[s], key_of[t]} & shared
    }
    cited = {
        key_of[p]: int(n)
        for p, n in zip(papers["id"], papers["n_cited"])
        if p in key_of and key_of[p] not in shared and pd.notna(n) and n > 0
    }
    return pairs, cited, shared, papers


def assert_top_counts_agree(
    expected_pairs: Counter[frozenset[VolumePage]],
    expected_cited: Counter[VolumePage],
    stored_pairs: dict[frozenset[VolumePage], int],
    stored_cited: dict[VolumePage, int],
    shared: set[VolumePage],
) -> None:
    """The 20 most co-cited pairs and the 10 most cited works of either count have the same counts in the other."""
    expected_pairs = Counter({pair: n for pair, n in expected_pairs.items() if not pair & shared})
    expected_cited = Counter({key: n for key, n in expected_cited.items() if key not in shared})

    def top(counts: Mapping[Any, int], n: int) -> list[tuple[Any, int]]:
        return sorted(
            counts.items(), key=lambda kv: (-kv[1], sorted(kv[0]) if isinstance(kv[0], frozenset) else kv[0])
        )[:n]

    for pair, n in top(expected_pairs, 20):
        assert stored_pairs.get(pair) == n, (sorted(pair), n, stored_pairs.get(pair))
    for pair, n in top(stored_pairs, 20):
        assert expected_pairs.get(pair) == n, (sorted(pair), n, expected_pairs.get(pair))
    for work, n in top(expected_cited, 10):
        assert stored_cited.get(work) == n, (work, n, stored_cited.get(work))
    for work, n in top(stored_cited, 10):
        assert expected_cited.get(work) == n, (work, n, expected_cited.get(work))


@pytest.mark.slow
def test_cocitation_counts_by_volume_and_page(
    samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """savedrecs.txt: the top 20 co-cited pairs and the 10 most cited works, counted by (volume, first page)
    from the raw CR lines, are citegraph's after ingest + co-citation: GOOS 1947 V1 P333 and COSTA DE
    BEAUREGARD 1973 V7 P3555 (four spellings, one work) co-cited 10 times, not 7; ROOSEN 1973 V277 P135 and P147
    two works co-cited 7 times, not one node."""
    sample = samples / "savedrecs.txt"
    expected_pairs, expected_cited = volume_page_counts(cr_fields(sample))
    db = tmp_path / "graph.db"
    assert main(["--db", str(db), "ingest", "wos", str(sample)]) == 0
    assert main(["--db", str(db), "compute", "cocitation", "--device", "cpu"]) == 0
    capsys.readouterr()
    stored_pairs, stored_cited, shared, papers = stored_volume_page_counts(db)
    assert len(shared) <= 3  # ARTMANN K 1948 ANN PHYS-BERLIN V2 P87 and GOOS F 1949 ANN PHYS-LEIPZIG V2 P87, …
    assert_top_counts_agree(expected_pairs, expected_cited, stored_pairs, stored_cited, shared)
    goos, costa = ("1", "333"), ("7", "3555")
    assert stored_pairs[frozenset((goos, costa))] == expected_pairs[frozenset((goos, costa))] == 10
    assert stored_pairs[frozenset((("277", "135"), ("277", "147")))] == 7
    assert stored_cited[costa] == 16
    labels = dict(zip(papers["id"], papers["label"]))
    assert "Goos F, 1947, Ann Phys-Berlin 1:333" in labels.values()
    assert labels["wos:A1974U757700009"] == "Roosen G, 1974, Can J Phys"  # a record: author, year, source
    assert papers["label"].notna().all()


@pytest.mark.slow
def test_references_report_and_thesaurus(
    samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`citegraph references report` lists each joined work with its strings and rule; a thesaurus undoes a join
    in the report and in the ingest alike (savedrecs.txt: RICARD J / RICHARD J, 1970, NOUV REV OPT, V1, P275)."""
    sample = samples / "savedrecs.txt"
    assert main(["references", "report", "wos", str(sample), "--format", "json", "--joined-only"]) == 0
    rows = json.loads(capsys.readouterr().out)
    costa = next(row for row in rows if "PHYS REV D, V7, P3555" in row["strings"])
    assert costa["work"] == "doi:10.1103/physrevd.7.3555" and costa["citations"] == 16 and costa["keys_before"] == 4
    assert costa["rules"] == "doi+source+volume+page" or costa["rules"] == "source+volume+page"
    ricard = next(row for row in rows if "RICHARD J, 1970" in row["strings"])
    assert ricard["rules"] == "source+volume+page" and ricard["label"] == "Ricard J, 1970, Nouv Rev Opt 1:275"

    thesaurus = tmp_path / "thesaurus.txt"
    thesaurus.write_text("label\treplace by\nrichardj1970nouvrevopt\trichardj1970nouvrevopt\n")
    out = tmp_path / "report.csv"
    assert main(["references", "report", "wos", str(sample), "--thesaurus", str(thesaurus), "--out", str(out)]) == 0
    with out.open(encoding="utf-8") as f:
        split = [row for row in csv.DictReader(f) if "P275" in row["strings"] and "NOUV REV OPT, V1," in row["strings"]]
    assert len(split) == 2 and all(row["rules"] == "one string" for row in split)

    def stored_ricard(db: Path) -> int:
        store = open_store(StoreConfig(db_path=db, read_only=True))
        try:
            papers = pd.concat(store.iter_nodes("Paper", 10_000), ignore_index=True)
        finally:
            store.close()
        return int(papers["label"].fillna("").str.contains(r"Ri(?:c|ch)ard J, 1970, Nouv Rev Opt 1:275").sum())

    assert main(["--db", str(tmp_path / "joined.db"), "ingest", "wos", str(sample)]) == 0
    monkeypatch.setenv("CITEGRAPH_REFERENCE_THESAURUS", str(thesaurus))
    assert main(["--db", str(tmp_path / "split.db"), "ingest", "wos", str(sample)]) == 0
    capsys.readouterr()
    assert stored_ricard(tmp_path / "joined.db") == 1 and stored_ricard(tmp_path / "split.db") == 2
