"""``citegraph update``: bring a built store up to date with new data, doing only what the new data needs.

The steps, in order (the command line only parses and calls them):

1. ``ingest`` of ``SOURCE PATH`` when given (the importers of ``citegraph ingest``, with its options);
2. co-citation by delta (:func:`gnn.cocitation.delta.update_cocitation`): counts, strengths and noise
   distributions for what changed in CITES and MENTIONS since the counts were made, however it changed
   (this ingest, an earlier one, a merged or deleted work); the full step where the delta cannot run
   (it says why), and with ``--recluster`` (Leiden re-run over the whole graph: a full step's cost);
3. text embeddings of the papers without a current vector (``compute embeddings --embed papers``, which
   skips every paper whose text hash is unchanged);
4. the retrieval index and citation-context profiles (``compute index``, which re-encodes only the rows
   whose digest changed).

Taxonomy fusion and the Poincaré coordinates re-run in full (their fused class vectors change with every
paper): ``--taxonomy`` adds ``compute taxonomy`` and ``compute hyperbolic`` at their full cost. The
reranker is not retrained (``citegraph train reranker`` does, when asked).
"""

from __future__ import annotations

import argparse

from api.cli.common import open_from_args
from api.cli.compute import (
    _cocitation_arguments,
    compute_embeddings_step,
    compute_hyperbolic_step,
    compute_index_step,
    compute_taxonomy_step,
)
from api.cli.ingest import add_ingest_options, cmd_ingest
from gnn.cocitation.compute import CocitationSettings
from gnn.cocitation.delta import update_cocitation
from gnn.hyperbolic.compute import HyperbolicSettings, MapSettings
from gnn.taxonomy.categories import CategorySettings
from gnn.taxonomy.fusion import FusionSettings

STEPS = ("cocitation", "embeddings", "index")


def cmd_update(args: argparse.Namespace) -> int:
    if args.source:
        status = cmd_ingest(args)
        if status:
            return status
    steps = args.steps or list(STEPS)
    with open_from_args(args) as store:
        if "cocitation" in steps:
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
            )
            print(update_cocitation(store, settings, recluster=args.recluster).summary())
        if "embeddings" in steps:
            compute_embeddings_step(store, args)
        if args.taxonomy:
            compute_taxonomy_step(store, args)
            compute_hyperbolic_step(store, args)
        if "index" in steps:
            compute_index_step(store, args)
    return 0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``update``."""
    p = sub.add_parser(
        "update",
        help="ingest new data (optional) and bring co-citation, embeddings and the index up to date, "
        "recomputing only what changed",
    )
    p.add_argument("source", nargs="?", help="a source to ingest first, as `citegraph ingest SOURCE PATH` takes it")
    p.add_argument("path", nargs="?", help="file, folder or quoted glob of the source")
    add_ingest_options(p.add_argument_group("ingest (with SOURCE PATH)"))
    p.add_argument(
        "--steps",
        nargs="+",
        choices=STEPS,
        help=f"which steps after the ingest (default: all of {', '.join(STEPS)})",
    )
    p.add_argument(
        "--recluster",
        action="store_true",
        help="re-run the co-citation step in full, Leiden clusters and labels included (a full step's cost)",
    )
    p.add_argument(
        "--taxonomy",
        action="store_true",
        help="also re-run taxonomy fusion and the Poincaré coordinates (in full: every fused vector changes)",
    )
    p.add_argument("--index-dir", help="the retrieval index folder (default: <db>.index beside the store)")
    _cocitation_arguments(p.add_argument_group("cocitation"))
    p.set_defaults(
        func=cmd_update,
        embed="papers",
        force=False,
        limit=None,
        # taxonomy and hyperbolic with their defaults (--taxonomy)
        fusion=FusionSettings().method,
        top_k=CategorySettings().top_k,
        min_score=None,
        infer_from=CategorySettings().infer_from,
        dim=None,
        epochs=HyperbolicSettings().epochs,
        tolerance=HyperbolicSettings().tolerance,
        map_epochs=MapSettings().epochs,
        map=HyperbolicSettings().fit_map,
    )


__all__ = ["STEPS", "add_commands", "cmd_update"]
