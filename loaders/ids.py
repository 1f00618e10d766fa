"""Identifier normalisation shared by every loader: one paper, one key; one author name, one key.

Paper ids (:func:`canonical_paper_id`) keep the form the source that owns the paper uses, so an
ACL Anthology paper is ``P98-1081`` or ``2020.acl-main.1`` in every loader; ids from other
registries carry a prefix so they never collide:

=====================  ==============================  =============================
given                  canonical                       rule
=====================  ==============================  =============================
``p98-1081``           ``P98-1081``                    ACL old style: venue letter upper-cased, ``NN-NNNN``
``2020.acl-main.1``    ``2020.acl-main.1``             ACL new style: as is
``arXiv:2101.00001v2`` ``arxiv:2101.00001``            arXiv: prefix ``arxiv:``, version dropped
``hep-th/9901001v1``   ``arxiv:hep-th/9901001``        arXiv old style: archive lower-cased, subject class dropped
``10.18653/V1/X``      ``doi:10.18653/v1/x``           DOI: prefix ``doi:``, lower-cased (DOIs are case-insensitive)
=====================  ==============================  =============================

URL forms (``https://aclanthology.org/P98-1081.pdf``, ``https://arxiv.org/abs/2101.00001``,
``https://doi.org/10....``) are accepted too. Anything else is a :class:`PaperIdError`.

Renumbered volumes: the Anthology moved the SemEval-2007 proceedings from ``W07-20NN`` to
``S07-10NN`` (same paper numbers; checked on the 7 SemEval-2007 reference papers of CL-SciSumm,
whose ``sid=0`` titles equal the Anthology's ``S07-10NN`` titles, and the Anthology lists no
``W07-20NN`` id any more). Older corpora still use the old ids; both map to ``S07-10NN``.

Author keys (:func:`author_key`) are normalised names, because no source here has author ids:
two spellings that differ only in case, accents or punctuation are one author, and two different
people with the same name are, unavoidably, one node too.
"""

from __future__ import annotations

import contextlib
import itertools
import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

from graph.errors import IngestError

AUTHOR_PREFIX = "author:"
ARXIV_PREFIX = "arxiv:"
DOI_PREFIX = "doi:"
OPENALEX_PREFIX = "openalex:"  # openalex:W4225968159 (the W-id upper-cased)
S2_PREFIX = "s2:"  # Semantic Scholar paperId, 40 hex digits, lower-cased
S2_CORPUS_PREFIX = "s2corpus:"  # Semantic Scholar corpusId (an integer)
PMID_PREFIX = "pmid:"  # PubMed id
MAG_PREFIX = "mag:"  # Microsoft Academic Graph id
WOS_PREFIX = "wos:"  # Web of Science accession number (UT), e.g. wos:000454757800001
SCOPUS_PREFIX = "scopus:"  # Scopus EID, e.g. scopus:2-s2.0-85045031181
REFERENCE_PREFIX = "ref:"  # a cited reference no source identified: "ref:<normalised reference string>"

# Which id becomes a work's key when a source gives several (the rest become Alias nodes): the
# registries that own the paper first, then DOIs, then the indexes' own ids. "acl" is an
# Anthology id (no prefix), "own" any id of the user's own.
ID_PREFERENCE = ("arxiv", "acl", "doi", "openalex", "s2", "s2corpus", "pmid", "mag", "wos", "scopus", "ref", "own")
_PREFIXED_KINDS = {
    ARXIV_PREFIX: "arxiv",
    DOI_PREFIX: "doi",
    OPENALEX_PREFIX: "openalex",
    S2_PREFIX: "s2",
    S2_CORPUS_PREFIX: "s2corpus",
    PMID_PREFIX: "pmid",
    MAG_PREFIX: "mag",
    WOS_PREFIX: "wos",
    SCOPUS_PREFIX: "scopus",
    REFERENCE_PREFIX: "ref",
}


class PaperIdError(IngestError, ValueError):
    """A string that is not a paper id of any form :func:`canonical_paper_id` knows."""


_ACL_OLD = re.compile(r"([A-Za-z])(\d{2})-(\d{4})")  # P98-1081: venue letter, year, volume+paper
_ACL_NEW = re.compile(r"\d{4}\.[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+\.\d+")  # 2020.acl-main.1: year.venue-volume.paper
_ARXIV_NEW = re.compile(r"(\d{4}\.\d{4,5})(?:v\d+)?")  # 2101.00001v2 (4-digit numbers before 2015)
_ARXIV_OLD = re.compile(r"([A-Za-z][A-Za-z-]*)(?:\.[A-Za-z]{2})?/(\d{7})(?:v\d+)?")  # hep-th/9901001, cs.CL/0101001
_DOI = re.compile(r"10\.\d{4,9}/\S+")
_URL_PREFIXES = (
    (re.compile(r"(?:https?://)?(?:www\.)?aclanthology\.org/", re.I), "acl"),
    (re.compile(r"(?:https?://)?(?:www\.)?aclweb\.org/anthology/", re.I), "acl"),
    (re.compile(r"(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/", re.I), "arxiv"),
    (re.compile(r"(?:https?://)?(?:dx\.)?doi\.org/", re.I), "doi"),
)


def canonical_paper_id(raw: str) -> str:
    """The canonical form of a paper id (see the module docstring), or :class:`PaperIdError`.

    >>> canonical_paper_id("p98-1081"), canonical_paper_id("arXiv:2101.00001v3")
    ('P98-1081', 'arxiv:2101.00001')
    """
    if not isinstance(raw, str):
        raise PaperIdError(f"paper id {raw!r} is a {type(raw).__name__}, expected a string")
    text = raw.strip()
    kind = None
    for pattern, name in _URL_PREFIXES:
        if match := pattern.match(text):
            text, kind = text[match.end() :], name
            break
    if kind is None:
        lowered = text.lower()
        if lowered.startswith(ARXIV_PREFIX):
            text, kind = text[len(ARXIV_PREFIX) :].strip(), "arxiv"
        elif lowered.startswith(DOI_PREFIX):
            text, kind = text[len(DOI_PREFIX) :].strip(), "doi"
    if kind == "acl":  # URL form: drop a file suffix and a trailing slash
        text = re.sub(r"(?:\.pdf|\.bib|\.xml)?/?$", "", text, flags=re.I)

    if kind in (None, "acl"):
        if match := _ACL_OLD.fullmatch(text):
            letter, year, number = match.groups()
            letter = letter.upper()
            if (letter, year) == ("W", "07") and number.startswith("20"):  # SemEval-2007, renumbered
                letter, number = "S", "10" + number[2:]
            return f"{letter}{year}-{number}"
        if _ACL_NEW.fullmatch(text):
            return text
    if kind in (None, "arxiv"):
        if match := _ARXIV_NEW.fullmatch(text):
            return ARXIV_PREFIX + match.group(1)
        if match := _ARXIV_OLD.fullmatch(text):
            archive, number = match.groups()
            return f"{ARXIV_PREFIX}{archive.lower()}/{number}"
    if kind in (None, "doi") and _DOI.fullmatch(text):
        return DOI_PREFIX + text.lower()
    raise PaperIdError(
        f"{raw!r} is not a paper id this project knows: expected an ACL Anthology id (P98-1081, "
        "2020.acl-main.1), an arXiv id (2101.00001, hep-th/9901001) or a DOI (10.18653/...)"
    )


def id_kind(paper_id: str) -> str:
    """The kind of a canonical paper id (an :data:`ID_PREFERENCE` entry).

    >>> id_kind("doi:10.1/x"), id_kind("P98-1081"), id_kind("openalex:W1"), id_kind("my-paper-7")
    ('doi', 'acl', 'openalex', 'own')
    """
    prefix, colon, _ = paper_id.partition(":")
    if colon and (kind := _PREFIXED_KINDS.get(prefix + ":")):
        return kind
    if _ACL_OLD.fullmatch(paper_id) or _ACL_NEW.fullmatch(paper_id):
        return "acl"
    return "own"


def preferred_id(ids: Iterable[str]) -> str:
    """The id of ``ids`` that keys the work: the first kind in :data:`ID_PREFERENCE`, ties by first given.

    >>> preferred_id(["openalex:W2741809807", "doi:10.7287/peerj.preprints.3119v1"])
    'doi:10.7287/peerj.preprints.3119v1'
    """
    given = list(ids)
    if not given:
        raise ValueError("preferred_id of no ids")
    return min(given, key=lambda paper_id: ID_PREFERENCE.index(id_kind(paper_id)))


_OPENALEX_ID = re.compile(r"(?:https?://(?:api\.)?openalex\.org/(?:works/)?)?(W\d+)", re.I)
_S2_PAPER_ID = re.compile(r"(?:https?://(?:www\.)?semanticscholar\.org/paper/(?:[^/]+/)?)?([0-9a-f]{40})", re.I)


def openalex_id(raw: str) -> str:
    """``openalex:W…`` of an OpenAlex work id or URL, or :class:`PaperIdError`.

    >>> openalex_id("https://openalex.org/W2741809807")
    'openalex:W2741809807'
    """
    match = _OPENALEX_ID.fullmatch(raw.strip()) if isinstance(raw, str) else None
    if match is None:
        raise PaperIdError(f"{raw!r} is not an OpenAlex work id (W followed by digits, or https://openalex.org/W...)")
    return OPENALEX_PREFIX + match.group(1).upper()


_DIGITS = re.compile(r"\d+")
_NUMBERED_KINDS = {"s2corpus": S2_CORPUS_PREFIX, "pmid": PMID_PREFIX, "mag": MAG_PREFIX}
_KIND_PREFIXES = {kind: prefix for prefix, kind in _PREFIXED_KINDS.items()}


def typed_id(kind: str, value: object) -> str:
    """The canonical id of ``value`` given as an id of ``kind`` (a :data:`ID_PREFERENCE` entry), or :class:`PaperIdError`.

    For sources that say which kind each id is (``"ids": {"doi": ..., "pmid": ...}``, Semantic
    Scholar's ``externalIds``): the value may carry its own prefix or URL form; numbers
    (``s2corpus``, ``pmid``, ``mag``) may be integers.

    >>> typed_id("pmid", 18153422), typed_id("s2", "55DDF1B6CBE79B963A5A9D4DA6E0A15E0D6761B5")[:12]
    ('pmid:18153422', 's2:55ddf1b6c')
    >>> typed_id("doi", "https://doi.org/10.2307/2268801"), typed_id("acl", "p98-1081")
    ('doi:10.2307/2268801', 'P98-1081')
    """
    if kind not in _KIND_PREFIXES and kind != "acl":
        known = ", ".join(k for k in ID_PREFERENCE if k not in ("ref", "own"))
        raise PaperIdError(f"{kind!r} is not a kind of id this project knows; known: {known}")
    if isinstance(value, int) and not isinstance(value, bool) and kind in _NUMBERED_KINDS and value >= 0:
        return _NUMBERED_KINDS[kind] + str(value)
    if not isinstance(value, str) or not value.strip():
        raise PaperIdError(f"{value!r} is not an id of kind {kind!r} (expected a non-empty string)")
    text = value.strip()
    prefix = _KIND_PREFIXES.get(kind)
    if prefix and text.lower().startswith(prefix) and kind not in ("doi", "arxiv"):
        text = text[len(prefix) :].strip()
    if kind in ("doi", "arxiv", "acl"):
        with contextlib.suppress(PaperIdError):
            canonical = canonical_paper_id(text)
            if id_kind(canonical) == kind:
                return canonical
        if kind == "doi" and _DOI.fullmatch(text):  # a DOI that also reads as another kind of id
            return DOI_PREFIX + text.lower()
    elif kind == "openalex":
        return openalex_id(text)
    elif kind == "s2":
        if match := _S2_PAPER_ID.fullmatch(text):
            return S2_PREFIX + match.group(1).lower()
    elif kind in _NUMBERED_KINDS:
        text = re.sub(r"^corpus_?id[:_]?", "", text, flags=re.I) if kind == "s2corpus" else text
        if _DIGITS.fullmatch(text):
            return _NUMBERED_KINDS[kind] + text
    elif kind == "wos":
        text = re.sub(r"^wos:", "", text, flags=re.I)
        if re.fullmatch(r"[A-Za-z0-9]+", text):
            return WOS_PREFIX + text
    elif kind == "scopus" and re.fullmatch(r"[0-9]-s2\.0-\d+", text):
        return SCOPUS_PREFIX + text
    raise PaperIdError(f"{value!r} is not an id of kind {kind!r}")


def lookup_candidates(raw: str) -> list[str]:
    """Every key or alias a paper id typed by a user may stand for, most specific first.

    A user types ids the way their source prints them: ``0708.3686``, ``10.1145/X``,
    ``W2741809807``, ``https://openalex.org/W…``, a 40-hex Semantic Scholar id, a bare number (a
    PubMed, Semantic Scholar corpus or MAG id), an Anthology id, or an id of their own. The caller
    looks each candidate up as a Paper key and as an Alias and takes the first that exists.

    >>> lookup_candidates("0708.3686v2")
    ['0708.3686v2', 'arxiv:0708.3686']
    >>> lookup_candidates("W2741809807")[1:]
    ['openalex:W2741809807']
    >>> lookup_candidates("ref:Aria M, 2017, J INFORMETR")[1]
    'ref:ariam2017jinformetr'
    """
    text = raw.strip()
    candidates = [text]
    with contextlib.suppress(PaperIdError):
        candidates.append(canonical_paper_id(text))
    if match := _OPENALEX_ID.fullmatch(text):
        candidates.append(OPENALEX_PREFIX + match.group(1).upper())
    if match := _S2_PAPER_ID.fullmatch(text):
        candidates.append(S2_PREFIX + match.group(1).lower())
    if text.isascii() and text.isdigit():
        candidates += [PMID_PREFIX + text, S2_CORPUS_PREFIX + text, MAG_PREFIX + text]
    lowered = text.lower()
    if lowered.startswith(REFERENCE_PREFIX):  # cited-reference keys keep letters and digits only (loaders.citedrefs)
        candidates.append(REFERENCE_PREFIX + re.sub(r"[^a-z0-9]+", "", lowered[len(REFERENCE_PREFIX) :]))
    for prefix in _PREFIXED_KINDS:  # a prefixed id typed with other case: "DOI:10.1/X", "OpenAlex:w1"
        if lowered.startswith(prefix) and text not in candidates:
            rest = text[len(prefix) :].strip()
            candidates.append(prefix + (rest.upper() if prefix == OPENALEX_PREFIX else rest.lower()))
    return list(dict.fromkeys(candidates))


class IdGroups:
    """Union-find over paper ids that name one work; a group holds at most one id per kind.

    A group's key is its :func:`preferred_id`. A union that would put two ids of one kind (two
    arXiv ids, two DOIs) in one group is refused and counted in :attr:`conflicts`: the data
    disagree, and keeping two nodes is safer than merging two works.

    >>> groups = IdGroups()
    >>> groups.union(["openalex:W1", "doi:10.1/x"]); groups.canonical("openalex:W1")
    'doi:10.1/x'
    """

    def __init__(self) -> None:
        self._parent: dict[str, str] = {}
        self._members: dict[str, dict[str, str]] = {}  # root -> kind -> id
        self.conflicts = 0

    def add(self, paper_id: str) -> str:
        if paper_id not in self._parent:
            self._parent[paper_id] = paper_id
            self._members[paper_id] = {id_kind(paper_id): paper_id}
        return self.find(paper_id)

    def find(self, paper_id: str) -> str:
        root = paper_id
        while self._parent[root] != root:
            root = self._parent[root]
        while self._parent[paper_id] != root:  # path compression
            self._parent[paper_id], paper_id = root, self._parent[paper_id]
        return root

    def union(self, ids: Iterable[str]) -> None:
        for a, b in itertools.pairwise(ids):
            ra, rb = self.add(a), self.add(b)
            if ra == rb:
                continue
            ma, mb = self._members[ra], self._members[rb]
            if ma.keys() & mb.keys():
                self.conflicts += 1
                continue
            self._parent[rb] = ra
            ma.update(mb)
            del self._members[rb]

    def canonical(self, paper_id: str) -> str:
        return preferred_id(self._members[self.find(paper_id)].values())

    def member(self, paper_id: str, kind: str) -> str | None:
        return self._members[self.find(paper_id)].get(kind)

    def members(self, paper_id: str) -> list[str]:
        """Every id of the work ``paper_id`` names, the key first."""
        key = self.canonical(paper_id)
        return [key, *(other for other in self._members[self.find(paper_id)].values() if other != key)]


# Letters NFKD does not decompose into base letter + accent; folded by hand so that, for
# example, "Søgaard" and "Sogaard" get one key.
_FOLD = str.maketrans({"ø": "o", "ł": "l", "đ": "d", "ð": "d", "ı": "i", "ß": "ss", "æ": "ae", "œ": "oe", "þ": "th"})
# Look-alikes from other scripts typed into Latin names ("Gonҫalves" with Cyrillic ҫ, "Grieβhaber"
# with Greek beta for ß); replaced only when every other letter of the name is Latin.
_HOMOGLYPHS = str.maketrans({"ҫ": "c", "β": "ss"})
_NOT_WORD = re.compile(r"[\W_]+")  # punctuation and whitespace runs (Unicode-aware: CJK letters stay)


@lru_cache(maxsize=1 << 18)  # author names repeat a lot; a cache hit is ~20x cheaper than NFKD
def author_key(name: str) -> str | None:
    """``author:<normalised name>``, or ``None`` when the name has no letter or digit at all.

    Normalisation: lower-case; NFKD then drop combining marks (é → e); fold ø ł đ ß æ œ þ, and
    the look-alikes ҫ β in otherwise Latin names; every run of punctuation or whitespace becomes
    one space.

    >>> author_key("  José  GARCÍA-Pérez "), author_key("W. F. Loomis")
    ('author:jose garcia perez', 'author:w f loomis')

    Names are taken in the order given ("First Last"); a source that writes "Last, First" has to
    reorder them first, or the two forms get different keys.
    """
    if name.isascii():  # most names: nothing to decompose or fold
        stripped = name.lower()
    else:
        decomposed = unicodedata.normalize("NFKD", name.lower())
        stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch)).translate(_FOLD)
        if stripped.translate(_HOMOGLYPHS).isascii():
            stripped = stripped.translate(_HOMOGLYPHS)
    key = _NOT_WORD.sub(" ", stripped).strip()
    return AUTHOR_PREFIX + key if key else None


_ORCID = re.compile(r"(?:https?://(?:www\.)?orcid\.org/)?(\d{4}-\d{4}-\d{4}-\d{3}[\dX])/?", re.IGNORECASE)


def orcid(raw: object) -> str | None:
    """The bare ORCID iD of ``raw`` (``https://orcid.org/0000-0002-1825-0097`` -> ``0000-0002-1825-0097``), else None.

    >>> orcid("http://orcid.org/0000-0002-1825-009x"), orcid("0000-0002-1825"), orcid(None)
    ('0000-0002-1825-009X', None, None)
    """
    match = _ORCID.fullmatch(raw.strip()) if isinstance(raw, str) else None
    return match.group(1).upper() if match else None


__all__ = [
    "ARXIV_PREFIX",
    "AUTHOR_PREFIX",
    "DOI_PREFIX",
    "ID_PREFERENCE",
    "MAG_PREFIX",
    "OPENALEX_PREFIX",
    "PMID_PREFIX",
    "REFERENCE_PREFIX",
    "S2_CORPUS_PREFIX",
    "S2_PREFIX",
    "SCOPUS_PREFIX",
    "WOS_PREFIX",
    "IdGroups",
    "PaperIdError",
    "author_key",
    "canonical_paper_id",
    "id_kind",
    "lookup_candidates",
    "openalex_id",
    "orcid",
    "preferred_id",
    "typed_id",
]
