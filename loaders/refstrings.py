"""Reference strings of free-form bibliographies (Crossref ``unstructured``, unarXive ``bib_entry_raw``,
a JSON Lines corpus's ``reference``) and Crossref's structured references, read as a :class:`CitedRef`.

Web of Science and Scopus write every reference one way (:mod:`loaders.citedrefs`); publishers and
LaTeX bibliography styles write them in many. :func:`parse_reference` reads the fields matching needs
(first author, year, source, volume, first page, DOIs) from the styles found in the samples:

====================  ============================================================================
style                 example (the part after the title is what gives source, volume and page)
====================  ============================================================================
physics / Nature      ``M. Hamanaka and K. Toda, Phys. Lett. A 316, 77 (2003)``;
                      ``Linial, M. Why aren't foamy viruses pathogenic? Trends Microbiol 8, 284–289 (2000).``
Elsevier              ``…, Amer. Jour. Math. 80 (1958), 198–218``
IEEE / Emerald        ``…,” Journal of Lightwave Technology, vol. 36, no. 15, pp. 3105–3114, 2018.``;
                      ``(2004), “…”,D-Lib Magazine, Vol. 10 No. 6, pp. 159-159``
ACL / NeurIPS         ``Keith J Holyoak. Parallel distributed processing: … Science, 236:992–997, 1987.``
APA / Cambridge / AAS ``CerlingT.E., … 1985. Low temperature alteration … Chemical Geology, 52, 281–293.``;
                      ``Kwon, W., Stephens, I. W., et al. 2019, , 879, 25`` (the journal macro lost)
====================  ============================================================================

* the **year**: a bracketed ``(2003)`` first, else the first stand-alone 18xx-20xx that is no page;
* the **first author**: ``Surname, I.`` / ``Surname I.I.`` (also glued, ``CerlingT.E.``) / ``I. Surname`` /
  ``First Last``, up to the first ``, ``, `` and ``, `` & `` or end of a sentence;
* the **source**: the words before the volume, back to the end of the title (a closing quote, a comma, or
  a sentence's full stop: a word that ends with ``.``, ``?`` or ``!`` and is no abbreviation: lower-case,
  or longer than :data:`ABBREVIATION_LETTERS` letters), never a year (AAS's lost journal macro leaves none).

A string from which neither author + year nor volume + page can be read gets no key (it names no work
that matching could tell apart from another) and is left unresolved, as before. The key of a parsed
string is :func:`loaders.citedrefs.reference_key` of its fields written as Web of Science writes them
(``Hamanaka M, 2003, PHYS LETT A, V316, P77``), so that one work gets one key in every source;
:func:`loaders.refmatch.field_alias` (``ref:<source initials>-v<volume>-p<page>``) is what meets a
work across loads.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from loaders.citedrefs import CitedRef, canonical_dois, reference_key
from loaders.refmatch import PARTICLES

ABBREVIATION_LETTERS = 6  # "Microbiol." is read as part of a source, "Scotland." as the end of a title
_DOI = re.compile(r"\b10\.\d{4,9}/[^\s\"<>]+")
_NOISE = re.compile(r"\{\{(?:formula|cite|ref|table|figure):[^}]*\}\}|https?://\S+|\[[^\]]*\]")
_PAREN_YEAR = re.compile(r"\((1[89]\d\d|20\d\d)[a-z]?\)")
_YEAR = re.compile(r"(?<![\d:–\-/.])(1[89]\d\d|20\d\d)[a-z]?(?![\d–\-])")
_YEAR_TOKEN = re.compile(r"\(?(1[89]\d\d|20\d\d)[a-z]?\)?[.,:;]?")
_PAGE = r"(?P<page>[A-Za-z]{0,2}\d+(?:[A-Z]\d+)?)"  # 77, A133, e0020112, 22A545
_VOLUME = r"(?P<volume>[A-Z]{0,2}\d+[A-Za-z]?)"
# The part after the source, each style's (the source is the text before the match: _source_before).
_TAILS = (
    re.compile(rf",? [Vv]ol\. ?{_VOLUME}(?:,? [Nn]o\. ?\w+)?(?:,? pp?\. ?{_PAGE})?"),  # IEEE, Emerald
    re.compile(rf",? {_VOLUME}(?: ?\(\w+\))?:{_PAGE}"),  # ACL: Science, 236:992–997
    re.compile(rf" {_VOLUME}(?: \(\w+\))?, {_PAGE}(?:[–-]\w+)? \((?:1[89]|20)\d\d\)"),  # physics: J 449, 291–300 (2001)
    re.compile(rf" {_VOLUME} \((?:1[89]|20)\d\d\),? {_PAGE}"),  # Elsevier: J 80 (1958), 198–218
    re.compile(rf", {_VOLUME}(?: ?\(\w+\))?, (?:pp?\. ?)?{_PAGE}(?:[–-]\w+)?(?:[.,]|$)"),  # APA: J, 52, 281–293.
    re.compile(rf" {_VOLUME}(?: ?\(\w+\))?, (?:pp?\. ?)?{_PAGE}(?:[–-]\w+)?\.?$"),  # …. J Vol, 77–80. (the end)
)
_INITIALS = r"(?:[A-Z]\.?-?\s?){1,4}"
_INITIALS_TOKEN = re.compile(r"(?:[A-Z]\.?-?){1,4}")  # one token of initials: M., W.C., JJ, S.-H.
_SURNAME_COMMA = re.compile(rf"([^\W\d][^,;&().]*?), ({_INITIALS}|[A-Z][a-z]+\.?)(?=[,;&]|\s|$)")  # Linial, M.
_SURNAME_GLUED = re.compile(r"((?:[A-Z][a-z'’]+[ -]?)*[A-Z][a-z'’]+)((?:[A-Z]\.)+)(?=[,\s])")  # CerlingT.E.
_SURNAME_INITIALS = re.compile(rf"([A-Z][\w'’-]+) ({_INITIALS})(?=[,(]|\s\(?\d|\s[A-Z][\w'’-]+ [A-Z]\.|$)")
_AUTHOR_END = re.compile(r",\s|\sand\s|\s&\s|;|(?<=[^\W\d]{2})\.\s|\s\(|\s(?:1[89]|20)\d\d")


def _clean(raw: str) -> str:
    return " ".join(_NOISE.sub(" ", raw).replace("\u00a0", " ").split())


def _year(text: str) -> int | None:
    if match := _PAREN_YEAR.search(text):
        return int(match.group(1))
    match = _YEAR.search(text)
    return int(match.group(1)) if match else None


def _first_author(text: str) -> str | None:
    """The first author as written (``Linial, M.``, ``Cerling T.E.``, ``M. Hamanaka``), or None."""
    text = text.lstrip()
    if not text or not text[0].isalpha():  # ", On the analyticity…", "—. 2009b": the previous entry's authors
        return None
    if match := _SURNAME_GLUED.match(text):
        return f"{match.group(1)} {match.group(2)}"
    if match := _SURNAME_COMMA.match(text):
        return f"{match.group(1).strip()}, {match.group(2).strip()}"
    if match := _SURNAME_INITIALS.match(text):
        return f"{match.group(1)} {match.group(2).strip()}"
    end = _AUTHOR_END.search(text)
    words = text[: end.start() if end else len(text)].strip(" .,").split()
    if not words or len(words) > 5 or not all(w[0].isupper() for w in words if w.lower() not in PARTICLES):
        return None
    if len(words) == 1:
        return words[0]
    # "M. Hamanaka", "Guido Boffetta", "W. A. Goddard III": the surname last (particles before it kept with it)
    cut = len(words) - 1
    if words[cut].rstrip(".") in ("Jr", "Sr", "II", "III", "IV") and cut > 1:
        cut -= 1
    while cut > 1 and words[cut - 1].lower() in PARTICLES:
        cut -= 1
    given = words[:cut]
    initials = "".join(f"{part[0]}." for word in given for part in word.split("-") if part and part[0].isalpha())
    return f"{' '.join(words[cut:])}, {initials}" if initials else " ".join(words)


def _is_sentence_end(word: str) -> bool:
    """Whether ``word`` closes the sentence before a source (a title's last word), not an abbreviation in it."""
    if word.endswith(("?", "!", "”", '"', ":")):
        return True
    if not word.endswith("."):
        return False
    letters = word.rstrip(".")
    return not letters or letters[0].islower() or len(letters) > ABBREVIATION_LETTERS


def _source_before(text: str) -> str | None:
    """The source's words at the end of ``text`` (everything after the title), or None."""
    text = text.rstrip(" ,")
    for mark in ("”", "“", '"'):  # the title's closing quote
        if mark in text:
            text = text[text.rindex(mark) + 1 :].lstrip(" ,")
    if ", " in text:  # the last part that is a name ("…”,Nucleic Acids Research, 38(Database)": not the issue)
        parts = text.split(", ")
        text = next((part for part in reversed(parts) if part[:1].isalpha()), parts[-1])
    words = text.split()
    taken: list[str] = []
    for word in reversed(words):
        if _YEAR_TOKEN.fullmatch(word) or (taken and _is_sentence_end(word)):
            break
        if word.lower() in ("in", "in:") and taken and taken[-1][:1].isupper():  # "…, in Proc. 14th IEEE …"
            break
        taken.append(word)
    source = " ".join(reversed(taken)).strip(" ,.:;")
    if not source or not any(ch.isalpha() for ch in source) or source.lower().startswith(("pp", "vol")):
        return None
    return source


def _wos_form(
    first_author: str | None, year: int | None, source: str | None, volume: str | None, page: str | None
) -> str:
    """The fields as a Web of Science ``CR`` string (``Hamanaka M, 2003, PHYS LETT A, V316, P77``): what the key is
    computed from, so that one work has one key whichever bibliography style cited it."""
    author = None
    if first_author:
        if "," in first_author:
            surname, _, rest = first_author.partition(",")
        else:  # "Cerling T.E.": the initials last
            tokens = first_author.split()
            cut = len(tokens)
            while cut > 1 and _INITIALS_TOKEN.fullmatch(tokens[cut - 1]):
                cut -= 1
            surname, rest = " ".join(tokens[:cut]), " ".join(tokens[cut:])
        initials = "".join(ch for ch in rest if ch.isupper())
        author = f"{surname.strip()} {initials}".strip()
    parts = [
        author or "[Anonymous]",
        str(year) if year is not None else "",
        (source or "").upper(),
        f"V{volume}" if volume else "",
        f"P{page}" if page else "",
    ]
    return ", ".join(part for part in parts if part)


def _ref(
    raw: str,
    first_author: str | None,
    year: int | None,
    source: str | None,
    volume: str | None,
    page: str | None,
    dois: tuple[str, ...],
    title: str | None = None,
) -> CitedRef:
    keyed = bool(dois) or (first_author is not None and year is not None) or (volume is not None and page is not None)
    key = reference_key(_wos_form(first_author, year, source, volume, page)) if keyed else None
    return CitedRef(raw, key, first_author, year, source, volume, page, dois, title)


def parse_reference(raw: str) -> CitedRef:
    """Read a free-form reference string (see the module docstring).

    >>> ref = parse_reference("M. Hamanaka and K. Toda, Phys. Lett. A 316, 77 (2003) [hep-th/0211148].")
    >>> ref.first_author, ref.year, ref.source, ref.volume, ref.page, ref.key
    ('Hamanaka, M.', 2003, 'Phys. Lett. A', '316', '77', 'hamanakam2003physletta')
    >>> ref = parse_reference("Linial, M. Why aren’t foamy viruses pathogenic? Trends Microbiol 8, 284–289 (2000).")
    >>> ref.first_author, ref.year, ref.source, ref.volume, ref.page
    ('Linial, M.', 2000, 'Trends Microbiol', '8', '284')
    """
    dois = canonical_dois(match.group(0).rstrip(".,;)]") for match in _DOI.finditer(raw))
    text = _clean(_DOI.sub(" ", raw))
    first_author = _first_author(text)
    year = _year(text)
    source = volume = page = None
    found = [(match.start(), match) for tail in _TAILS if (match := tail.search(text))]
    found = [(start, match) for start, match in found if match.group("volume") != str(year)]  # "…, 2008, pp. 153"
    if found:
        start, match = min(found, key=lambda pair: pair[0])
        volume, page = match.group("volume"), match.group("page")
        source = _source_before(text[:start])
    return _ref(raw, first_author, year, source, volume, page, dois)


def _text(value: object) -> str | None:
    return " ".join(value.split()) or None if isinstance(value, str) else None


def crossref_reference(entry: Mapping[str, Any]) -> CitedRef | None:
    """A Crossref ``reference`` entry without a DOI as a :class:`CitedRef`: its structured fields
    (``author`` the first author's surname, ``year``, ``journal-title``, else ``series-title`` / ``volume-title``
    for a book, ``volume`` without a ``vol.``, ``first-page``, ``article-title``), any that is missing read from
    its ``unstructured`` string (:func:`parse_reference`); None when it has neither.

    >>> ref = crossref_reference({"author": "Balian", "year": "1981", "journal-title": "C. R. Acad. Sci.",
    ...                           "volume": "292", "first-page": "1357", "article-title": "Un principe…"})
    >>> ref.first_author, ref.year, ref.source, ref.volume, ref.page, ref.key
    ('Balian', 1981, 'C. R. Acad. Sci.', '292', '1357', 'balian1981cracadsci')
    """
    raw = _text(entry.get("unstructured"))
    parsed = parse_reference(raw) if raw else None
    author = _text(entry.get("author"))
    year_text = _text(entry.get("year")) or ""
    year = int(match.group(0)) if (match := re.search(r"(1[89]|20)\d\d", year_text)) else None
    source = next((t for k in ("journal-title", "series-title", "volume-title") if (t := _text(entry.get(k)))), None)
    volume = _text(entry.get("volume"))
    volume = re.sub(r"^[Vv]ol\.?\s*", "", volume) or None if volume else None
    page = _text(entry.get("first-page"))
    title = _text(entry.get("article-title"))
    if not any((author, year, source, volume, page)) and parsed is None:
        return None
    if parsed is not None:
        author, year = author or parsed.first_author, year or parsed.year
        source, volume, page = source or parsed.source, volume or parsed.volume, page or parsed.page
    text = raw or _wos_form(author, year, source, volume, page)
    return _ref(text, author, year, source, volume, page, parsed.dois if parsed else (), title)


__all__ = ["ABBREVIATION_LETTERS", "crossref_reference", "parse_reference"]
