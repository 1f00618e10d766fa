"""A paper's display label: how every export, recipe, GraphQL type and the dashboard names a paper.

A cited work known only from reference lists is a stub whose key (``ref:goosf1947annphysberlin``,
``doi:10.1002/andp.19474360704``) means nothing to a reader; analysts read it as bibliometric tools
print it ("Goos F, 1947, Ann Phys-Berlin 1:333"). The label of a paper is the first of

1. its stored ``label`` (``Paper.label``, built by the loaders from a cited reference's parsed fields:
   first author surname + initials, year, source, volume and first page),
2. its ``title``,
3. its ``reference`` string as the citing paper printed it (a stub's authors, year, source),
4. its source built from the node: ``venue`` with ``volume`` and ``first_page`` ("Ann Phys 1:333"),
5. its first author as surname + initials, with its year ("Ferrari D, 1994": a CoRA paper known by its
   authors only),
6. its id,

where an empty string counts as absent. The raw strings (title, reference, id) stay fields of their own.

The same rule is written once in Cypher for the recipes of ``cypher/explore/`` (and the statements
the API reads papers with), as a ``label`` column::

    coalesce(CASE WHEN p.label <> '' THEN p.label END, CASE WHEN p.title <> '' THEN p.title END,
             CASE WHEN p.reference <> '' THEN p.reference END,
             CASE WHEN p.venue <> '' THEN p.venue + CASE WHEN p.volume <> '' THEN ' ' + p.volume ELSE '' END
                                          + CASE WHEN p.first_page <> '' THEN ':' + p.first_page ELSE '' END
             END, p.id)

(no year in step 4: neither engine has a string conversion both accept; the year is a column beside it).
``tests/graph/test_labels.py`` checks that this expression and :func:`paper_label` agree. Step 5 needs the
WROTE edges, which a label expression cannot reach cheaply: the recipes' expression stops at the id, and the
readers in Python (the API's paper loader, the exports, the recipes run by ``citegraph cypher --recipe`` and the
GraphQL ``explore`` field: :func:`complete_result_labels`) look the first author up for exactly those papers
(``first_authors``) and finish the rule with :func:`paper_label`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

LABEL_FIELDS = ("label", "title", "reference", "venue", "volume", "first_page")  # what paper_label reads


def _text(value: Any) -> str | None:
    """``value`` if it is a non-empty string, else None (NaN, None and '' are all absent)."""
    return value if isinstance(value, str) and value != "" else None


def source_label(venue: str | None, volume: str | None = None, first_page: str | None = None) -> str | None:
    """A source as cited-reference lists print it: ``venue volume:first_page`` ("Ann Phys 1:333"); None without a venue."""
    name = _text(venue)
    if name is None:
        return None
    vol, page = _text(volume), _text(first_page)
    return name + (f" {vol}" if vol else "") + (f":{page}" if page else "")


def author_label(name: str | None) -> str | None:
    """An author as reference lists print one: surname and initials ("D. Ferrari" and "Ferrari, Domenico" ->
    "Ferrari D"); None without a name."""
    text = _text(name)
    if text is None or not text.strip():
        return None
    if "," in text:
        surname, given = (part.strip() for part in text.split(",", 1))
    else:
        *first, surname = text.split()
        given = " ".join(first)
    initials = "".join(word[0].upper() for word in re.split(r"[\s.\-]+", given) if word)
    return f"{surname} {initials}".strip() if surname else None


def paper_label(
    paper_id: str,
    *,
    label: str | None = None,
    title: str | None = None,
    reference: str | None = None,
    venue: str | None = None,
    volume: str | None = None,
    first_page: str | None = None,
    first_author: str | None = None,
    year: int | None = None,
) -> str:
    """The display label of a paper (the rule in the module docstring): never empty, the id at worst."""
    by_author = author_label(first_author)
    if by_author is not None and isinstance(year, int) and not isinstance(year, bool):
        by_author = f"{by_author}, {year}"
    return (
        _text(label)
        or _text(title)
        or _text(reference)
        or source_label(venue, volume, first_page)
        or by_author
        or (paper_id if isinstance(paper_id, str) else str(paper_id))
    )


def label_of(row: Mapping[str, Any], id_key: str = "id") -> str:
    """:func:`paper_label` of a row (a dict or a pandas row) holding ``id`` and any of :data:`LABEL_FIELDS`."""
    return paper_label(str(row[id_key]), **{name: row.get(name) for name in LABEL_FIELDS})


def complete_labels(
    rows: list[dict[str, Any]], query: Callable[[str, dict[str, Any]], list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """``rows`` of ``paper_by_ids`` or ``cocitation_nodes`` with step 5 of the rule applied: a row whose ``label``
    fell back to its id gets its first author and year ("Ferrari D, 1994") when it has an author.

    ``query(name, params)`` runs a named statement (the store's, or a service's counting wrapper); it is called
    once, and only when some row needs it.
    """
    bare = [row["id"] for row in rows if row.get("label") in (None, row["id"])]
    if not bare:
        return rows
    first: dict[str, str] = {}
    for found in query("first_authors", {"ids": bare}):  # ordered by paper, then position
        first.setdefault(found["paper_id"], found["name"])
    for row in rows:
        if row["id"] in first and row.get("label") in (None, row["id"]):
            year = row.get("year")
            row["label"] = paper_label(row["id"], first_author=first[row["id"]], year=int(year) if year else None)
    return rows


# The label columns of the recipes (cypher/explore/) and the id column each labels; "labels" is a list beside "path".
RESULT_LABELS = (("label", "id"), ("source_label", "source"), ("target_label", "target"), ("labels", "path"))


def complete_result_labels(
    rows: list[dict[str, Any]], query: Callable[[str, dict[str, Any]], list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """Rows of a recipe (any of the columns of :data:`RESULT_LABELS`) with step 5 of the rule applied: a label that
    fell back to its paper's id becomes the first author and year ("Ferrari D, 1994") when the paper has an author.

    The recipes' label expression stops at the id (it cannot reach the WROTE edges cheaply); this looks the first
    authors (``first_authors``) and years (``paper_match_facts``) up once, for exactly those papers.
    """
    bare: set[str] = set()
    for row in rows:
        for label_column, id_column in RESULT_LABELS:
            if label_column not in row or id_column not in row:
                continue
            labels, ids = row[label_column], row[id_column]
            if isinstance(labels, list) and isinstance(ids, list):
                bare.update(i for i, lab in zip(ids, labels) if isinstance(i, str) and lab == i)
            elif isinstance(ids, str) and labels in (None, ids):
                bare.add(ids)
    if not bare:
        return rows
    wanted = sorted(bare)
    first: dict[str, str] = {}
    for found in query("first_authors", {"ids": wanted}):  # ordered by paper, then position
        first.setdefault(found["paper_id"], found["name"])
    if not first:
        return rows
    years = {str(r["id"]): r["year"] for r in query("paper_match_facts", {"ids": sorted(first)})}

    def label(paper_id: str) -> str:
        year = years.get(paper_id)
        return paper_label(paper_id, first_author=first[paper_id], year=int(year) if isinstance(year, int) else None)

    for row in rows:
        for label_column, id_column in RESULT_LABELS:
            if label_column not in row or id_column not in row:
                continue
            labels, ids = row[label_column], row[id_column]
            if isinstance(labels, list) and isinstance(ids, list):
                row[label_column] = [label(i) if i in first and lab == i else lab for i, lab in zip(ids, labels)]
            elif isinstance(ids, str) and ids in first and labels in (None, ids):
                row[label_column] = label(ids)
    return rows


def short_label(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis, for a node in a drawing."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


__all__ = [
    "LABEL_FIELDS",
    "RESULT_LABELS",
    "author_label",
    "complete_labels",
    "complete_result_labels",
    "label_of",
    "paper_label",
    "short_label",
    "source_label",
]
