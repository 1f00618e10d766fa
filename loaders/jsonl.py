"""Your own corpus: a documented JSON Lines format for data the project has no loader for.

One JSON object per line (UTF-8; the file may be gzipped), told apart by ``type``::

    {"type": "paper", "id": "P98-1081", "title": "...", "abstract": "...", "year": 1998, "venue": "ACL",
     "doi": "10.3115/...", "arxiv_id": null, "authors": ["Ann Lee", "Bo Chen"], "categories": ["cs.CL"],
     "ids": {"s2": "649def34f8be52c8b66281af98ae884c09aef38b", "pmid": "18153422"},
     "keywords": ["part-of-speech tagging", "hidden Markov models"]}
    {"type": "paper", "id": "10.1162/coli.2000.26.1.1", "stub": true}
    {"type": "paper", "id": "ref-12", "reference": "Brants, T. (2000). TnT: a statistical part-of-speech tagger. ANLP."}
    {"type": "citation", "citing": "P98-1081", "cited": "my-paper-7", "contexts": ["As shown by ...", "..."]}
    {"type": "sentence", "paper": "P98-1081", "sid": 12, "text": "We tag with TnT [3].", "section": "Method",
     "cites": [{"paper": "my-paper-7", "marker": "[3]"}]}

Required: ``paper`` ``id``; ``citation`` ``citing`` and ``cited``; ``sentence`` ``paper``, ``sid``
and ``text``. Everything else may be left out or null. What each becomes:

* ``paper`` -> ``Paper {id, title, abstract, year, venue, doi, arxiv_id, stub, reference, dataset="jsonl"}``;
  ``Author {id, name}`` + ``(Author)-[:WROTE {position}]->(Paper)`` for each name in ``authors``
  ("First Last"; ``id`` is :func:`loaders.ids.author_key` of the name, ``position`` 1-based, a name
  twice on one paper gives one edge at its first place); ``(Paper)-[:IN_CATEGORY {score=1.0,
  inferred=false}]->(ArxivCategory)`` for each code in ``categories`` (arXiv codes such as
  ``cs.CL``; the categories must be in the store, so ingest ``taxonomy`` first). ``keywords``: the
  paper's author keywords, ``Keyword {kind="author"}`` + ``HAS_KEYWORD`` (:mod:`loaders.keywords`).
  ``year`` is an integer (a string of digits is read as one); empty strings in ``title``,
  ``abstract``, ``venue`` mean "not known" (null); ``doi`` is stored lower-cased without a
  ``doi:``/``https://doi.org/`` prefix, ``arxiv_id`` without ``arXiv:`` and version.
  **Stubs**: a paper known only by its id (a work your data cite but do not describe) is
  ``"stub": true`` or simply has no ``title``; it is stored with ``stub=true`` (``stub=false``
  for every paper with a title). A later load of the same id with a title fills it in and makes
  it ``stub=false``. ``"stub": false`` without a title is rejected. A work known only from a
  bibliography gives its entry as ``reference`` (``"Brants, T. (2000). TnT ..."``) and no ``title``: it
  is a stub with ``Paper.reference`` set, as the Web of Science and Scopus importers store the works
  their records cite; the paper embeddings, the retrieval index and the reranker's title features use the
  reference string as its text while it has no title or abstract. The string is read as fields
  (:func:`loaders.refstrings.parse_reference`): the stub gets ``label`` (first author, year, source, volume:page),
  ``volume`` and ``first_page``, and its reference key (``ref:<key>``) and field key (``ref:<source
  initials>-v<volume>-p<page>``) become ``Alias`` nodes when no other work of the file has them, so that a
  Web of Science, Scopus, Crossref or unarXive load citing the same work meets it.
  **Other ids**: ``ids`` maps a kind of id to the paper's id of that kind (``doi``, ``arxiv``,
  ``acl``, ``openalex``, ``s2`` (Semantic Scholar paperId), ``s2corpus``, ``pmid``, ``mag``,
  ``wos``, ``scopus``); each, and the ``doi`` and ``arxiv_id`` fields, becomes an
  ``Alias {id, kind}`` with ``(Alias)-[:ALIAS_OF]->(Paper)`` in the prefixed form of
  :mod:`loaders.ids` (``doi:10.1/x``, ``pmid:18153422``), so the paper is found by any of them, and
  a ``citing``/``cited``/``paper`` of this file may name the paper by any of them. ``id`` stays
  the key. ``ids.doi``/``ids.arxiv`` fill ``doi``/``arxiv_id`` when those fields are absent. An id
  in ``ids`` that is another paper's ``id`` joins the two papers (:func:`_join_papers_named_by_ids`);
* ``citation`` -> ``(Paper)-[:CITES {n_contexts, dataset="jsonl"}]->(Paper)``; both papers must
  be defined, in this file (a stub record will do) or already in the store. Each distinct text in
  ``contexts`` becomes a citing sentence of the citing paper (:mod:`loaders.contexts`):
  ``Sentence {id="<citing>#ctx<h>", paper_id=<citing>, text}`` with ``HAS_SENTENCE`` and
  ``(Sentence)-[:MENTIONS]->(cited)``. ``h`` hashes the text (:func:`loaders.contexts.context_id`), so
  a context has the same id in any file and any run, and a sentence that cites two papers (the same
  text in two citation records of one citing paper) is one node with two ``MENTIONS``, also when
  the records are in different files. A context whose text (whitespace runs as one space) is a ``sentence``
  of the citing paper in this file is that sentence: it gets the ``MENTIONS``, and no
  ``#ctx<h>`` copy is made. ``n_contexts`` is the number of distinct sentences of the citing
  paper that mention the cited one (null when ``contexts`` is absent and no sentence cites it);
* ``sentence`` -> ``Sentence {id="<paper>#<sid>", paper_id, sid, section, text}`` +
  ``HAS_SENTENCE``: a sentence of the paper's full text, ``sid`` its position (an integer).
  ``cites`` names the papers the sentence cites, as ids (``["P98-1081"]``) or with the marker
  that cites each (``[{"paper": "P98-1081", "marker": "[3]"}]``): each becomes
  ``(Sentence)-[:MENTIONS {marker}]->(cited)`` (a paper named twice: one edge, the first marker),
  and ``CITES {n_contexts}`` from the paper to each cited one that no ``citation`` record gives.
  The cited papers must be defined, in this file (a stub record will do) or in the store.

Paper ids (``id``, ``citing``, ``cited``, ``paper``) go through
:func:`loaders.ids.canonical_paper_id` when they read as an ACL Anthology id, an arXiv id or a DOI
(``p98-1081`` -> ``P98-1081``, ``arXiv:2101.00001v2`` -> ``arxiv:2101.00001``, ``10.18653/V1/X`` ->
``doi:10.18653/v1/x``), so they meet the same papers loaded from other sources; any other id is
kept as given (surrounding whitespace removed): ``my-paper-7`` stays ``my-paper-7``.

Rejected here, with ``<file>:<line>`` and a reason: a line that is not UTF-8, not JSON, not an
object, without a known ``type`` (table ``line``: it is a record of no table); a record without a
required field, or with a paper id or ``sid`` that is not a string or an integer (the table of its
type); ``authors``/``categories``/``contexts``/``cites``/``keywords`` that is not a list (``WROTE``/
``IN_CATEGORY``/``MENTIONS``/``MENTIONS``/``HAS_KEYWORD``; the rest of the record is loaded) and entries of
them that are not names, codes, texts, cited papers or terms (``Author``/``IN_CATEGORY``/``Sentence``/
``MENTIONS``/``Keyword``); ``ids``
that is not an object, or an id in it that does not read as its kind, or that another paper of
the file has as an alias (``Alias``; one that is another paper's id joins the two instead); a
citation of a paper by itself, or a sentence citing its own paper (``CITES``/``MENTIONS``). Values of
the wrong type (``"year": "n.d."``, ``"title": 5``, ``"stub": "yes"``) are passed on for
:mod:`graph.validate` to reject with the same origin, which also rejects a citation of a paper
defined nowhere (dangling) and a paper id defined twice. Blank lines are skipped; fields not listed
above are ignored with a warning in the log. With ``--on-error skip``, the context sentences of a
citation whose citing paper exists nowhere are stored without their ``HAS_SENTENCE`` edge.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm import tqdm

from graph.errors import Reject
from graph.ingest import GraphBatch
from graph.schema import ORIGIN_COLUMN, SOURCE_COLUMN, TARGET_COLUMN
from graph.validate import preview
from loaders._common import (
    alias_tables,
    integer_or_as_is,
    iter_raw_lines,
    nullable_ints,
    origin,
    require_file,
    table,
    text_or_null,
)
from loaders.citedrefs import reference_label
from loaders.contexts import CONTEXT_TAG, ContextSentences, context_texts
from loaders.ids import ARXIV_PREFIX, DOI_PREFIX, PaperIdError, author_key, canonical_paper_id, typed_id
from loaders.keywords import AUTHOR, HAS_KEYWORD, KEYWORD_TABLE, KeywordRows, normalise_keyword
from loaders.refmatch import field_alias
from loaders.refstrings import parse_reference
from loaders.toolkit import JsonProblem, parse_json_line

log = logging.getLogger(__name__)

SOURCE = "jsonl"  # the registry name; a batch is named "jsonl:<file name>"
DATASET = "jsonl"  # Paper.dataset and CITES.dataset
LINE_TABLE = "line"  # Reject.table of a line that is a record of no table (not JSON, unknown type)

FIELDS: dict[str, tuple[str, ...]] = {
    "paper": (
        "id",
        "title",
        "abstract",
        "year",
        "venue",
        "doi",
        "arxiv_id",
        "authors",
        "categories",
        "stub",
        "ids",
        "reference",
        "keywords",
    ),
    "citation": ("citing", "cited", "contexts"),
    "sentence": ("paper", "sid", "text", "section", "cites"),
}
REQUIRED: dict[str, tuple[str, ...]] = {
    "paper": ("id",),
    "citation": ("citing", "cited"),
    "sentence": ("paper", "sid", "text"),
}
TABLE = {"paper": "Paper", "citation": "CITES", "sentence": "Sentence"}  # a record's main table
ID_KINDS = ("doi", "arxiv", "acl", "openalex", "s2", "s2corpus", "pmid", "mag", "wos", "scopus")  # keys of `ids`


def paper_id(raw: str) -> str:
    """The canonical id when ``raw`` reads as an ACL, arXiv or DOI id; else ``raw`` stripped.

    >>> paper_id(" p98-1081 "), paper_id("arXiv:2101.00001v2"), paper_id("my-paper-7")
    ('P98-1081', 'arxiv:2101.00001', 'my-paper-7')
    """
    try:
        return canonical_paper_id(raw)
    except PaperIdError:
        return raw.strip()


def _external_id(value: object, prefix: str) -> object:
    """A DOI or arXiv id without its prefix (``doi:``/``arxiv:``, URL forms, versions); else as given."""
    value = text_or_null(value)
    if not isinstance(value, str):
        return value
    try:
        canonical = canonical_paper_id(value)
    except PaperIdError:
        return value
    return canonical[len(prefix) :] if canonical.startswith(prefix) else value


@dataclass(frozen=True)
class _Citation:
    citing: str
    cited: str
    texts: list[str] | None  # distinct contexts; None when `contexts` is absent or not a list
    where: str


@dataclass(frozen=True)
class _Sentence:
    paper: str
    sid: int
    section: object
    text: object
    cites: list[tuple[str, str | None]]  # (cited paper, marker)
    where: str


@dataclass
class _Tables:
    """Column lists of every table the loader fills, the records resolved at the end, and the rejects."""

    papers: dict[str, list[object]] = field(
        default_factory=lambda: {
            k: []
            for k in (
                "id",
                "title",
                "abstract",
                "year",
                "venue",
                "doi",
                "arxiv_id",
                "stub",
                "reference",
                "label",
                "volume",
                "first_page",
                ORIGIN_COLUMN,
            )
        }
    )
    authors: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> (first spelling, its origin)
    wrote: dict[str, list[object]] = field(default_factory=lambda: _rel_columns("position"))
    in_category: dict[str, list[object]] = field(default_factory=lambda: _rel_columns("score", "inferred"))
    aliases: list[tuple[str, str, str]] = field(default_factory=list)  # (alias, paper key, origin) in file order
    # The reference and field keys of the works known by a `reference` string (alias, paper key, origin): aliases
    # where they name one paper of the file only.
    reference_keys: list[tuple[str, str, str]] = field(default_factory=list)
    keywords: KeywordRows = field(default_factory=KeywordRows)  # author keywords, re-keyed in _batch
    # Citations and sentences in file order, resolved once every paper's ids are known.
    records: list[_Citation | _Sentence] = field(default_factory=list)
    rejects: list[Reject] = field(default_factory=list)
    unknown_fields: Counter[str] = field(default_factory=Counter)

    def reject(self, table_name: str, where: str, reason: str) -> None:
        self.rejects.append(Reject(table_name, where, reason))


def _rel_columns(*properties: str) -> dict[str, list[object]]:
    return {k: [] for k in (SOURCE_COLUMN, TARGET_COLUMN, *properties, ORIGIN_COLUMN)}


def _append(columns: dict[str, list[object]], **values: object) -> None:
    for name, column in columns.items():
        column.append(values.get(name))


def load(path: Path) -> GraphBatch:
    """Parse a JSON Lines corpus (see the module docstring) into a batch named ``jsonl:<file name>``."""
    path = Path(path)
    require_file(path, SOURCE)
    started = time.perf_counter()
    out = _Tables()
    first_unknown: dict[str, str] = {}
    lines = tqdm(iter_raw_lines(path), desc=path.name, unit=" lines", disable=None, leave=False)
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        where = origin(path, number)
        record = _parse_line(raw, where, out)
        if record is None:
            continue
        kind = record["type"]
        for name in record.keys() - {"type", *FIELDS[kind]}:
            out.unknown_fields[f"{kind}.{name}"] += 1
            first_unknown.setdefault(f"{kind}.{name}", where)
        missing = [name for name in REQUIRED[kind] if _absent(record.get(name))]
        if missing:
            fields = ", ".join(f"`{name}`" for name in missing)
            out.reject(TABLE[kind], where, f"{kind} record has no {fields}; a {kind} needs {_required(kind)}")
            continue
        {"paper": _paper, "citation": _citation, "sentence": _sentence}[kind](record, where, out)

    for name, count in out.unknown_fields.items():
        log.warning(
            "%s: field `%s` is not part of the format and was ignored (%d records, first at %s); see loaders/jsonl.py",
            path.name,
            name,
            count,
            first_unknown[name],
        )
    batch = _batch(path, out)
    log.info(
        "%s: %s, %d rejects (%.1fs)",
        path.name,
        ", ".join(f"{len(frame)} {name}" for name, frame in {**batch.nodes, **batch.rels}.items()) or "nothing",
        len(batch.rejects),
        time.perf_counter() - started,
    )
    return batch


def _absent(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _required(kind: str) -> str:
    names = [f"`{name}`" for name in REQUIRED[kind]]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"


def _parse_line(raw: bytes, where: str, out: _Tables) -> dict[str, Any] | None:
    """The line's record when it is a JSON object with a known ``type``; else a reject and None."""
    parsed = parse_json_line(raw, 0, expected="JSON object", advice="")
    if isinstance(parsed, JsonProblem):
        out.reject(LINE_TABLE, where, parsed.reason)
        return None
    record = parsed.value
    kinds = ", ".join(FIELDS)
    if not isinstance(record, dict):
        out.reject(
            LINE_TABLE, where, f"line is a JSON {type(record).__name__}, expected an object with a `type` ({kinds})"
        )
        return None
    kind = record.get("type")
    if kind not in FIELDS:
        what = "has no `type`" if kind is None else f"has `type` {preview(kind)}"
        out.reject(LINE_TABLE, where, f"record {what}; expected one of {kinds}")
        return None
    return record


def _id_or_reject(record: dict[str, Any], name: str, kind: str, where: str, out: _Tables) -> str | None:
    value = record[name]
    if not isinstance(value, str):
        out.reject(TABLE[kind], where, f"`{name}` is {preview(value)}, expected a paper id (a string)")
        return None
    return paper_id(value)


def _paper(record: dict[str, Any], where: str, out: _Tables) -> None:
    pid = _id_or_reject(record, "id", "paper", where, out)
    if pid is None:
        return
    title = text_or_null(record.get("title"))
    stub = record.get("stub")
    if stub is None:
        stub = title is None
    elif stub is False and title is None:
        out.reject(
            "Paper",
            where,
            "paper record has `stub` false but no `title`; give its title, or drop `stub` to load it as a stub",
        )
        return
    ids = _ids(record, pid, where, out)
    doi = _external_id(record.get("doi"), DOI_PREFIX)
    arxiv = _external_id(record.get("arxiv_id"), ARXIV_PREFIX)
    reference = text_or_null(record.get("reference"))
    cited = parse_reference(reference) if isinstance(reference, str) else None
    if cited is not None:
        for key in (cited.ref_id, field_alias(cited.source, cited.volume, cited.page)):
            if key and key != pid:
                out.reference_keys.append((key, pid, where))
    _append(
        out.papers,
        id=pid,
        title=title,
        abstract=text_or_null(record.get("abstract")),
        year=integer_or_as_is(record.get("year")),
        venue=text_or_null(record.get("venue")),
        doi=doi if doi is not None else ids.get("doi", "").removeprefix(DOI_PREFIX) or None,
        arxiv_id=arxiv if arxiv is not None else ids.get("arxiv", "").removeprefix(ARXIV_PREFIX) or None,
        stub=stub,  # a value of another type is left for validation to reject
        reference=reference,
        label=reference_label(cited.first_author, cited.year, cited.source, cited.volume, cited.page)
        if cited is not None and title is None
        else None,
        volume=cited.volume if cited is not None else None,
        first_page=cited.page if cited is not None else None,
        **{ORIGIN_COLUMN: where},
    )
    for prefix, value in ((DOI_PREFIX, doi), (ARXIV_PREFIX, arxiv)):
        if isinstance(value, str) and (alias := paper_id(prefix + value)).startswith(prefix):
            out.aliases.append((alias, pid, where))
    out.aliases += [(alias, pid, where) for alias in ids.values()]
    names = record.get("authors")
    if isinstance(names, list):
        on_paper: set[str] = set()
        for position, name in enumerate(names, start=1):
            key = author_key(name) if isinstance(name, str) else None
            if key is None:
                out.reject("Author", where, f"author {position} is {preview(name)}, expected a name such as 'Ann Lee'")
                continue
            if key in on_paper:
                continue
            on_paper.add(key)
            out.authors.setdefault(key, (" ".join(name.split()), where))
            _append(out.wrote, source=key, target=pid, position=position, **{ORIGIN_COLUMN: where})
    elif names is not None:
        out.reject("WROTE", where, f"`authors` is {preview(names)}, expected a list of names; loaded without authors")
    terms = record.get("keywords")
    if isinstance(terms, list):
        for term in terms:
            if not isinstance(term, str) or normalise_keyword(term) is None:
                out.reject("Keyword", where, f"keyword {preview(term)} is not a term such as 'citation analysis'")
                continue
            out.keywords.add(pid, AUTHOR, term, where)
    elif terms is not None:
        out.reject(
            "HAS_KEYWORD", where, f"`keywords` is {preview(terms)}, expected a list of terms; loaded without keywords"
        )
    codes = record.get("categories")
    if isinstance(codes, list):
        for code in dict.fromkeys(c.strip() if isinstance(c, str) else c for c in codes):
            if not isinstance(code, str) or not code:
                out.reject("IN_CATEGORY", where, f"category {preview(code)} is not an arXiv code such as 'cs.CL'")
                continue
            _append(out.in_category, source=pid, target=code, score=1.0, inferred=False, **{ORIGIN_COLUMN: where})
    elif codes is not None:
        out.reject(
            "IN_CATEGORY", where, f"`categories` is {preview(codes)}, expected a list of arXiv codes such as ['cs.CL']"
        )


def _ids(record: dict[str, Any], pid: str, where: str, out: _Tables) -> dict[str, str]:
    """``{kind: canonical id}`` of the record's ``ids``; what does not read as its kind is an ``Alias`` reject."""
    given = record.get("ids")
    if given is None:
        return {}
    if not isinstance(given, dict):
        out.reject(
            "Alias",
            where,
            f"`ids` is {preview(given)}, expected an object such as "
            '{"doi": "10.1/x", "s2": "<40 hex digits>"}; the paper is loaded without them',
        )
        return {}
    found: dict[str, str] = {}
    for kind, value in given.items():
        if value is None:
            continue
        if kind not in ID_KINDS:
            out.reject(
                "Alias",
                where,
                f"`ids` has an id of kind {preview(kind)}; known kinds: {', '.join(ID_KINDS)}. "
                f"The paper {pid!r} is loaded without it",
            )
            continue
        try:
            found[kind] = typed_id(kind, value)
        except PaperIdError:
            out.reject(
                "Alias",
                where,
                f"`ids.{kind}` is {preview(value)}, which does not read as a {kind} id; "
                f"the paper {pid!r} is loaded without it: correct it or leave it out",
            )
    return found


def _citation(record: dict[str, Any], where: str, out: _Tables) -> None:
    citing = _id_or_reject(record, "citing", "citation", where, out)
    cited = _id_or_reject(record, "cited", "citation", where, out) if citing is not None else None
    if citing is None or cited is None:
        return
    texts = context_texts(record.get("contexts"), where, out.rejects)
    out.records.append(_Citation(citing, cited, texts, where))


def _sentence(record: dict[str, Any], where: str, out: _Tables) -> None:
    pid = _id_or_reject(record, "paper", "sentence", where, out)
    if pid is None:
        return
    sid = integer_or_as_is(record["sid"])
    if not isinstance(sid, int) or isinstance(sid, bool):
        out.reject(
            "Sentence", where, f"`sid` is {preview(record['sid'])}, expected an integer (the sentence's position)"
        )
        return
    out.records.append(
        _Sentence(pid, sid, text_or_null(record.get("section")), record["text"], _cites(record, where, out), where)
    )


def _cites(record: dict[str, Any], where: str, out: _Tables) -> list[tuple[str, str | None]]:
    """A sentence's ``cites`` as (paper id, marker) pairs; entries that name no paper are ``MENTIONS`` rejects."""
    given = record.get("cites")
    if given is None:
        return []
    expected = 'a paper id or {"paper": "<id>", "marker": "[3]"}'
    if not isinstance(given, list):
        out.reject(
            "MENTIONS",
            where,
            f"`cites` is {preview(given)}, expected a list of cited papers ({expected}); "
            "the sentence is loaded without them",
        )
        return []
    cites: list[tuple[str, str | None]] = []
    for n, entry in enumerate(given, start=1):
        cited, marker = (entry.get("paper"), entry.get("marker")) if isinstance(entry, dict) else (entry, None)
        if not isinstance(cited, str) or not cited.strip() or not (marker is None or isinstance(marker, str)):
            out.reject("MENTIONS", where, f"cited paper {n} is {preview(entry)}, expected {expected}")
            continue
        cites.append((paper_id(cited), marker.strip() or None if isinstance(marker, str) else None))
    return cites


def _same_text(text: str) -> str:
    """A sentence text compared with a context: whitespace runs as one space."""
    return " ".join(text.split())


def _join_papers_named_by_ids(out: _Tables) -> None:
    """Join each paper whose ``ids`` name another paper of the file by its key (``"ids": {"mag": "2123"}``
    beside a paper ``"id": "mag:2123"``) into that paper: they are one work.

    As a later load joins a paper into the stored one its ids name (:mod:`graph.aliases`), the paper keyed
    by the id keeps its key and its values; the other record fills the values it lacks (``stub`` false if
    either has a title), and its own key becomes an ``Alias`` of the work, so citations and sentences of the
    file that name it land on the joined paper. Its authors, categories and other ids move over (an author or
    category on both records: one edge, the first).
    """
    keys = {key for key in out.papers["id"] if isinstance(key, str)}
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while key in parent:
            key = parent[key]
        return key

    for alias, key, _ in out.aliases:
        if alias != key and alias in keys and isinstance(key, str) and root(key) != root(alias):
            parent[root(key)] = root(alias)
    if not parent:
        return
    joined = {key: root(key) for key in parent}
    rows = [dict(zip(out.papers, values)) for values in zip(*out.papers.values())]
    kept: dict[str, dict[str, object]] = {}  # the row of each surviving key (its first; a duplicate is validation's)
    for row in rows:
        if row["id"] in joined.values():
            kept.setdefault(str(row["id"]), row)
    merged = []
    for row in rows:
        key = row["id"]
        if not isinstance(key, str) or key not in joined:
            merged.append(row)
            continue
        into = kept[joined[key]]
        out.aliases.append((key, joined[key], str(row[ORIGIN_COLUMN])))
        for name, value in row.items():
            if into.get(name) is None and value is not None:
                into[name] = value
        if row["stub"] is False or into["title"] is not None:
            into["stub"] = False
    out.papers = {name: [row[name] for row in merged] for name in out.papers}
    out.aliases = [(alias, joined.get(key, key), where) for alias, key, where in out.aliases]
    for columns in (out.wrote, out.in_category):
        seen: set[tuple[object, object]] = set()
        kept_rows = []
        for values in zip(*columns.values()):
            row = dict(zip(columns, values))
            row[TARGET_COLUMN] = joined.get(str(row[TARGET_COLUMN]), row[TARGET_COLUMN])
            pair = (row[SOURCE_COLUMN], row[TARGET_COLUMN])
            if pair not in seen:
                seen.add(pair)
                kept_rows.append(row)
        for name in columns:
            columns[name] = [row[name] for row in kept_rows]


def _batch(path: Path, out: _Tables) -> GraphBatch:
    _join_papers_named_by_ids(out)
    rejects = list(out.rejects)
    keys = {str(key) for key in out.papers["id"]}  # papers of this file (a duplicate is left to validation)
    alias_of = _resolve_aliases(out, keys, rejects)
    # A reference or field key that one work of the file has (and no id of the file names): its alias, which a
    # later load of the same work from any source meets (graph.aliases); one that several works share names none.
    named: dict[str, set[str]] = {}
    for key, pid, _ in out.reference_keys:
        named.setdefault(key, set()).add(pid)
    for key, pid, where in out.reference_keys:
        if len(named[key]) == 1 and key not in keys and key not in alias_of:
            alias_of[key] = (pid, where)

    def resolve(paper: str) -> str:
        return alias_of[paper][0] if paper in alias_of else paper

    # Full-text sentences first, so that a context (a citation record, earlier or later in the
    # file) that is one of them adds its MENTIONS there instead of making a copy.
    full_text: dict[tuple[str, str], str] = {}  # (paper, text) -> sentence id
    for record in out.records:
        if isinstance(record, _Sentence) and isinstance(record.text, str):
            full_text.setdefault(
                (resolve(record.paper), _same_text(record.text)), f"{resolve(record.paper)}#{record.sid}"
            )

    sentences: dict[str, list[object]] = {k: [] for k in ("id", "paper_id", "sid", "section", "text", ORIGIN_COLUMN)}
    has_sentence = _rel_columns()
    contexts = ContextSentences()
    citing_sentences: dict[tuple[str, str], set[str]] = {}  # (citing, cited) -> sentences that mention it
    cites: dict[str, list[object]] = _rel_columns("n_contexts", "dataset")
    given_pairs: set[tuple[str, str]] = set()
    cited_pairs: list[tuple[str, str]] = []  # per CITES row of a citation record: (citing, cited)
    without_contexts: list[bool] = []  # per CITES row: its record has no `contexts` list
    by_sentences: dict[tuple[str, str], str] = {}  # pairs cited by sentences -> origin of the first
    for record in out.records:
        if isinstance(record, _Sentence):
            paper = resolve(record.paper)
            sentence_id = f"{paper}#{record.sid}"
            _append(
                sentences,
                id=sentence_id,
                paper_id=paper,
                sid=record.sid,
                section=record.section,
                text=record.text,
                **{ORIGIN_COLUMN: record.where},
            )
            _append(has_sentence, source=paper, target=sentence_id, **{ORIGIN_COLUMN: record.where})
            for cited_id, marker in record.cites:
                cited = resolve(cited_id)
                if cited == paper:
                    rejects.append(
                        Reject(
                            "MENTIONS",
                            record.where,
                            f"sentence {record.sid} of {paper!r} cites {paper!r} itself; a paper cannot cite itself, "
                            "drop it from `cites`",
                        )
                    )
                    continue
                contexts.mention(sentence_id, cited, marker, record.where)
                citing_sentences.setdefault((paper, cited), set()).add(sentence_id)
                by_sentences.setdefault((paper, cited), record.where)
            continue
        citing, cited = resolve(record.citing), resolve(record.cited)
        if citing == cited:
            rejects.append(
                Reject(
                    "CITES",
                    record.where,
                    f"citation from {citing!r} to itself; a paper cannot cite itself, drop the record",
                )
            )
            continue
        _append(cites, source=citing, target=cited, dataset=DATASET, **{ORIGIN_COLUMN: record.where})
        cited_pairs.append((citing, cited))
        without_contexts.append(record.texts is None)
        given_pairs.add((citing, cited))
        mentioning = citing_sentences.setdefault((citing, cited), set())
        for text in record.texts or ():
            same = full_text.get((citing, _same_text(text)))
            if same is not None:
                contexts.mention(same, cited, None, record.where)
                mentioning.add(same)
            else:
                mentioning.add(contexts.mention_context(citing, cited, text, record.where))
    # n_contexts: the distinct sentences (contexts and full text) of the citing paper that cite it.
    cites["n_contexts"] = [
        None if no_texts and not citing_sentences[pair] else len(citing_sentences[pair])
        for pair, no_texts in zip(cited_pairs, without_contexts)
    ]
    for (citing, cited), where in by_sentences.items():
        if (citing, cited) not in given_pairs:
            n = len(citing_sentences[(citing, cited)])
            _append(cites, source=citing, target=cited, n_contexts=n, dataset=DATASET, **{ORIGIN_COLUMN: where})

    context_sentences, context_has_sentence, mentions = contexts.tables()
    papers = table({**out.papers, "year": nullable_ints(out.papers["year"])})
    papers.insert(len(papers.columns) - 1, "dataset", DATASET)
    authors = table(
        {
            "id": list(out.authors),
            "name": [name for name, _ in out.authors.values()],
            ORIGIN_COLUMN: [where for _, where in out.authors.values()],
        }
    )
    alias_nodes, alias_of_table = alias_tables({alias: (key, where) for alias, (key, where) in alias_of.items()})
    nodes = {
        "Paper": papers,
        "Alias": alias_nodes,
        "Author": authors,
        "Sentence": _concat(table({**sentences, "sid": nullable_ints(sentences["sid"])}), context_sentences),
    }
    rels = {
        "ALIAS_OF": alias_of_table,
        "WROTE": table({**out.wrote, "position": nullable_ints(out.wrote["position"])}),
        "IN_CATEGORY": table(out.in_category),
        "CITES": table({**cites, "n_contexts": nullable_ints(cites["n_contexts"])}),
        "HAS_SENTENCE": _concat(table(has_sentence), context_has_sentence),
        "MENTIONS": mentions,
    }
    keyword_tables = out.keywords.tables([resolve(paper) for paper in out.keywords.papers])
    if keyword_tables:
        nodes[KEYWORD_TABLE], rels[HAS_KEYWORD] = keyword_tables[KEYWORD_TABLE], keyword_tables[HAS_KEYWORD]
    return GraphBatch(
        f"{SOURCE}:{path.name}",
        nodes={name: frame for name, frame in nodes.items() if len(frame)},
        rels={name: frame for name, frame in rels.items() if len(frame)},
        rejects=rejects,
    )


def _resolve_aliases(out: _Tables, keys: set[str], rejects: list[Reject]) -> dict[str, tuple[str, str]]:
    """``{alias: (paper key, origin)}``; an alias that names another paper of the file is an ``Alias`` reject."""
    alias_of: dict[str, tuple[str, str]] = {}
    for alias, key, where in out.aliases:
        if alias == key:
            continue
        other = alias if alias in keys else alias_of.get(alias, (key, where))[0]
        if other != key:
            rejects.append(
                Reject(
                    "Alias",
                    where,
                    f"{alias!r} is given as an id of {key!r}, but it already names the paper {other!r} of this "
                    "file; one id names one work: remove it from one of them",
                )
            )
            continue
        alias_of.setdefault(alias, (key, where))
    return alias_of


def _concat(first: pd.DataFrame, second: pd.DataFrame) -> pd.DataFrame:
    """Full-text rows, then context rows (whose missing columns, ``sid`` and ``section``, are null)."""
    if not len(first) or not len(second):
        return first if len(first) else second
    return pd.concat([first, second], ignore_index=True)


__all__ = ["CONTEXT_TAG", "DATASET", "LINE_TABLE", "SOURCE", "load", "paper_id"]
