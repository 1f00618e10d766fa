"""CoRA (``cora/``, text-free) -> papers, citations, authors and the CoRA topic hierarchy.

Files, each one JSON document:

* ``paper_references.json``: ``[[citing, cited], ...]`` paper numbers (34,648 pairs);
* ``paper_authors.json``: ``{"<paper>": ["<author code>", ...]}`` in author order;
* ``author_names.json``: ``{"<author code>": "<name>"}``, names as printed ("J. Kay", "Forbus, K.");
* ``classification_papers.json``: ``{"<topic path>": [paper, ...]}`` with paths such as
  ``Artificial_Intelligence/Machine_Learning/Neural_Networks``; a paper of a leaf topic is listed
  under every ancestor too.

becomes

* ``Paper {id="cora:<n>", dataset="cora", stub}`` for every paper number in any file. ``stub`` is
  true for a paper known only as a citation target (no authors, no topic, cites nothing);
* ``(Paper)-[:CITES {dataset="cora"}]->(Paper)`` per pair (``n_contexts`` stays null: CoRA has no
  text to count contexts in);
* ``Author {id, name}`` + ``WROTE {position}`` (1-based). ``id`` is
  :func:`loaders.ids.author_key` of the name, after turning "Last, First" into "First Last" (one
  comma, and not before a suffix such as "Jr."), so CoRA authors join the project's other sources
  by name. CoRA's codes are not kept as ids: 558 names are spelled under two or more codes
  ("Forbus, K." and "K. Forbus"), and the project keys authors by normalised name everywhere;
  two codes that name one key on one paper give one edge, at the first place. A code with no
  name (or a name without a letter or digit) keeps its code: ``cora-author:<code>``;
* ``AcmClass {id="cora:<path>", code=<path>, name, scheme="cora", level}`` for each topic path
  (and any ancestor the file does not list itself), ``level`` the depth (top topics 1), ``name``
  the last path part with ``_`` as a space and ``__`` as ``", "``
  (``Data_Structures__Algorithms_and_Theory`` -> "Data Structures, Algorithms and Theory"), plus
  ``(child)-[:BROADER]->(parent)``.

Not loaded: which papers have which topic. The data model links papers only to arXiv categories
(``IN_CATEGORY``) and stores no topic on a paper; the memberships are read only to know the papers.

Origins are ``<file>#<key>``: the index of a pair in ``paper_references.json`` (0-based), a paper
number, an author code or a topic path. Rejected with such an origin and a reason: a self-citation
(``[x, x]``: a paper does not cite itself), a pair already listed, a pair that is not two paper
numbers (``CITES``); a paper number that is not a non-negative integer (``Paper``, or ``WROTE``
for ``paper_authors.json``); an author list that is not a list of codes (``WROTE``); a topic path
with an empty part (``AcmClass``). A file that is missing or not JSON is an :class:`IngestError`.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from graph.errors import IngestError, Reject
from graph.ingest import GraphBatch
from graph.schema import ORIGIN_COLUMN, SOURCE_COLUMN, TARGET_COLUMN
from graph.validate import preview
from loaders._common import nullable_ints, require_file, table
from loaders.ids import author_key

log = logging.getLogger(__name__)

SOURCE = "cora"
DATASET = "cora"  # Paper.dataset and CITES.dataset
SCHEME = "cora"  # AcmClass.scheme of the topic hierarchy
PAPER_PREFIX = "cora:"
AUTHOR_PREFIX = "cora-author:"  # authors whose code has no usable name
REFERENCES_FILE = "paper_references.json"
PAPER_AUTHORS_FILE = "paper_authors.json"
AUTHOR_NAMES_FILE = "author_names.json"
CLASSIFICATION_FILE = "classification_papers.json"

# see(number, origin, stub=...): registers a paper number where it is met.
_See = Callable[..., None]
_SUFFIX = re.compile(r"(?:jr|sr|ii|iii|iv|v)\.?", re.I)


def paper_id(number: int) -> str:
    return f"{PAPER_PREFIX}{number}"


def topic_id(path: str) -> str:
    return f"{SCHEME}:{path}"


def topic_name(path: str) -> str:
    """``Data_Structures__Algorithms_and_Theory`` -> ``Data Structures, Algorithms and Theory``."""
    return path.rsplit("/", 1)[-1].replace("__", ", ").replace("_", " ")


def first_last(name: str) -> str:
    """``"Forbus, K."`` -> ``"K. Forbus"``; names without exactly one comma, or with a suffix after it, as they are.

    >>> first_last("Forbus, K."), first_last("P. Penfield, Jr."), first_last("Selman, B.,and Crato, N")
    ('K. Forbus', 'P. Penfield, Jr.', 'Selman, B.,and Crato, N')
    """
    if name.count(",") != 1:
        return name.strip()
    last, first = (part.strip() for part in name.split(","))
    if not first or not last or _SUFFIX.fullmatch(first):
        return name.strip()
    return f"{first} {last}"


def _number(value: object) -> int | None:
    """A paper number: an int or a string of digits, never a bool or a negative number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        return int(value.strip())
    return None


def _read_json(path: Path, expected: type) -> Any:
    require_file(path, SOURCE)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise IngestError(f"{path}: not UTF-8 (byte {exc.start}); re-save the file as UTF-8") from exc
    except json.JSONDecodeError as exc:
        raise IngestError(f"{path}: not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from exc
    if not isinstance(data, expected):
        raise IngestError(f"{path}: the document is a JSON {type(data).__name__}, expected a {expected.__name__}")
    return data


def load(path: Path) -> GraphBatch:
    """Parse the CoRA folder into a batch; see the module docstring."""
    folder = Path(path)
    if not folder.is_dir():
        raise IngestError(
            f"{SOURCE}: {folder} is not a folder; pass the folder holding {REFERENCES_FILE}, {PAPER_AUTHORS_FILE}, "
            f"{AUTHOR_NAMES_FILE} and {CLASSIFICATION_FILE}, or set CITEGRAPH_DATA (see ../shared/data/README.md)"
        )
    started = time.perf_counter()
    references = _read_json(folder / REFERENCES_FILE, list)
    paper_authors = _read_json(folder / PAPER_AUTHORS_FILE, dict)
    names = _read_json(folder / AUTHOR_NAMES_FILE, dict)
    classes = _read_json(folder / CLASSIFICATION_FILE, dict)
    rejects: list[Reject] = []
    papers: dict[int, tuple[str, bool]] = {}  # number -> (origin of first sighting, stub so far)

    def see(number: int, where: str, *, stub: bool) -> None:
        if number not in papers:
            papers[number] = (where, stub)
        elif papers[number][1] and not stub:
            papers[number] = (papers[number][0], False)

    authors, wrote, collapsed = _authors(paper_authors, names, rejects, see)
    topics, broader, implied = _topics(classes, rejects, see)
    cites, self_cites, duplicates = _citations(references, rejects, see)

    paper_table = table(
        {
            "id": [paper_id(n) for n in papers],
            "dataset": [DATASET] * len(papers),
            "stub": [stub for _, stub in papers.values()],
            ORIGIN_COLUMN: [where for where, _ in papers.values()],
        }
    )
    batch = GraphBatch(
        SOURCE,
        nodes={"Paper": paper_table, "Author": authors, "AcmClass": topics},
        rels={"CITES": cites, "WROTE": wrote, "BROADER": broader},
        rejects=rejects,
    )
    log.info(
        "%s: %d papers (%d stubs), %d CITES (%d self-citations and %d duplicates rejected), %d authors, %d WROTE "
        "(%d same-name codes on one paper collapsed), %d topics (%d implied ancestors), %d rejects (%.1fs)",
        folder.name,
        len(paper_table),
        int(paper_table["stub"].sum()),
        len(cites),
        self_cites,
        duplicates,
        len(authors),
        len(wrote),
        collapsed,
        len(topics),
        implied,
        len(rejects),
        time.perf_counter() - started,
    )
    return batch


def _authors(
    paper_authors: dict[str, Any], names: dict[str, Any], rejects: list[Reject], see: _See
) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """Author and WROTE tables, and the number of same-key codes collapsed on one paper."""
    authors: dict[str, tuple[str | None, str]] = {}  # id -> (name, origin)
    key_of: dict[str, str] = {}  # code -> author id

    def author(code: str, where: str) -> str:
        if code not in key_of:
            name = names.get(code)
            display = first_last(name) if isinstance(name, str) else None
            key = author_key(display) if display else None
            if key is None:
                key, display = f"{AUTHOR_PREFIX}{code}", None
            key_of[code] = key
            authors.setdefault(key, (" ".join(display.split()) if display else None, where))
        return key_of[code]

    for code in names:  # every named author, in file order, even one without papers
        author(code, f"{AUTHOR_NAMES_FILE}#{code}")
    wrote: dict[str, list[object]] = {k: [] for k in (SOURCE_COLUMN, TARGET_COLUMN, "position", ORIGIN_COLUMN)}
    collapsed = 0
    for raw_paper, codes in paper_authors.items():
        where = f"{PAPER_AUTHORS_FILE}#{raw_paper}"
        number = _number(raw_paper)
        if number is None:
            rejects.append(Reject("WROTE", where, f"paper {preview(raw_paper)} is not a paper number"))
            continue
        see(number, where, stub=False)
        if not isinstance(codes, list) or not all(isinstance(c, str) and c for c in codes):
            rejects.append(
                Reject("WROTE", where, f"authors {preview(codes)} are not a list of author codes; paper kept without")
            )
            continue
        on_paper: set[str] = set()
        for position, code in enumerate(codes, start=1):
            key = author(code, where)  # a code without a name is first met here
            if key in on_paper:
                collapsed += 1
                continue
            on_paper.add(key)
            for column, value in zip(wrote, (key, paper_id(number), position, where)):
                wrote[column].append(value)
    author_table = table(
        {
            "id": list(authors),
            "name": [name for name, _ in authors.values()],
            ORIGIN_COLUMN: [where for _, where in authors.values()],
        }
    )
    return author_table, table({**wrote, "position": nullable_ints(wrote["position"])}), collapsed


def _topics(classes: dict[str, Any], rejects: list[Reject], see: _See) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """AcmClass and BROADER tables of the topic paths, and the number of ancestors added."""
    paths: dict[str, str] = {}  # path -> origin
    implied = 0
    for path, members in classes.items():
        where = f"{CLASSIFICATION_FILE}#{path}"
        parts = path.split("/")
        if not all(part.strip() for part in parts):
            rejects.append(Reject("AcmClass", where, f"topic path {preview(path)} has an empty part"))
            continue
        for depth in range(1, len(parts)):  # ancestors first, so that levels come out in order
            ancestor = "/".join(parts[:depth])
            if ancestor not in paths and ancestor not in classes:
                paths[ancestor] = where
                implied += 1
        paths.setdefault(path, where)
        for member in members if isinstance(members, list) else [members]:
            number = _number(member)
            if number is None:
                rejects.append(Reject("Paper", where, f"member {preview(member)} of {path} is not a paper number"))
                continue
            see(number, where, stub=False)
    ordered = sorted(paths, key=lambda p: p.count("/"))  # by level; stable, so file order within a level
    topics = table(
        {
            "id": [topic_id(p) for p in ordered],
            "code": ordered,
            "name": [topic_name(p) for p in ordered],
            "scheme": [SCHEME] * len(ordered),
            "level": nullable_ints([p.count("/") + 1 for p in ordered]),
            ORIGIN_COLUMN: [paths[p] for p in ordered],
        }
    )
    children = [p for p in ordered if "/" in p]
    broader = table(
        {
            SOURCE_COLUMN: [topic_id(p) for p in children],
            TARGET_COLUMN: [topic_id(p.rsplit("/", 1)[0]) for p in children],
            ORIGIN_COLUMN: [paths[p] for p in children],
        }
    )
    return topics, broader, implied


def _citations(references: list[Any], rejects: list[Reject], see: _See) -> tuple[pd.DataFrame, int, int]:
    """The CITES table and the numbers of self-citations and duplicates rejected."""
    first: dict[tuple[int, int], str] = {}  # pair -> origin of its first listing
    self_cites = duplicates = 0
    for index, pair in enumerate(references):
        where = f"{REFERENCES_FILE}#{index}"
        numbers = [_number(v) for v in pair] if isinstance(pair, list) and len(pair) == 2 else [None]
        if any(n is None for n in numbers):
            rejects.append(Reject("CITES", where, f"{preview(pair)} is not a pair [citing, cited] of paper numbers"))
            continue
        citing, cited = numbers[0], numbers[1]
        assert citing is not None and cited is not None
        see(citing, where, stub=False)
        see(cited, where, stub=True)
        if citing == cited:
            self_cites += 1
            rejects.append(
                Reject("CITES", where, f"{paper_id(citing)} cites itself ({pair}); a self-citation is not a citation")
            )
            continue
        if (citing, cited) in first:
            duplicates += 1
            rejects.append(
                Reject(
                    "CITES",
                    where,
                    f"duplicate CITES {paper_id(citing)} -> {paper_id(cited)}, already at {first[(citing, cited)]}",
                )
            )
            continue
        first[(citing, cited)] = where
    cites = table(
        {
            SOURCE_COLUMN: [paper_id(s) for s, _ in first],
            TARGET_COLUMN: [paper_id(t) for _, t in first],
            "dataset": [DATASET] * len(first),
            ORIGIN_COLUMN: list(first.values()),
        }
    )
    return cites, self_cites, duplicates


__all__ = ["DATASET", "SCHEME", "SOURCE", "first_last", "load", "paper_id", "topic_id", "topic_name"]
