"""OpenCitations (COCI / the OpenCitations Index) citations -> stub papers and CITES edges.

``citegraph ingest opencitations PATH``: PATH is a file, a folder (every ``*.csv``, ``*.json``
and ``*.gz`` under it, in sorted order) or a quoted glob. Two formats, told apart by content,
gzipped or not:

* the **CSV dump** (``oci,citing,cited,creation,timespan,journal_sc,author_sc``, and the variant
  without ``oci``): a header line naming at least ``citing`` and ``cited``, then one citation a
  line;
* the **REST API's JSON** (``/references/{doi}``, ``/citations/{doi}``): an array of objects with
  ``citing`` and ``cited`` (JSON Lines of such objects are read too).

``citing`` and ``cited`` are DOIs (``10.1108/jd-12-2013-0166``). The Index and API v2 write id
lists instead, such as ``coci => 10.1108/…`` or ``omid:br/0612345 doi:10.1108/… pmid:29456894``:
a leading ``<index> =>`` is dropped and every ``doi:``, ``pmid:`` and ``openalex:`` id is taken
(a bare DOI counts as ``doi:``); ``omid:`` and other ids this project has no kind for are
ignored. Each citation becomes

* a stub ``Paper {id, doi, stub=true, dataset="opencitations"}`` for each end (OpenCitations has
  no metadata: a later load of the works, from Crossref or OpenAlex, brings titles); ``id`` is
  :func:`loaders.ids.preferred_id` of its ids (the DOI when there is one), grouped over the whole
  input with :class:`loaders.ids.IdGroups`, the other ids ``Alias`` nodes with ``ALIAS_OF``;
* ``(Paper)-[:CITES {dataset="opencitations"}]->(Paper)``.

``oci``, ``creation`` and ``timespan`` have no place in the data model, and the self-citation
flags ``journal_sc`` / ``author_sc`` are ignored (they can be recomputed from the works' venues and
authors once those are loaded). A citation given twice (the same citing and cited work, in one
file or two: ``/references/A`` and ``/citations/B`` overlap) is one edge; the repeats are counted
in :class:`OpenCitationsReport` and the log, not rejected.

Rejected (``CITES``), with ``<file>:<line>`` (``<file>:record N`` for the items of a JSON array)
and a reason: a line or file that is not UTF-8, not CSV/JSON or cut short, a CSV file without the
header, a row with too few fields, an item that is not an object, a ``citing`` or ``cited`` with no
DOI (nor PubMed or OpenAlex id), a work citing itself.
"""

from __future__ import annotations

import csv
import logging
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from graph.errors import IngestError, Reject
from graph.ingest import GraphBatch
from graph.schema import ORIGIN_COLUMN, SOURCE_COLUMN, TARGET_COLUMN
from graph.validate import preview
from loaders._common import alias_tables, input_files, table
from loaders._json_exports import JsonProblem, JsonValue, display_names, gzip_problem, iter_json_values, iter_lines
from loaders.ids import DOI_PREFIX, PMID_PREFIX, IdGroups, PaperIdError, canonical_paper_id, openalex_id

log = logging.getLogger(__name__)

SOURCE = "opencitations"  # the registry name; the batch is named "opencitations"
DATASET = "opencitations"  # Paper.dataset and CITES.dataset
SUFFIXES = (".csv", ".json", ".jsonl", ".gz")
TABLE = "CITES"  # every record is a citation: rejects are of this table

_INDEX_PREFIX = re.compile(r"^\s*[A-Za-z][\w-]*\s*=>\s*")  # "coci => 10.1/x"
_PMID = re.compile(r"\d+")


@dataclass(frozen=True)
class OpenCitationsReport:
    files: int
    citations: int  # citation records read (rows / items), rejected ones included
    repeated: int  # records of a citation already read (one edge)
    works: int  # distinct works named (stub Papers)


@dataclass
class _Columns:
    groups: IdGroups = field(default_factory=IdGroups)
    cites: dict[tuple[str, str], str] = field(default_factory=dict)  # (citing id, cited id) -> origin
    first_seen: dict[str, str] = field(default_factory=dict)  # an end's first id -> origin
    rejects: list[Reject] = field(default_factory=list)
    records: int = 0
    repeated: int = 0

    def reject(self, where: str, reason: str) -> None:
        self.rejects.append(Reject(TABLE, where, reason))


def load(path: Path) -> GraphBatch:
    """Parse OpenCitations CSV or JSON (see the module docstring) into a batch named ``opencitations``."""
    return load_with_report(path)[0]


def load_with_report(path: Path) -> tuple[GraphBatch, OpenCitationsReport]:
    """:func:`load`, and the counts of :class:`OpenCitationsReport`."""
    started = time.perf_counter()
    files = input_files(Path(path), SUFFIXES)
    out = _Columns()
    named = list(zip(files, display_names(files)))
    for file, name in tqdm(named, desc=SOURCE, unit=" files", disable=None if len(files) > 1 else True, leave=False):
        if _is_json(file):
            _json_file(file, name, out)
        else:
            _csv_file(file, name, out)
    batch, report = _batch(out, len(files))
    log.info(
        "%s: %d citation records, %d repeats merged, %d CITES between %d works, %d rejects (%.1fs)",
        path,
        report.citations,
        report.repeated,
        len(batch.rels.get("CITES", ())),
        report.works,
        len(batch.rejects),
        time.perf_counter() - started,
    )
    return batch, report


def _is_json(path: Path) -> bool:
    """JSON when the first non-blank character is ``[`` or ``{``; a CSV starts with its header."""
    try:
        for raw in iter_lines(path):
            text = raw.lstrip(b"\xef\xbb\xbf").strip()
            if text:
                return text[:1] in (b"[", b"{")
    except IngestError:  # a damaged gzip stream: the CSV reader reports it with its line
        return False
    return False


def _json_file(path: Path, name: str, out: _Columns) -> None:
    for item in iter_json_values(path):
        if isinstance(item, JsonProblem):
            out.records += 1
            out.reject(f"{name}:{item.line}", item.reason)
            continue
        assert isinstance(item, JsonValue)
        if isinstance(item.value, list):
            for n, record in enumerate(item.value, start=1):
                where = f"{name}:record {n}" if item.whole_file else f"{name}:{item.line} record {n}"
                _json_record(record, where, out)
        else:
            _json_record(item.value, f"{name}:{item.line}", out)


def _json_record(record: object, where: str, out: _Columns) -> None:
    out.records += 1
    if not isinstance(record, dict):
        out.reject(where, f"item is {preview(record)}, expected an object with `citing` and `cited`")
        return
    _citation(record.get("citing"), record.get("cited"), where, out)


def _csv_file(path: Path, name: str, out: _Columns) -> None:
    columns: dict[str, int] | None = None
    number = 0
    try:
        for number, raw in enumerate(iter_lines(path), start=1):
            if not raw.strip():
                continue
            where = f"{name}:{number}"
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                out.records += columns is not None
                out.reject(
                    where,
                    f"line is not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); "
                    "save the file as UTF-8",
                )
                continue
            try:
                fields = next(csv.reader([text.lstrip("\ufeff")]), [])
            except csv.Error as exc:  # a field past the csv module's limit (128 KiB), a NUL byte
                out.records += 1
                out.reject(
                    where,
                    f"line of {len(text):,} characters is no CSV row ({exc}; it starts {preview(text)}); a row holds "
                    "short ids (OCI, DOIs, dates): a damaged line, or a quote never closed that swallowed the lines "
                    "after it. Fix or drop the line, or load the rest with --on-error skip",
                )
                if columns is None:
                    return  # no header, so no row can be read
                continue
            if columns is None:
                header = [f.strip().lower() for f in fields]
                if "citing" not in header or "cited" not in header:
                    out.records += 1
                    out.reject(
                        where,
                        f"the first line {preview(text)} is not a header naming `citing` and `cited`; a COCI CSV "
                        "starts with oci,citing,cited,creation,timespan,journal_sc,author_sc: add the header line",
                    )
                    return
                columns = {"citing": header.index("citing"), "cited": header.index("cited")}
                continue
            out.records += 1
            needed = max(columns.values()) + 1
            if len(fields) < needed:
                out.reject(
                    where,
                    f"row has {len(fields)} field(s), the header names {needed} or more; "
                    "a cut or malformed row (a truncated file ends this way: copy it again)",
                )
                continue
            _citation(fields[columns["citing"]], fields[columns["cited"]], where, out)
    except IngestError as exc:  # a gzip stream cut short or damaged (iter_lines)
        out.records += 1
        out.reject(f"{name}:{number + 1}", gzip_problem(number, exc))


def work_ids(value: object) -> list[str]:
    """The ids this project knows in one ``citing``/``cited`` value, DOI first where given.

    >>> work_ids("omid:br/0612345 doi:10.1108/JD-12-2013-0166 pmid:29456894")
    ['doi:10.1108/jd-12-2013-0166', 'pmid:29456894']
    >>> work_ids("coci => 10.1108/jd-12-2013-0166")
    ['doi:10.1108/jd-12-2013-0166']
    """
    if not isinstance(value, str):
        return []
    ids: list[str] = []
    for token in _INDEX_PREFIX.sub("", value).split():  # not at ";": DOIs may hold one (…co;2-o)
        kind, _, rest = token.partition(":")
        kind = kind.lower()
        try:
            if token.startswith("10."):  # a bare DOI (checked first: DOIs may hold a colon)
                ids.append(canonical_paper_id(DOI_PREFIX + token))
            elif kind == "doi":
                ids.append(canonical_paper_id(DOI_PREFIX + rest))
            elif kind == "pmid" and _PMID.fullmatch(rest):
                ids.append(PMID_PREFIX + rest)
            elif kind == "openalex":
                ids.append(openalex_id(rest))
        except PaperIdError:
            continue
    return list(dict.fromkeys(ids))


def _citation(citing: object, cited: object, where: str, out: _Columns) -> None:
    ends = []
    for name, value in (("citing", citing), ("cited", cited)):
        ids = work_ids(value)
        if not ids:
            out.reject(where, f"`{name}` is {preview(value)}, with no DOI (nor PubMed or OpenAlex id); it is skipped")
            return
        ends.append(ids)
    for ids in ends:
        out.groups.add(ids[0])
        for other in ids[1:]:
            out.groups.union([ids[0], other])
    pair = (ends[0][0], ends[1][0])
    if out.groups.find(pair[0]) == out.groups.find(pair[1]):
        out.reject(where, f"{pair[0]} cites itself; a work does not cite itself, drop the row")
        return
    for paper_id in pair:
        out.first_seen.setdefault(paper_id, where)
    if pair in out.cites:
        out.repeated += 1
        return
    out.cites[pair] = where


def _batch(out: _Columns, n_files: int) -> tuple[GraphBatch, OpenCitationsReport]:
    groups = out.groups
    keys: dict[str, str] = {}  # key -> origin of its first record
    for first, where in out.first_seen.items():
        keys.setdefault(groups.canonical(first), where)
    # Two records can name one citation by different ids of a work (a DOI here, a PubMed id there).
    cites: dict[tuple[str, str], str] = {}
    repeated = out.repeated
    for (citing, cited), where in out.cites.items():
        pair = (groups.canonical(citing), groups.canonical(cited))
        if pair in cites:
            repeated += 1
        else:
            cites[pair] = where
    papers = table(
        {
            "id": list(keys),
            "doi": [(groups.member(k, "doi") or "").removeprefix(DOI_PREFIX) or None for k in keys],
            "dataset": [DATASET] * len(keys),
            "stub": [True] * len(keys),
            ORIGIN_COLUMN: list(keys.values()),
        }
    )
    aliases = {alias: (key, where) for key, where in keys.items() for alias in groups.members(key)[1:]}
    alias_nodes, alias_of = alias_tables(aliases)
    nodes = {"Paper": papers, "Alias": alias_nodes}
    rels = {
        "ALIAS_OF": alias_of,
        "CITES": table(
            {
                SOURCE_COLUMN: [s for s, _ in cites],
                TARGET_COLUMN: [t for _, t in cites],
                "dataset": [DATASET] * len(cites),
                ORIGIN_COLUMN: list(cites.values()),
            }
        ),
    }
    batch = GraphBatch(
        SOURCE,
        nodes={name: frame for name, frame in nodes.items() if len(frame)},
        rels={name: frame for name, frame in rels.items() if len(frame)},
        rejects=out.rejects,
    )
    return batch, OpenCitationsReport(n_files, out.records, repeated, len(keys))


__all__ = ["DATASET", "SOURCE", "OpenCitationsReport", "load", "load_with_report", "work_ids"]
