"""A generated corpus of Cypher statements for the read-only guard (:mod:`graph.readonly`).

:func:`refused_statements` puts every statement that writes, reaches a file or calls a table function behind
every reading preamble that can hide it (a variable named ``as``, a number glued to the next keyword, a
comment, an alias named like a clause) in several spellings (case, separators, comments between words).
:func:`read_statements` puts reading clauses together with keywords used as names (backticks, aliases after a
value, map keys, labels), strings and comments that hold clause words, unicode and mixed case. The guard must
refuse every statement of the first kind the engine would run, and accept every one of the second.
"""

from __future__ import annotations

from itertools import product

from graph import GraphStore
from graph.errors import CitegraphError, QueryError
from graph.readonly import EMBEDDED_PROCEDURES, check_plan, check_read_only

# Statements that do more than read; {file} is a readable file, {out} a path that must stay unwritten.
PAYLOADS = [
    "LOAD FROM '{file}' (header = false, delim = ':') RETURN *",
    "LOAD WITH HEADERS (a STRING) FROM '{file}' RETURN *",
    "CALL clear_warnings() RETURN 1 AS one",
    "CALL show_warnings() RETURN *",
    "CALL read_csv_serial('{file}') RETURN *",
    "COPY (MATCH (p:Paper) RETURN p.id) TO '{out}'",
    "CREATE (:Paper {{id: 'forged'}})",
    "MERGE (:Paper {{id: 'forged'}})",
    "MATCH (p:Paper) SET p.title = 'x'",
    "MATCH (p:Paper) DELETE p",
    "MATCH (p:Paper) DETACH DELETE p",
    "MATCH (p:Paper) REMOVE p.title",
    "CHECKPOINT",
    "INSTALL httpfs",
    "LOAD EXTENSION httpfs",
    "EXPORT DATABASE '{out}'",
    "CALL threads = 1",
    "ATTACH '{out}' AS other (dbtype lbug)",
    "BEGIN TRANSACTION",
]

# Reading preambles after which a clause may follow; each can hide the next word from a word list.
PREAMBLES = [
    "",
    "MATCH (p:Paper) WITH p ",
    "UNWIND [1] AS as WITH as ",
    "UNWIND [1] AS as WITH as AS as ",
    "WITH 1 AS as ",
    "UNWIND [1] AS x WITH x AS set ",
    "UNWIND [1] AS x WITH x SKIP 0",
    "UNWIND [1] AS x WITH x LIMIT 1",
    "UNWIND [1] AS x WITH x WHERE x = 1",
    "UNWIND [1] AS x WITH x WHERE x = 1.0",
    "UNWIND [1] AS x WITH x WHERE x = 1e0",
    "UNWIND [1] AS x WITH x WHERE x = $one ",
    "UNWIND [1] AS x WITH x WHERE x = 'a' ",
    "UNWIND [1] AS `as` WITH `as` ",
    "UNWIND [1] AS x WITH x /* c */ ",
    "UNWIND [1] AS x WITH x // c\n",
    "OPTIONAL MATCH (p:Paper) WITH p.id AS as ",
    "MATCH (as:Paper) WITH as ",
    "UNWIND [1] AS x WITH x.y AS z, x ",
    "RETURN 1 AS x UNION ALL ",
]


def _spellings(statement: str) -> list[str]:
    """The statement as written, lower-cased keywords, and with a comment or a tab between its first two words."""
    first, _, rest = statement.partition(" ")
    return [
        statement,
        f"{first.lower()} {rest}",
        f"{first[:1]}{first[1:].lower()}/* x */ {rest}" if rest else first.title(),
        f"{first}\t\n{rest}",
    ]


def refused_statements(file: str, out: str) -> list[str]:
    """Every payload behind every preamble in every spelling (deduplicated, in order)."""
    made = [
        preamble + spelled
        for preamble, payload in product(PREAMBLES, PAYLOADS)
        for spelled in _spellings(payload.format(file=file, out=out))
    ]
    return list(dict.fromkeys(made))


# Reading statements with a slot {name} for a name that looks like a clause keyword, and their parameters.
READ_TEMPLATES = [
    "MATCH ({name}:Paper) RETURN {name}.id AS id",
    "MATCH (p:Paper) RETURN p.id AS {name}",
    "MATCH (p:Paper) RETURN p.id AS {name} ORDER BY {name} SKIP 1 LIMIT 2",
    "UNWIND [1, 2] AS {name} RETURN {name}",
    "WITH {{{name}: 1}} AS m RETURN m.{name} AS v",
    "MATCH (p:Paper)-[{name}:CITES]->(q:Paper) RETURN count({name}) AS n",
    "OPTIONAL MATCH (p:Paper) WHERE p.year > $year RETURN 'a {name} b' AS s, p.id AS id",
    'RETURN "{name} \\" {name}" AS s',
    "RETURN 'it\\'s {name}' AS s // {name} FROM x",
    "/* {name} FROM '/etc/passwd' */ MATCH (p:Paper) RETURN count(*) AS n",
    "MATCH (p:Paper) WITH p.year AS y, count(*) AS {name} RETURN y, {name} ORDER BY y",
    "MATCH (p:Paper) RETURN CASE WHEN p.year > 2000 THEN 'new' ELSE 'old' END AS {name}",
    "RETURN 1 AS {name} UNION ALL RETURN 2 AS {name}",
    "CALL show_tables() WITH name AS {name} RETURN {name}",
    "MATCH (p:Paper) RETURN size([1, 2]) AS {name}, p.id",
]
# Names that look like clause keywords, as a query may use them: quoted in backticks wherever they stand,
# or bare where only a name can stand (the templates' alias, key and label slots tolerate them bare only
# after a value; elsewhere the bare ones are left out below).
KEYWORD_NAMES = ["load", "copy", "create", "set", "call", "delete", "merge", "checkpoint", "as", "with", "return"]
BARE_ONLY_AFTER_VALUE = {"MATCH (p:Paper) RETURN p.id AS {name}", "RETURN 1 AS {name} UNION ALL RETURN 2 AS {name}"}
PLAIN_NAMES = ["x", "é", "über", "MiXeD", "as"]
# Words LadybugDB's grammar never takes as a bare name (a parse error there; quoted, they are fine).
RESERVED = {"create", "with"}


def read_statements() -> list[str]:
    """Reading statements: every template with backticked keyword names, plain and unicode names, mixed case."""
    made: list[str] = []
    for template in READ_TEMPLATES:
        for keyword in KEYWORD_NAMES:
            made.append(template.format(name=f"`{keyword}`"))
            if template in BARE_ONLY_AFTER_VALUE and keyword not in RESERVED:
                made.append(template.format(name=keyword))
        for plain in PLAIN_NAMES:
            if plain.isascii():
                made.append(template.format(name=plain))
            else:
                made.append(template.format(name=f"`{plain}`"))
        made.append(template.format(name="x").replace("MATCH", "match").replace("RETURN", "ReTuRn"))
    return list(dict.fromkeys(made))


# Parameters the corpus's statements use.
PARAMS = {"one": 1, "year": 2000}


def judge(store: GraphStore, text: str) -> str:
    """ "refused" by the guard; else what the engine makes of it: "rejected" (no plan), "read" or "bypass"."""
    try:
        check_read_only(text, procedures=EMBEDDED_PROCEDURES)
    except QueryError:
        return "refused"
    try:
        plan = store._plan(text, PARAMS)  # type: ignore[attr-defined]
    except CitegraphError:
        return "rejected"
    try:
        check_plan(plan)
    except QueryError:
        return "bypass"
    return "read"
