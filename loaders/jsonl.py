"""Your own corpus: a documented JSON Lines format for data the project has no loader for.

One JSON object per line (UTF-8; the file may be gzipped), told apart by ``type``::

    {"type": "paper", "id": "P98-1081", "title": "...", "abstract": "...", "year": 1998, "venue": "ACL",
     "doi": "10.3115/...", "arxiv_id": null, "authors": ["Ann Lee", "Bo Chen"], "categories": ["cs.CL"]}
    {"type": "citation", "citing": "P98-1081", "cited": "my-paper-7", "contexts": ["As shown by ...", "..."]}
    {"type": "sentence", "paper": "P98-1081", "sid": 12, "text": "We tag with TnT.", "section": "Method"}

Required: ``paper`` ``id`` and ``title``; ``citation`` ``citing`` and ``cited``; ``sentence``
``paper``, ``sid`` and ``text``. Everything else may be left out or null. What each becomes:

* ``paper`` -> ``Paper {id, title, abstract, year, venue, doi, arxiv_id, dataset="jsonl"}``;
  ``Author {id, name}`` + ``(Author)-[:WROTE {position}]->(Paper)`` for each name in ``authors``
  ("First Last"; ``id`` is :func:`loaders.ids.author_key` of the name, ``position`` 1-based, a name
  twice on one paper gives one edge at its first place); ``(Paper)-[:IN_CATEGORY {score=1.0,
  inferred=false}]->(ArxivCategory)`` for each code in ``categories`` (arXiv codes such as
  ``cs.CL``; the categories must be in the store, so ingest ``taxonomy`` first).
  ``year`` is an integer (a string of digits is read as one); empty strings in ``title``,
  ``abstract``, ``venue`` mean "not known" (null); ``doi`` is stored lower-cased without a
  ``doi:``/``https://doi.org/`` prefix, ``arxiv_id`` without ``arXiv:`` and version;
* ``citation`` -> ``(Paper)-[:CITES {n_contexts, dataset="jsonl"}]->(Paper)``; both papers must
  be defined, in this file or already in the store. Each distinct text in ``contexts`` becomes a
  ``Sentence {id="<citing>#ctx<n>", paper_id=<citing>, text}`` of the citing paper with
  ``HAS_SENTENCE`` and ``(Sentence)-[:MENTIONS]->(cited)``. ``n`` numbers the distinct context texts
  of one citing paper from 1 in file order, so re-loading the same file gives the same ids, and a
  sentence that cites two papers (the same text in two citation records of one citing paper) is
  one node with two ``MENTIONS``. Keep all citations of a paper in one file: another file's
  contexts would be numbered from 1 again. ``n_contexts`` is the number of distinct contexts
  (null when ``contexts`` is absent);
* ``sentence`` -> ``Sentence {id="<paper>#<sid>", paper_id, sid, section, text}`` +
  ``HAS_SENTENCE``: a sentence of the paper's full text, ``sid`` its position (an integer).

Paper ids (``id``, ``citing``, ``cited``, ``paper``) go through
:func:`loaders.ids.canonical_paper_id` when they read as an ACL Anthology id, an arXiv id or a DOI
(``p98-1081`` -> ``P98-1081``, ``arXiv:2101.00001v2`` -> ``arxiv:2101.00001``, ``10.18653/V1/X`` ->
``doi:10.18653/v1/x``), so they meet the same papers loaded from other sources; any other id is
kept as given (surrounding whitespace removed): ``my-paper-7`` stays ``my-paper-7``.

Rejected here, with ``<file>:<line>`` and a reason: a line that is not UTF-8, not JSON, not an
object, without a known ``type`` (table ``line``: it is a record of no table); a record without a
required field, or with a paper id or ``sid`` that is not a string or an integer (the table of its
type); ``authors``/``categories``/``contexts`` that is not a list (``WROTE``/``IN_CATEGORY``/
``MENTIONS``; the rest of the record is loaded) and entries of them that are not names, codes or
texts (``Author``/``IN_CATEGORY``/``Sentence``); a citation of a paper by itself (``CITES``).
Values of the wrong type (``"year": "n.d."``, ``"title": 5``) are passed on for :mod:`graph.validate`
to reject with the same origin, which also rejects a citation of a paper defined nowhere (dangling)
and a paper id defined twice. Blank lines are skipped; fields not listed above are ignored with a
warning in the log. With ``--on-error skip``, the context sentences of a citation whose citing paper
exists nowhere are stored without their ``HAS_SENTENCE`` edge.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from graph.errors import Reject
from graph.ingest import GraphBatch
from graph.schema import ORIGIN_COLUMN, SOURCE_COLUMN, TARGET_COLUMN
from graph.validate import preview
from loaders._common import integer_or_as_is, iter_raw_lines, nullable_ints, origin, require_file, table, text_or_null
from loaders.ids import ARXIV_PREFIX, DOI_PREFIX, PaperIdError, author_key, canonical_paper_id

log = logging.getLogger(__name__)

SOURCE = "jsonl"  # the registry name; a batch is named "jsonl:<file name>"
DATASET = "jsonl"  # Paper.dataset and CITES.dataset
LINE_TABLE = "line"  # Reject.table of a line that is a record of no table (not JSON, unknown type)
CONTEXT_TAG = "ctx"  # context sentence ids: "<citing>#ctx<n>"

FIELDS: dict[str, tuple[str, ...]] = {
    "paper": ("id", "title", "abstract", "year", "venue", "doi", "arxiv_id", "authors", "categories"),
    "citation": ("citing", "cited", "contexts"),
    "sentence": ("paper", "sid", "text", "section"),
}
REQUIRED: dict[str, tuple[str, ...]] = {
    "paper": ("id", "title"),
    "citation": ("citing", "cited"),
    "sentence": ("paper", "sid", "text"),
}
TABLE = {"paper": "Paper", "citation": "CITES", "sentence": "Sentence"}  # a record's main table


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


@dataclass
class _Tables:
    """Column lists of every table the loader fills, and its rejects."""

    papers: dict[str, list[object]] = field(
        default_factory=lambda: {
            k: [] for k in ("id", "title", "abstract", "year", "venue", "doi", "arxiv_id", ORIGIN_COLUMN)
        }
    )
    authors: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> (first spelling, its origin)
    wrote: dict[str, list[object]] = field(default_factory=lambda: _rel_columns("position"))
    in_category: dict[str, list[object]] = field(default_factory=lambda: _rel_columns("score", "inferred"))
    cites: dict[str, list[object]] = field(default_factory=lambda: _rel_columns("n_contexts", "dataset"))
    sentences: dict[str, list[object]] = field(
        default_factory=lambda: {k: [] for k in ("id", "paper_id", "sid", "section", "text", ORIGIN_COLUMN)}
    )
    has_sentence: dict[str, list[object]] = field(default_factory=lambda: _rel_columns())
    mentions: dict[str, list[object]] = field(default_factory=lambda: _rel_columns())
    contexts: dict[str, dict[str, str]] = field(default_factory=dict)  # citing id -> text -> sentence id
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
        len(out.rejects),
        time.perf_counter() - started,
    )
    return batch


def _absent(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _required(kind: str) -> str:
    names = [f"`{name}`" for name in REQUIRED[kind]]
    return ", ".join(names[:-1]) + f" and {names[-1]}"


def _parse_line(raw: bytes, where: str, out: _Tables) -> dict[str, Any] | None:
    """The line's record when it is a JSON object with a known ``type``; else a reject and None."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        out.reject(
            LINE_TABLE,
            where,
            f"line is not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); save the file as UTF-8",
        )
        return None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        out.reject(
            LINE_TABLE,
            where,
            f"line is not JSON ({exc.msg}: column {exc.colno}) {preview(text)}; "
            "each line must be one complete JSON object",
        )
        return None
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
    _append(
        out.papers,
        id=pid,
        title=text_or_null(record["title"]),
        abstract=text_or_null(record.get("abstract")),
        year=integer_or_as_is(record.get("year")),
        venue=text_or_null(record.get("venue")),
        doi=_external_id(record.get("doi"), DOI_PREFIX),
        arxiv_id=_external_id(record.get("arxiv_id"), ARXIV_PREFIX),
        **{ORIGIN_COLUMN: where},
    )
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


def _citation(record: dict[str, Any], where: str, out: _Tables) -> None:
    citing = _id_or_reject(record, "citing", "citation", where, out)
    cited = _id_or_reject(record, "cited", "citation", where, out) if citing is not None else None
    if citing is None or cited is None:
        return
    if citing == cited:
        out.reject("CITES", where, f"citation from {citing!r} to itself; a paper cannot cite itself, drop the record")
        return
    contexts = record.get("contexts")
    texts: list[str] = []
    if isinstance(contexts, list):
        for n, text in enumerate(contexts, start=1):
            if not isinstance(text, str) or not text.strip():
                out.reject("Sentence", where, f"context {n} is {preview(text)}, expected a sentence text")
            elif text.strip() not in texts:
                texts.append(text.strip())
    elif contexts is not None:
        out.reject(
            "MENTIONS",
            where,
            f"`contexts` is {preview(contexts)}, expected a list of sentence texts; "
            "the citation is loaded without them",
        )
    n_contexts = len(texts) if isinstance(contexts, list) else None
    _append(out.cites, source=citing, target=cited, n_contexts=n_contexts, dataset=DATASET, **{ORIGIN_COLUMN: where})
    known = out.contexts.setdefault(citing, {})
    for text in texts:
        sentence_id = known.get(text)
        if sentence_id is None:
            sentence_id = known[text] = f"{citing}#{CONTEXT_TAG}{len(known) + 1}"
            _append(out.sentences, id=sentence_id, paper_id=citing, text=text, **{ORIGIN_COLUMN: where})
            _append(out.has_sentence, source=citing, target=sentence_id, **{ORIGIN_COLUMN: where})
        _append(out.mentions, source=sentence_id, target=cited, **{ORIGIN_COLUMN: where})


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
    sentence_id = f"{pid}#{sid}"
    _append(
        out.sentences,
        id=sentence_id,
        paper_id=pid,
        sid=sid,
        section=text_or_null(record.get("section")),
        text=record["text"],
        **{ORIGIN_COLUMN: where},
    )
    _append(out.has_sentence, source=pid, target=sentence_id, **{ORIGIN_COLUMN: where})


def _batch(path: Path, out: _Tables) -> GraphBatch:
    papers = table({**out.papers, "year": nullable_ints(out.papers["year"])})
    papers.insert(len(papers.columns) - 1, "dataset", DATASET)
    authors = table(
        {
            "id": list(out.authors),
            "name": [name for name, _ in out.authors.values()],
            ORIGIN_COLUMN: [where for _, where in out.authors.values()],
        }
    )
    nodes = {
        "Paper": papers,
        "Author": authors,
        "Sentence": table({**out.sentences, "sid": nullable_ints(out.sentences["sid"])}),
    }
    rels = {
        "WROTE": table({**out.wrote, "position": nullable_ints(out.wrote["position"])}),
        "IN_CATEGORY": table(out.in_category),
        "CITES": table({**out.cites, "n_contexts": nullable_ints(out.cites["n_contexts"])}),
        "HAS_SENTENCE": table(out.has_sentence),
        "MENTIONS": table(out.mentions),
    }
    return GraphBatch(
        f"{SOURCE}:{path.name}",
        nodes={name: frame for name, frame in nodes.items() if len(frame)},
        rels={name: frame for name, frame in rels.items() if len(frame)},
        rejects=out.rejects,
    )


__all__ = ["DATASET", "LINE_TABLE", "SOURCE", "load", "paper_id"]
