"""OpenAlex works -> papers, aliases, authors, citations and OpenAlex's own topic taxonomy.

``citegraph ingest openalex PATH``: PATH is a file, a folder (every ``*.json``, ``*.jsonl`` and
``*.gz`` under it, in sorted order) or a quoted glob. Three layouts are told apart by content,
gzipped or not (see :mod:`loaders._json`):

* a **snapshot partition** (``works/updated_date=…/part_000.gz``): JSON Lines, one work per line;
  read line by line and, by ``citegraph ingest``, loaded in batches (:func:`load_chunks`), so a
  400k-work partition loads in bounded memory (docs/results.md);
* a saved **API response page** (``/works?filter=…``): ``{"meta": {...}, "results": [work, ...]}``;
* a **single work** (``/works/W2741809807``): the work object itself (a JSON array of works is read too).

A work such as::

    {"id": "https://openalex.org/W2741809807", "doi": "https://doi.org/10.7717/peerj.4375",
     "ids": {"openalex": "...W2741809807", "doi": "...", "mag": "2741809807", "pmid": "https://pubmed.ncbi.nlm.nih.gov/29456894"},
     "title": "The state of OA: ...", "publication_year": 2018,
     "primary_location": {"source": {"display_name": "PeerJ"}, ...}, "locations": [...],
     "authorships": [{"author": {"id": "...A5048491430", "display_name": "Heather Piwowar", "orcid": "..."}, ...}],
     "abstract_inverted_index": {"Despite": [0], "growing": [1], ...},
     "referenced_works": ["https://openalex.org/W1491170465", ...],
     "topics": [{"id": "...T10102", "display_name": "...", "score": 0.9969,
                 "subfield": {"id": ".../subfields/1804", ...}, "field": {...}, "domain": {...}}],
     "concepts": [{"id": "...C41008148", "display_name": "Computer science", "level": 0, "score": 0.45}], ...}

becomes

* ``Paper {id, title, abstract, year, venue, doi, arxiv_id, type, dataset="openalex", stub=false}``. The
  work's ids are ``openalex:W…`` (``id``), ``doi:…`` (``doi``, else ``ids.doi``), ``pmid:…`` and
  ``mag:…`` (``ids``), and ``arxiv:…`` when a location's landing page or PDF is on arxiv.org;
  ``id`` is :func:`loaders.ids.preferred_id` of them (arXiv, then DOI, then the W-id), grouped over
  the whole input with :class:`loaders.ids.IdGroups`. ``title`` is ``title``, else
  ``display_name``; ``abstract`` is rebuilt from ``abstract_inverted_index`` (each word at each of
  its positions, joined by single spaces); ``year`` is ``publication_year``; ``venue`` is
  ``primary_location.source.display_name``, else ``host_venue.display_name`` (older records);
  ``doi`` is the DOI lower-cased without prefix; ``type`` is ``type`` (``article``,
  ``book-chapter``, ``preprint``, ...);
* ``Alias {id, kind}`` + ``(Alias)-[:ALIAS_OF]->(Paper)`` for each of the work's ids other than the key;
* ``Author {id, name, orcid, openalex_id}`` + ``(Author)-[:WROTE {position}]->(Paper)`` for each
  entry of ``authorships`` (:func:`loaders._common.work_authors`): ``name`` is
  ``author.display_name`` (else ``raw_author_name``), ``id`` :func:`loaders.ids.author_key` of it,
  ``position`` the 1-based place in the list (a name twice on one work: one edge, its first
  place). ``openalex_id`` is the author's ``A…`` id (``author.id``) and ``orcid`` the bare iD of
  ``author.orcid`` (``https://orcid.org/0000-0003-1613-5981`` -> ``0000-0003-1613-5981``), both of
  the first entry read under that name: authors are keyed by name everywhere in this project, so
  two people of one name are one Author;
* ``Institution {id="openalex:I…", name, country}`` + ``(Paper)-[:AFFILIATION]->(Institution)`` for each
  institution of ``authorships[].institutions`` (``id``, ``display_name``, ``country_code``), and
  ``Country {code, name}`` + ``(Paper)-[:IN_COUNTRY]->(Country)`` for each country of an institution or of
  ``authorships[].countries`` (:func:`loaders.affiliations.openalex_affiliations`), once per work;
* ``(Paper)-[:CITES {dataset="openalex"}]->(Paper)`` for each distinct entry of
  ``referenced_works``. A target that is one of the input's works is that work's key; any other
  is a stub ``Paper {id="openalex:W…", stub=true, dataset="openalex"}`` (no title: OpenAlex lists
  references by id only);
* the topics (``topics``, plus ``primary_topic`` when it is not among them) as a taxonomy of their
  own: ``AcmClass {id="openalex:<level>/<id>", code="<level>/<id>", name, scheme="openalex",
  level}`` for the topic (level 4, ``topic/T10102``), its subfield (3, ``subfield/1804``), field
  (2, ``field/18``) and domain (1, ``domain/2``), with ``(child)-[:BROADER]->(parent)`` along that
  chain, and ``(Paper)-[:IN_CLASS {score, inferred=false}]->(AcmClass)`` to each topic with the
  topic's ``score``. A work without topics is classed by its ``concepts`` instead:
  ``AcmClass {id="openalex-concepts:C…", code="C…", name, scheme="openalex-concepts", level}``
  with ``level`` = OpenAlex's level + 1 (OpenAlex counts from 0, every scheme here counts its top
  classes as 1) and no BROADER (a work record names a concept's level, not its parents), and
  ``IN_CLASS {score, inferred=false}`` to each. A class's ``name`` is the first one read.
* ``Keyword {id, name, kind}`` + ``(Paper)-[:HAS_KEYWORD {score}]->(Keyword)`` (:mod:`loaders.keywords`)
  for each ``keywords[].display_name`` (kind ``openalex_keyword``), each topic's ``display_name`` (``topic``)
  and its ``field.display_name`` (``field_of_study``, the topic's score), with the entry's ``score``;

A work read twice (two pages of overlapping queries, or two snapshot partitions: OpenAlex writes
an updated work into a later ``updated_date=`` partition) is loaded once: the copy with the
latest ``updated_date`` wins (the later-read one on a tie), and the superseded copies are counted
in :class:`OpenAlexReport` and the log, not rejected.

Rejected, with ``<file>:<line>`` (``<file>:record N`` for the works of a one-document file,
``<file>:<line> record N`` for those of a page on one line of several) and a reason: a line or
file that is not UTF-8, not JSON or cut short, a value that is not a work, a page or a list of
works, a work without an OpenAlex ``id`` or with an ``abstract_inverted_index`` that is not an
object of word -> list of positions (``Paper``); ``authorships`` that is not a list, an entry
without a name (``WROTE``/``Author``; the work is loaded); ``referenced_works`` that is not a list,
an entry that is not a work id, a work citing itself (``CITES``); ``topics``/``concepts`` that are
not lists and entries without an id (``IN_CLASS``). Values of the wrong type (``"publication_year":
"n.d."``, ``"title": 5``, a score that is not a number) are passed on for :mod:`graph.validate` to
reject with the same origin. DOIs, PubMed and MAG ids that do not parse are skipped (the work has
its W-id) and counted.

Memory: nothing of a parsed work is kept; each becomes values in column lists, and a reference
is two machine integers (the citing work's row, the target's W number) until the tables are
built. :func:`load` builds one batch of the whole input (its tables grow with the input);
:func:`load_chunks` reads the input twice (first every work's ids, then the works) and yields a
batch of tables every :data:`CHUNK_WORKS` works, which :func:`graph.ingest.ingest_stream` writes
all or none: memory then holds the ids of every work (in arrays once the first pass is done, ~160 bytes
a work: :class:`_FrozenRegistry`) and one batch. Measured in docs/results.md
(``benchmarks/openalex_import.py``).
"""

from __future__ import annotations

import itertools
import logging
import re
import time
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from tqdm import tqdm

from graph.errors import IngestError, Reject
from graph.ingest import GraphBatch
from graph.schema import ORIGIN_COLUMN, SOURCE_COLUMN, TARGET_COLUMN
from graph.validate import preview
from loaders._common import (
    WorkAuthor,
    alias_tables,
    author_table,
    input_files,
    integer_or_as_is,
    nullable_ints,
    table,
    text_or_null,
    work_authors,
)
from loaders._json_exports import JsonProblem, display_names, iter_json_values, parse_json_line
from loaders.affiliations import Affiliation, affiliation_tables, openalex_affiliations
from loaders.ids import (
    ARXIV_PREFIX,
    DOI_PREFIX,
    MAG_PREFIX,
    OPENALEX_PREFIX,
    PMID_PREFIX,
    IdGroups,
    PaperIdError,
    canonical_paper_id,
    id_kind,
)
from loaders.keywords import FIELD_OF_STUDY, HAS_KEYWORD, KEYWORD_TABLE, OPENALEX_KEYWORD, TOPIC, KeywordRows
from loaders.toolkit import (
    cites_table,
    line_blocks,
    map_in_order,
    pooled_json_lines,
    workers_from_env,
    wrote_table,
)

log = logging.getLogger(__name__)

SOURCE = "openalex"  # the registry name; the batch is named "openalex"
DATASET = "openalex"  # Paper.dataset and CITES.dataset
TOPIC_SCHEME = "openalex"  # AcmClass.scheme of topics, subfields, fields and domains
CONCEPT_SCHEME = "openalex-concepts"  # AcmClass.scheme of concepts (works without topics)
SUFFIXES = (".json", ".jsonl", ".gz")  # names read from a folder: pages, works, snapshot partitions (part_000.gz)
# The topic hierarchy from the top: (key in the topic record, level name in codes, level).
TOPIC_LEVELS = (("domain", "domain", 1), ("field", "field", 2), ("subfield", "subfield", 3))
TOPIC_LEVEL = 4

_WORK_ID = re.compile(r"(?:https?://(?:api\.)?openalex\.org/(?:works/)?)?[Ww](\d+)")
_PMID = re.compile(r"(?:https?://pubmed\.ncbi\.nlm\.nih\.gov/)?(\d+)/?")
_MAG = re.compile(r"\d+")


CHUNK_WORKS = 5_000  # works per batch of a streamed load (`citegraph ingest openalex --chunk-works`)
_AUTHOR_ID = re.compile(r"A\d+")


@dataclass(frozen=True)
class OpenAlexReport:
    """What a load read, beyond the tables: for the log and for tests."""

    files: int
    works: int  # work records read (every copy)
    superseded: int  # copies of a work read twice, dropped for a newer one
    references: int  # entries of referenced_works that became CITES edges
    stubs: int  # stub Paper rows (streamed: each once, also for works cited before the batch that reads them)
    malformed_ids: int  # DOIs / PubMed / MAG ids of works that did not parse (skipped)
    id_conflicts: int  # two works claiming one DOI (or other id): kept apart, see IdGroups
    batches: int = 1  # batches the works were loaded in (load_chunks)


class _Utf8Column:
    """Strings or nulls appended as UTF-8 to one buffer: an Arrow ``large_string`` column in the making.

    Abstracts are most of what a loaded work keeps (~1-5 KB each). As Python strings they would
    take up to 4 bytes a character (one non-Latin-1 character makes a string UCS-2 or UCS-4), and
    the table built from them a second copy; here they are stored once, as the column's buffer.
    """

    def __init__(self) -> None:
        self.data = bytearray()
        self.offsets = array("q", [0])
        self.valid = bytearray()

    def append(self, text: str | None) -> None:
        if text is not None:
            self.data += text.encode("utf-8", "replace")  # "replace": a lone surrogate (JSON allows one) becomes "?"
        self.offsets.append(len(self.data))
        self.valid.append(text is not None)

    def extend(self, other: _Utf8Column) -> None:
        """Append the strings of ``other``."""
        base = len(self.data)
        self.data += other.data
        self.offsets.extend(offset + base for offset in other.offsets[1:])
        self.valid += other.valid

    def series(self, rows: list[int] | None, nulls: int) -> pd.Series:
        """The column (only ``rows``, when given) followed by ``nulls`` nulls, as pandas' ``str`` dtype."""
        n = len(self.valid) + nulls
        offsets = self.offsets + array("q", [len(self.data)]) * nulls
        valid = np.frombuffer(bytes(self.valid) + bytes(nulls), dtype=np.uint8).astype(bool)
        bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
        column = pa.Array.from_buffers(pa.large_string(), n, [bitmap, pa.py_buffer(offsets), pa.py_buffer(self.data)])
        if rows is not None:
            column = column.take(pa.array(rows + list(range(len(self.valid), n)), type=pa.int64()))
        return pd.Series(column, dtype=pd.StringDtype("pyarrow", na_value=np.nan))


@dataclass
class _Registry:
    """Every work read, by W number: its ids (one :class:`IdGroups` group each) and which copy is current.

    Copies are numbered in read order (the *ordinal*: every work record accepted, superseded ones too).
    A one-batch load fills it as it reads; a streamed load fills it in a first pass, so that each
    batch knows the keys of works read later and which copies a later one supersedes.
    """

    groups: IdGroups = field(default_factory=IdGroups)
    current: dict[int, tuple[int, str]] = field(default_factory=dict)  # W number -> (ordinal, updated_date)
    works_read: int = 0
    superseded: int = 0
    malformed_ids: int = 0

    def read(self, number: int, work: dict[str, Any]) -> bool:
        """Count the copy of work ``number`` numbered ``works_read``; False when an earlier-read copy is newer."""
        return self.read_ids(number, *_id_facts(work))

    def read_ids(self, number: int, updated: str, given: list[str], malformed: int) -> bool:
        """:meth:`read` of what :func:`_id_facts` took out of the work (a worker process takes it out)."""
        ordinal = self.works_read
        self.works_read += 1
        earlier = self.current.get(number)
        if earlier is not None:
            self.superseded += 1
            if updated < earlier[1]:  # the copy read before is newer: keep it
                return False
        self.current[number] = (ordinal, updated)
        self.malformed_ids += malformed
        wid = f"{OPENALEX_PREFIX}W{number}"
        self.groups.add(wid)
        for other in given:  # one union each, so a clash spoils only itself
            self.groups.union([wid, other])
        return True

    def ordinal(self, number: int) -> int | None:
        """The ordinal of the current copy of work ``number``; None for a work not in the input."""
        found = self.current.get(number)
        return found[0] if found is not None else None


class _FrozenRegistry:
    """A :class:`_Registry` whose first pass is done, answering the same from arrays sorted by W number.

    Why: a streamed load keeps the registry through its second pass, and as dictionaries (a union-find entry
    per id, a dict of kinds per work, a tuple per copy) it held ~1.1 KB a work, the largest part of the
    loader's memory (400k works: ~450 MB). Here a work is its W number, its current copy's ordinal and its
    group's ids as one string, the key first: ~160 bytes.
    """

    def __init__(self, registry: _Registry) -> None:
        numbers = np.fromiter(registry.current, dtype=np.int64, count=len(registry.current))
        numbers.sort()
        self.numbers = numbers
        self.ordinals = np.fromiter((registry.current[n][0] for n in numbers.tolist()), np.int64, len(numbers))
        # The ids are DOIs, PubMed / MAG numbers, arXiv and W ids: none holds whitespace (loaders.ids).
        self.group_ids = np.array(
            [" ".join(registry.groups.members(f"{OPENALEX_PREFIX}W{n}")) for n in numbers.tolist()], dtype=object
        )
        self.works_read, self.superseded = registry.works_read, registry.superseded
        self.malformed_ids, self.conflicts = registry.malformed_ids, registry.groups.conflicts
        self.groups = self  # the IdGroups questions are answered here: canonical, member, members

    def _index(self, number: int) -> int | None:
        at = int(np.searchsorted(self.numbers, number))
        return at if at < len(self.numbers) and self.numbers[at] == number else None

    def ordinal(self, number: int) -> int | None:
        at = self._index(number)
        return int(self.ordinals[at]) if at is not None else None

    def members(self, wid: str) -> list[str]:
        """Every id of the work ``wid`` (``openalex:W…``, a work of the input), the key first."""
        at = self._index(int(wid[len(OPENALEX_PREFIX) + 1 :]))
        if at is None:
            raise KeyError(wid)
        ids: str = self.group_ids[at]
        return ids.split(" ")

    def canonical(self, wid: str) -> str:
        return self.members(wid)[0]

    def member(self, wid: str, kind: str) -> str | None:
        return next((other for other in self.members(wid) if id_kind(other) == kind), None)


@dataclass
class _Emitted:
    """Nodes that earlier batches of a streamed load carried: not repeated, so the first entry read stays."""

    authors: set[str] = field(default_factory=set)
    classes: set[str] = field(default_factory=set)
    broader: set[tuple[str, str]] = field(default_factory=set)
    # W numbers of the works written as stubs (cited, not in the input), sorted: 8 bytes a stub
    stubs: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # Citations of works a later batch reads, held until that batch (:func:`_held_and_released`): the citing
    # and cited works' keys and the citing work's origin (strings shared with the batch that read them), and
    # the ordinal of the cited work's current copy.
    waiting_sources: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=object))
    waiting_targets: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=object))
    waiting_origins: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=object))
    waiting_ordinals: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


@dataclass
class _Columns:
    """Column lists of every table of one batch; rows of per-work tables point at the work's row."""

    works: list[str] = field(default_factory=list)  # the W-id (openalex:W…) of each work row
    papers: dict[str, list[object]] = field(
        default_factory=lambda: {k: [] for k in ("title", "year", "venue", "type", ORIGIN_COLUMN)}
    )
    abstracts: _Utf8Column = field(default_factory=lambda: _Utf8Column())  # the largest column: kept compact
    alive: bytearray = field(default_factory=bytearray)  # 0 for a superseded copy
    row_of: dict[str, int] = field(default_factory=dict)  # W-id -> row of its current copy
    authors: dict[str, tuple[WorkAuthor, str]] = field(default_factory=dict)  # key -> (first entry, its origin)
    wrote_row: array = field(default_factory=lambda: array("l"))
    wrote_author: list[str] = field(default_factory=list)
    wrote_position: array = field(default_factory=lambda: array("l"))
    cites_row: array = field(default_factory=lambda: array("l"))
    cites_target: array = field(default_factory=lambda: array("q"))  # W number of the cited work
    class_row: array = field(default_factory=lambda: array("l"))
    class_id: list[str] = field(default_factory=list)
    class_score: list[object] = field(default_factory=list)
    classes: dict[str, tuple[str, object, str, int, str]] = field(
        default_factory=dict
    )  # id -> code, name, scheme, level, origin
    broader: dict[tuple[str, str], str] = field(default_factory=dict)  # (child, parent) -> origin
    keyword_rows: array = field(default_factory=lambda: array("l"))  # the work row of each keyword use
    keywords: KeywordRows = field(default_factory=KeywordRows)  # the uses, keyed by W-id until _batch re-keys
    affiliations: dict[int, list[Affiliation]] = field(default_factory=dict)  # work row -> its institutions/countries
    rejects: list[Reject] = field(default_factory=list)

    def reject(self, table_name: str, where: str, reason: str) -> None:
        self.rejects.append(Reject(table_name, where, reason))

    def extend(self, part: _Columns) -> None:
        """Append the rows of ``part`` (a block a worker read after these rows): its rows renumbered after
        ours, the first entry of an author or class kept where both have one, rejects in order."""
        offset = len(self.works)
        self.works += part.works
        for name, values in part.papers.items():
            self.papers[name] += values
        self.abstracts.extend(part.abstracts)
        self.alive += part.alive
        self.row_of.update((wid, row + offset) for wid, row in part.row_of.items())
        for key, first in part.authors.items():
            self.authors.setdefault(key, first)
        self.wrote_row.extend(row + offset for row in part.wrote_row)
        self.wrote_author += part.wrote_author
        self.wrote_position += part.wrote_position
        self.cites_row.extend(row + offset for row in part.cites_row)
        self.cites_target += part.cites_target
        self.class_row.extend(row + offset for row in part.class_row)
        self.class_id += part.class_id
        self.class_score += part.class_score
        for class_id, entry in part.classes.items():
            self.classes.setdefault(class_id, entry)
        for pair, where in part.broader.items():
            self.broader.setdefault(pair, where)
        self.keyword_rows.extend(row + offset for row in part.keyword_rows)
        self.keywords.extend(part.keywords)
        self.affiliations.update((row + offset, found) for row, found in part.affiliations.items())
        self.rejects += part.rejects


def load(path: Path) -> GraphBatch:
    """Parse OpenAlex works (see the module docstring) into one batch named ``openalex``."""
    return load_with_report(path)[0]


def load_with_report(path: Path) -> tuple[GraphBatch, OpenAlexReport]:
    """:func:`load`, and what it read (:class:`OpenAlexReport`)."""
    started = time.perf_counter()
    files = input_files(Path(path), SUFFIXES)
    registry, out = _Registry(), _Columns()
    for found in _works(files):
        if isinstance(found, Reject):
            out.rejects.append(found)
            continue
        work, where, number, abstract = found
        earlier = out.row_of.get(f"{OPENALEX_PREFIX}W{number}")
        if not registry.read(number, work):
            continue
        if earlier is not None:
            out.alive[earlier] = 0
        _add(work, number, abstract, where, out)
    batch, references, stubs = _batch(out, registry, _Emitted(), end=None)
    report = _report(registry, len(files), references, stubs, 1)
    _log(path, report, len(batch.nodes.get("Author", ())), len(batch.nodes.get("AcmClass", ())), started)
    return batch, report


def load_chunks(path: Path, chunk_works: int = CHUNK_WORKS) -> Iterator[GraphBatch]:
    """The works of ``path`` as batches of at most ``chunk_works`` works each, for :func:`graph.ingest.ingest_stream`.

    Ingested in order, the batches give the store the same papers, aliases, authors, citations and
    classes as :func:`load`'s one batch: a first pass reads every work's ids and which copy of each
    is current (:class:`_Registry`, then kept compact as :class:`_FrozenRegistry`), so a citation of a
    work read later waits for the batch that reads it, and the copies a later one supersedes are left out. An author, class or stub is in the batch
    that names it first only. The input is read twice; memory holds the ids of every work, the keys of
    the authors and the W numbers of the stubs written so far, the citations waiting for a later batch
    (the two works' keys, shared, and an ordinal each), and the tables of one batch.
    """
    if chunk_works < 1:
        raise IngestError(f"--chunk-works is {chunk_works}; give at least 1 work per batch")
    # Files are found now, not when the first batch is asked for: a wrong path fails before a store is staged.
    return _chunks(path, input_files(Path(path), SUFFIXES), chunk_works)


def _chunks(path: Path, files: list[Path], chunk_works: int) -> Iterator[GraphBatch]:
    started = time.perf_counter()
    workers = workers_from_env()
    named = list(zip(files, display_names(files)))
    pooled = {file for file in files if pooled_json_lines(file, workers)}
    first_pass = _Registry()
    numbers = array("q")  # the W number of each copy read, by ordinal: which copies a pooled block skips
    block_copies: dict[Path, list[int]] = {}  # copies read per block of a pooled file
    for file, name in named:
        if file in pooled:
            counts = block_copies.setdefault(file, [])
            jobs: Iterator[Block] = ((name, block, frozenset()) for block in line_blocks(file))
            for facts in map_in_order(_id_facts_of_block, jobs, workers):
                counts.append(len(facts))
                for number, updated, given, malformed in facts:
                    numbers.append(number)
                    first_pass.read_ids(number, updated, given, malformed)
            continue
        for found in _file_works(file, name, abstracts=False):
            if not isinstance(found, Reject):  # the second pass reports rejects, once
                numbers.append(found[2])
                first_pass.read(found[2], found[0])
    registry = _FrozenRegistry(first_pass)
    del first_pass
    emitted, out = _Emitted(), _Columns()
    ordinal = 0  # copies read so far in the second pass, superseded ones too: _Registry's numbering
    batches, references, stubs, authors = 0, 0, 0, 0

    def done(out: _Columns) -> GraphBatch:
        nonlocal batches, references, stubs, authors
        batch, n_references, n_stubs = _batch(out, registry, emitted, end=ordinal)
        batches, references, stubs = batches + 1, references + n_references, stubs + n_stubs
        authors += len(batch.nodes.get("Author", ()))
        return batch

    def skipped(start: int, count: int) -> frozenset[int]:
        """The places in a block (its copies numbered from ``start``) of the copies that others supersede."""
        return frozenset(i for i in range(count) if registry.ordinal(numbers[start + i]) != start + i)

    for file, name in named:
        if file in pooled:
            starts = itertools.accumulate(block_copies[file], initial=ordinal)
            jobs = (
                (name, block, skipped(start, count))
                for block, start, count in zip(line_blocks(file), starts, block_copies[file])
            )
            for copies, part in map_in_order(_columns_of_block, jobs, workers):
                ordinal += copies
                out.extend(part)
                if len(out.works) >= chunk_works:
                    batch, out = done(out), _Columns()
                    yield batch
                    del batch
            continue
        for found in _file_works(file, name):
            if isinstance(found, Reject):
                out.rejects.append(found)
                continue
            work, where, number, abstract = found
            ordinal += 1
            if registry.ordinal(number) != ordinal - 1:  # a copy that another one supersedes
                continue
            _add(work, number, abstract, where, out)
            if len(out.works) == chunk_works:
                batch, out = done(out), _Columns()  # the columns go before the batch is written
                yield batch
                del batch  # and the batch before the next one is read
    if out.works or out.rejects or not batches:
        yield done(out)
    _log(path, _report(registry, len(files), references, stubs, batches), authors, len(emitted.classes), started)


def _report(
    registry: _Registry | _FrozenRegistry, files: int, references: int, stubs: int, batches: int
) -> OpenAlexReport:
    return OpenAlexReport(
        files=files,
        works=registry.works_read,
        superseded=registry.superseded,
        references=references,
        stubs=stubs,
        malformed_ids=registry.malformed_ids,
        id_conflicts=registry.groups.conflicts,
        batches=batches,
    )


def _log(path: Path, report: OpenAlexReport, authors: int, classes: int, started: float) -> None:
    log.info(
        "%s: %d works read (%d superseded copies) in %d batch(es), %d stub rows, %d CITES, %d authors, "
        "%d topic classes, %d malformed ids skipped, %d id conflicts (%.1fs)",
        path,
        report.works,
        report.superseded,
        report.batches,
        report.stubs,
        report.references,
        authors,
        classes,
        report.malformed_ids,
        report.id_conflicts,
        time.perf_counter() - started,
    )
    if report.superseded:
        log.warning(
            "%s: %d works were read more than once; the copy with the latest updated_date of each is loaded",
            path,
            report.superseded,
        )


def _records(files: list[Path]) -> Iterator[tuple[object, str] | Reject]:
    """Every work value of the files, with its origin, in read order; what cannot be read as a reject."""
    named = list(zip(files, display_names(files)))
    for file, name in tqdm(named, desc=SOURCE, unit=" files", disable=None if len(files) > 1 else True, leave=False):
        yield from _file_records(file, name)


def _file_records(file: Path, name: str) -> Iterator[tuple[object, str] | Reject]:
    """:func:`_records` of one file, which origins call ``name``."""
    values = tqdm(iter_json_values(file), desc=name, unit=" lines", disable=None, leave=False)
    for item in values:
        if isinstance(item, JsonProblem):
            yield Reject("Paper", f"{name}:{item.line}", item.reason)
            continue
        yield from _works_of(item.value, name, item.line, item.whole_file)


def _file_works(
    file: Path, name: str, *, abstracts: bool = True
) -> Iterator[tuple[dict[str, Any], str, int, str | None] | Reject]:
    """:func:`_works` of one file, which origins call ``name``."""
    for found in _file_records(file, name):
        yield found if isinstance(found, Reject) else _accept(*found, abstract=abstracts)


Block = tuple[str, list[tuple[int, "bytes | JsonProblem"]], frozenset[int]]  # file name, lines, copies to skip


def _block_works(name: str, lines: list[tuple[int, bytes | JsonProblem]], *, abstracts: bool) -> Iterator[Any]:
    """:func:`_file_works` of a block of JSON Lines (``(line number, bytes)``; a problem where the gzip cut)."""
    for line, raw in lines:
        if isinstance(raw, JsonProblem):
            yield Reject("Paper", f"{name}:{raw.line}", raw.reason)
            continue
        if not raw.strip():
            continue
        parsed = parse_json_line(raw, line)
        if isinstance(parsed, JsonProblem):
            yield Reject("Paper", f"{name}:{parsed.line}", parsed.reason)
            continue
        for found in _works_of(parsed.value, name, line, False):
            yield found if isinstance(found, Reject) else _accept(*found, abstract=abstracts)


def _id_facts_of_block(block: Block) -> list[tuple[int, str, list[str], int]]:
    """In a worker process (first pass): ``(W number, *_id_facts)`` of each work copy of the block, in order."""
    name, lines, _ = block
    return [
        (found[2], *_id_facts(found[0]))
        for found in _block_works(name, lines, abstracts=False)
        if not isinstance(found, Reject)
    ]


def _columns_of_block(block: Block) -> tuple[int, _Columns]:
    """In a worker process (second pass): the block's work copies read, and its columns (the copies at the places
    ``skip`` names left out, as a later copy supersedes them), rejects in read order."""
    name, lines, skip = block
    out, copies = _Columns(), 0
    for found in _block_works(name, lines, abstracts=True):
        if isinstance(found, Reject):
            out.rejects.append(found)
            continue
        copies += 1
        if copies - 1 not in skip:
            work, where, number, abstract = found
            _add(work, number, abstract, where, out)
    return copies, out


def _works(
    files: list[Path], *, abstracts: bool = True
) -> Iterator[tuple[dict[str, Any], str, int, str | None] | Reject]:
    """Every work of the files as ``(work, origin, W number, abstract)``, in read order; a reject where one is not.
    ``abstracts=False``: abstracts checked, not built (:func:`_accept`)."""
    for found in _records(files):
        yield found if isinstance(found, Reject) else _accept(*found, abstract=abstracts)


def _works_of(value: object, file: str, line: int, whole_file: bool) -> Iterator[tuple[object, str] | Reject]:
    """The works of one JSON value: a work, an API page (``results``) or a list of works."""
    items: list[Any] | None = None
    if isinstance(value, dict) and "results" in value:
        results = value["results"]
        if not isinstance(results, list):
            where = f"{file}:{line}"
            yield Reject("Paper", where, f"`results` is {preview(results)}, expected the list of works of an API page")
            return
        items = results
    elif isinstance(value, list):
        items = value
    if items is None:
        yield value, f"{file}:{line}"
        return
    for n, work in enumerate(items, start=1):
        yield work, f"{file}:record {n}" if whole_file else f"{file}:{line} record {n}"


def _work_number(raw: object) -> int | None:
    """The number of an OpenAlex work id or URL (``W2741809807`` -> 2741809807), else None."""
    if not isinstance(raw, str):
        return None
    match = _WORK_ID.fullmatch(raw.strip())
    number = int(match.group(1)) if match else None
    return number if number is not None and number < 1 << 62 else None  # stored as a machine integer


def _accept(work: object, where: str, *, abstract: bool = True) -> tuple[dict[str, Any], str, int, str | None] | Reject:
    """``(work, origin, W number, abstract)``, or the reject of a record that is no loadable work.

    ``abstract=False``: the abstract is checked, not built (None in its place): the first pass of a streamed load.
    """
    if not isinstance(work, dict):
        return Reject("Paper", where, f"value is {preview(work)}, expected an OpenAlex work (an object with an `id`)")
    number = _work_number(work.get("id"))
    if number is None:
        return Reject(
            "Paper",
            where,
            f"work `id` is {preview(work.get('id'))}, expected an OpenAlex work id such as "
            "'https://openalex.org/W2741809807'; is this an OpenAlex works export?",
        )
    try:
        return work, where, number, _abstract(work.get("abstract_inverted_index"), build=abstract)
    except ValueError as exc:
        return Reject("Paper", where, f"`abstract_inverted_index` {exc}; fix or drop the field to load the work")


def _add(work: dict[str, Any], number: int, abstract: str | None, where: str, out: _Columns) -> None:
    """The current copy of a work as a row of ``out``, with its authors, references and classes."""
    wid = f"{OPENALEX_PREFIX}W{number}"
    row = len(out.works)
    out.row_of[wid] = row
    out.works.append(wid)
    out.alive.append(1)
    title = work.get("title")
    papers = out.papers
    papers["title"].append(text_or_null(title if title is not None else work.get("display_name")))
    out.abstracts.append(abstract)
    papers["year"].append(integer_or_as_is(work.get("publication_year")))
    papers["venue"].append(text_or_null(_venue(work)))
    papers["type"].append(text_or_null(work.get("type")))
    papers[ORIGIN_COLUMN].append(where)
    _authors(work.get("authorships"), row, where, out)
    found = openalex_affiliations(work.get("authorships"))
    if found:
        out.affiliations[row] = found
    _references(work.get("referenced_works"), number, row, where, out)
    _classes(work, row, where, out)
    _keywords(work, wid, row, where, out)


def _abstract(index: object, *, build: bool = True) -> str | None:
    """The abstract from OpenAlex's inverted index ``{word: [positions]}``: words in position order.

    One slot per position, filled word by word: linear in the abstract's length (a sort of
    (position, word) pairs costs ~3x more on 400k works, and this is the loader's hottest step).
    ``build=False`` only checks the index (a :class:`ValueError` when it is damaged) and returns None: the
    first pass of :func:`load_chunks` rejects the same works as the second without building their text.

    The checks run in C (a generator of ``max`` calls per word was a third of the loader's time): every
    value a list (``map(type, ...)``), every position an integer (their sum stays an ``int``: a float makes
    it a float, a string or a list fails it), from 0 (``min``) to 1,000,000 (``max``).
    """
    if index is None:
        return None
    if not isinstance(index, dict):
        raise ValueError(f"is {preview(index)}, expected an object of word -> list of positions")
    try:
        if not set(map(type, index.values())) <= {list}:
            raise TypeError
        given = [positions for positions in index.values() if positions]
        if not given:
            return None
        last, first = max(map(max, given)), min(map(min, given))
        if not isinstance(sum(map(sum, given)), int) or last > 1_000_000 or first < 0:  # damaged
            raise TypeError
    except (TypeError, ValueError):
        bad = next(
            (p for p in index.values() if not isinstance(p, list) or not all(isinstance(x, int) and x >= 0 for x in p)),
            None,
        )
        raise ValueError(
            f"gives a word the positions {preview(bad)}, expected lists of integers from 0 (word -> positions)"
        ) from None
    if not build:
        return None
    slots: list[str | None] = [None] * (last + 1)
    for word, positions in index.items():
        for position in positions:
            slots[position] = word
    return " ".join(word for word in slots if word is not None) or None


def _venue(work: dict[str, Any]) -> object:
    location = work.get("primary_location")
    source = location.get("source") if isinstance(location, dict) else None
    if isinstance(source, dict) and source.get("display_name") is not None:
        return source["display_name"]
    host = work.get("host_venue")
    return host.get("display_name") if isinstance(host, dict) else None


def _id_facts(work: dict[str, Any]) -> tuple[str, list[str], int]:
    """The work's ``updated_date`` ("" when none), its other ids (DOI, PubMed, MAG, arXiv) and how many of
    them did not parse, for :meth:`_Registry.read_ids`."""
    updated = work.get("updated_date")
    given_ids = work.get("ids")
    ids: dict[str, Any] = given_ids if isinstance(given_ids, dict) else {}
    given: list[str] = []
    malformed = 0
    doi = work.get("doi") or ids.get("doi")
    if doi:
        try:
            canonical = canonical_paper_id(doi)
            if not canonical.startswith(DOI_PREFIX):
                raise PaperIdError(doi)
            given.append(canonical)
        except PaperIdError:
            malformed += 1
    for key, pattern, prefix in (("pmid", _PMID, PMID_PREFIX), ("mag", _MAG, MAG_PREFIX)):
        raw = ids.get(key)
        if raw is None:
            continue
        match = pattern.fullmatch(str(raw).strip()) if isinstance(raw, (str, int)) else None
        if match is None:
            malformed += 1
        else:
            given.append(prefix + match.group(match.lastindex or 0))
    if arxiv := _arxiv(work.get("locations")):
        given.append(arxiv)
    return (updated if isinstance(updated, str) else ""), given, malformed


def _arxiv(locations: object) -> str | None:
    """``arxiv:…`` of the first location whose landing page or PDF is on arxiv.org."""
    if not isinstance(locations, list):
        return None
    for location in locations:
        if not isinstance(location, dict):
            continue
        for key in ("landing_page_url", "pdf_url"):
            url = location.get(key)
            if isinstance(url, str) and "arxiv.org/" in url:
                try:
                    canonical = canonical_paper_id(url.removesuffix(".pdf"))
                except PaperIdError:
                    continue
                if canonical.startswith(ARXIV_PREFIX):
                    return canonical
    return None


def _authors(authorships: object, row: int, where: str, out: _Columns) -> None:
    for author in work_authors(
        authorships, where, out.reject, _authorship, field="authorships", entry="authorship", missing="author name"
    ):
        out.authors.setdefault(author.key, (author, where))
        out.wrote_row.append(row)
        out.wrote_author.append(author.key)
        out.wrote_position.append(author.position)


def _authorship(authorship: dict[str, Any]) -> tuple[object, object, object]:
    """Name (``author.display_name``, else ``raw_author_name``), ORCID and A-id of one authorship."""
    given = authorship.get("author")
    author: dict[str, Any] = given if isinstance(given, dict) else {}
    name = author.get("display_name")
    if not isinstance(name, str) or not name.strip():
        name = authorship.get("raw_author_name")
    short = _short_id(author.get("id"))
    return name, author.get("orcid"), short if short is not None and _AUTHOR_ID.fullmatch(short) else None


def _references(references: object, own: int, row: int, where: str, out: _Columns) -> None:
    if references is None:
        return
    if not isinstance(references, list):
        out.reject(
            "CITES",
            where,
            f"`referenced_works` is {preview(references)}, expected a list of work ids; "
            "the work is loaded without its references",
        )
        return
    seen: set[int] = set()
    for reference in references:
        number = _work_number(reference)
        if number is None:
            out.reject(
                "CITES", where, f"referenced work {preview(reference)} is not an OpenAlex work id (W…); it is skipped"
            )
        elif number == own:
            out.reject("CITES", where, f"W{own} lists itself in `referenced_works`; a work does not cite itself")
        elif number not in seen:
            seen.add(number)
            out.cites_row.append(row)
            out.cites_target.append(number)


def _short_id(raw: object) -> str | None:
    """The last path segment of an OpenAlex id URL (``…/subfields/1804`` -> ``1804``, ``…/T10102`` -> ``T10102``)."""
    if not isinstance(raw, str):
        return None
    short = raw.strip().rstrip("/").rsplit("/", 1)[-1]
    return short or None


def _classes(work: dict[str, Any], row: int, where: str, out: _Columns) -> None:
    topics = work.get("topics")
    primary = work.get("primary_topic")
    if topics is not None and not isinstance(topics, list):
        out.reject("IN_CLASS", where, f"`topics` is {preview(topics)}, expected a list; the work is loaded without")
        return
    entries = list(topics or [])
    if isinstance(primary, dict):
        entries.append(primary)
    if entries:
        on_work: set[str] = set()
        for topic in entries:
            class_id = _topic(topic, where, out)
            if class_id is not None and class_id not in on_work:
                on_work.add(class_id)
                out.class_row.append(row)
                out.class_id.append(class_id)
                out.class_score.append(topic.get("score"))
        return
    concepts = work.get("concepts")
    if concepts is None:
        return
    if not isinstance(concepts, list):
        out.reject("IN_CLASS", where, f"`concepts` is {preview(concepts)}, expected a list; the work is loaded without")
        return
    on_work = set()
    for concept in concepts:
        short = _short_id(concept.get("id")) if isinstance(concept, dict) else None
        if short is None:
            out.reject("IN_CLASS", where, f"concept {preview(concept)} has no OpenAlex id; it is skipped")
            continue
        class_id = f"{CONCEPT_SCHEME}:{short}"
        if class_id not in out.classes:
            level = concept.get("level")
            level = level + 1 if isinstance(level, int) and not isinstance(level, bool) else level
            out.classes[class_id] = (short, concept.get("display_name"), CONCEPT_SCHEME, level, where)
        if class_id not in on_work:
            on_work.add(class_id)
            out.class_row.append(row)
            out.class_id.append(class_id)
            out.class_score.append(concept.get("score"))


def _keywords(work: dict[str, Any], wid: str, row: int, where: str, out: _Columns) -> None:
    """The work's ``keywords`` (``openalex_keyword``), topic names (``topic``) and topic fields
    (``field_of_study``), each with its score (a field: its best topic's), as :mod:`loaders.keywords` uses."""
    before = len(out.keywords.ids)
    keywords = work.get("keywords")
    for entry in keywords if isinstance(keywords, list) else []:
        if isinstance(entry, dict):
            out.keywords.add(wid, OPENALEX_KEYWORD, entry.get("display_name"), where, entry.get("score"))
    given = work.get("topics")
    topics: list[object] = given if isinstance(given, list) else []
    primary = work.get("primary_topic")
    for topic in [*topics, *([primary] if isinstance(primary, dict) else [])]:
        if isinstance(topic, dict):
            out.keywords.add(wid, TOPIC, topic.get("display_name"), where, topic.get("score"))
            of_field = topic.get("field")
            if isinstance(of_field, dict):
                out.keywords.add(wid, FIELD_OF_STUDY, of_field.get("display_name"), where, topic.get("score"))
    out.keyword_rows.extend([row] * (len(out.keywords.ids) - before))


def _topic(topic: object, where: str, out: _Columns) -> str | None:
    """Register a topic and its chain of parents; the topic's class id, or None (rejected)."""
    short = _short_id(topic.get("id")) if isinstance(topic, dict) else None
    if short is None:
        out.reject("IN_CLASS", where, f"topic {preview(topic)} has no OpenAlex id; it is skipped")
        return None
    assert isinstance(topic, dict)
    chain: list[str] = []
    for key, level_name, level in TOPIC_LEVELS:
        part = topic.get(key)
        if not isinstance(part, dict) or (part_id := _short_id(part.get("id"))) is None:
            continue
        code = f"{level_name}/{part_id}"
        class_id = f"{TOPIC_SCHEME}:{code}"
        if class_id not in out.classes:
            out.classes[class_id] = (code, part.get("display_name"), TOPIC_SCHEME, level, where)
        chain.append(class_id)
    code = f"topic/{short}"
    class_id = f"{TOPIC_SCHEME}:{code}"
    if class_id not in out.classes:
        out.classes[class_id] = (code, topic.get("display_name"), TOPIC_SCHEME, TOPIC_LEVEL, where)
    chain.append(class_id)
    for parent, child in itertools.pairwise(chain):
        out.broader.setdefault((child, parent), where)
    return class_id


def _batch(
    out: _Columns, registry: _Registry | _FrozenRegistry, emitted: _Emitted, *, end: int | None
) -> tuple[GraphBatch, int, int]:
    """The batch of ``out``: keys from the id groups, stubs for cited works not read, and the tables.

    ``end``: in a streamed load, the ordinal after this batch's last work. A citation of a work read in
    a later batch waits for that batch (in ``emitted``), so that no work of the input is written as a
    stub and then upgraded: an upgrade is a SET on nodes spread over the whole Paper table, whose
    memory grew with the papers stored (:meth:`graph.embedded.EmbeddedStore._changing`). A work read
    in an earlier batch is in the store already. Also returns the CITES rows read and the stub rows.
    """
    groups = registry.groups
    alive = np.frombuffer(bytes(out.alive), dtype=np.uint8).astype(bool)
    live = np.flatnonzero(alive).tolist()
    keys = np.array([groups.canonical(w) for w in out.works], dtype=object)  # strings: a 1-d object array
    origins = np.array(out.papers[ORIGIN_COLUMN], dtype=object)
    aliases = {alias: (str(keys[row]), origins[row]) for row in live for alias in groups.members(out.works[row])[1:]}

    # Citations: the distinct targets, each resolved once (a work of the input, else a stub).
    rows, keep = _rows(out.cites_row, alive)
    targets = np.frombuffer(out.cites_target, dtype=np.int64)[keep]
    numbers, first, inverse = np.unique(targets, return_index=True, return_inverse=True)
    target_keys = np.empty(len(numbers), dtype=object)
    stub_ids: list[str] = []
    stub_origins: list[str] = []
    written = np.isin(numbers, emitted.stubs, assume_unique=True)  # stubs an earlier batch wrote: not again
    stubbed: list[int] = []
    later = np.zeros(len(numbers), dtype=bool)
    later_ordinals = np.zeros(len(numbers), dtype=np.int64)
    for i, number in enumerate(numbers.tolist()):
        wid = f"{OPENALEX_PREFIX}W{number}"
        row = out.row_of.get(wid)
        ordinal = registry.ordinal(number) if row is None else None
        if row is not None:
            target_keys[i] = keys[row]
        elif ordinal is not None:  # read in another batch of a streamed load
            target_keys[i] = groups.canonical(wid)
            if end is not None and ordinal >= end:
                later[i], later_ordinals[i] = True, ordinal
        else:
            target_keys[i] = wid
            if not written[i]:
                stub_ids.append(wid)
                stub_origins.append(origins[rows[first[i]]])
                stubbed.append(number)
    cite_sources, cite_targets, cite_origins = keys[rows], target_keys[inverse], origins[rows]
    if end is not None:
        emitted.stubs = np.union1d(emitted.stubs, np.array(stubbed, dtype=np.int64))
        cite_sources, cite_targets, cite_origins = _held_and_released(
            emitted, end, later[inverse], later_ordinals[inverse], cite_sources, cite_targets, cite_origins
        )

    # Papers: the current copy of each work, then the stubs.
    n_stubs = len(stub_ids)
    nulls: list[object] = [None] * n_stubs
    columns = {name: [values[row] for row in live] for name, values in out.papers.items()}
    doi = [groups.member(out.works[row], "doi") for row in live]
    arxiv = [groups.member(out.works[row], "arxiv") for row in live]
    papers = table(
        {
            "id": keys[live].tolist() + stub_ids,
            "title": columns["title"] + nulls,
            "abstract": out.abstracts.series(live if len(live) < len(out.works) else None, n_stubs),
            "year": nullable_ints(columns["year"] + nulls),
            "venue": columns["venue"] + nulls,
            "doi": [d.removeprefix(DOI_PREFIX) if d else None for d in doi] + nulls,
            "arxiv_id": [a.removeprefix(ARXIV_PREFIX) if a else None for a in arxiv] + nulls,
            "dataset": [DATASET] * (len(live) + n_stubs),
            "stub": [False] * len(live) + [True] * n_stubs,
            "type": columns["type"] + nulls,
            ORIGIN_COLUMN: columns[ORIGIN_COLUMN] + stub_origins,
        }
    )
    alias_nodes, alias_of = alias_tables(aliases)

    cites = cites_table(cite_sources, cite_targets, cite_origins, dataset=DATASET)

    wrote_rows, wrote_keep = _rows(out.wrote_row, alive)
    wrote_authors = [a for a, k in zip(out.wrote_author, wrote_keep.tolist()) if k]
    positions = np.frombuffer(out.wrote_position, dtype=_int_dtype(out.wrote_position))[wrote_keep]
    wrote = wrote_table(wrote_authors, keys[wrote_rows], positions, origins[wrote_rows])
    authored = set(wrote_authors)  # an author only on a superseded copy is not loaded
    new_authors = [first for key, first in out.authors.items() if key in authored and key not in emitted.authors]
    emitted.authors.update(author.key for author, _ in new_authors)
    authors = author_table(new_authors, source_id="openalex_id")

    class_rows, class_keep = _rows(out.class_row, alive)
    flags = class_keep.tolist()
    in_class = pd.DataFrame(
        {
            SOURCE_COLUMN: keys[class_rows],
            TARGET_COLUMN: [c for c, k in zip(out.class_id, flags) if k],
            "score": [s for s, k in zip(out.class_score, flags) if k],
            "inferred": [False] * len(class_rows),
            ORIGIN_COLUMN: origins[class_rows],
        }
    )
    new_classes = {c: values for c, values in out.classes.items() if c not in emitted.classes}
    emitted.classes.update(new_classes)
    classes = table(
        {
            "id": list(new_classes),
            "code": [c[0] for c in new_classes.values()],
            "name": [c[1] for c in new_classes.values()],
            "scheme": [c[2] for c in new_classes.values()],
            "level": nullable_ints([c[3] for c in new_classes.values()]),
            ORIGIN_COLUMN: [c[4] for c in new_classes.values()],
        }
    )
    new_broader = {pair: where for pair, where in out.broader.items() if pair not in emitted.broader}
    emitted.broader.update(new_broader)
    broader = table(
        {
            SOURCE_COLUMN: [child for child, _ in new_broader],
            TARGET_COLUMN: [parent for _, parent in new_broader],
            ORIGIN_COLUMN: list(new_broader.values()),
        }
    )
    keyword_rows, keyword_keep = _rows(out.keyword_rows, alive)
    keyword_tables = out.keywords.keep(keyword_keep.tolist()).tables(keys[keyword_rows].tolist())
    affiliation_nodes, affiliation_rels = affiliation_tables(
        {str(keys[row]): (found, origins[row]) for row, found in out.affiliations.items() if alive[row]}
    )
    nodes = {"Paper": papers, "Alias": alias_nodes, "Author": authors, "AcmClass": classes, **affiliation_nodes}
    rels = {
        "ALIAS_OF": alias_of,
        "WROTE": wrote,
        "CITES": cites,
        "IN_CLASS": in_class,
        "BROADER": broader,
        **affiliation_rels,
    }
    if keyword_tables:
        nodes[KEYWORD_TABLE], rels[HAS_KEYWORD] = keyword_tables[KEYWORD_TABLE], keyword_tables[HAS_KEYWORD]
    batch = GraphBatch(
        SOURCE,
        nodes={name: frame for name, frame in nodes.items() if len(frame)},
        rels={name: frame for name, frame in rels.items() if len(frame)},
        rejects=out.rejects,
    )
    return batch, len(rows), n_stubs


def _held_and_released(
    emitted: _Emitted,
    end: int,
    later: np.ndarray,
    ordinals: np.ndarray,
    sources: np.ndarray,
    targets: np.ndarray,
    origins: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A batch's citations less those of works a later batch reads (``later``; ``ordinals``: of the cited
    works' current copies), which wait in ``emitted``, plus the waiting ones whose cited work is read by now
    (its ordinal before ``end``)."""
    waiting = (
        np.concatenate([emitted.waiting_sources, sources[later]]),
        np.concatenate([emitted.waiting_targets, targets[later]]),
        np.concatenate([emitted.waiting_origins, origins[later]]),
    )
    ordinal = np.concatenate([emitted.waiting_ordinals, ordinals[later]])
    due = ordinal < end
    emitted.waiting_sources, emitted.waiting_targets, emitted.waiting_origins = (column[~due] for column in waiting)
    emitted.waiting_ordinals = ordinal[~due]
    released = [
        np.concatenate([column[~later], held[due]]) for column, held in zip((sources, targets, origins), waiting)
    ]
    return released[0], released[1], released[2]


def _rows(values: array, alive: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The work rows of a per-work table that belong to current copies, and the mask that chose them."""
    rows = np.frombuffer(values, dtype=_int_dtype(values)).astype(np.int64)
    keep = alive[rows] if len(rows) else np.zeros(0, dtype=bool)
    return rows[keep], keep


def _int_dtype(values: array) -> type[np.signedinteger[Any]]:
    return np.int64 if values.itemsize == 8 else np.int32


__all__ = [
    "CHUNK_WORKS",
    "CONCEPT_SCHEME",
    "DATASET",
    "SOURCE",
    "TOPIC_SCHEME",
    "OpenAlexReport",
    "load",
    "load_chunks",
    "load_with_report",
]
