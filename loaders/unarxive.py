"""unarXive full texts (``unarxive/unarXive_data_sample_2022.tar.gz``) -> papers, sentences, citations.

The input is unarXive's JSON Lines, one paper per line, as a tar archive of ``.jsonl`` members (the
sample), a single ``.jsonl``/``.jsonl.gz`` file, or a folder of them. A record::

    {"paper_id": "2212.11867",
     "metadata": {"title": ..., "abstract": ..., "categories": "math.PR math.CA", "doi": null,
                  "versions": [{"version": "v1", "created": "Thu, 22 Dec 2022 17:01:56 GMT"}],
                  "authors_parsed": [["Michelen", "Marcus", ""], ...]},
     "body_text": [{"section": "Introduction", "text": "... {{cite:274b09...}} ...",
                    "cite_spans": [{"start": 491, "end": 540, "text": "{{cite:274b09...}}", "ref_id": "274b09..."}]}],
     "bib_entries": {"274b09...": {"bib_entry_raw": "T. Alazard, ... 2022.",
                                   "ids": {"arxiv_id": "2104.06921", "doi": "", "open_alex_id": "https://openalex.org/W42..."},
                                   "contained_arXiv_ids": [{"id": "2002.11768", ...}],
                                   "contained_links": [{"url": "http://doi.org/10.3847/...", ...}]}}}

becomes

* ``Paper {id, title, abstract, year, doi, arxiv_id, dataset="unarxive", stub=false}``: ``id`` is
  :func:`loaders.ids.canonical_paper_id` of ``paper_id`` (``arxiv:2212.11867``), ``arxiv_id`` the bare
  id, ``doi`` the metadata DOI lower-cased; ``year`` that of the first version's ``created`` date
  (the submission), else of ``update_date``; whitespace in title and abstract collapsed (the
  metadata wraps lines);
* ``(Paper)-[:IN_CATEGORY {score=1.0, inferred=false}]->(ArxivCategory)`` for each code in
  ``metadata.categories``. The categories are not checked here by default: the store is the
  authority on which categories exist (ingest the taxonomy first), and graph validation rejects an
  edge to an unknown code with this record's origin and the code. Pass ``categories`` (for example
  the codes of :func:`loaders.taxonomy.load_arxiv`) to have the loader reject them itself;
* ``Author {id, name}`` + ``WROTE {position}`` (1-based) from ``authors_parsed`` ("First Last
  Suffix"; ``metadata.authors`` split at commas and "and" when that is missing), keyed by
  :func:`loaders.ids.author_key`; a name twice on one paper gives one edge, at its first place;
* ``Sentence {id="<paper_id>#<n>", paper_id, sid=n, section, text}`` + ``HAS_SENTENCE`` for each
  sentence of each ``body_text`` paragraph, numbered from 1 in document order (:func:`split_sentences`).
  ``text`` keeps unarXive's placeholders (``{{cite:…}}``, ``{{formula:…}}``) so that a marker can be
  found and masked in it; ``section`` is the paragraph's section title (null when empty). The
  abstract is on the Paper, not split into sentences;
* citations (see :class:`ResolutionReport`): each bibliography entry is resolved to a paper id,
  by id when it has one, in this order of preference: ``ids.arxiv_id``, an arXiv id found in the
  text (``contained_arXiv_ids``), ``ids.doi``, a DOI link in the text (``contained_links``), the
  OpenAlex id (``openalex:W…``, a prefix :mod:`loaders.ids` does not know yet). Ids that name one
  work are merged across the whole input: an entry giving only a DOI cites the arXiv id another
  entry (or a full paper) pairs that DOI with, so one work is one node. Entries without any id are
  resolved by title with a :class:`loaders.resolve.TitleIndex` when one is given; the rest are read as
  fields (:func:`loaders.refstrings.parse_reference`: first author, year, source, volume, first page) and
  matched as works by the rules of Web of Science and Scopus references (:mod:`loaders.refmatch`; a
  thesaurus, ``$CITEGRAPH_REFERENCE_THESAURUS`` or ``citegraph ingest … --thesaurus``, forces joins and
  splits): a stub ``ref:<key>`` with ``label``, ``venue``, ``volume``, ``first_page`` and its reference and
  field keys (``ref:<source initials>-v<volume>-p<page>``) as ``Alias`` nodes (``resolved_by = "fields"``);
  an entry whose fields give neither author + year nor volume + page is counted as unresolved. Then

  * ``(Paper)-[:CITES {n_contexts, dataset="unarxive"}]->(Paper)`` once per citing paper and
    target (two entries naming one work give one edge); ``n_contexts`` is the number of distinct
    sentences that cite it (0 for an entry listed but never cited in the text);
  * ``(Sentence)-[:MENTIONS {marker}]->(Paper)`` from the sentence holding a citation span to the
    span's resolved target, ``marker`` the span's text (one edge per pair, the first marker wins);
  * a target that is not one of the input's papers becomes a stub ``Paper {id, arxiv_id, doi,
    reference, stub=true, dataset="unarxive"}``. unarXive's entries are raw strings with no title
    field, so stubs have no title; ``reference`` is the entry's ``bib_entry_raw`` (whitespace
    collapsed), the longest of the entries naming the work (the first on a tie): the text the
    retrieval index and the paper embedding use for a paper with neither title nor abstract. A
    target found by title is a paper of the index's corpus (the Anthology,
    say) and gets a row with its ``id`` only: merged into a store that holds that paper it changes
    nothing, and without it the edge still has an endpoint.

Rejected, with ``<member or file>:<line>`` and a reason: a line that is not UTF-8, not JSON, not an
object, without a ``paper_id`` or with one that is not an arXiv id, or a paper already read
(``Paper``); ``authors_parsed`` that is not a list (``WROTE``); an author entry with no name
(``Author``); a bibliography entry that resolves to the citing paper itself (``CITES``); a category
not in ``categories`` when that is given (``IN_CATEGORY``). Malformed ids inside a bibliography
entry are skipped (the entry may have others) and counted in the report.

On the shared sample (49 papers, 1,786 entries): 1,156 entries resolve by id (arXiv 146, arXiv id in
the text 108, DOI 375, DOI link 416, OpenAlex 111), 630 have no id: 589 of those are keyed by their
fields, 41 stay unresolved; with an Anthology title index 1 of the 630 resolves by title (the sample is
mostly physics and mathematics).
"""

from __future__ import annotations

import json
import logging
import re
import tarfile
import time
from collections import Counter
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm import tqdm

from graph.errors import IngestError, Reject
from graph.ingest import GraphBatch
from graph.schema import ORIGIN_COLUMN, SOURCE_COLUMN, TARGET_COLUMN
from graph.validate import preview
from loaders._common import alias_tables, iter_raw_lines, nullable_ints, table
from loaders._database_exports import key_references, stub_fields, thesaurus_from_env
from loaders.ids import (
    ARXIV_PREFIX,
    DOI_PREFIX,
    OPENALEX_PREFIX,
    IdGroups,
    PaperIdError,
    author_key,
    canonical_paper_id,
    openalex_id,
)
from loaders.refmatch import Thesaurus, WorkGroup, collapse
from loaders.refstrings import parse_reference
from loaders.resolve import TitleIndex

log = logging.getLogger(__name__)

SOURCE = "unarxive"
DATASET = "unarxive"  # Paper.dataset and CITES.dataset

# How an entry was resolved (ResolutionReport.entries["resolved_by"]), the id kinds in order of preference.
ID_KINDS = ("arxiv", "arxiv_in_text", "doi", "doi_link", "openalex")
BY_TITLE = "title"
BY_FIELDS = "fields"  # no id, no title match: keyed as a work by the fields of its string (loaders.refstrings)


# ---------------------------------------------------------------------------------------------
# Sentences

# Tokens that end with a full stop without ending a sentence (compared lower-cased, without the
# final "." and any opening bracket): "et al.", "e.g.", "i.e.", "Fig. 3", "Eq. (2)", "Sec. 4" ...
ABBREVIATIONS = frozenset(
    {
        "al", "e.g", "i.e", "cf", "vs", "viz", "fig", "figs", "eq", "eqs", "eqn", "eqns", "ref", "refs",
        "sec", "secs", "sect", "tab", "tabs", "no", "nos", "vol", "pp", "p", "ch", "chap", "app", "thm", "lem",
        "prop", "def", "cor", "alg", "approx", "resp", "ca", "jr", "sr",
    }
)  # fmt: skip
# A sentence end: terminal punctuation and any closing quotes/brackets, then whitespace, then the
# first character of the next sentence (captured, checked below).
_END = re.compile(r"[.!?]+[\"'”’)\]]*(?=\s+(\S))")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` character offsets of the sentences of ``text``, leading/trailing space excluded.

    A sentence ends at ``.``, ``!`` or ``?`` (with any closing quotes or brackets) followed by
    whitespace and a character that is not a lower-case letter. It does not end

    * inside a number (``3.5``: no whitespace after the point) or a placeholder
      (``{{cite:…}}`` has no whitespace at all), so a citation span never straddles two sentences;
    * after a token in :data:`ABBREVIATIONS` (``et al.``, ``e.g.``, ``i.e.``, ``Fig.``, ``Eq.``,
      ``Sec.``, ``cf.``, ``vs.``) or a single capital letter (an initial: ``J. Smith``); the price
      is a missed split where such a token really ends a sentence ("... by Smith et al. We ...").

    >>> text = "See Fig. 2 and Smith et al. (2020), e.g. the 3.5 value. It holds! Next"
    >>> [text[a:b] for a, b in split_sentences(text)]
    ['See Fig. 2 and Smith et al. (2020), e.g. the 3.5 value.', 'It holds!', 'Next']
    """
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _END.finditer(text):
        following = match.group(1)
        if following.islower():
            continue
        if text[match.start()] == "." and match.group(0).rstrip("\"'”’)]") == ".":  # a single full stop
            token_start = max(text.rfind(" ", 0, match.start()), text.rfind("\n", 0, match.start())) + 1
            token = text[token_start : match.start()].lstrip("([{\"'“‘").lower()
            if token in ABBREVIATIONS or (len(token) == 1 and token.isalpha()):
                continue
        _add_span(text, start, match.end(), spans)
        start = match.end()
    _add_span(text, start, len(text), spans)
    return spans


def _add_span(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start < end:
        spans.append((start, end))


# ---------------------------------------------------------------------------------------------
# The resolution report


@dataclass
class ResolutionReport:
    """How every bibliography entry was resolved; ``total == by id + by title + by fields + unresolved``.

    ``entries`` has one row per bibliography entry: ``paper_id`` (citing), ``bib_key``, ``origin``,
    ``resolved_by`` (an :data:`ID_KINDS` kind, ``"title"``, ``"fields"``, or null), ``target`` (the paper id cited,
    after merging ids of one work; null when unresolved), ``score`` (title similarity; 1.0 by id).
    """

    entries: pd.DataFrame
    spans: int = 0  # citation spans in the paragraphs
    spans_to_unresolved: int = 0  # spans whose entry resolved to no paper (no MENTIONS)
    spans_without_entry: int = 0  # spans whose ref_id names no bibliography entry
    malformed_ids: int = 0  # ids inside entries that are no id of their kind, skipped
    merged_ids: int = 0  # entries whose own best id was replaced by another id of the same work
    id_conflicts: int = 0  # pairs of ids left unmerged because that would join two ids of one kind

    @property
    def total(self) -> int:
        return len(self.entries)

    @property
    def by_id(self) -> dict[str, int]:
        counts = Counter(self.entries["resolved_by"].dropna())
        return {kind: counts[kind] for kind in ID_KINDS}

    @property
    def by_title(self) -> int:
        return int((self.entries["resolved_by"] == BY_TITLE).sum())

    @property
    def by_fields(self) -> int:
        return int((self.entries["resolved_by"] == BY_FIELDS).sum())

    @property
    def unresolved(self) -> int:
        return int(self.entries["resolved_by"].isna().sum())

    def summary(self) -> str:
        kinds = ", ".join(f"{kind} {n}" for kind, n in self.by_id.items())
        return (
            f"{self.total} bibliography entries: {sum(self.by_id.values())} by id ({kinds}), "
            f"{self.by_title} by title, {self.by_fields} by fields, {self.unresolved} unresolved; {self.spans} citation spans "
            f"({self.spans_to_unresolved} to unresolved entries, {self.spans_without_entry} without an entry); "
            f"{self.merged_ids} entries re-pointed to another id of the same work, "
            f"{self.malformed_ids} malformed ids skipped"
        )


# ---------------------------------------------------------------------------------------------
# Ids


_DOI_IN_URL = re.compile(r"10\.\d{4,9}/\S+")


def _entry_ids(entry: dict[str, Any]) -> tuple[list[tuple[str, str]], int]:
    """``[(kind, canonical id), ...]`` of a bibliography entry in :data:`ID_KINDS` order, and the malformed count."""
    ids = _dict(entry.get("ids"))
    found: list[tuple[str, str]] = []
    malformed = 0

    def take(kind: str, raw: object, prefix: str | None) -> None:
        nonlocal malformed
        if not isinstance(raw, str) or not raw.strip():
            return
        try:
            paper_id = openalex_id(raw) if kind == "openalex" else canonical_paper_id(raw)
        except PaperIdError:
            malformed += 1
            return
        if prefix is not None and not paper_id.startswith(prefix):
            malformed += 1  # an "arxiv_id" that reads as a DOI or an ACL id
            return
        found.append((kind, paper_id))

    take("arxiv", ids.get("arxiv_id"), ARXIV_PREFIX)
    for item in entry.get("contained_arXiv_ids") or []:
        take("arxiv_in_text", item.get("id") if isinstance(item, dict) else item, ARXIV_PREFIX)
    take("doi", ids.get("doi"), DOI_PREFIX)
    for link in entry.get("contained_links") or []:
        url = link.get("url") if isinstance(link, dict) else None
        if isinstance(url, str) and "doi.org/" in url:
            # The DOI inside the link: links repeat their prefix ("https://doi.org/https://doi.org/10.1016/...",
            # "http://dx.doi.org/doi:10.2533/...") or lose the "10.<registrant>/" part (malformed, skipped).
            doi = _DOI_IN_URL.search(url)
            take("doi_link", doi.group(0) if doi else url, DOI_PREFIX)
    take("openalex", ids.get("open_alex_id"), None)
    return found, malformed


# ---------------------------------------------------------------------------------------------
# Reading


def _records(path: Path) -> Iterator[tuple[str, int, bytes]]:
    """``(origin name, line number, raw line)`` of every line of every JSONL file in ``path``."""
    if path.is_dir():
        for file in sorted(p for p in path.rglob("*") if p.is_file() and ".jsonl" in p.name):
            name = file.relative_to(path).as_posix()
            for number, raw in enumerate(iter_raw_lines(file), start=1):
                yield name, number, raw
        return
    if not path.is_file():
        raise IngestError(
            f"{SOURCE}: {path} is neither a file nor a folder; pass the unarXive tar archive, a .jsonl file or a "
            "folder of them, or set CITEGRAPH_DATA to the data folder (see ../shared/data/README.md)"
        )
    if not tarfile.is_tarfile(path):
        for number, raw in enumerate(iter_raw_lines(path), start=1):
            yield path.name, number, raw
        return
    try:
        with tarfile.open(path) as archive:
            for member in archive:
                if not member.isfile() or not member.name.endswith(".jsonl"):
                    continue
                handle = archive.extractfile(member)
                if handle is None:
                    continue
                for number, raw in enumerate(handle, start=1):  # a buffered reader: lines as bytes
                    yield member.name, number, raw.rstrip(b"\r\n")
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise IngestError(f"{path}: the tar archive is damaged or truncated ({exc}); download it again") from exc


def _dict(value: object) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one (a missing or malformed part reads as absent)."""
    return value if isinstance(value, dict) else {}


def _clean(value: object) -> str | None:
    """Whitespace runs collapsed; empty or not a string -> null."""
    if not isinstance(value, str):
        return None
    return " ".join(value.split()) or None


_YEAR = re.compile(r"\b(1[89]\d\d|20\d\d)\b")


def _year(metadata: dict[str, Any]) -> int | None:
    """Year of the first version's ``created`` date, else of ``update_date``."""
    versions = metadata.get("versions")
    candidates: list[object] = []
    if isinstance(versions, list) and versions and isinstance(versions[0], dict):
        candidates.append(versions[0].get("created"))
    candidates.append(metadata.get("update_date"))
    for value in candidates:
        if isinstance(value, str) and (match := _YEAR.search(value)):
            return int(match.group(1))
    return None


def _author_names(metadata: dict[str, Any]) -> list[object] | None:
    """Names in order ("First Last Suffix"), or ``None`` when ``authors_parsed`` is not a list."""
    parsed = metadata.get("authors_parsed")
    if parsed is None:
        raw = metadata.get("authors")
        return [n for n in re.split(r",\s*|\s+and\s+", raw) if n.strip()] if isinstance(raw, str) else []
    if not isinstance(parsed, list):
        return None
    names: list[object] = []
    for entry in parsed:
        if isinstance(entry, list) and entry and all(isinstance(part, str) for part in entry):
            last, first, suffix = [*entry, "", ""][:3]  # [last, first, suffix], the tail optional
            names.append(" ".join(part.strip() for part in (first, last, suffix) if part.strip()))
        else:
            names.append(entry)
    return names


# ---------------------------------------------------------------------------------------------
# Loading


@dataclass
class _Entry:
    """One bibliography entry, kept until ids are merged over the whole input."""

    paper_id: str
    key: str
    origin: str
    ids: list[tuple[str, str]]  # (kind, canonical id) in preference order
    raw: str | None
    mentions: list[tuple[str, str]] = field(default_factory=list)  # (sentence id, marker) in text order


@dataclass
class _Tables:
    papers: dict[str, list[object]] = field(
        default_factory=lambda: {
            k: []
            for k in (
                "id",
                "title",
                "abstract",
                "year",
                "doi",
                "arxiv_id",
                "dataset",
                "stub",
                "reference",
                ORIGIN_COLUMN,
            )
        }
    )
    sentences: dict[str, list[object]] = field(
        default_factory=lambda: {k: [] for k in ("id", "paper_id", "sid", "section", "text", ORIGIN_COLUMN)}
    )
    has_sentence: dict[str, list[object]] = field(default_factory=lambda: _edge_columns())
    in_category: dict[str, list[object]] = field(default_factory=lambda: _edge_columns("score", "inferred"))
    wrote: dict[str, list[object]] = field(default_factory=lambda: _edge_columns("position"))
    authors: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> (first spelling, origin)
    seen: dict[str, str] = field(default_factory=dict)  # paper id -> origin of its record
    entries: list[_Entry] = field(default_factory=list)
    rejects: list[Reject] = field(default_factory=list)
    spans: int = 0
    spans_without_entry: int = 0
    malformed_ids: int = 0


def _edge_columns(*extra: str) -> dict[str, list[object]]:
    return {k: [] for k in (SOURCE_COLUMN, TARGET_COLUMN, *extra, ORIGIN_COLUMN)}


def load(path: Path, title_index: TitleIndex | None = None, *, thesaurus: Thesaurus | None = None) -> GraphBatch:
    """Parse unarXive JSONL (tar, file or folder) into a batch; see the module docstring."""
    return load_with_report(path, title_index, thesaurus=thesaurus)[0]


def load_with_report(
    path: Path,
    title_index: TitleIndex | None = None,
    *,
    categories: Collection[str] | None = None,
    thesaurus: Thesaurus | None = None,
) -> tuple[GraphBatch, ResolutionReport]:
    """:func:`load`, and how each bibliography entry was resolved.

    Args:
        path: the tar archive, a ``.jsonl``/``.jsonl.gz`` file, or a folder of them.
        title_index: resolves entries without ids by title (default: none, they stay unresolved).
        categories: the arXiv category codes that exist; codes outside it are rejected here
            (default: ``None``, leave unknown codes to graph validation).
        thesaurus: forced joins and splits of the entries keyed by their fields
            (default: ``$CITEGRAPH_REFERENCE_THESAURUS``, else none).
    """
    path = Path(path)
    started = time.perf_counter()
    out = _Tables()
    known = frozenset(categories) if categories is not None else None
    lines = tqdm(_records(path), desc=path.name, unit=" papers", disable=None, leave=False)
    for name, number, raw in lines:
        if raw.strip():
            _read_record(f"{name}:{number}", raw, out, known)
    batch, report = _resolve(out, title_index, thesaurus or thesaurus_from_env())
    log.info(
        "%s: %d papers, %d sentences, %d CITES, %d MENTIONS, %d rejects (%.1fs); %s",
        path.name,
        len(out.seen),
        len(batch.nodes["Sentence"]),
        len(batch.rels["CITES"]),
        len(batch.rels["MENTIONS"]),
        len(batch.rejects),
        time.perf_counter() - started,
        report.summary(),
    )
    return batch, report


def _read_record(where: str, raw: bytes, out: _Tables, categories: frozenset[str] | None) -> None:
    def reject(table_name: str, reason: str) -> None:
        out.rejects.append(Reject(table_name, where, reason))

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        reject("Paper", f"line is not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); re-export it")
        return
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        reject("Paper", f"line is not JSON ({exc.msg} at column {exc.colno}): {preview(text)}")
        return
    if not isinstance(record, dict):
        reject("Paper", f"line is a JSON {type(record).__name__}, expected an object with a `paper_id`")
        return
    metadata = _dict(record.get("metadata"))
    raw_id = record.get("paper_id") or metadata.get("id")
    if not isinstance(raw_id, str) or not raw_id.strip():
        reject("Paper", f"record has no `paper_id` (title {preview(metadata.get('title'))}); every paper needs one")
        return
    try:
        paper_id = canonical_paper_id(raw_id)
    except PaperIdError:
        paper_id = ""
    if not paper_id.startswith(ARXIV_PREFIX):
        reject("Paper", f"`paper_id` {preview(raw_id)} is not an arXiv id (2212.11867 or hep-th/9901001)")
        return
    if paper_id in out.seen:
        reject("Paper", f"paper {paper_id} was already read at {out.seen[paper_id]}; the repeat is skipped whole")
        return
    out.seen[paper_id] = where

    doi = metadata.get("doi")
    papers = out.papers
    papers["id"].append(paper_id)
    papers["title"].append(_clean(metadata.get("title")))
    abstract = metadata.get("abstract")
    if not isinstance(abstract, str) and isinstance(record.get("abstract"), dict):
        abstract = record["abstract"].get("text")
    papers["abstract"].append(_clean(abstract))
    papers["year"].append(_year(metadata))
    papers["doi"].append(doi.strip().lower() if isinstance(doi, str) and doi.strip() else None)
    papers["arxiv_id"].append(paper_id.removeprefix(ARXIV_PREFIX))
    papers["dataset"].append(DATASET)
    papers["stub"].append(False)
    papers["reference"].append(None)
    papers[ORIGIN_COLUMN].append(where)

    codes = metadata.get("categories")
    for code in dict.fromkeys(codes.split() if isinstance(codes, str) else []):
        if categories is not None and code not in categories:
            reject(
                "IN_CATEGORY",
                f"paper {paper_id}: category {code!r} is not in the arXiv taxonomy; the paper is loaded without it",
            )
            continue
        for column, value in zip(out.in_category, (paper_id, code, 1.0, False, where)):
            out.in_category[column].append(value)

    _read_authors(paper_id, metadata, where, out)
    entries = _read_bibliography(paper_id, record.get("bib_entries"), where, out)
    _read_body(paper_id, record.get("body_text"), entries, where, out)


def _read_authors(paper_id: str, metadata: dict[str, Any], where: str, out: _Tables) -> None:
    names = _author_names(metadata)
    if names is None:
        out.rejects.append(
            Reject(
                "WROTE",
                where,
                f"`authors_parsed` is {preview(metadata.get('authors_parsed'))}, expected a list of "
                "[last, first, suffix]; the paper is loaded without authors",
            )
        )
        return
    on_paper: set[str] = set()
    for position, name in enumerate(names, start=1):
        key = author_key(name) if isinstance(name, str) else None
        if key is None:
            out.rejects.append(Reject("Author", where, f"author {position} {preview(name)} has no name to key it by"))
            continue
        if key in on_paper:
            continue
        on_paper.add(key)
        assert isinstance(name, str)
        out.authors.setdefault(key, (name, where))
        for column, value in zip(out.wrote, (key, paper_id, position, where)):
            out.wrote[column].append(value)


def _read_bibliography(paper_id: str, raw: object, where: str, out: _Tables) -> dict[str, _Entry]:
    entries: dict[str, _Entry] = {}
    if not isinstance(raw, dict):
        return entries
    for key, entry in raw.items():
        if not isinstance(entry, dict):
            entry = {}
        ids, malformed = _entry_ids(entry)
        out.malformed_ids += malformed
        text = entry.get("bib_entry_raw")
        entries[key] = _Entry(paper_id, key, where, ids, text if isinstance(text, str) else None)
    out.entries.extend(entries.values())
    return entries


def _read_body(paper_id: str, body: object, entries: dict[str, _Entry], where: str, out: _Tables) -> None:
    sid = 0
    for paragraph in body if isinstance(body, list) else []:
        if not isinstance(paragraph, dict) or not isinstance(paragraph.get("text"), str):
            continue
        text = paragraph["text"]
        section = _clean(paragraph.get("section"))
        spans = split_sentences(text)
        ids: list[str] = []
        for start, end in spans:
            sid += 1
            sentence_id = f"{paper_id}#{sid}"
            ids.append(sentence_id)
            for column, value in zip(
                out.sentences, (sentence_id, paper_id, sid, section, " ".join(text[start:end].split()), where)
            ):
                out.sentences[column].append(value)
            for column, value in zip(out.has_sentence, (paper_id, sentence_id, where)):
                out.has_sentence[column].append(value)
        ends = [end for _, end in spans]
        for span in paragraph.get("cite_spans") or []:
            if not isinstance(span, dict):
                continue
            out.spans += 1
            entry = entries.get(str(span.get("ref_id")))
            offset = span.get("start")
            if entry is None or not isinstance(offset, int) or not ids:
                out.spans_without_entry += 1
                continue
            index = next((i for i, end in enumerate(ends) if offset < end), len(ids) - 1)
            marker = span.get("text")
            entry.mentions.append((ids[index], marker if isinstance(marker, str) else text[offset : span.get("end")]))


def _resolve(
    out: _Tables, title_index: TitleIndex | None, thesaurus: Thesaurus | None = None
) -> tuple[GraphBatch, ResolutionReport]:
    """Merge ids over the input, resolve every entry, and assemble the tables."""
    aliases = IdGroups()
    for paper_id, doi in zip(out.papers["id"], out.papers["doi"]):
        aliases.union([str(paper_id), *([DOI_PREFIX + str(doi)] if doi else [])])
    for entry in out.entries:
        for _, paper_id in entry.ids:
            aliases.add(paper_id)
        aliases.union([paper_id for _, paper_id in entry.ids])

    full = set(out.seen)
    stubs: dict[str, str] = {}  # target id -> origin of the first entry naming it (by id)
    references: dict[str, str] = {}  # stub id -> the longest reference string of the entries naming it
    by_title: dict[str, str] = {}  # target id -> origin (by title)
    cites: dict[tuple[str, str], tuple[set[str], str]] = {}  # (citing, cited) -> (sentences, origin)
    mentions: dict[tuple[str, str], tuple[str, str]] = {}  # (sentence, cited) -> (marker, origin)
    rows: dict[str, list[object]] = {k: [] for k in ("paper_id", "bib_key", "origin", "resolved_by", "target", "score")}
    merged = spans_to_unresolved = 0
    rejects = list(out.rejects)
    titled: list[tuple[str, float] | None] = [
        title_index.resolve_reference(entry.raw) if not entry.ids and title_index is not None and entry.raw else None
        for entry in out.entries
    ]
    # Entries that neither an id nor a title resolves: their strings' fields key them as works (loaders.refmatch).
    parsed = {
        n: parse_reference(entry.raw)
        for n, (entry, hit) in enumerate(zip(out.entries, titled))
        if not entry.ids and hit is None and entry.raw
    }
    keyed = key_references(list(parsed.values()), thesaurus=thesaurus)
    field_stubs: dict[str, str] = {}  # ref:… stub -> origin of the first entry naming it
    for n, entry in enumerate(out.entries):
        target: str | None = None
        how: str | None = None
        score: float | None = None
        if entry.ids:
            how, own = entry.ids[0]
            target, score = aliases.canonical(own), 1.0
            merged += target != own
            if target not in full:
                stubs.setdefault(target, entry.origin)
                text = _clean(entry.raw)
                # The longest string says the most about the work (a full title and venue rather than
                # "ibid." or an abbreviation); on a tie the first in input order, so a re-load is identical.
                if text is not None and len(text) > len(references.get(target, "")):
                    references[target] = text
        elif (found := titled[n]) is not None:
            (target, score), how = found, BY_TITLE
            if target not in full:
                by_title.setdefault(target, entry.origin)
        elif n in parsed and (target := keyed.target.get(collapse(parsed[n].raw))) is not None:
            how = BY_FIELDS
            field_stubs.setdefault(target, entry.origin)
        for column, value in zip(rows, (entry.paper_id, entry.key, entry.origin, how, target, score)):
            rows[column].append(value)
        if target is None:
            spans_to_unresolved += len(entry.mentions)
            continue
        if target == entry.paper_id:
            rejects.append(
                Reject(
                    "CITES",
                    entry.origin,
                    f"bibliography entry {entry.key} of {entry.paper_id} resolves to the citing paper itself "
                    f"({how}); a paper does not cite itself: the entry and its {len(entry.mentions)} mention(s) "
                    "are skipped",
                )
            )
            continue
        sentences, _ = cites.setdefault((entry.paper_id, target), (set(), entry.origin))
        for sentence_id, marker in entry.mentions:
            sentences.add(sentence_id)
            mentions.setdefault((sentence_id, target), (marker, entry.origin))

    report = ResolutionReport(
        entries=table(rows),
        spans=out.spans,
        spans_to_unresolved=spans_to_unresolved,
        spans_without_entry=out.spans_without_entry,
        malformed_ids=out.malformed_ids,
        merged_ids=merged,
        id_conflicts=aliases.conflicts,
    )
    fielded = {key: (keyed.stubs[key], where) for key, where in field_stubs.items()}
    own_aliases = {alias: (key, field_stubs[key]) for alias, key in keyed.aliases.items() if key in field_stubs}
    batch = _batch(out, aliases, stubs, references, by_title, cites, mentions, rejects, fielded, own_aliases)
    return batch, report


def _batch(
    out: _Tables,
    aliases: IdGroups,
    stubs: dict[str, str],
    references: dict[str, str],
    by_title: dict[str, str],
    cites: dict[tuple[str, str], tuple[set[str], str]],
    mentions: dict[tuple[str, str], tuple[str, str]],
    rejects: list[Reject],
    fielded: dict[str, tuple[WorkGroup, str]] | None = None,
    field_aliases: dict[str, tuple[str, str]] | None = None,
) -> GraphBatch:
    papers = {k: list(v) for k, v in out.papers.items()}
    for column in ("venue", "label", "volume", "first_page"):  # what a stub keyed by its fields also has
        papers[column] = [None] * len(papers["id"])
    for target, where in stubs.items():
        arxiv, doi = aliases.member(target, "arxiv"), aliases.member(target, "doi")
        row = {
            "id": target,
            "doi": doi.removeprefix(DOI_PREFIX) if doi else None,
            "arxiv_id": arxiv.removeprefix(ARXIV_PREFIX) if arxiv else None,
            "dataset": DATASET,
            "stub": True,
            "reference": references.get(target),
            ORIGIN_COLUMN: where,
        }
        for column, values in papers.items():
            values.append(row.get(column))
    for target, (work, where) in (fielded or {}).items():
        keyed_row: dict[str, object] = {"id": target, "dataset": DATASET, **stub_fields(work), ORIGIN_COLUMN: where}
        for column, values in papers.items():
            values.append(keyed_row.get(column))
    for target, where in by_title.items():
        if target not in stubs:  # a paper of the index's corpus: its id only, nothing to overwrite
            for column, values in papers.items():
                values.append({"id": target, ORIGIN_COLUMN: where}.get(column))
    paper_table = table({**papers, "year": nullable_ints(papers["year"])})
    authors = table(
        {
            "id": list(out.authors),
            "name": [name for name, _ in out.authors.values()],
            ORIGIN_COLUMN: [where for _, where in out.authors.values()],
        }
    )
    cites_table = table(
        {
            SOURCE_COLUMN: [s for s, _ in cites],
            TARGET_COLUMN: [t for _, t in cites],
            "n_contexts": nullable_ints([len(sentences) for sentences, _ in cites.values()]),
            "dataset": [DATASET] * len(cites),
            ORIGIN_COLUMN: [where for _, where in cites.values()],
        }
    )
    mentions_table = table(
        {
            SOURCE_COLUMN: [s for s, _ in mentions],
            TARGET_COLUMN: [t for _, t in mentions],
            "marker": [marker for marker, _ in mentions.values()],
            ORIGIN_COLUMN: [where for _, where in mentions.values()],
        }
    )
    alias_nodes, alias_of = alias_tables(field_aliases or {})
    return GraphBatch(
        SOURCE,
        nodes={
            "Paper": paper_table,
            "Alias": alias_nodes,
            "Author": authors,
            "Sentence": table({**out.sentences, "sid": nullable_ints(out.sentences["sid"])}),
        },
        rels={
            "WROTE": table({**out.wrote, "position": nullable_ints(out.wrote["position"])}),
            "IN_CATEGORY": table(out.in_category),
            "HAS_SENTENCE": table(out.has_sentence),
            "CITES": cites_table,
            "MENTIONS": mentions_table,
            "ALIAS_OF": alias_of,
        },
        rejects=rejects,
    )


__all__ = [
    "ABBREVIATIONS",
    "BY_FIELDS",
    "BY_TITLE",
    "DATASET",
    "ID_KINDS",
    "OPENALEX_PREFIX",
    "SOURCE",
    "ResolutionReport",
    "load",
    "load_with_report",
    "split_sentences",
]
