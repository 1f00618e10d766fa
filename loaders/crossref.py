"""Crossref works -> papers, authors and citations, references resolved by DOI or by title.

``citegraph ingest crossref PATH``: PATH is a file, a folder (every ``*.json``, ``*.jsonl`` and
``*.gz`` under it, in sorted order) or a quoted glob. Told apart by content, gzipped or not (see
:mod:`loaders._json_exports`):

* a ``/works/{doi}`` response: the work object (``message``), with or without its
  ``{"status": "ok", "message": {...}}`` envelope;
* a ``/works?query=…`` response: ``{"status": "ok", "message": {"items": [work, ...]}}``;
* a dump file (Crossref's public data file, ``0.json.gz``): ``{"items": [work, ...]}``;
* JSON Lines of works (or of any of the above), and a JSON array of works.

A work such as::

    {"DOI": "10.7554/eLife.01567", "title": ["Automated quantitative histology ..."],
     "abstract": "<jats:p>Among various advantages, ...</jats:p>",
     "issued": {"date-parts": [[2014, 2, 11]]}, "container-title": ["eLife"],
     "author": [{"given": "Martial", "family": "Sankar", "sequence": "first"}, ...],
     "reference": [{"key": "bib1", "DOI": "10.1038/nature02100", "article-title": "APL regulates ..."},
                   {"key": "ref7", "unstructured": "Smith J. A title. J Biol 2001;3:4."}, ...]}

becomes

* ``Paper {id="doi:<doi lower-cased>", title, abstract, year, venue, doi, dataset="crossref",
  stub=false}``: ``title`` is the first of ``title``; ``abstract`` has its JATS/HTML tags removed,
  entities decoded, whitespace collapsed and a leading "Abstract" heading dropped; ``year`` is
  the first date part of ``issued``, else of ``published``, ``published-print``,
  ``published-online``; ``venue`` is the first of ``container-title`` (entities decoded). Crossref
  gives a work no id but its DOI, so there are no aliases;
* ``Author {id, name, orcid}`` + ``(Author)-[:WROTE {position}]->(Paper)`` for each entry of ``author``:
  ``name`` is "``given`` ``family``" (``name`` for an organisation), ``id``
  :func:`loaders.ids.author_key` of it, ``position`` its 1-based place (a name twice on one work:
  one edge, its first place); ``orcid`` is the bare iD of the first entry's ``ORCID``
  (``http://orcid.org/0000-0002-…`` -> ``0000-0002-…``), when it is well-formed;
* each entry of ``reference`` (see :class:`CrossrefReport` for the counts):

  * with a ``DOI`` (or, without one, a DOI written in its ``unstructured`` text):
    ``(Paper)-[:CITES {dataset="crossref"}]->(Paper {id="doi:…"})``; a cited DOI
    that is not one of the input's works becomes a stub ``Paper {id, doi, stub=true,
    dataset="crossref"}`` (no title: the reference's own ``article-title`` would overwrite a
    stored paper's clean one);
  * without a DOI but with an ``article-title`` (else an ``unstructured`` string): resolved by
    title with a :class:`loaders.resolve.TitleIndex` (MinHash candidates, accepted at a
    normalised similarity >= 0.9, ambiguous titles never) over the titles of the input's own
    works and, when given, ``extra_titles`` (the registry passes the ACL Anthology of the data
    folder, ``$CITEGRAPH_DATA/anthology/papers.jsonl.gz``, when it is there). A match is a CITES
    edge to that paper; an Anthology paper gets a ``Paper`` row with its ``id`` only (merged into
    a store that holds it, it changes nothing);
  * otherwise, or when the title matches nothing: read as fields (:func:`loaders.refstrings.crossref_reference`:
    ``author``, ``year``, ``journal-title`` (else ``series-title``/``volume-title``), ``volume``,
    ``first-page``, any that is missing parsed from ``unstructured``) and matched as works by the rules of
    Web of Science and Scopus references (:mod:`loaders.refmatch`: source + volume + first page with author and
    year as checks, else author + year + source; ``--thesaurus`` / ``$CITEGRAPH_REFERENCE_THESAURUS`` forces
    joins and splits): a stub ``Paper {id="ref:<key>", title, year, venue, volume, first_page, label,
    reference, stub=true}`` with its reference key and ``ref:<source initials>-v<volume>-p<first page>`` as
    ``Alias`` nodes, so that a later load of the same work from any source meets it (counted ``by_fields``);
  * one whose fields give neither author + year nor volume + first page: counted as unresolved, not stored.

  Two entries of one work naming the same paper give one edge. The counts by DOI, by title and
  unresolved are logged and returned by :func:`load_with_report`.

A work read twice (overlapping pages) is loaded once: the copy with the latest
``indexed.date-time`` wins (the later-read one on a tie); the superseded copies are counted, not
rejected.

Rejected, with ``<file>:<line>`` (``<file>:record N`` for the works of a one-document file,
``<file>:<line> record N`` for those of a list on one line of several) and a reason: a line or
file that is not UTF-8, not JSON or cut short, a value that is neither a work nor a list of works,
a work without a DOI (``Paper``); ``author`` that is not a list and an entry without a name
(``WROTE``/``Author``; the work is loaded); ``reference`` that is not a list, an entry that is not
an object, a reference that gives the citing work's own DOI (``CITES``; a title that matches the
citing work's own is counted as unresolved: the match is a guess, an earlier version of the work
most likely). Values of the wrong
type (``"title": 5``) are passed on for :mod:`graph.validate` to reject with the same origin.
"""

from __future__ import annotations

import html
import logging
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from graph.errors import Reject
from graph.ingest import GraphBatch
from graph.schema import ORIGIN_COLUMN
from graph.validate import preview
from loaders._common import WorkAuthor, alias_tables, author_table, input_files, nullable_ints, table, work_authors
from loaders._database_exports import key_references, stub_fields, thesaurus_from_env
from loaders._json_exports import JsonProblem, display_names, iter_json_values
from loaders.citedrefs import CitedRef
from loaders.ids import DOI_PREFIX, PaperIdError, canonical_paper_id
from loaders.refmatch import Thesaurus, collapse
from loaders.refstrings import crossref_reference
from loaders.resolve import TitleIndex
from loaders.toolkit import cites_table, wrote_table

log = logging.getLogger(__name__)

SOURCE = "crossref"  # the registry name; the batch is named "crossref"
DATASET = "crossref"  # Paper.dataset and CITES.dataset
SUFFIXES = (".json", ".jsonl", ".gz")
DATE_FIELDS = ("issued", "published", "published-print", "published-online")  # where the year is looked for

_TAG = re.compile(r"<[^>]+>")
_SPACE = re.compile(r"\s+")
_ABSTRACT_HEADING = re.compile(r"^\s*<jats:title>\s*abstract\s*</jats:title>", re.I)
_DOI_IN_TEXT = re.compile(r"\b10\.\d{4,9}/[^\s\"<>]+")  # "…, D-Lib Magazine, doi:10.1045/june2004-harnad."

# How a reference was resolved (CrossrefReport counts).
BY_DOI, BY_TITLE, BY_FIELDS, UNRESOLVED = "doi", "title", "fields", "unresolved"


@dataclass(frozen=True)
class CrossrefReport:
    """What a load read and how its references were resolved.

    ``references = by_doi + by_title + by_fields + unresolved + self_citations``; ``repeated`` are among
    ``by_doi``/``by_title``/``by_fields`` (they resolved, to a paper the work already cites).
    """

    files: int
    works: int  # work records read (every copy)
    superseded: int  # copies of a work read twice, dropped for a newer one
    references: int  # entries of `reference` of the works loaded
    by_doi: int  # references with a DOI, or one in their text (CITES edges, to a work of the input or a stub)
    by_title: int  # references without a DOI matched by title
    unresolved: int  # references without a DOI, title match or fields that name a work (author + year, volume + page)
    self_citations: int  # references giving the citing work's own DOI (rejected)
    repeated: int  # a second reference of one work to the same paper (one edge)
    by_fields: int = 0  # references without a DOI keyed by their fields as a work (a ref:… stub, loaders.refmatch)


@dataclass
class _Reference:
    row: int  # the citing work's row
    doi: str | None  # canonical doi:…, when the reference has a usable DOI
    title: str | None  # article-title, else None
    raw: str | None  # unstructured, else None
    cited: CitedRef | None = None  # its fields (loaders.refstrings.crossref_reference), for one without a DOI


@dataclass
class _Columns:
    keys: list[str] = field(default_factory=list)  # doi:… of each work row
    papers: dict[str, list[object]] = field(
        default_factory=lambda: {k: [] for k in ("title", "abstract", "year", "venue", ORIGIN_COLUMN)}
    )
    indexed: list[str] = field(default_factory=list)  # indexed.date-time: which copy of a work wins
    alive: list[bool] = field(default_factory=list)
    row_of: dict[str, int] = field(default_factory=dict)
    authors: dict[str, tuple[WorkAuthor, str]] = field(default_factory=dict)  # key -> (first entry, its origin)
    wrote: list[tuple[int, str, int]] = field(default_factory=list)  # (row, author key, position)
    references: list[_Reference] = field(default_factory=list)
    rejects: list[Reject] = field(default_factory=list)
    works_read: int = 0
    superseded: int = 0

    def reject(self, table_name: str, where: str, reason: str) -> None:
        self.rejects.append(Reject(table_name, where, reason))


def load(
    path: Path,
    extra_titles: Callable[[], Iterable[tuple[str, str]]] | None = None,
    *,
    thesaurus: Thesaurus | None = None,
) -> GraphBatch:
    """Parse Crossref works (see the module docstring) into a batch named ``crossref``.

    ``extra_titles``: ``(paper id, title)`` pairs of papers outside the input that references
    without a DOI may be matched to; called only when some reference needs it. ``thesaurus``: forced
    joins and splits of the references keyed by their fields (default ``$CITEGRAPH_REFERENCE_THESAURUS``).
    """
    return load_with_report(path, extra_titles, thesaurus=thesaurus)[0]


def load_with_report(
    path: Path,
    extra_titles: Callable[[], Iterable[tuple[str, str]]] | None = None,
    *,
    thesaurus: Thesaurus | None = None,
) -> tuple[GraphBatch, CrossrefReport]:
    """:func:`load`, and the counts of :class:`CrossrefReport`."""
    started = time.perf_counter()
    files = input_files(Path(path), SUFFIXES)
    out = _Columns()
    named = list(zip(files, display_names(files)))
    for file, name in tqdm(named, desc=SOURCE, unit=" files", disable=None if len(files) > 1 else True, leave=False):
        for item in iter_json_values(file):
            if isinstance(item, JsonProblem):
                out.reject("Paper", f"{name}:{item.line}", item.reason)
                continue
            _value(item.value, name, item.line, item.whole_file, out)
    batch, report = _batch(out, len(files), extra_titles, thesaurus or thesaurus_from_env())
    log.info(
        "%s: %d works read (%d superseded copies), %d references: %d by DOI, %d by title, %d by fields, %d unresolved "
        "(%d self-citations rejected, %d repeats merged); %d rejects (%.1fs)",
        path,
        report.works,
        report.superseded,
        report.references,
        report.by_doi,
        report.by_title,
        report.by_fields,
        report.unresolved,
        report.self_citations,
        report.repeated,
        len(batch.rejects),
        time.perf_counter() - started,
    )
    return batch, report


def _value(value: object, file: str, line: int, whole_file: bool, out: _Columns) -> None:
    """One JSON value: a work, a list of works, or an envelope / dump holding them."""
    if isinstance(value, dict) and "message" in value and "DOI" not in value:
        value = value["message"]
    if isinstance(value, dict) and "items" in value and "DOI" not in value:
        value = value["items"]
        if not isinstance(value, list):
            out.reject("Paper", f"{file}:{line}", f"`items` is {preview(value)}, expected a list of works")
            return
    if not isinstance(value, list):
        _work(value, f"{file}:{line}", out)
        return
    for n, work in enumerate(value, start=1):
        _work(work, f"{file}:record {n}" if whole_file else f"{file}:{line} record {n}", out)


def _first(value: object) -> object:
    """Crossref's one-element lists (``title``, ``container-title``): the first entry; a string as is."""
    if isinstance(value, list):
        return next((v for v in value if not (isinstance(v, str) and not v.strip())), None)
    return value


def _text(value: object, *, markup: bool = False) -> object:
    """Entities decoded (and tags removed when ``markup``), whitespace collapsed; empty is null."""
    if not isinstance(value, str):
        return value
    if markup:
        value = _TAG.sub(" ", _ABSTRACT_HEADING.sub("", value))
    return _SPACE.sub(" ", html.unescape(value)).strip() or None


def _year(work: dict[str, Any]) -> object:
    for name in DATE_FIELDS:
        date = work.get(name)
        parts = date.get("date-parts") if isinstance(date, dict) else None
        if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0] and parts[0][0] is not None:
            return parts[0][0]
    return None


def _work(work: object, where: str, out: _Columns) -> None:
    if not isinstance(work, dict):
        out.reject("Paper", where, f"value is {preview(work)}, expected a Crossref work (an object with a `DOI`)")
        return
    given = work.get("DOI")
    try:
        key = canonical_paper_id(given) if isinstance(given, str) else None
    except PaperIdError:
        key = None
    if key is None or not key.startswith(DOI_PREFIX):
        out.reject(
            "Paper",
            where,
            f"work `DOI` is {preview(work.get('DOI'))}, expected a DOI such as '10.7554/eLife.01567'; "
            "is this a Crossref works export?",
        )
        return
    out.works_read += 1
    indexed = work.get("indexed")
    stamp = indexed.get("date-time") if isinstance(indexed, dict) else None
    stamp = stamp if isinstance(stamp, str) else ""
    earlier = out.row_of.get(key)
    if earlier is not None:
        out.superseded += 1
        if stamp < out.indexed[earlier]:
            return
        out.alive[earlier] = False
    row = len(out.keys)
    out.row_of[key] = row
    out.keys.append(key)
    out.indexed.append(stamp)
    out.alive.append(True)
    papers = out.papers
    papers["title"].append(_text(_first(work.get("title"))))
    papers["abstract"].append(_text(work.get("abstract"), markup=True))
    papers["year"].append(_year(work))
    papers["venue"].append(_text(_first(work.get("container-title"))))
    papers[ORIGIN_COLUMN].append(where)
    _authors(work.get("author"), row, where, out)
    _references(work.get("reference"), row, where, out)


def _authors(authors: object, row: int, where: str, out: _Columns) -> None:
    def read(author: dict[str, Any]) -> tuple[object, object, object]:
        parts = [author.get("given"), author.get("family")]
        name = " ".join(p.strip() for p in parts if isinstance(p, str) and p.strip()) or author.get("name")
        return name, author.get("ORCID"), None

    for author in work_authors(authors, where, out.reject, read, field="author", entry="author"):
        out.authors.setdefault(author.key, (author, where))
        out.wrote.append((row, author.key, author.position))


def _references(references: object, row: int, where: str, out: _Columns) -> None:
    if references is None:
        return
    if not isinstance(references, list):
        out.reject(
            "CITES",
            where,
            f"`reference` is {preview(references)}, expected a list; the work is loaded without its references",
        )
        return
    for n, reference in enumerate(references, start=1):
        if not isinstance(reference, dict):
            out.reject("CITES", where, f"reference {n} is {preview(reference)}, expected an object; it is skipped")
            continue
        title, raw = reference.get("article-title"), reference.get("unstructured")
        given = reference.get("DOI")
        if not isinstance(given, str) and isinstance(raw, str) and (match := _DOI_IN_TEXT.search(raw)):
            given = match.group(0).rstrip(".,;)]")  # the sentence's punctuation, not the DOI's
        doi = None
        if isinstance(given, str):
            try:
                doi = canonical_paper_id(given)
            except PaperIdError:
                doi = None  # a DOI that does not parse: the title may still say which work it is
        doi = doi if doi and doi.startswith(DOI_PREFIX) else None
        out.references.append(
            _Reference(
                row,
                doi,
                (title.strip() or None) if isinstance(title, str) else None,
                (raw.strip() or None) if isinstance(raw, str) else None,
                crossref_reference(reference) if doi is None else None,
            )
        )


def _batch(
    out: _Columns,
    n_files: int,
    extra_titles: Callable[[], Iterable[tuple[str, str]]] | None,
    thesaurus: Thesaurus | None = None,
) -> tuple[GraphBatch, CrossrefReport]:
    live = [row for row, alive in enumerate(out.alive) if alive]
    origins = [str(where) for where in out.papers[ORIGIN_COLUMN]]
    references = [r for r in out.references if out.alive[r.row]]
    index = None
    if any(r.doi is None and (r.title or r.raw) for r in references):
        pairs = [
            (out.keys[row], title) for row in live if isinstance(title := out.papers["title"][row], str)
        ]  # the input's own works first
        index = TitleIndex([*pairs, *(extra_titles() if extra_titles else ())])

    by_title_hits: list[tuple[str, float] | None] = []
    for reference in references:
        found = None
        if reference.doi is None and index is not None:
            if reference.title:
                found = index.resolve(reference.title)
            if found is None and reference.raw:
                found = index.resolve_reference(reference.raw)
        by_title_hits.append(found)
    # References that neither a DOI nor a title resolves: their fields key them as works (loaders.refmatch).
    keyed = key_references(
        [r.cited for r, hit in zip(references, by_title_hits) if r.doi is None and hit is None and r.cited],
        thesaurus=thesaurus,
    )
    counts = dict.fromkeys((BY_DOI, BY_TITLE, BY_FIELDS, UNRESOLVED), 0)
    self_citations = repeated = 0
    field_stubs: dict[str, str] = {}  # ref:… stub -> origin of the first reference naming it
    cites: dict[tuple[str, str], str] = {}  # (citing, cited) -> origin
    stubs: dict[str, str] = {}  # cited DOI not in the input -> origin of the first reference
    by_title: dict[str, str] = {}  # matched paper outside the input -> origin
    rejects = list(out.rejects)
    for reference, found in zip(references, by_title_hits):
        citing, where = out.keys[reference.row], origins[reference.row]
        target, how = reference.doi, BY_DOI
        if target is None:
            target, how = (found[0], BY_TITLE) if found else (None, UNRESOLVED)
        if target is None and reference.cited is not None:
            target = keyed.target.get(collapse(reference.cited.raw))
            how = BY_FIELDS if target else UNRESOLVED
        counts[how] += 1
        if target is None:
            continue
        if target == citing:
            if how == BY_TITLE:  # the resolver's guess, not the data's claim: the entry stays unresolved
                counts[BY_TITLE] -= 1
                counts[UNRESOLVED] += 1
                continue
            self_citations += 1
            counts[BY_DOI] -= 1
            rejects.append(Reject("CITES", where, f"a reference of {citing} gives its own DOI; it is skipped"))
            continue
        if (citing, target) in cites:
            repeated += 1
            continue
        cites[(citing, target)] = where
        if how == BY_FIELDS:
            field_stubs.setdefault(target, where)
        elif target not in out.row_of or not out.alive[out.row_of[target]]:
            (stubs if how == BY_DOI else by_title).setdefault(target, where)

    n_stubs = len(stubs)
    extra = [t for t in by_title if t not in stubs]
    nulls: list[object] = [None] * (n_stubs + len(extra))
    fielded = [stub_fields(keyed.stubs[key]) for key in field_stubs]
    papers = table(
        {
            "id": [out.keys[row] for row in live] + list(stubs) + extra + list(field_stubs),
            "title": [out.papers["title"][row] for row in live] + nulls + [f["title"] for f in fielded],
            "abstract": [out.papers["abstract"][row] for row in live] + nulls + [None] * len(fielded),
            "year": nullable_ints([out.papers["year"][row] for row in live] + nulls + [f["year"] for f in fielded]),
            "venue": [out.papers["venue"][row] for row in live] + nulls + [f["venue"] for f in fielded],
            "doi": [out.keys[row].removeprefix(DOI_PREFIX) for row in live]
            + [s.removeprefix(DOI_PREFIX) for s in stubs]
            + [None] * (len(extra) + len(fielded)),
            "dataset": [DATASET] * (len(live) + n_stubs) + [None] * len(extra) + [DATASET] * len(fielded),
            "stub": [False] * len(live) + [True] * n_stubs + [None] * len(extra) + [True] * len(fielded),
            **{
                name: [None] * (len(live) + n_stubs + len(extra)) + [f[name] for f in fielded]
                for name in ("reference", "label", "volume", "first_page")
            },
            ORIGIN_COLUMN: [origins[row] for row in live]
            + list(stubs.values())
            + [by_title[t] for t in extra]
            + list(field_stubs.values()),
        }
    )
    alias_nodes, alias_of = alias_tables(
        {alias: (key, field_stubs[key]) for alias, key in keyed.aliases.items() if key in field_stubs}
    )
    wrote = [(row, key, position) for row, key, position in out.wrote if out.alive[row]]
    authored = {key for _, key, _ in wrote}
    kept_authors = [first for key, first in out.authors.items() if key in authored]
    batch = GraphBatch(
        SOURCE,
        nodes={
            "Paper": papers,
            "Author": author_table(kept_authors),
            "Alias": alias_nodes,
        },
        rels={
            "WROTE": wrote_table(
                [key for _, key, _ in wrote],
                [out.keys[row] for row, _, _ in wrote],
                [position for _, _, position in wrote],
                [origins[row] for row, _, _ in wrote],
            ),
            "ALIAS_OF": alias_of,
            "CITES": cites_table([s for s, _ in cites], [t for _, t in cites], list(cites.values()), dataset=DATASET),
        },
        rejects=rejects,
    )
    batch.nodes = {name: frame for name, frame in batch.nodes.items() if len(frame)}
    batch.rels = {name: frame for name, frame in batch.rels.items() if len(frame)}
    report = CrossrefReport(
        files=n_files,
        works=out.works_read,
        superseded=out.superseded,
        references=len(references),
        by_doi=counts[BY_DOI],
        by_title=counts[BY_TITLE],
        unresolved=counts[UNRESOLVED],
        by_fields=counts[BY_FIELDS],
        self_citations=self_citations,
        repeated=repeated,
    )
    return batch, report


__all__ = [
    "BY_DOI",
    "BY_FIELDS",
    "BY_TITLE",
    "DATASET",
    "SOURCE",
    "UNRESOLVED",
    "CrossrefReport",
    "load",
    "load_with_report",
]
