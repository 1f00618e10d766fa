"""Paper id and author key normalisation."""

from __future__ import annotations

import pytest

from graph.errors import CitegraphError
from loaders.ids import PaperIdError, author_key, canonical_paper_id


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # ACL old style: letter upper-cased, NN-NNNN
        ("P98-1081", "P98-1081"),
        ("p98-1081", "P98-1081"),
        ("  W05-1701 ", "W05-1701"),
        ("https://aclanthology.org/P98-1081.pdf", "P98-1081"),
        ("http://www.aclweb.org/anthology/C90-2039", "C90-2039"),
        # ACL new style: as is
        ("2020.acl-main.1", "2020.acl-main.1"),
        ("1952.earlymt-1.1", "1952.earlymt-1.1"),
        ("2005.jeptalnrecital-court.20", "2005.jeptalnrecital-court.20"),
        ("https://aclanthology.org/2021.findings-acl.12/", "2021.findings-acl.12"),
        # arXiv: prefixed, version dropped
        ("2101.00001", "arxiv:2101.00001"),
        ("arXiv:2101.00001v2", "arxiv:2101.00001"),
        ("ARXIV:0704.0001", "arxiv:0704.0001"),
        ("https://arxiv.org/abs/2101.00001v3", "arxiv:2101.00001"),
        ("hep-th/9901001v1", "arxiv:hep-th/9901001"),
        ("arXiv:cs.CL/0101001", "arxiv:cs/0101001"),
        # DOI: prefixed, lower-cased
        ("10.18653/V1/2020.ACL-MAIN.1", "doi:10.18653/v1/2020.acl-main.1"),
        ("doi:10.1145/3292500.3330701", "doi:10.1145/3292500.3330701"),
        ("https://doi.org/10.1162/COLI_a_00001", "doi:10.1162/coli_a_00001"),
    ],
)
def test_canonical_paper_id(raw: str, expected: str) -> None:
    assert canonical_paper_id(raw) == expected


def test_canonical_paper_id_is_idempotent() -> None:
    for raw in ("p98-1081", "2020.acl-main.1", "arXiv:2101.00001v2", "10.18653/V1/X"):
        once = canonical_paper_id(raw)
        assert canonical_paper_id(once) == once


@pytest.mark.parametrize("raw", ["", "   ", "P98-108", "paper 12", "arxiv:not-an-id", "doi:11.1/x", "P98-1081x"])
def test_unknown_ids_raise_with_the_forms_expected(raw: str) -> None:
    with pytest.raises(PaperIdError, match="expected an ACL Anthology id"):
        canonical_paper_id(raw)


def test_paper_id_error_is_a_project_error_and_a_value_error() -> None:
    with pytest.raises(CitegraphError):
        canonical_paper_id("nonsense")
    with pytest.raises(ValueError):
        canonical_paper_id(12)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Warren Weaver", "author:warren weaver"),
        ("  Warren   WEAVER ", "author:warren weaver"),
        ("W. F. Loomis", "author:w f loomis"),
        ("José García-Pérez", "author:jose garcia perez"),
        ("Jose Garcia Perez", "author:jose garcia perez"),
        ("Anders Søgaard", "author:anders sogaard"),
        ("Łukasz Kaiser", "author:lukasz kaiser"),
        ("Yehoshua Bar-Hillel", "author:yehoshua bar hillel"),
        ("ﬁona O’Brien", "author:fiona o brien"),  # ligature decomposed, curly apostrophe is punctuation
        ("王小明", "author:王小明"),  # letters of other scripts stay
        ("Teresa Gonҫalves", "author:teresa goncalves"),  # Cyrillic ҫ typed for ç
        ("Daniel Grieβhaber", "author:daniel griesshaber"),  # Greek β typed for ß
        ("Daniel Grießhaber", "author:daniel griesshaber"),
        ("Αλέξανδρος Αβραάμ", "author:αλεξανδρος αβρααμ"),  # a Greek name keeps its β
    ],
)
def test_author_key(name: str, expected: str) -> None:
    assert author_key(name) == expected


@pytest.mark.parametrize("name", ["", "   ", "--", "?."])
def test_author_key_without_letters_is_none(name: str) -> None:
    assert author_key(name) is None


def test_semeval_2007_ids_follow_the_anthology_renumbering() -> None:
    assert canonical_paper_id("W07-2002") == "S07-1002"
    assert canonical_paper_id("w07-2018") == "S07-1018"
    assert canonical_paper_id("W07-1001") == "W07-1001"  # other W07 volumes keep their ids
    assert canonical_paper_id("S07-1002") == "S07-1002"
