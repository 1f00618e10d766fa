"""Citation markers in running text: find them, and mask the one that cites a given paper.

A recommendation query must not name the paper it asks for (``TnT (Brants, 2000)`` is not a
recommendation problem, ``TnT ([CIT])`` is), while the other markers of the sentence stay. So
:func:`mask_target` replaces only the marker, or the one item of a multi-citation group, that
refers to the target paper, matched by the first author's surname (accent- and case-insensitive)
and the year.

Author–year markers (:func:`find_markers`), three styles:

=================  ===============================================  ===========================
style              examples                                         masked (target Brants 2000)
=================  ===============================================  ===========================
``parenthetical``  ``(Brants, 2000)``, ``(Brants 2000a, b)``,        ``([CIT])``,
                   ``(Och and Ney, 2003; Brants, 2000)``,            ``(Och and Ney, 2003; [CIT])``,
                   ``(e.g., Collins, 2002)``, ``(see Brants, 2000)``  ``(see [CIT])``
``narrative``      ``Brants (2000)``, ``Och and Ney (2003)``,        ``[CIT] showed``
                   ``Koehn et al. (2003)``, ``Collins's (1999)``
``bare``           ``Koehn et al., 2003``, ``Och and Ney, 2003``      ``[CIT]``
                   (outside parentheses: only with *et al.* or two
                   or more surnames, so ``Paris, 2003`` is no marker)
=================  ===============================================  ===========================

A **surname** starts with an upper-case letter and may hold diacritics, hyphens and apostrophes
(``Màrquez``, ``Callison-Burch``, ``O'Connor``), lower-case particles before it (``de Marneffe``,
``van den Bosch``, ``Van Durme``) or inside it (``Lopez de Lacalle``); inside parentheses it may be
several capitalised words (``Spärck Jones``). Authors are one surname, two joined by ``and``/``&``,
a list ``A, B and C``, or a surname with ``et al`` (``et al.``, ``et al,``, ``et. al.``). A **year**
is 19xx or 20xx with an optional letter (``2000a``), later letters of the same author may stand
alone (``2000a, b``), further years of the same authors follow after ``,`` or ``;``
(``Och and Ney, 2000; 2003``); ``in press``, ``forthcoming`` and ``to appear`` stand for a year.
Not markers: ``in 2000 sentences`` (no surname), ``(2000)`` alone, ``Table 3 (2003 data)``,
capitalised words that are not names (``In 2000``, ``(CoNLL 2003)``, all-capitals words).

Numeric markers (kind ``numeric``): ``[12]``, ``[3-5]``, ``[3–5]``, ``[3, 7, 12]``, ``[2; 4]``;
numbers 1–999 (``[0, 1]`` is an interval, not a marker), ranges increasing.

Every :class:`Marker` lists its items (:class:`Item`), one per cited year (or number), each with the span
of its year token and of the reference it belongs to (authors and all their years). Masking
replaces a whole reference when all its years are the target (``Brants 2000a, b`` → ``[CIT]``
when the target is Brants 2000, suffix not given), and only the year token when the same authors
carry other years too (``(Collins 1999, 2003)`` → ``(Collins 1999, [CIT])``): the surname then
stays, because it names the other paper as well.

>>> mask_target("TnT (Brants, 2000) and (Och and Ney, 2003)", ["Brants"], 2000).text
'TnT ([CIT]) and (Och and Ney, 2003)'
>>> mask_target("Brants (2000) showed", ["Brants"], 2000).text
'[CIT] showed'
>>> mask_numeric("as in [3, 7, 12]", 7).text
'as in [3, [CIT], 12]'
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from loaders.ids import AUTHOR_PREFIX, author_key

MASK = "[CIT]"

# --- building blocks ------------------------------------------------------------------------------


def _char_class(predicate: str) -> str:
    """A regex character class of the BMP letters below U+2000 for which ``str.<predicate>()`` holds."""
    chars = [chr(c) for c in range(0x41, 0x2000) if getattr(chr(c), predicate)()]
    ranges: list[str] = []
    start = previous = ord(chars[0])
    for c in [ord(ch) for ch in chars[1:]] + [-1]:
        if c != previous + 1:
            ranges.append(re.escape(chr(start)) + (f"-{re.escape(chr(previous))}" if previous > start else ""))
            start = c
        previous = c
    return "[" + "".join(ranges) + "]"


_UPPER = _char_class("isupper")
_LETTER = r"[^\W\d_]"
# Capitalised words that precede a year without being anyone's name.
_STOPWORDS = (
    "A|An|And|As|At|About|After|Also|Around|Before|Between|But|By|Ch|Chapter|Cf|Circa|CoNLL|Conference|Corpus|"
    "Data|During|Edition|Eq|Equation|Eg|Ie|Fig|Figs|Figure|Figures|Following|For|From|Ii|If|In|Like|Note|"
    "Number|Of|On|Or|Proceedings|Release|Sec|Section|Sections|See|Senseval|SemEval|Since|Table|"
    "Tables|Task|The|Then|This|Through|Till|To|Track|Unlike|Until|Up|Version|Vol|Volume|With|"
    "Within|Without|Workshop|Year|Years|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
)
# Words that are dates alone ("(May 2010)", "in Spring, 2003") but surnames with co-authors
# ("(May and Knight, 2007)", "Winter et al."): a one-name item made of one of these is no marker.
_DATE_WORD = re.compile(
    r"january|february|march|april|may|june|july|august|september|october|november|december|"
    r"spring|summer|autumn|fall|winter|page",
    re.IGNORECASE,
)
_NOT_A_NAME = rf"(?!(?:{_STOPWORDS})(?!{_LETTER}|['’-]{_LETTER}))"
_ALL_CAPS = rf"(?!{_UPPER}+(?!{_LETTER}|['’]))"  # ACL, MUC, WSJ: acronyms, not surnames
# One capitalised word: Brants, Màrquez, Callison-Burch, Costa-jussà, O'Connor (not followed by a letter).
_WORD = rf"{_NOT_A_NAME}{_ALL_CAPS}{_UPPER}(?:{_LETTER}|['’-](?={_LETTER}))*"
_LEADING = (
    r"(?:[Dd]e|[Dd]el|[Dd]ella|[Dd]er|[Dd]en|[Dd]i|[Dd]a|[Dd]u|[Dd]os|[Dd]as|[Vv]an|[Vv]on|[Ll]e|[Ll]a|[Tt]er|Mc|Mac)"
)
_INNER = r"(?:de|del|della|der|den|da|dos|das|van|von|y|la|le)"  # Lopez de Lacalle, Ramón y Cajal
_GENERATION = r"(?:\s+(?:Jr\.?|Sr\.?|II|III|IV)(?![^\W\d_]))?"  # Headden III et al. (2009)
_SURNAME = rf"(?:{_LEADING}\s+)*{_WORD}(?:\s+{_INNER}(?:\s+(?:la|der|den))?\s+{_WORD})*{_GENERATION}"
# Inside parentheses the first surname may be several capitalised words: (Spärck Jones, 1972).
_FIRST_SURNAME_PAREN = rf"(?:{_LEADING}\s+)*{_WORD}(?:\s+(?:{_INNER}\s+)?{_WORD})*{_GENERATION}"
# "et al." and its variants, glued ones included: "et al,", "et. al.", "etal.", "Quirk et al2005".
_ET_AL = r"et\.?\s*al(?![^\W\d_])\.?"
# "and", "&", and the "and" that PDF extraction glues to the name before it: "(Roarkand Charniak, 1998)".
_AND = rf"(?:\s*,)?\s+and\s+|\s*&\s*|(?<=[a-z])and\s+(?={_UPPER})"
# Co-authors after the first surname: "and Ney", "et al."; in parentheses also a list ", Och and Ney"
# (outside, "Models, Kudo and Matsumoto (2000)" would make "Models" an author).
_MORE_AUTHORS = rf"(?:(?:{_AND}){_SURNAME}|\s*{_ET_AL})"
_MORE_AUTHORS_PAREN = rf"(?:(?:\s*,\s*{_SURNAME})*(?:{_AND}){_SURNAME}|\s*{_ET_AL})"
_YEAR = rf"(?<!\d)(?:19|20)\d\d(?:[a-z](?!{_LETTER}))?(?!\d)|(?i:in\s+press|forthcoming|to\s+appear)\b"
_LETTER_ONLY = r"[a-z](?=\s*(?:[,;)]|$))"  # the "b" of "2000a, b"
_YEARS = rf"(?:{_YEAR})(?:\s*,\s*(?:{_YEAR}|{_LETTER_ONLY})|\s*;\s*(?:{_YEAR}))*"


def _authors(first: str, more: str) -> str:
    return rf"(?P<authors>{first}{more}?)"


_NO_LETTER_BEFORE = r"(?<![^\W\d_])"  # a digit may precede: footnote marks glue to names ("3Ratnaparkhi")


# Brants (2000) | Och and Ney (2003a, b) | Koehn et al. (2003) | Collins's (1999, p. 3) | Ge et al. [1998]
# | a sentence cut after "Brill and Wu (1998, Sec"
_NARRATIVE = re.compile(
    rf"{_NO_LETTER_BEFORE}{_authors(_SURNAME, _MORE_AUTHORS)}(?:['’]s?)?\s*,?\s*"
    rf"[(\[]\s*(?P<years>{_YEARS})\s*(?:[,;:][^()\[\]]*)?(?:[)\]]|$)"
)
# Brants, 2000 | Brill 1995a | Och and Ney, 2000; 2003 | Seneff,1992 | Lin et al, 2006
_ITEM_PAREN = re.compile(
    rf"{_NO_LETTER_BEFORE}{_authors(_FIRST_SURNAME_PAREN, _MORE_AUTHORS_PAREN)}(?P<sep>\s*,\s*|\s+)(?P<years>{_YEARS})"
)
_ITEM_BARE = re.compile(
    rf"{_NO_LETTER_BEFORE}{_authors(_SURNAME, _MORE_AUTHORS)}(?P<sep>\s*,\s*|\s+)(?P<years>{_YEARS})"
)
# Innermost parentheses, or square brackets as some styles write author-year groups: [Wu 1997]; a
# sentence cut inside a group ("Knight, 1999) showed", "as in (Brants, 2000") has half a group.
_GROUP = re.compile(r"\(([^()]*)\)|\[([^\[\]]*)\]|^([^()]*)\)|\(([^()]*)$")
_YEAR_TOKEN = re.compile(rf"{_YEAR}|(?<=,)\s*{_LETTER_ONLY}")
_SPLIT_AUTHORS = re.compile(rf"\s*,\s*|{_AND}")
_TRAILING_ET_AL = re.compile(rf"\s*{_ET_AL}\s*$")
_POSSESSIVE = re.compile(r"['’]s?$")

_NUMBER = r"[1-9]\d{0,2}"
_NUMERIC = re.compile(rf"\[\s*{_NUMBER}(?:\s*[-–—]\s*{_NUMBER})?(?:\s*[,;]\s*{_NUMBER}(?:\s*[-–—]\s*{_NUMBER})?)*\s*\]")
_NUMERIC_PART = re.compile(rf"(?P<lo>{_NUMBER})(?:\s*[-–—]\s*(?P<hi>{_NUMBER}))?")


# --- results --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    """One cited work of a marker: one year of an author list, or one number of a numeric marker."""

    surnames: tuple[str, ...]  # as written, possessive dropped; () for numeric items
    et_al: bool  # the authors end with "et al."
    year: int | None  # None for "in press" / "forthcoming" / "to appear" and for numeric items
    suffix: str  # "a" of "2000a"; "" when none
    label: str  # the token as written: "2000a", "b", "in press", "12"
    start: int  # span of the year (or number) token in the text
    end: int
    ref_start: int  # span of the whole reference: its authors and all their years ("Brants 2000a, b")
    ref_end: int
    number: int | None = None  # the number of a numeric item


@dataclass(frozen=True)
class Marker:
    """A citation marker: a parenthetical group, a narrative citation, a bare citation or a numeric bracket."""

    start: int
    end: int
    text: str
    kind: Literal["author_year", "numeric"]
    style: Literal["parenthetical", "narrative", "bare", "numeric"]
    items: tuple[Item, ...]


@dataclass(frozen=True)
class MaskResult:
    """The text with the target's marker(s) masked, and how that went.

    ``masked`` is the number of spans replaced; 0 means the query is **not** masked and
    ``reason`` says why. ``how`` is ``"marker"`` (first surname, year and co-authors agree),
    ``"first_author"`` (first surname and year agree, the co-authors as written do not: ``Och,
    2003`` for Och and Ney 2003), ``"near_name"`` (the first surname is one letter off, the
    year and co-authors agree: metadata that misspells a name), ``"loose"`` (no marker parsed;
    the surname followed closely by the year, as in the glued ``fromCharniak and Johnson
    (2005)``), or ``"none"``.
    """

    text: str
    masked: int
    how: Literal["marker", "first_author", "near_name", "loose", "none"]
    spans: tuple[tuple[int, int], ...]  # replaced spans of the original text
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.masked > 0


# --- names and keys -------------------------------------------------------------------------------

_SUFFIXES = {"jr", "sr", "ii", "iii", "iv"}
_PARTICLES = {"de", "del", "della", "der", "den", "di", "da", "du", "dos", "das", "van", "von", "le", "la", "ter"}


def surname(name: str) -> str:
    """The surname of a person's name as the Anthology writes it ("First Last", or "Last, First").

    Lower-case particles before the last word belong to it; "Jr." and "III" do not.

    >>> surname("Marie-Catherine de Marneffe"), surname("Hal Daumé III"), surname("Brants, Thorsten")
    ('de Marneffe', 'Daumé', 'Brants')
    """
    parts = [p.strip() for p in name.split(",")]
    parts = [p for p in parts if p and p.lower().rstrip(".") not in _SUFFIXES]
    if len(parts) >= 2:  # "Last, First"
        return parts[0]
    words = (parts[0] if parts else name).split()
    while len(words) > 1 and words[-1].lower().rstrip(".") in _SUFFIXES:
        words.pop()
    if not words:
        return name.strip()
    last = len(words) - 1
    while last > 0 and words[last - 1] in _PARTICLES:
        last -= 1
    return " ".join(words[last:])


@lru_cache(maxsize=1 << 14)
def _keys(name: str) -> frozenset[str]:
    """Comparison keys of a surname: all its letters folded, and its last word folded.

    ``de Marneffe`` → {demarneffe, marneffe}; ``Màrquez`` → {marquez}. Two surnames match when
    their keys share one, so ``Marneffe`` matches ``de Marneffe``.
    """
    key = author_key(_POSSESSIVE.sub("", name.strip()))
    if key is None:
        return frozenset()
    words = key[len(AUTHOR_PREFIX) :].split()
    while len(words) > 1 and words[-1] in _SUFFIXES:  # Headden III
        words.pop()
    return frozenset({"".join(words), words[-1]})


def _same_surname(a: str, b: str) -> bool:
    return bool(_keys(a) & _keys(b))


def _near_surname(a: str, b: str) -> bool:
    """One edit apart (insert, delete, substitute, swap two neighbours), both at least 4 letters.

    Catches misspellings in metadata (``Kudoh``/``Kudo``, ``Toutanvoa``/``Toutanova``,
    ``Alsawi``/``Alshawi``); short names are left out because ``Lin``/``Liu`` are different people.
    """
    for x in _keys(a):
        for y in _keys(b):
            if min(len(x), len(y)) >= 4 and _one_edit(x, y):
                return True
    return False


def _one_edit(x: str, y: str) -> bool:
    if abs(len(x) - len(y)) > 1:
        return False
    if len(x) == len(y):
        diff = [i for i in range(len(x)) if x[i] != y[i]]
        return len(diff) == 1 or (
            len(diff) == 2 and diff[1] == diff[0] + 1 and x[diff[0]] == y[diff[1]] and x[diff[1]] == y[diff[0]]
        )
    short, long = sorted((x, y), key=len)
    i = next((k for k in range(len(short)) if short[k] != long[k]), len(short))
    return short[i:] == long[i + 1 :]


# --- finding --------------------------------------------------------------------------------------


def _parse_authors(text: str) -> tuple[tuple[str, ...], bool]:
    stripped = _TRAILING_ET_AL.sub("", text)
    et_al = stripped != text
    names = [_POSSESSIVE.sub("", n.strip()) for n in _SPLIT_AUTHORS.split(stripped)]
    return tuple(n for n in names if n), et_al


def _year_items(
    match: re.Match[str], offset: int, surnames: tuple[str, ...], et_al: bool, ref: tuple[int, int]
) -> list[Item]:
    """One :class:`Item` per year token of the match's ``years`` group."""
    items: list[Item] = []
    base = offset + match.start("years")
    year: int | None = None
    for token in _YEAR_TOKEN.finditer(match.group("years")):
        label = token.group().strip()
        start = base + token.end() - len(label)
        if label[0].isdigit():
            year, suffix = int(label[:4]), label[4:]
        elif len(label) == 1:  # a letter continuing the previous year: 2000a, b
            if year is None or not items or not items[-1].suffix:
                continue
            suffix = label
        else:
            year, suffix = None, ""
        items.append(Item(surnames, et_al, year, suffix, label, start, start + len(label), *ref))
    return items


def _author_year_item(match: re.Match[str], offset: int, ref: tuple[int, int]) -> list[Item]:
    surnames, et_al = _parse_authors(match.group("authors"))
    if _is_date(surnames, et_al):
        return []
    return _year_items(match, offset, surnames, et_al, ref)


def _is_date(surnames: tuple[str, ...], et_al: bool) -> bool:
    return len(surnames) == 1 and not et_al and _DATE_WORD.fullmatch(surnames[0]) is not None


def find_markers(text: str) -> list[Marker]:
    """Every citation marker of ``text``, in order; see the module docstring for the forms.

    >>> for m in find_markers("Och and Ney (2003) and (Brants 2000a, b)"):
    ...     print(m.style, m.text, [(i.surnames, i.year, i.suffix) for i in m.items])
    narrative Och and Ney (2003) [(('Och', 'Ney'), 2003, '')]
    parenthetical (Brants 2000a, b) [(('Brants',), 2000, 'a'), (('Brants',), 2000, 'b')]
    """
    markers: list[Marker] = []
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in taken)

    for match in _NARRATIVE.finditer(text):
        span = match.span()
        items = _author_year_item(match, 0, span)
        if items:
            markers.append(Marker(*span, match.group(), "author_year", "narrative", tuple(items)))
            taken.append(span)

    for group in _GROUP.finditer(text):
        inner = next(i for i in range(1, 5) if group.group(i) is not None)
        offset = group.start(inner)
        items = []
        for match in _ITEM_PAREN.finditer(group.group(inner)):
            ref = (offset + match.start(), offset + match.end())
            if free(*ref):
                items += _author_year_item(match, offset, ref)
        if items:
            markers.append(Marker(*group.span(), group.group(), "author_year", "parenthetical", tuple(items)))
            taken.append(group.span())

    for match in _ITEM_BARE.finditer(text):
        span = match.span()
        if not free(*span) or "," not in match.group("sep"):
            continue
        surnames, et_al = _parse_authors(match.group("authors"))
        if not et_al and len(surnames) < 2:  # "Paris, 2003" is a place and a year
            continue
        items = _year_items(match, 0, surnames, et_al, span)
        if items:
            markers.append(Marker(*span, match.group(), "author_year", "bare", tuple(items)))
            taken.append(span)

    markers += _numeric_markers(text)
    return sorted(markers, key=lambda m: m.start)


def _numeric_markers(text: str) -> list[Marker]:
    markers = []
    for match in _NUMERIC.finditer(text):
        items = []
        ok = True
        for part in _NUMERIC_PART.finditer(match.group()):
            lo, hi = int(part.group("lo")), int(part.group("hi") or part.group("lo"))
            if hi < lo or hi - lo > 100:  # [5-3] or [1-999]: not a run of references
                ok = False
                break
            start, end = match.start() + part.start(), match.start() + part.end()
            items += [Item((), False, None, "", str(n), start, end, start, end, n) for n in range(lo, hi + 1)]
        if ok and items:
            markers.append(Marker(*match.span(), match.group(), "numeric", "numeric", tuple(items)))
    return markers


# --- masking --------------------------------------------------------------------------------------


_TARGET_YEAR = re.compile(r"(?:19|20)\d\d[a-z]?")
_PENDING = re.compile(r"in\s+press|forthcoming|to\s+appear")


def _target_year(year: int | str) -> tuple[int | None, str, bool]:
    """(year, suffix, is_pending) from 2000, "2000", "2000b" or "in press"."""
    if isinstance(year, int):
        return year, "", False
    text = str(year).strip().lower()
    if _TARGET_YEAR.fullmatch(text):
        return int(text[:4]), text[4:], False
    if _PENDING.fullmatch(text):
        return None, "", True
    raise ValueError(f"year {year!r} is not a year (2000, '2000b') nor 'in press' / 'forthcoming' / 'to appear'")


def _year_matches(item: Item, year: int | None, suffix: str, pending: bool) -> bool:
    if pending:
        return item.year is None and not item.label[0].isdigit() and len(item.label) > 1
    return item.year == year and (not suffix or item.suffix == suffix)


def _coauthors_agree(item: Item, surnames: list[str]) -> bool:
    """Whether the item's author list is consistent with the target's: et al. for 3+, both names for 2."""
    if len(surnames) < 2:
        return not item.et_al and len(item.surnames) == 1
    if item.et_al:
        return len(surnames) >= 3
    if len(item.surnames) == 1:
        return False
    return len(item.surnames) == len(surnames) and _same_surname(item.surnames[1], surnames[1])


def _replace(text: str, spans: list[tuple[int, int]], mask: str) -> str:
    for start, end in sorted(spans, reverse=True):
        text = text[:start] + mask + text[end:]
    return text


def _spans_to_mask(markers: list[Marker], chosen: set[Item]) -> list[tuple[int, int]]:
    """Whole references where every year is chosen, else the chosen year tokens alone."""
    spans: list[tuple[int, int]] = []
    for marker in markers:
        refs: dict[tuple[int, int], list[Item]] = {}
        for item in marker.items:
            refs.setdefault((item.ref_start, item.ref_end), []).append(item)
        for ref, items in refs.items():
            picked = [i for i in items if i in chosen]
            if picked and len(picked) == len(items):
                spans.append(ref)
            else:
                spans += [(i.start, i.end) for i in picked]
    return spans


def mask_target(text: str, surnames: list[str], year: int | str, mask: str = MASK) -> MaskResult:
    """Replace the marker(s) of ``text`` that cite the target paper by ``mask``; others stay.

    Args:
        text: a citing sentence.
        surnames: the target's author surnames in order (:func:`surname` makes them from full
            names); the first decides, the others separate ``Och (2003)`` from ``Och and Ney (2003)``.
        year: the target's year; ``"2000b"`` also requires the letter, ``"in press"`` matches
            ``in press`` / ``forthcoming`` / ``to appear``.
        mask: what replaces the marker (default ``[CIT]``).

    Matching, in order, stopping at the first step that finds something: (1) markers whose first
    surname and year match and whose author list agrees with the target's (one author, two with
    the same second surname, *et al.* for three or more); (2) markers whose first surname and
    year match; (3) markers whose first surname is one edit away (both 4+ letters) and whose
    year and author list agree; (4) "loose": the surname (letters only, accents and case ignored, up to two
    spaces, hyphens or ``?`` between letters, no word boundary before it) followed within 40
    characters of name-like text by the year, for the glued or garbled citances that step 1
    cannot parse (``fromCharniak and Johnson (2005)``, ``Bunescu and Pas? ca (2006)``). Nothing
    found: the text unchanged, ``masked == 0`` and a ``reason``.

    >>> mask_target("(Och and Ney, 2003; Brants, 2000)", ["Brants"], 2000).text
    '(Och and Ney, 2003; [CIT])'
    >>> r = mask_target("We use TnT.", ["Brants"], 2000); (r.ok, r.reason)
    (False, 'no marker of Brants 2000 in the text (markers found: none)')
    """
    if not surnames or not surnames[0].strip():
        raise ValueError("mask_target needs the target's first author surname")
    target_year, suffix, pending = _target_year(year)
    markers = [m for m in find_markers(text) if m.kind == "author_year"]
    first = [
        item
        for marker in markers
        for item in marker.items
        if item.surnames
        and _same_surname(item.surnames[0], surnames[0])
        and _year_matches(item, target_year, suffix, pending)
    ]
    agreeing = [item for item in first if _coauthors_agree(item, surnames)]
    near = (
        []
        if first
        else [
            item
            for marker in markers
            for item in marker.items
            if item.surnames
            and _near_surname(item.surnames[0], surnames[0])
            and _year_matches(item, target_year, suffix, pending)
            and _coauthors_agree(item, surnames)
        ]
    )
    steps: tuple[tuple[Literal["marker", "first_author", "near_name"], list[Item]], ...] = (
        ("marker", agreeing),
        ("first_author", first),
        ("near_name", near),
    )
    for how, chosen in steps:
        if chosen:
            spans = _spans_to_mask(markers, set(chosen))
            return MaskResult(_replace(text, spans, mask), len(spans), how, tuple(sorted(spans)))
    if not pending and target_year is not None:
        spans = _loose_spans(text, surnames[0], target_year, suffix, markers)
        if spans:
            return MaskResult(_replace(text, spans, mask), len(spans), "loose", tuple(spans))
    found = "; ".join(_describe(m) for m in markers) or "none"
    label = f"{surnames[0]} {year}"
    return MaskResult(text, 0, "none", (), f"no marker of {label} in the text (markers found: {found})")


def _describe(marker: Marker) -> str:
    return ", ".join(f"{' '.join(i.surnames[:1])}{' et al.' if i.et_al else ''} {i.label}" for i in marker.items)


# --- loose matching ---------------------------------------------------------------------------------


def _fold(text: str) -> tuple[str, list[int]]:
    """``text`` with accents removed and case kept, and for each folded character its index in ``text``."""
    out: list[str] = []
    where: list[int] = []
    for index, ch in enumerate(text):
        if ch.isascii():
            out.append(ch)
            where.append(index)
            continue
        folded = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
        for c in folded or ch:
            out.append(c)
            where.append(index)
    return "".join(out), where


# Between the surname and the year: co-authors, "and", "et al", commas, garbled letters ("Pas? ca").
_LOOSE_MIDDLE = (
    r"(?:[\s,.&?'’-]|and(?![a-z])|et\.?\s*als?(?![a-z])|[A-Z][^\W\d_]*|[^\W\d_]{1,3}\?|(?<=\?)\s?[^\W\d_]{1,4}\b)*?"
)


_CO_AUTHOR_SEPARATOR = re.compile(r",|&|\band\b")


@lru_cache(maxsize=4096)
def _loose_pattern(surname_text: str, year: int, suffix: str) -> re.Pattern[str] | None:
    key = author_key(surname_text)
    if key is None:
        return None
    letters = [c for c in key[len(AUTHOR_PREFIX) :] if c != " "]
    name = r"[\s?'’-]{0,2}".join(re.escape(c) for c in letters)
    year_text = rf"{year}{suffix or '[a-z]?'}(?!\d)"
    return re.compile(
        rf"(?:(?<![^\W\d_])|(?=[A-Z]))(?i:{name})(?:['’]s?)?(?P<middle>{_LOOSE_MIDDLE})(?:(?P<open>[(\[])\s*{year_text}[^()\[\]]{{0,40}}[)\]]|{year_text})"
    )


def _loose_spans(text: str, surname_text: str, year: int, suffix: str, markers: list[Marker]) -> list[tuple[int, int]]:
    """Spans where the surname is followed closely by the year, outside the references of ``markers``.

    A match starting inside a parsed reference after a co-author separator is a co-author of
    another paper (``Giuglea and Moschitti, 2004`` when the target is Moschitti 2004), not the
    target; one glued to the word before it (``FollowingBudanitsky and Hirst (2006)``, parsed
    with the surname ``FollowingBudanitsky``) is the target.
    """
    pattern = _loose_pattern(surname_text, year, suffix)
    if pattern is None:
        return []
    refs = {(i.ref_start, i.ref_end) for m in markers for i in m.items}
    folded, where = _fold(text)
    spans = []
    for match in pattern.finditer(folded):
        if len(match.group("middle")) > 40:
            continue
        start, end = where[match.start()], where[match.end() - 1] + 1
        if any(s < start < e and _CO_AUTHOR_SEPARATOR.search(text, s, start) for s, e in refs):
            continue
        spans.append((start, end))
    return spans


# --- numeric --------------------------------------------------------------------------------------


def mask_numeric(text: str, number: int, mask: str = MASK) -> MaskResult:
    """Replace reference ``number`` in the numeric markers of ``text`` by ``mask``.

    A marker citing only that number becomes ``mask``; in a group the number is replaced and a
    range holding it is written out (``[3-5]`` with 4 → ``[3, [CIT], 5]``), so the other numbers stay.

    >>> mask_numeric("see [12] and [3-5]", 12).text, mask_numeric("see [3-5]", 4).text
    ('see [CIT] and [3-5]', 'see [3, [CIT], 5]')
    """
    spans: list[tuple[int, int]] = []
    pieces: list[tuple[int, int, str]] = []
    for marker in _numeric_markers(text):
        numbers = [i.number for i in marker.items]
        if number not in numbers:
            continue
        if len(numbers) == 1:
            pieces.append((marker.start, marker.end, mask))
        else:
            parts = _NUMERIC_PART.finditer(marker.text)
            rewritten = []
            for part in parts:
                lo, hi = int(part.group("lo")), int(part.group("hi") or part.group("lo"))
                if lo <= number <= hi:
                    rewritten += [mask if n == number else str(n) for n in range(lo, hi + 1)]
                else:
                    rewritten.append(part.group())
            pieces.append((marker.start, marker.end, "[" + ", ".join(rewritten) + "]"))
        spans.append((marker.start, marker.end))
    if not pieces:
        return MaskResult(text, 0, "none", (), f"no numeric marker cites [{number}]")
    out = text
    for start, end, new in sorted(pieces, reverse=True):
        out = out[:start] + new + out[end:]
    return MaskResult(out, len(pieces), "marker", tuple(spans))


__all__ = ["MASK", "Item", "Marker", "MaskResult", "find_markers", "mask_numeric", "mask_target", "surname"]
