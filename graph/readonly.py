"""What a read-only query may say: an allowlist of reading clauses, checked before the store sees it.

``citegraph cypher`` and every other path that runs a user's Cypher on a read-only store call
:func:`check_read_only` first. A store opened read-only refuses writes to the graph, but not
statements that reach files or the network (``COPY ... TO``, ``EXPORT DATABASE``, ``LOAD FROM`` a
path, ``INSTALL`` an extension) nor ``CHECKPOINT``, which on a read-only LadybugDB fails half-way
and leaves the store needing a read-write open. So the check allows rather than refuses:

* **one statement**; a trailing ``;`` (and comments after it) is fine;
* it **starts with a reading clause** (:data:`READ_STARTS`: ``MATCH``, ``OPTIONAL MATCH``,
  ``UNWIND``, ``WITH``, ``RETURN``, or ``CALL`` of an allowed function);
* no clause keyword in it does more than read: :data:`OTHER_CLAUSES` (``CREATE``, ``MERGE``, ``SET``,
  ``DELETE``, ``REMOVE``, ``LOAD``, ``COPY``, ``CHECKPOINT``, ``ATTACH``, ...) is refused wherever it
  stands, :data:`COMMANDS` (statement-only commands named by common words: ``SHOW``, ``START``) as
  the first word; the refusal names the keyword;
* ``CALL`` names one of the backend's read-only functions (``show_tables``, ``db.labels``, ...),
  and a namespaced function (``apoc.load.json(...)``) is one of :data:`FUNCTION_NAMESPACES`.

The check reads the statement's structure, not a word list. A lexer that splits the text where both
engines split it: strings (``'...'``, ``"..."`` with backslash escapes), comments (``//`` to the end
of the line, ``/* */``, not nested) and backtick-quoted names are skipped, so ``RETURN 'COPY'`` is
fine and ``/* */ COPY`` is not; a number is digits with an optional fraction and exponent, so in
``SKIP 0LOAD FROM ...`` the engine's ``LOAD`` is a word here too; a line comment holding a line break
other than ``\n`` (which the engines read differently) is refused. Then each word is placed by the
grammar: it is a *name* (property, label, relationship type, map key, parameter, alias) and not a
clause only where the grammar allows nothing else:

* right after ``.`` when what precedes the dot is a value (``p.set``; not ``1.LOAD``), after ``:``
  (``(p:Copy)``, ``{create: 1}``), or right before ``:`` or ``.``;
* right after the keyword ``AS``, and ``AS`` is the keyword only where an expression has certainly just
  ended: after ``)``, ``]``, ``}``, a literal (``null``, ``true``, ``false`` too), ``END``, a parameter, a
  quoted name or a property (``[1] AS as``, ``p.id AS set``). After a bare word (``WITH as LOAD ...``) the word may itself be a
  variable called ``as``, so what follows is read as a clause.

A variable named like a writing clause (``RETURN set``, ``x AS set``) is therefore refused; quote it in
backticks. A statement whose first word is no clause this module knows (a typo, or a command of a
newer engine) is handed to the backend's own parser: a parse error is reported as the parser words it,
a statement that parses is refused. The embedded store also asks the engine: the operators of its
``EXPLAIN`` plan must all read and every table function must be a describing one
(:func:`check_plan`), so what this lexer missed is still refused before anything runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from graph.errors import QueryError

# Clauses a read-only query may start with.
READ_STARTS = frozenset({"MATCH", "OPTIONAL", "UNWIND", "WITH", "RETURN", "CALL"})
# Clause and command keywords of LadybugDB's and Neo4j's grammars that do more than read: refused
# wherever they stand (LadybugDB's parser lists its statements after an unknown first word).
OTHER_CLAUSES = frozenset(
    {
        *("CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "FOREACH", "INSERT", "LOAD", "COPY", "USE"),
        *("ALTER", "ATTACH", "BEGIN", "CHECKPOINT", "COMMIT", "DROP", "EXPLAIN", "EXPORT", "IMPORT", "INSTALL"),
        *("PROFILE", "ROLLBACK", "UNINSTALL", "TERMINATE", "GRANT", "DENY", "REVOKE", "DRYRUN"),
    }
)
# Commands that can only start a statement, whose names are common words (``RETURN p.year AS start``):
# refused as the first word only.
COMMANDS = frozenset({"ANALYZE", "COMMENT", "FORCE", "UPDATE", "SHOW", "START", "STOP", "ENABLE", "RENAME", "FINISH"})
# Built-in function namespaces of Neo4j (``date.truncate``, ``point.distance``, ``vector.similarity.cosine``);
# other namespaced functions (plugins such as APOC) may run statements or read files.
FUNCTION_NAMESPACES = frozenset(
    {"date", "datetime", "localdatetime", "localtime", "time", "duration", "point", "vector"}
)
# Table functions of LadybugDB that only describe the database.
EMBEDDED_PROCEDURES = frozenset(
    {"show_tables", "table_info", "show_connection", "db_version", "current_setting", "show_functions"}
)
# Procedures of Neo4j that only describe the graph.
NEO4J_PROCEDURES = frozenset(
    {
        "db.labels",
        "db.relationshiptypes",
        "db.propertykeys",
        "db.schema.visualization",
        "db.schema.nodetypeproperties",
        "db.schema.reltypeproperties",
        "db.index.vector.querynodes",  # nearest neighbours in a vector index (docs/cypher.md)
    }
)

# Operators of LadybugDB's physical plans (``EXPLAIN``) that only read: scans, joins, filters, projections,
# aggregation, ordering, paging, unions, UNWIND and the path operators. Everything else (COPY_TO, INSERT_*,
# SET_*, DELETE_*, MERGE, TRANSACTION, STANDALONE_CALL, INSTALL_EXTENSION, EXPORT_DATABASE, ...) is refused,
# an operator a newer engine adds included, until it is listed here.
EMBEDDED_READ_OPERATORS = frozenset(
    {
        *("AGGREGATE", "AGGREGATE_FINALIZE", "AGGREGATE_SCAN", "COUNT_REL_TABLE", "CROSS_PRODUCT", "EMPTY_RESULT"),
        "FILTER",
        *("FACTORIZED_TABLE_SCAN", "FLATTEN", "HASH_JOIN_BUILD", "HASH_JOIN_PROBE", "INDEX_LOOKUP", "INDEX_SCAN"),
        *("INTERSECT", "INTERSECT_BUILD", "LIMIT", "MULTIPLICITY_REDUCER", "ORDER_BY", "ORDER_BY_MERGE"),
        *("ORDER_BY_SCAN", "PATH_PROPERTY_PROBE", "PRIMARY_KEY_SCAN_NODE_TABLE", "PROJECTION"),
        *("QUERY_PRIMARY_KEY_LOOKUP", "RECURSIVE_EXTEND", "RECURSIVE_JOIN", "RESULT_COLLECTOR", "SCAN_FRONTIER"),
        *("SCAN_MULTI_NODE_TABLES", "SCAN_MULTI_REL_TABLES", "SCAN_NODE_ID", "SCAN_NODE_TABLE", "SCAN_REL_TABLE"),
        *("SEMI_MASKER", "SKIP", "TOP_K", "TOP_K_SCAN", "UNION_ALL_SCAN", "UNWIND", "TABLE_FUNCTION_CALL"),
    }
)
# Table functions a read plan may call: READ_FTABLE (the engine's own scan of an intermediate result, behind
# RETURN, UNWIND and path queries) and the describing functions of EMBEDDED_PROCEDURES.
EMBEDDED_PLAN_FUNCTIONS = frozenset({"READ_FTABLE", *(name.upper() for name in EMBEDDED_PROCEDURES)})
# Keywords that end an expression (``CASE ... END AS x``, ``null AS x``): after them ``AS`` is the keyword.
_VALUE_WORDS = frozenset({"END", "NULL", "TRUE", "FALSE"})
_OPERATOR = re.compile(r"\b([A-Z][A-Z0-9_]*)\[[0-9]+\]")
_SKIP = re.compile(r"Skip:\s*([0-9]+)")
# A TOP_K (ORDER BY + SKIP + LIMIT) SKIP from here on may lie far enough past the last row to kill the process
# (benchmarks/ladybug_skip_crash.py: never below ~11,900 in any shape tried); an ad-hoc query cannot be
# counted first as the store's own paged statements are, so it is refused.
TOP_K_SKIP_LIMIT = 10_000
_FUNCTION = re.compile(r"Function:\s*([A-Za-z0-9_]+)")

_WHAT_TO_DO = (
    "`citegraph cypher` runs read-only queries only: MATCH / OPTIONAL MATCH / UNWIND / WITH / RETURN "
    "(with WHERE, ORDER BY, SKIP, LIMIT, UNION)"
)


@dataclass(frozen=True)
class Token:
    kind: str  # "word", "name" (backtick-quoted), "string", "number", "param" or "symbol"
    text: str
    offset: int  # where it starts in the query text


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
# Characters some Cypher lexers take as a line end inside a ``//`` comment and others do not.
_OTHER_LINE_BREAKS = frozenset("\r\x0b\x0c\x85\u2028\u2029")


def tokens(text: str) -> list[Token]:
    """The query's tokens without whitespace and comments; QueryError for an unterminated string or comment."""
    out: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            odd = next((j for j in range(i, end) if text[j] in _OTHER_LINE_BREAKS), None)
            if odd is not None:
                raise QueryError(
                    f"the comment at offset {i} holds a line break other than a newline (offset {odd}), which "
                    "the engines read differently; end comments with a plain newline"
                )
            i = end + 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise QueryError(f"the query has a comment opened at offset {i} that never closes; close it with */")
            i = end + 2
        elif ch in "'\"":
            j = i + 1
            while j < n and text[j] != ch:
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                raise QueryError(f"the query has a string opened at offset {i} that never closes; close it with {ch}")
            out.append(Token("string", text[i : j + 1], i))
            i = j + 1
        elif ch == "`":
            j = i + 1
            while True:
                j = text.find("`", j)
                if j < 0:
                    raise QueryError(f"the query has a name quoted at offset {i} that never closes; close it with `")
                if text.startswith("``", j):
                    j += 2
                    continue
                break
            out.append(Token("name", text[i : j + 1], i))
            i = j + 1
        elif ch == "$":
            word = _WORD.match(text, i + 1) or _NUMBER.match(text, i + 1)
            end = word.end() if word else i + 1
            out.append(Token("param", text[i:end], i))
            i = end
        elif word := _WORD.match(text, i):
            out.append(Token("word", word.group(), i))
            i = word.end()
        elif number := _NUMBER.match(text, i):
            out.append(Token("number", number.group(), i))
            i = number.end()
        else:
            out.append(Token("symbol", ch, i))
            i += 1
    return out


def _ends_value(toks: list[Token], k: int) -> bool:
    """Whether token ``k`` certainly ends an expression: ``)``, ``]``, ``}``, a literal, a parameter, a quoted
    name or a property (``p.id``). A bare word may be a keyword that starts one (``WITH as``), so it does not."""
    if k < 0:
        return False
    tok = toks[k]
    if tok.kind in ("string", "number", "param", "name"):
        return True
    if tok.kind == "symbol":
        return tok.text in (")", "]", "}")
    if tok.text.upper() in _VALUE_WORDS:
        return True
    return k > 0 and toks[k - 1].kind == "symbol" and toks[k - 1].text == "." and _has_properties(toks, k - 2)


def _has_properties(toks: list[Token], k: int) -> bool:
    """Whether token ``k`` may stand before ``.`` as what has a property: a variable, a quoted name, a parameter
    or a bracket (``p.id``, ``$map.key``, ``(x).y``); not a number (``1.LOAD`` is ``1`` ``.`` ``LOAD``)."""
    if k < 0:
        return False
    tok = toks[k]
    return tok.kind in ("word", "name", "param") or (tok.kind == "symbol" and tok.text in (")", "]", "}"))


def _is_name(toks: list[Token], k: int) -> bool:
    """Whether the word at ``k`` stands where the grammar allows only a name (module docstring)."""
    before = toks[k - 1] if k > 0 else None
    after = toks[k + 1].text if k + 1 < len(toks) and toks[k + 1].kind == "symbol" else ""
    if after in (":", "."):
        return True  # a variable before a label or a property, a map key
    if before is None:
        return False
    if before.kind == "symbol" and before.text == ":":
        return True  # a label, a relationship type, a map value
    if before.kind == "symbol" and before.text == ".":
        return _has_properties(toks, k - 2)  # a property; ``1.LOAD`` is a number and a clause
    return before.kind == "word" and before.text.upper() == "AS" and _ends_value(toks, k - 2)


def _dotted(toks: list[Token], k: int) -> tuple[str, int]:
    """The (possibly dotted) name starting at ``k`` and the index after it."""
    parts = [toks[k].text]
    k += 1
    while k + 1 < len(toks) and toks[k].text == "." and toks[k + 1].kind == "word":
        parts.append(toks[k + 1].text)
        k += 2
    return ".".join(parts), k


def check_read_only(text: str, *, procedures: frozenset[str], parse: Callable[[str], None] | None = None) -> None:
    """Refuse ``text`` with a :class:`QueryError` unless it is one reading statement (module docstring).

    Args:
        text: the user's query.
        procedures: the functions ``CALL`` may name (lower case), e.g. :data:`EMBEDDED_PROCEDURES`.
        parse: the backend's parser, asked only when the first word is no clause this module knows:
            it raises the backend's parse error; a statement it accepts is refused.
    """
    toks = tokens(text)
    ends = [k for k, t in enumerate(toks) if t.kind == "symbol" and t.text == ";"]
    if ends:
        if ends[0] != len(toks) - 1:
            raise QueryError(
                f"the query holds more than one statement (a `;` at offset {toks[ends[0]].offset}); "
                "read-only queries run one statement at a time"
            )
        toks = toks[:-1]
    if not toks:
        raise QueryError("the query is empty; give a statement such as `MATCH (p:Paper) RETURN p.id LIMIT 5`")
    first = toks[0]
    start = first.text.upper() if first.kind == "word" else first.text
    if start not in READ_STARTS:
        if start in OTHER_CLAUSES | COMMANDS:
            raise QueryError(f"`{start}` is refused: the query must only read. {_WHAT_TO_DO}")
        if parse is not None:
            parse(text)  # a typo gets the parser's own message
        raise QueryError(f"the query starts with `{first.text}`, which is not a reading clause. {_WHAT_TO_DO}")
    for k, tok in enumerate(toks):
        if tok.kind != "word":
            continue
        after_call = k > 0 and toks[k - 1].kind == "word" and toks[k - 1].text.upper() == "CALL"
        if (k == 0 or toks[k - 1].text != ".") and not after_call and _calls(toks, k):
            name, _ = _dotted(toks, k)
            if tok.text.lower() not in FUNCTION_NAMESPACES:
                raise QueryError(
                    f"the function `{name}` is refused: namespaced functions other than the built-in "
                    f"{_listed(FUNCTION_NAMESPACES)} may run statements or read files. {_WHAT_TO_DO}"
                )
        if _is_name(toks, k):
            continue
        word = tok.text.upper()
        if word in OTHER_CLAUSES:
            raise QueryError(
                f"`{word}` (offset {tok.offset}) is refused: the query must only read. {_WHAT_TO_DO}; "
                f"if `{tok.text}` is a variable here, quote it in backticks"
            )
        if word == "CALL":
            if k + 1 >= len(toks) or toks[k + 1].kind != "word":
                raise QueryError(f"`CALL` (offset {tok.offset}) must name a function; allowed: {_listed(procedures)}")
            name, _ = _dotted(toks, k + 1)
            if name.lower() not in procedures:
                raise QueryError(
                    f"`CALL {name}` is refused: only functions that describe the database may be called "
                    f"({_listed(procedures)}). {_WHAT_TO_DO}"
                )


def check_plan(plan: str) -> None:
    """Refuse a LadybugDB ``EXPLAIN`` plan that does more than read (:data:`EMBEDDED_READ_OPERATORS`) or calls a
    table function other than :data:`EMBEDDED_PLAN_FUNCTIONS`: the engine's own reading of the statement, asked
    after :func:`check_read_only`, so what the lexer misreads is still refused before anything runs. A plan
    that would crash the engine (a TOP_K with a SKIP of :data:`TOP_K_SKIP_LIMIT` or more) is refused too."""
    text = plan.replace("\u2502", " ")  # the boxes' vertical bars
    operators = _OPERATOR.findall(text)
    if not operators:
        raise QueryError("the engine's plan of the query names no operator; it cannot be checked, so it is refused")
    other = sorted(set(operators) - EMBEDDED_READ_OPERATORS)
    if other:
        raise QueryError(
            f"the engine plans the query with {', '.join(other)}, which does more than read. {_WHAT_TO_DO}"
        )
    skips = [int(found) for found in _SKIP.findall(text)] if "TOP_K" in operators else []
    if skips and max(skips) >= TOP_K_SKIP_LIMIT:
        raise QueryError(
            f"`SKIP {max(skips)}` after `ORDER BY` with a `LIMIT` is refused: LadybugDB 0.22 crashes on such a "
            f"SKIP when it lies past the last row. Keep SKIP under {TOP_K_SKIP_LIMIT}, drop the LIMIT, or page by "
            "the order key instead (`WHERE p.key > $last ORDER BY p.key LIMIT n`)"
        )
    functions = [name.upper() for name in _FUNCTION.findall(text)]
    called = sorted(set(functions) - EMBEDDED_PLAN_FUNCTIONS)
    if called or len(functions) < operators.count("TABLE_FUNCTION_CALL"):
        shown = ", ".join(called) or "a table function the plan does not name"
        raise QueryError(
            f"the engine plans the query with {shown}; only functions that describe the database may be called "
            f"({_listed(EMBEDDED_PROCEDURES)}). {_WHAT_TO_DO}"
        )


def _calls(toks: list[Token], k: int) -> bool:
    """Whether the dotted name at ``k`` is called (``a.b.c(``)."""
    _, after = _dotted(toks, k)
    return after < len(toks) and toks[after].text == "(" and after - k > 1


def _listed(names: frozenset[str]) -> str:
    return ", ".join(sorted(names))


__all__ = [
    "COMMANDS",
    "EMBEDDED_PLAN_FUNCTIONS",
    "EMBEDDED_PROCEDURES",
    "EMBEDDED_READ_OPERATORS",
    "FUNCTION_NAMESPACES",
    "NEO4J_PROCEDURES",
    "OTHER_CLAUSES",
    "READ_STARTS",
    "TOP_K_SKIP_LIMIT",
    "check_plan",
    "check_read_only",
    "tokens",
]
