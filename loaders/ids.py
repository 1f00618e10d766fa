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

import re
import unicodedata
from functools import lru_cache

from graph.errors import IngestError

AUTHOR_PREFIX = "author:"
ARXIV_PREFIX = "arxiv:"
DOI_PREFIX = "doi:"


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


__all__ = ["ARXIV_PREFIX", "AUTHOR_PREFIX", "DOI_PREFIX", "PaperIdError", "author_key", "canonical_paper_id"]
