"""Cited references of Web of Science and Scopus exports: parsed, keyed, resolved to the export's records.

Both databases give a record's bibliography as strings, one per cited work:

* Web of Science (``CR``, one per line in the plain-text export, ``"; "``-separated in the
  tab-delimited one)::

      Aria M, 2017, J INFORMETR, V11, P959, DOI 10.1016/j.joi.2017.08.007
      [Anonymous], 2016, R: A Language and Environment for Statistical Computing
      Ceh M, 2018, ISPRS INT J GEO-INF, V7, DOI [10.3390/ijgi705168, 10.3390/ijgi7050168]
      BREAZEALE MA, COMMUNICATION

  first author (surname and initials), year, source (the J9 abbreviation for journals, a title
  for books), ``V`` volume, ``P`` first page, ``DOI`` one DOI or a bracketed list; any part may be
  missing. :func:`parse_wos`.
* Scopus (``References``, one column): the format changed around 2024. Older exports::

      Aria, M., Cuccurullo, C., bibliometrix: An R-tool for comprehensive science mapping analysis (2017) Journal of Informetrics, 11 (4), pp. 959-975.

  ``"; "`` between references, ``", "`` between authors, the year in brackets after the title.
  Current exports::

      Aria M.; Cuccurullo C., Bibliometrix: An R tool for comprehensive science mapping analysis, Journal of Informetrics, 11, 4, pp. 959-975, (2017)

  ``"; "`` between authors *and* between references, the year in brackets at the end, so a
  reference ends at ``(YYYY);`` (:func:`split_scopus_references`, as bibliometrix splits them).
  :func:`parse_scopus`.

Parsed into a :class:`CitedRef`: first author, year, source, volume, first page, DOIs, and (Scopus
only) the title.

**The reference key** (:func:`reference_key`) names a cited work that no id identifies, as the
stub Paper ``ref:<key>``. It is bibliometrix's own reduction of a cited-reference string
(``cocMatrix(Field = "CR")`` after ``convert2df``; bibliometrix 5.x, ``R/cocMatrix.R`` and
``R/convert2df.R``), followed by one coarsening step:

1. upper-case; remove ``[,``, ``[``, ``]``, `` .. `` and `` . ``; every run of whitespace one
   space; leading whitespace dropped;
2. drop everything after the first ``)`` (Scopus: everything after the year);
3. ``,`` and ``;`` become spaces;
4. cut before the first ``V`` followed by a digit (the volume), then before the first ``DOI ``;
5. every run of whitespace one space (bibliometrix stops here: ``ARIA M 2017 J INFORMETR``);
6. lower-case, and only letters and digits kept: ``ariam2017jinformetr``.

Step 6 makes writings that differ only in case, spacing or punctuation one key, where bibliometrix
keeps several labels: ``Toh M.L.`` / ``TOH ML``, ``Van Eck N. J.`` / ``Van Eck N.J.``,
``J PHYS-PARIS`` / ``J PHYS PARIS``, ``PLATELET FACTOR-4`` / ``PLATELET FACTOR 4`` (42 such merges
among the 14,476 labels of the WoS and Scopus samples, all of one work). Every bibliometrix label
maps to exactly one key, so a count per key is a sum of bibliometrix's counts. Like bibliometrix, a
string of 10 characters or fewer (after step 1) is no reference and gets no key; so is one whose
key is empty.

**Resolution** (:class:`ReferenceResolver`, against the export's own records only; what is
already in the store is graph/ingest's business):

1. **DOI**: any DOI of the reference equal to a record's DI / DOI;
2. **fields**: first-author surname + year + volume + first page equal to a record's first
   author (AU / Authors), PY / Year, VL / Volume, BP / Page start (surnames compared as their
   letters and digits, lower-cased, accents dropped: ``COSTADEBEAUREGARD O`` meets
   ``Costa de Beauregard, O``). Two records with the same four values: the one whose J9 / JI /
   source title equals the reference's source, else none;
3. **title** (Scopus, whose references carry titles): :class:`loaders.resolve.TitleIndex` over
   the records' titles (similarity >= 0.9), accepted only when the year is equal ("Cancer
   statistics, 2005" is not "Cancer statistics, 2004") and, where both sides know them, the
   first-author surname, volume and first page too (Carmichael et al. 1987, "…: assessment of
   radiosensitivity", pp. 943-946, is not their "…: assessment of chemosensitivity testing",
   pp. 936-942, in the same volume).

Then :mod:`loaders.refmatch` matches the strings as works (variants joined, different works kept apart);
a work that is no record is a stub (see :mod:`loaders._database_exports`). :func:`reference_label` writes
a work's label as bibliometrix and VOSviewer do.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from loaders.ids import REFERENCE_PREFIX, PaperIdError, author_key, canonical_paper_id
from loaders.resolve import TitleIndex

# bibliometrix's step 1 removals: leftmost-longest like R's TRE ("[," before "[", " .. " before " . ").
_BRACKETS_AND_DOTS = re.compile(r"\[,|\[|\]| \.\. | \. ")
_WHITESPACE = re.compile(r"\s+")
_AFTER_PAREN = re.compile(r"\).*")
_VOLUME_MARK = re.compile(r"V[0-9]")
_NOT_ALNUM = re.compile(r"[\W_]+")
MIN_CHARS = 10  # bibliometrix: "delete not congruent references", nchar(l) > 10 kept


def _upper(text: str) -> str:
    """Upper-case one character at a time, leaving those whose upper case is longer (ß) as R does."""
    if text.isascii():
        return text.upper()
    return "".join(up if len(up := ch.upper()) == 1 else ch for ch in text)


def bibliometrix_label(raw: str) -> str | None:
    """Steps 1-5 of the module docstring: the label bibliometrix gives the reference, or None.

    >>> bibliometrix_label("Aria M, 2017, J INFORMETR, V11, P959, DOI 10.1016/j.joi.2017.08.007")
    'ARIA M 2017 J INFORMETR '
    """
    text = _BRACKETS_AND_DOTS.sub("", _upper(raw))
    text = _WHITESPACE.sub(" ", text).lstrip()
    if len(text) <= MIN_CHARS:
        return None
    text = _AFTER_PAREN.sub(")", text).replace(",", " ").replace(";", " ")
    if match := _VOLUME_MARK.search(text):
        text = text[: match.start()]
    cut = text.find("DOI ")
    if cut >= 0:
        text = text[:cut]
    return _WHITESPACE.sub(" ", text)


def reference_key(raw: str) -> str | None:
    """The normalised reference string (module docstring, steps 1-6), or None when there is none.

    >>> reference_key("Aria M, 2017, J INFORMETR, V11, P959, DOI 10.1016/j.joi.2017.08.007")
    'ariam2017jinformetr'
    >>> reference_key("TOH ML, 2025, INT J ENV SCI") == reference_key("Toh M.L., 2025, INT J ENV SCI, V11, P1476")
    True
    """
    label = bibliometrix_label(raw)
    if label is None:
        return None
    return _NOT_ALNUM.sub("", label.lower()) or None


def surname_key(name: str | None) -> str | None:
    """A surname as its letters and digits, lower-cased, accents dropped (``Çelik`` -> ``celik``)."""
    if not name:
        return None
    key = author_key(name)
    return key.removeprefix("author:").replace(" ", "") if key else None


# An initials token of a "Surname Initials" name: ML, M.L., J, S.-H.
_INITIALS = re.compile(r"(?:[A-Z]\.?-?){1,4}")


def surname_of(name: str | None) -> str | None:
    """The surname of a "Surname, First", "Surname I." or "Surname IJ" name (trailing initials dropped).

    >>> surname_of("Costa de Beauregard O."), surname_of("Aria, M"), surname_of("Marburger J H")
    ('Costa de Beauregard', 'Aria', 'Marburger')
    """
    if not name:
        return None
    if "," in name:
        return name.split(",", 1)[0].strip() or None
    tokens = name.split()
    while len(tokens) > 1 and _INITIALS.fullmatch(tokens[-1]):
        tokens.pop()
    return " ".join(tokens) or None


def initials_first(name: str) -> str:
    """``"Yagai T."`` -> ``"T. Yagai"``: a "Surname Initials" name in the "First Last" order author keys use."""
    tokens = name.split()
    cut = len(tokens)
    while cut > 1 and _INITIALS.fullmatch(tokens[cut - 1]):
        cut -= 1
    return " ".join(tokens[cut:] + tokens[:cut])


def canonical_dois(texts: Iterable[str]) -> tuple[str, ...]:
    """``doi:…`` of each text that is a DOI (a ``DOI `` prefix and junk after a comma dropped), repeats removed."""
    found: list[str] = []
    for text in texts:
        candidate = text.strip().strip("[]").strip()
        while candidate.upper().startswith("DOI"):
            candidate = candidate[3:].lstrip(" :")
        candidate = candidate.rstrip(".;")
        try:
            doi = canonical_paper_id(candidate)
        except PaperIdError:
            continue
        if doi.startswith("doi:") and doi not in found:
            found.append(doi)
    return tuple(found)


@dataclass(frozen=True)
class CitedRef:
    """One cited-reference string and what was read from it; any part may be None."""

    raw: str
    key: str | None  # reference_key(raw): the stub id is "ref:<key>"
    first_author: str | None = None  # as written: "Aria M", "Aria, M."; None for [Anonymous]
    year: int | None = None
    source: str | None = None  # journal abbreviation (WoS) or source title (Scopus); a book's title in WoS
    volume: str | None = None
    page: str | None = None  # first page
    dois: tuple[str, ...] = ()  # "doi:…", in the order given
    title: str | None = None  # Scopus only

    @property
    def ref_id(self) -> str | None:
        return REFERENCE_PREFIX + self.key if self.key else None

    @property
    def surname(self) -> str | None:
        return surname_key(surname_of(self.first_author))


# --- labels -----------------------------------------------------------------------------------

_SMALL_WORDS = frozenset({"of", "the", "and", "for", "in", "on", "a", "an", "to", "de", "der", "und", "la", "le", "et"})
_WORD_PART = re.compile(r"[^\W\d_]+", re.UNICODE)


def _title_case(text: str) -> str:
    """``ANN PHYS-BERLIN`` -> ``Ann Phys-Berlin``; text already in mixed case stays as written."""
    if any(ch.islower() for ch in text):
        return text
    words = []
    for n, word in enumerate(text.lower().split()):
        if len(word) == 1:  # a series letter: PHYS REV D, COMPT REND A
            words.append(word.upper())
        elif n and word in _SMALL_WORDS:
            words.append(word)
        else:
            words.append(_WORD_PART.sub(lambda m: m.group(0).capitalize(), word))
    return " ".join(words)


def _author_label(first_author: str) -> str:
    """``GOOS F`` / ``Goos, F.`` / ``COSTADEB.O`` -> ``Goos F`` / ``Goos F`` / ``Costadeb O``: surname + initials."""
    text = " ".join(first_author.split())
    if "," in text:
        surname, _, rest = text.partition(",")
        initials = "".join(ch for ch in rest if ch.isupper()) or "".join(w[:1].upper() for w in rest.split())
    elif (match := re.fullmatch(r"([^\s.]{6,})\.([A-Za-z]{1,3})", text)) is not None:  # WoS's truncated COSTADEB.O
        surname, initials = match.group(1), match.group(2).upper()
    else:
        tokens = text.split()
        lead = 0
        if len(tokens) > 1 and not _INITIALS.fullmatch(tokens[-1]) and not tokens[-1].isupper():
            while lead < len(tokens) - 1 and _INITIALS.fullmatch(tokens[lead]):  # "HKV Lotsch"
                lead += 1
        cut = len(tokens)
        while cut > max(1, lead) and _INITIALS.fullmatch(tokens[cut - 1]):
            cut -= 1
        surname = " ".join(tokens[lead:cut])
        initials = "".join(ch for ch in "".join(tokens[:lead] + tokens[cut:]) if ch.isalpha())
    surname = _title_case(surname.strip())
    return f"{surname} {initials}".strip()


def reference_label(
    first_author: str | None,
    year: int | None,
    source: str | None,
    volume: str | None = None,
    page: str | None = None,
) -> str | None:
    """A cited work's label as bibliometrix and VOSviewer write it: ``surname initials, year, source volume:page``.

    Upper-case WoS text is title-cased, mixed-case Scopus text is kept; parts that are unknown are left
    out (a volume alone is written as it is, a page alone as ``p<page>``). None when nothing is known.

    >>> reference_label("GOOS F", 1947, "ANN PHYS-BERLIN", "1", "333")
    'Goos F, 1947, Ann Phys-Berlin 1:333'
    >>> reference_label("Aria, M.", 2017, "Journal of Informetrics", "11", "959")
    'Aria M, 2017, Journal of Informetrics 11:959'
    >>> reference_label(None, 2016, "R: A Language and Environment for Statistical Computing")
    '2016, R: A Language and Environment for Statistical Computing'
    """
    parts: list[str] = []
    if first_author and first_author.strip().lower() != "[anonymous]":
        parts.append(_author_label(first_author))
    if year is not None:
        parts.append(str(year))
    where = _title_case(" ".join(source.split())) if source else ""
    if volume and page:
        numbers = f"{volume}:{page}"
    elif volume:
        numbers = volume
    elif page:
        numbers = f"p{page}"
    else:
        numbers = ""
    tail = " ".join(x for x in (where, numbers) if x)
    if tail:
        parts.append(tail)
    return ", ".join(parts) or None


# --- Web of Science ---------------------------------------------------------------------------

_WOS_DOI = re.compile(r"(?:^|,\s*)DOI\s+(.*)$")
_WOS_PAGE = re.compile(r"[Pp]([A-Za-z]{0,3}\d[\w.-]*)")  # P959, PCH13, Pe1234
_WOS_VOLUME = re.compile(r"V\s?([A-Z]{0,2}\s?\d[\w.-]*)")  # V11, V16C, VA 43
_YEAR = re.compile(r"\d{4}")
_ANONYMOUS = "[anonymous]"


def parse_wos(raw: str) -> CitedRef:
    """Read a Web of Science ``CR`` string (see the module docstring).

    >>> ref = parse_wos("Smith J, 2001, NATURE, V409, P860, DOI 10.1038/35057062")
    >>> ref.first_author, ref.year, ref.source, ref.volume, ref.page, ref.dois, ref.key
    ('Smith J', 2001, 'NATURE', '409', '860', ('doi:10.1038/35057062',), 'smithj2001nature')
    """
    text = " ".join(raw.split())
    dois: tuple[str, ...] = ()
    if match := _WOS_DOI.search(text):
        dois = canonical_dois(match.group(1).split(","))
        text = text[: match.start()]
    parts = [part.strip() for part in text.split(",")]
    parts = [part for part in parts if part]
    page = volume = author = None
    year: int | None = None
    if len(parts) > 1 and (match := _WOS_PAGE.fullmatch(parts[-1])):
        page = match.group(1)
        parts.pop()
    if len(parts) > 1 and (match := _WOS_VOLUME.fullmatch(parts[-1])):
        volume = match.group(1)
        parts.pop()
    if parts and not _YEAR.fullmatch(parts[0]):
        author = parts.pop(0)
        if author.lower() == _ANONYMOUS:
            author = None
    if parts and _YEAR.fullmatch(parts[0]):
        year = int(parts.pop(0))
    return CitedRef(
        raw=raw,
        key=reference_key(raw),
        first_author=author,
        year=year,
        source=", ".join(parts) or None,
        volume=volume,
        page=page,
        dois=dois,
    )


# --- Scopus -----------------------------------------------------------------------------------

_SCOPUS_NEW_END = re.compile(r"\((\d{4})\)\s*$")
_SCOPUS_NEW_SPLIT = re.compile(r"(?<=\(\d{4}\))\s*;\s*")
_SCOPUS_YEAR = re.compile(r"\((\d{4})\)")
_SCOPUS_DOI = re.compile(r"\bDOI:?\s*(10\.\d{4,9}/[^\s,;]+)", re.IGNORECASE)
_SCOPUS_PAGES = re.compile(r"pp?\.\s*([^\s-]+)(?:\s*-\s*\S*)?")  # pp. 959-975, p. 2663
_NUMBER = re.compile(r"[A-Za-z]{0,5}\s?\d[\w.]*(?: \(.*\))?")  # 11, 11 (4), 26 SUPPL. 1, S 12
# "Surname, I." units at the start of an older Scopus reference: "Aria, M., Cuccurullo, C., "
_OLD_AUTHOR = re.compile(r"([^,()]+?), ((?:[A-Z][a-z]{0,2}\.\s?-?)+)(?:, |$)")
# one author of a current Scopus reference: "Aria M.", "Calin GA", "Yang S.-H.", "van Dijk L.V."
_NEW_AUTHOR = re.compile(r"[^,;()]+?\s(?:[A-Z][a-z]?\.?-?){1,4}")


def split_scopus_references(field_text: str) -> tuple[list[str], bool]:
    """The references of a ``References`` value, and whether it is the current format.

    Current format (the value ends with ``(YYYY)``): references end at ``(YYYY);``, since ``;``
    also separates authors. Older format: ``"; "`` separates references.
    """
    text = field_text.strip()
    if not text:
        return [], False
    if _SCOPUS_NEW_END.search(text):
        return [part.strip() for part in _SCOPUS_NEW_SPLIT.split(text) if part.strip()], True
    return [part.strip() for part in text.split("; ") if part.strip()], False


def parse_scopus(raw: str, *, current: bool) -> CitedRef:
    """Read one Scopus reference (``current``: the format with the year at the end).

    >>> ref = parse_scopus("Aria, M., Cuccurullo, C., bibliometrix: An R-tool for comprehensive science "
    ...     "mapping analysis (2017) Journal of Informetrics, 11 (4), pp. 959-975.", current=False)
    >>> ref.first_author, ref.year, ref.title, ref.source, ref.volume, ref.page
    ('Aria, M.', 2017, 'bibliometrix: An R-tool for comprehensive science mapping analysis', 'Journal of Informetrics', '11', '959')
    """
    text = " ".join(raw.split())
    parts = _parse_scopus_current(text) if current else _parse_scopus_older(text)
    return CitedRef(
        raw=raw,
        key=reference_key(raw),
        first_author=parts.first_author,
        year=parts.year,
        source=parts.source,
        volume=parts.volume,
        page=parts.page,
        dois=canonical_dois(_SCOPUS_DOI.findall(text)),
        title=parts.title,
    )


class _ScopusParts(NamedTuple):
    first_author: str | None
    year: int | None
    title: str | None
    source: str | None
    volume: str | None
    page: str | None


def _parse_scopus_current(text: str) -> _ScopusParts:
    """``Authors; …, Title, Source, Volume, Issue, pp. a-b, (YYYY)``."""
    year: int | None = None
    if match := _SCOPUS_NEW_END.search(text):
        year = int(match.group(1))
        text = text[: match.start()].rstrip(" ,")
    parts = [part.strip() for part in text.split(", ")]
    author = None
    names = [name.strip() for name in parts[0].split(";")] if parts else []
    if names and all(_NEW_AUTHOR.fullmatch(name) for name in names) and len(parts) > 1:
        author = names[0]
        parts.pop(0)
    page = None
    if parts and (match := _SCOPUS_PAGES.fullmatch(parts[-1])):
        page = match.group(1)
        parts.pop()
    numbers: list[str] = []
    while len(parts) > 1 and _NUMBER.fullmatch(parts[-1]):
        numbers.insert(0, parts.pop())
    volume = numbers[0] if numbers else None
    source = parts.pop() if len(parts) > 1 else None
    title = ", ".join(parts) or None
    return _ScopusParts(author, year, title, source, volume, page)


def _parse_scopus_older(text: str) -> _ScopusParts:
    """``Surname, I., …, Title (YYYY) Source, Volume (Issue), pp. a-b``."""
    year: int | None = None
    before, after = text, ""
    if match := _SCOPUS_YEAR.search(text):
        year = int(match.group(1))
        before, after = text[: match.start()].strip(" ,"), text[match.end() :].strip()
    authors: list[str] = []
    position = 0
    while match := _OLD_AUTHOR.match(before, position):
        authors.append(f"{match.group(1).strip()}, {match.group(2).strip()}")
        position = match.end()
    title = before[position:].strip(" ,") or None
    parts = [part.strip() for part in after.split(", ")] if after else []
    source = (parts.pop(0).strip(" .") or None) if parts else None
    volume = page = None
    for part in parts:
        if volume is None and (match := re.fullmatch(r"(\w+)(?: \(.*\))?", part)) and any(c.isdigit() for c in part):
            volume = match.group(1)
        elif page is None and (match := _SCOPUS_PAGES.match(part)):
            page = match.group(1).rstrip(".")
    if year is None:  # no bracketed year: keep the tail's "Source, Volume, pp. a-b" when it has one
        title = source = volume = page = None
        if match := _SCOPUS_NO_YEAR_TAIL.search(before):
            source, volume, page = match.group(1).strip(), match.group(2), match.group(3)
    return _ScopusParts(authors[0] if authors else None, year, title, source, volume, page)


# "…, Cancer disparities by race/ethnicity and socioeconomic status CA Cancer J Clin, 54, pp. 78-93": no year
_SCOPUS_NO_YEAR_TAIL = re.compile(r"(?:^|, )([^,]+), (\w+)(?: \([^)]*\))?, pp?\. ?(\w+)(?:\s*-\s*\S*)?\.?$")


# --- resolution -------------------------------------------------------------------------------


def source_key(text: str | None) -> str | None:
    """A journal name or abbreviation as lower-case letters and digits (``J. Informetr.`` -> ``jinformetr``)."""
    if not text:
        return None
    return _NOT_ALNUM.sub("", text.lower()) or None


def _field_key(text: str | None) -> str | None:
    return _NOT_ALNUM.sub("", text.lower()) or None if text else None


@dataclass(frozen=True)
class RecordFacts:
    """What resolution compares a reference with: one record of the export."""

    key: str  # the record's Paper id
    dois: tuple[str, ...] = ()  # "doi:…"
    first_author: str | None = None  # as written in AU / Authors: "Aria, M", "Aria M."
    year: int | None = None
    volume: str | None = None
    page: str | None = None  # first page
    sources: tuple[str, ...] = ()  # J9, JI, SO / source title, abbreviated source title
    title: str | None = None


@dataclass
class ReferenceResolver:
    """Finds the record of the export a :class:`CitedRef` names (see the module docstring).

    Args:
        records: the export's records.
        by_title: also resolve by title (Scopus references carry one; WoS references do not).
    """

    records: Sequence[RecordFacts]
    by_title: bool = False
    _by_doi: dict[str, str] = field(init=False, default_factory=dict)
    _by_fields: dict[tuple[str, int, str, str], list[RecordFacts]] = field(init=False, default_factory=dict)
    _facts: dict[str, RecordFacts] = field(init=False, default_factory=dict)
    _titles: TitleIndex | None = field(init=False, default=None)
    # Years, and (surname, year) pairs, a title match can agree with: most references fail this set
    # lookup, and the title index is not asked (its LSH query is the costly part of a load).
    _years: set[int] = field(init=False, default_factory=set)
    _years_without_author: set[int] = field(init=False, default_factory=set)
    _author_years: set[tuple[str, int]] = field(init=False, default_factory=set)

    def __post_init__(self) -> None:
        for record in self.records:
            self._facts[record.key] = record
            for doi in record.dois:
                self._by_doi.setdefault(doi, record.key)
            fields = self._fields(surname_key(surname_of(record.first_author)), record.year, record.volume, record.page)
            if fields is not None:
                self._by_fields.setdefault(fields, []).append(record)
            if record.year is not None and record.title:
                surname = surname_key(surname_of(record.first_author))
                self._years.add(record.year)
                if surname is None:
                    self._years_without_author.add(record.year)
                else:
                    self._author_years.add((surname, record.year))
        if self.by_title:
            self._titles = TitleIndex((r.key, r.title) for r in self.records if r.title)

    def _may_agree(self, ref: CitedRef) -> bool:
        """Whether some record has the reference's year and (when both are known) its first author."""
        if ref.year is None:
            return False
        if ref.surname is None:
            return ref.year in self._years
        return ref.year in self._years_without_author or (ref.surname, ref.year) in self._author_years

    @staticmethod
    def _fields(
        surname: str | None, year: int | None, volume: str | None, page: str | None
    ) -> tuple[str, int, str, str] | None:
        volume_key, page_key = _field_key(volume), _field_key(page)
        if surname is None or year is None or volume_key is None or page_key is None:
            return None
        return surname, year, volume_key, page_key

    def resolve(self, ref: CitedRef) -> tuple[str, str] | None:
        """``(record key, "doi" | "fields" | "title")``, or None when the reference names no record."""
        for doi in ref.dois:
            if doi in self._by_doi:
                return self._by_doi[doi], "doi"
        fields = self._fields(ref.surname, ref.year, ref.volume, ref.page)
        if fields is not None and (candidates := self._by_fields.get(fields)):
            if len(candidates) > 1:
                wanted = source_key(ref.source)
                candidates = [c for c in candidates if wanted in {source_key(s) for s in c.sources}]
            if len(candidates) == 1:
                return candidates[0].key, "fields"
        if self._titles is not None and ref.title and self._may_agree(ref):
            found = self._titles.resolve(ref.title)
            if found is not None:
                record = self._facts[found[0]]
                pairs = (
                    (ref.surname, surname_key(surname_of(record.first_author))),
                    (_field_key(ref.volume), _field_key(record.volume)),
                    (_field_key(ref.page), _field_key(record.page)),
                )
                if record.year == ref.year and all(a is None or b is None or a == b for a, b in pairs):
                    return record.key, "title"
        return None


__all__ = [
    "MIN_CHARS",
    "CitedRef",
    "RecordFacts",
    "ReferenceResolver",
    "bibliometrix_label",
    "canonical_dois",
    "initials_first",
    "parse_scopus",
    "parse_wos",
    "reference_key",
    "reference_label",
    "source_key",
    "split_scopus_references",
    "surname_key",
    "surname_of",
]
