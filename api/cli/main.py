"""The ``citegraph`` command line.

Every subcommand opens the store from ``--db`` / ``CITEGRAPH_DB`` (or Neo4j with ``--backend neo4j``
and ``NEO4J_*``), does one job, and exits non-zero with a one-line error on failure (the
traceback only with ``--debug``).

Exit codes: 0 done; 1 a setting, flag or environment variable is wrong, or the store failed
(:class:`~graph.errors.ConfigError`, :class:`~graph.errors.StoreError`, ...); 2 a wrong command
line (argparse) or an internal error; 3 ``fetch-data`` left files to copy by hand; 65 the data does
not fit (:class:`~graph.errors.DataError`: a bad record or file, a store without what the step
needs; ``EX_DATAERR`` of sysexits.h); 130 interrupted.
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

from api.settings import AppSettings
from graph import CitegraphError, GraphStore, StoreConfig, ingest, open_store
from graph.errors import ConfigError, DataError
from graph.ingest import ON_ERROR

log = logging.getLogger("citegraph")

# in the order `compute all` runs them; hyperbolic reads the fused class vectors of taxonomy, so it stays after it
COMPUTE_STEPS = ("embeddings", "cocitation", "taxonomy", "hyperbolic")
EXIT_DATA = 65  # a DataError: the input or the store must change (sysexits.h EX_DATAERR), not a flag


def _open(args: argparse.Namespace, *, read_only: bool = False) -> GraphStore:
    return open_store(StoreConfig.from_env(db_path=args.db, backend=args.backend, read_only=read_only))


# ingest ---------------------------------------------------------------------------------------
def cmd_ingest(args: argparse.Namespace) -> int:
    import loaders

    settings = AppSettings.from_env()
    data_dir = Path(args.data) if args.data else settings.data_dir
    if args.source == "all":
        if args.path:
            raise ConfigError(
                "`citegraph ingest all` takes no PATH; it reads every source under --data / CITEGRAPH_DATA"
            )
        sources = [(source, data_dir / source.path) for source in loaders.available(data_dir)]
        if not sources:
            raise ConfigError(
                f"no known source under {data_dir}; "
                "set CITEGRAPH_DATA to the data folder (see ../shared/data/README.md)"
            )
    else:
        if args.source not in loaders.SOURCES:
            raise ConfigError(f"unknown source {args.source!r}; known: all, {', '.join(loaders.SOURCES)}")
        source = loaders.SOURCES[args.source]
        sources = [(source, Path(args.path) if args.path else data_dir / source.path)]
    rejects_dir = Path(args.rejects_dir) if args.rejects_dir else settings.rejects_dir
    reports = []
    with _open(args) as store:
        for source, path in tqdm(sources, desc="ingest", unit="source", disable=len(sources) < 2 or args.quiet):
            if not path.exists():
                raise ConfigError(f"{source.name}: {path} does not exist; pass the right PATH or set CITEGRAPH_DATA")
            batch = source.load(path)
            report = ingest(store, batch, on_error=args.on_error, rejects_dir=rejects_dir)
            reports.append(report)
            if not args.json:
                print(report.summary())
    if args.json:
        print(json.dumps([r.as_dict() for r in reports], indent=2))
    return 0


# compute --------------------------------------------------------------------------------------
def cmd_compute(args: argparse.Namespace) -> int:
    from gnn.cocitation.compute import CocitationSettings, compute_cocitation

    steps = COMPUTE_STEPS if args.step == "all" else (args.step,)
    with _open(args) as store:
        for step in steps:
            if step == "embeddings":
                _compute_embeddings(store, args)
            if step == "linkage":
                from api.cli.linkage import compute_linkage_step

                compute_linkage_step(store, args)
            if step == "index":
                from api.cli.recommend import compute_index_step

                compute_index_step(store, args)
            if step == "cocitation":
                settings = CocitationSettings(
                    min_count=args.min_count,
                    top_m=args.top_m,
                    power=args.power,
                    resolution=args.resolution,
                    seed=args.seed,
                    cluster_top_k=args.cluster_top_k,
                    cluster_min_count=args.cluster_min_count,
                    device=args.device,
                )
                print(compute_cocitation(store, settings).summary())
            if step in ("taxonomy", "hyperbolic") and args.step == "all" and not _has_taxonomy(store):
                # A corpus loaded without the taxonomies (e.g. only `ingest jsonl`) still gets every other step.
                print(f"{step}: skipped, the store has no ArxivCategory/AcmClass nodes (`citegraph ingest taxonomy`)")
                continue
            if step == "taxonomy":
                _compute_taxonomy(store, args)
            if step == "hyperbolic":
                _compute_hyperbolic(store, args)
    return 0


def _has_taxonomy(store: GraphStore) -> bool:
    return store.count_nodes("ArxivCategory") + store.count_nodes("AcmClass") > 0


def _compute_taxonomy(store: GraphStore, args: argparse.Namespace) -> None:
    from gnn.taxonomy.categories import CategorySettings
    from gnn.taxonomy.compute import TaxonomySettings, compute_taxonomy
    from gnn.taxonomy.fusion import FusionSettings
    from gnn.text.encoder import EncoderSettings, TextEncoder

    settings = TaxonomySettings(
        fusion=FusionSettings(method=args.fusion, seed=args.seed, device=args.device),
        categories=CategorySettings(
            top_k=args.top_k, min_score=args.min_score, infer_from=args.infer_from, seed=args.seed
        ),
    )
    encoder = TextEncoder(EncoderSettings.from_env(device=args.device))
    try:
        print(compute_taxonomy(store, encoder, settings, progress=not args.quiet).summary())
    finally:
        encoder.close()


def _compute_hyperbolic(store: GraphStore, args: argparse.Namespace) -> None:
    from gnn.hyperbolic.compute import HyperbolicSettings, compute_hyperbolic

    settings = HyperbolicSettings(dim=args.dim, epochs=args.epochs, seed=args.seed, device=args.device)
    models_dir = AppSettings.from_env().cache_dir / "models"
    print(compute_hyperbolic(store, settings, models_dir=models_dir).summary())


def _compute_embeddings(store: GraphStore, args: argparse.Namespace) -> None:
    from gnn.text.embeddings import TARGETS, EmbeddingSettings, compute_embeddings
    from gnn.text.encoder import EncoderSettings, TextEncoder

    targets = TARGETS if args.embed == "all" else (args.embed,)
    encoder = TextEncoder(EncoderSettings.from_env(device=args.device))
    try:
        settings = EmbeddingSettings(targets=targets, force=args.force, limit=args.limit)
        for report in compute_embeddings(store, encoder, settings, progress=not args.quiet):
            print(report.line())
    finally:
        encoder.close()


# stats / cypher / export ----------------------------------------------------------------------
def cmd_stats(args: argparse.Namespace) -> int:
    with _open(args, read_only=True) as store:
        stats = store.stats()
    if args.json:
        print(json.dumps(stats, indent=2))
    else:
        for section, counts in stats.items():
            print(section)
            for name, count in counts.items():
                print(f"  {name:<16}{count:>12,}")
    return 0


def _parse_param(text: str) -> tuple[str, Any]:
    name, sep, raw = text.partition("=")
    if not sep or not name.isidentifier():
        raise ConfigError(f"--param {text!r} is not NAME=VALUE (VALUE is JSON, or plain text)")
    try:
        return name, json.loads(raw)
    except json.JSONDecodeError:
        return name, raw


def _format_rows(columns: list[str], rows: list[list[Any]], fmt: str) -> str:
    if fmt == "json":
        return json.dumps([dict(zip(columns, row)) for row in rows], indent=2, default=str)
    if fmt == "csv":
        import io

        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(columns)
        writer.writerows(rows)
        return buffer.getvalue().rstrip("\n")
    cells = [[str(c) for c in columns]] + [["" if v is None else str(v) for v in row] for row in rows]
    widths = [min(60, max(len(r[i]) for r in cells)) for i in range(len(columns))]
    lines = [" | ".join(v[:60].ljust(w) for v, w in zip(r, widths)) for r in cells]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join([*lines, f"({len(rows)} rows)"])


def cmd_cypher(args: argparse.Namespace) -> int:
    if (args.query is None) == (args.file is None):
        raise ConfigError("give a query string or --file FILE (one of the two)")
    text = Path(args.file).read_text(encoding="utf-8") if args.file else args.query
    params = dict(_parse_param(p) for p in args.param)
    with _open(args, read_only=True) as store:
        columns, rows = store.read_only_query(text, params)
    print(_format_rows(columns, rows, args.format))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    out = Path(args.out)
    with _open(args, read_only=True) as store:
        if args.kind == "tables":
            fmt = args.format or "csv"
            if fmt not in ("csv", "parquet"):
                raise ConfigError(f"`export tables` writes csv or parquet, not {fmt}")
            out.mkdir(parents=True, exist_ok=True)
            for path, rows in export_tables(store, out, fmt):
                print(f"{path}\t{rows} rows")
            return 0
        if args.kind == "neo4j-admin":
            from graph.neo4j_admin import export_neo4j_admin

            print(export_neo4j_admin(store, out, progress=not args.quiet).summary())
            return 0
        from gnn.cocitation.export import export_cocitation, export_coupling

        options = {"fmt": args.format or "csv", "measure": args.measure, "min_count": args.min_count}
        if args.kind == "cocitation":
            report = export_cocitation(store, out, seed_paper=args.seed_paper, depth=args.depth, **options)
        else:
            if args.seed_paper:
                raise ConfigError("--seed-paper applies to `export cocitation` only")
            report = export_coupling(store, out, **options)
    print(report.summary())
    return 0


def export_tables(store: GraphStore, out: Path, fmt: str) -> list[tuple[Path, int]]:
    """Every relationship type as a table (source, target, properties) for pandas/Gephi/VOSviewer users."""
    written = []
    for rel_type in store.schema.rels:
        frame = store.read_edges(rel_type)
        path = out / f"{rel_type}.{fmt}"
        if fmt == "parquet":
            frame.to_parquet(path, index=False)
        else:
            frame.to_csv(path, index=False)
        written.append((path, len(frame)))
    return written


# copy -----------------------------------------------------------------------------------------
def cmd_copy(args: argparse.Namespace) -> int:
    from graph.copy import CopySettings, copy_store

    if args.target == "embedded" and not args.to_db:
        raise ConfigError("--to embedded needs --to-db PATH, the store file to write (the source is --from-db or --db)")
    if args.source == args.target == "neo4j":
        raise ConfigError("both stores would be the Neo4j database of NEO4J_*; use Neo4j's own tools for that")
    source_config = StoreConfig.from_env(db_path=args.from_db or args.db, backend=args.source, read_only=True)
    target_config = StoreConfig.from_env(db_path=args.to_db, backend=args.target)
    default_progress = Path("var") / f"copy-{args.source}-to-{args.target}.progress.json"
    settings = CopySettings(
        batch_size=args.batch_size,
        progress_path=Path(args.progress_file) if args.progress_file else default_progress,
        restart=args.restart,
    )
    with open_store(source_config) as source, open_store(target_config) as target:
        report = copy_store(source, target, settings, progress=not args.quiet)
    print(report.summary())
    return 0


# fetch-data -----------------------------------------------------------------------------------
def cmd_fetch_data(args: argparse.Namespace) -> int:
    from loaders.fetch import fetch_data

    settings = AppSettings.from_env()
    report = fetch_data(
        Path(args.dest) if args.dest else settings.data_dir,
        args.sources or None,
        timeout=args.timeout,
        cache_dir=Path(args.cache) if args.cache else settings.cache_dir / "downloads",
        mirror=args.mirror,
        force=args.force,
    )
    print(json.dumps(report.as_dict(), indent=2) if args.json else report.summary())
    return 0 if report.complete else 3  # 3: some files must be copied by hand (see the summary)


# serve ----------------------------------------------------------------------------------------
def cmd_serve(args: argparse.Namespace) -> int:
    import torch
    import uvicorn

    from api.app import create_app

    settings = AppSettings.from_env()
    torch.set_num_threads(settings.torch_threads)
    host, port = args.host or settings.host, args.port or settings.port
    config = StoreConfig.from_env(db_path=args.db, backend=args.backend, read_only=True)
    app = create_app(config, settings)
    print(f"citegraph GraphQL API on http://{host}:{port}/graphql  (health: /healthz, ready: /readyz)")
    print("Two example queries (paste into GraphiQL at /graphql, or POST them as JSON):")
    print("  { stats { kind label count } }")
    print(
        '  { papers(search: "machine translation", first: 3) { id title year nCited authors { name } citedBy { id } } }'
    )
    print(f"  curl -s http://{host}:{port}/graphql -H 'content-type: application/json' \\")
    print("""       -d '{"query": "{ stats { kind label count } }"}'""")
    uvicorn.run(app, host=host, port=port, log_level="warning" if args.quiet else "info")
    return 0


# parser ---------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="citegraph",
        description="Build, compute, query and serve the citation graph.",
        epilog="Exit codes: 0 done, 1 bad setting or flag (or the store failed), 2 bad command line or internal "
        "error, 65 bad data (a record, a file, or a store without what the step needs), 130 interrupted.",
    )
    parser.add_argument("--db", help="embedded store file (default: $CITEGRAPH_DB or var/citegraph.db)")
    parser.add_argument(
        "--backend", choices=["embedded", "neo4j"], help="store backend (default: $CITEGRAPH_BACKEND or embedded)"
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    parser.add_argument("-q", "--quiet", action="store_true", help="less output (no progress bars)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("ingest", help="load a source (or all sources) into the store")
    import loaders

    known = "; ".join(f"{s.name}: {s.description}" for s in loaders.SOURCES.values())
    p.add_argument("source", help=f"'all' or one source ({known})")
    p.add_argument("path", nargs="?", help="file or folder of the source (default: its place under --data)")
    p.add_argument("--data", help="data folder (default: $CITEGRAPH_DATA or ../shared/data)")
    p.add_argument(
        "--on-error",
        choices=ON_ERROR,
        default="fail",
        help="fail: stop before writing on any bad record; skip: load the rest",
    )
    p.add_argument("--rejects-dir", help="where to write rejected records (default: var/rejects)")
    p.add_argument("--json", action="store_true", help="print the ingest reports as JSON")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("compute", help="run compute steps that write results back into the graph")
    p.add_argument(
        "step",
        choices=["all", *COMPUTE_STEPS, "linkage", "index"],
        help="which step (all: every step, in order; linkage runs only when named: it needs a trained linker; "
        "index: the retrieval index beside the store, also built on the first `recommend`)",
    )
    g = p.add_argument_group("embeddings")
    g.add_argument(
        "--embed", choices=["all", "papers", "sentences"], default="all", help="which nodes get text embeddings"
    )
    g.add_argument("--force", action="store_true", help="re-write every embedding, even where the text is unchanged")
    g.add_argument(
        "--limit",
        type=int,
        help="embed at most N new texts per kind, most-cited papers first; a later run continues (default: all)",
    )
    g = p.add_argument_group("cocitation")
    g.add_argument("--min-count", type=int, default=1, help="smallest co-citation count kept as a CO_CITED edge")
    g.add_argument("--top-m", type=int, default=32, help="co-citation partners stored per paper (cocite_partners)")
    g.add_argument("--power", type=float, default=0.75, help="exponent of the noise distributions (MP-BERT4CR: 0.75)")
    g.add_argument("--resolution", type=float, default=1.0, help="Leiden resolution (higher: more, smaller clusters)")
    g.add_argument(
        "--cluster-top-k",
        type=int,
        default=10,
        help="cluster graph: each paper's K strongest co-citation links (0: every pair; default 10)",
    )
    g.add_argument(
        "--cluster-min-count", type=int, default=1, help="cluster graph: only pairs co-cited at least N times"
    )
    g.add_argument(
        "--seed", type=int, default=0, help="seed of the clustering, the taxonomy fusion and the hyperbolic embedding"
    )
    g.add_argument("--device", choices=["cpu", "cuda"], help="torch device (default: cuda when present, else cpu)")
    g = p.add_argument_group("taxonomy")
    g.add_argument(
        "--fusion",
        choices=["vector", "gat", "appnp"],
        default="vector",
        help="taxonomy fusion: SymTax's vector mean, or a GAT / APPNP trained by link prediction (default: vector)",
    )
    g.add_argument("--top-k", type=int, default=3, help="categories inferred per paper without given ones, at most")
    g.add_argument(
        "--min-score", type=float, help="fixed cosine threshold for inferred categories (default: tuned on unarXive)"
    )
    g.add_argument(
        "--infer-from",
        choices=["auto", "fused", "text"],
        default="auto",
        help="class vectors that inferred categories compare papers with (auto: better P@1 on tuning papers)",
    )
    g = p.add_argument_group("hyperbolic")
    g.add_argument(
        "--dim", type=int, help="dimension of the Poincaré embedding (default: the store's, CITEGRAPH_POINCARE_DIM=16)"
    )
    g.add_argument("--epochs", type=int, default=300, help="Nickel & Kiela refinement epochs after the tree init")
    from api.cli.linkage import add_commands as add_linkage_commands
    from api.cli.linkage import add_cross_encoder_arguments

    g = p.add_argument_group("linkage")
    g.add_argument("--model", help="linker model (default: $CITEGRAPH_CACHE/models/linker.json)")
    add_cross_encoder_arguments(g)
    p.set_defaults(func=cmd_compute)

    add_linkage_commands(sub)

    from api.cli.recommend import add_commands as add_recommend_commands

    add_recommend_commands(sub)

    p = sub.add_parser("stats", help="node and relationship counts")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("cypher", help="run a read-only Cypher query against the store")
    p.add_argument("query", nargs="?", help="the query text")
    p.add_argument("--file", help="read the query from a file")
    p.add_argument(
        "--param", action="append", default=[], metavar="NAME=VALUE", help="query parameter (VALUE as JSON or text)"
    )
    p.add_argument("--format", choices=["table", "json", "csv"], default="table")
    p.set_defaults(func=cmd_cypher)

    from gnn.cocitation.compute import MEASURES
    from gnn.cocitation.export import FORMATS

    p = sub.add_parser("export", help="export tables or co-citation / coupling networks for analysts")
    p.add_argument(
        "kind",
        choices=["tables", "cocitation", "coupling", "neo4j-admin"],
        help="tables: every relationship type as an edge list (OUT is a folder); cocitation: the CO_CITED "
        "network; coupling: bibliographic coupling (computed on demand); neo4j-admin: node and relationship "
        "CSVs for `neo4j-admin database import full` plus OUT/import.sh (OUT is a folder)",
    )
    p.add_argument(
        "out", help="output folder (tables) or file (networks; vosviewer writes OUT_map.txt + OUT_network.txt)"
    )
    p.add_argument("--format", choices=FORMATS, help="graphml|gexf (Gephi), vosviewer, csv, parquet (default csv)")
    p.add_argument("--measure", choices=MEASURES, default="association", help="edge weight of network exports")
    p.add_argument("--min-count", type=int, default=1, help="smallest co-citation/coupling count exported")
    p.add_argument("--seed-paper", help="export only the neighbourhood of this paper (cocitation)")
    p.add_argument("--depth", type=int, default=1, help="hops around --seed-paper (1 or 2)")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("copy", help="copy the whole graph between stores (embedded <-> Neo4j), resumable")
    p.add_argument("--from", dest="source", choices=["embedded", "neo4j"], required=True, help="the store to read")
    p.add_argument("--to", dest="target", choices=["embedded", "neo4j"], required=True, help="the store to write")
    p.add_argument("--from-db", help="embedded source file (default: --db or $CITEGRAPH_DB)")
    p.add_argument("--to-db", help="embedded target file (required with --to embedded)")
    p.add_argument("--batch-size", type=int, default=10_000, help="rows per write transaction (default 10000)")
    p.add_argument(
        "--progress-file", help="where finished labels/types are recorded (default: var/copy-FROM-to-TO.progress.json)"
    )
    p.add_argument("--restart", action="store_true", help="forget earlier progress and copy everything again")
    p.set_defaults(func=cmd_copy)

    p = sub.add_parser("fetch-data", help="download the public corpora (pinned commits, checked digests)")
    p.add_argument("sources", nargs="*", help="which sources (default: all)")
    p.add_argument("--dest", help="data folder to fill (default: $CITEGRAPH_DATA)")
    p.add_argument("--cache", help="download cache (default: $CITEGRAPH_CACHE/downloads)")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for a server")
    p.add_argument("--mirror", help="a server holding <host>/<path> copies of the pinned URLs")
    p.add_argument("--force", action="store_true", help="replace files that exist but differ")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_fetch_data)

    p = sub.add_parser("serve", help="serve the GraphQL API")
    p.add_argument("--host", help="bind address (default: $CITEGRAPH_HOST or 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default: $CITEGRAPH_PORT or 8000)")
    p.set_defaults(func=cmd_serve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING if args.quiet else logging.INFO, format="%(levelname)s %(name)s: %(message)s"
    )
    try:
        return int(args.func(args))
    except CitegraphError as exc:
        if args.debug:
            raise
        print(f"citegraph: error: {exc}", file=sys.stderr)
        return EXIT_DATA if isinstance(exc, DataError) else 1
    except KeyboardInterrupt:
        print("citegraph: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: say so in one line, the traceback is one flag away
        if args.debug:
            raise
        print(
            f"citegraph: internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)",
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":
    sys.exit(main())
