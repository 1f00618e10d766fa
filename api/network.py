"""Ego networks: a paper's citation neighbourhood, cut to a size a dashboard can draw.

Breadth-first over CITES from the seed, ``depth`` hops (1 or 2), following references (``out``),
citing papers (``in``) or both. Which neighbours are kept when there are more than ``limit``:

* hop 1: references most cited first and citing papers newest first (the order of the
  ``cited_papers`` / ``citing_papers`` statements); with ``both`` the two lists alternate;
* hop 2: papers linked to more hop-1 papers first, then in the order they were reached.

The edges are every citation among the kept papers (the induced subgraph), plus, on request,
every co-citation among them (CO_CITED, after ``compute cocitation``). ``truncated`` says that
``limit`` left out at least one paper the walk reached. Cost: one store round trip per hop and
direction, one for the nodes' attributes, one per edge kind — independent of the network's size.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import chain, zip_longest

from api.services import GraphService, NetworkNode

DIRECTIONS = ("out", "in", "both")
UNBOUNDED = 2**63 - 1  # neighbours per paper: all of them (the walk ranks and cuts afterwards)


@dataclass(frozen=True)
class EgoNode:
    node: NetworkNode
    hops: int  # 0 for the seed


@dataclass(frozen=True)
class EgoEdge:
    source: str
    target: str
    kind: str  # "CITES" (source cites target) or "CO_CITED" (stored once per pair)
    weight: float  # CITES: citing contexts (n_contexts, 1 when unknown); CO_CITED: co-citation count
    association: float | None = None  # CO_CITED only: association strength (1 = chance)


@dataclass(frozen=True)
class EgoGraph:
    seed: str
    nodes: list[EgoNode]  # the seed first, then by hop and rank
    edges: list[EgoEdge]
    truncated: bool  # `limit` left out papers the walk reached
    reached: int  # papers the walk reached (kept or not), the seed excluded


def ego_network(
    service: GraphService, paper_id: str, *, depth: int, direction: str, limit: int, include_cocitation: bool
) -> EgoGraph | None:
    """The ego network of ``paper_id``; ``None`` when no paper has that id.

    Args:
        depth: hops from the seed, 1 or 2.
        direction: ``out`` (references), ``in`` (citing papers) or ``both``.
        limit: most papers besides the seed.
        include_cocitation: add CO_CITED edges among the kept papers.
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    seed = service.network_nodes([paper_id])[0]
    if seed is None:
        return None
    hops_of = {paper_id: 0}
    frontier = [paper_id]
    reached: set[str] = set()
    truncated = False
    for hop in range(1, depth + 1):
        if not frontier:
            break
        candidates = _rank(_neighbours(service, frontier, direction), exclude=hops_of)
        reached.update(candidates)
        room = limit - (len(hops_of) - 1)
        if len(candidates) > room:
            truncated = True
            candidates = candidates[: max(room, 0)]
        for candidate in candidates:
            hops_of[candidate] = hop
        frontier = candidates

    kept = list(hops_of)
    attributes = {n.id: n for n in service.network_nodes(kept) if n is not None}
    nodes = [EgoNode(attributes[i], hops_of[i]) for i in kept if i in attributes]
    edges = [EgoEdge(s, t, "CITES", float(n or 1)) for s, t, n in service.citations_among(kept)]
    if include_cocitation:
        edges += [EgoEdge(s, t, "CO_CITED", float(c), a) for s, t, c, a in service.cocitations_among(kept)]
    return EgoGraph(paper_id, nodes, edges, truncated, len(reached))


def _neighbours(service: GraphService, frontier: list[str], direction: str) -> list[list[str]]:
    """Per frontier paper, its neighbours in rank order (alternating references and citers for ``both``)."""
    if direction != "both":
        return service.neighbours(frontier, direction=direction, limit=UNBOUNDED)
    cited = service.neighbours(frontier, direction="out", limit=UNBOUNDED)
    citing = service.neighbours(frontier, direction="in", limit=UNBOUNDED)
    return [[i for i in chain.from_iterable(zip_longest(out, inc)) if i is not None] for out, inc in zip(cited, citing)]


def _rank(per_paper: list[list[str]], *, exclude: dict[str, int]) -> list[str]:
    """New papers ordered by how many frontier papers link to them, then by first appearance.

    Appearance order interleaves the frontier papers' ranked lists (first neighbour of each, then
    the second of each, ...), so no single frontier paper crowds the others out.
    """
    links: Counter[str] = Counter()
    first_seen: dict[str, int] = {}
    for position, paper in enumerate(chain.from_iterable(zip_longest(*per_paper))):
        if paper is None or paper in exclude:
            continue
        links[paper] += 1
        first_seen.setdefault(paper, position)
    return sorted(first_seen, key=lambda p: (-links[p], first_seen[p]))


__all__ = ["DIRECTIONS", "EgoEdge", "EgoGraph", "EgoNode", "ego_network"]
