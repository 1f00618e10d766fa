"""``citegraph compute STEP``: the steps that write results back into the graph, and the index beside it.

``all`` runs :data:`COMPUTE_STEPS` in order; ``linkage`` (it needs a trained linker), ``index``
(also built by the first ``recommend``) and ``mapping`` (citation bursts, betweenness and sigma, for
science-mapping analysts; it reads the CO_CITED edges of ``cocitation``) and ``thematic-map`` (keyword clusters,
Callon centrality and density: :mod:`gnn.mapping.thematic`) run only when named. The step flags are the fields of
the settings dataclasses they fill, added by :func:`api.cli.flags.add_settings_flags` (type, default and help declared
once, with the field): the tables below name which fields each group offers, and under which flag. The steps of
``all``, ``index`` and ``linkage`` are the step registry's actions (:mod:`api.pipeline.compute`): this command turns
its flags into their settings and runs them, as the build and the server's background build run the same actions
from their plans.
"""

from __future__ import annotations

import argparse

from api.cli.common import open_from_args, step_context
from api.cli.flags import FlagSpec, add_settings_flags, settings_from_args
from api.cli.linkage import add_cross_encoder_arguments
from api.pipeline.compute import (
    CATEGORY_FLAGS,
    COCITATION_FLAGS,
    COMPUTE_ACTIONS,
    COMPUTE_STEPS,
    FIT_MAP_FLAGS,
    FUSION_FLAGS,
    HYPERBOLIC_FLAGS,
    MAP_FLAGS,
    CocitationStep,
    ComputeAll,
    EmbeddingsStep,
    HyperbolicStep,
    IndexStep,
    LinkageStep,
    TaxonomyStep,
)
from gnn.cocitation.compute import CocitationSettings
from gnn.hyperbolic.compute import HyperbolicSettings, MapSettings
from gnn.mapping.bursts import BurstSettings
from gnn.mapping.centrality import CentralitySettings
from gnn.mapping.compute import MappingSettings, compute_mapping
from gnn.mapping.coupling import CouplingSettings, compute_coupling
from gnn.mapping.keywords import KIND_FALLBACK
from gnn.mapping.networks import NetworkFilters
from gnn.mapping.thematic import DEFAULT_TOP, compute_thematic_map
from gnn.taxonomy.categories import CategorySettings
from gnn.taxonomy.compute import TaxonomySettings
from gnn.taxonomy.fusion import FusionSettings
from gnn.text.embeddings import EmbeddingSettings
from graph import GraphStore

# The settings fields each argument group offers as flags (api/cli/flags.py); those of the registry's steps are
# declared with the steps (api/pipeline/compute.py), whose command lines render the same flags. The cocitation group
# also holds --seed and --device, which every step takes, and --resolution and --label-abstracts, which coupling and
# the thematic map take.
EMBEDDING_FLAGS: tuple[FlagSpec, ...] = ("force", "limit")
BURST_FLAGS: tuple[FlagSpec, ...] = (
    ("s", "--burst-s"),
    ("gamma", "--burst-gamma"),
    ("min_duration", "--min-burst-duration"),
)
CENTRALITY_FLAGS: tuple[FlagSpec, ...] = (("min_count", "--centrality-min-count"), "exact_up_to", "pivots")
COUPLING_FLAGS: tuple[FlagSpec, ...] = ("min_count", "top_k", "max_share")


def cmd_compute(args: argparse.Namespace) -> int:
    """The step's settings from the flags, run by the step registry's action (``all``: its plan, on one store);
    ``mapping``, ``thematic-map`` and ``coupling`` (no plan runs them) on a store opened here."""
    if args.step in COMPUTE_ACTIONS:
        context = step_context(args)
        COMPUTE_ACTIONS[args.step].run(context, step_settings(args.step, args))
        return 0
    with open_from_args(args) as store:
        OTHER_STEPS[args.step](store, args)
    return 0


def step_settings(step: str, args: argparse.Namespace) -> object:
    """The typed settings of compute step ``step`` (``all``: of each of its steps) from the flags."""
    if step == "all":
        return compute_all_settings(args)
    if step == "index":
        return IndexStep()
    if step == "linkage":
        return LinkageStep(
            model=args.model,
            cross_encoder=args.cross_encoder,
            cross_encoder_model=args.cross_encoder_model,
            device=args.device,
        )
    return getattr(compute_all_settings(args), step)


def compute_all_settings(args: argparse.Namespace) -> ComputeAll:
    """The settings of ``compute all``'s steps, each read from the flags its settings dataclass declares."""
    return ComputeAll(
        embeddings=EmbeddingsStep(embed=args.embed, force=args.force, limit=args.limit, device=args.device),
        cocitation=CocitationStep(settings_from_args(CocitationSettings, args, COCITATION_FLAGS)),
        taxonomy=TaxonomyStep(
            TaxonomySettings(
                fusion=settings_from_args(FusionSettings, args, FUSION_FLAGS, seed=args.seed, device=args.device),
                categories=settings_from_args(CategorySettings, args, CATEGORY_FLAGS, seed=args.seed),
            ),
            device=args.device,
        ),
        hyperbolic=HyperbolicStep(
            settings_from_args(
                HyperbolicSettings,
                args,
                (*HYPERBOLIC_FLAGS, *FIT_MAP_FLAGS),
                seed=args.seed,
                device=args.device,
                map_settings=settings_from_args(MapSettings, args, MAP_FLAGS),
            )
        ),
    )


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
        label_keywords=args.label_keywords,
    )
    print(compute_coupling(store, settings).summary())


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


# the steps no plan runs: each opens the store here and reads its own flags
OTHER_STEPS = {
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


__all__ = ["COMPUTE_STEPS", "add_commands", "cmd_compute", "compute_all_settings", "step_settings"]
