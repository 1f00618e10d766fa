"""The import graph of the project's packages: no cycle, and dependencies that point one way.

``api → gnn, loaders → graph → cypher``: nothing imports ``api`` but ``api``; ``graph`` imports
neither ``gnn`` nor ``loaders``; ``loaders`` does not import ``gnn``; ``cypher`` imports nothing of
the project. Inside ``api``, the command line (``api/cli``) sits on top of the server side (everything else in
``api``: the app, the background build, the step registry ``api/pipeline``): the CLI may import the server side
(``serve`` starts the app), never the other way round. Only ``graph`` and ``cypher`` talk to a database: the ``neo4j`` and ``ladybug`` drivers
are imported nowhere else, and no other package holds Cypher text.

Every ``import`` and ``from ... import`` statement counts, wherever it stands: at module level,
inside a function, under ``if TYPE_CHECKING:``. An import is an edge to the module it names;
``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg``. There
is no implicit edge from a submodule to its parent package (Python runs ``pkg/__init__.py`` first,
but that is not a dependency the submodule chose).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("graph", "gnn", "api", "loaders", "cypher")
DRIVERS = ("neo4j", "ladybug")  # database drivers: graph/ (the backends) imports them, no one else
DRIVER_HOMES = ("graph", "cypher")
# Imports that point the wrong way: (importing package, imported package) -> why it is refused.
FORBIDDEN = {
    **{
        (low, "api"): "api faces users; nothing below it may depend on it"
        for low in ("gnn", "graph", "loaders", "cypher")
    },
    ("graph", "gnn"): "the store knows nothing of the models computed on it",
    ("graph", "loaders"): "the store knows nothing of the sources loaded into it",
    ("loaders", "gnn"): "loaders turn sources into tables; models are computed later, on the store",
    **{
        ("cypher", other): "cypher/ holds statements only and imports nothing of the project"
        for other in PACKAGES
        if other != "cypher"
    },
}
# Inside gnn/: each capability's sub-package and the sub-packages it may import (docs/architecture.md, "Dependencies
# point one way"). The modules directly under gnn/ (device, metrics, reports, progress) are shared by all and import
# no sub-package.
GNN_LAYERS: dict[str, frozenset[str]] = {
    "text": frozenset(),
    "cocitation": frozenset(),
    "taxonomy": frozenset({"text"}),
    "hyperbolic": frozenset({"text", "taxonomy"}),
    "mapping": frozenset({"cocitation"}),
    "retrieval": frozenset({"text"}),
    "linkage": frozenset({"text"}),
    "rerank": frozenset({"text", "retrieval", "cocitation", "taxonomy", "hyperbolic"}),
    "recommend": frozenset({"text", "retrieval", "rerank", "cocitation", "taxonomy", "hyperbolic"}),
}
# Cypher clauses as they open a statement: MATCH (..., MERGE (..., UNWIND $..., CREATE (...:, CALL db.
_CYPHER = re.compile(
    r"\b(?:OPTIONAL\s+)?MATCH\s*\(\w*[:)]|\bMERGE\s*\(\w*:|\bUNWIND\s+\$\w+\s+AS\b|\bCREATE\s*\(\w*:|\bCALL\s+db\."
)


@dataclass(frozen=True)
class Import:
    source: str  # the importing module, e.g. "graph.store"
    target: str  # the module imported, e.g. "graph.validate" (or a name outside the project, e.g. "neo4j")
    line: int

    def where(self, root: Path, modules: dict[str, Path]) -> str:
        return f"{modules[self.source].relative_to(root)}:{self.line}"


def find_modules(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """Every module of ``packages`` under ``root`` by dotted name (a package by its own name)."""
    modules: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if any(part.startswith(".") or part == "node_modules" for part in parts):
                continue
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            modules[name] = path
    return modules


def _resolve_relative(module: str, is_package: bool, level: int, name: str | None) -> str:
    """The absolute name of ``from <level dots><name> import ...`` written in ``module``."""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join([*base, name] if name else base)


def imports_in(module: str, path: Path, modules: dict[str, Path]) -> Iterator[Import]:
    """Every import statement of one module, as edges (see the module docstring)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(module, alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _resolve_relative(module, path.name == "__init__.py", node.level, node.module)
            else:
                base = node.module or ""
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                yield Import(module, candidate if candidate in modules else base, node.lineno)


def import_graph(root: Path, packages: Iterable[str]) -> tuple[dict[str, Path], list[Import]]:
    """The project's modules and every import between them or out of them."""
    modules = find_modules(root, packages)
    edges = [edge for name, path in modules.items() for edge in imports_in(name, path, modules)]
    return modules, edges


def _adjacency(modules: Iterable[str], edges: Iterable[Import]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {node: set() for node in sorted(set(modules))}
    for edge in edges:
        if edge.source in graph and edge.target in graph:
            graph[edge.source].add(edge.target)
    return graph


def find_cycles(modules: Iterable[str], edges: Iterable[Import]) -> list[list[str]]:
    """One cycle per tangle (:func:`find_tangles`): each a list of modules whose last imports the first.

    The cycle is a shortest one through the tangle's first module; sorted so the report is stable.
    """
    graph = _adjacency(modules, edges)
    return sorted(_cycle_in(tangle, graph) for tangle in find_tangles(modules, edges))


def find_tangles(modules: Iterable[str], edges: Iterable[Import]) -> list[list[str]]:
    """The strongly connected components of more than one module (or of a module importing itself), sorted.

    Tarjan's algorithm, iterative (no recursion limit whatever the depth of the import chains).
    """
    graph = _adjacency(modules, edges)
    nodes = list(graph)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph[node]:
                    components.append(sorted(component))
    return sorted(components)


def _cycle_in(component: list[str], graph: dict[str, set[str]]) -> list[str]:
    """A shortest cycle through the component's first module (breadth-first inside the component)."""
    members = set(component)
    start = component[0]
    parents: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parents[path[-1]])
                    return path[::-1]
                if child not in parents:
                    parents[child] = node
                    following.append(child)
        frontier = following
    return [start]  # unreachable for a strongly connected component


def describe_cycle(cycle: list[str]) -> str:
    return " -> ".join([*cycle, cycle[0]])


def wrong_way_imports(modules: dict[str, Path], edges: Iterable[Import], root: Path) -> list[str]:
    """Imports that break :data:`FORBIDDEN` or import a driver outside :data:`DRIVER_HOMES`, one line each."""
    problems = []
    for edge in edges:
        source, target = edge.source.split(".")[0], edge.target.split(".")[0]
        why = FORBIDDEN.get((source, target))
        if why is not None:
            problems.append(f"{edge.where(root, modules)}: {edge.source} imports {edge.target}; {why}")
        if target in DRIVERS and source not in DRIVER_HOMES:
            problems.append(f"{edge.where(root, modules)}: {edge.source} imports the {target} driver; only graph/ may")
    return sorted(problems)


def server_imports_of_the_cli(modules: dict[str, Path], edges: Iterable[Import], root: Path) -> list[str]:
    """Imports from the server side of ``api`` (every module of ``api`` outside ``api/cli``) into ``api/cli``,
    one line each: what both need lives below the CLI (the step registry, :mod:`api.pipeline`)."""
    problems = []
    for edge in edges:
        if not _in_package(edge.source, "api") or _in_package(edge.source, "api.cli"):
            continue
        if _in_package(edge.target, "api.cli"):
            problems.append(
                f"{edge.where(root, modules)}: {edge.source} imports {edge.target}; the server side of api must not "
                "import the command line (move what both need below it, e.g. into api/pipeline)"
            )
    return sorted(problems)


def _in_package(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def gnn_upward_imports(modules: dict[str, Path], edges: Iterable[Import], root: Path) -> list[str]:
    """Imports between gnn's sub-packages that :data:`GNN_LAYERS` does not allow, one line each.

    A sub-package missing from :data:`GNN_LAYERS` is reported too: a new capability states where it stands.
    """
    problems = []
    for edge in edges:
        source, target = edge.source.split("."), edge.target.split(".")
        if source[0] != "gnn" or target[0] != "gnn" or len(source) < 2 or len(target) < 2:
            continue
        low, high = source[1], target[1]
        importer_is_package = (root / "gnn" / low).is_dir()
        imported_is_package = (root / "gnn" / high).is_dir()
        if low == high or not imported_is_package:
            continue  # inside one sub-package, or a shared module (device, metrics, reports, progress)
        where = edge.where(root, modules)
        if not importer_is_package:
            problems.append(f"{where}: {edge.source} imports {edge.target}; gnn's shared modules import no capability")
        elif low not in GNN_LAYERS:
            problems.append(f"{where}: gnn.{low} is not in GNN_LAYERS; say which sub-packages it may import")
        elif high not in GNN_LAYERS[low]:
            problems.append(
                f"{where}: {edge.source} imports {edge.target}; gnn.{low} may import only "
                f"{', '.join(sorted(GNN_LAYERS[low])) or 'the shared modules'} (docs/architecture.md)"
            )
    return sorted(problems)


def cypher_outside_the_store(modules: dict[str, Path], root: Path) -> list[str]:
    """String literals that open a Cypher statement in modules outside :data:`DRIVER_HOMES` (docstrings excepted)."""
    problems = []
    for name, path in modules.items():
        if name.split(".")[0] in DRIVER_HOMES:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = set()
        for owner in ast.walk(tree):
            if isinstance(owner, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and owner.body:
                first = owner.body[0]
                if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                    docstrings.add(id(first.value))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Constant) or not isinstance(node.value, str) or id(node) in docstrings:
                continue
            if _CYPHER.search(node.value):
                problems.append(f"{path.relative_to(root)}:{node.lineno}: Cypher text {node.value[:60]!r}")
    return problems


# the project ---------------------------------------------------------------------------------------
def test_the_project_has_no_import_cycle() -> None:
    modules, edges = import_graph(REPO, PACKAGES)
    assert len(modules) > 50  # the walk found the project, not an empty folder
    cycles = find_cycles(modules, edges)
    tangles = [f"  ({len(t)} modules import each other: {', '.join(t)})" for t in find_tangles(modules, edges)]
    assert not cycles, "import cycles:\n" + "\n".join(
        f"{describe_cycle(cycle)}\n{tangle}" for cycle, tangle in zip(cycles, tangles)
    )


def test_dependencies_point_one_way() -> None:
    modules, edges = import_graph(REPO, PACKAGES)
    problems = wrong_way_imports(modules, edges, REPO)
    assert not problems, "imports against the layering:\n" + "\n".join(problems)


def test_the_server_side_of_api_does_not_import_the_cli() -> None:
    modules, edges = import_graph(REPO, PACKAGES)
    assert "api.cli.main" in modules and "api.background" in modules  # both sides were found
    problems = server_imports_of_the_cli(modules, edges, REPO)
    assert not problems, "imports from the server into the CLI:\n" + "\n".join(problems)


def test_gnn_sub_packages_import_only_those_below_them() -> None:
    modules, edges = import_graph(REPO, PACKAGES)
    assert set(GNN_LAYERS) == {p.name for p in (REPO / "gnn").iterdir() if (p / "__init__.py").is_file()}
    problems = gnn_upward_imports(modules, edges, REPO)
    assert not problems, "imports against gnn's layering:\n" + "\n".join(problems)


def test_only_the_store_holds_cypher() -> None:
    modules = find_modules(REPO, PACKAGES)
    problems = cypher_outside_the_store(modules, REPO)
    assert not problems, "Cypher outside graph/ and cypher/:\n" + "\n".join(problems)


# the checker itself, on a tiny tree ----------------------------------------------------------------
def _write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_a_cycle_is_found_and_named_wherever_its_imports_hide(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "graph/__init__.py": "",
            "graph/a.py": "from graph import b\n",  # a module imported by `from package import module`
            "graph/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from graph.c import C\n",
            "graph/c.py": "def f():\n    import graph.a\n",  # inside a function
            "graph/d.py": "from graph.a import x\n",  # outside the cycle, pointing into it
        },
    )
    modules, edges = import_graph(tmp_path, ["graph"])
    cycles = find_cycles(modules, edges)
    assert cycles == [["graph.a", "graph.b", "graph.c"]]
    assert describe_cycle(cycles[0]) == "graph.a -> graph.b -> graph.c -> graph.a"


def test_a_clean_tree_passes_and_submodules_do_not_depend_on_their_package(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "graph/__init__.py": "from graph.store import Store\nfrom graph.errors import Error\n",
            "graph/errors.py": "class Error(Exception): ...\n",
            "graph/store.py": "from graph.errors import Error\nfrom graph import errors\n",
            "cypher/__init__.py": "import re\n",
            "api/__init__.py": "import graph\nfrom graph.store import Store\n",
        },
    )
    modules, edges = import_graph(tmp_path, ["graph", "cypher", "api"])
    assert {(e.source, e.target) for e in edges if e.target in modules} == {
        ("graph", "graph.store"),
        ("graph", "graph.errors"),
        ("graph.store", "graph.errors"),
        ("api", "graph"),
        ("api", "graph.store"),
    }
    assert find_cycles(modules, edges) == []
    assert wrong_way_imports(modules, edges, tmp_path) == []


def test_a_self_import_and_two_separate_cycles_are_each_named(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "gnn/__init__.py": "",
            "gnn/x.py": "import gnn.x\n",
            "gnn/p/__init__.py": "from . import q\n",  # relative: gnn.p.q
            "gnn/p/q.py": "from .. import p\n",  # relative: gnn.p
        },
    )
    modules, edges = import_graph(tmp_path, ["gnn"])
    assert [describe_cycle(c) for c in find_cycles(modules, edges)] == ["gnn.p -> gnn.p.q -> gnn.p", "gnn.x -> gnn.x"]


def test_imports_against_the_layering_and_drivers_and_cypher_are_reported(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "api/__init__.py": "",
            "graph/__init__.py": "import neo4j\n",
            "graph/store.py": "from gnn.model import Model\n",
            "gnn/__init__.py": "",
            "gnn/model.py": "def f():\n    from api import app\n",
            "gnn/reader.py": 'import ladybug\nQUERY = "MATCH (p:Paper) RETURN p"\n\ndef g():\n    """MATCH (p:Paper) in a docstring is prose."""\n',
            "cypher/__init__.py": "from graph.errors import QueryError\n",
            "loaders/__init__.py": "import gnn\n",
        },
    )
    modules, edges = import_graph(tmp_path, PACKAGES)
    problems = wrong_way_imports(modules, edges, tmp_path)
    assert [p.split(": ")[0] for p in problems] == [
        "cypher/__init__.py:1",
        "gnn/model.py:2",
        "gnn/reader.py:1",
        "graph/store.py:1",
        "loaders/__init__.py:1",
    ]
    assert "imports the ladybug driver" in problems[2] and "api faces users" in problems[1]
    assert [p.split(": ")[0] for p in cypher_outside_the_store(modules, tmp_path)] == ["gnn/reader.py:2"]


def test_an_upward_import_inside_gnn_is_reported(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "gnn/__init__.py": "",
            "gnn/device.py": "from gnn.text import encoder\n",  # shared module importing a capability
            "gnn/text/__init__.py": "",
            "gnn/text/encoder.py": "import gnn.device\n",  # a shared module: allowed
            "gnn/retrieval/__init__.py": "from gnn.text import encoder\n",  # allowed: retrieval sits on text
            "gnn/retrieval/index.py": "from gnn.recommend.service import Service\n",  # upward
            "gnn/recommend/__init__.py": "",
            "gnn/recommend/service.py": "from gnn.retrieval import index\n",
            "gnn/novel/__init__.py": "from gnn.text import encoder\n",  # not declared in GNN_LAYERS
        },
    )
    modules, edges = import_graph(tmp_path, ["gnn"])
    problems = gnn_upward_imports(modules, edges, tmp_path)
    assert [p.split(": ")[0] for p in problems] == [
        "gnn/device.py:1",
        "gnn/novel/__init__.py:1",
        "gnn/retrieval/index.py:1",
    ]
    assert "gnn.retrieval may import only text" in problems[2]


def test_an_import_of_the_cli_from_the_server_side_is_reported(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "api/__init__.py": "",
            "api/app.py": "def f():\n    from api.cli.linkage import load_linker\n",  # inside a function
            "api/background.py": "from api.cli import build\n",  # `from package import module`
            "api/pipeline/__init__.py": "import api.cli\n",  # the package itself
            "api/pipeline/steps.py": "from api.settings import AppSettings\n",  # server to server: allowed
            "api/settings.py": "",
            "api/client.py": "import api.clients\n",  # a name that only starts like the CLI's
            "api/clients.py": "",
            "api/cli/__init__.py": "from api.cli.main import main\n",
            "api/cli/main.py": "from api import app\nfrom api.pipeline import steps\n",  # the CLI on the server: allowed
            "api/cli/linkage.py": "",
            "api/cli/build.py": "",
        },
    )
    modules, edges = import_graph(tmp_path, ["api"])
    problems = server_imports_of_the_cli(modules, edges, tmp_path)
    assert [p.split(": ")[0] for p in problems] == ["api/app.py:2", "api/background.py:1", "api/pipeline/__init__.py:1"]
    assert "api.background imports api.cli.build" in problems[1]
