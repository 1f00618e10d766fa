"""The ``update`` plan of the registry: new data into a built store, recomputing only what it needs.

Its steps, in order (``citegraph update`` turns its flags into :class:`UpdateSettings` and runs the plan):

1. ``ingest`` of a source when one is given (the registry's ingest action, with its settings);
2. co-citation by delta (:func:`gnn.cocitation.delta.update_cocitation`): counts, strengths and noise
   distributions for what changed in CITES and MENTIONS since the counts were made, however it changed
   (this ingest, an earlier one, a merged or deleted work); the full step where the delta cannot run
   (it says why), and with ``recluster`` (Leiden re-run over the whole graph: a full step's cost);
3. text embeddings of the papers without a current vector (``compute embeddings --embed papers``, which
   skips every paper whose text hash is unchanged);
4. with ``taxonomy``: taxonomy fusion and the Poincaré coordinates, in full (their fused class vectors change
   with every paper);
5. the retrieval index and citation-context profiles (``compute index``, which re-encodes only the rows
   whose digest changed).

The reranker is not retrained (``citegraph train reranker`` does, when asked).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from api.pipeline.commands import switch
from api.pipeline.compute import (
    EMBEDDINGS,
    HYPERBOLIC,
    INDEX,
    TAXONOMY,
    CocitationStep,
    EmbeddingsStep,
    HyperbolicStep,
    IndexStep,
    TaxonomyStep,
)
from api.pipeline.ingest import INGEST, IngestSettings
from api.pipeline.plans import register_plan
from api.pipeline.registry import Action, Step, StepContext
from gnn.cocitation.delta import update_cocitation

# The steps after the ingest that `update --steps` can name (taxonomy and hyperbolic come with `taxonomy`).
UPDATE_STEPS = ("cocitation", "embeddings", "index")


@dataclass(frozen=True)
class CocitationUpdate:
    """``update``'s co-citation step: the settings the counts are kept under, and whether Leiden runs again."""

    cocitation: CocitationStep = field(default_factory=CocitationStep)
    recluster: bool = False

    def command(self) -> tuple[str, ...]:
        return ("update", "--steps", "cocitation", *self.cocitation.flags(), *switch("--recluster", self.recluster))


def run_cocitation_update(context: StepContext, settings: CocitationUpdate) -> None:
    with context.open() as store:
        print(update_cocitation(store, settings.cocitation.settings, recluster=settings.recluster).summary())


COCITATION_UPDATE: Action[CocitationUpdate] = Action("update cocitation", run_cocitation_update)


@dataclass(frozen=True)
class UpdateSettings:
    """``citegraph update``: the ingest (None: none), which later steps, and the settings of each."""

    ingest: IngestSettings | None = None
    steps: tuple[str, ...] = UPDATE_STEPS
    cocitation: CocitationUpdate = field(default_factory=CocitationUpdate)
    embeddings: EmbeddingsStep = field(default_factory=lambda: EmbeddingsStep(embed="papers"))
    taxonomy: TaxonomyStep | None = None  # with hyperbolic: both re-run in full when given
    hyperbolic: HyperbolicStep | None = None
    index: IndexStep = field(default_factory=IndexStep)


def update_plan(settings: UpdateSettings | None = None) -> list[Step]:
    """The steps of one ``update`` (see the module docstring), in the order they run."""
    settings = settings or UpdateSettings()
    plan: list[Step] = []
    if settings.ingest is not None:
        plan.append(Step("ingest", INGEST, settings.ingest))
    if "cocitation" in settings.steps:
        plan.append(Step("cocitation", COCITATION_UPDATE, settings.cocitation))
    if "embeddings" in settings.steps:
        plan.append(Step("embeddings", EMBEDDINGS, settings.embeddings))
    if settings.taxonomy is not None:
        plan.append(Step("taxonomy", TAXONOMY, settings.taxonomy))
    if settings.hyperbolic is not None:
        plan.append(Step("hyperbolic", HYPERBOLIC, settings.hyperbolic))
    if "index" in settings.steps:
        plan.append(Step("index", INDEX, settings.index))
    return plan


register_plan("update", update_plan)

__all__ = ["COCITATION_UPDATE", "UPDATE_STEPS", "CocitationUpdate", "UpdateSettings", "update_plan"]
