"""Settings and flags of the Spark co-citation jobs, importable without pyspark (the CLI lists them always)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from gnn.cocitation.settings import PairCountSettings
from graph.errors import ConfigError


@dataclass(frozen=True)
class SparkCocitationSettings(PairCountSettings):
    """Settings of ``citegraph spark cocitation`` / ``coupling``: the shared pair-count settings, then Spark's own."""

    # Keep a pair only when it is among the top_k strongest partners of either end (descending
    # p(j|t), then id: the cut of the compute step's cluster graph); 0 keeps every pair.
    top_k: int = 0
    # Items per block of a member's item list (see the module docstring): a member with d items makes
    # about (d / block_size)^2 / 2 tasks of at most ~block_size^2 pairs. Any value gives the same result.
    block_size: int = 2048

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.top_k < 0:
            raise ConfigError(f"top_k is {self.top_k}; use 0 (every pair) or more")
        if self.block_size < 2:
            raise ConfigError(f"block_size is {self.block_size}; use 2 or more (default 2048)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``citegraph spark cocitation|coupling`` and of ``python -m gnn.cocitation.spark``."""
    defaults = SparkCocitationSettings()
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--edges",
        help="Parquet edge list: the folder `citegraph export tables OUT --format parquet` wrote (its CITES.parquet "
        "and, when present, MENTIONS.parquet), or a Parquet file/folder with source,target columns",
    )
    source.add_argument("--works", help="OpenAlex snapshot works (JSON lines, .gz or not): a file, folder or glob")
    parser.add_argument("--out", required=True, help="output folder (Parquet tables, manifest.json)")
    parser.add_argument(
        "--master",
        default=None,
        help="Spark master: local[*] (default outside spark-submit), local[N], spark://HOST:PORT, yarn",
    )
    parser.add_argument("--min-count", type=int, default=defaults.min_count, help="smallest count written")
    parser.add_argument(
        "--top-m", type=int, default=defaults.top_m, help="partners kept per paper (noise distribution)"
    )
    parser.add_argument("--power", type=float, default=defaults.power, help="exponent α of the noise distributions")
    parser.add_argument(
        "--top-k", type=int, default=defaults.top_k, help="keep pairs among either end's top k (0: all)"
    )
    parser.add_argument(
        "--block-size", type=int, default=defaults.block_size, help="items per block of a heavy member (skew)"
    )
    parser.add_argument("--driver-memory", default=None, help="driver JVM heap, e.g. 4g (local mode: the executor's)")
    parser.add_argument("--partitions", type=int, default=None, help="spark.sql.shuffle.partitions (default Spark's)")
    parser.add_argument(
        "--neo4j-admin", action="store_true", help="cocitation: also write OUT/neo4j-admin/ for neo4j-admin import"
    )
    parser.add_argument(
        "--no-mentions", action="store_true", help="cocitation: ignore MENTIONS.parquet (sentence_count 0)"
    )


def settings_from_args(args: argparse.Namespace) -> SparkCocitationSettings:
    return SparkCocitationSettings(
        min_count=args.min_count, top_m=args.top_m, power=args.power, top_k=args.top_k, block_size=args.block_size
    )


__all__ = ["SparkCocitationSettings", "add_arguments", "settings_from_args"]
