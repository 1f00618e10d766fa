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

The check is lexical: strings (``'...'``, ``"..."`` with backslash escapes, as the engines read
them), comments (``//``, ``/* */``) and backtick-quoted names are skipped, so ``RETURN 'COPY'`` is
fine and ``/* */ COPY`` is not. A word right after ``.``, ``:``, ``$`` or ``AS``, or right before ``:``
or ``.``, is a name (a property, label, parameter, alias or map key), not a clause. A variable named like a
writing clause (``RETURN set``) is refused; quote it in backticks. A statement whose first word is
no clause this module knows (a typo, or a command of a newer engine) is handed to the backend's own
parser: a parse error is reported as the parser words it, a statement that parses is refused.
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
    }
)

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
_NUMBER = re.compile(r"[0-9][0-9A-Za-z_.]*")


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
            i = n if end < 0 else end + 1
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


def _is_name(toks: list[Token], k: int) -> bool:
    """Whether the word at ``k`` is a name (property, label, map key, namespace), not a clause keyword."""
    before = toks[k - 1].text.upper() if k > 0 and toks[k - 1].kind in ("symbol", "word") else ""
    after = toks[k + 1].text if k + 1 < len(toks) and toks[k + 1].kind == "symbol" else ""
    return before in (".", ":", "AS") or after in (":", ".")


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


def _calls(toks: list[Token], k: int) -> bool:
    """Whether the dotted name at ``k`` is called (``a.b.c(``)."""
    _, after = _dotted(toks, k)
    return after < len(toks) and toks[after].text == "(" and after - k > 1


def _listed(names: frozenset[str]) -> str:
    return ", ".join(sorted(names))


__all__ = [
    "COMMANDS",
    "EMBEDDED_PROCEDURES",
    "FUNCTION_NAMESPACES",
    "NEO4J_PROCEDURES",
    "OTHER_CLAUSES",
    "READ_STARTS",
    "check_read_only",
    "tokens",
]
