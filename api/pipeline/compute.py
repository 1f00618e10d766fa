"""The compute steps of the registry: embeddings, co-citation, taxonomy, hyperbolic, the index, sentence links, and
``compute all`` (the first four in order, on one store).

Each step is an :class:`~api.pipeline.registry.Action` over typed settings (the models' own settings dataclasses,
wrapped with the command line that gives them); ``citegraph compute STEP`` builds those settings from its flags
and runs the action, the build and the server's background build run the same actions from their plans
(:mod:`api.pipeline.plans`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from api.pipeline.commands import FlagSpec, joined, option, settings_flags, switch
from api.pipeline.linkage import load_linker
from api.pipeline.registry import Action, Step, StepContext
from gnn.cocitation.compute import CocitationSettings, compute_cocitation
from gnn.hyperbolic.compute import (
    HYPERBOLIC_CLASSES,
    HYPERBOLIC_MAP,
    HyperbolicSettings,
    compute_hyperbolic,
)
from gnn.linkage import compute_linkage
from gnn.linkage.cross_encoder import CROSS_ENCODER_FILE, CrossEncodedLinker, CrossEncoder
from gnn.recommend.service import ServiceSettings, open_retrieval
from gnn.taxonomy.compute import TaxonomySettings, compute_taxonomy
from gnn.taxonomy.fusion import FusionSettings
from gnn.text.embeddings import TARGETS, EmbeddingSettings, compute_embeddings
from gnn.text.encoder import EncoderSettings, TextEncoder
from graph import GraphStore
from graph.files import StoreFiles


def no_taxonomy(store: GraphStore, settings: object = None) -> str | None:
    """Why ``compute all`` and the background build leave taxonomy and hyperbolic out: a corpus loaded without the
    taxonomies (e.g. only ``ingest jsonl``) has no class to fuse or place; None where it has some."""
    if store.count_nodes("ArxivCategory") + store.count_nodes("AcmClass") == 0:
        return "the store has no ArxivCategory/AcmClass nodes"
    return None


# The settings fields of the steps below offered as flags: `citegraph compute` adds them (api/cli/flags.py) and
# each step's command line renders them (settings_flags), so the two name each flag once.
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
    "label_keywords",
)
FUSION_FLAGS: tuple[FlagSpec, ...] = (("method", "--fusion"),)
CATEGORY_FLAGS: tuple[FlagSpec, ...] = ("top_k", "min_score", "infer_from")
HYPERBOLIC_FLAGS: tuple[FlagSpec, ...] = ("dim", "epochs", "tolerance")
MAP_FLAGS: tuple[FlagSpec, ...] = (("epochs", "--map-epochs"),)
FIT_MAP_FLAGS: tuple[FlagSpec, ...] = (("fit_map", "--map"),)


# embeddings ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EmbeddingsStep:
    """``compute embeddings``: which nodes (``all``, ``papers``, ``sentences``), whether unchanged texts are written
    again, how many new texts per kind at most (most-cited papers first), and the torch device."""

    embed: str = "all"
    force: bool = False
    limit: int | None = None
    device: str | None = None

    def flags(self) -> tuple[str, ...]:
        return (
            *option("--embed", self.embed, "all"),
            *switch("--force", self.force),
            *option("--limit", self.limit),
            *option("--device", self.device),
        )

    def command(self) -> tuple[str, ...]:
        return ("compute", "embeddings", *self.flags())


def run_embeddings(context: StepContext, settings: EmbeddingsStep) -> None:
    targets = TARGETS if settings.embed == "all" else (settings.embed,)
    with context.open() as store:
        # the store's fine-tuned encoder once `train encoder --serve` put one in service, else the configured one
        served = StoreFiles.of(store).served_encoder
        encoder = TextEncoder(EncoderSettings.from_env(device=settings.device, served=served))
        try:
            embedding = EmbeddingSettings(targets=targets, force=settings.force, limit=settings.limit)
            for report in compute_embeddings(store, encoder, embedding, progress=not context.quiet):
                print(report.line())
        finally:
            encoder.close()


EMBEDDINGS: Action[EmbeddingsStep] = Action("compute embeddings", run_embeddings)


# co-citation ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CocitationStep:
    """``compute cocitation``: :class:`~gnn.cocitation.compute.CocitationSettings` (its seed and device are those
    of every compute step)."""

    settings: CocitationSettings = field(default_factory=CocitationSettings)

    def flags(self) -> tuple[str, ...]:
        return settings_flags(self.settings, COCITATION_FLAGS)

    def command(self) -> tuple[str, ...]:
        return ("compute", "cocitation", *self.flags())


def run_cocitation(context: StepContext, settings: CocitationStep) -> None:
    with context.open() as store:
        print(compute_cocitation(store, settings.settings).summary())


COCITATION: Action[CocitationStep] = Action("compute cocitation", run_cocitation)


# taxonomy ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TaxonomyStep:
    """``compute taxonomy``: the fusion and category inference settings, and the encoder's device."""

    settings: TaxonomySettings = field(default_factory=TaxonomySettings)
    device: str | None = None

    def flags(self) -> tuple[str, ...]:
        fusion, categories = self.settings.fusion, self.settings.categories
        return (
            *settings_flags(fusion, FUSION_FLAGS),
            *settings_flags(categories, CATEGORY_FLAGS),
            *option("--seed", fusion.seed, FusionSettings().seed),
            *option("--device", self.device),
        )

    def command(self) -> tuple[str, ...]:
        return ("compute", "taxonomy", *self.flags())


def run_taxonomy(context: StepContext, settings: TaxonomyStep) -> None:
    with context.open() as store:
        served = StoreFiles.of(store).served_encoder
        encoder = TextEncoder(EncoderSettings.from_env(device=settings.device, served=served))
        try:
            print(compute_taxonomy(store, encoder, settings.settings, progress=not context.quiet).summary())
        finally:
            encoder.close()


TAXONOMY: Action[TaxonomyStep] = Action("compute taxonomy", run_taxonomy, skip=no_taxonomy)


# hyperbolic ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HyperbolicStep:
    """``compute hyperbolic``: :class:`~gnn.hyperbolic.compute.HyperbolicSettings` (``fit_map`` False: the
    coordinates alone, h_θ left for a later run)."""

    settings: HyperbolicSettings = field(default_factory=HyperbolicSettings)

    def flags(self) -> tuple[str, ...]:
        s, d = self.settings, HyperbolicSettings()
        return (
            *settings_flags(s, HYPERBOLIC_FLAGS),
            *settings_flags(s.map_settings, MAP_FLAGS),
            *settings_flags(s, FIT_MAP_FLAGS),
            *option("--seed", s.seed, d.seed),
            *option("--device", s.device, d.device),
        )

    def command(self) -> tuple[str, ...]:
        return ("compute", "hyperbolic", *self.flags())


def run_hyperbolic(context: StepContext, settings: HyperbolicStep) -> None:
    files = StoreFiles()
    with context.open() as store:
        report = compute_hyperbolic(
            store, settings.settings, map_dir=HYPERBOLIC_MAP.under(files), classes_dir=HYPERBOLIC_CLASSES.under(files)
        )
    print(report.summary())


HYPERBOLIC: Action[HyperbolicStep] = Action("compute hyperbolic", run_hyperbolic, skip=no_taxonomy)


# the index -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class IndexStep:
    """``compute index``: the retrieval index and citation-context profiles beside the store (``index_dir``
    elsewhere: a server store has no folder beside it)."""

    index_dir: str | None = None

    def command(self) -> tuple[str, ...]:
        return ("compute", "index")


def run_index(context: StepContext, settings: IndexStep) -> None:
    """Build or update the retrieval index and the citation-context profiles beside the store, as ``recommend``
    opens them (not the reranker, not the citation lists). The index is written beside the store, never into it:
    opened read-only, the store's files keep the stamp the index records, so the next ``recommend`` loads the
    index without reading the papers again."""
    index_dir = Path(settings.index_dir) if settings.index_dir else None
    with context.open(read_only=True) as store:
        encoder = TextEncoder(EncoderSettings.from_env(served=StoreFiles.of(store).served_encoder))
        try:
            index, profiles, _ = open_retrieval(
                store, ServiceSettings(), encoder, index_dir=index_dir, progress=not context.quiet, build=True
            )
        finally:
            encoder.close()
    print(
        f"index: {len(index)} papers ({index.dense.size} vectors, "
        f"{'exact' if index.dense.exact else 'HNSW'}), BM25 k1={index.settings.bm25_k1} "
        f"b={index.settings.bm25_b}; profiles: {profiles.papers if profiles else 0} papers"
    )


INDEX: Action[IndexStep] = Action("compute index", run_index)


# sentence links ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LinkageStep:
    """``compute linkage``: the linker model (default ``$CITEGRAPH_CACHE/models/linker.json``), re-ordered by the
    fine-tuned cross-encoder with ``cross_encoder``."""

    model: str | None = None
    cross_encoder: bool = False
    cross_encoder_model: str | None = None
    device: str | None = None

    def command(self) -> tuple[str, ...]:
        return (
            "compute",
            "linkage",
            *option("--model", self.model),
            *switch("--cross-encoder", self.cross_encoder),
            *option("--cross-encoder-model", self.cross_encoder_model),
            *option("--device", self.device),
        )

    def linker(self) -> object:
        """The linker of ``model``; with ``cross_encoder``, re-ordered by the cross-encoder of
        ``cross_encoder_model`` (default ``$CITEGRAPH_CACHE/models/linker-cross-encoder``)."""
        linker = load_linker(self.model)
        if not self.cross_encoder:
            return linker
        folder = Path(self.cross_encoder_model) if self.cross_encoder_model else CROSS_ENCODER_FILE.under(StoreFiles())
        return CrossEncodedLinker(linker, CrossEncoder.load(folder, self.device))


def run_linkage(context: StepContext, settings: LinkageStep) -> None:
    linker = settings.linker()
    encoder = TextEncoder(EncoderSettings.from_env(device=settings.device))
    try:
        with context.open() as store:
            print(compute_linkage(store, encoder, linker, progress=not context.quiet).summary())  # type: ignore[arg-type]
    finally:
        encoder.close()


LINKAGE: Action[LinkageStep] = Action("compute linkage", run_linkage)


# compute all ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ComputeAll:
    """``compute all``: the settings of each of its steps (their seed and device are one flag each)."""

    embeddings: EmbeddingsStep = field(default_factory=EmbeddingsStep)
    cocitation: CocitationStep = field(default_factory=CocitationStep)
    taxonomy: TaxonomyStep = field(default_factory=TaxonomyStep)
    hyperbolic: HyperbolicStep = field(default_factory=HyperbolicStep)

    def command(self) -> tuple[str, ...]:
        parts = (self.embeddings, self.cocitation, self.taxonomy, self.hyperbolic)
        return ("compute", "all", *joined(*(part.flags() for part in parts)))

    def plan(self) -> list[Step]:
        """Its steps in the order it runs them: hyperbolic reads the fused class vectors of taxonomy, so it stays
        after it."""
        return [
            Step("embeddings", EMBEDDINGS, self.embeddings),
            Step("cocitation", COCITATION, self.cocitation),
            Step("taxonomy", TAXONOMY, self.taxonomy),
            Step("hyperbolic", HYPERBOLIC, self.hyperbolic),
        ]


def run_compute_all(context: StepContext, settings: ComputeAll) -> None:
    """Every step of :meth:`ComputeAll.plan` on one store; a step its skip leaves out says why (a corpus loaded
    without the taxonomies gets every other step)."""
    with context.open() as store:
        for step in settings.plan():
            skipped = step.why_skipped(store)
            if skipped:
                print(f"{step.name}: skipped, {skipped} (`citegraph ingest taxonomy`)")
                continue
            step.run(context.on(store))


COMPUTE_ALL: Action[ComputeAll] = Action("compute all", run_compute_all)

# `citegraph compute STEP`'s steps that are actions of the registry, by the name the command takes
COMPUTE_ACTIONS: dict[str, Action[Any]] = {
    "all": COMPUTE_ALL,
    "embeddings": EMBEDDINGS,
    "cocitation": COCITATION,
    "taxonomy": TAXONOMY,
    "hyperbolic": HYPERBOLIC,
    "index": INDEX,
    "linkage": LINKAGE,
}
COMPUTE_STEPS = tuple(step.name for step in ComputeAll().plan())


__all__ = [
    "COCITATION",
    "COMPUTE_ACTIONS",
    "COMPUTE_ALL",
    "COMPUTE_STEPS",
    "EMBEDDINGS",
    "HYPERBOLIC",
    "INDEX",
    "LINKAGE",
    "TAXONOMY",
    "CocitationStep",
    "ComputeAll",
    "EmbeddingsStep",
    "HyperbolicStep",
    "IndexStep",
    "LinkageStep",
    "TaxonomyStep",
    "no_taxonomy",
]
