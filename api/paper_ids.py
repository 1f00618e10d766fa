"""Paper ids as users type them, resolved to the store's keys: the one resolver of every command and resolver.

A user types an id the way their source prints it (``0708.3686``, ``arXiv:0708.3686v2``, ``hep-ph/0604064``,
``10.1145/X``, ``W2741809807``, a bare PubMed / Semantic Scholar corpus / MAG number, an Anthology id) while the
store keys the paper by its most specific id (``arxiv:0708.3686``) and keeps the others as ``Alias`` nodes. Every
place that takes a paper id — the CLI's ``--cited`` / ``--citing`` / ``--seed-paper`` / recipe parameters, the
lines of a ``recommend --batch`` file, the GraphQL arguments (through ``GraphService.papers``) — goes through
:func:`resolve_paper_ids`, so an id that one of them finds, every one finds, and an id none finds is named in
an error (:func:`unknown_ids_message`) rather than dropped.

The candidate forms come from :func:`loaders.ids.lookup_candidates`; the store lookups (key, alias, a paper's
``doi`` / ``arxiv_id`` property) from :func:`graph.aliases.stored_keys`, in one pass for all ids given.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from graph.aliases import stored_keys
from graph.store import GraphStore
from loaders.ids import ID_PREFERENCE, lookup_candidates

# What each kind of id of loaders.ids.ID_PREFERENCE is called in a message (tests check none is missing).
KIND_NAMES = {
    "arxiv": "arXiv",
    "acl": "ACL Anthology",
    "doi": "DOI",
    "openalex": "OpenAlex",
    "s2": "Semantic Scholar",
    "s2corpus": "Semantic Scholar corpus",
    "pmid": "PubMed",
    "mag": "MAG (Microsoft Academic Graph)",
    "wos": "Web of Science",
    "scopus": "Scopus",
    "ref": "cited-reference (ref:…)",
    "own": "your own",
}


def looked_up_as() -> str:
    """The id kinds an id is looked up as, for messages: every kind a loader keys or aliases a paper by."""
    names = [KIND_NAMES[kind] for kind in ID_PREFERENCE if kind != "own"]
    return "a stored key, an alias, and as " + ", ".join(names[:-1]) + f" or {names[-1]} id"


def resolve_paper_ids(store: GraphStore, given: Iterable[str]) -> dict[str, str | None]:
    """``{id as given: stored paper key, or None where it names no stored paper}`` for every id of ``given``.

    Each id's candidate forms (:func:`loaders.ids.lookup_candidates`, most specific first) are looked up
    together; the first form the store knows wins, so ``0708.3686v2`` finds ``arxiv:0708.3686`` and a MAG
    number finds the paper whose alias ``mag:<number>`` is.
    """
    forms = {raw: lookup_candidates(raw) for raw in dict.fromkeys(given)}
    known = stored_keys(store, [form for candidates in forms.values() for form in candidates])
    return {raw: next((known[f] for f in candidates if f in known), None) for raw, candidates in forms.items()}


def shown_ids(ids: Sequence[str], limit: int = 5) -> str:
    """The first ``limit`` ids quoted, and how many more."""
    shown = ", ".join(repr(raw) for raw in ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def unknown_ids_message(where: str, unknown: Sequence[str], store: GraphStore) -> str:
    """The message for ids that name no paper of ``store``: where they came from, what was tried, what to do."""
    return (
        f"{where}: no paper in {store.describe()} has id {shown_ids(unknown)} (looked up as {looked_up_as()}); "
        "check the id against your source, and that the source that has the paper was ingested into this store"
    )


__all__ = ["KIND_NAMES", "looked_up_as", "resolve_paper_ids", "shown_ids", "unknown_ids_message"]
