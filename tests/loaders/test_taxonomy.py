"""The taxonomy loader: ACM 1998 text tree, ACM 2012 SKOS, arXiv categories and the derived MAPS_TO."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from graph.ingest import GraphBatch, ingest, validate_batch
from graph.schema import ORIGIN_COLUMN
from graph.store import GraphStore
from loaders import taxonomy
from loaders.taxonomy import compare_mappings, named_acm_codes, summarise_agreement

ACM1998 = """\
A. General Literature
A.0 General
Biographies/autobiographies
Conference proceedings
A.m Miscellaneous
I. Computing Methodologies
I.2 Artificial intelligence
I.2.7 Natural Language Processing  (H.3.1, H.5.2)
Discourse
Language generation
I.2.10 Vision and Scene Understanding
A priori knowledge
I.3 Computer graphics (C.0)
I.3.0 General
I.3.5 Computational Geometry and Object Modeling
J. Computer Applications
J.1 Administrative data processing
J.2 Physical sciences and engineering
J.3 Life and medical sciences
"""

ARXIV = {
    "groups": {"grp_cs": {"id": "grp_cs", "full_name": "Computer Science"}},
    "archives": {"cs": {"id": "cs", "full_name": "Computer Science"}},
    "categories": {
        "cs.CL": {
            "id": "cs.CL",
            "full_name": "Computation and Language",
            "description": "Covers NLP. Roughly includes material in ACM Subject Class I.2.7.",
        },
        "cs.XX": {
            "id": "cs.XX",
            "full_name": "Made Up",
            "description": "Roughly includes material in ACM Subject Classes I.2.10 and Z.9.",
        },
        "cs.GR": {
            "id": "cs.GR",
            "full_name": "Graphics",
            "description": "Roughly includes material in all of ACM Subject Class I.3, except that I.3.5 is "
            "is likely to have Computational Geometry as the primary subject area.",
        },
        "cs.SI": {
            "id": "cs.SI",
            "full_name": "Social and Information Networks",
            "description": "Includes topics in ACM Subject classes I.2; and J.1--J.3.",
        },
        "cs.GL": {
            "id": "cs.GL",
            "full_name": "General Literature",
            "description": "Roughly includes all of ACM Subject Class A, except it does not include "
            "conference proceedings.",
        },
        "cs.LG": {"id": "cs.LG", "full_name": "Machine Learning", "description": "Papers on all aspects of ML."},
        "hep-th": {"id": "hep-th", "full_name": "High Energy Physics - Theory"},
    },
}

ACM2012 = """\
<?xml version="1.0" encoding="UTF-8"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:skos="http://www.w3.org/2004/02/skos/core#">
  <skos:ConceptScheme rdf:about="ccs2012">
    <skos:hasTopConcept rdf:resource="100" />
  </skos:ConceptScheme>
  <skos:Concept rdf:about="100">
    <skos:prefLabel xml:lang="en">Computing methodologies</skos:prefLabel>
    <skos:topConceptOf rdf:resource="ccs2012" />
  </skos:Concept>
  <skos:Concept rdf:about="100.200">
    <skos:prefLabel xml:lang="en">Artificial  intelligence</skos:prefLabel>
    <skos:broader rdf:resource="100" />
  </skos:Concept>
  <skos:Concept rdf:about="100.200.300">
    <skos:prefLabel xml:lang="en">Natural language processing</skos:prefLabel>
    <skos:broader rdf:resource="100.200" />
  </skos:Concept>
  <skos:Concept rdf:about="100.400">
    <skos:prefLabel xml:lang="en">Machine learning</skos:prefLabel>
    <skos:broader rdf:resource="100" />
  </skos:Concept>
  <skos:Concept rdf:about="100.400.300">
    <skos:prefLabel xml:lang="en">Natural language processing</skos:prefLabel>
    <skos:broader rdf:resource="100.400" />
  </skos:Concept>
</rdf:RDF>
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "acm_ccs1998.txt").write_text(ACM1998, encoding="utf-8")
    (tmp_path / "acm_ccs2012.xml").write_text(ACM2012, encoding="utf-8")
    (tmp_path / "arxiv_taxonomy.json").write_text(json.dumps(ARXIV, indent=1), encoding="utf-8")
    return tmp_path


def _line_of(path: Path, needle: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


# --- ACM 1998 ------------------------------------------------------------------------------------
def test_acm1998_classes(folder: Path) -> None:
    batch = taxonomy.load_acm1998(folder / "acm_ccs1998.txt")
    classes = batch.nodes["AcmClass"].set_index("code")
    assert classes.index.tolist() == [
        "A",
        "A.0",
        "A.m",
        "I",
        "I.2",
        "I.2.7",
        "I.2.10",
        "I.3",
        "I.3.0",
        "I.3.5",
        "J",
        "J.1",
        "J.2",
        "J.3",
    ]  # "A priori knowledge" is a descriptor, not top class A again
    assert classes.loc["I.2.10", "id"] == "1998:I.2.10"
    assert classes.loc[["I", "I.2", "I.2.10"], "level"].tolist() == [1, 2, 3]
    assert set(classes["scheme"]) == {"1998"}
    assert classes.loc["I.2.7", "name"] == "Natural Language Processing"  # cross-reference dropped
    assert classes.loc["I.3", "name"] == "Computer graphics"
    assert classes.loc["I.2.7", "description"] == "Discourse; Language generation"
    assert classes.loc["I.2.10", "description"] == "A priori knowledge"
    assert pd.isna(classes.loc["A.m", "description"])
    assert classes.loc["I.2.7", ORIGIN_COLUMN] == "acm_ccs1998.txt:8"
    assert batch.rejects == []


def test_acm1998_broader_edges_child_to_parent(folder: Path) -> None:
    batch = taxonomy.load_acm1998(folder / "acm_ccs1998.txt")
    edges = batch.rels["BROADER"]
    pairs = set(zip(edges["source"], edges["target"]))
    assert ("1998:I.2.10", "1998:I.2") in pairs and ("1998:I.2", "1998:I") in pairs
    assert len(edges) == len(batch.nodes["AcmClass"]) - 3  # every class but the three tops
    assert edges.set_index("source").loc["1998:I.2.10", ORIGIN_COLUMN] == "acm_ccs1998.txt:11"


def test_acm1998_descriptor_before_any_class_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "acm.txt"
    path.write_text("Orphan descriptor\nA. General Literature\n", encoding="utf-8")
    batch = taxonomy.load_acm1998(path)
    assert [(r.table, r.origin) for r in batch.rejects] == [("AcmClass", "acm.txt:1")]
    assert "before any coded class" in batch.rejects[0].reason


def test_acm1998_class_without_parent_is_rejected_on_validation(tmp_path: Path, empty_store: GraphStore) -> None:
    path = tmp_path / "acm.txt"
    path.write_text("K. Computing Milieux\nK.5.1 Hardware/Software Protection\n", encoding="utf-8")
    _, _, rejects = validate_batch(empty_store, taxonomy.load_acm1998(path))
    assert [(r.table, r.origin) for r in rejects] == [("BROADER", "acm.txt:2")]
    assert "'1998:K.5' is neither in this load nor in the store" in rejects[0].reason


# --- ACM 2012 ------------------------------------------------------------------------------------
def test_acm2012_positions_levels_and_broader(folder: Path) -> None:
    batch = taxonomy.load_acm2012(folder / "acm_ccs2012.xml")
    classes = batch.nodes["AcmClass"].set_index("id")
    assert classes.index.tolist() == [
        "2012:100",
        "2012:100.200",
        "2012:100.200.300",
        "2012:100.400",
        "2012:100.400.300",
    ]
    assert classes["level"].tolist() == [1, 2, 3, 2, 3]
    assert classes.loc["2012:100.200", "name"] == "Artificial intelligence"  # whitespace collapsed
    # one concept under two parents: two positions sharing the concept number as code
    assert classes.loc[["2012:100.200.300", "2012:100.400.300"], "code"].tolist() == ["300", "300"]
    assert set(classes["scheme"]) == {"2012"}
    assert (
        classes.loc["2012:100.400", ORIGIN_COLUMN]
        == f"acm_ccs2012.xml:{_line_of(folder / 'acm_ccs2012.xml', '100.400')}"
    )
    edges = batch.rels["BROADER"]
    assert set(zip(edges["source"], edges["target"])) == {
        ("2012:100.200", "2012:100"),
        ("2012:100.200.300", "2012:100.200"),
        ("2012:100.400", "2012:100"),
        ("2012:100.400.300", "2012:100.400"),
    }


# --- arXiv and MAPS_TO ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Roughly includes material in ACM Subject Classes I.2.10, I.4, and I.5.", ["I.2.10", "I.4", "I.5"]),
        (
            "Roughly includes material in ACM Subject Classes D.4.1, D.4.2., D.4.3, and D.4.9.",
            ["D.4.1", "D.4.2", "D.4.3", "D.4.9"],
        ),  # a stray full stop after a code
        (
            "Roughly includes material in ACM Subject Classes F.1 (computation by abstract devices), F.2.3 "
            "(tradeoffs). Some material in F.2.1 and F.2.2, may also be appropriate here.",
            ["F.1", "F.2.3", "F.2.1", "F.2.2"],
        ),  # later sentences count
        ("Includes material in ACM Subject Class E.4 and intersects with H.1.1.", ["E.4", "H.1.1"]),
        (
            "Roughly includes all of ACM Subject Class C.2 except C.2.4, which is more likely to have "
            "Distributed, Parallel, and Cluster Computing as the primary subject area.",
            ["C.2"],
        ),
        (
            "Roughly includes material in ACM Subject Classes H.1.2 and all of H.5, except for H.5.1, which is "
            "more likely to have Multimedia as the primary subject area.",
            ["H.1.2", "H.5"],
        ),
        ("Roughly includes all of ACM Subject Class A, except it does not include conference proceedings.", ["A"]),
        ("Covers approaches (1) building blocks, (2) modeling, design and optimization of novel devices.", []),
        (
            "Covers cs.AI. Analysis includes topics in ACM Subject classes F.2, G.2; applications in computing "
            "include topics in H.3, H.4, and H.5.",
            ["F.2", "G.2", "H.3", "H.4", "H.5"],
        ),
        ("Roughly includes material in ACM Subject Class I.2.7 and I.2.7 again.", ["I.2.7"]),  # each once
    ],
)
def test_named_acm_codes(text: str, expected: list[str]) -> None:
    assert named_acm_codes(text) == expected


def test_named_acm_codes_expands_ranges_over_the_known_tree() -> None:
    known = ["J", "J.0", "J.1", "J.1.1", "J.2", "J.3", "J.4", "J.m"]
    assert named_acm_codes("ACM Subject classes J.1--J.3 and J.4", known) == ["J.1", "J.2", "J.3", "J.4"]
    # an end the tree lacks: both ends as written, so the unknown one can be rejected
    assert named_acm_codes("ACM Subject classes J.1--J.9", known) == ["J.1", "J.9"]


def test_arxiv_categories_and_maps_to(folder: Path) -> None:
    batch = taxonomy.load(folder)
    categories = batch.nodes["ArxivCategory"].set_index("code")
    assert categories.index.tolist() == ["cs.CL", "cs.XX", "cs.GR", "cs.SI", "cs.GL", "cs.LG", "hep-th"]
    assert categories.loc["cs.CL", "name"] == "Computation and Language"
    assert pd.isna(categories.loc["hep-th", "description"])
    maps = batch.rels["MAPS_TO"]
    mapped = {c: sorted(maps.loc[maps["source"] == c, "target"]) for c in maps["source"].unique()}
    assert mapped == {
        "cs.CL": ["1998:I.2.7"],
        "cs.XX": ["1998:I.2.10"],
        "cs.GR": ["1998:I.3"],  # I.3.5 is named only to be excluded
        "cs.SI": ["1998:I.2", "1998:J.1", "1998:J.2", "1998:J.3"],
        "cs.GL": ["1998:A"],
    }
    assert set(maps["score"]) == {1.0} and set(maps["inferred"]) == {False}
    assert maps[ORIGIN_COLUMN].str.fullmatch(r"arxiv_taxonomy\.json:\d+").all()


def test_unknown_acm_code_is_a_reject_naming_category_and_code(folder: Path) -> None:
    batch = taxonomy.load(folder)
    line = _line_of(folder / "arxiv_taxonomy.json", '"id": "cs.XX"')
    assert [(r.table, r.origin) for r in batch.rejects] == [("MAPS_TO", f"arxiv_taxonomy.json:{line}")]
    assert "cs.XX names ACM class 'Z.9', which is not in the ACM CCS 1998 tree" in batch.rejects[0].reason


def test_small_taxonomy_ingests_with_only_the_loader_reject(folder: Path, empty_store: GraphStore) -> None:
    report = ingest(empty_store, taxonomy.load(folder), on_error="skip")
    assert [r.reason for r in report.rejects] == [taxonomy.load(folder).rejects[0].reason]
    assert empty_store.count_rels("MAPS_TO") == 8
    assert empty_store.count_nodes("AcmClass") == 14 + 5


def test_compare_mappings() -> None:
    known = ["I", "I.2", "I.2.0", "I.2.7", "I.3", "I.3.1", "I.3.5"]
    derived = {"cs.AI": ["I.2.0"], "cs.CL": ["I.2.7"], "cs.GR": ["I.3"]}
    reference = {"cs.AI": ["I.2"], "cs.CL": ["I.2.7"], "cs.GR": ["I.3.1"], "cs.LG": ["M.3"]}
    table = compare_mappings(derived, reference, known).set_index("category")
    assert table.loc["cs.AI", ["jaccard", "jaccard_general"]].tolist() == [0.0, 1.0]
    assert table.loc["cs.CL", "jaccard"] == 1.0
    assert table.loc["cs.GR", "jaccard"] == 0.0
    assert table.loc["cs.GR", "jaccard_tree"] == pytest.approx(1 / 3)  # {I.3, I.3.1, I.3.5} vs {I.3.1}
    assert table.loc["cs.LG", "not_acm"] == ["M.3"] and table.loc["cs.LG", "jaccard"] == 1.0
    summary = summarise_agreement(table.reset_index())
    assert summary["categories"] == 3 and summary["identical"] == 1  # cs.LG: nothing ACM on either side


# --- the real files ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def real_batch(data_dir: Path) -> GraphBatch:
    return taxonomy.load(data_dir / "taxonomy")


@pytest.mark.shared_data
def test_real_acm1998_is_a_tree_of_368_classes(real_batch: GraphBatch) -> None:
    classes = real_batch.nodes["AcmClass"]
    acm = classes[classes["scheme"] == "1998"]
    assert len(acm) == 368 and acm["id"].is_unique
    assert acm["level"].value_counts().to_dict() == {1: 11, 2: 81, 3: 276}
    broader = real_batch.rels["BROADER"]
    edges = broader[broader["source"].str.startswith("1998:")]
    non_roots = set(acm.loc[acm["level"] > 1, "id"])
    assert edges["source"].value_counts().max() == 1 and set(edges["source"]) == non_roots
    assert set(edges["target"]) <= set(acm["id"])


@pytest.mark.shared_data
def test_real_acm2012(real_batch: GraphBatch) -> None:
    classes = real_batch.nodes["AcmClass"]
    acm = classes[classes["scheme"] == "2012"]
    assert len(acm) == 2113 and acm["level"].notna().all() and (acm["level"] == 1).sum() == 13
    broader = real_batch.rels["BROADER"]
    assert broader["source"].str.startswith("2012:").sum() == 2100


@pytest.mark.shared_data
def test_real_arxiv_and_agreement_with_symtax(real_batch: GraphBatch, data_dir: Path) -> None:
    categories = real_batch.nodes["ArxivCategory"]
    cs = categories[categories["code"].str.startswith("cs.")]
    assert len(categories) == 185 and len(cs) == 40
    assert real_batch.rejects == []
    derived = taxonomy.mapping_from_batch(real_batch)
    assert len(derived) == 35 and set(derived) <= set(cs["code"])
    assert sorted(set(cs["code"]) - set(derived)) == ["cs.ET", "cs.GT", "cs.LG", "cs.OH", "cs.SY"]

    acm = real_batch.nodes["AcmClass"]
    known = acm.loc[acm["scheme"] == "1998", "code"].tolist()
    reference = taxonomy.load_symtax_mapping(data_dir / "taxonomy" / taxonomy.SYMTAX_FILE)
    comparison = compare_mappings(derived, reference, known)
    summary = summarise_agreement(comparison)
    differing = comparison[comparison["jaccard"] < 1.0]
    with pd.option_context("display.width", 200, "display.max_colwidth", 70):
        print("\nSymTax agreement:", {k: round(v, 3) for k, v in summary.items()})
        print(differing[["category", "derived", "reference", "jaccard", "jaccard_general", "jaccard_tree"]].to_string())
    assert summary["categories"] == 35  # SymTax's M.* rows name no ACM class
    assert summary["identical"] >= 20 and summary["mean_jaccard_general"] > 0.8


@pytest.mark.shared_data
def test_real_taxonomy_ingests_cleanly_and_idempotently(real_batch: GraphBatch, empty_store: GraphStore) -> None:
    first = ingest(empty_store, real_batch)
    assert first.rejected == 0 and first.stored == first.records
    after_one = empty_store.stats()
    second = ingest(empty_store, real_batch)
    assert second.rejected == 0
    assert empty_store.stats() == after_one
    assert after_one["nodes"]["AcmClass"] == 368 + 2113 and after_one["relationships"]["MAPS_TO"] == 118
