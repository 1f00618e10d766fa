"""Citation markers: every documented form, the false positives, masking; then the real ScisummNet citances."""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from loaders.markers import MASK, find_markers, mask_numeric, mask_target, surname


def _items(text: str) -> list[tuple[str, tuple[str, ...], bool, int | None, str]]:
    """(style, surnames, et_al, year, suffix) of every author–year item."""
    return [
        (m.style, i.surnames, i.et_al, i.year, i.suffix)
        for m in find_markers(text)
        if m.kind == "author_year"
        for i in m.items
    ]


# --- finding ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Brants (2000) showed", [("narrative", ("Brants",), False, 2000, "")]),
        ("as Och and Ney (2003) did", [("narrative", ("Och", "Ney"), False, 2003, "")]),
        ("Och & Ney (2003)", [("narrative", ("Och", "Ney"), False, 2003, "")]),
        ("Koehn et al. (2003)", [("narrative", ("Koehn",), True, 2003, "")]),
        ("Collins's (1999) parser", [("narrative", ("Collins",), False, 1999, "")]),
        ("Ge et al. [1998] present", [("narrative", ("Ge",), True, 1998, "")]),
        ("as shown by Koehn et al., 2003, phrases", [("bare", ("Koehn",), True, 2003, "")]),
        ("TnT (Brants, 2000)", [("parenthetical", ("Brants",), False, 2000, "")]),
        ("(Brill 1995)", [("parenthetical", ("Brill",), False, 1995, "")]),
        (
            "(Och and Ney, 2003; Koehn et al., 2003)",
            [("parenthetical", ("Och", "Ney"), False, 2003, ""), ("parenthetical", ("Koehn",), True, 2003, "")],
        ),
        (
            "(Brants 2000a, b)",
            [("parenthetical", ("Brants",), False, 2000, "a"), ("parenthetical", ("Brants",), False, 2000, "b")],
        ),
        (
            "(Och and Ney, 2000; 2003)",
            [("parenthetical", ("Och", "Ney"), False, 2000, ""), ("parenthetical", ("Och", "Ney"), False, 2003, "")],
        ),
        ("(e.g., Collins, 2002)", [("parenthetical", ("Collins",), False, 2002, "")]),
        ("(see Brants, 2000)", [("parenthetical", ("Brants",), False, 2000, "")]),
        ("(Brown, Pietra and Mercer, 1993)", [("parenthetical", ("Brown", "Pietra", "Mercer"), False, 1993, "")]),
        ("(de Marneffe et al., 2006)", [("parenthetical", ("de Marneffe",), True, 2006, "")]),
        ("as in de Marneffe et al., 2006", [("bare", ("de Marneffe",), True, 2006, "")]),
        ("(van den Bosch, 1999)", [("parenthetical", ("van den Bosch",), False, 1999, "")]),
        ("(Lopez de Lacalle, 2008)", [("parenthetical", ("Lopez de Lacalle",), False, 2008, "")]),
        ("(Màrquez et al., 2008)", [("parenthetical", ("Màrquez",), True, 2008, "")]),
        ("Callison-Burch et al. (2006)", [("narrative", ("Callison-Burch",), True, 2006, "")]),
        ("O'Connor (2010)", [("narrative", ("O'Connor",), False, 2010, "")]),
        ("(Spärck Jones, 1972)", [("parenthetical", ("Spärck Jones",), False, 1972, "")]),
        ("(Headden III et al., 2009)", [("parenthetical", ("Headden III",), True, 2009, "")]),
        ("(Brants, in press)", [("parenthetical", ("Brants",), False, None, "")]),
        ("Brants (forthcoming)", [("narrative", ("Brants",), False, None, "")]),
        # what PDF extraction does to citances
        ("(Lin et al, 2006)", [("parenthetical", ("Lin",), True, 2006, "")]),
        ("(Nivre et al,2006b)", [("parenthetical", ("Nivre",), True, 2006, "b")]),
        ("(Seneff,1992)", [("parenthetical", ("Seneff",), False, 1992, "")]),
        ("(Quirketal., 2005)", [("parenthetical", ("Quirk",), True, 2005, "")]),
        ("(Roarkand Charniak, 1998)", [("parenthetical", ("Roark", "Charniak"), False, 1998, "")]),
        ("user.15Charniak (1998) showed", [("narrative", ("Charniak",), False, 1998, "")]),
        ("Knight, 1999) showed", [("parenthetical", ("Knight",), False, 1999, "")]),  # cut before "("
        ("(May and Knight, 2007)", [("parenthetical", ("May", "Knight"), False, 2007, "")]),
    ],
)
def test_author_year_forms(text: str, expected: list[tuple[str, tuple[str, ...], bool, int | None, str]]) -> None:
    assert _items(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "in 2000 sentences",
        "In 2000 sentences were tagged",
        "the result (2000) alone",
        "Table 3 (2003 data)",
        "(Table 3, 2003)",
        "see Section 4 (2003)",
        "held in Paris, 2003",  # one name outside parentheses: a place and a year
        "(CoNLL 2003)",
        "(the ACL 2003 data)",
        "(May 2010)",
        "a 1990s system (Spring 2003)",
        "the interval [0, 1]",
        "the years 1999-2003",
    ],
)
def test_not_markers(text: str) -> None:
    assert find_markers(text) == []


def test_spans_point_into_the_text() -> None:
    text = "TnT (Brants, 2000) and Och and Ney (2003a, b)"
    markers = find_markers(text)
    assert [text[m.start : m.end] for m in markers] == ["(Brants, 2000)", "Och and Ney (2003a, b)"]
    assert [m.text for m in markers] == ["(Brants, 2000)", "Och and Ney (2003a, b)"]
    first = markers[0].items[0]
    assert text[first.ref_start : first.ref_end] == "Brants, 2000"
    assert text[first.start : first.end] == "2000"
    assert [text[i.start : i.end] for i in markers[1].items] == ["2003a", "b"]


@pytest.mark.parametrize(
    ("text", "numbers"),
    [("[12]", [12]), ("[3-5]", [3, 4, 5]), ("[3–5]", [3, 4, 5]), ("[3, 7, 12]", [3, 7, 12]), ("[2; 4-5]", [2, 4, 5])],
)
def test_numeric_forms(text: str, numbers: list[int]) -> None:
    (marker,) = find_markers(f"as shown in {text}.")
    assert (marker.kind, marker.text, [i.number for i in marker.items]) == ("numeric", text, numbers)


def test_surname_of_full_names() -> None:
    assert surname("Thorsten Brants") == "Brants"
    assert surname("Marie-Catherine de Marneffe") == "de Marneffe"
    assert surname("Hal Daumé III") == "Daumé"
    assert surname("Brants, Thorsten") == "Brants"
    assert surname("Lluís Màrquez") == "Màrquez"


# --- masking ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "surnames", "year", "masked"),
    [
        ("TnT (Brants, 2000) is fast", ["Brants"], 2000, "TnT ([CIT]) is fast"),
        ("(Och and Ney, 2003; Brants, 2000)", ["Brants"], 2000, "(Och and Ney, 2003; [CIT])"),
        ("(Och and Ney, 2003; Brants, 2000)", ["Och", "Ney"], 2003, "([CIT]; Brants, 2000)"),
        ("Brants (2000) showed", ["Brants"], 2000, "[CIT] showed"),
        ("Och and Ney (2003) align", ["Och", "Ney"], "2003", "[CIT] align"),
        ("Koehn et al. (2003) and Och (2003)", ["Koehn", "Och", "Marcu"], 2003, "[CIT] and Och (2003)"),
        ("as in Koehn et al., 2003, we", ["Koehn", "Och", "Marcu"], 2003, "as in [CIT], we"),
        ("(e.g., Collins, 2002)", ["Collins"], 2002, "(e.g., [CIT])"),
        ("(see Brants, 2000)", ["Brants"], 2000, "(see [CIT])"),
        ("(de Marneffe et al., 2006)", ["de Marneffe", "MacCartney", "Manning"], 2006, "([CIT])"),
        ("(Marneffe et al., 2006)", ["de Marneffe", "MacCartney", "Manning"], 2006, "([CIT])"),
        # accents and case do not matter, either way round
        ("(Màrquez et al., 2008)", ["Marquez", "Carreras", "Litkowski"], 2008, "([CIT])"),
        ("(Marquez et al., 2008)", ["MÀRQUEZ", "Carreras", "Litkowski"], 2008, "([CIT])"),
        ("(Brants 2000a, b)", ["Brants"], 2000, "([CIT])"),  # no letter given: both are the target
        ("(Brants 2000a, b)", ["Brants"], "2000b", "(Brants 2000a, [CIT])"),
        ("(Collins 1999, 2003)", ["Collins"], 2003, "(Collins 1999, [CIT])"),
        ("(Brants, in press)", ["Brants"], "in press", "([CIT])"),
        ("Brants (2000) and (Brants, 2000)", ["Brants"], 2000, "[CIT] and ([CIT])"),
    ],
)
def test_mask_target(text: str, surnames: list[str], year: int | str, masked: str) -> None:
    result = mask_target(text, surnames, year)
    assert result.text == masked
    assert result.ok and result.masked == masked.count(MASK)


def test_other_markers_stay_and_co_authors_pick_the_paper() -> None:
    text = "Nivre et al (2004) for Swedish and Nivre and Scholz (2004) for English"
    result = mask_target(text, ["Nivre", "Scholz"], 2004)
    assert result.text == "Nivre et al (2004) for Swedish and [CIT] for English"
    assert result.how == "marker"


def test_first_author_and_year_when_the_co_authors_disagree() -> None:
    result = mask_target("as in (Och, 2003)", ["Och", "Ney"], 2003)
    assert (result.text, result.how) == ("as in ([CIT])", "first_author")


def test_a_misspelt_surname_one_edit_away() -> None:
    result = mask_target("the tagger (Toutanova and Manning, 2000)", ["Toutanvoa", "Manning"], 2000)
    assert (result.text, result.how) == ("the tagger ([CIT])", "near_name")
    assert not mask_target("(Liu, 2004)", ["Lin"], 2004).ok  # three letters: too short to guess


def test_loose_match_for_glued_text() -> None:
    result = mask_target(
        "We adapt the reranker fromCharniak and Johnson (2005) for events", ["Charniak", "Johnson"], 2005
    )
    assert (result.text, result.how) == ("We adapt the reranker from[CIT] for events", "loose")
    garbled = mask_target("builds on Bunescu and Pas? ca (2006) and Mihalcea (2007)", ["Bunescu", "Pasca"], 2006)
    assert garbled.text == "builds on [CIT] and Mihalcea (2007)"


def test_a_co_author_of_another_paper_is_not_the_target() -> None:
    text = "classifying roles (Giuglea and Moschitti, 2004)"
    result = mask_target(text, ["Moschitti"], 2004)
    assert (result.ok, result.text) == (False, text)


def test_nothing_matched_says_so() -> None:
    text = "We tag with TnT (Brants, 2001) and (Och and Ney, 2003)."
    result = mask_target(text, ["Brants"], 2000)
    assert (result.ok, result.masked, result.how, result.text) == (False, 0, "none", text)
    assert result.reason == "no marker of Brants 2000 in the text (markers found: Brants 2001; Och 2003)"


def test_mask_target_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="surname"):
        mask_target("(Brants, 2000)", [], 2000)
    with pytest.raises(ValueError, match="not a year"):
        mask_target("(Brants, 2000)", ["Brants"], "n.d.")


@pytest.mark.parametrize(
    ("text", "number", "masked"),
    [
        ("as in [12].", 12, "as in [CIT]."),
        ("as in [3, 7, 12].", 7, "as in [3, [CIT], 12]."),
        ("as in [3-5].", 4, "as in [3, [CIT], 5]."),
        ("as in [3–5] and [4].", 4, "as in [3, [CIT], 5] and [CIT]."),
        ("as in [3-5].", 3, "as in [[CIT], 4, 5]."),
    ],
)
def test_mask_numeric(text: str, number: int, masked: str) -> None:
    result = mask_numeric(text, number)
    assert (result.text, result.ok) == (masked, True)


def test_mask_numeric_nothing_matched() -> None:
    result = mask_numeric("as in [3, 7].", 12)
    assert (result.ok, result.text, result.reason) == (False, "as in [3, 7].", "no numeric marker cites [12]")


# --- the real citances --------------------------------------------------------------------------


def _title_key(title: str) -> str:
    return re.sub(r"\W+", " ", title.lower()).strip()


@pytest.mark.shared_data
def test_masking_real_scisummnet_citances(data_dir: Path) -> None:
    """Share of ScisummNet citing sentences whose reference-paper marker is found and masked.

    The RP's first author and year come from the Anthology metadata by the RP's ACL id (the
    folder name); 7 SemEval-2007 RPs are filed under ids the Anthology renumbered (W07-20xx ->
    S07-10xx), and are found by the title in ``sid="0"`` of their Reference_XML.
    """
    papers: dict[str, dict[str, object]] = {}
    by_title: dict[str, dict[str, object]] = {}
    with gzip.open(data_dir / "anthology" / "papers.jsonl.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            papers[record["id"]] = record
            by_title.setdefault(_title_key(record["title"]), record)

    total, hows, failures = 0, Counter[str](), []
    for folder in sorted((data_dir / "scisumm" / "ScisummNet-2019").iterdir()):
        paper = papers.get(folder.name)
        if paper is None:
            xml = next((folder / "Reference_XML").glob("*.xml")).read_text(encoding="utf-8", errors="replace")
            title = re.search(r'<S sid="0"[^>]*>(.*?)</S>', xml)
            assert title is not None, folder.name
            paper = by_title[_title_key(title.group(1))]
        surnames = [surname(str(a)) for a in paper["authors"]]  # type: ignore[attr-defined]
        year = int(str(paper["year"]))
        for citance in json.loads((folder / "citing_sentences.json").read_text(encoding="utf-8")):
            total += 1
            result = mask_target(citance["raw_text"], surnames, year)
            hows[result.how] += 1
            if not result.ok:
                failures.append(f"{folder.name} {surnames[0]} {year}: {citance['raw_text'][:160]!r}")
    share = 1 - hows["none"] / total
    print(f"\nmasked {total - hows['none']} of {total} citances ({share:.2%}); by step: {dict(hows)}")
    for failure in failures[:10]:
        print("  not masked:", failure)
    assert total == 13_701
    assert share >= 0.98
    assert hows["marker"] / total >= 0.95  # most by a parsed marker, not by the fallbacks
