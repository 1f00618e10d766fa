"""``citegraph stats``, ``citegraph check``, ``citegraph cypher`` and ``citegraph export``: reading the store.

``cypher --recipe NAME`` runs a recipe of ``cypher/explore/`` by name, read from the installed
``cypher`` package (so from any working directory), with its ``--param`` values typed and checked
against the recipe's ``//`` header as the GraphQL ``explore`` field checks them (:mod:`api.explore`);
``--recipe list`` prints every recipe with its description, parameters and columns.

``stats --files`` adds the files the store consists of (:class:`graph.files.StoreFiles`): each
artefact's path, size and what it was built from. ``check`` (and ``stats --check``) reads every
node and relationship and reports each value no step writes (:mod:`graph.check`): a damaged
store exits 65 with what is damaged and what to do.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import cypher
from api import explore
from api.cli.common import (
    EXIT_DATA,
    INT64,
    TABLE_WIDTH,
    format_rows,
    open_from_args,
    paper_keys,
    parse_param,
    store_files,
)
from gnn.cocitation.compute import MEASURES
from gnn.cocitation.export import FORMATS, ExportReport, export_cocitation, export_coupling
from gnn.mapping.export import export_network
from gnn.mapping.historiograph import historiograph, write_historiograph
from gnn.mapping.keywords import KIND_FALLBACK
from gnn.mapping.networks import MAX_NODES, MapUnit, Measure, NetworkFilters
from gnn.mapping.slices import SlicesReport, export_slices
from gnn.mapping.thematic import DEFAULT_TOP, thematic_map, write_thematic_map
from graph import Completeness, GraphStore
from graph.check import check_store
from graph.errors import ConfigError
from graph.files import FileEntry, ModelFile, format_size
from graph.labels import RESULT_LABELS, complete_result_labels
from graph.neo4j_admin import export_neo4j_admin


def model_files() -> tuple[ModelFile, ...]:
    """The models the capabilities keep under ``<cache>/models/``, in the order ``stats --files`` lists them.

    Imported here, when ``--files`` asks for them: the capabilities' modules load torch, which plain ``stats``
    does without."""
    from gnn.hyperbolic.compute import HYPERBOLIC_CLASSES, HYPERBOLIC_MAP
    from gnn.linkage.cross_encoder import CROSS_ENCODER_FILE
    from gnn.linkage.model import LINKER_FILE
    from gnn.text.encoder import FINE_TUNED_ENCODERS

    return (LINKER_FILE, CROSS_ENCODER_FILE, HYPERBOLIC_CLASSES, HYPERBOLIC_MAP, FINE_TUNED_ENCODERS)


def cmd_stats(args: argparse.Namespace) -> int:
    with open_from_args(args, read_only=True) as store:
        stats: dict[str, Any] = store.stats()
        completeness = store.completeness()
        files = store_files(store, args).describe(model_files()) if args.files else None
        check = check_store(store) if args.check else None
    if args.json:
        stats["completeness"] = {row.property: row.as_dict() for row in completeness}
        if files is not None:
            stats["files"] = {entry.name: entry.as_dict() for entry in files}
        if check is not None:
            stats["check"] = {"sound": check.sound, "findings": [f.line() for f in check.findings]}
        print(json.dumps(stats, indent=2))
        return 0 if check is None or check.sound else EXIT_DATA
    for section, counts in stats.items():
        print(section)
        for name, count in counts.items():
            print(f"  {name:<16}{count:>12,}")
    print(completeness_table(completeness))
    if files is not None:
        print(files_table(files))
    if check is not None:
        print(check.summary())
    return 0 if check is None or check.sound else EXIT_DATA


def cmd_check(args: argparse.Namespace) -> int:
    """``citegraph check``: every computed property in its range, every label's keys adding up (exit 65 if not)."""
    with open_from_args(args, read_only=True) as store:
        report = check_store(store, progress=None if args.quiet else lambda name: print(f"checking {name}"))
    print(report.summary())
    return 0 if report.sound else EXIT_DATA


def completeness_table(rows: list[Completeness]) -> str:
    """The ``completeness`` section of ``stats``: ``have / of (percent)`` per computed property."""
    lines = ["completeness"]
    for row in rows:
        # tenths of a percent rounded down (in integers: no float error), so that a property still
        # missing on some nodes never reads 100.0%
        tenths = row.have * 1000 // row.of if row.of else 1000
        lines.append(f"  {row.property:<20}{row.have:>12,} / {row.of:<12,} ({tenths // 10}.{tenths % 10}%)")
    return "\n".join(lines)


def files_table(entries: list[FileEntry]) -> str:
    """The ``files`` section of ``stats --files``: one line per artefact (absent ones say so)."""
    lines = ["files"]
    for entry in entries:
        if entry.path is None:
            lines.append(f"  {entry.name:<18}{'-':>10}  (none: a server store has no files beside it)")
            continue
        size = format_size(entry.size) if entry.exists else "absent"
        built = ""
        if entry.built_from is not None:
            state = {True: ", current", False: ", the store changed since", None: ""}[entry.current]
            built = f"  [built from {entry.built_from}{state}]"
        lines.append(f"  {entry.name:<18}{size:>10}  {entry.path}{built}")
    return "\n".join(lines)


def cmd_cypher(args: argparse.Namespace) -> int:
    given = [
        what for what, value in (("a query", args.query), ("--file", args.file), ("--recipe", args.recipe)) if value
    ]
    if len(given) != 1:
        raise ConfigError(
            "give one of a query string, --file FILE or --recipe NAME"
            + (f" (got {' and '.join(given)})" if given else "")
            + "; `citegraph cypher --recipe list` lists the packaged recipes"
        )
    if args.recipe == "list":
        print(recipe_list(args.format))
        return 0
    if args.recipe:
        text, params = recipe_statement(args.recipe, args.param)
    else:
        text = read_query_file(Path(args.file)) if args.file else args.query
        params = dict(parse_param(p) for p in args.param)
    with open_from_args(args, read_only=True) as store:
        if args.recipe:
            # The recipes' paper parameters take any id a source gave a paper (a DOI, an arXiv id, a W-id, ...).
            for name in PAPER_PARAMETERS & params.keys():
                if isinstance(params[name], str):
                    params[name] = paper_keys(store, [params[name]], f"--param {name}")[0]
        columns, rows = store.read_only_query(text, params)
        if any(label in columns and of in columns for label, of in RESULT_LABELS):
            # a paper known by its authors only: its first author and year, not its id (graph/labels.py, step 5)
            records = complete_result_labels([dict(zip(columns, row)) for row in rows], store.query)
            rows = [[record[column] for column in columns] for record in records]
    print(format_rows(columns, rows, args.format, width=args.width))
    return 0


# Recipe parameters that name a Paper (cypher/explore/): resolved through Paper keys and Alias nodes.
HISTORIOGRAPH_TOP = 20  # export historiograph: the records most cited inside the collection (Garfield's usual 20-30)
NETWORK_TOP = 500  # export network: nodes of a map unless --top says (GraphQL mapNetwork's default)
PAPER_PARAMETERS = frozenset({"paper_id", "paper_a", "paper_b", "from_id", "to_id"})


def read_query_file(path: Path) -> str:
    """The text of ``--file``; a path that is not a readable UTF-8 file is a :class:`ConfigError` saying so."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        recipe = path.name.removesuffix(".cypher")
        instead = f"--recipe {recipe}" if recipe in explore.catalogue() else "--recipe NAME"
        where = "" if path.is_absolute() else f" (a relative path is read from {Path.cwd()})"
        raise ConfigError(
            f"--file {path}: no such file{where}; a packaged recipe runs from any folder as `citegraph cypher "
            f"{instead}` (`citegraph cypher --recipe list` lists them)"
        ) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"--file {path} is not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8"
        ) from None
    except OSError as exc:  # a folder, no permission
        raise ConfigError(f"--file {path}: cannot read it ({exc.strerror}); pass a .cypher file you can read") from None


def _recipe(name: str) -> explore.ExploreQuery:
    """The packaged recipe ``name`` (``coauthors``; ``coauthors.cypher`` and ``cypher/explore/coauthors.cypher`` too)."""
    short = Path(name).name.removesuffix(".cypher")
    query = explore.catalogue().get(short)
    if query is None:
        raise ConfigError(
            f"no recipe named {name!r}; known: {', '.join(explore.catalogue())} "
            "(`citegraph cypher --recipe list` shows their parameters)"
        )
    return query


def recipe_statement(name: str, raw_params: list[str]) -> tuple[str, dict[str, Any]]:
    """The text of recipe ``name`` (from the installed package, whatever the working directory) and its
    parameters from ``--param NAME=VALUE``, each read as the recipe's header types it.

    A string parameter takes VALUE as it is (or the string of a JSON string: ``'sentence_id="a#1"'``), so
    ids that look like numbers need no quotes; an integer parameter needs an integer. ``$limit`` may be left
    out (:data:`api.explore.DEFAULT_LIMIT`). An unknown, missing or ill-typed parameter is a
    :class:`ConfigError` naming what the recipe takes.
    """
    query = _recipe(name)
    given: dict[str, Any] = {}
    for text in raw_params:
        key, sep, raw = text.partition("=")
        parameter = query.parameter(key)
        if not sep or parameter is None:
            raise ConfigError(
                f"recipe {query.name} takes no parameter {key!r}; it takes: {_signature(query)} "
                "(give each as --param NAME=VALUE)"
            )
        given[key] = _recipe_value(query, parameter, raw)
    try:
        values = explore.validate(query, given, max_limit=INT64[1])
    except explore.ExploreArgumentError as exc:
        raise ConfigError(f"{exc}; run it as `citegraph cypher --recipe {query.name} {_signature(query)}`") from None
    return cypher.load(f"{explore.FOLDER}/{query.name}").text, values


def _recipe_value(query: explore.ExploreQuery, parameter: explore.ExploreParameter, raw: str) -> Any:
    if parameter.type == "int":
        try:
            return int(raw)
        except ValueError:
            raise ConfigError(f"recipe {query.name}: --param {parameter.name} takes an integer, got {raw!r}") from None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return raw
    return value if isinstance(value, str) else raw


def _signature(query: explore.ExploreQuery) -> str:
    """``--param paper_id=TEXT [--param limit=INTEGER]``: the parameters as a command line takes them."""
    parts = []
    for p in query.parameters:
        part = f"--param {p.name}={'INTEGER' if p.type == 'int' else 'TEXT'}"
        parts.append(part if p.required else f"[{part}]")
    return " ".join(parts) or "(no parameters)"


def _header_lines(name: str) -> tuple[list[str], str | None]:
    """The description of a recipe (its header lines before ``parameters:``) and the ``--param`` part of its example."""
    lines = [line.lstrip("/").strip() for line in cypher.load(f"{explore.FOLDER}/{name}").header.splitlines()]
    keys = [text.split(":", 1)[0].lower() for text in lines]
    end = keys.index("parameters") if "parameters" in keys else len(lines)
    examples = [
        text[text.index("--param") :] for text, key in zip(lines, keys) if key == "example" and "--param" in text
    ]
    return [text for text in lines[:end] if text], examples[0] if examples else None


def recipe_list(fmt: str) -> str:
    """Every packaged recipe with its description, parameters and columns (``--format json``: as objects)."""
    entries: list[dict[str, Any]] = []
    for query in explore.catalogue().values():
        description, example = _header_lines(query.name)
        params: list[dict[str, Any]] = [
            {
                "name": p.name,
                "type": "integer" if p.type == "int" else "text",
                "required": p.required,
                "description": p.description,
            }
            | ({} if p.required else {"default": explore.DEFAULT_LIMIT})
            for p in query.parameters
        ]
        run = f"citegraph cypher --recipe {query.name} " + (example or _signature(query))
        entries.append(
            {
                "name": query.name,
                "description": " ".join(description),
                "parameters": params,
                "columns": list(query.columns),
                "example": run.strip(),
            }
        )
    if fmt == "json":
        return json.dumps(entries, indent=2)
    if fmt == "csv":
        raise ConfigError("`--recipe list` prints a table or JSON (--format json)")
    blocks = []
    for entry in entries:
        lines = [f"{entry['name']}: {entry['description']}"]
        for p in entry["parameters"]:
            note = "" if p["required"] else f", optional, default {p['default']}"
            about = f": {p['description']}" if p["description"].lower() not in ("", "integer", "integers") else ""
            lines.append(f"    ${p['name']} ({p['type']}{note}){about}")
        lines.append(f"    returns: {', '.join(entry['columns'])}")
        lines.append(f"    e.g. {entry['example']}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + f"\n\n({len(entries)} recipes, in {explore.FOLDER}/ of the installed cypher package)"


def cmd_export(args: argparse.Namespace) -> int:
    out = Path(args.out)
    with open_from_args(args, read_only=True) as store:
        if args.kind == "tables":
            fmt = args.format or "csv"
            if fmt not in ("csv", "parquet"):
                raise ConfigError(f"`export tables` writes csv or parquet, not {fmt}")
            out.mkdir(parents=True, exist_ok=True)
            for path, rows in export_tables(store, out, fmt):
                print(f"{path}\t{rows} rows")
            return 0
        if args.kind == "neo4j-admin":
            print(export_neo4j_admin(store, out, progress=not args.quiet).summary())
            return 0
        if args.kind == "thematic-map":
            filters = NetworkFilters(
                year_min=args.year_min,
                year_max=args.year_max,
                min_count=args.keyword_min_count,
                top=args.keyword_top,
                min_freq=args.keyword_min_freq,
            )
            themes = thematic_map(store, filters, args.keyword_kinds, resolution=args.resolution)
            path = write_thematic_map(themes, out)
            print(f"{themes.summary()}\n-> {path}")
            return 0
        if args.kind == "slices":
            print(export_time_slices(store, out, args).summary())
            return 0
        if args.kind == "historiograph":
            graph = historiograph(
                store, top_n=HISTORIOGRAPH_TOP if args.top is None else args.top, min_lcs=args.min_lcs
            )
            paths = write_historiograph(graph, out, args.format or "csv")
            print(f"{graph.summary()} -> {', '.join(map(str, paths))}")
            return 0
        if args.kind == "network":
            print(_export_network(store, args, out).summary())
            return 0
        options = {"fmt": args.format or "csv", "measure": args.measure, "min_count": args.min_count}
        if args.kind == "cocitation":
            seed = paper_keys(store, [args.seed_paper], "--seed-paper")[0] if args.seed_paper else None
            years = {"year_min": args.year_min, "year_max": args.year_max}
            report = export_cocitation(store, out, seed_paper=seed, depth=args.depth, **years, **options)
        else:
            if args.seed_paper:
                raise ConfigError("--seed-paper applies to `export cocitation` only")
            if args.year_min is not None or args.year_max is not None:
                raise ConfigError("--year-min/--year-max apply to `export cocitation` only")
            report = export_coupling(store, out, **options)
    print(report.summary())
    return 0


def _export_network(store: GraphStore, args: argparse.Namespace, out: Path) -> ExportReport:
    """``export network --unit U``: one unit's science map (gnn.mapping) under the filters of the flags."""
    if args.seed_paper or args.depth != 1:
        raise ConfigError("`export network` takes --seed (a node id of the map), not --seed-paper/--depth")
    if args.measure not in {m.value for m in Measure}:
        raise ConfigError(f"`export network` weighs links by {', '.join(m.value for m in Measure)}, not {args.measure}")
    filters = NetworkFilters(
        year_min=args.year_min,
        year_max=args.year_max,
        min_count=args.min_count,
        measure=Measure(args.measure),
        top=NETWORK_TOP if args.top is None else args.top,
        min_freq=args.min_freq,
        seed=args.seed,
        cluster=args.cluster,
        all_authors=args.all_authors,
    )
    return export_network(store, MapUnit(args.unit), filters, out, args.format or "csv")


def export_time_slices(store: GraphStore, out: Path, args: argparse.Namespace) -> SlicesReport:
    """``export slices``: the ``--unit`` network of every ``--slice``-year slice of ``--from``..``--to``, and the merge."""
    if args.year_from is None or args.year_to is None:
        raise ConfigError(
            "`export slices` needs --from and --to (the first and last citing year), e.g. --from 2000 --to 2020"
        )
    measures = [m.value for m in Measure]
    if args.measure not in measures:
        raise ConfigError(f"`export slices` weighs links by one of {', '.join(measures)}, not {args.measure}")
    seed = paper_keys(store, [args.seed_paper], "--seed-paper")[0] if args.seed_paper else None
    filters = NetworkFilters(
        min_count=args.min_count, measure=Measure(args.measure), top=args.nodes, seed=seed, min_freq=args.min_freq
    )
    return export_slices(
        store,
        MapUnit(args.unit),
        out,
        first=args.year_from,
        last=args.year_to,
        slice_years=args.slice,
        fmt=args.format or "csv",
        filters=filters,
    )


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


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``stats``, ``cypher`` and ``export``."""
    p = sub.add_parser("stats", help="node and relationship counts, and how complete each computed property is")
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--files",
        action="store_true",
        help="also the files beside the store and under the cache (index, profiles, reranker, cluster labels, "
        "models, caches): path, size, and what each was built from",
    )
    p.add_argument("--check", action="store_true", help="also read every value and report impossible ones (`check`)")
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser(
        "check",
        help="read every node and relationship and report values no step writes (NaN, out of range): "
        "a damaged store exits 65",
    )
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("cypher", help="run a read-only Cypher query (or a packaged recipe) against the store")
    p.add_argument("query", nargs="?", help="the query text")
    p.add_argument("--file", help="read the query from a file")
    p.add_argument(
        "--recipe",
        metavar="NAME",
        help="run a packaged recipe of cypher/explore/ by name, from any folder ('list': every recipe with its "
        "parameters)",
    )
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="query parameter (VALUE as JSON or text; for a recipe, as its header types it)",
    )
    p.add_argument(
        "--format",
        choices=["table", "json", "csv"],
        default="table",
        help="table (the default), json or csv; nodes, relationships and paths come as maps in each",
    )
    p.add_argument(
        "--width",
        type=int,
        default=TABLE_WIDTH,
        metavar="N",
        help=f"the table format cuts longer cells to N characters ending in '…' (default {TABLE_WIDTH}; 0: never); "
        "id columns (id, *_id, doi, code) are never cut",
    )
    p.set_defaults(func=cmd_cypher)

    p = sub.add_parser("export", help="export tables or co-citation / coupling networks for analysts")
    p.add_argument(
        "kind",
        choices=[
            "tables",
            "cocitation",
            "coupling",
            "network",
            "historiograph",
            "thematic-map",
            "slices",
            "neo4j-admin",
        ],
        help="tables: every relationship type as an edge list (OUT is a folder); cocitation: the CO_CITED "
        "network; coupling: bibliographic coupling (computed on demand); network: the science map of --unit "
        "(references, authors, sources, co-authors, keywords, ...: docs/cocitation.md); historiograph: the "
        "direct-citation chronology of the --top records most cited inside the collection (csv or graphml); "
        "thematic-map: keyword clusters with Callon centrality, density and quadrant (OUT.csv or OUT.json; computed "
        "on demand with the --keyword-* filters); slices: the --unit network of each --slice-year slice of "
        "--from..--to and their merge, each link with its first slice (OUT is a folder); neo4j-admin: node and relationship "
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
    p.add_argument(
        "--top",
        type=int,
        help=f"historiograph: the N records with the most local citations (default {HISTORIOGRAPH_TOP}); network: "
        f"the N heaviest nodes (default {NETWORK_TOP}, at most {MAX_NODES})",
    )
    p.add_argument(
        "--unit",
        choices=[u.value for u in MapUnit],
        default=MapUnit.REFERENCES.value,
        help="network, slices: what a node is (default references)",
    )
    p.add_argument("--seed", help="network: keep this node (its id in the map) and its partners only")
    p.add_argument("--cluster", type=int, help="network: keep this cluster's members only (references)")
    p.add_argument(
        "--all-authors",
        action="store_true",
        help="network --unit authors: every author of a cited work, not just the first",
    )
    p.add_argument(
        "--min-lcs", type=int, default=1, help="historiograph: only records cited N times inside the collection"
    )
    p.add_argument(
        "--year-min",
        type=int,
        help="cocitation, network, thematic-map: count only (citing) papers published in or after this year "
        "(cocitation: counts from the citations; the strengths stay the stored all-years values)",
    )
    p.add_argument(
        "--year-max",
        type=int,
        help="cocitation, network, thematic-map: count only (citing) papers published in or before this year",
    )
    p.add_argument(
        "--keyword-min-count",
        type=int,
        default=NetworkFilters().min_count,
        help="thematic-map: keep links of keywords that share at least N documents",
    )
    p.add_argument(
        "--keyword-top",
        type=int,
        default=DEFAULT_TOP,
        help=f"thematic-map: the N keywords with the most documents (bibliometrix: {DEFAULT_TOP})",
    )
    p.add_argument(
        "--keyword-min-freq",
        type=int,
        default=NetworkFilters().min_freq,
        help="thematic-map: only keywords of at least N documents (bibliometrix's minfreq)",
    )
    p.add_argument(
        "--min-freq",
        type=int,
        default=NetworkFilters().min_freq,
        help="network, slices: only nodes of at least N documents (keywords: occurrences, bibliometrix's minfreq; "
        "cited units: citations; co-authorship: documents; coupling: total link strength)",
    )
    p.add_argument(
        "--keyword-kinds",
        nargs="+",
        choices=KIND_FALLBACK,
        help="thematic-map: which keywords (default: author keywords)",
    )
    p.add_argument("--resolution", type=float, default=1.0, help="thematic-map: Leiden resolution of the clusters")
    p.add_argument("--from", dest="year_from", type=int, help="slices: the first citing year")
    p.add_argument("--to", dest="year_to", type=int, help="slices: the last citing year")
    p.add_argument("--slice", type=int, default=1, help="slices: years per slice (CiteSpace: 1 or 2)")
    p.add_argument(
        "--nodes", type=int, default=NetworkFilters().top, help="slices: the most nodes per slice, by weight"
    )
    p.set_defaults(func=cmd_export)


__all__ = [
    "add_commands",
    "cmd_check",
    "cmd_cypher",
    "cmd_export",
    "cmd_stats",
    "completeness_table",
    "export_tables",
    "files_table",
]
