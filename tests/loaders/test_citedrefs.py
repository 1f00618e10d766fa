"""Cited-reference strings of Web of Science and Scopus: parsing (real lines of the samples), keys, resolution."""

from __future__ import annotations

from pathlib import Path

import pytest

from graph.errors import IngestError
from loaders.citedrefs import (
    CitedRef,
    RecordFacts,
    ReferenceResolver,
    bibliometrix_label,
    initials_first,
    parse_scopus,
    parse_wos,
    reference_key,
    reference_label,
    split_scopus_references,
    surname_of,
)
from loaders.refmatch import (
    Thesaurus,
    field_alias,
    match_references,
    parse_surname,
    source_tokens,
    sources_compatible,
    surnames_compatible,
)

# --- Web of Science CR lines, copied from formats/wos/wos_sample.txt and savedrecs.txt ---------

WOS_CASES = [
    # (line, first_author, year, source, volume, page, dois)
    (
        "Aria M, 2017, J INFORMETR, V11, P959, DOI 10.1016/j.joi.2017.08.007",  # wos_sample.txt:19
        "Aria M",
        2017,
        "J INFORMETR",
        "11",
        "959",
        ("doi:10.1016/j.joi.2017.08.007",),
    ),
    (  # [Anonymous], no volume: a book title in the source place
        "[Anonymous], 2016, R: A Language and Environment for Statistical Computing",
        None,
        2016,
        "R: A Language and Environment for Statistical Computing",
        None,
        None,
        (),
    ),
    (  # a bracketed list of two DOIs, no page
        "Ceh M, 2018, ISPRS INT J GEO-INF, V7, DOI [10.3390/ijgi705168, 10.3390/ijgi7050168]",
        "Ceh M",
        2018,
        "ISPRS INT J GEO-INF",
        "7",
        None,
        ("doi:10.3390/ijgi705168", "doi:10.3390/ijgi7050168"),
    ),
    (  # a no-break space in the name; one DOI three times, once upper-cased with its own "DOI"
        "Jebur \xa0AK, 2021, Saudi Journal of Civil Engineering, V5, P18, DOI [10.36348/sjce.2021.v05i02.001, "
        "10.36348/sjce.2021.v05i02.001, DOI 10.36348/SJCE.2021.V05I02.001]",
        "Jebur AK",
        2021,
        "Saudi Journal of Civil Engineering",
        "5",
        "18",
        ("doi:10.36348/sjce.2021.v05i02.001",),
    ),
    (  # no author at all
        "2024, Journal of Computing Research and Innovation, V9, DOI [10.24191/jcrinn.v9i2.457, "
        "10.24191/jcrinn.v9i2.457, DOI 10.24191/JCRINN.V9I2.457]",
        None,
        2024,
        "Journal of Computing Research and Innovation",
        "9",
        None,
        ("doi:10.24191/jcrinn.v9i2.457",),
    ),
    ("BREAZEALE MA, COMMUNICATION", "BREAZEALE MA", None, "COMMUNICATION", None, None, ()),  # savedrecs.txt
    (  # a lettered volume; parentheses inside the DOI
        "THORNBER KK, 1973, PHYS LETT A, VA 43, P501, DOI 10.1016/0375-9601(73)90012-1",
        "THORNBER KK",
        1973,
        "PHYS LETT A",
        "A 43",
        "501",
        ("doi:10.1016/0375-9601(73)90012-1",),
    ),
    (  # page without volume
        "Quiros TP, 2015, TRANSPORT RES REC, P101, DOI 10.3141/2512-12",
        "Quiros TP",
        2015,
        "TRANSPORT RES REC",
        None,
        "101",
        ("doi:10.3141/2512-12",),
    ),
    (  # "DOI DOI …"
        "Moyroud N., 2018, QGIS and generic tools, V1, P1, DOI DOI 10.1002/9781119457091.CH1",
        "Moyroud N.",
        2018,
        "QGIS and generic tools",
        "1",
        "1",
        ("doi:10.1002/9781119457091.ch1",),
    ),
    (  # a "DOI" that is no DOI
        "Persson O., 2009, CELEBRATING SCHOLARL, DOI DOI 1458990/FILE/1458992.PDF#PAGE=11",
        "Persson O.",
        2009,
        "CELEBRATING SCHOLARL",
        None,
        None,
        (),
    ),
    (  # the form of the module docstring
        "Smith J, 2001, NATURE, V409, P860, DOI 10.1038/35057062",
        "Smith J",
        2001,
        "NATURE",
        "409",
        "860",
        ("doi:10.1038/35057062",),
    ),
]


@pytest.mark.parametrize("line, author, year, source, volume, page, dois", WOS_CASES)
def test_wos_cited_references(
    line: str, author: str | None, year: int | None, source: str, volume: str | None, page: str | None, dois: tuple
) -> None:
    ref = parse_wos(line)
    assert (ref.first_author, ref.year, ref.source, ref.volume, ref.page, ref.dois) == (
        author,
        year,
        source,
        volume,
        page,
        dois,
    )
    assert ref.raw == line and ref.title is None


# bibliometrix's labels, worked out by hand from R/cocMatrix.R and R/convert2df.R (see loaders.citedrefs)
LABELS = [
    (
        "Aria M, 2017, J INFORMETR, V11, P959, DOI 10.1016/j.joi.2017.08.007",
        "ARIA M 2017 J INFORMETR ",
        "ariam2017jinformetr",
    ),
    # the first ")" ends the label (inside the DOI here); then the volume cut
    (
        "Goodman AC, 2003, J HOUS ECON, V12, P181, DOI 10.1016/S1051-1377(03)00031-7",
        "GOODMAN AC 2003 J HOUS ECON ",
        "goodmanac2003jhousecon",
    ),
    # no volume: cut at "DOI "
    (
        "Quiros TP, 2015, TRANSPORT RES REC, P101, DOI 10.3141/2512-12",
        "QUIROS TP 2015 TRANSPORT RES REC P101 ",
        "quirostp2015transportresrecp101",
    ),
    # brackets removed
    (
        "[Anonymous], 2016, R: A Language and Environment for Statistical Computing",
        "ANONYMOUS 2016 R: A LANGUAGE AND ENVIRONMENT FOR STATISTICAL COMPUTING",
        "anonymous2016ralanguageandenvironmentforstatisticalcomputing",
    ),
    ("PURI A, UNPUB", "PURI A UNPUB", "puriaunpub"),  # 13 characters: kept
    # Scopus, current format: everything up to the year
    (
        "Aria M.; Cuccurullo C., Bibliometrix: An R tool for comprehensive science mapping analysis, "
        "Journal of Informetrics, 11, 4, pp. 959-975, (2017)",
        "ARIA M. CUCCURULLO C. BIBLIOMETRIX: AN R TOOL FOR COMPREHENSIVE SCIENCE MAPPING ANALYSIS "
        "JOURNAL OF INFORMETRICS 11 4 PP. 959-975 (2017)",
        "ariamcuccurullocbibliometrixanrtoolforcomprehensivesciencemappinganalysisjournalofinformetrics114pp9599752017",
    ),
]


@pytest.mark.parametrize("line, label, key", LABELS)
def test_labels_and_keys(line: str, label: str, key: str) -> None:
    assert bibliometrix_label(line) == label
    assert reference_key(line) == key


def test_a_reference_written_differently_is_one_key() -> None:
    real = "Toh M.L., 2025, INT J ENV SCI, V11, P1476"  # wos_sample.txt:58
    variants = [
        "TOH ML, 2025, INT J ENV SCI, V11, P1476",
        "toh  m. l.,2025, Int J Env-Sci, V11",
        "Toh M L, 2025, INT J ENV SCI",
    ]
    assert {reference_key(v) for v in variants} == {reference_key(real)} == {"tohml2025intjenvsci"}
    # what bibliometrix itself keeps apart
    assert len({bibliometrix_label(v) for v in [real, *variants]}) == 4


def test_too_short_is_no_reference() -> None:
    assert bibliometrix_label("X Y, 2001") is None and reference_key("X Y, 2001") is None  # 9 characters
    assert parse_wos("X Y, 2001").key is None
    assert reference_key("V12, P33, DOI 10.1/x") is None  # nothing before the volume


# --- Scopus -------------------------------------------------------------------------------------

CURRENT = (  # the first three references of formats/scopus/scopus_sample.csv, record 1
    "The global epidemic of low back pain, Lancet Rheumatol, 5, (2023); Cheng M.; Xue Y.; Cui M., Global, "
    "regional, and national burden of low back pain: findings from the global burden of disease study 2021 "
    "and projections to 2050, Spine (Phila Pa 1976), 50, pp. E128-E135, (2025); Li T.; Yan J.; Li J., "
    "Robot-assisted technique versus freehand technique for spine surgery: an umbrella review, Ann Med, 57, (2025)"
)
OLDER = (  # two references of formats/scopus/scopus_testing.csv.scopus
    "Boffetta, P., Nyberg, F., Contribution of environmental factors to cancer risk (2003) British Medical "
    "Bulletin, 68, pp. 71-94. , DOI 10.1093/bmp/ldg023; Hart, H.L.A., (1994) The Concept of Law, p. vi. , "
    "2nd edn. (Oxford"
)


def test_scopus_split_both_formats() -> None:
    refs, current = split_scopus_references(CURRENT)
    assert current and len(refs) == 3
    assert refs[1].startswith("Cheng M.; Xue Y.; Cui M., Global, regional,") and refs[1].endswith("(2025)")
    refs, current = split_scopus_references(OLDER)
    assert not current and len(refs) == 2 and refs[1].startswith("Hart, H.L.A.")
    assert split_scopus_references("  ") == ([], False)


def test_scopus_current_format() -> None:
    first, second, _ = (parse_scopus(r, current=True) for r in split_scopus_references(CURRENT)[0])
    assert (first.first_author, first.title, first.source, first.volume, first.year) == (
        None,
        "The global epidemic of low back pain",
        "Lancet Rheumatol",
        "5",
        2023,
    )
    assert second.first_author == "Cheng M." and second.surname == "cheng"
    assert second.title == (
        "Global, regional, and national burden of low back pain: findings from the global burden of disease "
        "study 2021 and projections to 2050"
    )
    assert (second.source, second.volume, second.page, second.year) == ("Spine (Phila Pa 1976)", "50", "E128", 2025)
    aria = parse_scopus(  # scopus_sample.csv, the record of 10.51576/ymd.1815785
        "Aria M.; Cuccurullo C., Bibliometrix: An R tool for comprehensive science mapping analysis, Journal of "
        "Informetrics, 11, 4, pp. 959-975, (2017)",
        current=True,
    )
    assert (aria.first_author, aria.year, aria.source, aria.volume, aria.page) == (
        "Aria M.",
        2017,
        "Journal of Informetrics",
        "11",
        "959",
    )
    assert aria.title == "Bibliometrix: An R tool for comprehensive science mapping analysis"


def test_scopus_older_format() -> None:
    aria = parse_scopus(  # the example
        "Aria, M., Cuccurullo, C., bibliometrix: An R-tool for comprehensive science mapping analysis (2017) "
        "Journal of Informetrics, 11 (4), pp. 959-975.",
        current=False,
    )
    assert (aria.first_author, aria.surname, aria.year, aria.source, aria.volume, aria.page, aria.dois) == (
        "Aria, M.",
        "aria",
        2017,
        "Journal of Informetrics",
        "11",
        "959",
        (),
    )
    assert aria.title == "bibliometrix: An R-tool for comprehensive science mapping analysis"
    boffetta, hart = (parse_scopus(r, current=False) for r in split_scopus_references(OLDER)[0])
    assert (boffetta.first_author, boffetta.title, boffetta.source, boffetta.volume, boffetta.page) == (
        "Boffetta, P.",
        "Contribution of environmental factors to cancer risk",
        "British Medical Bulletin",
        "68",
        "71",
    )
    assert boffetta.dois == ("doi:10.1093/bmp/ldg023",)
    # a book: no title before the year, the title in the source place
    assert (hart.first_author, hart.year, hart.title, hart.source) == ("Hart, H.L.A.", 1994, None, "The Concept of Law")


@pytest.mark.parametrize(
    "name, surname",
    [("Costa de Beauregard O.", "Costa de Beauregard"), ("Aria, M", "Aria"), ("Marburger J H", "Marburger"),
     ("Yang S.-H.", "Yang"), ("COSTADEB.O", "COSTADEB.O"), ("Grauwin Sebastian", "Grauwin Sebastian")],
)  # fmt: skip
def test_surnames(name: str, surname: str) -> None:
    assert surname_of(name) == surname


def test_initials_first() -> None:
    assert initials_first("Yagai T.") == "T. Yagai"
    assert initials_first("Anani Sarab M.R.") == "M.R. Anani Sarab"
    assert initials_first("Folkman J.") == "J. Folkman"


# --- resolution -----------------------------------------------------------------------------------

RECORDS = [
    RecordFacts(
        "doi:10.1000/a", ("doi:10.1000/a",), "Aria, M", 2017, "11", "959", ("J INFORMETR",), "bibliometrix: An R-tool"
    ),
    # two records with the same first author, year, volume and page, in two journals
    RecordFacts("wos:1", (), "ROOSEN, G", 1974, "52", "1903", ("CAN J PHYS",)),
    RecordFacts("wos:2", (), "ROOSEN, G", 1974, "52", "1903", ("J PHYS",)),
    RecordFacts(
        "scopus:chemo",
        (),
        "Carmichael J.",
        1987,
        "47",
        "936",
        ("Cancer Res.",),
        "Evaluation of a tetrazolium-based semiautomated colorimetric assay: assessment of chemosensitivity testing",
    ),
    RecordFacts("scopus:stats05", (), "Jemal A.", 2005, "55", "10", (), "Cancer statistics, 2005"),
]


@pytest.fixture(scope="module")
def resolver() -> ReferenceResolver:
    return ReferenceResolver(RECORDS, by_title=True)


def test_resolve_by_doi_then_fields(resolver: ReferenceResolver) -> None:
    assert resolver.resolve(parse_wos("Smith X, 1999, X, V1, P1, DOI 10.1000/A")) == ("doi:10.1000/a", "doi")
    assert resolver.resolve(parse_wos("Aria M, 2017, J INFORMETR, V11, P959")) == ("doi:10.1000/a", "fields")
    assert resolver.resolve(parse_wos("Aria M, 2017, J INFORMETR, V11, P960")) is None
    # a tie on the four fields is broken by the source, else nothing
    assert resolver.resolve(parse_wos("ROOSEN G, 1974, CAN J PHYS, V52, P1903")) == ("wos:1", "fields")
    assert resolver.resolve(parse_wos("ROOSEN G, 1974, OTHER J, V52, P1903")) is None


def test_resolve_by_title_needs_agreement(resolver: ReferenceResolver) -> None:
    def ref(title: str, year: int, author: str | None = None, page: str | None = None) -> CitedRef:
        return CitedRef(raw=title, key=None, first_author=author, year=year, title=title, page=page)

    chemo = "Evaluation of a tetrazolium-based semiautomated colorimetric assay: assessment of chemosensitivity testing"
    assert resolver.resolve(ref(chemo, 1987, "Carmichael, J.")) == ("scopus:chemo", "title")
    assert resolver.resolve(ref(chemo, 1988, "Carmichael, J.")) is None  # year
    assert resolver.resolve(ref(chemo, 1987, "Minna, J.D.")) is None  # first author
    radio = "Evaluation of a tetrazolium-based semiautomatic colorimetric assay: assessment of radiosensitivity"
    assert resolver.resolve(ref(radio, 1987, "Carmichael, J.", page="943")) is None  # similar title, another paper
    assert resolver.resolve(ref("Cancer statistics, 2004", 2004, "Jemal, A.")) is None
    assert ReferenceResolver(RECORDS).resolve(ref(chemo, 1987)) is None  # WoS: no title resolution


# --- works: variants joined, different works apart (loaders.refmatch) ---------------------------
# Every string below is a CR line of formats/wos/savedrecs.txt or a Scopus reference of
# formats/scopus/scopus_sample.csv; reference_key (one node per key before matching) gets each case wrong.


def _works(*lines: str) -> list[set[str]]:
    refs = [parse_wos(line) if not line.startswith("@") else parse_scopus(line[1:], current=True) for line in lines]
    matching = match_references(refs)
    return sorted(({raw for raw in group.strings} for group in matching.groups), key=lambda g: sorted(g))


def _one_work(*lines: str) -> bool:
    return len(_works(*lines)) == 1


COSTA_DE_BEAUREGARD = (  # PHYS REV D V7 P3555, written four ways: 12 + 2 + 1 + 1 citations
    "COSTADEB.O, 1973, PHYS REV D, V7, P3555",
    "BEAUREGARD OCD, 1973, PHYS REV D, V7, P3555",
    "DEBEAUREGARD OC, 1972, PHYS REV D, V7, P3555",
    "de Beauregard O., 1973, PHYS REV D, V7, P3555, DOI 10.1103/PhysRevD.7.3555",
)


def test_one_work_written_four_ways_is_one_work() -> None:
    assert len({reference_key(line) for line in COSTA_DE_BEAUREGARD}) == 4  # the old keying: four nodes
    assert _one_work(*COSTA_DE_BEAUREGARD)
    # and its label reads as analysts write it, from the most frequent string
    refs = [parse_wos(line) for line in COSTA_DE_BEAUREGARD for _ in range(12 if line.startswith("COSTADEB") else 1)]
    (group,) = match_references(refs).groups
    assert group.label == "Costadeb O, 1973, Phys Rev D 7:3555"
    assert group.rules == {"source+volume+page"} and sum(group.strings.values()) == 15


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("FEDEROV FI, 1955, DOKL AKAD NAUK SSSR, V105, P465", "FEDOROV FI, 1955, DOKL AKAD NAUK SSSR+, V105, P465"),
        ("MAZET A, 1971, CR ACAD SCI B PHYS, V273, P592", "MOZET A, 1971, CR ACAD SCI PARIS  B, V273, P592"),
        ("RICARD J, 1970, NOUV REV OPT, V1, P275", "RICHARD J, 1970, NOUV REV OPT, V1, P275"),
        ("GINSBURG VL, 1973, USP FIZ NAUK, V110, P309", "GINZBURG VL, 1973, USP FIZ NAUK+, V110, P309"),
        ("LOTSCH HKV, 1970, OPTIK, V32, P553", "LOTSCH HKV, 1971, OPTIK, V32, P553"),  # a year off by one
        ("HKV Lotsch, 1970, OPTIK, V32, P299", "LOTSCH HKV, 1971, OPTIK, V32, P299"),  # initials first
        ("BEAUREGARD OCD, 1969, COMPT REND A, V268, P302", "COSTADEBEAUREGA.O, 1969, CR ACAD SCI, V268, P302"),
        ("OGURA S, 1976, THIN SOLID FILMS, V34, P371", "OGURA S, 1986, THIN SOLID FILMS, V34, P371"),  # year typo
        ("MIDWINTE.JE, 1970, APPL PHYS LETT, V16, P198", "MINDWINTER JE, 1970, APPL PHYS LETT, V16, P198"),
        ("DEBEAURE.OC, 1965, PHYS REV, V139, P1443", "COSTABEAUREGARD O, 1965, PHYS REV, V139, P1443"),
        ("PAVAGEAU J, 1969, CR ACAD SCI B PHYS, V268, P737", "PAVAGEAU MJ, 1969, CR ACAD SCI PARIS, V268, P737"),
        ("VONFRAGSTEIN C, 1949, ANN PHYS-BERLIN, V4, P271", "Fragstein C.V., 1949, Annalen der Physik, V4"),
    ],
)
def test_spelling_variants_join(a: str, b: str) -> None:
    assert reference_key(a) != reference_key(b)  # the old keying: two nodes
    assert _one_work(a, b)


@pytest.mark.parametrize(
    "lines",
    [  # the first three: one node each under the old keying
        ("ROOSEN G, 1973, CR ACAD SCI B PHYS, V277, P135", "ROOSEN G, 1973, CR ACAD SCI B PHYS, V277, P147"),
        (
            "LOTSCH HKV, 1970, OPTIK, V32, P116",
            "LOTSCH HKV, 1970, OPTIK, V32, P189",
            "LOTSCH HKV, 1970, OPTIK, V32, P553",
        ),
        (
            "IMBERT C, 1972, PHYS REV D, V5, P787, DOI 10.1103/PhysRevD.5.787",
            "IMBERT C, 1972, PHYS REV D, V5, P878",
            "IMBERT C, 1972, PHYS REV D, V5, P191",
        ),
        # one volume and page, other journals and authors: two works
        ("GOOS F, 1947, ANN PHYS-BERLIN, V1, P333", "SMITH J, 1947, J CHEM PHYS, V1, P333"),
        # a year off by two, and the name written another way: no variant
        ("LOTSCH HKV, 1970, OPTIK, V32, P553", "LOTCH HKV, 1972, OPTIK, V32, P553"),
        # one volume and page, two authors and two cities of one journal (savedrecs.txt: ARTMANN 1948, GOOS 1949)
        ("ARTMANN K, 1948, ANN PHYS-BERLIN, V2, P87", "GOOS F, 1949, ANN PHYS-LEIPZIG, V2, P87"),
    ],
)
def test_different_works_stay_apart(lines: tuple[str, ...]) -> None:
    if lines[0].startswith(("ROOSEN", "IMBERT")) or lines[0].endswith("P116"):
        assert len({reference_key(line) for line in lines}) == 1  # the old keying: one node
    assert len(_works(*lines)) == len(lines)


def test_without_page_joins_only_an_unambiguous_work() -> None:
    pages = ("ROOSEN G, 1973, CR ACAD SCI B PHYS, V277, P135", "ROOSEN G, 1973, CR ACAD SCI B PHYS, V277, P147")
    assert len(_works(*pages, "ROOSEN G, 1973, CR ACAD SCI B PHYS")) == 3  # which of the two? neither
    assert _one_work(pages[0], "ROOSEN G, 1973, CR ACAD SCI B PHYS")


def test_scopus_full_source_meets_wos_abbreviation() -> None:
    scopus = (
        "@Aria M.; Cuccurullo C., Bibliometrix: An R tool for comprehensive science mapping analysis, "
        "Journal of Informetrics, 11, 4, pp. 959-975, (2017)"
    )
    assert _one_work("Aria M, 2017, J INFORMETR, V11, P959", scopus)
    assert _one_work("IMBERT C, 1972, PHYS REV D, V5, P787", "@Imbert C., Physical Review D, 5, pp. 787-796, (1972)")
    # two DOIs are two works, whatever the fields say
    assert len(_works("A B, 2001, NATURE, V1, P2, DOI 10.1000/a", "A B, 2001, NATURE, V1, P2, DOI 10.1000/b")) == 2


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (("phys", "rev", "d"), ("physical", "review", "d"), True),
        (("j", "phys", "a"), ("j", "phys", "b"), False),
        (("optik",), ("optik", "stuttgart"), True),
        (("nature",), ("science",), False),
        (("jama",), source_tokens("Journal of the American Medical Association"), True),
        (("p", "natl", "acad", "sci", "usa"), ("proceedings", "national", "academy", "sciences", "usa"), True),
    ],
)
def test_sources_compatible(a: tuple[str, ...], b: tuple[str, ...], same: bool) -> None:
    assert sources_compatible(a, b) is same


def test_source_tokens_and_iso4_phrases() -> None:
    assert source_tokens("Proceedings of the National Academy of Sciences of the United States of America") == (
        "pnas",
        "usa",
    )
    assert source_tokens("P NATL ACAD SCI USA") == ("pnas", "usa")
    assert source_tokens("C R ACAD SCI") == ("cr", "acad", "sci")
    assert field_alias("PHYS REV D", "7", "3555") == field_alias("Physical Review D", "7", "3555") == "ref:prd-v7-p3555"


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("COSTADEB.O", "BEAUREGARD OCD", True),
        ("DEBEAUREGARD OC", "de Beauregard O.", True),
        ("FEDEROV FI", "FEDOROV FI", True),
        ("ROOSEN G", "IMBERT C", False),
        ("Aria, M.", "Aria M", True),
        ("SMITH J", "SMYTHE J", False),
    ],
)
def test_surnames_compatible(a: str, b: str, same: bool) -> None:
    assert surnames_compatible(parse_surname(a), parse_surname(b)) is same


def test_matching_is_independent_of_order() -> None:
    lines = [*COSTA_DE_BEAUREGARD, "ROOSEN G, 1973, CR ACAD SCI B PHYS, V277, P135", "MAZET A, 1971, X, V1, P2"]
    assert _works(*lines) == _works(*reversed(lines))


def test_thesaurus_forces_joins_and_splits(tmp_path: Path) -> None:
    a, b = "ROOSEN G, 1973, CR ACAD SCI B PHYS, V277, P135", "ROOSEN G, 1973, CR ACAD SCI B PHYS, V277, P147"
    c = "RICHARD J, 1970, NOUV REV OPT, V1, P275"
    d = "RICARD J, 1970, NOUV REV OPT, V1, P275"
    path = tmp_path / "thesaurus.txt"
    path.write_text(
        f"label\treplace by\n{b}\t{a.lower()}\n# keep the misspelling apart\nricardj1970nouvrevopt\tricardj1970nouvrevopt\n",
        encoding="utf-8",
    )
    thesaurus = Thesaurus.read(path)
    refs = [parse_wos(x) for x in (a, b, c, d)]
    groups = {frozenset(g.strings) for g in match_references(refs, thesaurus=thesaurus).groups}
    assert groups == {frozenset([a, b]), frozenset([c]), frozenset([d])}
    assert len(match_references(refs).groups) == 3  # without it: ROOSEN apart, RICARD = RICHARD
    assert match_references(refs, thesaurus=thesaurus).group(b).rules == {"thesaurus"}
    (tmp_path / "bad.txt").write_text("no tab here\n", encoding="utf-8")
    with pytest.raises(IngestError, match=r"bad.txt, line 1: .* one tab"):
        Thesaurus.read(tmp_path / "bad.txt")


@pytest.mark.parametrize(
    ("args", "label"),
    [
        (("GOOS F", 1947, "ANN PHYS-BERLIN", "1", "333"), "Goos F, 1947, Ann Phys-Berlin 1:333"),
        (("COSTADEB.O", 1973, "PHYS REV D", "7", "3555"), "Costadeb O, 1973, Phys Rev D 7:3555"),
        (("HKV Lotsch", 1970, "OPTIK", "32", "299"), "Lotsch HKV, 1970, Optik 32:299"),
        (("Aria, M.", 2017, "Journal of Informetrics", None, None), "Aria M, 2017, Journal of Informetrics"),
        (("[Anonymous]", 2016, "R: A LANGUAGE", None, None), "2016, R: A Language"),
        (("Amponsah M.", 2024, "INT J MULTIDISCIPLIN", "6", None), "Amponsah M, 2024, Int J Multidisciplin 6"),
        ((None, None, None, None, None), None),
    ],
)
def test_reference_label(args: tuple[object, ...], label: str | None) -> None:
    assert reference_label(*args) == label  # type: ignore[arg-type]


def test_a_string_without_author_is_no_hub() -> None:
    """Scopus strings of one year with no author and no source (``(2000), National Cancer Institute. …, 25, 43``)
    agree with anything: they must not pull unrelated works of that year into one."""
    lines = (
        "@Albayrak, A., (2000) Bir Medeniyetin Kuramcisi, , Uludag Univ.",
        "@Putnam, R., (2000) Bowling Alone, , Simon & Schuster",
        "@(2000), National Cancer Institute. SEER Cancer Incidence Public-Use Database, 25, pp. 43",
        "@(2000) International Classification of Diseases for Oncology, , Fritz A, Percy C, Jack A, et al, eds.",
        "@(2000) ICD-O International Classification of Diseases for Oncology, , Fritz A et al (eds) WHO",
    )
    refs = [parse_scopus(line[1:], current=False) for line in lines]
    groups = {frozenset(g.strings) for g in match_references(refs).groups}
    assert len(groups) == 4 and frozenset(r.raw for r in refs[3:]) in groups
