"""Free-form reference strings read as fields: one real string per style, copied from the shared samples
(unarXive bib_entry_raw, Crossref unstructured) with the fields read off by hand."""

from __future__ import annotations

import pytest

from loaders.citedrefs import parse_wos
from loaders.refmatch import field_alias, match_references
from loaders.refstrings import crossref_reference, parse_reference

# (string, first author, year, source, volume, first page)
STYLES = [
    (  # physics (unarXive 2212.*): authors, journal volume, page (year)
        "M. Hamanaka and K. Toda, Phys. Lett. A 316, 77 (2003) [hep-th/0211148].",
        "Hamanaka, M.", 2003, "Phys. Lett. A", "316", "77",
    ),
    (  # Nature (Crossref, s41598-…): "Surname, I." and the title's last word ends with "?"
        "Linial, M. Why aren’t foamy viruses pathogenic? Trends Microbiol 8, 284–289 (2000).",
        "Linial, M.", 2000, "Trends Microbiol", "8", "284",
    ),
    (  # Nature, a dotted abbreviation after the title's full stop
        "Lau, S. K. P. et al. Severe acute respiratory syndrome coronavirus-like virus in Chinese horseshoe bats. "
        "Proc. Natl. Acad. Sci. U. S. A. 102, 14040–14045 (2005).",
        "Lau, S. K. P.", 2005, "Proc. Natl. Acad. Sci. U. S. A", "102", "14040",
    ),
    (  # IEEE: a quoted title, vol./no./pp., the year last
        "J. Kundrat, J. Vojtech, P. Skoda, R. Vohnout, J. Radil, and O. Havlis, “YANG/NETCONF ROADM: Evolving open "
        "DWDM Toward SDN applications,” Journal of Lightwave Technology, vol. 36, no. 15, pp. 3105–3114, 2018.",
        "Kundrat, J.", 2018, "Journal of Lightwave Technology", "36", "3105",
    ),
    (  # Emerald (Crossref dump): (year), “title”,Journal, Vol. No., pp.
        "Brinkac, L.M. , Davidsen, T. , Beck, E. , Ganapathy, A. , Caler, E. , Dodson, R.J. and Sutton, G. (2009), "
        "“Pathema: a clade-specific bioinformatics resource center for pathogen research”,Nucleic Acids Research, "
        "38(Database), Vol. 38 No. S1, pp. D408-D414.",
        "Brinkac, L.M.", 2009, "Nucleic Acids Research", "38", "D408",
    ),
    (  # ACL / NeurIPS: "First Last. Title. Journal, volume:page, year."
        "Keith J Holyoak. Parallel distributed processing: explorations in the microstructure of cognition. "
        "Science, 236:992–997, 1987.",
        "Holyoak, K.J.", 1987, "Science", "236", "992",
    ),
    (  # Elsevier: journal volume (year), page
        "I. Peruzzi, M. Piccolo, G. J. Feldman, H. K. Nguyen, J. Wiss, G. S. Abrams, M. S. Alam, A. Boyarski, "
        "M. Breidenbach and W. C. Carithers, et al. Phys. Rev. Lett. 37 (1976), 569-571",
        "Peruzzi, I.", 1976, "Phys. Rev. Lett", "37", "569",
    ),
    (  # Cambridge (Crossref): surname glued to the initials, "Journal, volume, pages."
        "CerlingT.E., BrownF.H. and BowmanJ.R. 1985. Low temperature alteration of volcanic glass: Hydration, Na, "
        "K, 18O, and Ar mobility. Chemical Geology, 52, 281–293.",
        "Cerling T.E.", 1985, "Chemical Geology", "52", "281",
    ),
    (  # AAS (unarXive): the journal macro lost, "2019, , volume, page"
        "Kwon, W., Stephens, I. W., Tobin, J. J., et al. 2019, , 879, 25",
        "Kwon, W.", 2019, None, "879", "25",
    ),
    (  # MNRAS: "Surname I., year, Journal, volume, page"
        "Oyamatsu K., 1993, Nucl. Phys. A, 561, 431",
        "Oyamatsu K.", 1993, "Nucl. Phys. A", "561", "431",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("raw", "author", "year", "source", "volume", "page"), STYLES)
def test_each_style(raw: str, author: str, year: int, source: str | None, volume: str, page: str) -> None:
    ref = parse_reference(raw)
    assert (ref.first_author, ref.year, ref.source, ref.volume, ref.page) == (author, year, source, volume, page)
    assert ref.raw == raw and ref.key


def test_no_work_in_it_gets_no_key() -> None:
    for raw in ("https://github.com/SumitBanikGit/MBConicHulls", "K. Gröchenig, personal communication."):
        assert parse_reference(raw).key is None  # neither author + year nor volume + page
    assert parse_reference("—. 2009b, , 507, 1425").first_author is None  # "the same authors": unknown, not "—"


def test_a_doi_in_the_text() -> None:
    ref = parse_reference(
        "Harnad, S. and Brody, T. (2004), “Comparing the impact of open access (OA) vs non-OA articles in the "
        "same journals”,D-Lib Magazine, Vol. 10 No. 6, doi:10.1045/june2004-harnad."
    )
    assert ref.dois == ("doi:10.1045/june2004-harnad",) and ref.source == "D-Lib Magazine" and ref.volume == "10"


def test_one_work_one_key_in_every_style() -> None:
    """A work cited by Web of Science and by a free-form bibliography: the same reference key (the fields written
    as WoS writes them), the same field key, and matched as one work."""
    wos = parse_wos("HAMANAKA M, 2003, PHYS LETT A, V316, P77")
    free = parse_reference("M. Hamanaka and K. Toda, Phys. Lett. A 316, 77 (2003).")
    assert wos.key == free.key == "hamanakam2003physletta"
    assert field_alias(wos.source, wos.volume, wos.page) == field_alias(free.source, free.volume, free.page)
    assert len(match_references([wos, free]).groups) == 1


def test_crossref_structured_fields_win_over_the_string() -> None:
    ref = crossref_reference(
        {
            "key": "10.1016/j.jhevol.2017.07.005_bib42",
            "first-page": "237",
            "article-title": "Apport à la systématique de quatre genres d'adapiformes (Primates, Eocene)",
            "volume": "314",
            "author": "Godinot",
            "year": "1992",
            "journal-title": "C.\u00a0R. Acad. Sci. Paris",
        }
    )
    assert ref is not None
    assert (ref.first_author, ref.year, ref.source, ref.volume, ref.page) == (
        "Godinot", 1992, "C. R. Acad. Sci. Paris", "314", "237",
    )  # fmt: skip
    assert ref.title.startswith("Apport à la systématique") and ref.key == "godinot1992cracadsciparis"
    book = crossref_reference(
        {"author": "Havin", "year": "1994", "volume": "vol. 28", "article-title": "The Uncertainty"}
    )
    assert book is not None and book.volume == "28"  # "vol. 28"
    assert crossref_reference({"key": "x"}) is None
