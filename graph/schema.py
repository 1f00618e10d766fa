"""The data model shared by every backend: node labels, relationship types, their typed properties.

This module is the allowlist: a label, relationship type or property name reaches a Cypher
statement only after :meth:`Schema.node` / :meth:`Schema.rel` / :meth:`Schema.check_properties`
accepted it. Values never do; they travel as parameters or as bulk-loaded frames.

Canonical tables (what loaders produce and :mod:`graph.ingest` validates):

* a node table for label ``L`` has the key column of ``L`` (``id`` or ``code``) plus any subset of
  its properties;
* a relationship table for type ``T`` has ``source`` and ``target`` (the keys of the endpoint
  nodes) plus any subset of its properties;
* either may carry ``_origin`` (a string such as ``papers.jsonl.gz:812``) naming where the record
  came from, so a reject can point at the file and line. ``_origin`` is never stored.

Vector sizes are settings (:class:`VectorSizes`): the text encoder decides ``embedding``, the
taxonomy fusion ``taxonomy``/``fused``, the hyperbolic model ``poincare``. A store remembers the
sizes it was created with; opening it with others is a :class:`~graph.errors.SchemaError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from graph.errors import SchemaError

ORIGIN_COLUMN = "_origin"
SOURCE_COLUMN = "source"
TARGET_COLUMN = "target"
# Sentence.section of the sentences inside a paper's abstract: loaders write it; a paper without an
# `abstract` property is embedded with the abstract rebuilt from these sentences.
ABSTRACT_SECTION = "Abstract"


class Kind(Enum):
    """Property value kinds; each backend maps them to its own types."""

    STRING = "string"
    INT = "int"  # 64-bit
    FLOAT = "float"  # 64-bit
    BOOL = "bool"
    STRING_LIST = "string_list"
    FLOAT_LIST = "float_list"  # variable-length float64 list
    VECTOR32 = "vector32"  # fixed-size float32 array, size in Property.size
    VECTOR64 = "vector64"  # fixed-size float64 array (hyperbolic coordinates need the precision)


@dataclass(frozen=True)
class Property:
    name: str
    kind: Kind
    size: int | None = None  # length of a fixed-size vector; None for every other kind

    @property
    def is_vector(self) -> bool:
        return self.kind in (Kind.VECTOR32, Kind.VECTOR64)

    @property
    def is_list(self) -> bool:
        return self.is_vector or self.kind in (Kind.STRING_LIST, Kind.FLOAT_LIST)


@dataclass(frozen=True)
class NodeType:
    label: str
    key: str  # primary key property; unique per label in every backend
    properties: tuple[Property, ...]
    description: str = ""

    def prop(self, name: str) -> Property:
        for prop in self.properties:
            if prop.name == name:
                return prop
        raise SchemaError(f"{self.label} has no property {name!r}; known: {', '.join(p.name for p in self.properties)}")


@dataclass(frozen=True)
class RelType:
    type: str
    source: str  # label of the start node
    target: str  # label of the end node
    properties: tuple[Property, ...] = ()
    # Properties that, with (source, target), identify one edge. Empty: at most one edge per pair.
    identity: tuple[str, ...] = ()
    description: str = ""

    def prop(self, name: str) -> Property:
        for prop in self.properties:
            if prop.name == name:
                return prop
        raise SchemaError(
            f"{self.type} has no property {name!r}; known: {', '.join(p.name for p in self.properties) or 'none'}"
        )

    @property
    def key_columns(self) -> tuple[str, ...]:
        return (SOURCE_COLUMN, TARGET_COLUMN, *self.identity)


@dataclass(frozen=True)
class VectorSizes:
    """Lengths of the fixed-size vector properties."""

    embedding: int = 384  # text encoder output; all-MiniLM-L6-v2 gives 384
    taxonomy: int = 384  # fused taxonomy vectors (vector-mean fusion keeps the encoder size)
    poincare: int = 16  # Poincaré-ball coordinates of taxonomy classes and papers


@dataclass(frozen=True)
class Schema:
    nodes: dict[str, NodeType] = field(default_factory=dict)
    rels: dict[str, RelType] = field(default_factory=dict)
    sizes: VectorSizes = VectorSizes()

    def node(self, label: str) -> NodeType:
        try:
            return self.nodes[label]
        except KeyError:
            raise SchemaError(f"unknown node label {label!r}; known: {', '.join(self.nodes)}") from None

    def rel(self, rel_type: str) -> RelType:
        try:
            return self.rels[rel_type]
        except KeyError:
            raise SchemaError(f"unknown relationship type {rel_type!r}; known: {', '.join(self.rels)}") from None

    def check_properties(self, owner: NodeType | RelType, names: list[str]) -> list[Property]:
        """The :class:`Property` for each name, or :class:`SchemaError` naming the first unknown one."""
        return [owner.prop(name) for name in names]


def _p(name: str, kind: Kind, size: int | None = None) -> Property:
    return Property(name, kind, size)


def build_schema(sizes: VectorSizes = VectorSizes()) -> Schema:
    """The data model (docs/architecture.md, "Data model") with the given vector sizes."""
    S, I, F, B = Kind.STRING, Kind.INT, Kind.FLOAT, Kind.BOOL
    taxonomy_point = (_p("fused", Kind.VECTOR32, sizes.taxonomy), _p("poincare", Kind.VECTOR64, sizes.poincare))
    nodes = [
        NodeType(
            "Paper",
            "id",
            (
                _p("id", S),
                _p("title", S),
                _p("abstract", S),
                _p("summary", S),
                _p("year", I),
                _p("venue", S),
                # the source's abbreviation beside its full title in the record (WoS J9, else JI; Scopus's
                # Abbreviated Source Title): source co-citation maps join cited references, which name their
                # source by abbreviation ("PHYS REV D"), to the records' full titles ("PHYSICAL REVIEW D")
                _p("venue_abbrev", S),
                _p("doi", S),
                _p("arxiv_id", S),
                _p("dataset", S),  # which loader made it
                _p("stub", B),  # known only as a citation target, no metadata of its own yet
                _p("reference", S),  # a stub's reference string as a citing paper printed it (authors, title, venue)
                # how analysts read a work in a map or a table: "Goos F, 1947, Ann Phys-Berlin 1:333" for a cited
                # reference, built from its parsed fields (loaders.citedrefs); null where the title serves
                _p("label", S),
                _p("volume", S),  # volume and first page as the source prints them: with the source they key a
                _p("first_page", S),  # cited work that has no DOI (CiteSpace's and bibliometrix's practice)
                # the kind of work as the source names it (OpenAlex: article, book-chapter, preprint, ...)
                _p("type", S),
                _p("n_cited", I),
                _p("embedding", Kind.VECTOR32, sizes.embedding),
                _p("embedding_hash", S),  # hash of the text `embedding` was computed from (incremental re-runs)
                _p("taxonomy", Kind.VECTOR32, sizes.taxonomy),
                _p("poincare", Kind.VECTOR64, sizes.poincare),
                _p("cocite_partners", Kind.STRING_LIST),
                _p("cocite_probs", Kind.FLOAT_LIST),
                _p("cocite_tail", F),
                _p("negative_weight", F),
                _p("cluster", I),
                _p("cocite_cluster", I),  # community of the co-citation network (Leiden), see gnn.cocitation.clusters
                _p("coupling_cluster", I),  # community of the bibliographic coupling network, see gnn.mapping.coupling
                # the strongest Kleinberg citation burst (gnn.mapping.bursts): its weight and first and last year
                _p("burst_strength", F),
                _p("burst_begin", I),
                _p("burst_end", I),
                _p("betweenness", F),  # normalised betweenness in the co-citation network (gnn.mapping.centrality)
                _p("sigma", F),  # CiteSpace's sigma, (betweenness + 1) ** burst_strength
            ),
            "A scholarly work; one node per work across all sources.",
        ),
        NodeType(
            "Author",
            "id",
            (
                _p("id", S),
                _p("name", S),
                _p("orcid", S),  # bare ORCID iD (0000-0002-1825-0097) of the first entry read under this name
                _p("openalex_id", S),  # OpenAlex author id (A5048491430) of that entry
            ),
            "A person, deduplicated by normalised name.",
        ),
        NodeType(
            "Sentence",
            "id",
            (
                _p("id", S),  # "<paper_id>#<sid>"
                _p("paper_id", S),
                _p("sid", I),
                _p("section", S),
                _p("text", S),
                _p("embedding", Kind.VECTOR32, sizes.embedding),
                _p("embedding_hash", S),  # hash of the text `embedding` was computed from (incremental re-runs)
            ),
            "One sentence of a full-text paper.",
        ),
        NodeType(
            "ArxivCategory",
            "code",
            (_p("code", S), _p("name", S), _p("description", S), *taxonomy_point),
            "An arXiv subject category such as cs.CL.",
        ),
        NodeType(
            "AcmClass",
            "id",
            (
                _p("id", S),  # "<scheme>:<code>", e.g. "1998:I.2.10", so schemes never collide
                _p("code", S),
                _p("name", S),
                _p("scheme", S),
                _p("level", I),
                _p("description", S),
                *taxonomy_point,
            ),
            "A class of the ACM Computing Classification System (1998 or 2012) or another hierarchy.",
        ),
        NodeType(
            "Alias",
            "id",
            (
                _p("id", S),  # another id of a paper, in the prefixed form of loaders.ids: "doi:10.1/x", "openalex:W12"
                _p("kind", S),  # doi, arxiv, acl, openalex, s2, s2corpus, pmid, mag, wos, scopus, ref, own
            ),
            "An id a source gave a paper besides the paper's key; (Alias)-[:ALIAS_OF]->(Paper).",
        ),
        NodeType(
            "Keyword",
            "id",
            (
                _p(
                    "id", S
                ),  # "<kind>:<normalised term>" (loaders.keywords.normalise_keyword): "author:citation network"
                _p("name", S),  # the term's most frequent spelling in the export that loaded it
                _p("kind", S),  # author, plus (Keywords Plus), index, openalex_keyword, topic, field_of_study
                _p("cluster", I),  # community of the keyword co-occurrence network (gnn.mapping.keywords)
                _p("cluster_label", S),  # that cluster's most frequent keyword, as bibliometrix names themes
                _p("quadrant", S),  # its cluster's place on the thematic map: motor, niche, emerging/declining, basic
            ),
            "A keyword of works as a source gives it (author keywords, Keywords Plus, index terms, topics), "
            "one node per kind and normalised term; (Paper)-[:HAS_KEYWORD]->(Keyword).",
        ),
        NodeType(
            "Institution",
            "id",
            (
                _p("id", S),  # "openalex:I1294671590" where the source names it, else "inst:<name key>|<country>"
                _p("name", S),  # as the source writes it ("Univ Napoli Federico II", "University of Bologna")
                _p("country", S),  # ISO 3166-1 alpha-2 code (loaders.affiliations); null where the address has none
            ),
            "An institution authors of a paper were affiliated with (WoS C1, Scopus Affiliations, OpenAlex).",
        ),
        NodeType(
            "Country",
            "code",
            (
                _p(
                    "code", S
                ),  # ISO 3166-1 alpha-2 ("IT"; retired ISO 3166-3 codes for Yugoslavia, Czechoslovakia, GDR)
                _p("name", S),
            ),
            "A country authors of a paper were affiliated in.",
        ),
    ]
    rels = [
        RelType("WROTE", "Author", "Paper", (_p("position", I),), description="position: 1 for the first author."),
        RelType("HAS_SENTENCE", "Paper", "Sentence"),
        RelType(
            "CITES",
            "Paper",
            "Paper",
            (
                _p("n_contexts", I),
                _p("dataset", S),
                _p("intents", Kind.STRING_LIST),  # Semantic Scholar citation intents: background, methodology, result
                _p("influential", B),  # Semantic Scholar isInfluential
            ),
        ),
        RelType("MENTIONS", "Sentence", "Paper", (_p("marker", S),), description="A citing sentence (citance)."),
        RelType(
            "CO_CITED",
            "Paper",
            "Paper",
            (
                _p("count", I),
                _p("sentence_count", I),
                _p("association", F),
                _p("cosine", F),
                _p("jaccard", F),
                _p("inclusion", F),
            ),
            description="Stored once per unordered pair, source id < target id.",
        ),
        RelType(
            "LINKS_TO",
            "Sentence",
            "Sentence",
            (_p("score", F), _p("method", S), _p("annotator", S)),
            identity=("method", "annotator"),
            description="Citance -> cited sentence; method is gold, silver or model.",
        ),
        RelType("IN_CATEGORY", "Paper", "ArxivCategory", (_p("score", F), _p("inferred", B))),
        RelType("MAPS_TO", "ArxivCategory", "AcmClass", (_p("score", F), _p("inferred", B))),
        RelType(
            "IN_CLASS",
            "Paper",
            "AcmClass",
            (_p("score", F), _p("inferred", B)),
            description="A paper in a class of a hierarchy other than arXiv's (OpenAlex topics, concepts).",
        ),
        RelType("BROADER", "AcmClass", "AcmClass"),
        RelType("ALIAS_OF", "Alias", "Paper", description="Every id a source gave a paper resolves to it."),
        RelType(
            "HAS_KEYWORD",
            "Paper",
            "Keyword",
            (_p("score", F),),
            description="score: the source's relevance of the term to the work (OpenAlex), null where none is given.",
        ),
        RelType(
            "AFFILIATION",
            "Paper",
            "Institution",
            description="An institution of the paper's authors (once per paper): institutions that co-wrote a document.",
        ),
        RelType(
            "IN_COUNTRY",
            "Paper",
            "Country",
            description="A country of the paper's affiliations (once per paper): countries that co-wrote a document.",
        ),
    ]
    return Schema({n.label: n for n in nodes}, {r.type: r for r in rels}, sizes)


__all__ = [
    "ABSTRACT_SECTION",
    "ORIGIN_COLUMN",
    "SOURCE_COLUMN",
    "TARGET_COLUMN",
    "Kind",
    "NodeType",
    "Property",
    "RelType",
    "Schema",
    "VectorSizes",
    "build_schema",
]
