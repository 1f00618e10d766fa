"""ACL Anthology metadata (``anthology/papers.jsonl.gz``) -> Paper, Author and WROTE tables.

One JSON object per line::

    {"id": "P98-1081", "title": "...", "abstract": "", "year": "1998", "venue": "...",
     "venue_ids": ["acl"], "authors": ["Warren Weaver", ...]}

becomes

* ``Paper {id, title, abstract, year, venue, dataset="anthology"}``: ``id`` through
  :func:`loaders.ids.canonical_paper_id` (Anthology ids stay as they are); ``year`` an int when
  it is all digits; empty ``title``/``abstract``/``venue`` become null ("not known here", so a
  re-ingest never blanks a value another source gave);
* ``Author {id, name}``: ``id`` is :func:`loaders.ids.author_key` of the name, ``name`` the
  first spelling met in the file;
* ``(Author)-[:WROTE {position}]->(Paper)``: ``position`` is the 1-based place in the paper's
  ``authors`` list. A name listed twice on one paper (same key) gives one edge, at its first place.

Rejected here, with ``papers.jsonl.gz:<line>`` and a reason: a line that is not UTF-8, not JSON,
not a JSON object, without an ``id``, or whose ``id`` is not an Anthology id; an ``authors`` that is
not a list; an author entry that is not a name. Values of the wrong type (``"year": "n.d."``) pass
through unchanged for :mod:`graph.validate` to reject with the same origin. Blank lines are not
records and are skipped. ``venue_ids`` has no place in the data model yet and is not loaded.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

from tqdm import tqdm

from graph.errors import Reject
from graph.ingest import GraphBatch
from graph.schema import ORIGIN_COLUMN, SOURCE_COLUMN, TARGET_COLUMN
from graph.validate import preview
from loaders._common import (
    integer_or_as_is,
    iter_raw_lines,
    nullable_ints,
    origin,
    require_file,
    table,
    text_or_unescaped_null,
)
from loaders.ids import ARXIV_PREFIX, DOI_PREFIX, PaperIdError, author_key, canonical_paper_id

log = logging.getLogger(__name__)

SOURCE = "anthology"
DATASET = "anthology"  # Paper.dataset: which loader made the node


def load(path: Path) -> GraphBatch:
    """Parse ``papers.jsonl.gz`` (or the same lines uncompressed) into a batch; see the module docstring."""
    path = Path(path)
    require_file(path, SOURCE)
    started = time.perf_counter()
    paper_cols: dict[str, list[object]] = {k: [] for k in ("id", "title", "abstract", "year", "venue", ORIGIN_COLUMN)}
    wrote_cols: dict[str, list[object]] = {k: [] for k in (SOURCE_COLUMN, TARGET_COLUMN, "position", ORIGIN_COLUMN)}
    authors: dict[str, tuple[str, str]] = {}  # key -> (first spelling, origin of its first line)
    rejects: list[Reject] = []
    repeated = 0  # author names listed twice on one paper, collapsed to one edge

    def reject(table_name: str, where: str, reason: str) -> None:
        rejects.append(Reject(table_name, where, reason))

    lines = tqdm(iter_raw_lines(path), desc=path.name, unit=" lines", disable=None, leave=False)
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        where = origin(path, number)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            reject(
                "Paper",
                where,
                f"line is not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); "
                "re-export the file as UTF-8",
            )
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            reject("Paper", where, f"line is not JSON ({exc.msg} at column {exc.colno}): {preview(text)}")
            continue
        if not isinstance(record, dict):
            reject("Paper", where, f"line is a JSON {type(record).__name__}, expected an object with an `id`")
            continue
        raw_id = record.get("id")
        if raw_id is None or (isinstance(raw_id, str) and not raw_id.strip()):
            reject("Paper", where, f"record has no `id` (title {preview(record.get('title'))}); every paper needs one")
            continue
        paper_id = raw_id  # a non-string id passes on; validation rejects it with this origin
        if isinstance(raw_id, str):
            try:
                paper_id = canonical_paper_id(raw_id)
            except PaperIdError:
                paper_id = None
            if paper_id is None or paper_id.startswith((ARXIV_PREFIX, DOI_PREFIX)):
                reject(
                    "Paper", where, f"`id` {preview(raw_id)} is not an ACL Anthology id (P98-1081 or 2020.acl-main.1)"
                )
                continue

        paper_cols["id"].append(paper_id)
        paper_cols["title"].append(text_or_unescaped_null(record.get("title")))  # HTML-escaped: R&amp;G
        paper_cols["abstract"].append(text_or_unescaped_null(record.get("abstract")))
        paper_cols["year"].append(integer_or_as_is(record.get("year")))
        paper_cols["venue"].append(text_or_unescaped_null(record.get("venue")))
        paper_cols[ORIGIN_COLUMN].append(where)

        names = record.get("authors")
        if names is None:
            continue
        if not isinstance(names, list):
            reject(
                "WROTE",
                where,
                f"`authors` is {preview(names)}, expected a list of names; the paper is loaded without authors",
            )
            continue
        on_paper: set[str] = set()
        for position, name in enumerate(names, start=1):
            if not isinstance(name, str):
                reject("Author", where, f"author {position} is {preview(name)}, expected a name (a string)")
                continue
            key = author_key(name)
            if key is None:
                reject("Author", where, f"author {position} {preview(name)} has no letter or digit to key it by")
                continue
            if key in on_paper:
                repeated += 1
                continue
            on_paper.add(key)
            if key not in authors:
                authors[key] = (" ".join(name.split()), where)
            wrote_cols[SOURCE_COLUMN].append(key)
            wrote_cols[TARGET_COLUMN].append(paper_id)
            wrote_cols["position"].append(position)
            wrote_cols[ORIGIN_COLUMN].append(where)

    papers = table({**paper_cols, "year": nullable_ints(paper_cols["year"])})
    papers.insert(len(papers.columns) - 1, "dataset", DATASET)
    author_table = table(
        {
            "id": list(authors),
            "name": [name for name, _ in authors.values()],
            ORIGIN_COLUMN: [where for _, where in authors.values()],
        }
    )
    wrote = table({**wrote_cols, "position": nullable_ints(wrote_cols["position"])})
    log.info(
        "%s: %d papers, %d authors, %d WROTE edges, %d rejected lines/entries, %d repeated names collapsed (%.1fs)",
        path.name,
        len(papers),
        len(author_table),
        len(wrote),
        len(rejects),
        repeated,
        time.perf_counter() - started,
    )
    return GraphBatch(SOURCE, nodes={"Paper": papers, "Author": author_table}, rels={"WROTE": wrote}, rejects=rejects)


__all__ = ["DATASET", "SOURCE", "load"]
