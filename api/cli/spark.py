"""``citegraph spark cocitation|coupling``: the co-citation family as Apache Spark jobs (``pip install '.[spark]'``).

The flags are those of ``python -m gnn.cocitation.spark`` (the ``spark-submit`` entry);
``citegraph ingest cocitation DIR`` loads the output into the store. pyspark is imported only
when a job runs, so the rest of the CLI works without it.
"""

from __future__ import annotations

import argparse

from gnn.cocitation.spark_settings import add_arguments
from graph.errors import ConfigError


def cmd_spark(args: argparse.Namespace) -> int:
    try:
        from gnn.cocitation.spark import run_from_args
    except ImportError as exc:
        raise ConfigError(
            f"`citegraph spark` needs pyspark ({exc}); install it with pip install '.[spark]' (and Java 17)"
        ) from exc
    print(run_from_args(args.job, args).summary())
    return 0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``spark``."""
    p = sub.add_parser(
        "spark",
        help="co-citation and bibliographic coupling as Apache Spark jobs (Parquet edge lists or OpenAlex works)",
    )
    jobs = p.add_subparsers(dest="job", required=True, metavar="JOB")
    cocitation = jobs.add_parser(
        "cocitation",
        help="CO_CITED pairs with counts and strengths, and the noise distributions, as Parquet under --out",
    )
    add_arguments(cocitation)
    coupling = jobs.add_parser("coupling", help="bibliographic coupling of the citing papers, as Parquet under --out")
    add_arguments(coupling)
    p.set_defaults(func=cmd_spark)


__all__ = ["add_commands", "cmd_spark"]
