"""Records of a bibliographic database export (Web of Science, Scopus) -> canonical tables.

The format modules (:mod:`loaders.wos`, :mod:`loaders.scopus`) read their files into
:class:`ExportRecord` objects; :func:`assemble` resolves every cited reference over the whole
input (all files of a folder together) and builds one :class:`graph.ingest.GraphBatch`:

* ``Paper {id, title, abstract, year, venue, doi, dataset, stub=false}`` per record, keyed by its
  DOI (``doi:…``) when it has one, else by the database's own id (``wos:…``, ``scopus:…``); the
  other ids become ``Alias`` nodes with ``ALIAS_OF``;
* ``Institution {id, name, country}`` + ``AFFILIATION`` and ``Country {code, name}`` + ``IN_COUNTRY`` from
  the record's addresses (:mod:`loaders.affiliations`), once per record and node;
* ``Author {id, name}`` + ``WROTE {position}`` (1-based; ``id`` = :func:`loaders.ids.author_key`
  of the "First Last" name; a name twice on one record gives one edge, at its first place);
* per cited reference, the work it names (:mod:`loaders.citedrefs` parses and resolves it against the
  input's records, :mod:`loaders.refmatch` matches the strings as works: DOI, else source + volume +
  first page with author and year as checks, else author + year + source; a thesaurus forces joins and
  splits): a record of the input, else a stub ``Paper {id, doi, year, venue, volume, first_page, label,
  title (Scopus), reference, dataset, stub=true}`` keyed by the work's DOI, else ``ref:<key>`` of its most
  frequent string (``-v<volume>-p<page>`` added when that key names another work too); ``reference`` is
  that string, whitespace collapsed (the text the retrieval index uses for a stub without a title).
  A reference key naming one work only, and a field key ``ref:<source initials>-v<volume>-p<page>``
  naming one work only (records get theirs from J9/JI/SO + VL + BP), become ``Alias`` nodes of it, so a
  later load from any source meets the same work. ``(Paper)-[:CITES {dataset}]->(Paper)`` once per citing
  record and cited work. Records and stubs get ``label`` (:func:`loaders.citedrefs.reference_label`),
  ``volume`` and ``first_page``.
* ``Keyword {id, name, kind}`` + ``(Paper)-[:HAS_KEYWORD]->(Keyword)`` for the record's keywords
  (:attr:`ExportRecord.keywords`, normalised and joined by :mod:`loaders.keywords`).

Ids of one record are merged with :class:`loaders.ids.IdGroups`; matching never gives one work two DOIs
or two records (such joins are refused and counted in ``id_conflicts``).

Rejected here: a record that repeats an id of an earlier record (the first is kept), a reference
that resolves to the record citing it (``CITES``). Parse errors are the format modules' rejects.
"""

from __future__ import annotations

import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from tqdm import tqdm

from graph.errors import Reject
from graph.ingest import GraphBatch
from graph.schema import ORIGIN_COLUMN, SOURCE_COLUMN, TARGET_COLUMN
from loaders._common import alias_tables, input_files, nullable_ints, table
from loaders.affiliations import Affiliation, affiliation_tables
from loaders.citedrefs import CitedRef, RecordFacts, ReferenceResolver, reference_label
from loaders.ids import DOI_PREFIX, REFERENCE_PREFIX, IdGroups, author_key
from loaders.keywords import HAS_KEYWORD, KEYWORD_TABLE, KeywordRows
from loaders.refmatch import Matching, Thesaurus, WorkGroup, collapse, field_alias, match_references, report_rows


@dataclass
class ExportRecord:
    """One record of an export, as the format module read it."""

    origin: str  # "<file>:<line>" of the record's first line
    ids: list[str]  # every id of the record, the key first ("doi:…", "wos:…", "scopus:…")
    title: object = None
    abstract: object = None
    year: object = None  # an int, or the text as given (validation rejects it with this origin)
    venue: object = None
    venue_abbrev: object = None  # the source's abbreviation beside the full title (WoS J9/JI, Scopus)
    authors: list[str] = field(default_factory=list)  # "First Last"
    facts: RecordFacts | None = None  # what references are matched against
    references: list[CitedRef] = field(default_factory=list)
    keywords: list[tuple[str, str]] = field(default_factory=list)  # (kind, term) as given: loaders.keywords
    affiliations: list[Affiliation] = field(default_factory=list)  # institutions and countries (loaders.affiliations)

    @property
    def key(self) -> str:
        return self.ids[0]


@dataclass
class CitationReport:
    """How the cited references of an export were resolved.

    ``references == skipped + self_citations + sum(to_records.values()) + to_doi_stubs + to_ref_stubs``.
    """

    references: int = 0  # cited-reference strings read
    skipped: int = 0  # no key and no DOI: 10 characters or fewer, as bibliometrix drops them
    to_records: Counter[str] = field(default_factory=Counter)  # resolved to a record: by doi/fields/title/key
    to_doi_stubs: int = 0  # to a stub keyed by a DOI
    to_ref_stubs: int = 0  # to a stub keyed by the reference key
    self_citations: int = 0  # resolved to the citing record itself (rejected)
    repeated: int = 0  # a work a record already cites (one CITES edge)
    stubs: int = 0  # stub Papers
    cites: int = 0  # CITES edges
    id_conflicts: int = 0  # merges refused because one work would get two ids of one kind
    duplicate_records: int = 0  # records that repeat an earlier record's id (rejected)

    def summary(self) -> str:
        ways = ", ".join(f"{how} {n}" for how, n in sorted(self.to_records.items())) or "none"
        return (
            f"{self.references} cited references: {sum(self.to_records.values())} to records of the export "
            f"({ways}), {self.to_doi_stubs} to DOI stubs, {self.to_ref_stubs} to reference-key stubs, "
            f"{self.skipped} skipped (too short), {self.self_citations} self-citations; {self.stubs} stubs, "
            f"{self.cites} CITES ({self.repeated} repeated references merged); {self.id_conflicts} id conflicts, "
            f"{self.duplicate_records} duplicate records"
        )


log = logging.getLogger(__name__)

THESAURUS_ENV = "CITEGRAPH_REFERENCE_THESAURUS"  # a thesaurus file (loaders.refmatch.Thesaurus) every load honours


def thesaurus_from_env() -> Thesaurus | None:
    """The thesaurus named by ``$CITEGRAPH_REFERENCE_THESAURUS``, or None when it is unset."""
    path = os.environ.get(THESAURUS_ENV, "").strip()
    return Thesaurus.read(Path(path)) if path else None


def load_export(
    path: Path,
    *,
    source: str,
    dataset: str,
    suffixes: Sequence[str],
    read_file: Callable[[Path, list[ExportRecord], list[Reject]], None],
    by_title: bool,
    thesaurus: Thesaurus | None = None,
) -> tuple[GraphBatch, CitationReport]:
    """Every export file under ``path`` read by ``read_file`` (into records and rejects), then :func:`assemble`d
    into one batch named ``<source>:<path name>``; a file without records is a warning naming it."""
    path = Path(path)
    started = time.perf_counter()
    records: list[ExportRecord] = []
    rejects: list[Reject] = []
    for file in tqdm(input_files(path, suffixes), desc=source, unit=" files", disable=None, leave=False):
        before = len(records) + len(rejects)
        read_file(file, records, rejects)
        if len(records) + len(rejects) == before:
            log.warning("%s: no records in it, nothing loaded", file)
    if thesaurus is None:
        thesaurus = thesaurus_from_env()
    batch, report = assemble(f"{source}:{path.name}", dataset, records, rejects, by_title=by_title, thesaurus=thesaurus)
    log.info(
        "%s: %d records, %d rejects (%.1fs); %s",
        path.name,
        len(records),
        len(batch.rejects),
        time.perf_counter() - started,
        report.summary(),
    )
    return batch, report


def assemble(
    source: str,
    dataset: str,
    records: list[ExportRecord],
    rejects: list[Reject],
    *,
    by_title: bool,
    thesaurus: Thesaurus | None = None,
) -> tuple[GraphBatch, CitationReport]:
    """The batch of ``records`` (see the module docstring); ``rejects`` are the format module's own."""
    batch, report, _ = assemble_with_matching(source, dataset, records, rejects, by_title=by_title, thesaurus=thesaurus)
    return batch, report


def assemble_with_matching(
    source: str,
    dataset: str,
    records: list[ExportRecord],
    rejects: list[Reject],
    *,
    by_title: bool,
    thesaurus: Thesaurus | None = None,
) -> tuple[GraphBatch, CitationReport, ReferenceWorks]:
    """:func:`assemble`, and the works the references were matched to (what ``citegraph references report`` lists)."""
    report = CitationReport()
    rejects = list(rejects)
    kept = _unique(records, rejects, report)
    facts = [r.facts for r in kept if r.facts is not None]
    resolver = ReferenceResolver(facts, by_title=by_title)

    groups = IdGroups()
    for record in kept:
        groups.add(record.key)  # union() of a single id adds nothing
        groups.union(record.ids)
    single_dois = Counter(ref.dois[0] for record in kept for ref in record.references if len(ref.dois) == 1)
    # Pass 1: what the resolver finds for each distinct string, and the works the strings name.
    found: dict[str, tuple[str, str]] = {}  # collapsed string -> (record key, how)
    refs: list[CitedRef] = []
    for record in kept:
        for n, ref in enumerate(record.references):
            if len(ref.dois) > 1:  # WoS lists DOI variants, often one mistyped: one that another reference
                preferred = next((d for d in ref.dois if single_dois[d]), ref.dois[0])  # gives alone first
                ref = replace(ref, dois=(preferred, *(d for d in ref.dois if d != preferred)))
                record.references[n] = ref
            raw = collapse(ref.raw)
            if raw not in found and (hit := resolver.resolve(ref)) is not None:
                found[raw] = hit
            if ref.key or ref.dois:
                refs.append(ref)
    matching = match_references(
        refs, facts, resolved={raw: key for raw, (key, _) in found.items()}, thesaurus=thesaurus
    )
    works = _work_ids(matching, groups, facts)
    report.id_conflicts = groups.conflicts + matching.refused

    # Pass 2: every reference to its work.
    record_keys = {record.key for record in kept}
    origin_of = {record.key: record.origin for record in kept}
    stubs: dict[str, tuple[WorkGroup, str]] = {}  # stub key -> (its work, the origin of the first reference)
    cites: dict[tuple[str, str], str] = {}
    aliases: dict[str, tuple[str, str]] = {}
    for record in kept:
        for member in groups.members(record.key):
            aliases.setdefault(member, (groups.canonical(member), record.origin))
    for record in kept:
        for ref in record.references:
            report.references += 1
            raw = collapse(ref.raw)
            if raw not in matching.group_of:
                report.skipped += 1
                continue
            number = matching.group_of[raw]
            group, target = matching.groups[number], works.ids[number]
            how = found[raw][1] if raw in found else ("matched" if group.record else "")
            if target == record.key:
                report.self_citations += 1
                rejects.append(
                    Reject(
                        "CITES",
                        record.origin,
                        f"cited reference {ref.raw!r} resolves to the citing record itself ({how or 'matched'}); "
                        "a paper does not cite itself: the reference is skipped",
                    )
                )
                continue
            if target in record_keys:
                report.to_records[how if how in ("doi", "fields", "title") else "matched"] += 1
            elif target.startswith(DOI_PREFIX):
                report.to_doi_stubs += 1
            else:
                report.to_ref_stubs += 1
            if target not in record_keys:
                stubs.setdefault(target, (group, record.origin))
            if (record.key, target) in cites:
                report.repeated += 1
            else:
                cites[(record.key, target)] = record.origin
    for number, target in works.ids.items():
        where = origin_of.get(target) or (stubs[target][1] if target in stubs else None)
        if where is None:
            continue  # every string of the work was a self-citation
        for alias in works.aliases.get(number, ()):
            aliases.setdefault(alias, (target, where))
    for key, field_keys in works.record_aliases.items():
        for one in field_keys:
            aliases.setdefault(one, (key, origin_of[key]))
    report.stubs, report.cites = len(stubs), len(cites)
    batch = _batch(source, dataset, kept, stubs, groups, cites, aliases, rejects)
    return batch, report, works


@dataclass
class ReferenceWorks:
    """The works of an export's references: the matching, each work's id and the aliases it keeps."""

    matching: Matching
    ids: dict[int, str]  # work number (index in matching.groups) -> Paper id
    aliases: dict[int, list[str]]  # work number -> its aliases (reference keys and field keys of its own)
    record_aliases: dict[str, list[str]]  # record key -> the field keys of the record (ref:<initials>-v…-p…)


def _work_ids(matching: Matching, groups: IdGroups, facts: Sequence[RecordFacts]) -> ReferenceWorks:
    """Each work's id: the record it is, else its DOI, else ``ref:<reference key>`` of its most frequent
    string (``-v<volume>-p<page>`` added when that key also names another work). A reference key or field
    key that names one work only becomes its alias; one that names several works names none of them."""
    key_groups: dict[str, set[int]] = {}
    field_groups: dict[str, set[int]] = {}
    for number, group in enumerate(matching.groups):
        for _raw, ref in group.refs.items():
            if ref.key:
                key_groups.setdefault(REFERENCE_PREFIX + ref.key, set()).add(number)
            if alias := field_alias(ref.source, ref.volume, ref.page):
                field_groups.setdefault(alias, set()).add(number)
    # A record's field keys, from each of its source names, unless a work that is not the record has it too.
    record_fields: dict[str, list[str]] = {}
    record_numbers = {group.record: n for n, group in enumerate(matching.groups) if group.record}
    for fact in facts:
        own = {field_alias(name, fact.volume, fact.page) for name in fact.sources} - {None}
        record_fields[fact.key] = sorted(
            alias for alias in own if alias and field_groups.get(alias, set()) <= {record_numbers.get(fact.key, -1)}
        )
        for alias in record_fields[fact.key]:
            field_groups.pop(alias, None)  # the record keeps it, not the work's alias list (the same node)
    ids: dict[int, str] = {}
    aliases: dict[int, list[str]] = {number: [] for number in range(len(matching.groups))}
    taken: set[str] = set()
    for alias, numbers in (*key_groups.items(), *field_groups.items()):
        if len(numbers) == 1:
            aliases[next(iter(numbers))].append(alias)
    for number, group in enumerate(matching.groups):
        aliases[number].sort()
        if group.record:
            ids[number] = groups.canonical(group.record)
            continue
        if group.dois:
            ids[number] = group.dois[0]
            continue
        rep = group.representative
        key = REFERENCE_PREFIX + (rep.key or "")
        if rep.key is None or len(key_groups.get(key, ())) > 1 or key in taken:
            volume = "".join(ch for ch in (rep.volume or "").lower() if ch.isalnum())
            page = "".join(ch for ch in (rep.page or "").lower() if ch.isalnum())
            key = f"{key}-v{volume}-p{page}"
            n = 2
            while key in taken:
                key, n = f"{key.rsplit('~', 1)[0]}~{n}", n + 1
        taken.add(key)
        ids[number] = key
    return ReferenceWorks(matching, ids, aliases, record_fields)


@dataclass
class KeyedReferences:
    """Reference strings of a source without records of its own to match (Crossref, unarXive), as works."""

    target: dict[str, str]  # reference string (collapsed) -> the Paper id of its work
    stubs: dict[str, WorkGroup]  # Paper id -> its work
    aliases: dict[str, str]  # alias (reference key, field key) -> Paper id
    matching: Matching


def key_references(refs: Sequence[CitedRef], *, thesaurus: Thesaurus | None = None) -> KeyedReferences:
    """Match ``refs`` as works (:func:`loaders.refmatch.match_references`, no records) and key each work as
    :func:`assemble` keys a stub: its DOI, else ``ref:<reference key>``, its reference and field keys as aliases.
    References without a key or DOI are left out (no work can be told from them)."""
    matching = match_references([ref for ref in refs if ref.key or ref.dois], (), thesaurus=thesaurus)
    works = _work_ids(matching, IdGroups(), ())
    target = {raw: works.ids[number] for raw, number in matching.group_of.items()}
    stubs = {works.ids[number]: group for number, group in enumerate(matching.groups)}
    aliases = {
        alias: works.ids[number]
        for number, names in works.aliases.items()
        for alias in names
        if alias != works.ids[number]
    }
    return KeyedReferences(target, stubs, aliases, matching)


def stub_fields(work: WorkGroup) -> dict[str, object]:
    """The Paper properties of a stub for ``work`` (as :func:`assemble` writes them): its representative
    string's year, source (as ``venue``), volume and first page, the label, the title any string gives,
    the DOI, and ``reference``, the string (whitespace collapsed)."""
    ref = work.representative
    doi = work.dois[0] if work.dois else None
    return {
        "title": ref.title or next((r.title for r in work.refs.values() if r.title), None),
        "year": ref.year,
        "venue": ref.source,
        "doi": doi.removeprefix(DOI_PREFIX) if doi else None,
        "stub": True,
        "reference": collapse(ref.raw) or None,
        "label": work.label,
        "volume": ref.volume,
        "first_page": ref.page,
    }


def _unique(records: list[ExportRecord], rejects: list[Reject], report: CitationReport) -> list[ExportRecord]:
    """Records whose ids no earlier record has; a repeat (overlapping exports) is a reject."""
    seen: dict[str, str] = {}
    kept: list[ExportRecord] = []
    for record in records:
        repeated = next((paper_id for paper_id in record.ids if paper_id in seen), None)
        if repeated is not None:
            report.duplicate_records += 1
            rejects.append(
                Reject(
                    "Paper",
                    record.origin,
                    f"record repeats {repeated} of the record at {seen[repeated]} (overlapping exports?); "
                    "the first is kept: drop the repeat, or rerun with --on-error skip",
                )
            )
            continue
        for paper_id in record.ids:
            seen[paper_id] = record.origin
        kept.append(record)
    return kept


def _record_fields(facts: RecordFacts | None) -> dict[str, object]:
    """A record's ``label`` (first author surname + initials, year, source), ``volume`` and ``first_page``."""
    if facts is None:
        return {}
    source = facts.sources[0] if facts.sources else None
    return {
        "label": reference_label(facts.first_author, facts.year, source),
        "volume": facts.volume,
        "first_page": facts.page,
    }


def _batch(
    source: str,
    dataset: str,
    records: list[ExportRecord],
    stubs: dict[str, tuple[WorkGroup, str]],
    groups: IdGroups,
    cites: dict[tuple[str, str], str],
    aliases: dict[str, tuple[str, str]],
    rejects: list[Reject],
) -> GraphBatch:
    columns = (
        "id",
        "title",
        "abstract",
        "year",
        "venue",
        "venue_abbrev",
        "doi",
        "dataset",
        "stub",
        "reference",
        "label",
        "volume",
        "first_page",
        ORIGIN_COLUMN,
    )
    papers: dict[str, list[object]] = {name: [] for name in columns}

    def add(**row: object) -> None:
        for name, values in papers.items():
            values.append(row.get(name))

    authors: dict[str, tuple[str, str]] = {}
    keywords = KeywordRows()
    wrote: dict[str, list[object]] = {k: [] for k in (SOURCE_COLUMN, TARGET_COLUMN, "position", ORIGIN_COLUMN)}
    for record in records:
        doi = groups.member(record.key, "doi")
        add(
            id=record.key,
            title=record.title,
            abstract=record.abstract,
            year=record.year,
            venue=record.venue,
            venue_abbrev=record.venue_abbrev,
            doi=doi.removeprefix(DOI_PREFIX) if doi else None,
            dataset=dataset,
            stub=False,
            **_record_fields(record.facts),
            **{ORIGIN_COLUMN: record.origin},
        )
        for kind, term in record.keywords:
            keywords.add(record.key, kind, term, record.origin)
        on_record: set[str] = set()
        for position, name in enumerate(record.authors, start=1):
            key = author_key(name)
            if key is None or key in on_record:
                continue
            on_record.add(key)
            authors.setdefault(key, (name, record.origin))
            for column, value in zip(wrote, (key, record.key, position, record.origin)):
                wrote[column].append(value)
    for key, (work, where) in stubs.items():
        add(id=key, dataset=dataset, **stub_fields(work), **{ORIGIN_COLUMN: where})
    alias_nodes, alias_of = alias_tables(aliases)
    affiliation_nodes, affiliation_rels = affiliation_tables(
        {r.key: (r.affiliations, r.origin) for r in records if r.affiliations}
    )
    nodes = {
        "Paper": table({**papers, "year": nullable_ints(papers["year"])}),
        "Author": table(
            {
                "id": list(authors),
                "name": [name for name, _ in authors.values()],
                ORIGIN_COLUMN: [where for _, where in authors.values()],
            }
        ),
        "Alias": alias_nodes,
        **affiliation_nodes,
    }
    keyword_tables = keywords.tables()
    if keyword_tables:
        nodes[KEYWORD_TABLE] = keyword_tables[KEYWORD_TABLE]
    rels = {
        HAS_KEYWORD: keyword_tables.get(HAS_KEYWORD, table({})),
        **affiliation_rels,
        "WROTE": table({**wrote, "position": nullable_ints(wrote["position"])}),
        "ALIAS_OF": alias_of,
        "CITES": table(
            {
                SOURCE_COLUMN: [s for s, _ in cites],
                TARGET_COLUMN: [t for _, t in cites],
                "dataset": [dataset] * len(cites),
                ORIGIN_COLUMN: list(cites.values()),
            }
        ),
    }
    return GraphBatch(
        source,
        nodes={name: frame for name, frame in nodes.items() if len(frame)},
        rels={name: frame for name, frame in rels.items() if len(frame)},
        rejects=rejects,
    )


def reference_report(
    path: Path,
    *,
    source: str,
    suffixes: Sequence[str],
    read_file: Callable[[Path, list[ExportRecord], list[Reject]], None],
    by_title: bool,
    thesaurus: Thesaurus | None = None,
) -> list[dict[str, object]]:
    """The works the cited references of the exports under ``path`` are matched to, one row per work
    (:data:`loaders.refmatch.REPORT_COLUMNS`), as an ingest of the same files (and thesaurus) would store them."""
    records: list[ExportRecord] = []
    rejects: list[Reject] = []
    for file in input_files(Path(path), suffixes):
        read_file(file, records, rejects)
    if thesaurus is None:
        thesaurus = thesaurus_from_env()
    _, _, works = assemble_with_matching(
        f"{source}:{Path(path).name}", source, records, rejects, by_title=by_title, thesaurus=thesaurus
    )
    return report_rows(works.matching, works.ids)


__all__ = [
    "THESAURUS_ENV",
    "CitationReport",
    "ExportRecord",
    "KeyedReferences",
    "ReferenceWorks",
    "assemble",
    "key_references",
    "reference_report",
    "stub_fields",
    "thesaurus_from_env",
]
