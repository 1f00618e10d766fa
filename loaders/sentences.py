"""CL-SciSumm file formats shared by :mod:`loaders.scisumm` and :mod:`loaders.scisummnet`.

Three things both datasets ship in the same shape:

* **sentence XML** (``Reference_XML``, ``Citance_XML``): ``<S sid="N" ssid="M">text</S>`` inside
  ``<ABSTRACT>`` and ``<SECTION title=...>`` wrappers, the title at ``sid=0``. Many files are not
  well-formed (unclosed ``<SECTION>``, Windows-1252 bytes in a file that is otherwise UTF-8, a
  ``sid=""``), so :func:`parse_sentence_xml` reads them leniently: a scan over the ``<S>``,
  ``</S>``, ``<SECTION>`` and ``<ABSTRACT>`` tags, never an XML parser. Every ``<S>`` is either
  recovered as a :class:`XmlSentence` or listed in :attr:`ParsedXml.unrecovered` with its line and
  a reason (no closing ``</S>``, no ``sid``, a repeated ``sid``, a broken tag).
* **annotation lines** (``annotation/<RP>.ann.txt``): `` | ``-separated ``Key: value`` pairs, see
  :func:`parse_annotation_line` and :func:`parse_offsets`;
* **paper ids and years**: :func:`acl_year` (the year an ACL Anthology id encodes) and the
  sentence-id scheme below.

Sentence ids (``Sentence.id``; ``paper_id`` and ``sid`` are always properties of their own):

==========================================  ==========================================================
``<paper_id>#<sid>``                        sentence ``sid`` of a paper's own full text (Reference_XML,
                                            the paper as a reference paper): :func:`sentence_id`
``<citing_id>#<rp_id>:<sid>``               sentence ``sid`` of a citing paper's full text as shipped
                                            in CL-SciSumm 2018 with reference paper ``rp_id``
                                            (Citance_XML): :func:`citing_sentence_id`. Scoped by RP
                                            because the same paper comes with different sentence
                                            splits in different folders and as a ScisummNet RP.
``<citing_id>#c<12 hex>``                   a lone citing sentence with no full text around it
                                            (ScisummNet ``citing_sentences.json``): the hex is a hash
                                            of its text, so the same sentence citing two RPs is one
                                            node: :func:`citance_id`
==========================================  ==========================================================

The three forms cannot collide: the part after ``#`` is all digits, contains ``:``, or starts
with ``c``.
"""

from __future__ import annotations

import codecs
import hashlib
import re
from dataclasses import dataclass, field

from graph.schema import ABSTRACT_SECTION
from loaders._common import unescape_entities
from loaders.ids import canonical_paper_id

# ---------------------------------------------------------------------------------------------
# Decoding


def _cp1252_fallback(exc: UnicodeError) -> tuple[str, int]:
    """Codec error handler: a byte that is not UTF-8 is read as Windows-1252 (``\\x93`` -> ``“``)."""
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    bad = exc.object[exc.start : exc.end]
    return bytes(bad).decode("cp1252", errors="replace"), exc.end


_FALLBACK = "citegraph.cp1252-fallback"
codecs.register_error(_FALLBACK, _cp1252_fallback)


def decode_lenient(raw: bytes) -> tuple[str, int]:
    """``raw`` as text and how many of its bytes were not UTF-8.

    UTF-8 first; each byte that is not valid UTF-8 is read as Windows-1252 instead (the files
    that are not UTF-8 in CL-SciSumm 2018 are Word exports: curly quotes ``\\x93 \\x94``, soft
    hyphens ``\\xad``). Bytes that are undefined in Windows-1252 too become U+FFFD. A BOM is dropped.
    """
    try:
        text, bad = raw.decode("utf-8"), 0
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors=_FALLBACK)
        bad = _count_non_utf8(raw)
    return text.removeprefix("\ufeff"), bad


def _count_non_utf8(raw: bytes) -> int:
    count = 0
    for chunk in raw.split(b"\n"):  # retry only the lines that fail, from where they failed
        position = 0
        while position < len(chunk):
            try:
                chunk[position:].decode("utf-8")
                break
            except UnicodeDecodeError as exc:
                count += exc.end - exc.start
                position += exc.end
    return count


_SOFT_HYPHEN = "\u00ad"


def clean_text(text: str) -> str:
    """Entities unescaped (``&apos;`` ``&#8220;``; twice-escaped ``&amp;quot;`` too: :func:`unescape_entities`),
    soft hyphens dropped, whitespace runs made one space."""
    text = unescape_entities(text)
    if _SOFT_HYPHEN in text:
        text = text.replace(_SOFT_HYPHEN, "")
    return " ".join(text.split())


# ---------------------------------------------------------------------------------------------
# Sentence XML


@dataclass(frozen=True)
class XmlSentence:
    sid: int  # the sid attribute; 0 is the title
    text: str  # entities unescaped, whitespace collapsed (see clean_text)
    section: str | None  # enclosing <SECTION title=...>, "Abstract", or None outside any wrapper
    line: int  # 1-based line of the opening <S ...>


@dataclass(frozen=True)
class Unrecovered:
    line: int  # 1-based line of the opening <S ...>
    reason: str


@dataclass
class ParsedXml:
    """What :func:`parse_sentence_xml` made of one file."""

    sentences: list[XmlSentence] = field(default_factory=list)  # in file order, non-empty text only
    unrecovered: list[Unrecovered] = field(default_factory=list)  # <S> elements that could not be read
    empty_sids: dict[int, int] = field(default_factory=dict)  # sid -> line of an <S> with no text (dropped)
    non_utf8_bytes: int = 0  # bytes read as Windows-1252 because they were not UTF-8

    @property
    def title(self) -> str | None:
        """The text of ``sid=0``, when the file has one."""
        for sentence in self.sentences:
            if sentence.sid == 0:
                return sentence.text
        return None

    def by_sid(self) -> dict[int, XmlSentence]:
        return {s.sid: s for s in self.sentences}


# One token per tag that matters. `<S` must be followed by space, `>` or `/` (not <SECTION>,
# <SUBSECTION>); its attribute text stops at `<` so a tag cut short does not swallow the next one.
# The shared `<` prefix is factored out: the scan is then ~10x faster than with one `<` per branch.
_TOKEN = re.compile(
    r"<(?:S(?=[\s>/])(?P<s_attrs>[^<>]*)(?P<s_end>>?)"
    r"|(?P<s_close>/S\s*>)"
    r"|SECTION\b(?P<sec_attrs>[^<>]*)>"
    r"|(?P<sec_close>/SECTION\s*>)"
    r"|ABSTRACT\s*(?P<abs_empty>/?)>"
    r"|(?P<abs_close>/ABSTRACT\s*>))"
)
_SID = re.compile(r"""\bsid\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_TITLE = re.compile(r"""\btitle\s*=\s*(?:"([^"]*)"|'([^']*)')""")


def _attribute(pattern: re.Pattern[str], attrs: str) -> str | None:
    match = pattern.search(attrs)
    if match is None:
        return None
    return match.group(1) if match.group(1) is not None else match.group(2)


def parse_sentence_xml(raw: bytes) -> ParsedXml:
    """Every ``<S>`` of a CL-SciSumm sentence file, recovered or explained (see the module docstring).

    Rules: an ``<S>`` ends at the next ``</S>``; if another tag the scan knows (``<S``,
    ``<SECTION>``, ``</SECTION>``, ``<ABSTRACT>``) or the end of the file comes first, it has no
    closing tag and is unrecovered. ``sid`` must be a non-negative integer and unique in the file.
    An ``<S>`` whose text is empty is not a sentence: its sid goes to :attr:`ParsedXml.empty_sids`.
    ``section`` is the title of the enclosing ``<SECTION>`` (None when empty), ``"Abstract"``
    inside ``<ABSTRACT>``, None elsewhere; an unclosed ``<SECTION>`` ends at the next one.
    """
    text, bad_bytes = decode_lenient(raw)
    parsed = ParsedXml(non_utf8_bytes=bad_bytes)
    seen: dict[int, int] = {}  # sid -> line of its first <S>
    section: str | None = None
    open_s: tuple[str, int, int] | None = None  # (attrs, line, end offset of the tag)
    line, counted_to = 1, 0

    def line_at(offset: int) -> int:
        nonlocal line, counted_to
        line += text.count("\n", counted_to, offset)
        counted_to = offset
        return line

    def unclosed(before: str) -> None:
        assert open_s is not None
        parsed.unrecovered.append(Unrecovered(open_s[1], f"<S{open_s[0]}> has no closing </S> before {before}"))

    for match in _TOKEN.finditer(text):
        where = line_at(match.start())
        if match.group("s_close") is not None:
            if open_s is None:
                continue  # a stray </S>: nothing to recover, nothing lost
            attrs, start_line, body_start = open_s
            open_s = None
            _add_sentence(parsed, seen, attrs, text[body_start : match.start()], section, start_line)
            continue
        if open_s is not None:
            unclosed(f"{match.group(0).strip()[:20]!r} at line {where}")
            open_s = None
        if match.group("s_attrs") is not None:
            attrs = match.group("s_attrs")
            if not match.group("s_end"):
                parsed.unrecovered.append(Unrecovered(where, f"<S{attrs.rstrip()[:40]} is cut short (no `>`)"))
                continue
            if attrs.rstrip().endswith("/"):
                continue  # <S/>: an empty element, not a sentence
            open_s = (attrs, where, match.end())
        elif match.group("sec_attrs") is not None:
            title = _attribute(_TITLE, match.group("sec_attrs"))
            section = (clean_text(title) or None) if title is not None else None
        elif match.group("sec_close") is not None or match.group("abs_close") is not None:
            section = None
        elif match.group("abs_empty") is not None:
            section = None if match.group("abs_empty") else ABSTRACT_SECTION
    if open_s is not None:
        unclosed("the end of the file (truncated?)")
    return parsed


def _add_sentence(
    parsed: ParsedXml, seen: dict[int, int], attrs: str, body: str, section: str | None, line: int
) -> None:
    raw_sid = _attribute(_SID, attrs)
    shown = " ".join(attrs.split())
    if raw_sid is None:
        parsed.unrecovered.append(Unrecovered(line, f"<S {shown}> has no sid attribute"))
        return
    sid_text = raw_sid.strip()
    if not sid_text.isdigit():
        what = "an empty sid" if not sid_text else f"sid {raw_sid!r}, not a number"
        parsed.unrecovered.append(Unrecovered(line, f"<S {shown}> has {what}; its text: {_preview(body)}"))
        return
    sid = int(sid_text)
    if sid in seen:
        parsed.unrecovered.append(Unrecovered(line, f"sid {sid} repeats the <S> at line {seen[sid]}"))
        return
    seen[sid] = line
    text = clean_text(body)
    if not text:
        parsed.empty_sids[sid] = line
        return
    parsed.sentences.append(XmlSentence(sid, text, section, line))


def _preview(text: str, limit: int = 50) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 3] + "...")


# ---------------------------------------------------------------------------------------------
# Annotation lines

# Field names as they appear; "Citation Number" is a misspelling found in the data.
ANNOTATION_KEYS = (
    "Citance Number",
    "Reference Article",
    "Citing Article",
    "Citation Marker Offset",
    "Citation Marker",
    "Citation Offset",
    "Citation Text",
    "Reference Offset",
    "Reference Text",
    "Discourse Facet",
    "Annotator",
)
_KEY_ALIASES = {"citation number": "Citance Number"}
_KEY = re.compile(
    r"(?:^|\|)\s*(?P<key>"
    + "|".join(re.escape(k) for k in sorted({*ANNOTATION_KEYS, "Citation Number"}, key=len, reverse=True))
    + r")\s*:",
    re.IGNORECASE,
)
_CANONICAL_KEY = {k.lower(): k for k in ANNOTATION_KEYS} | _KEY_ALIASES


def parse_annotation_line(line: str) -> dict[str, str]:
    """The ``Key: value`` fields of one annotation line; keys as in :data:`ANNOTATION_KEYS`.

    Keys are found where they start the line or follow a ``|`` (so ``| Discourse Facet`` and a
    trailing `` |`` both work, and a ``|`` inside a sentence does not split it). Values are
    stripped of spaces and ``|``. A line with none of the keys gives ``{}``.
    """
    matches = list(_KEY.finditer(line))
    fields: dict[str, str] = {}
    for match, following in zip(matches, [*matches[1:], None]):
        end = following.start() if following is not None else len(line)
        key = _CANONICAL_KEY[match.group("key").lower()]
        fields.setdefault(key, line[match.end() : end].strip(" \t|"))
    return fields


_DIGITS = re.compile(r"\d+")


def parse_offsets(value: str) -> list[int]:
    """Sentence ids of an offset field, in order, without repeats: ``['90','91']`` -> [90, 91].

    Only the digit runs count, so malformed values still give their ids: ``'17'`` (no brackets),
    ``['58', '59' 60']``, ``'19' 20','21'``. ``NA`` or empty gives [].
    """
    return list(dict.fromkeys(int(d) for d in _DIGITS.findall(value)))


# ---------------------------------------------------------------------------------------------
# Ids

_ACL_OLD_YEAR = re.compile(r"[A-Z](\d{2})-\d{4}")
_ACL_NEW_YEAR = re.compile(r"(\d{4})\.[A-Za-z0-9-]+\.\d+")


def acl_year(paper_id: str) -> int | None:
    """The publication year an ACL Anthology id encodes, else None.

    Old style ``P98-1081``: 19xx when the two digits are above 60, else 20xx. New style
    ``2020.acl-main.1``: the leading four digits.

    >>> acl_year("P98-1081"), acl_year("W11-0815"), acl_year("2020.acl-main.1"), acl_year("arxiv:2101.00001")
    (1998, 2011, 2020, None)
    """
    if match := _ACL_OLD_YEAR.fullmatch(paper_id):
        digits = int(match.group(1))
        return 1900 + digits if digits > 60 else 2000 + digits
    if match := _ACL_NEW_YEAR.fullmatch(paper_id):
        return int(match.group(1))
    return None


def is_acl_id(paper_id: str) -> bool:
    """Whether ``paper_id`` (canonical) is an ACL Anthology id."""
    return acl_year(paper_id) is not None


def acl_id_or_none(raw: str) -> str | None:
    """The canonical ACL Anthology id in ``raw`` (a file stem such as ``Q13-1024-parscit130908``), else None."""
    try:
        paper_id = canonical_paper_id(raw)
    except ValueError:
        match = re.match(r"([A-Za-z]\d{2}-\d{4})(?:[-_.]|$)", raw.strip())
        if match is None:
            return None
        paper_id = canonical_paper_id(match.group(1))
    return paper_id if is_acl_id(paper_id) else None


def sentence_id(paper_id: str, sid: int) -> str:
    """``<paper_id>#<sid>``: a sentence of the paper's own full text."""
    return f"{paper_id}#{sid}"


def citing_sentence_id(citing_id: str, rp_id: str, sid: int) -> str:
    """``<citing_id>#<rp_id>:<sid>``: a sentence of a CL-SciSumm 2018 Citance_XML text."""
    return f"{citing_id}#{rp_id}:{sid}"


def citance_id(citing_id: str, text: str) -> str:
    """``<citing_id>#c<12 hex>``: a citing sentence known without its paper's full text, keyed by its text."""
    digest = hashlib.sha1(" ".join(text.split()).encode("utf-8")).hexdigest()[:12]
    return f"{citing_id}#c{digest}"


__all__ = [
    "ABSTRACT_SECTION",
    "ANNOTATION_KEYS",
    "ParsedXml",
    "Unrecovered",
    "XmlSentence",
    "acl_id_or_none",
    "acl_year",
    "citance_id",
    "citing_sentence_id",
    "clean_text",
    "decode_lenient",
    "is_acl_id",
    "parse_annotation_line",
    "parse_offsets",
    "parse_sentence_xml",
    "sentence_id",
]
