"""``citegraph update``: bring a built store up to date with new data, doing only what the new data needs.

The flags become :class:`api.pipeline.update.UpdateSettings` and the registry's ``update`` plan runs (its module
docstring lists the steps). Taxonomy fusion and the Poincaré coordinates re-run in full with ``--taxonomy``; the
reranker is not retrained.
"""

from __future__ import annotations

import argparse

from api.cli.common import step_context
from api.cli.compute import _cocitation_arguments
from api.cli.flags import settings_from_args
from api.cli.ingest import add_ingest_options, ingest_settings
from api.pipeline.compute import (
    COCITATION_FLAGS,
    CocitationStep,
    EmbeddingsStep,
    HyperbolicStep,
    IndexStep,
    TaxonomyStep,
)
from api.pipeline.registry import PlanRun
from api.pipeline.update import UPDATE_STEPS, CocitationUpdate, UpdateSettings, update_plan
from gnn.cocitation.compute import CocitationSettings
from gnn.hyperbolic.compute import HyperbolicSettings
from gnn.taxonomy.categories import CategorySettings
from gnn.taxonomy.compute import TaxonomySettings
from gnn.taxonomy.fusion import FusionSettings


def update_settings(args: argparse.Namespace) -> UpdateSettings:
    """``update``'s flags as the registry's settings; taxonomy and hyperbolic (``--taxonomy``) take their defaults
    with the seed and device of the cocitation flags."""
    cocitation = settings_from_args(CocitationSettings, args, COCITATION_FLAGS)
    seed, device = cocitation.seed, cocitation.device
    taxonomy = TaxonomySettings(fusion=FusionSettings(seed=seed, device=device), categories=CategorySettings(seed=seed))
    return UpdateSettings(
        ingest=ingest_settings(args) if args.source else None,
        steps=tuple(args.steps or UPDATE_STEPS),
        cocitation=CocitationUpdate(CocitationStep(cocitation), recluster=args.recluster),
        embeddings=EmbeddingsStep(embed="papers", device=device),
        taxonomy=TaxonomyStep(taxonomy, device=device) if args.taxonomy else None,
        hyperbolic=HyperbolicStep(HyperbolicSettings(seed=seed, device=device)) if args.taxonomy else None,
        index=IndexStep(index_dir=args.index_dir),
    )


def cmd_update(args: argparse.Namespace) -> int:
    context = step_context(args)
    for outcome in PlanRun(update_plan(update_settings(args)), context).run():
        if outcome.skipped:
            print(f"{outcome.name}: skipped, {outcome.skipped}")
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
        choices=UPDATE_STEPS,
        help=f"which steps after the ingest (default: all of {', '.join(UPDATE_STEPS)})",
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
    p.set_defaults(func=cmd_update)


__all__ = ["add_commands", "cmd_update", "update_settings"]
