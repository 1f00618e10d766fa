"""Network views for dashboards: ego networks, co-citation lists, co-citation clusters."""

from __future__ import annotations

import asyncio
from enum import Enum
from typing import Annotated, Any

import strawberry
from strawberry.types import Info

from api.context import Context
from api.errors import UserInputError
from api.network import EgoGraph, ego_network
from api.services import CoCitation
from api.types.common import (
    Connection,
    NotFound,
    connection,
    cursor_scope,
    page_bounds,
    paper_key,
    paper_not_found,
    shown_id,
    wants,
)
from api.types.papers import (
    CoCitationMeasure,
    Paper,
    YearCount,
    check_min_count,
    check_years,
    in_years,
    paper_from,
    year_counts,
)
from gnn.mapping.timeline import ClusterTimeline as TimelineRecord
from graph.labels import short_label

LABEL_CHARS = 60  # a node label is the paper's display label cut to this many characters
DEFAULT_EGO_LIMIT = 50


@strawberry.enum(description="Which citations an ego network follows from each paper.")
class Direction(Enum):
    OUT = "out"  # references: papers it cites
    IN = "in"  # papers citing it
    BOTH = "both"


@strawberry.enum
class EdgeKind(Enum):
    CITES = "CITES"  # source cites target
    CO_CITED = "CO_CITED"  # cited together (undirected; stored once per pair)


@strawberry.type(description="A paper in a network view, with what a graph drawing needs.")
class NetworkNode:
    id: strawberry.ID
    label: str = strawberry.field(
        description=f"The paper's display label (`Paper.label`) cut to {LABEL_CHARS} characters."
    )
    title: str | None
    year: int | None
    n_cited: int | None
    cluster: int | None = strawberry.field(description="Co-citation cluster (Paper.cocite_cluster); null if none.")
    cluster_label: str | None = strawberry.field(description="The cluster's label terms.")
    hops: int = strawberry.field(description="Citation hops from the seed; 0 for the seed.")


@strawberry.type
class NetworkEdge:
    source: strawberry.ID
    target: strawberry.ID
    kind: EdgeKind
    weight: float = strawberry.field(
        description="CITES: citing contexts (1 when unknown); CO_CITED: co-citation count."
    )
    association: float | None = strawberry.field(description="CO_CITED only: association strength (1 = chance).")


@strawberry.type(description="A paper's citation neighbourhood, ready to draw.")
class EgoNetwork:
    seed: strawberry.ID
    nodes: list[NetworkNode] = strawberry.field(description="The seed first, then by hop and rank.")
    edges: list[NetworkEdge] = strawberry.field(description="Every citation (and co-citation) among the nodes.")
    truncated: bool = strawberry.field(description="`limit` left out papers the walk reached.")
    reached: int = strawberry.field(description="Papers the walk reached besides the seed, kept or not.")


@strawberry.type(description="Two co-cited papers with every stored strength.")
class CoCitationPair:
    source: Paper
    target: Paper
    count: int = strawberry.field(description="Papers citing both (of the asked years, where years were given).")
    sentence_count: int | None
    association: float | None
    cosine: float | None
    jaccard: float | None
    inclusion: float | None

    @strawberry.field(description='The pair as it reads: the two papers\' labels (`Paper.label`) joined by " + ".')
    def label(self) -> str:
        return f"{self.source.label} + {self.target.label}"

    @strawberry.field(
        description="The documents behind the pair: the papers citing both, newest first (all years; "
        "`countsByYear` splits them)."
    )
    async def cited_by(self, info: Info[Context, Any], first: int = 20, after: str | None = None) -> Connection[Paper]:
        pair = _pair_key(self)
        page = page_bounds(info, first, after, cursor_scope("CoCitationPair.citedBy", pair=pair))
        citers = await info.context.pair_citers.load(pair)
        records = await info.context.papers.load_many(
            [paper for paper, _ in citers[page.start : page.start + page.size]]
        )
        nodes = [paper_from(r) for r in records if r is not None]
        return connection(nodes, page=page, has_next=page.start + page.size < len(citers), total=len(citers))

    @strawberry.field(
        description="Papers citing both, per year of the citing paper, oldest first (at most the latest `first` "
        "years; papers without a year last)."
    )
    async def counts_by_year(self, info: Info[Context, Any], first: int = 50) -> list[YearCount]:
        citers = await info.context.pair_citers.load(_pair_key(self))
        return year_counts([year for _, year in citers], info.context.cap(first))


def _pair_key(pair: CoCitationPair) -> tuple[str, str]:
    a, b = str(pair.source.id), str(pair.target.id)
    return (a, b) if a < b else (b, a)


@strawberry.type
class CoCitationList:
    measure: CoCitationMeasure
    pairs: list[CoCitationPair] = strawberry.field(description="Strongest first by `measure`.")


@strawberry.enum(description="How a cluster's label terms are ranked (gnn/cocitation/terms.py).")
class LabelMethod(Enum):
    LLR = "llr"  # log-likelihood ratio of the citing papers' terms (Dunning 1993; CiteSpace's default)
    CTFIDF = "ctfidf"  # class-based TF-IDF of the same terms (Grootendorst 2022)


@strawberry.type(description="Citations a cluster's members receive from papers of one year.")
class YearCitations:
    year: int
    citations: int


@strawberry.type(description="One co-citation cluster's citations per year (CiteSpace's timeline view).")
class ClusterTimeline:
    cluster: int = strawberry.field(description="The cluster's number (Cluster.id).")
    label: str
    years: list[YearCitations] = strawberry.field(description="Oldest first; years without a citation left out.")


@strawberry.type(description="How well the co-citation clusters are separated (Leiden's graph: pruned links).")
class ClusterQuality:
    modularity: float = strawberry.field(description="Modularity Q of the partition, on the co-citation counts.")
    silhouette: float | None = strawberry.field(
        description="Mean silhouette over every clustered work, distance 1 - cosine strength; null with one cluster."
    )
    nodes: int = strawberry.field(description="Works clustered.")
    links: int = strawberry.field(description="Links of the clustered graph.")


@strawberry.type(description="A community of the co-citation network (Leiden; labels by log-likelihood ratio).")
class Cluster:
    id: int = strawberry.field(description="The number in Paper.cocite_cluster; 0 is the largest cluster.")
    label: str = strawberry.field(
        description="The top terms of the papers citing its members by log-likelihood ratio, as CiteSpace labels; "
        "else its members' title terms; for a cluster of title-less cited references, terms from the titles of the "
        "papers citing it, else its most cited members' labels (never the number alone)."
    )
    terms: list[str]
    label_from: str = strawberry.field(
        description="Where the terms come from: `titles` (the members'), `citing titles` (the papers citing "
        "the members), or empty (no terms: `label` names members)."
    )
    size: int = strawberry.field(description="Papers in the cluster.")
    silhouette: float | None = strawberry.field(
        default=None,
        description="Mean silhouette of the members (co-citation cosine; -1..1, CiteSpace trusts a cluster above "
        "0.7); null before `compute cocitation` wrote it.",
    )
    modularity: float | None = strawberry.field(
        default=None, description="The cluster's term of the partition's modularity Q (the terms sum to Q)."
    )
    paper_ids: strawberry.Private[tuple[str, ...]] = ()
    llr_terms: strawberry.Private[tuple[str, ...]] = ()
    ctfidf_terms: strawberry.Private[tuple[str, ...]] = ()

    @strawberry.field(
        description="The terms of the papers citing the members (titles, abstracts; 1-3-grams), best first, ranked by "
        "`method`."
    )
    def labels(self, method: LabelMethod = LabelMethod.LLR) -> list[str]:
        return list(self.llr_terms if method is LabelMethod.LLR else self.ctfidf_terms)

    @strawberry.field(
        description="Citations the members receive per year of the citing papers (`yearMin`/`yearMax`: only those "
        "years), oldest first."
    )
    async def timeline(
        self, info: Info[Context, Any], year_min: int | None = None, year_max: int | None = None
    ) -> list[YearCitations]:
        check_years(year_min, year_max)
        timelines = await _timelines(info.context, year_min, year_max)
        return timelines[self.id].years if self.id in timelines else []

    @strawberry.field(description="The cluster's most cited papers, most cited first.")
    async def top_papers(self, info: Info[Context, Any]) -> list[Paper]:
        records = await info.context.papers.load_many(list(self.paper_ids))
        return [paper_from(r) for r in records if r is not None]


async def _timelines(ctx: Context, year_min: int | None, year_max: int | None) -> dict[int, ClusterTimeline]:
    """Every cluster's timeline for the window, computed once per request (one read of the citations)."""
    key = f"cluster_timeline:{year_min}:{year_max}"
    task = ctx.memo.get(key)
    if task is None:
        task = asyncio.ensure_future(
            ctx.call(ctx.service.cluster_timeline, first=2**31, year_min=year_min, year_max=year_max)
        )
        ctx.memo[key] = task
    return {t.cluster: _timeline_type(t) for t in await task}


def _timeline_type(timeline: TimelineRecord) -> ClusterTimeline:
    years = [YearCitations(year=y, citations=n) for y, n in timeline.years]
    return ClusterTimeline(cluster=timeline.cluster, label=timeline.label, years=years)


EgoNetworkResult = Annotated[EgoNetwork | NotFound, strawberry.union("EgoNetworkResult")]
CoCitationsResult = Annotated[CoCitationList | NotFound, strawberry.union("CoCitationsResult")]
CoCitationPairResult = Annotated[CoCitationPair | NotFound, strawberry.union("CoCitationPairResult")]


def _ego_network_type(graph: EgoGraph, labels: dict[int, str]) -> EgoNetwork:
    nodes = [
        NetworkNode(
            id=strawberry.ID(n.node.id),
            label=short_label(n.node.label, LABEL_CHARS),
            title=n.node.title,
            year=n.node.year,
            n_cited=n.node.n_cited,
            cluster=n.node.cluster,
            cluster_label=labels.get(n.node.cluster) if n.node.cluster is not None else None,
            hops=n.hops,
        )
        for n in graph.nodes
    ]
    edges = [
        NetworkEdge(
            source=strawberry.ID(e.source),
            target=strawberry.ID(e.target),
            kind=EdgeKind(e.kind),
            weight=e.weight,
            association=e.association,
        )
        for e in graph.edges
    ]
    return EgoNetwork(
        seed=strawberry.ID(graph.seed), nodes=nodes, edges=edges, truncated=graph.truncated, reached=graph.reached
    )


async def _pair_types(ctx: Context, pairs: list[tuple[str, CoCitation]]) -> list[CoCitationPair]:
    """The GraphQL pairs of (source id, co-citation) rows, their papers loaded in one batch."""
    records = await ctx.papers.load_many(sorted({i for s, c in pairs for i in (s, c.other_id)}))
    by_id = {r.id: r for r in records if r is not None}
    return [
        CoCitationPair(
            source=paper_from(by_id[s]),
            target=paper_from(by_id[c.other_id]),
            count=c.count,
            sentence_count=c.sentence_count,
            association=c.association,
            cosine=c.cosine,
            jaccard=c.jaccard,
            inclusion=c.inclusion,
        )
        for s, c in pairs
        if s in by_id and c.other_id in by_id
    ]


def _rank(partners: list[CoCitation], measure: CoCitationMeasure, min_count: int) -> list[CoCitation]:
    kept = [c for c in partners if c.count >= min_count]
    return sorted(kept, key=lambda c: (-(getattr(c, measure.value) or 0), -c.count, c.other_id))


@strawberry.type
class NetworkQuery:
    @strawberry.field(
        description="A paper's citation neighbourhood (nodes and edges for a graph drawing); "
        "NotFound when no paper has that id."
    )
    async def ego_network(
        self,
        info: Info[Context, Any],
        paper_id: strawberry.ID,
        depth: int = 1,
        direction: Direction = Direction.BOTH,
        limit: int = DEFAULT_EGO_LIMIT,
        include_co_citation: bool = False,
    ) -> EgoNetworkResult:
        ctx = info.context
        if depth not in (1, 2):
            raise UserInputError(f"`depth` must be 1 or 2, got {depth}")
        size = ctx.cap(limit, "limit")
        key = await paper_key(ctx, str(paper_id))
        if key is None:
            return paper_not_found(str(paper_id))
        graph = await ctx.call(
            ego_network,
            ctx.service,
            key,
            depth=depth,
            direction=direction.value,
            limit=size,
            include_cocitation=include_co_citation,
        )
        if graph is None:
            return paper_not_found(str(paper_id))
        labels = {c.cluster: c.label for c in await ctx.call(ctx.service.cluster_labels)}
        return _ego_network_type(graph, labels)

    @strawberry.field(
        description="Co-cited pairs of one paper (`paperId`), inside one co-citation cluster (`clusterId`) or, "
        "with neither, of the whole store, strongest first by `measure`, with at least `minCount` co-citing "
        "papers. `yearMin`/`yearMax` count only citing papers of those years (`count` is theirs, strengths stay "
        "all-years; not with `clusterId`). `coCitationPairs` pages through the store's pairs."
    )
    async def co_citations(
        self,
        info: Info[Context, Any],
        paper_id: strawberry.ID | None = None,
        cluster_id: int | None = None,
        measure: CoCitationMeasure = CoCitationMeasure.ASSOCIATION,
        min_count: int = 1,
        first: int = 20,
        year_min: int | None = None,
        year_max: int | None = None,
    ) -> CoCitationsResult:
        ctx = info.context
        if paper_id is not None and cluster_id is not None:
            raise UserInputError("give at most one of `paperId` and `clusterId` (neither: the whole store)")
        check_min_count(min_count)
        check_years(year_min, year_max)
        years = year_min is not None or year_max is not None
        if years and cluster_id is not None:
            raise UserInputError("`yearMin`/`yearMax` work with `paperId` or the whole store, not with `clusterId`")
        limit = ctx.cap(first)
        if paper_id is not None:
            key = await paper_key(ctx, str(paper_id))
            if key is None:
                return paper_not_found(str(paper_id))
            partners = await ctx.cocited.load(key)
            if years:
                partners = await in_years(ctx, key, partners, year_min, year_max)
            ranked = _rank(partners, measure, min_count)[:limit]
            pairs = [(key, c) for c in ranked]
        elif cluster_id is None:
            found = await ctx.call(
                ctx.service.top_cocitations,
                measure=measure.value,
                min_count=min_count,
                year_min=year_min,
                year_max=year_max,
                skip=0,
                limit=limit,
            )
            pairs = [(p.source_id, p.cocitation) for p in found]
        else:
            clusters = {c.cluster for c in await ctx.call(ctx.service.cluster_labels)}
            if cluster_id not in clusters:
                return NotFound(
                    kind="Cluster",
                    id=str(cluster_id),
                    message=f"no co-citation cluster {cluster_id}; `clusters` lists them (after compute cocitation)",
                )
            found = await ctx.call(
                ctx.service.cluster_pairs, cluster_id, measure=measure.value, min_count=min_count, limit=limit
            )
            pairs = [(p.source_id, p.cocitation) for p in found]
        return CoCitationList(measure=measure, pairs=await _pair_types(ctx, pairs))

    @strawberry.field(
        description="The co-cited pairs of the whole store, strongest first by `measure` (ties: count, then ids), "
        "co-cited by at least `minCount` papers; with `yearMin`/`yearMax` only citing papers of those years count "
        "(`count` is theirs; the other measures rank by the stored all-years strengths). A page of a stable order: "
        "pass `endCursor` as `after` for the next."
    )
    async def co_citation_pairs(
        self,
        info: Info[Context, Any],
        measure: CoCitationMeasure = CoCitationMeasure.ASSOCIATION,
        min_count: int = 1,
        year_min: int | None = None,
        year_max: int | None = None,
        first: int = 20,
        after: str | None = None,
    ) -> Connection[CoCitationPair]:
        ctx = info.context
        check_min_count(min_count)
        check_years(year_min, year_max)
        scope = cursor_scope(
            "Query.coCitationPairs", measure=measure.value, min_count=min_count, year_min=year_min, year_max=year_max
        )
        page = page_bounds(info, first, after, scope)
        start, size = page.start, page.size
        found = await ctx.call(
            ctx.service.top_cocitations,
            measure=measure.value,
            min_count=min_count,
            year_min=year_min,
            year_max=year_max,
            skip=start,
            limit=size + 1,  # one more than asked: whether a next page exists
        )
        total = None
        if wants(info, "totalCount"):
            total = await ctx.call(
                ctx.service.count_cocitations, min_count=min_count, year_min=year_min, year_max=year_max
            )
        nodes = await _pair_types(ctx, [(p.source_id, p.cocitation) for p in found[:size]])
        return connection(nodes, page=page, has_next=len(found) > size, total=total)

    @strawberry.field(
        description="One co-cited pair by its two papers (any ids a source gave them, in either order): what a map "
        "shows when an edge is clicked (strengths, `countsByYear`, the documents behind it in `citedBy`). NotFound "
        "when either paper is unknown or no stored co-citation joins them."
    )
    async def co_citation_pair(
        self, info: Info[Context, Any], source: strawberry.ID, target: strawberry.ID
    ) -> CoCitationPairResult:
        ctx = info.context
        keys = []
        for given in (str(source), str(target)):
            key = await paper_key(ctx, given)
            if key is None:
                return paper_not_found(given)
            keys.append(key)
        partner = next((c for c in await ctx.cocited.load(keys[0]) if c.other_id == keys[1]), None)
        if partner is None:
            a, b = shown_id(str(source)), shown_id(str(target))
            return NotFound(
                kind="CoCitationPair",
                id=f"{a} + {b}",
                message=f"papers {a!r} and {b!r} are not co-cited in the store; `coCited` on either paper lists its partners "
                "(after compute cocitation)",
            )
        return (await _pair_types(ctx, [(keys[0], partner)]))[0]

    @strawberry.field(description="Co-citation clusters, largest first (empty before `compute cocitation`).")
    async def clusters(self, info: Info[Context, Any], first: int = 20) -> list[Cluster]:
        ctx = info.context
        labels = await ctx.call(ctx.service.cluster_labels)
        return [
            Cluster(
                id=c.cluster,
                label=c.label,
                terms=list(c.terms),
                label_from=c.terms_from,
                size=c.size,
                silhouette=c.silhouette,
                modularity=c.modularity,
                paper_ids=c.papers,
                llr_terms=c.llr_terms,
                ctfidf_terms=c.ctfidf_terms,
            )
            for c in labels[: ctx.cap(first)]
        ]

    @strawberry.field(
        description="Modularity and mean silhouette of the co-citation clusters; null before `compute cocitation`."
    )
    async def cluster_quality(self, info: Info[Context, Any]) -> ClusterQuality | None:
        quality = await info.context.call(info.context.service.cluster_quality)
        if quality is None:
            return None
        return ClusterQuality(
            modularity=quality.modularity, silhouette=quality.silhouette, nodes=quality.nodes, links=quality.links
        )

    @strawberry.field(
        description="CiteSpace's timeline: the `first` largest co-citation clusters' citations per year of the "
        "citing papers (`yearMin`/`yearMax`: only those years); empty before `compute cocitation`."
    )
    async def cluster_timeline(
        self, info: Info[Context, Any], first: int = 20, year_min: int | None = None, year_max: int | None = None
    ) -> list[ClusterTimeline]:
        ctx = info.context
        check_years(year_min, year_max)
        found = await ctx.call(ctx.service.cluster_timeline, first=ctx.cap(first), year_min=year_min, year_max=year_max)
        return [_timeline_type(t) for t in found]


__all__ = [
    "Cluster",
    "ClusterQuality",
    "ClusterTimeline",
    "CoCitationList",
    "CoCitationPair",
    "CoCitationPairResult",
    "CoCitationsResult",
    "Direction",
    "EdgeKind",
    "EgoNetwork",
    "EgoNetworkResult",
    "LabelMethod",
    "NetworkEdge",
    "NetworkNode",
    "NetworkQuery",
    "YearCitations",
]
