"""Cited references matched as works: variants of one work joined, different works kept apart, every join explained.

A cited-reference string (:mod:`loaders.citedrefs`) is parsed into first author, year, source, volume,
first page and DOIs. Works are the groups of a union-find over the distinct strings (and the export's
own records), joined by these rules, in this order:

1. ``doi``: strings that give one DOI;
2. ``record``: a string the resolver (:class:`loaders.citedrefs.ReferenceResolver`) matched to a record
   of the export joins that record;
3. ``source+volume+page`` (CiteSpace's and bibliometrix's practice): strings (and records) with equal
   volume and first page join when their sources are one source written two ways
   (:func:`sources_compatible`: ``PHYS REV D`` = ``Physical Review D`` = ``Phys. Rev. D``), their years
   differ by at most one (by more only when author and source are written identically: a typo in the
   year), and their first authors are one name written two ways
   (:func:`surnames_compatible`: ``FEDEROV``/``FEDOROV``, ``DEBEAUREGARD``/``de Beauregard``/``BEAUREGARD``,
   WoS's truncated ``COSTADEB.O``). Two pages of one volume are never joined by this rule;
4. ``author+year+source``: strings without volume or page join one another when the years are equal and
   author and source agree as in rule 3; such a string joins a group of rule 3 only when exactly one
   group agrees with it (``ROOSEN G, 1973, CR ACAD SCI B PHYS`` with no page names none of the two
   ROOSEN 1973 works of that volume, and stays apart);
5. ``thesaurus``: a VOSviewer-style thesaurus file (``label<TAB>replace by``) forces joins (the
   strings matching ``label`` join those matching ``replace by``) and splits (``replace by`` equal to
   ``label``: the strings it names take part in no rule above and form their own work).

A union never puts two DOIs or two records into one work (the data disagree; two works are safer
than one wrong one). A thesaurus ``label`` (and ``replace by``) names a string by its text (whitespace
collapsed, case ignored), by its reference key (:func:`loaders.citedrefs.reference_key`) or by its
label (:func:`loaders.citedrefs.reference_label`).

Everything here is deterministic: the same strings (in any order) give the same groups.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from graph.errors import IngestError
from loaders.citedrefs import CitedRef, RecordFacts, reference_key, reference_label, surname_key

RULES = ("doi", "record", "source+volume+page", "author+year+source", "thesaurus")

# Name particles written before a surname, which exports keep, drop or glue on ("de Beauregard",
# "DEBEAUREGARD", "BEAUREGARD"); longest first so that "della" is tried before "de".
PARTICLES = tuple(
    sorted(
        (
            "de",
            "da",
            "das",
            "dos",
            "di",
            "del",
            "della",
            "der",
            "den",
            "du",
            "des",
            "la",
            "le",
            "van",
            "von",
            "vander",
            "vonder",
            "ten",
            "ter",
            "el",
            "al",
            "mac",
            "mc",
            "st",
            "san",
            "dal",
            "dei",
            "degli",
            "lo",
        ),
        key=len,
        reverse=True,
    )
)
# Words that full source titles have and abbreviations drop ("Journal of the American ...").
_SOURCE_STOPWORDS = frozenset(
    {
        "of",
        "the",
        "and",
        "for",
        "in",
        "on",
        "an",
        "to",
        "der",
        "die",
        "das",
        "und",
        "fur",
        "fuer",
        "de",
        "la",
        "le",
        "les",
        "des",
        "du",
        "et",
        "di",
        "l",
    }
)
# Phrases of full source titles that ISO 4 (the List of Title Word Abbreviations) and the WoS J9
# abbreviations write as one short word that is no abbreviation of any single word of the phrase
# ("PROC NATL ACAD SCI USA" = "... of the United States of America"); both sides are rewritten to it.
# Every other LTWA abbreviation keeps the word's first letter and a subsequence of its letters
# ("phys"/"physical", "natl"/"national", "ztschr"/"zeitschrift"), which :func:`_abbreviates` accepts
# without a table.
ISO4_PHRASES: dict[tuple[str, ...], str] = {
    ("united", "states", "america"): "usa",
    ("united", "states"): "us",
    ("united", "kingdom"): "uk",
    ("great", "britain"): "gb",
    ("comptes", "rendus"): "cr",
    ("c", "r"): "cr",
    ("compt", "rend"): "cr",
    ("compt", "rendus"): "cr",
    ("ussr",): "sssr",
    ("proceedings", "national", "academy", "sciences"): "pnas",
    ("p", "natl", "acad", "sci"): "pnas",
    ("proc", "natl", "acad", "sci"): "pnas",
    ("ieee",): "ieee",
    ("institute", "electrical", "electronics", "engineers"): "ieee",
}
_TOKEN = re.compile(r"[^\W_]+")
_TRUNCATED = re.compile(r"([A-Za-z'-]{6,})\.([A-Za-z]{1,3})")  # WoS's 8-letter truncation: COSTADEB.O


def _fold(text: str) -> str:
    return surname_key(text) or ""


# --- first authors ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Surname:
    """A first author's surname as matching compares it."""

    key: str  # letters and digits, lower-cased, accents dropped: "debeauregard"
    truncated: bool = False  # WoS cut it (``COSTADEB.O``): only its start is known

    @property
    def forms(self) -> tuple[str, ...]:
        """The key and the key without each leading particle it can start with (``debeauregard`` ->
        ``beauregard``; ``costadebeauregard`` -> itself only: "costa" is no particle)."""
        forms = [self.key]
        rest = self.key
        while True:
            particle = next((p for p in PARTICLES if rest.startswith(p) and len(rest) - len(p) >= 4), None)
            if particle is None:
                break
            rest = rest[len(particle) :]
            forms.append(rest)
        return tuple(forms)


def parse_surname(first_author: str | None) -> Surname | None:
    """The surname of a first author as WoS and Scopus write it (``"Aria M"``, ``"Aria, M."``,
    ``"de Beauregard O."``, ``"COSTADEB.O"``), or None (no author, ``[Anonymous]``)."""
    if not first_author:
        return None
    text = first_author.strip()
    if match := _TRUNCATED.fullmatch(text):
        key = _fold(match.group(1))
        return Surname(key, truncated=True) if key else None
    surname = text.split(",", 1)[0] if "," in text else " ".join(_surname_tokens(text.split()))
    key = _fold(surname)
    return Surname(key) if key else None


_INITIALS = re.compile(r"(?:[A-Z]\.?-?){1,4}")


def _surname_tokens(tokens: list[str]) -> list[str]:
    """The surname's tokens of "Surname Initials" (``LOTSCH HKV``) or "Initials Surname" (``HKV Lotsch``)."""
    if len(tokens) > 1 and not _INITIALS.fullmatch(tokens[-1]) and not tokens[-1].isupper():
        while len(tokens) > 1 and _INITIALS.fullmatch(tokens[0]):
            tokens = tokens[1:]
        return tokens
    while len(tokens) > 1 and _INITIALS.fullmatch(tokens[-1]):
        tokens = tokens[:-1]
    return tokens


def edit_distance(a: str, b: str, limit: int) -> int:
    """Levenshtein distance of ``a`` and ``b``, or ``limit + 1`` once it is known to exceed ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


def surnames_compatible(a: Surname | None, b: Surname | None) -> bool:
    """Whether two surnames can be one person's name written two ways.

    Unknown on either side: yes (the other fields decide). Else yes when some particle-stripped forms
    (:attr:`Surname.forms`) are equal, or differ by one edit per five letters (``FEDEROV``/``FEDOROV``,
    ``GINSBURG``/``GINZBURG``, ``RICARD``/``RICHARD``: one edit); a truncated name agrees with a name
    that starts like it, also across a particle (``COSTADEB`` = ``costa de b…`` and ``BEAUREGARD``).
    """
    if a is None or b is None:
        return True
    for x in a.forms:
        for y in b.forms:
            if x == y:
                return True
            limit = max(1, min(len(x), len(y)) // 5)
            if min(len(x), len(y)) >= 4 and edit_distance(x, y, limit) <= limit:
                return True
    return any(short.truncated and _truncation_agrees(short.key, other.forms) for short, other in ((a, b), (b, a)))


def _truncation_agrees(cut: str, forms: Sequence[str]) -> bool:
    """A truncated surname (``MIDWINTE``, ``DEBEAURE``, ``COSTADEB``) against the forms of a full one."""
    for form in forms:
        # its start, with one slip (MIDWINTE.JE / MINDWINTER JE)
        if any(edit_distance(cut, form[:k], 1) <= 1 for k in range(len(cut) - 1, len(cut) + 2)):
            return True
    stems = [cut] + [cut[len(p) :] for p in PARTICLES if cut.startswith(p) and len(cut) - len(p) >= 4]
    if any(stem in form for stem in stems for form in forms):  # DEBEAURE.OC / COSTABEAUREGARD O
        return True
    for i in range(1, len(cut)):  # "costadeb": "costa" + "de" + "b…"
        for particle in PARTICLES:
            if cut.startswith(particle, i):
                rest = cut[i + len(particle) :]
                if rest and any(form.startswith(rest) for form in forms):
                    return True
    return False


# --- sources ------------------------------------------------------------------------------------


def source_tokens(source: str | None) -> tuple[str, ...]:
    """A source's words, lower-cased, accents dropped, the stopwords of full titles removed, runs of
    single letters glued (``C R ACAD SCI`` -> ``cr acad sci``)."""
    if not source:
        return ()
    words = [_fold(w) for w in _TOKEN.findall(source)]
    words = [w for w in words if w and w not in _SOURCE_STOPWORDS]
    for phrase, short in ISO4_PHRASES.items():  # longest phrases are listed first
        n = len(phrase)
        i = 0
        while i + n <= len(words):
            if tuple(words[i : i + n]) == phrase:
                words[i : i + n] = [short]
            i += 1
    glued: list[str] = []
    for word in words:
        if len(word) == 1 and glued and len(glued[-1]) == 1 and glued[-1].isalpha() and word.isalpha():
            glued[-1] += word
        else:
            glued.append(word)
    return tuple(glued)


def _abbreviates(short: str, full: str) -> bool:
    """``short`` is ``full`` or an abbreviation of it: same first letter, its letters a subsequence
    (``phys``/``physical``, ``natl``/``national``, ``informetr``/``informetrics``); phrases of
    :data:`ISO4_PHRASES` were rewritten before."""
    if short == full:
        return True
    if not short or not full or short[0] != full[0] or len(short) > len(full):
        return False
    if short.isdigit() or full.isdigit():
        return False
    it = iter(full)
    return all(ch in it for ch in short)


def sources_compatible(a: Sequence[str], b: Sequence[str], *, lenient: bool = False) -> bool:
    """Whether two sources (as :func:`source_tokens`) are one source, abbreviated or in full.

    The words of the two sides are aligned in order, a pair agreeing when one abbreviates the other
    (:func:`_abbreviates`), as a longest common subsequence; ``m`` pairs agree and ``u`` words of
    either side are left over. One source when ``m >= 1`` and ``u <= max(1, m // 2)``:
    ``PHYS REV D`` = ``Physical Review D`` (u = 0), ``OPTIK`` = ``OPTIK STUTTGART`` (m = 1, u = 1),
    ``CR ACAD SCI B PHYS`` = ``CR ACAD SCI PARIS B`` (m = 4, u = 2), but ``J PHYS A`` is not
    ``J PHYS B`` (m = 2, u = 2). A single word that is the initials of the other side's words (at least
    three) is its acronym: ``JAMA`` = ``Journal of the American Medical Association``. Unknown on either side: yes.

    ``lenient`` (used where volume and first page already agree): every word of the shorter side agreeing,
    or ``u <= m + 1``, suffices
    (``CR ACAD SCI B PHYS`` = ``CR ACAD SCI PARIS``, ``COMPTES RENDUS B`` = ``CR ACAD SCI B PHYS``).
    """
    if not a or not b:
        return True
    if "".join(a) == "".join(b):
        return True
    for one, other in ((a, b), (b, a)):  # an acronym: JAMA = Journal of the American Medical Association
        if len(one) == 1 and len(other) >= 3 and one[0] == "".join(word[0] for word in other):
            return True
    rows, cols = len(a), len(b)
    best = [[0] * (cols + 1) for _ in range(rows + 1)]
    for i in range(rows - 1, -1, -1):
        for j in range(cols - 1, -1, -1):
            if _abbreviates(a[i], b[j]) or _abbreviates(b[j], a[i]):
                best[i][j] = best[i + 1][j + 1] + 1
            else:
                best[i][j] = max(best[i + 1][j], best[i][j + 1])
    agreed = best[0][0]
    left_over = rows + cols - 2 * agreed
    if lenient and agreed == min(rows, cols):  # every word of the shorter side agrees
        return True
    return agreed >= 1 and left_over <= (agreed + 1 if lenient else max(1, agreed // 2))


def source_initials(source: str | None) -> str | None:
    """The first letters of a source's words (:func:`source_tokens`): ``PHYS REV D`` and ``Physical
    Review D`` -> ``prd``. Part of the key a work keeps across loads (:func:`field_alias`)."""
    tokens = source_tokens(source)
    return "".join(t[0] for t in tokens) or None


def _number_key(text: str | None) -> str | None:
    if not text:
        return None
    return re.sub(r"[\W_]+", "", text.lower()) or None


def field_alias(source: str | None, volume: str | None, page: str | None) -> str | None:
    """``ref:<source initials>-v<volume>-p<page>``: the id a work keyed by source + volume + first page
    keeps across loads (an ``Alias``; a later export's reference or record with the same three meets it)."""
    initials, vol, first = source_initials(source), _number_key(volume), _number_key(page)
    if not (initials and vol and first):
        return None
    return f"ref:{initials}-v{vol}-p{first}"


# --- the thesaurus ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Thesaurus:
    """A VOSviewer-style thesaurus of cited references: ``label<TAB>replace by`` per line, a header
    line ``label<TAB>replace by`` allowed, ``#`` comments and blank lines ignored.

    ``replace by`` another string: every string named by ``label`` joins the work of the strings
    named by ``replace by``. ``replace by`` equal to ``label``: the strings ``label`` names are kept
    apart from every automatic join (a split).
    """

    joins: tuple[tuple[str, str], ...] = ()
    splits: frozenset[str] = frozenset()

    @classmethod
    def read(cls, path: Path) -> Thesaurus:
        joins: list[tuple[str, str]] = []
        splits: set[str] = set()
        try:
            lines = Path(path).read_text(encoding="utf-8-sig").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise IngestError(
                f"reference thesaurus {path}: cannot read it ({exc}); give a UTF-8 text file of "
                "'label<TAB>replace by' lines"
            ) from exc
        for number, line in enumerate(lines, start=1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            label, tab, replace = line.partition("\t")
            if not tab or not label.strip() or not replace.strip():
                raise IngestError(
                    f"reference thesaurus {path}, line {number}: {line[:80]!r} is not 'label<TAB>replace by'; "
                    "separate the two with one tab (VOSviewer's thesaurus format)"
                )
            if number == 1 and label.strip().lower() == "label":
                continue
            a, b = _thesaurus_form(label), _thesaurus_form(replace)
            if a == b:
                splits.add(a)
            else:
                joins.append((a, b))
        return cls(tuple(joins), frozenset(splits))


def _thesaurus_form(text: str) -> str:
    return " ".join(text.split()).lower()


# --- matching -----------------------------------------------------------------------------------


@dataclass
class _Item:
    """One distinct reference string (or one record) as matching sees it."""

    index: int
    raw: str | None  # the string, whitespace collapsed; None for a record
    ref: CitedRef | None
    record: str | None  # the record's key, for a record
    surname: Surname | None
    year: int | None
    source: tuple[str, ...]
    volume: str | None
    page: str | None
    dois: tuple[str, ...]
    count: int = 0  # occurrences of the string


@dataclass
class WorkGroup:
    """One work: the strings (and at most one record) that name it, and why they were joined."""

    strings: Counter[str]  # reference string (whitespace collapsed) -> occurrences
    refs: dict[str, CitedRef]  # one parsed reference per string
    rules: set[str]  # the rules that joined them (empty: one string, nothing joined)
    record: str | None = None  # the export's record this work is
    dois: tuple[str, ...] = ()

    @property
    def representative(self) -> CitedRef:
        """The most frequent string's reference (ties: the one with most fields, then the first in order)."""

        def rank(raw: str) -> tuple[int, int, str]:
            ref = self.refs[raw]
            filled = sum(x is not None for x in (ref.first_author, ref.year, ref.source, ref.volume, ref.page))
            return (-self.strings[raw], -filled, raw)

        return self.refs[min(self.strings, key=rank)]

    @property
    def label(self) -> str | None:
        ref = self.representative
        return reference_label(ref.first_author, ref.year, ref.source, ref.volume, ref.page)

    def before(self) -> Counter[str]:
        """Occurrences per reference key: how the work was counted before matching (one node per key)."""
        out: Counter[str] = Counter()
        for raw, n in self.strings.items():
            key = reference_key(raw)
            if key:
                out[key] += n
        return out


class _Union:
    """Union-find whose groups hold at most one DOI and at most one record."""

    def __init__(self, items: Sequence[_Item]) -> None:
        self.parent = list(range(len(items)))
        self.dois: list[set[str]] = [set(item.dois[:1]) for item in items]
        self.records: list[str | None] = [item.record for item in items]
        self.rules: list[set[str]] = [set() for _ in items]
        self.refused = 0

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, i: int, j: int, rule: str) -> bool:
        a, b = self.find(i), self.find(j)
        if a == b:
            return True
        if (self.dois[a] and self.dois[b] and self.dois[a] != self.dois[b]) or (
            self.records[a] and self.records[b] and self.records[a] != self.records[b]
        ):
            self.refused += 1
            return False
        a, b = min(a, b), max(a, b)  # the smaller index is the root: independent of the order of unions
        self.parent[b] = a
        self.dois[a] |= self.dois[b]
        self.records[a] = self.records[a] or self.records[b]
        self.rules[a] |= self.rules[b] | {rule}
        return True


@dataclass
class Matching:
    """The works the reference strings of an input name."""

    groups: list[WorkGroup]
    group_of: dict[str, int] = field(default_factory=dict)  # reference string (collapsed) -> index in groups
    refused: int = 0  # joins refused because a work would get two DOIs or two records

    def group(self, raw: str) -> WorkGroup:
        return self.groups[self.group_of[collapse(raw)]]


def collapse(raw: str) -> str:
    return " ".join(raw.split())


def _vp_items(items: list[_Item]) -> dict[tuple[str, str], list[_Item]]:
    blocks: dict[tuple[str, str], list[_Item]] = {}
    for item in items:
        if item.volume and item.page:
            blocks.setdefault((item.volume, item.page), []).append(item)
    return blocks


def _agree(a: _Item, b: _Item, *, same_page: bool) -> bool:
    """Rule 3 (``same_page``: volume and first page agree) or rule 4 (they do not, or are unknown)."""
    if a.year is not None and b.year is not None and a.year != b.year:
        if not same_page:
            return False
        if abs(a.year - b.year) > 1:  # a typo in the year (OGURA S 1976/1986 THIN SOLID FILMS V34 P371):
            return a.source == b.source and a.surname is not None and a.surname == b.surname  # all else equal
    return sources_compatible(a.source, b.source, lenient=same_page) and surnames_compatible(a.surname, b.surname)


def match_references(
    refs: Iterable[CitedRef],
    records: Sequence[RecordFacts] = (),
    *,
    resolved: dict[str, str] | None = None,
    thesaurus: Thesaurus | None = None,
) -> Matching:
    """Group reference strings into works (see the module docstring).

    Args:
        refs: every cited reference of the input (repeats counted).
        records: the input's own records; a work that is one of them takes its key (:attr:`WorkGroup.record`).
        resolved: ``{string (collapsed): record key}`` that the resolver found (rule 2).
        thesaurus: forced joins and splits (rule 5).
    """
    thesaurus = thesaurus or Thesaurus()
    by_raw: dict[str, _Item] = {}
    items: list[_Item] = []
    for ref in refs:
        raw = collapse(ref.raw)
        item = by_raw.get(raw)
        if item is None:
            item = _Item(
                len(items),
                raw,
                ref,
                None,
                parse_surname(ref.first_author),
                ref.year,
                source_tokens(ref.source),
                _number_key(ref.volume),
                _number_key(ref.page),
                ref.dois,
            )
            by_raw[raw] = item
            items.append(item)
        item.count += 1
    # Deterministic: items sorted by their text, records after, by key.
    items.sort(key=lambda it: it.raw or "")
    record_items: dict[str, _Item] = {}
    for facts in sorted(records, key=lambda r: r.key):
        sources = [source_tokens(s) for s in facts.sources]
        record_items[facts.key] = _Item(
            0,
            None,
            None,
            facts.key,
            parse_surname(facts.first_author),
            facts.year,
            max(sources, key=len) if sources else (),
            _number_key(facts.volume),
            _number_key(facts.page),
            facts.dois,
            0,
        )
    items += list(record_items.values())
    for index, item in enumerate(items):
        item.index = index
    uf = _Union(items)

    def forms(item: _Item) -> set[str]:
        if item.raw is None or item.ref is None:
            return set()
        out = {item.raw.lower()}
        if item.ref.key:
            out.add(item.ref.key)
        label = reference_label(item.ref.first_author, item.ref.year, item.ref.source, item.ref.volume, item.ref.page)
        if label:
            out.add(label.lower())
        return out

    named: dict[str, list[_Item]] = {}
    if thesaurus.joins or thesaurus.splits:
        for item in items:
            for form in forms(item):
                named.setdefault(form, []).append(item)
    pinned = {item.index for form in thesaurus.splits for item in named.get(form, [])}
    free = [item for item in items if item.index not in pinned]

    # 1. one DOI
    by_doi: dict[str, _Item] = {}
    for item in free:
        for doi in item.dois[:1] if item.record is None else item.dois:
            if doi in by_doi:
                uf.union(by_doi[doi].index, item.index, "doi")
            else:
                by_doi[doi] = item
    # 2. the resolver's record
    for raw, key in sorted((resolved or {}).items()):
        item = by_raw.get(raw)
        if item is not None and item.index not in pinned and key in record_items:
            uf.union(record_items[key].index, item.index, "record")
    # 3. source + volume + first page
    blocks = _vp_items(free)
    for block in blocks.values():
        for i, a in enumerate(block):
            for b in block[i + 1 :]:
                if uf.find(a.index) != uf.find(b.index) and _agree(a, b, same_page=True):
                    uf.union(a.index, b.index, "source+volume+page")
    # 4. author + year + source, for strings without volume or page
    loose = [item for item in free if not (item.volume and item.page) and item.record is None]
    by_year: dict[int | None, list[_Item]] = {}
    for item in free:
        if item.volume and item.page:
            by_year.setdefault(item.year, []).append(item)
    loose_by_year: dict[int | None, list[_Item]] = {}
    for item in loose:
        loose_by_year.setdefault(item.year, []).append(item)
    for year, group in loose_by_year.items():
        if year is None:
            continue  # no year: only a DOI or the thesaurus joins it
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                if (
                    uf.find(a.index) != uf.find(b.index)
                    and (a.volume is None or b.volume is None or a.volume == b.volume)
                    and (a.surname is None) == (b.surname is None)  # an author is never joined to no author
                    and a.source
                    and b.source
                    and _agree(a, b, same_page=False)
                ):
                    uf.union(a.index, b.index, "author+year+source")
        for a in group:
            if a.surname is None or not a.source:
                continue
            candidates = {
                uf.find(b.index)
                for b in by_year.get(year, [])
                if (a.volume is None or a.volume == b.volume)
                and b.surname is not None
                and b.source
                and _agree(a, b, same_page=False)
            }
            if len(candidates) == 1:
                uf.union(candidates.pop(), a.index, "author+year+source")
    # 5. the thesaurus's joins
    for label, replace in thesaurus.joins:
        targets = named.get(replace, [])
        for item in named.get(label, []):
            if targets:
                uf.union(targets[0].index, item.index, "thesaurus")
        for other in targets[1:]:
            uf.union(targets[0].index, other.index, "thesaurus")

    groups: list[WorkGroup] = []
    slot: dict[int, int] = {}
    matching = Matching(groups, refused=uf.refused)
    for item in items:
        root = uf.find(item.index)
        if root not in slot:
            slot[root] = len(groups)
            dois = tuple(sorted(uf.dois[root]))
            groups.append(WorkGroup(Counter(), {}, set(uf.rules[root]), uf.records[root], dois))
        work = groups[slot[root]]
        if item.raw is not None and item.ref is not None:
            work.strings[item.raw] = item.count
            work.refs[item.raw] = item.ref
            matching.group_of[item.raw] = slot[root]
    matching.groups = [g for g in groups if g.strings]
    renumber = {id(g): n for n, g in enumerate(matching.groups)}
    matching.group_of = {raw: renumber[id(groups[i])] for raw, i in matching.group_of.items()}
    return matching


# --- the report ---------------------------------------------------------------------------------

REPORT_COLUMNS = ("work", "label", "record", "doi", "rules", "strings", "citations", "before", "keys_before")


def report_rows(matching: Matching, work_ids: dict[int, str] | None = None) -> list[dict[str, object]]:
    """One row per work (:data:`REPORT_COLUMNS`): its id, label, the record it is, its DOI, the rules that
    joined it, its strings (``" | "``-joined, with their occurrences), its citations now, and how the old
    key (one node per reference key) counted them (``key=n``, ``"; "``-joined) with the number of keys."""
    rows: list[dict[str, object]] = []
    for n, group in enumerate(matching.groups):
        before = group.before()
        rows.append(
            {
                "work": (work_ids or {}).get(n, ""),
                "label": group.label or "",
                "record": group.record or "",
                "doi": "; ".join(group.dois),
                "rules": "+".join(r for r in RULES if r in group.rules) or "one string",
                "strings": " | ".join(f"{raw} ({count})" for raw, count in sorted(group.strings.items())),
                "citations": sum(group.strings.values()),
                "before": "; ".join(f"{key}={count}" for key, count in sorted(before.items())),
                "keys_before": len(before),
            }
        )
    return rows


__all__ = [
    "ISO4_PHRASES",
    "PARTICLES",
    "REPORT_COLUMNS",
    "RULES",
    "Matching",
    "Surname",
    "Thesaurus",
    "WorkGroup",
    "collapse",
    "edit_distance",
    "field_alias",
    "match_references",
    "parse_surname",
    "report_rows",
    "source_initials",
    "source_tokens",
    "sources_compatible",
    "surnames_compatible",
]
