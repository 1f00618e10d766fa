"""``citegraph compute STEP``: the steps that write results back into the graph, and the index beside it.

``all`` runs :data:`COMPUTE_STEPS` in order; ``linkage`` (it needs a trained linker), ``index``
(also built by the first ``recommend``) and ``mapping`` (citation bursts, betweenness and sigma, for
science-mapping analysts; it reads the CO_CITED edges of ``cocitation``) and ``thematic-map`` (keyword clusters,
Callon centrality and density: :mod:`gnn.mapping.thematic`) run only when named. The step flags are the fields of
the settings dataclasses they fill, added by :func:`api.cli.flags.add_settings_flags` (type, default and help declared
once, with the field): the tables below name which fields each group offers, and under which flag.
"""

from __future__ import annotations

import argparse

from api.cli.common import index_dir, open_from_args
from api.cli.flags import FlagSpec, add_settings_flags, settings_from_args
from api.cli.linkage import add_cross_encoder_arguments, compute_linkage_step
from gnn.cocitation.compute import CocitationSettings, compute_cocitation
from gnn.hyperbolic.compute import (
    HYPERBOLIC_CLASSES,
    HYPERBOLIC_MAP,
    HyperbolicSettings,
    MapSettings,
    compute_hyperbolic,
)
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

# The settings fields each argument group offers as flags (api/cli/flags.py). The cocitation group also holds --seed
# and --device, which every step takes, and --resolution and --label-abstracts, which coupling and the thematic map take.
EMBEDDING_FLAGS: tuple[FlagSpec, ...] = ("force", "limit")
COCITATION_FLAGS: tuple[FlagSpec, ...] = (
    "min_count",
    "top_m",
    "power",
    "resolution",
    "cluster_top_k",
    "cluster_min_count",
    "seed",
    "device",
    "label_abstracts",
)
FUSION_FLAGS: tuple[FlagSpec, ...] = (("method", "--fusion"),)
CATEGORY_FLAGS: tuple[FlagSpec, ...] = ("top_k", "min_score", "infer_from")
HYPERBOLIC_FLAGS: tuple[FlagSpec, ...] = ("dim", "epochs", "tolerance")
MAP_FLAGS: tuple[FlagSpec, ...] = (("epochs", "--map-epochs"),)
FIT_MAP_FLAGS: tuple[FlagSpec, ...] = (("fit_map", "--map"),)
BURST_FLAGS: tuple[FlagSpec, ...] = (
    ("s", "--burst-s"),
    ("gamma", "--burst-gamma"),
    ("min_duration", "--min-burst-duration"),
)
CENTRALITY_FLAGS: tuple[FlagSpec, ...] = (("min_count", "--centrality-min-count"), "exact_up_to", "pivots")
COUPLING_FLAGS: tuple[FlagSpec, ...] = ("min_count", "top_k")


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
        settings = settings_from_args(EmbeddingSettings, args, EMBEDDING_FLAGS, targets=targets)
        for report in compute_embeddings(store, encoder, settings, progress=not args.quiet):
            print(report.line())
    finally:
        encoder.close()


def compute_cocitation_step(store: GraphStore, args: argparse.Namespace) -> None:
    settings = settings_from_args(CocitationSettings, args, COCITATION_FLAGS)
    print(compute_cocitation(store, settings).summary())


def compute_coupling_step(store: GraphStore, args: argparse.Namespace) -> None:
    """``citegraph compute coupling``: Leiden clusters of the bibliographic coupling network, labelled and measured."""
    settings = settings_from_args(
        CouplingSettings,
        args,
        COUPLING_FLAGS,
        prefix="coupling-",
        resolution=args.resolution,
        seed=args.seed,
        label_abstracts=args.label_abstracts,
    )
    print(compute_coupling(store, settings).summary())


def compute_taxonomy_step(store: GraphStore, args: argparse.Namespace) -> None:
    settings = TaxonomySettings(
        fusion=settings_from_args(FusionSettings, args, FUSION_FLAGS, seed=args.seed, device=args.device),
        categories=settings_from_args(CategorySettings, args, CATEGORY_FLAGS, seed=args.seed),
    )
    encoder = TextEncoder(EncoderSettings.from_env(device=args.device, served=StoreFiles.of(store).served_encoder))
    try:
        print(compute_taxonomy(store, encoder, settings, progress=not args.quiet).summary())
    finally:
        encoder.close()


def compute_hyperbolic_step(store: GraphStore, args: argparse.Namespace) -> None:
    settings = settings_from_args(
        HyperbolicSettings,
        args,
        (*HYPERBOLIC_FLAGS, *FIT_MAP_FLAGS),
        seed=args.seed,
        device=args.device,
        map_settings=settings_from_args(MapSettings, args, MAP_FLAGS),
    )
    files = StoreFiles()
    report = compute_hyperbolic(
        store, settings, map_dir=HYPERBOLIC_MAP.under(files), classes_dir=HYPERBOLIC_CLASSES.under(files)
    )
    print(report.summary())


def compute_mapping_step(store: GraphStore, args: argparse.Namespace) -> None:
    settings = MappingSettings(
        bursts=settings_from_args(BurstSettings, args, BURST_FLAGS),
        centrality=settings_from_args(CentralitySettings, args, CENTRALITY_FLAGS, seed=args.seed),
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
        year_min=args.year_min, year_max=args.year_max, min_count=args.keyword_min_count, top=args.keyword_top
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
    add_settings_flags(g, HyperbolicSettings, HYPERBOLIC_FLAGS)
    add_settings_flags(g, MapSettings, MAP_FLAGS)
    add_settings_flags(g, HyperbolicSettings, FIT_MAP_FLAGS)
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
    add_settings_flags(g, EmbeddingSettings, EMBEDDING_FLAGS)


def _cocitation_arguments(g: argparse._ArgumentGroup) -> None:
    """The cocitation group, which also holds ``--seed`` and ``--device`` (shared by every step)."""
    add_settings_flags(g, CocitationSettings, COCITATION_FLAGS)


def _mapping_arguments(g: argparse._ArgumentGroup) -> None:
    """CiteSpace's burst parameters and the betweenness settings (``--seed`` seeds the sampled pivots)."""
    add_settings_flags(g, BurstSettings, BURST_FLAGS)
    add_settings_flags(g, CentralitySettings, CENTRALITY_FLAGS)


def _coupling_arguments(g: argparse._ArgumentGroup) -> None:
    """The coupling clusters' graph (``--resolution`` and ``--seed`` are the cocitation group's)."""
    add_settings_flags(g, CouplingSettings, COUPLING_FLAGS, prefix="coupling-")


def _taxonomy_arguments(g: argparse._ArgumentGroup) -> None:
    add_settings_flags(g, FusionSettings, FUSION_FLAGS)
    add_settings_flags(g, CategorySettings, CATEGORY_FLAGS)


__all__ = ["COMPUTE_STEPS", "add_commands", "cmd_compute", "compute_index_step"]
