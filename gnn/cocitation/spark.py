r"""Co-citation and bibliographic coupling past one machine: Apache Spark DataFrame jobs.

The same numbers as the single-machine step (:mod:`gnn.cocitation.counts`,
:mod:`gnn.cocitation.noise`, :func:`gnn.cocitation.compute.cocitation_edges`), computed by Spark
SQL from Parquet edge lists or the OpenAlex snapshot, so that a field of tens of millions of papers
runs on a cluster; local mode on one machine runs the same code. Every step is a DataFrame
transformation: no edge or pair reaches the driver or pandas (only scalars do: :math:`N`, the sum
of the negative weights, the counts of the manifest), and there is no Python UDF, so the work runs
in the JVM and its memory per task is bounded by Spark's spilling sorts and aggregations, not by
the graph.

**Pairs** (:func:`cooccurrence_pairs`). For members :math:`k` (citing papers; cited papers for
coupling) with distinct items :math:`R_k` (their references; their citers), every unordered pair of
:math:`R_k` is one *pair incidence*; the count of a pair is the number of members holding both:

.. math::
    C_{ab} = \#\{k : a \in R_k,\ b \in R_k\}, \quad a < b \quad\text{(ids compared as strings)}

A member with :math:`d_k` items yields :math:`d_k(d_k-1)/2` incidences: a review citing 20,000
works yields 2·10⁸, which a plain self-join on the member produces in *one* task. Each member's
items are therefore hashed into :math:`K_k = \lceil d_k / B \rceil` blocks of about :math:`B`
(``block_size``) items, and the join key is ``(member, block_a, block_b)`` with
:math:`block_a \le block_b`: an item of block :math:`i` is replicated to the :math:`K_k - i` keys
``(k, i, j \ge i)`` on the left and the :math:`i + 1` keys ``(k, j \le i, i)`` on the right, so the
input grows :math:`K_k`-fold while the :math:`d_k^2/2` outputs spread over :math:`K_k(K_k+1)/2`
keys of about :math:`B^2/2` to :math:`B^2` pairs each. Each unordered pair lies in exactly one
block pair, so it is counted once per member, and the result is the same for every ``block_size``
(the tests hold it to that). A member with at most :math:`B` items has one block: the plain self-join.

The number of members holding each item (:math:`s_a`, ``n_cited``) travels with the items through
the join, so the strengths need no join of the pairs with a per-paper table.

**Strengths**: association :math:`N c / (s_a s_b)`, cosine :math:`c / \sqrt{s_a s_b}`, Jaccard
:math:`c / (s_a + s_b - c)`, inclusion :math:`c / \min(s_a, s_b)` (:func:`gnn.cocitation.counts.association_strength`
and its siblings), evaluated in the same float64 order, so they are the same doubles.

**Noise distributions** (MP-BERT4CR, :mod:`gnn.cocitation.noise`): for every cited paper
:math:`t`, :math:`p(j \mid t) = c_{tj}^{\alpha} / \sum_k c_{tk}^{\alpha}` over every co-cited
partner (before ``min_count``), the ``top_m`` most probable kept in order (descending probability,
then partner id), the rest summed as ``cocite_tail``; and
:math:`p(i) = s_i^{\alpha} / \sum_k s_k^{\alpha}` as ``negative_weight``. The top-``m`` cut is a
``row_number() <= m`` window, which Spark limits per group before its shuffle.

Output (Parquet folders under ``out``): ``CO_CITED/`` (``source``, ``target``, ``count``,
``sentence_count``, ``association``, ``cosine``, ``jaccard``, ``inclusion``: the CO_CITED edges of
the compute step), ``papers/`` (``id``, ``n_cited``, ``negative_weight``, ``cocite_partners``,
``cocite_probs``, ``cocite_tail``: one row per cited paper) and ``manifest.json``; coupling writes
``COUPLING/``. :func:`write_neo4j_admin` adds ``neo4j-admin/``: node and relationship files for
``neo4j-admin database import full`` in the headers of ``citegraph export neo4j-admin``.
:func:`gnn.cocitation.spark_load.load_spark_output` writes the Parquet output into a store.

Run it with ``citegraph spark cocitation|coupling``, or on a cluster with ``spark-submit`` on this
file (``python -m gnn.cocitation.spark --help``); docs/cocitation.md has the command lines.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from gnn.cocitation.spark_settings import SparkCocitationSettings, add_arguments, settings_from_args
from graph.errors import ConfigError, DataError
from graph.neo4j_admin import ARRAY_DELIMITER, ImportFile, import_command, node_header, rel_header
from graph.schema import Kind, NodeType, RelType, build_schema

log = logging.getLogger(__name__)

EDGE_TABLE = "CO_CITED"
COUPLING_TABLE = "COUPLING"
PAPER_TABLE = "papers"
MANIFEST = "manifest.json"
LOCAL_SHUFFLE_PARTITIONS = 16  # spark.sql.shuffle.partitions in local mode unless --partitions says otherwise
STRENGTHS = ("association", "cosine", "jaccard", "inclusion")
OPENALEX_WORK = T.StructType(
    [T.StructField("id", T.StringType()), T.StructField("referenced_works", T.ArrayType(T.StringType()))]
)


@dataclass(frozen=True)
class SparkReport:
    """What a job read and wrote (also ``manifest.json`` in its output folder)."""

    job: str  # "cocitation" or "coupling"
    out: str  # the output folder
    citations: int  # distinct (citing, cited) pairs read
    members: int  # N: citing papers (co-citation) or cited papers (coupling)
    items: int  # cited papers (co-citation) or citing papers (coupling)
    pair_incidences: int  # sum over members of d(d-1)/2: the rows before aggregation
    pairs: int  # distinct pairs (count >= 1)
    written: int  # pairs written (min_count, top_k)
    heavy_members: int  # members with more items than block_size (split into blocks)
    max_items: int  # the largest member
    settings: dict[str, Any]
    seconds: float
    rejected: dict[str, int] = field(default_factory=dict)  # input rows left out, by reason

    def summary(self) -> str:
        what = "citing" if self.job == "cocitation" else "cited"
        lines = [
            f"spark {self.job}: {self.citations:,} citations, {self.members:,} {what} papers, {self.items:,} "
            f"papers paired; {self.pair_incidences:,} pair incidences (largest member {self.max_items:,} items, "
            f"{self.heavy_members:,} split into blocks)",
            f"  {self.pairs:,} pairs, {self.written:,} written to {self.out} in {self.seconds:.1f}s",
        ]
        lines += [f"  left out: {n:,} rows ({why})" for why, n in self.rejected.items() if n]
        return "\n".join(lines)


# the session -----------------------------------------------------------------------------------


def spark_session(
    master: str | None = None,
    *,
    app_name: str = "citegraph",
    driver_memory: str | None = None,
    shuffle_partitions: int | None = None,
    ui: bool = False,
    conf: dict[str, str] | None = None,
) -> SparkSession:
    """A SparkSession for these jobs (``master`` None: the one ``spark-submit`` or the config gives, else ``local[*]``).

    ``driver_memory`` is the heap of the driver JVM, which in local mode is also the executor's: it
    only applies when this call starts the JVM. Java 17 must be installed (``JAVA_HOME`` or ``java``
    on the PATH); a missing one is a :class:`~graph.errors.ConfigError` saying so.
    """
    if not os.environ.get("JAVA_HOME") and shutil.which("java") is None:
        raise ConfigError(
            "Spark needs Java 17 and none was found: install it (Debian: apt-get install openjdk-17-jre-headless) "
            "or set JAVA_HOME"
        )
    builder = SparkSession.builder.appName(app_name)
    if shuffle_partitions is None and (master or "local").startswith("local"):
        # Spark's 200 shuffle partitions suit a cluster; on a few local cores each near-empty task
        # costs more than its data (measured: ~1.5 s a task on 2 busy cores)
        shuffle_partitions = LOCAL_SHUFFLE_PARTITIONS
    if master is not None:
        builder = builder.master(master)
    elif "PYSPARK_GATEWAY_PORT" not in os.environ:  # not under spark-submit, which sets the master itself
        builder = builder.master("local[*]")
    settings = {
        "spark.ui.enabled": str(ui).lower(),
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.adaptive.enabled": "true",
        # The pair join's input is small and its output quadratic: AQE would coalesce its partitions by
        # input bytes into a few tasks that each expand into most of the pair incidences.
        "spark.sql.adaptive.coalescePartitions.enabled": "false",
        **({"spark.driver.memory": driver_memory} if driver_memory else {}),
        **({"spark.sql.shuffle.partitions": str(shuffle_partitions)} if shuffle_partitions else {}),
        **(conf or {}),
    }
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        spark = builder.getOrCreate()
    except Exception as exc:  # py4j/pyspark raise their own types when the JVM does not start
        raise ConfigError(f"Spark did not start ({type(exc).__name__}: {exc}); check Java 17 and JAVA_HOME") from exc
    spark.sparkContext.setLogLevel("WARN")
    return spark


# reading ---------------------------------------------------------------------------------------


def _table_path(folder: Path, name: str) -> Path | None:
    """``folder/NAME.parquet`` (a file or a folder of part files) or ``folder/NAME``, if present."""
    for candidate in (folder / f"{name}.parquet", folder / name):
        if candidate.exists():
            return candidate
    return None


def read_citations(spark: SparkSession, path: Path | str) -> DataFrame:
    """The citations as ``citing``, ``cited`` (distinct, no nulls) from a Parquet edge list.

    ``path`` is the folder ``citegraph export tables --format parquet`` writes (its ``CITES.parquet``
    is read), or a Parquet file or folder of its own with ``source``/``target`` (or
    ``citing``/``cited``) string columns. Other columns (``n_contexts``, ``dataset`` ...) are kept
    for :func:`write_neo4j_admin`, the smallest value where a pair repeats.
    """
    path = Path(path)
    table = _table_path(path, "CITES") if path.is_dir() else None
    frame = spark.read.parquet(str(table or path))
    columns = set(frame.columns)
    if {"source", "target"} <= columns:
        frame = frame.withColumnRenamed("source", "citing").withColumnRenamed("target", "cited")
    elif not {"citing", "cited"} <= columns:
        raise DataError(
            f"{table or path}: no source/target (or citing/cited) columns, found {sorted(columns)}; "
            "write the edge list with `citegraph export tables OUT --format parquet`"
        )
    extra = [c for c in frame.columns if c not in ("citing", "cited", "_origin")]
    frame = frame.where(F.col("citing").isNotNull() & F.col("cited").isNotNull())
    if not extra:
        return frame.select("citing", "cited").distinct()
    return frame.groupBy("citing", "cited").agg(*(F.min(c).alias(c) for c in extra))


def read_mentions(spark: SparkSession, path: Path | str) -> DataFrame | None:
    """``sentence``, ``cited`` from the ``MENTIONS.parquet`` beside the citations, or None when there is none."""
    path = Path(path)
    table = _table_path(path, "MENTIONS") if path.is_dir() else None
    if table is None:
        return None
    frame = spark.read.parquet(str(table)).select(F.col("source").alias("sentence"), F.col("target").alias("cited"))
    return frame.where(F.col("sentence").isNotNull() & F.col("cited").isNotNull()).distinct()


def openalex_key(column: Column) -> Column:
    """``openalex:W…`` of an OpenAlex work id or URL (as :func:`loaders.ids.openalex_id`), null when it is none."""
    w_id = F.regexp_extract(column, r"(?i)^(?:https?://(?:api\.)?openalex\.org/(?:works/)?)?(W\d+)$", 1)
    return F.when(w_id != "", F.concat(F.lit("openalex:"), F.upper(w_id)))


def read_openalex_works(spark: SparkSession, path: Path | str) -> tuple[DataFrame, DataFrame]:
    """Citations from OpenAlex snapshot works (JSON lines, gzipped or not): ``id`` → each of ``referenced_works``.

    Returns ``(citations, rejected)``: ``citing``/``cited`` as ``openalex:W…`` keys (upper-case W-id,
    the key ``loaders.ids.openalex_id`` gives), and the rows left out with a ``reason`` (a work
    without a valid id, a reference that is no OpenAlex work id). Only the two fields are parsed.
    """
    works = spark.read.schema(OPENALEX_WORK).json(str(path))
    exploded = works.select(
        F.col("id").alias("raw_citing"), F.explode_outer("referenced_works").alias("raw_cited")
    ).where(F.col("raw_cited").isNotNull())
    keyed = exploded.select(
        "raw_citing",
        "raw_cited",
        openalex_key(F.col("raw_citing")).alias("citing"),
        openalex_key(F.col("raw_cited")).alias("cited"),
    )
    reason = F.when(F.col("citing").isNull(), F.lit("work without an OpenAlex id")).when(
        F.col("cited").isNull(), F.lit("reference that is no OpenAlex work id")
    )
    rejected = keyed.where(reason.isNotNull()).select("raw_citing", "raw_cited", reason.alias("reason"))
    citations = keyed.where(reason.isNull()).select("citing", "cited").distinct()
    return citations, rejected


# pairs -----------------------------------------------------------------------------------------


def pair_incidences(incidence: DataFrame, *, block_size: int) -> DataFrame:
    """One row per pair incidence (a member holding both items): ``a``, ``b`` (``a < b``), ``s_a``, ``s_b``.

    ``incidence``: ``member``, ``item`` (distinct rows, no nulls). The rows come partitioned by
    block pair (see the module docstring), so a heavy member's pairs are spread over the tasks.
    """
    # s (members holding the item) and d (items of the member) as windows: one shuffle each, no join
    items = (
        incidence.select("member", "item", F.count(F.lit(1)).over(Window.partitionBy("item")).alias("s"))
        .select("*", F.count(F.lit(1)).over(Window.partitionBy("member")).alias("d"))
        .where(F.col("d") >= 2)  # a member with one item pairs nothing
        .withColumn("blocks", F.ceil(F.col("d") / F.lit(block_size)).cast("int"))
        .withColumn("block", F.pmod(F.xxhash64("item"), F.col("blocks")).cast("int"))
    )
    # block i pairs with blocks j >= i on the left and j <= i on the right: one key per block pair
    keys = ["member", "bl", "br"]
    left = items.select(
        "member",
        F.col("block").alias("bl"),
        F.explode(F.sequence(F.col("block"), F.col("blocks") - 1)).alias("br"),
        F.col("item").alias("x"),
        F.col("s").alias("s_x"),
    )
    right = items.select(
        "member",
        F.explode(F.sequence(F.lit(0), F.col("block"))).alias("bl"),
        F.col("block").alias("br"),
        F.col("item").alias("y"),
        F.col("s").alias("s_y"),
    )
    # Shuffle on the whole block-pair key. The window above leaves the rows hashed by member alone,
    # which already satisfies the join's clustering on (member, bl, br): left to itself Spark keeps
    # every block pair of a member in one task (measured: one 69 s task beside a 0.3 s median).
    joined = left.repartition(*keys).join(right.repartition(*keys), keys)
    joined = joined.where((F.col("bl") < F.col("br")) | (F.col("x") < F.col("y")))
    x_first = F.col("x") < F.col("y")
    return joined.select(
        F.when(x_first, F.col("x")).otherwise(F.col("y")).alias("a"),
        F.when(x_first, F.col("y")).otherwise(F.col("x")).alias("b"),
        F.when(x_first, F.col("s_x")).otherwise(F.col("s_y")).alias("s_a"),
        F.when(x_first, F.col("s_y")).otherwise(F.col("s_x")).alias("s_b"),
    )


def cooccurrence_pairs(incidence: DataFrame, *, block_size: int) -> DataFrame:
    """Every pair of items held by one member, counted over members (see the module docstring).

    ``incidence``: ``member``, ``item`` (distinct rows, no nulls). Returns ``a``, ``b`` (``a < b``),
    ``count``, ``s_a``, ``s_b`` (members holding ``a`` and ``b``).
    """
    incidences = pair_incidences(incidence, block_size=block_size)
    return incidences.groupBy("a", "b", "s_a", "s_b").agg(F.count(F.lit(1)).alias("count"))


def with_strengths(pairs: DataFrame, total: int) -> DataFrame:
    """Add the four normalised strengths (float64, in the single-machine step's order of operations)."""
    c, s_a, s_b = (F.col(name).cast("double") for name in ("count", "s_a", "s_b"))
    return pairs.select(
        "*",
        (F.lit(float(total)) * c / (s_a * s_b)).alias("association"),
        (c / F.sqrt(s_a * s_b)).alias("cosine"),
        (c / (s_a + s_b - c)).alias("jaccard"),
        (c / F.least(s_a, s_b)).alias("inclusion"),
    )


def ranked_partners(pairs: DataFrame, *, weight: Column, limit: int) -> DataFrame:
    """Each paper's first ``limit`` partners by descending ``weight``, then partner id.

    Returns ``t``, ``partner``, ``count``, ``w`` (the weight) and ``rank`` (1-based). Every pair
    feeds both of its ends.
    """
    directed = pairs.select(F.col("a").alias("t"), F.col("b").alias("partner"), "count").unionByName(
        pairs.select(F.col("b").alias("t"), F.col("a").alias("partner"), "count")
    )
    directed = directed.withColumn("w", weight)
    order = Window.partitionBy("t").orderBy(F.col("w").desc(), F.col("partner").asc())
    return directed.withColumn("rank", F.row_number().over(order)).where(F.col("rank") <= limit)


def top_k_pairs(ranked: DataFrame, top_k: int) -> DataFrame:
    """The pairs among the ``top_k`` first partners of either end, as ``a``, ``b`` (``a < b``), once each."""
    head = ranked.where(F.col("rank") <= top_k)
    return head.select(F.least("t", "partner").alias("a"), F.greatest("t", "partner").alias("b")).distinct()


def noise_table(
    pairs: DataFrame, occurrences: DataFrame, ranked: DataFrame, settings: SparkCocitationSettings
) -> DataFrame:
    """``id``, ``n_cited``, ``negative_weight``, ``cocite_partners``, ``cocite_probs``, ``cocite_tail`` per cited paper.

    ``occurrences``: ``id``, ``n_cited`` of every cited paper; ``ranked``: :func:`ranked_partners` by
    weight ``count^power``, at least ``top_m`` deep. A paper without partners has null lists and tail.
    """
    power = settings.power
    weight = F.pow(F.col("count").cast("double"), F.lit(power))
    directed = pairs.select(F.col("a").alias("t"), "count").unionByName(pairs.select(F.col("b").alias("t"), "count"))
    totals = directed.groupBy("t").agg(F.sum(weight).alias("total"), F.count(F.lit(1)).alias("n_partners"))
    head = ranked.where(F.col("rank") <= settings.top_m).join(totals, "t").withColumn("p", F.col("w") / F.col("total"))
    lists = head.groupBy("t").agg(
        F.sort_array(F.collect_list(F.struct("rank", "partner", "p"))).alias("entries"),
        F.sum("w").alias("head_weight"),
        F.first("total").alias("total"),
        F.first("n_partners").alias("n_partners"),
    )
    lists = lists.select(
        F.col("t").alias("id"),
        F.transform("entries", lambda e: e["partner"]).alias("cocite_partners"),
        F.transform("entries", lambda e: e["p"]).alias("cocite_probs"),
        # the probability of the partners left out; exactly 0 when none are
        F.when(F.col("n_partners") <= settings.top_m, F.lit(0.0))
        .otherwise((F.col("total") - F.col("head_weight")) / F.col("total"))
        .alias("cocite_tail"),
    )
    negative = F.when(F.col("n_cited") > 0, F.pow(F.col("n_cited").cast("double"), F.lit(power))).otherwise(0.0)
    weighted = occurrences.withColumn("raw_negative", negative)
    total = weighted.agg(F.sum("raw_negative").alias("negative_total"))  # one row, joined to every paper
    negative_weight = F.when(F.col("negative_total") > 0, F.col("raw_negative") / F.col("negative_total")).otherwise(
        F.col("raw_negative")
    )
    return (
        weighted.crossJoin(F.broadcast(total))
        .select("id", "n_cited", negative_weight.alias("negative_weight"))
        .join(lists, "id", "left")
        .select("id", "n_cited", "negative_weight", "cocite_partners", "cocite_probs", "cocite_tail")
    )


# the jobs --------------------------------------------------------------------------------------


def member_stats(incidence: DataFrame, block_size: int) -> dict[str, int]:
    """One aggregate over the members: how many (N), incidences in all, pair incidences, the split and the largest."""
    degree = incidence.groupBy("member").agg(F.count(F.lit(1)).alias("d"))
    row = degree.agg(
        F.count(F.lit(1)).alias("members"),
        F.sum("d").alias("citations"),
        F.sum(F.expr("d * (d - 1) div 2")).alias("pair_incidences"),
        F.sum((F.col("d") > block_size).cast("long")).alias("heavy_members"),
        F.max("d").alias("max_items"),
    ).first()
    values = row.asDict() if row is not None else {}  # a global aggregate always has its one row
    return {
        name: int(values.get(name) or 0)
        for name in ("members", "citations", "pair_incidences", "heavy_members", "max_items")
    }


def run_cocitation(
    spark: SparkSession,
    citations: DataFrame,
    out: Path | str,
    settings: SparkCocitationSettings | None = None,
    *,
    mentions: DataFrame | None = None,
    rejected: dict[str, int] | None = None,
) -> SparkReport:
    """Co-citation counts, strengths and noise distributions of ``citations`` (``citing``, ``cited``), written to ``out``.

    ``mentions`` (``sentence``, ``cited``) adds ``sentence_count``: the sentences co-citing a pair
    (0 where none, as the compute step writes); pairs co-cited only in sentences are left out.
    """
    settings = settings or SparkCocitationSettings()
    out = Path(out)
    started = time.perf_counter()
    citations = citations.select("citing", "cited").distinct().persist(StorageLevel.DISK_ONLY)
    incidence = citations.select(F.col("citing").alias("member"), F.col("cited").alias("item"))
    stats = member_stats(incidence, settings.block_size)  # stats["members"]: N of association strength
    pairs = cooccurrence_pairs(incidence, block_size=settings.block_size).persist(StorageLevel.DISK_ONLY)
    occurrences = incidence.groupBy(F.col("item").alias("id")).agg(F.count(F.lit(1)).alias("n_cited"))
    weight = F.pow(F.col("count").cast("double"), F.lit(settings.power))
    ranked = ranked_partners(pairs, weight=weight, limit=max(settings.top_m, settings.top_k))
    if settings.top_k:  # read twice (the top-k cut and the noise table): keep it rather than rank again
        ranked = ranked.persist(StorageLevel.DISK_ONLY)

    edges = pairs.where(F.col("count") >= settings.min_count)
    if settings.top_k:
        edges = edges.join(top_k_pairs(ranked, settings.top_k), ["a", "b"], "left_semi")
    if mentions is not None:
        sentence_incidence = mentions.select(F.col("sentence").alias("member"), F.col("cited").alias("item"))
        sentence = cooccurrence_pairs(sentence_incidence, block_size=settings.block_size).select(
            "a", "b", F.col("count").alias("sentence_count")
        )
        edges = edges.join(sentence, ["a", "b"], "left").fillna(0, ["sentence_count"])
    else:
        edges = edges.withColumn("sentence_count", F.lit(0).cast("long"))
    edges = with_strengths(edges, stats["members"]).select(
        F.col("a").alias("source"),
        F.col("b").alias("target"),
        "count",
        F.col("sentence_count").cast("long").alias("sentence_count"),
        *STRENGTHS,
    )
    edges.write.mode("overwrite").parquet(str(out / EDGE_TABLE))
    noise_table(pairs, occurrences, ranked, settings).write.mode("overwrite").parquet(str(out / PAPER_TABLE))
    report = _report("cocitation", spark, out, stats, incidence, pairs, EDGE_TABLE, settings, started, rejected)
    for frame in (ranked, pairs, citations):
        frame.unpersist()
    return report


def run_coupling(
    spark: SparkSession,
    citations: DataFrame,
    out: Path | str,
    settings: SparkCocitationSettings | None = None,
    *,
    rejected: dict[str, int] | None = None,
) -> SparkReport:
    r"""Bibliographic coupling of the citing papers (:math:`B = A A^\top`), written to ``out/COUPLING``.

    As :func:`gnn.cocitation.compute.coupling_table`: ``source``, ``target`` (citing papers,
    ``source < target``), ``count`` (shared references), ``association``, ``cosine``, ``jaccard``,
    ``inclusion`` with :math:`s_k` the references of :math:`k` and :math:`N` the cited papers.
    ``top_k`` keeps the pairs among either end's ``top_k`` strongest partners by count, then id.
    """
    settings = settings or SparkCocitationSettings()
    out = Path(out)
    started = time.perf_counter()
    citations = citations.select("citing", "cited").distinct().persist(StorageLevel.DISK_ONLY)
    incidence = citations.select(F.col("cited").alias("member"), F.col("citing").alias("item"))
    stats = member_stats(incidence, settings.block_size)  # stats["members"]: N, the cited papers
    pairs = cooccurrence_pairs(incidence, block_size=settings.block_size).persist(StorageLevel.DISK_ONLY)
    edges = pairs.where(F.col("count") >= settings.min_count)
    if settings.top_k:
        ranked = ranked_partners(pairs, weight=F.col("count"), limit=settings.top_k)
        edges = edges.join(top_k_pairs(ranked, settings.top_k), ["a", "b"], "left_semi")
    edges = with_strengths(edges, stats["members"]).select(
        F.col("a").alias("source"), F.col("b").alias("target"), "count", *STRENGTHS
    )
    edges.write.mode("overwrite").parquet(str(out / COUPLING_TABLE))
    report = _report("coupling", spark, out, stats, incidence, pairs, COUPLING_TABLE, settings, started, rejected)
    for frame in (pairs, citations):
        frame.unpersist()
    return report


def _report(
    job: str,
    spark: SparkSession,
    out: Path,
    stats: dict[str, int],
    incidence: DataFrame,
    pairs: DataFrame,
    table: str,
    settings: SparkCocitationSettings,
    started: float,
    rejected: dict[str, int] | None,
) -> SparkReport:
    """The manifest: :func:`member_stats` and three counts (nothing row-wise reaches the driver)."""
    report = SparkReport(
        job=job,
        out=str(out),
        citations=stats["citations"],
        members=stats["members"],
        items=incidence.select("item").distinct().count(),
        pair_incidences=stats["pair_incidences"],
        pairs=pairs.count(),
        written=spark.read.parquet(str(out / table)).count(),
        heavy_members=stats["heavy_members"],
        max_items=stats["max_items"],
        settings=asdict(settings),
        seconds=round(time.perf_counter() - started, 3),
        rejected=dict(rejected or {}),
    )
    (out / MANIFEST).write_text(json.dumps(asdict(report), indent=2) + "\n", encoding="utf-8")
    return report


# neo4j-admin import files ----------------------------------------------------------------------


SCALAR_TYPES = {Kind.STRING: "string", Kind.INT: "long", Kind.FLOAT: "double", Kind.BOOL: "boolean"}


def _field(column: Column, kind: Kind) -> Column:
    """One CSV field in :func:`graph.neo4j_admin.format_value`'s syntax; '' for a missing value."""
    if kind is Kind.STRING:
        text = F.concat(F.lit('"'), F.replace(column, F.lit('"'), F.lit('""')), F.lit('"'))
    elif kind is Kind.STRING_LIST:
        quoted = F.array_join(
            F.transform(column, lambda item: F.replace(item, F.lit('"'), F.lit('""'))), ARRAY_DELIMITER
        )
        text = F.when(F.size(column) > 0, F.concat(F.lit('"'), quoted, F.lit('"')))
    elif kind in (Kind.FLOAT_LIST, Kind.VECTOR32, Kind.VECTOR64):
        joined = F.array_join(F.transform(column, lambda item: item.cast("string")), ARRAY_DELIMITER)
        text = F.when(F.size(column) > 0, joined)
    elif kind is Kind.BOOL:
        text = F.when(column, F.lit("true")).when(~column, F.lit("false"))
    else:  # INT, FLOAT: Java's shortest text that reads back to the same double
        text = column.cast("string")
    return F.coalesce(text, F.lit(""))


def _csv_lines(frame: DataFrame, key_fields: list[Column], label: str, properties: Sequence[Any]) -> DataFrame:
    """One ``value`` string per row: the key fields, the quoted label/type, then each schema property."""
    types = {f.name: f.dataType for f in frame.schema.fields}
    fields = [*key_fields, F.lit(f'"{label}"')]
    for prop in properties:
        if prop.name not in types or prop.is_list != isinstance(types[prop.name], T.ArrayType):
            # absent, or written by pandas from a column of nulls only (a list column then has no list
            # type): every value is missing
            fields.append(F.lit(""))
        elif prop.is_list:
            fields.append(_field(F.col(prop.name), prop.kind))
        else:  # an all-null column may come typed as anything: read it as the schema's type
            fields.append(_field(F.col(prop.name).cast(SCALAR_TYPES[prop.kind]), prop.kind))
    return frame.select(F.concat_ws(",", *fields).alias("value"))


def _write_import_file(lines: DataFrame, out: Path, name: str, kind: str, header: list[str]) -> ImportFile:
    (out / f"{name}.header.csv").write_text(",".join(header) + "\n", encoding="utf-8")
    lines.write.mode("overwrite").text(str(out / name))
    rows = lines.sparkSession.read.text(str(out / name)).count()
    # neo4j-admin reads every file the pattern matches as one file after the header
    return ImportFile(name, kind, out / f"{name}.header.csv", out / name / "part-.*", rows)


def write_neo4j_admin(
    spark: SparkSession, citations: DataFrame, out: Path | str, *, database: str = "neo4j"
) -> list[ImportFile]:
    """``out/neo4j-admin/``: Paper nodes, CITES and CO_CITED for ``neo4j-admin database import full``.

    Headers are those of ``citegraph export neo4j-admin`` (:func:`graph.neo4j_admin.node_header`,
    :func:`~graph.neo4j_admin.rel_header`); each data file is a folder of part files, named in
    ``import.sh`` by a pattern. Paper rows: every paper of ``citations`` with the properties the job
    computed (``n_cited`` 0 and ``negative_weight`` 0 for a paper nobody cites, as the compute step
    writes), the others empty; CITES rows carry whatever properties the edge list had. A paper id
    holding the array delimiter ``;`` cannot be written (the importer would split it): a
    :class:`~graph.errors.DataError` names one.
    """
    out = Path(out)
    folder = out / "neo4j-admin"
    folder.mkdir(parents=True, exist_ok=True)
    schema = build_schema()  # headers do not depend on the vector sizes
    papers = spark.read.parquet(str(out / PAPER_TABLE))
    bad = papers.where(F.exists("cocite_partners", lambda p: F.contains(p, F.lit(ARRAY_DELIMITER)))).select("id")
    offender = bad.limit(1).collect()
    if offender:
        raise DataError(
            f"Paper.cocite_partners of {offender[0]['id']!r} holds an id with the array delimiter "
            f"{ARRAY_DELIMITER!r}; neo4j-admin cannot split it back; load it with `citegraph ingest cocitation` instead"
        )
    ids = citations.select(F.col("citing").alias("id")).unionByName(citations.select(F.col("cited").alias("id")))
    nodes = ids.distinct().join(papers, "id", "left").fillna({"n_cited": 0, "negative_weight": 0.0})
    paper: NodeType = schema.node("Paper")
    key = paper.prop(paper.key)
    others = [p for p in paper.properties if p.name != paper.key]
    files = [
        _write_import_file(
            _csv_lines(nodes, [_field(F.col("id"), key.kind)], "Paper", others),
            folder,
            "Paper",
            "nodes",
            node_header(paper),
        )
    ]
    endpoints = [_field(F.col("source"), Kind.STRING), _field(F.col("target"), Kind.STRING)]
    cites: RelType = schema.rel("CITES")
    cites_rows = citations.withColumnRenamed("citing", "source").withColumnRenamed("cited", "target")
    files.append(
        _write_import_file(
            _csv_lines(cites_rows, endpoints, "CITES", cites.properties),
            folder,
            "CITES",
            "relationships",
            rel_header(cites),
        )
    )
    cocited: RelType = schema.rel(EDGE_TABLE)
    edges = spark.read.parquet(str(out / EDGE_TABLE))
    files.append(
        _write_import_file(
            _csv_lines(edges, endpoints, EDGE_TABLE, cocited.properties),
            folder,
            EDGE_TABLE,
            "relationships",
            rel_header(cocited),
        )
    )
    script = folder / "import.sh"
    script.write_text(
        "#!/bin/sh\n# Written by `citegraph spark cocitation --neo4j-admin`: run it on the Neo4j server, with the\n"
        "# database absent (or add --overwrite-destination=true), then start the database.\nset -e\n"
        'cd "$(dirname "$0")"\n' + import_command(files, database, base=folder) + "\n",
        encoding="utf-8",
    )
    return files


# command line (also the spark-submit entry) ----------------------------------------------------


def run_from_args(job: str, args: argparse.Namespace, spark: SparkSession | None = None) -> SparkReport:
    """Run ``job`` ("cocitation" or "coupling") as the flags say; starts a session unless one is given."""
    settings = settings_from_args(args)
    own = spark is None and SparkSession.getActiveSession() is None  # stop only a session started here
    if spark is None:
        spark = spark_session(
            args.master,
            app_name=f"citegraph {job}",
            driver_memory=args.driver_memory,
            shuffle_partitions=args.partitions,
        )
    try:
        rejected: dict[str, int] = {}
        mentions = None
        if args.works:
            citations, bad = read_openalex_works(spark, args.works)
            rejected = {str(r["reason"]): int(r["count"]) for r in bad.groupBy("reason").count().collect()}
        else:
            if not Path(args.edges).exists():
                raise ConfigError(
                    f"{args.edges} does not exist; write it with `citegraph export tables OUT --format parquet`"
                )
            citations = read_citations(spark, args.edges)
            if job == "cocitation" and not args.no_mentions:
                mentions = read_mentions(spark, args.edges)
        Path(args.out).mkdir(parents=True, exist_ok=True)
        if job == "coupling":
            return run_coupling(spark, citations, args.out, settings, rejected=rejected)
        report = run_cocitation(spark, citations, args.out, settings, mentions=mentions, rejected=rejected)
        if args.neo4j_admin:
            write_neo4j_admin(spark, citations, args.out)
        return report
    finally:
        if own:
            spark.stop()


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m gnn.cocitation.spark cocitation|coupling --edges DIR --out DIR``; ``spark-submit`` runs this file."""
    parser = argparse.ArgumentParser(prog="gnn.cocitation.spark", description=__doc__.splitlines()[0])
    jobs = parser.add_subparsers(dest="job", required=True)
    for job in ("cocitation", "coupling"):
        add_arguments(jobs.add_parser(job))
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    print(run_from_args(args.job, args).summary())
    return 0


__all__ = [
    "EDGE_TABLE",
    "PAPER_TABLE",
    "SparkCocitationSettings",
    "SparkReport",
    "cooccurrence_pairs",
    "noise_table",
    "pair_incidences",
    "ranked_partners",
    "read_citations",
    "read_mentions",
    "read_openalex_works",
    "run_cocitation",
    "run_coupling",
    "spark_session",
    "with_strengths",
    "write_neo4j_admin",
]


if __name__ == "__main__":
    sys.exit(main())
