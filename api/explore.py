"""The named analyst queries of ``cypher/explore/`` as an API: listed, validated, run read-only.

Only the statements in ``cypher/explore/`` can run this way, by name; a client never sends
Cypher. Each file's ``//`` header describes it: the first line is its description, a
``// parameters:`` line names its ``$parameters`` and a ``// returns:`` line its columns. A
parameter's type comes from that header: ``$limit`` and parameters described as integers
(``$year_min, $year_max (integers)``, ``$min_count (integer, at least 1)``) are integers, the rest
strings. ``$limit`` is optional (default :data:`DEFAULT_LIMIT`) and capped like every list of the API.

Validation refuses unknown names, unknown or missing parameters, values of the wrong type, integers
outside 64 bits or below a stated ``at least N``, and strings longer than :data:`MAX_STRING`.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

import cypher

log = logging.getLogger(__name__)
FOLDER = "explore"
DEFAULT_LIMIT = 20
MAX_STRING = 500  # no id, code or name in the graph is longer
INT64 = (-(2**63), 2**63 - 1)
_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_AT_LEAST = re.compile(r"at least (-?\d+)")


@dataclass(frozen=True)
class ExploreParameter:
    name: str
    type: str  # "int" or "string"
    required: bool
    description: str  # the header's words for it, e.g. "integer, at least 1" or 'e.g. "cs.CL"'
    minimum: int | None = None


@dataclass(frozen=True)
class ExploreQuery:
    name: str
    description: str
    parameters: tuple[ExploreParameter, ...]
    columns: tuple[str, ...]

    def parameter(self, name: str) -> ExploreParameter | None:
        return next((p for p in self.parameters if p.name == name), None)


class ExploreArgumentError(ValueError):
    """Parameters that do not fit the query's header; the message names the parameter and what it takes."""

    def __init__(self, argument: str, message: str) -> None:
        super().__init__(message)
        self.argument = argument


def _split_top_level(text: str) -> list[str]:
    """``text`` split at commas outside parentheses."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(depth - 1, 0)
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def parse_parameters(line: str) -> tuple[ExploreParameter, ...]:
    """The parameters of a ``// parameters:`` header line.

    A parenthesised description applies to every ``$name`` since the previous description:
    ``$cluster_a, $cluster_b (integers), $limit`` gives two integers and ``limit``. One written after
    ``$limit`` is the limit's alone: ``$paper_id, $limit (most edges returned)``.
    """
    found: list[ExploreParameter] = []
    pending: list[str] = []
    for part in _split_top_level(line):
        names = _PARAM.findall(part.split("(", 1)[0])
        if names == ["limit"] and "(" in part:
            found += [_parameter(n, "") for n in pending]
            pending = []
        pending += names
        if "(" in part:
            description = part.split("(", 1)[1].rsplit(")", 1)[0].strip()
            found += [_parameter(n, description) for n in pending]
            pending = []
    found += [_parameter(n, "") for n in pending]
    return tuple(found)


def _parameter(name: str, description: str) -> ExploreParameter:
    is_int = name == "limit" or "integer" in description.lower()
    at_least = _AT_LEAST.search(description)
    minimum = int(at_least.group(1)) if at_least else (1 if name == "limit" else None)
    return ExploreParameter(name, "int" if is_int else "string", name != "limit", description, minimum)


def _header_value(header: str, key: str) -> str:
    for line in header.splitlines():
        text = line.lstrip("/").strip()
        if text.lower().startswith(f"{key}:"):
            return text.split(":", 1)[1].strip()
    return ""


@cache
def catalogue() -> dict[str, ExploreQuery]:
    """Every query of ``cypher/explore/`` by short name (``coauthors``, not ``explore/coauthors``)."""
    queries = {}
    for full_name in cypher.names(FOLDER):
        statement = cypher.load(full_name)
        short = full_name.split("/", 1)[1]
        description = statement.header.splitlines()[0].lstrip("/").strip()
        parameters = parse_parameters(_header_value(statement.header, "parameters"))
        declared = {p.name for p in parameters}
        used = set(_PARAM.findall(statement.text))
        if used != declared:  # a header that disagrees with its statement must not drive validation
            log.warning(
                "cypher/%s.cypher is not offered by `explore`: its header names parameters %s, the statement uses %s",
                full_name,
                sorted(declared),
                sorted(used),
            )
            continue
        columns = tuple(c.strip() for c in _split_top_level(_header_value(statement.header, "returns")))
        queries[short] = ExploreQuery(short, description, parameters, tuple(c.split(" ")[0] for c in columns))
    return queries


def validate(query: ExploreQuery, params: dict[str, Any], *, max_limit: int) -> dict[str, Any]:
    """The statement's parameters from a client's ``params``; :class:`ExploreArgumentError` when they do not fit."""
    unknown = sorted(set(params) - {p.name for p in query.parameters})
    if unknown:
        known = ", ".join(p.name for p in query.parameters) or "none"
        raise ExploreArgumentError(unknown[0], f"`{query.name}` takes no parameter {unknown[0]!r}; it takes: {known}")
    values: dict[str, Any] = {}
    for parameter in query.parameters:
        if parameter.name not in params:
            if parameter.required:
                raise ExploreArgumentError(
                    parameter.name, f"`{query.name}` needs `{parameter.name}` ({_kind(parameter)})"
                )
            values[parameter.name] = min(DEFAULT_LIMIT, max_limit)
            continue
        values[parameter.name] = _coerce(query, parameter, params[parameter.name], max_limit)
    return values


def _kind(parameter: ExploreParameter) -> str:
    kind = "an integer" if parameter.type == "int" else "a string"
    return f"{kind}; {parameter.description}" if parameter.description else kind


def _coerce(query: ExploreQuery, parameter: ExploreParameter, value: Any, max_limit: int) -> Any:
    where = f"`{query.name}`: `{parameter.name}`"
    if parameter.type == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ExploreArgumentError(parameter.name, f"{where} must be an integer, got {type(value).__name__}")
        upper = max_limit if parameter.name == "limit" else INT64[1]
        lower = parameter.minimum if parameter.minimum is not None else INT64[0]
        if not lower <= value <= upper:
            raise ExploreArgumentError(parameter.name, f"{where} must be between {lower} and {upper}, got {value}")
        return value
    if not isinstance(value, str):
        raise ExploreArgumentError(parameter.name, f"{where} must be a string, got {type(value).__name__}")
    if len(value) > MAX_STRING:
        raise ExploreArgumentError(parameter.name, f"{where} takes at most {MAX_STRING} characters")
    return value


__all__ = ["DEFAULT_LIMIT", "ExploreArgumentError", "ExploreParameter", "ExploreQuery", "catalogue", "validate"]
