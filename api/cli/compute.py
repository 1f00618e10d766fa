"""``citegraph compute STEP``: the steps that write results back into the graph, and the index beside it.

``all`` runs :data:`COMPUTE_STEPS` in order; ``linkage`` (it needs a trained linker), ``index``
(also built by the first ``recommend``) and ``mapping`` (citation bursts, betweenness and sigma, for
science-mapping analysts; it reads the CO_CITED edges of ``cocitation``) and ``thematic-map`` (keyword clusters,
Callon centrality and density: :mod:`gnn.mapping.thematic`) run only when named. Every default of the step flags is
read from the settings dataclass the flag fills (``default=CocitationSettings().min_count``), so the
two cannot drift apart.
"""

from __future__ import annotations

import argparse

from api.cli.common import index_dir, open_from_args
from api.cli.linkage import add_cross_encoder_arguments, compute_linkage_step
from gnn.cocitation.compute import CocitationSettings, compute_cocitation
from gnn.hyperbolic.compute import HyperbolicSettings, MapSettings, compute_hyperbolic
from gnn.mapping.bursts import BurstSettings
from gnn.mapping.centrality import CentralitySettings
from gnn.mapping.compute import MappingSettings, compute_mapping
from gnn.mapping.coupling import CouplingSettings, compute_coupling
from gnn.mapping.keywords import KIND_FALLBACK
from gnn.mapping.networks import NetworkFilters
from gnn.mapping.thematic import DEFAULT_TOP, compute_thematic_map
from gnn.recommend.service import ServiceSettings, open_retrieval
from gnn.taxonomy.categories import CategorySettings
from gnn.taxonomy.compute import TaxonomySettings, compute_taxonomy
from gnn.taxonomy.fusion import FusionSettings
from gnn.text.embeddings import TARGETS, EmbeddingSettings, compute_embeddings
from gnn.text.encoder import EncoderSettings, TextEncoder
from graph import GraphStore
from graph.files import StoreFiles

# in the order `compute all` runs them; hyperbolic reads the fused class vectors of taxonomy, so it stays after it
COMPUTE_STEPS = ("embeddings", "cocitation", "taxonomy", "hyperbolic")


def cmd_compute(args: argparse.Namespace) -> int:
    steps = COMPUTE_STEPS if args.step == "all" else (args.step,)
    # the index is written beside the store, never into it: opened read-only, the store's files keep the
    # stamp the index records, so the next `recommend` loads the index without reading the papers again
    with open_from_args(args, read_only=args.step == "index") as store:
        for step in steps:
            skipped = why_skipped(step, store) if args.step == "all" else None
            if skipped:  # a corpus loaded without the taxonomies (e.g. only `ingest jsonl`) gets every other step
                print(f"{step}: skipped, {skipped} (`citegraph ingest taxonomy`)")
                continue
            STEP_FUNCTIONS[step](store, args)
    return 0


def why_skipped(step: str, store: GraphStore) -> str | None:
    """Why ``compute all`` (and the server's background build) leaves ``step`` out on ``store``; None: it runs."""
    if step in ("taxonomy", "hyperbolic") and store.count_nodes("ArxivCategory") + store.count_nodes("AcmClass") == 0:
        return "the store has no ArxivCategory/AcmClass nodes"
    return None


def compute_embeddings_step(store: GraphStore, args: argparse.Namespace) -> None:
    targets = TARGETS if args.embed == "all" else (args.embed,)
    # the store's fine-tuned encoder once `train encoder --serve` put one in service, else the configured one
    encoder = TextEncoder(EncoderSettings.from_env(device=args.device, served=StoreFiles.of(store).served_encoder))
    try:
        settings = EmbeddingSettings(targets=targets, force=args.force, limit=args.limit)
        for report in compute_embeddings(store, encoder, settings, progress=not args.quiet):
            print(report.line())
    finally:
        encoder.close()


def compute_cocitation_step(store: GraphStore, args: argparse.Namespace) -> None:
    settings = CocitationSettings(
        min_count=args.min_count,
        top_m=args.top_m,
        power=args.power,
        resolution=args.resolution,
        seed=args.seed,
        cluster_top_k=args.cluster_top_k,
        cluster_min_count=args.cluster_min_count,
        device=args.device,
        label_abstracts=args.label_abstracts,
        label_keywords=args.label_keywords,
    )
    print(compute_cocitation(store, settings).summary())


def compute_coupling_step(store: GraphStore, args: argparse.Namespace) -> None:
    """``citegraph compute coupling``: Leiden clusters of the bibliographic coupling network, labelled and measured."""
    settings = CouplingSettings(
        min_count=args.coupling_min_count,
        top_k=args.coupling_top_k,
        resolution=args.resolution,
        seed=args.seed,
        label_abstracts=args.label_abstracts,
        label_keywords=args.label_keywords,
        max_share=args.coupling_max_share,
    )
    print(compute_coupling(store, settings).summary())


def compute_taxonomy_step(store: GraphStore, args: argparse.Namespace) -> None:
    settings = TaxonomySettings(
        fusion=FusionSettings(method=args.fusion, seed=args.seed, device=args.device),
        categories=CategorySettings(
            top_k=args.top_k, min_score=args.min_score, infer_from=args.infer_from, seed=args.seed
        ),
    )
    encoder = TextEncoder(EncoderSettings.from_env(device=args.device, served=StoreFiles.of(store).served_encoder))
    try:
        print(compute_taxonomy(store, encoder, settings, progress=not args.quiet).summary())
    finally:
        encoder.close()


def compute_hyperbolic_step(store: GraphStore, args: argparse.Namespace) -> None:
    settings = HyperbolicSettings(
        dim=args.dim,
        epochs=args.epochs,
        tolerance=args.tolerance,
        seed=args.seed,
        device=args.device,
        map_settings=MapSettings(epochs=args.map_epochs),
        fit_map=args.map,
    )
    files = StoreFiles()
    report = compute_hyperbolic(store, settings, map_dir=files.hyperbolic_map, classes_dir=files.hyperbolic_classes)
    print(report.summary())


def compute_mapping_step(store: GraphStore, args: argparse.Namespace) -> None:
    settings = MappingSettings(
        bursts=BurstSettings(s=args.burst_s, gamma=args.burst_gamma, min_duration=args.min_burst_duration),
        centrality=CentralitySettings(
            min_count=args.centrality_min_count, exact_up_to=args.exact_up_to, pivots=args.pivots, seed=args.seed
        ),
    )
    print(compute_mapping(store, settings).summary())


def compute_thematic_map_step(store: GraphStore, args: argparse.Namespace) -> None:
    """``citegraph compute thematic-map``: keyword clusters and their quadrants written onto every Keyword."""
    themes, written = compute_thematic_map(
        store, thematic_filters(args), args.keyword_kinds, resolution=args.resolution, seed=args.seed
    )
    print(f"{themes.summary()}\n  {written} keywords updated")


def thematic_filters(args: argparse.Namespace) -> NetworkFilters:
    """The keyword network's filters from ``--year-min/--year-max``, ``--keyword-min-count``, ``--keyword-top``."""
    return NetworkFilters(
        year_min=args.year_min,
        year_max=args.year_max,
        min_count=args.keyword_min_count,
        top=args.keyword_top,
        min_freq=args.keyword_min_freq,
    )


def add_thematic_arguments(g: argparse._ArgumentGroup) -> None:
    """The keyword co-occurrence filters of the thematic map (``compute thematic-map``, ``export thematic-map``)."""
    g.add_argument("--year-min", type=int, help="thematic map: only documents published in or after this year")
    g.add_argument("--year-max", type=int, help="thematic map: only documents published in or before this year")
    g.add_argument(
        "--keyword-min-count",
        type=int,
        default=NetworkFilters().min_count,
        help="thematic map: keep links of keywords that share at least N documents",
    )
    g.add_argument(
        "--keyword-top",
        type=int,
        default=DEFAULT_TOP,
        help=f"thematic map: the N keywords with the most documents (bibliometrix: {DEFAULT_TOP})",
    )
    g.add_argument(
        "--keyword-min-freq",
        type=int,
        default=NetworkFilters().min_freq,
        help="thematic map: only keywords of at least N documents (bibliometrix's minfreq; VOSviewer's minimum "
        "number of occurrences)",
    )
    g.add_argument(
        "--keyword-kinds",
        nargs="+",
        choices=KIND_FALLBACK,
        help="thematic map: which keywords (default: author keywords, else Keywords Plus, else index keywords, ...)",
    )


def compute_index_step(store: GraphStore, args: argparse.Namespace) -> None:
    """``citegraph compute index``: build or update the retrieval index and the citation-context
    profiles beside the store, as ``recommend`` opens them (not the reranker, not the citation lists)."""
    encoder = TextEncoder(EncoderSettings.from_env(served=StoreFiles.of(store).served_encoder))
    try:
        index, profiles, _ = open_retrieval(
            store, ServiceSettings(), encoder, index_dir=index_dir(args), progress=not args.quiet, build=True
        )
    finally:
        encoder.close()
    print(
        f"index: {len(index)} papers ({index.dense.size} vectors, "
        f"{'exact' if index.dense.exact else 'HNSW'}), BM25 k1={index.settings.bm25_k1} "
        f"b={index.settings.bm25_b}; profiles: {profiles.papers if profiles else 0} papers"
    )


STEP_FUNCTIONS = {
    "embeddings": compute_embeddings_step,
    "cocitation": compute_cocitation_step,
    "taxonomy": compute_taxonomy_step,
    "hyperbolic": compute_hyperbolic_step,
    "linkage": compute_linkage_step,
    "index": compute_index_step,
    "mapping": compute_mapping_step,
    "thematic-map": compute_thematic_map_step,
    "coupling": compute_coupling_step,
}


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``compute`` with one argument group per step."""
    p = sub.add_parser("compute", help="run compute steps that write results back into the graph")
    p.add_argument(
        "step",
        choices=["all", *COMPUTE_STEPS, "linkage", "index", "mapping", "thematic-map", "coupling"],
        help="which step (all: every step, in order; linkage runs only when named: it needs a trained linker; "
        "index: the retrieval index beside the store, also built on the first `recommend`; mapping, only when "
        "named: citation bursts, betweenness and sigma as CiteSpace computes them, after cocitation; coupling, "
        "only when named: clusters of the bibliographic coupling network, written as Paper.coupling_cluster; "
        "thematic-map, only when named: keyword co-occurrence clusters with Callon centrality and density, onto "
        "every Keyword)",
    )
    _embedding_arguments(p.add_argument_group("embeddings"))
    _cocitation_arguments(p.add_argument_group("cocitation"))
    _taxonomy_arguments(p.add_argument_group("taxonomy"))
    g = p.add_argument_group("hyperbolic")
    g.add_argument(
        "--dim", type=int, help="dimension of the Poincaré embedding (default: the store's, CITEGRAPH_POINCARE_DIM=16)"
    )
    g.add_argument(
        "--epochs",
        type=int,
        default=HyperbolicSettings().epochs,
        help="Nickel & Kiela refinement epochs after the tree init, at most: training stops earlier once the loss "
        "has stopped improving",
    )
    g.add_argument(
        "--tolerance",
        type=float,
        default=HyperbolicSettings().tolerance,
        help="stop the class layout's training once 10 epochs lower the loss by less than this fraction "
        "(0: run every --epochs epoch)",
    )
    g.add_argument(
        "--map-epochs",
        type=int,
        default=MapSettings().epochs,
        help="optimiser steps of h_θ, the map from fused class vectors into the ball",
    )
    g.add_argument(
        "--map",
        action=argparse.BooleanOptionalAction,
        default=HyperbolicSettings().fit_map,
        help="fit h_θ (nothing served reads it; --no-map writes the coordinates alone, a later --map run fits it)",
    )
    _mapping_arguments(p.add_argument_group("mapping"))
    add_thematic_arguments(p.add_argument_group("thematic-map (also --resolution and --seed of the clustering)"))
    _coupling_arguments(p.add_argument_group("coupling"))
    g = p.add_argument_group("linkage")
    g.add_argument("--model", help="linker model (default: $CITEGRAPH_CACHE/models/linker.json)")
    add_cross_encoder_arguments(g)
    p.set_defaults(func=cmd_compute)


def _embedding_arguments(g: argparse._ArgumentGroup) -> None:
    g.add_argument(
        "--embed", choices=["all", "papers", "sentences"], default="all", help="which nodes get text embeddings"
    )
    g.add_argument("--force", action="store_true", help="re-write every embedding, even where the text is unchanged")
    g.add_argument(
        "--limit",
        type=int,
        help="embed at most N new texts per kind, most-cited papers first; a later run continues (default: all)",
    )


def _cocitation_arguments(g: argparse._ArgumentGroup) -> None:
    """The cocitation group, which also holds ``--seed`` and ``--device`` (shared by every step)."""
    d = CocitationSettings()
    g.add_argument(
        "--min-count", type=int, default=d.min_count, help="smallest co-citation count kept as a CO_CITED edge"
    )
    g.add_argument("--top-m", type=int, default=d.top_m, help="co-citation partners stored per paper (cocite_partners)")
    g.add_argument(
        "--power", type=float, default=d.power, help="exponent of the noise distributions (MP-BERT4CR: 0.75)"
    )
    g.add_argument(
        "--resolution",
        type=float,
        default=d.resolution,
        help="Leiden resolution (higher: more, smaller clusters)",
    )
    g.add_argument(
        "--cluster-top-k",
        type=int,
        default=d.cluster_top_k,
        help=f"cluster graph: each paper's K strongest co-citation links (0: every pair; default {d.cluster_top_k})",
    )
    g.add_argument(
        "--cluster-min-count",
        type=int,
        default=d.cluster_min_count,
        help="cluster graph: only pairs co-cited at least N times",
    )
    g.add_argument(
        "--seed",
        type=int,
        default=d.seed,
        help="seed of the clustering, the taxonomy fusion and the hyperbolic embedding",
    )
    g.add_argument("--device", choices=["cpu", "cuda"], help="torch device (default: cuda when present, else cpu)")
    g.add_argument(
        "--label-abstracts",
        action=argparse.BooleanOptionalAction,
        default=d.label_abstracts,
        help="cluster labels (cocitation, coupling): the abstracts of the labelling papers add terms, not just titles",
    )
    g.add_argument(
        "--label-keywords",
        action=argparse.BooleanOptionalAction,
        default=d.label_keywords,
        help="cluster labels (cocitation, coupling): the labelling papers' keywords (HAS_KEYWORD) add whole terms",
    )


def _mapping_arguments(g: argparse._ArgumentGroup) -> None:
    """CiteSpace's burst parameters and the betweenness settings (``--seed`` seeds the sampled pivots)."""
    bursts, centrality = BurstSettings(), CentralitySettings()
    g.add_argument(
        "--burst-s", type=float, default=bursts.s, help="burst rate ratio s of Kleinberg's automaton (CiteSpace: 2)"
    )
    g.add_argument(
        "--burst-gamma",
        type=float,
        default=bursts.gamma,
        help="burst cost γ: higher gives fewer, longer bursts (CiteSpace: 1)",
    )
    g.add_argument(
        "--min-burst-duration",
        type=int,
        default=bursts.min_duration,
        help="shortest burst reported, in years (CiteSpace: 2)",
    )
    g.add_argument(
        "--centrality-min-count",
        type=int,
        default=centrality.min_count,
        help="betweenness: only co-citation links co-cited at least N times",
    )
    g.add_argument(
        "--exact-up-to",
        type=int,
        default=centrality.exact_up_to,
        help=f"betweenness: exact up to N works, sampled pivots above (default {centrality.exact_up_to})",
    )
    g.add_argument(
        "--pivots",
        type=int,
        default=centrality.pivots,
        help="betweenness: sampled source works above --exact-up-to",
    )


def _coupling_arguments(g: argparse._ArgumentGroup) -> None:
    """The coupling clusters' graph (``--resolution`` and ``--seed`` are the cocitation group's)."""
    d = CouplingSettings()
    g.add_argument(
        "--coupling-min-count",
        type=int,
        default=d.min_count,
        help="coupling: documents sharing at least N references are linked",
    )
    g.add_argument(
        "--coupling-top-k",
        type=int,
        default=d.top_k,
        help="coupling: each document keeps its N most strongly coupled documents (0: every link)",
    )
    g.add_argument(
        "--coupling-max-share",
        type=float,
        default=d.max_share,
        metavar="S",
        help="coupling: references cited by more than this share of the documents (0 < S <= 1) are cut before "
        "counting; default: exact while the count fits, else the most cited references cut until it does",
    )


def _taxonomy_arguments(g: argparse._ArgumentGroup) -> None:
    categories, fusion = CategorySettings(), FusionSettings().method
    g.add_argument(
        "--fusion",
        choices=["vector", "gat", "appnp"],
        default=fusion,
        help=f"taxonomy fusion: SymTax's vector mean, or a GAT / APPNP trained by link prediction (default: {fusion})",
    )
    g.add_argument(
        "--top-k",
        type=int,
        default=categories.top_k,
        help="categories inferred per paper without given ones, at most",
    )
    g.add_argument(
        "--min-score", type=float, help="fixed cosine threshold for inferred categories (default: tuned on unarXive)"
    )
    g.add_argument(
        "--infer-from",
        choices=["auto", "fused", "text"],
        default=categories.infer_from,
        help="class vectors that inferred categories compare papers with (auto: better P@1 on tuning papers)",
    )


__all__ = ["COMPUTE_STEPS", "add_commands", "cmd_compute", "compute_index_step"]
