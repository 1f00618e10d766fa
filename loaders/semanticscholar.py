"""Semantic Scholar: Graph API responses and Academic Graph (S2AG) datasets -> papers, citations, contexts.

``citegraph ingest semanticscholar PATH``, PATH a file, a folder (every ``.json``, ``.jsonl`` and
``.gz`` file in it) or a quoted glob; gzip is read transparently. A file whose name ends in
``.json`` (before ``.gz``) holds one JSON value; any other file is JSON Lines, one value per line
(a ``.json`` file that turns out to hold several lines is read as JSON Lines too). Each value,
or each element of a JSON list or of a page's ``data``, is a record of one of these shapes:

* a **paper** (``/graph/v1/paper/{id}``, ``/paper/batch``, search pages; the S2AG ``papers``
  dataset): ``paperId``/``corpusId``/``externalIds`` (S2AG: ``corpusid``/``externalids``/``url``),
  ``title``, ``abstract``, ``year``, ``venue``, ``authors``, and optionally nested
  ``citations`` (papers citing it) and ``references`` (papers it cites);
* a **citation item** (``/paper/{id}/citations``: ``citingPaper``; ``/paper/{id}/references``:
  ``citedPaper``) with ``contexts``, ``intents``, ``contextsWithIntent`` and ``isInfluential``.
  The item does not say which paper ``{id}`` of the request is: the file's name does,
  ``<id>.citations.json`` or ``<id>.references.json`` (anything may follow: ``<id>.citations.2.json.gz``),
  ``<id>`` as the API takes it: a 40-hex paperId, ``CorpusId:1981188``, ``ARXIV:1402.0030``,
  ``ACL:P98-1081``, ``PMID:…``, ``MAG:…``, ``DOI:10.1145%2F…`` (``/`` written ``%2F``). Items can
  also be nested in the paper they belong to (``{"paperId": …, "citations": [items]}``);
* an S2AG **citation** (``citations`` dataset): ``citingcorpusid``, ``citedcorpusid``,
  ``isinfluential``, ``contexts``, ``intents``;
* an S2AG **abstract** (``abstracts`` dataset): ``corpusid``, ``abstract``.

What each becomes:

* ``Paper {id, title, abstract, year, venue, doi, arxiv_id, stub, dataset="semanticscholar"}``.
  A work's ids are ``paperId`` (``s2:<hex>``, also read from an S2AG ``url``), the corpus id
  (``s2corpus:<n>``) and the ``externalIds`` ``DOI``, ``ArXiv``, ``ACL``, ``PubMed`` (``pmid:``),
  ``MAG``, ``CorpusId`` (DBLP and PubMedCentral ids are not kept); ids naming one work are merged
  over the whole input (:class:`loaders.ids.IdGroups`); the key is
  :func:`loaders.ids.preferred_id` of them, every other id an ``Alias {id, kind}`` with
  ``ALIAS_OF``. ``venue`` is ``venue``, else ``journal.name``, else ``publicationVenue.name``
  (empty strings are null); ``doi``/``arxiv_id`` are the work's DOI (lower-cased) and arXiv id.
  A record with a ``title`` is ``stub=false``. A work named only as an end of a citation (an
  S2AG citation's corpus id, the ``<id>`` of a file name, a nested record without a title)
  is a stub ``Paper {id, doi, arxiv_id, stub=true}``; an S2AG abstract of a work no paper record
  of the input describes gives a stub with that abstract;
* ``Author {id, name}`` + ``WROTE {position}`` (1-based) for each entry of ``authors``, keyed by
  :func:`loaders.ids.author_key` of its ``name`` (S2 author ids are not kept);
* ``Keyword {kind="field_of_study"}`` + ``HAS_KEYWORD`` for each of ``fieldsOfStudy`` and each
  ``s2FieldsOfStudy[].category`` (S2AG ``s2fieldsofstudy``) of any record of the work (:mod:`loaders.keywords`);
* ``(Paper)-[:CITES {n_contexts, intents, influential, dataset="semanticscholar"}]->(Paper)``
  once per pair: ``intents`` the flat list of intents (``intents`` and every
  ``contextsWithIntent[].intents``, first-seen order, null when none is given), ``influential``
  from ``isInfluential``/``isinfluential``, ``n_contexts`` the number of distinct contexts (null
  when the source gives none: a nested API record or ``"contexts": null``);
* each distinct text of ``contexts`` (and of ``contextsWithIntent[].context``) becomes a citing
  sentence of the citing paper (:mod:`loaders.contexts`, keyed as :mod:`loaders.jsonl` keys
  contexts): ``Sentence {id="<citing>#ctx<h>", paper_id, text}`` + ``HAS_SENTENCE`` +
  ``(Sentence)-[:MENTIONS]->(cited)``, ``h`` a hash of the text: the files of one corpus may be
  loaded in one run or one at a time, with the same graph.

Rejected, with ``<file>:<line>`` (JSON Lines) or ``<file>:record <n>`` (a JSON file, ``, citation
<i>``/``, reference <i>`` for nested ones) and what to do: a line or file that is not UTF-8 or not
complete JSON (a truncated download), a truncated gzip stream (what came before is read), a
record of no known shape or null (table ``record``); a paper with no id at all (``Paper``); a
citation one of whose ends names no paper (S2AG ``citedcorpusid`` null, an API reference with
``paperId`` null: Semantic Scholar could not match it), a citation item whose file does not name
its paper, a citation of a paper by itself (``CITES``); an id that does not read as its kind
(``Alias``, the work keeps its other ids); ``authors``, ``citations``, ``references``,
``intents``, ``contexts`` or ``contextsWithIntent`` of the wrong type and their bad entries
(``WROTE``/``Author``, ``CITES``, ``CITES``/``MENTIONS``/``Sentence``, the rest of the record is
loaded). Other wrong-type values (``"year": "n.d."``) are left to :mod:`graph.validate`, which
rejects them with the same origin. Two works claiming one id of a kind are kept apart
(:attr:`loaders.ids.IdGroups.conflicts`, logged).
"""

from __future__ import annotations

import gzip
import json
import logging
import re
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pandas as pd
from tqdm import tqdm

from graph.errors import IngestError, Reject
from graph.ingest import GraphBatch
from graph.schema import ORIGIN_COLUMN
from graph.validate import preview
from loaders._common import (
    GZIP_MAGIC,
    alias_tables,
    input_files,
    integer_or_as_is,
    iter_raw_lines,
    nullable_ints,
    table,
    text_or_null,
)
from loaders.contexts import ContextSentences, context_texts
from loaders.ids import (
    ARXIV_PREFIX,
    DOI_PREFIX,
    IdGroups,
    PaperIdError,
    author_key,
    canonical_paper_id,
    typed_id,
)
from loaders.keywords import FIELD_OF_STUDY, HAS_KEYWORD, KEYWORD_TABLE, KeywordRows
from loaders.toolkit import JsonProblem, cites_table, parse_json_line, wrote_table

log = logging.getLogger(__name__)

SOURCE = "semanticscholar"  # the registry name and the batch's (its rejects report)
DATASET = "semanticscholar"  # Paper.dataset and CITES.dataset
RECORD_TABLE = "record"  # Reject.table of what is a record of no table (not JSON, unknown shape)
SUFFIXES = (".json", ".jsonl", ".gz")  # files read from a folder
# externalIds keys -> id kinds of loaders.ids; DBLP and PubMedCentral have no kind there.
EXTERNAL_IDS = {"DOI": "doi", "ArXiv": "arxiv", "ACL": "acl", "PubMed": "pmid", "MAG": "mag", "CorpusId": "s2corpus"}
# The id forms of the API's /paper/{id} (lower-cased), as a file name may give them.
_API_ID_PREFIXES = {"corpusid": "s2corpus", "doi": "doi", "arxiv": "arxiv", "acl": "acl", "pmid": "pmid", "mag": "mag"}
_ANCHOR = re.compile(r"(?P<id>.+?)\.(?P<what>citations|references)(?:[._-].*)?", re.I)
_HEX40 = re.compile(r"[0-9a-f]{40}", re.I)
_S2_URL = re.compile(r"https?://(?:www\.)?semanticscholar\.org/paper/(?:[^/]+/)?([0-9a-f]{40})/?", re.I)
PAPER_KEYS = ("paperId", "corpusId", "externalIds", "corpusid", "externalids")  # a record with one is a paper
PAPER_COLUMNS = ("id", "title", "abstract", "year", "venue", "doi", "arxiv_id", "dataset", "stub", ORIGIN_COLUMN)


@dataclass
class _Work:
    """One record's view of a work: its ids (the first names it), what it says, where."""

    ids: list[str]
    where: str
    stub: bool
    props: dict[str, object] = field(default_factory=dict)  # title, abstract, year, venue
    authors: list[str] = field(default_factory=list)  # names, in order
    fields: list[str] = field(default_factory=list)  # fieldsOfStudy and s2FieldsOfStudy categories


@dataclass
class _Cite:
    citing: str  # an id of each end (resolved to the key at the end)
    cited: str
    intents: list[str] | None
    influential: bool | None
    texts: list[str] | None  # distinct contexts; None when the source gives none
    where: str


@dataclass
class _Input:
    """Everything read from the files, resolved to keys once every id is known."""

    groups: IdGroups = field(default_factory=IdGroups)
    first_seen: dict[str, str] = field(default_factory=dict)  # id -> origin of the first record giving it
    works: list[_Work] = field(default_factory=list)
    cites: list[_Cite] = field(default_factory=list)
    rejects: list[Reject] = field(default_factory=list)
    records: int = 0

    def reject(self, table_name: str, where: str, reason: str) -> None:
        self.rejects.append(Reject(table_name, where, reason))

    def work(
        self,
        ids: list[str],
        where: str,
        *,
        stub: bool,
        authors: list[str] | None = None,
        fields: list[str] | None = None,
        **props: object,
    ) -> str:
        """Registers a work under ``ids`` (merged with every work sharing one); its first id."""
        for paper_id in ids:
            self.first_seen.setdefault(paper_id, where)
        if len(ids) > 1:
            self.groups.union(ids)
        else:
            self.groups.add(ids[0])
        self.works.append(_Work(ids, where, stub, props, authors or [], fields or []))
        return ids[0]


def load(path: Path) -> GraphBatch:
    """Parse Semantic Scholar files (see the module docstring) into one batch named ``semanticscholar``."""
    path = Path(path)
    files = input_files(path, SUFFIXES)
    started = time.perf_counter()
    into = _Input()
    for file in tqdm(files, desc=SOURCE, unit=" files", disable=None if len(files) > 1 else True, leave=False):
        anchor = _anchor(file)
        whole = file.name.lower().removesuffix(".gz").endswith(".json")
        if not (whole and _read_json_file(file, anchor, into)):
            _read_json_lines(file, anchor, into)
    batch = _batch(into)
    log.info(
        "%s: %d input records (lines, JSON values) in %d files: %s, %d rejects, %d id conflicts (%.1fs)",
        path.name,
        into.records,
        len(files),
        ", ".join(f"{len(frame)} {name}" for name, frame in {**batch.nodes, **batch.rels}.items()) or "nothing",
        len(batch.rejects),
        into.groups.conflicts,
        time.perf_counter() - started,
    )
    if into.groups.conflicts:
        log.warning(
            "%s: %d times two works claimed one id of a kind (two DOIs, two paperIds); they were kept apart",
            path.name,
            into.groups.conflicts,
        )
    return batch


# --- files ----------------------------------------------------------------------------------------


def _anchor(path: Path) -> tuple[str | None, str | None]:
    """The paper a file of citation items belongs to, from its name: (id, None), (None, why not) or (None, None)."""
    match = _ANCHOR.fullmatch(path.name)
    if match is None:
        return None, None
    given = unquote(match.group("id"))
    prefix, colon, rest = given.partition(":")
    try:
        if colon and prefix.lower() in _API_ID_PREFIXES:
            return typed_id(_API_ID_PREFIXES[prefix.lower()], rest), None
        if _HEX40.fullmatch(given):
            return typed_id("s2", given), None
        return canonical_paper_id(given), None
    except PaperIdError:
        return None, (
            f"the file name gives {given!r} as the paper, which is no paper id (a 40-hex paperId, CorpusId:<n>, "
            "ARXIV:<id>, ACL:<id>, PMID:<n>, MAG:<n> or DOI:<doi with / written %2F>)"
        )


def _read_json_file(path: Path, anchor: tuple[str | None, str | None], into: _Input) -> bool:
    """Reads a file holding one JSON value; False when it holds JSON Lines instead (read those)."""
    first = f"{path.name}:1"
    try:
        with path.open("rb") as probe:
            compressed = probe.read(2) == GZIP_MAGIC
        with gzip.open(path, "rb") if compressed else path.open("rb") as raw:
            data = raw.read()
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        into.records += 1
        into.reject(
            RECORD_TABLE,
            first,
            f"the gzip stream is damaged or truncated ({exc}); nothing of this file was read: download or save it again",
        )
        return True
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        into.records += 1
        line = data.count(b"\n", 0, exc.start) + 1
        into.reject(
            RECORD_TABLE,
            f"{path.name}:{line}",
            f"file is not UTF-8 (byte 0x{data[exc.start]:02x} on line {line}); nothing of this file was read: "
            "save it as UTF-8 (the API answers in UTF-8: save the response body as it came)",
        )
        return True
    if not text.strip():  # an empty input loads nothing and says so, as every importer's (docs/data.md)
        log.warning("%s is empty (no record in it); check that it is the file you meant", path)
        return True
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data" and exc.lineno > 1:
            return False  # one JSON value per line: JSON Lines under a .json name
        into.records += 1
        # An unterminated string runs to the end of the file; other errors there mean the same.
        cut = exc.msg.startswith("Unterminated string") or exc.pos >= len(text.rstrip())
        ending = "; the file ends before the JSON does: a truncated download or copy" if cut else ""
        into.reject(
            RECORD_TABLE,
            f"{path.name}:{exc.lineno}",
            f"file is not complete JSON ({exc.msg}: line {exc.lineno} column {exc.colno}{ending}); "
            "nothing of this file was read: save the API response again",
        )
        return True
    if isinstance(value, dict) and isinstance(value.get("data"), list):
        records: list[Any] = value["data"]  # a page: {"offset", "next", "data": [...]}
    elif isinstance(value, list):
        records = value  # /paper/batch: a list of papers (null where none was found)
    else:
        records = [value]
    for number, record in enumerate(records, start=1):
        into.records += 1
        _record(record, f"{path.name}:record {number}", anchor, into)
    return True


def _read_json_lines(path: Path, anchor: tuple[str | None, str | None], into: _Input) -> None:
    lines = iter(tqdm(iter_raw_lines(path), desc=path.name, unit=" lines", disable=None, leave=False))
    number = 0
    while True:
        try:
            raw = next(lines)
        except StopIteration:
            return
        except IngestError as exc:  # a damaged or truncated gzip stream: what came before is read
            into.records += 1
            into.reject(
                RECORD_TABLE,
                f"{path.name}:{number + 1}",
                f"the gzip stream ends or breaks here, after line {number} ({exc.__cause__}); the lines before were "
                "read: download the file again to load the rest",
            )
            return
        number += 1
        if not raw.strip():
            continue
        into.records += 1
        where = f"{path.name}:{number}"
        record = _parse_line(raw, where, into)
        if record is not _UNREADABLE:
            _record(record, where, anchor, into)


_UNREADABLE = object()


def _parse_line(raw: bytes, where: str, into: _Input) -> Any:
    parsed = parse_json_line(
        raw, 0, expected="JSON object", advice=" (a cut-off last line means a truncated file: download it again)"
    )
    if isinstance(parsed, JsonProblem):
        into.reject(RECORD_TABLE, where, parsed.reason)
        return _UNREADABLE
    return parsed.value


# --- records --------------------------------------------------------------------------------------


def _record(record: Any, where: str, anchor: tuple[str | None, str | None], into: _Input) -> None:
    """Dispatches one record by its shape (see the module docstring)."""
    if record is None:
        into.reject(
            RECORD_TABLE,
            where,
            "record is null (a /paper/batch response has null for each id it found no paper for); nothing to load",
        )
        return
    if not isinstance(record, dict):
        into.reject(RECORD_TABLE, where, f"record is a JSON {type(record).__name__}, expected an object")
        return
    if "citingPaper" in record or "citedPaper" in record:
        _item(record, where, anchor, into)
    elif "citingcorpusid" in record or "citedcorpusid" in record:
        _bulk_citation(record, where, into)
    elif "corpusid" in record and "abstract" in record and "title" not in record:
        _bulk_abstract(record, where, into)
    elif any(key in record for key in PAPER_KEYS):
        _paper(record, where, into)
    else:
        into.reject(
            RECORD_TABLE,
            where,
            f"record with keys {preview(sorted(record))} is no Semantic Scholar paper (paperId, corpusId, "
            "externalIds), citation item (citingPaper, citedPaper), S2AG citation (citingcorpusid) or abstract",
        )


def _paper(record: dict[str, Any], where: str, into: _Input) -> None:
    key = _work(record, where, into, no_id=("Paper", "paper record has no id"))
    if key is None:
        return
    for name, role in (("citations", "citation"), ("references", "reference")):
        nested = record.get(name)
        if nested is None:
            continue
        if not isinstance(nested, list):
            into.reject(
                "CITES", where, f"`{name}` is {preview(nested)}, expected a list of papers; loaded without them"
            )
            continue
        for i, other in enumerate(nested, start=1):
            here = f"{where}, {role} {i}"
            if isinstance(other, dict) and ("citingPaper" in other or "citedPaper" in other):
                _item(other, here, (key, None), into)
                continue
            if not isinstance(other, dict):
                into.reject("CITES", here, f"{role} {i} is {preview(other)}, expected a paper object; skipped")
                continue
            other_key = _work(other, here, into, no_id=("CITES", f"{role} {i} has no id"))
            if other_key is not None:
                citing, cited = (other_key, key) if role == "citation" else (key, other_key)
                _cite(citing, cited, {}, here, into)


def _item(item: dict[str, Any], where: str, anchor: tuple[str | None, str | None], into: _Input) -> None:
    """A /citations or /references item: the other paper, and the citation with its contexts."""
    role = "citingPaper" if "citingPaper" in item else "citedPaper"
    other = item[role]
    if not isinstance(other, dict):
        into.reject("CITES", where, f"`{role}` is {preview(other)}, expected a paper object; the item is skipped")
        return
    what = "citing" if role == "citingPaper" else "cited"
    other_key = _work(other, where, into, no_id=("CITES", f"`{role}` has no id"))
    if other_key is None:
        return
    anchor_id, why_not = anchor
    if anchor_id is None:
        kind = "citations" if role == "citingPaper" else "references"
        n = len(item.get("contexts") or ()) if isinstance(item.get("contexts"), list) else 0
        into.reject(
            "CITES",
            where,
            f"a /paper/{{id}}/{kind} item names the {what} paper but not the paper {{id}} of the request"
            f"{'; ' + why_not if why_not else ''}: name the file <id>.{kind}.json (e.g. CorpusId:1981188.{kind}.json "
            f"or <40-hex paperId>.{kind}.json), or nest the items in the paper record under `{kind}`. "
            f"The {what} paper is loaded; this citation and its {n} contexts are not",
        )
        return
    into.work([anchor_id], where, stub=True)
    citing, cited = (other_key, anchor_id) if role == "citingPaper" else (anchor_id, other_key)
    _cite(citing, cited, item, where, into)


def _bulk_citation(record: dict[str, Any], where: str, into: _Input) -> None:
    ends = []
    for name in ("citingcorpusid", "citedcorpusid"):
        value = record.get(name)
        if value is None:
            n = len(record["contexts"]) if isinstance(record.get("contexts"), list) else 0
            into.reject(
                "CITES",
                where,
                f"`{name}` is null: the {'citing' if name == 'citingcorpusid' else 'cited'} work is not a paper "
                f"Semantic Scholar identified, so the citation names no paper; skipped with its {n} contexts "
                "(nothing to do: S2AG lists such references with a null id)",
            )
            return
        try:
            ends.append(typed_id("s2corpus", value))
        except PaperIdError:
            into.reject("CITES", where, f"`{name}` is {preview(value)}, expected a corpus id (digits); skipped")
            return
    for end in ends:
        into.work([end], where, stub=True)
    _cite(ends[0], ends[1], record, where, into)


def _bulk_abstract(record: dict[str, Any], where: str, into: _Input) -> None:
    try:
        corpus = typed_id("s2corpus", record["corpusid"])
    except PaperIdError:
        into.reject("Paper", where, f"`corpusid` is {preview(record['corpusid'])}, expected a corpus id (digits)")
        return
    into.work([corpus], where, stub=True, abstract=text_or_null(record.get("abstract")))


def _work(record: dict[str, Any], where: str, into: _Input, *, no_id: tuple[str, str]) -> str | None:
    """Registers a paper record (API or S2AG); its first id, or None (and a reject) when it has none."""
    ids = _ids(record, where, into)
    if not ids:
        table_name, what = no_id
        into.reject(
            table_name,
            where,
            f"{what} (paperId, corpusId and externalIds are null or absent: Semantic Scholar could not match it to "
            f"a paper{_titled(record)}); skipped",
        )
        return None
    names = record.get("authors")
    authors: list[str] = []
    if isinstance(names, list):
        for position, author in enumerate(names, start=1):
            name = author.get("name") if isinstance(author, dict) else None
            if not isinstance(name, str) or author_key(name) is None:
                into.reject(
                    "Author", where, f"author {position} is {preview(author)}, expected an object with a `name`"
                )
                name = ""  # keeps the positions of the others
            authors.append(name)
    elif names is not None:
        into.reject("WROTE", where, f"`authors` is {preview(names)}, expected a list of authors; loaded without them")
    title = text_or_null(record.get("title"))
    return into.work(
        ids,
        where,
        stub=title is None,
        title=title,
        abstract=text_or_null(record.get("abstract")),
        year=integer_or_as_is(record.get("year")),
        venue=_venue(record),
        authors=authors,
        fields=_fields_of_study(record),
    )


def _fields_of_study(record: dict[str, Any]) -> list[str]:
    """``fieldsOfStudy`` (names) and the ``category`` of each ``s2FieldsOfStudy``/``s2fieldsofstudy`` entry."""
    names: list[str] = []
    given = record.get("fieldsOfStudy")
    if isinstance(given, list):
        names += [name for name in given if isinstance(name, str)]
    for key in ("s2FieldsOfStudy", "s2fieldsofstudy"):
        entries = record.get(key)
        if isinstance(entries, list):
            names += [e["category"] for e in entries if isinstance(e, dict) and isinstance(e.get("category"), str)]
    return names


def _titled(record: dict[str, Any]) -> str:
    title = record.get("title")
    return f", title {preview(title)}" if isinstance(title, str) and title.strip() else ""


def _ids(record: dict[str, Any], where: str, into: _Input) -> list[str]:
    """The record's ids in canonical form, Semantic Scholar's own first; bad ones are ``Alias`` rejects."""
    given: list[tuple[str, str, object]] = []  # (field shown in a reject, kind, value)
    paper = record.get("paperId")
    if paper is not None:
        given.append(("paperId", "s2", paper))
    elif isinstance(url := record.get("url"), str) and (match := _S2_URL.fullmatch(url.strip())):
        given.append(("url", "s2", match.group(1)))
    for name in ("corpusId", "corpusid"):
        if record.get(name) is not None:
            given.append((name, "s2corpus", record[name]))
    external_name = "externalIds" if "externalIds" in record else "externalids"
    external = record.get(external_name)
    if isinstance(external, dict):
        given += [
            (f"{external_name}.{name}", kind, external[name])
            for name, kind in EXTERNAL_IDS.items()
            if external.get(name) is not None
        ]
    elif external is not None:
        into.reject(
            "Alias",
            where,
            f"`{external_name}` is {preview(external)}, expected an object such as "
            '{"DOI": "10.1/x", "CorpusId": 12}; the paper is loaded under its other ids',
        )
    ids: list[str] = []
    for name, kind, value in given:
        try:
            paper_id = typed_id(kind, value)
        except PaperIdError:
            into.reject(
                "Alias",
                where,
                f"`{name}` is {preview(value)}, which does not read as a {kind} id; "
                "the paper is loaded under its other ids",
            )
            continue
        if paper_id not in ids:
            ids.append(paper_id)
    return ids


def _venue(record: dict[str, Any]) -> object:
    venue = text_or_null(record.get("venue"))
    if venue is not None:
        return venue
    for name in ("journal", "publicationVenue"):
        holder = record.get(name)
        if isinstance(holder, dict) and isinstance(holder.get("name"), str) and holder["name"].strip():
            return holder["name"].strip()
    return None


def _cite(citing: str, cited: str, item: dict[str, Any], where: str, into: _Input) -> None:
    """A citation with what ``item`` says of it: intents, influence, contexts (API or S2AG names)."""
    intents: list[str] | None = None
    given = item.get("intents")
    if given is not None:
        intents = _intents(given, "intents", where, into)
    texts = context_texts(item.get("contexts"), where, into.rejects)
    with_intent = item.get("contextsWithIntent")
    if isinstance(with_intent, list):
        for n, entry in enumerate(with_intent, start=1):
            if not isinstance(entry, dict):
                into.reject(
                    "MENTIONS",
                    where,
                    f"`contextsWithIntent` entry {n} is {preview(entry)}, "
                    'expected {"context": ..., "intents": [...]}',
                )
                continue
            context = entry.get("context")
            if isinstance(context, str) and context.strip():
                texts = _union(texts, [context.strip()])
            elif context is not None:
                into.reject(
                    "Sentence", where, f"`contextsWithIntent` entry {n} has context {preview(context)}, expected a text"
                )
            if entry.get("intents") is not None:
                intents = _union(
                    intents, _intents(entry["intents"], f"contextsWithIntent[{n - 1}].intents", where, into)
                )
    elif with_intent is not None:
        into.reject(
            "MENTIONS",
            where,
            f"`contextsWithIntent` is {preview(with_intent)}, expected a list of "
            '{"context": ..., "intents": [...]}; the citation is loaded without them',
        )
    influential = item.get("isInfluential", item.get("isinfluential"))
    if influential is not None and not isinstance(influential, bool):
        into.reject(
            "CITES",
            where,
            f"`isInfluential` is {preview(influential)}, expected true or false; the citation is loaded without it",
        )
        influential = None
    into.cites.append(_Cite(citing, cited, intents or None, influential, texts, where))


def _union(first: list[str] | None, second: list[str] | None) -> list[str] | None:
    """The items of both, first-seen order; None when neither is given."""
    if first is None or second is None:
        return first if second is None else list(second) if first is None else first
    return first + [item for item in second if item not in first]


def _intents(given: object, name: str, where: str, into: _Input) -> list[str] | None:
    if not isinstance(given, list):
        into.reject(
            "CITES",
            where,
            f"`{name}` is {preview(given)}, expected a list such as ['background', 'methodology']; "
            "the citation is loaded without them",
        )
        return None
    intents: list[str] = []
    for intent in given:
        if isinstance(intent, str) and intent.strip():
            if intent.strip() not in intents:
                intents.append(intent.strip())
        else:
            into.reject("CITES", where, f"intent {preview(intent)} in `{name}` is not a name such as 'background'")
    return intents


# --- tables ---------------------------------------------------------------------------------------


def _batch(into: _Input) -> GraphBatch:
    groups = into.groups
    papers: dict[str, dict[str, object]] = {}  # key -> row, in order of first appearance
    wrote: dict[tuple[str, str], tuple[int, str]] = {}  # (author, paper) -> (position, origin)
    authors: dict[str, tuple[str, str]] = {}  # author key -> (first spelling, its origin)
    keywords = KeywordRows()
    for work in into.works:
        key = groups.canonical(work.ids[0])
        row = papers.get(key)
        if row is None:
            doi, arxiv = groups.member(key, "doi"), groups.member(key, "arxiv")
            row = papers[key] = {
                "id": key,
                "title": None,
                "abstract": None,
                "year": None,
                "venue": None,
                "doi": doi.removeprefix(DOI_PREFIX) if doi else None,
                "arxiv_id": arxiv.removeprefix(ARXIV_PREFIX) if arxiv else None,
                "dataset": DATASET,
                "stub": work.stub,
                ORIGIN_COLUMN: work.where,
            }
        elif row["stub"] and not work.stub:  # the first full record of the work names it
            row["stub"], row[ORIGIN_COLUMN] = False, work.where
        for name, value in work.props.items():
            if row[name] is None:
                row[name] = value
        keywords.add_all(key, FIELD_OF_STUDY, work.fields, work.where)
        for position, name in enumerate(work.authors, start=1):
            author = author_key(name) if name else None
            if author is not None:
                authors.setdefault(author, (" ".join(name.split()), work.where))
                wrote.setdefault((author, key), (position, work.where))

    cites: dict[tuple[str, str], _Cite] = {}
    contexts = ContextSentences()
    rejects = list(into.rejects)
    for cite in into.cites:
        citing, cited = groups.canonical(cite.citing), groups.canonical(cite.cited)
        if citing == cited:
            rejects.append(
                Reject(
                    "CITES",
                    cite.where,
                    f"citation of {citing!r} by itself (its ids name one work); a paper does not cite itself: skipped",
                )
            )
            continue
        known = cites.get((citing, cited))
        if known is None:
            cites[(citing, cited)] = _Cite(citing, cited, cite.intents, cite.influential, cite.texts, cite.where)
        else:  # the same citation from two records (a nested record and a citations page, say)
            known.intents = _union(known.intents, cite.intents)
            if cite.influential is not None:
                known.influential = bool(known.influential) or cite.influential
            known.texts = _union(known.texts, cite.texts)
        for text in cite.texts or ():
            contexts.mention_context(citing, cited, text, cite.where)

    aliases = {
        paper_id: (key, into.first_seen[paper_id])
        for key in papers
        for paper_id in groups.members(key)
        if paper_id != key
    }
    alias_nodes, alias_of = alias_tables(aliases)
    sentences, has_sentence, mentions = contexts.tables()
    nodes = {
        "Paper": _paper_table(list(papers.values())),
        "Alias": alias_nodes,
        "Author": table(
            {
                "id": list(authors),
                "name": [name for name, _ in authors.values()],
                ORIGIN_COLUMN: [where for _, where in authors.values()],
            }
        ),
        "Sentence": sentences,
    }
    rels = {
        "ALIAS_OF": alias_of,
        "WROTE": wrote_table(
            [a for a, _ in wrote],
            [p for _, p in wrote],
            [position for position, _ in wrote.values()],
            [where for _, where in wrote.values()],
        ),
        "CITES": cites_table(
            [c.citing for c in cites.values()],
            [c.cited for c in cites.values()],
            [c.where for c in cites.values()],
            dataset=DATASET,
            n_contexts=nullable_ints([None if c.texts is None else len(c.texts) for c in cites.values()]),
            intents=[c.intents for c in cites.values()],
            influential=[c.influential for c in cites.values()],
        ),
        "HAS_SENTENCE": has_sentence,
        "MENTIONS": mentions,
    }
    keyword_tables = keywords.tables()
    if keyword_tables:
        nodes[KEYWORD_TABLE], rels[HAS_KEYWORD] = keyword_tables[KEYWORD_TABLE], keyword_tables[HAS_KEYWORD]
    return GraphBatch(
        SOURCE,
        nodes={name: frame for name, frame in nodes.items() if len(frame)},
        rels={name: frame for name, frame in rels.items() if len(frame)},
        rejects=rejects,
    )


def _paper_table(rows: list[dict[str, object]]) -> pd.DataFrame:
    columns: dict[str, Any] = {name: [row[name] for row in rows] for name in PAPER_COLUMNS}
    return table({**columns, "year": nullable_ints(columns["year"])})


__all__ = ["DATASET", "SOURCE", "load"]
