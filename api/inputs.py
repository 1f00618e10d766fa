"""Values no GraphQL request needs, refused before validation: huge numbers, non-finite floats, deep variables.

graphql-core turns a number literal into a Python ``int`` only while it validates the operation, and
Python refuses to convert more than 4,300 digits (``ValueError``, CVE-2020-10735's guard): a
100,000-digit ``first:`` reached the client as ``INTERNAL_SERVER_ERROR`` and the server log as one
100 KB line. An error message that quotes a literal (``Int cannot represent …: 999…``) is as long as
the literal. No argument of this schema takes a number of more than :data:`MAX_NUMBER_CHARS`
characters (64-bit integers take 20) or an infinite float, and no variable nests deeper than
:data:`api.errors.MAX_JSON_DEPTH`, so :func:`oversized_input` refuses those with a short
``BAD_USER_INPUT`` message that never repeats the value; smaller numbers out of range get the
argument's own message.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from graphql import DocumentNode, FloatValueNode, IntValueNode, Node

from api.errors import MAX_JSON_DEPTH

MAX_NUMBER_CHARS = 40  # a number literal's characters: 64-bit ints take 20, doubles 24 (-1.7976931348623157e+308)
# a variable's integer past this takes more digits than a literal may; smaller ones (10**30 as an explore
# `limit`) get the argument's own message, which names its range
MAX_INT_MAGNITUDE = 10**MAX_NUMBER_CHARS


def oversized_input(document: DocumentNode, variables: Mapping[str, Any] | None) -> str | None:
    """What is wrong with the number literals of ``document`` or with ``variables``; None when nothing is."""
    problem = literal_problem(document)
    if problem is None and variables:
        problem = variables_problem(variables)
    return problem


def literal_problem(document: DocumentNode) -> str | None:
    """What is wrong with the number literals of ``document``; None when nothing is (depends on the text only)."""
    stack: list[Node] = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, IntValueNode | FloatValueNode):
            where = _where(node)
            if len(node.value) > MAX_NUMBER_CHARS:
                return (
                    f"a number literal{where} has {len(node.value):,} characters, more than the "
                    f"{MAX_NUMBER_CHARS} any argument takes; send a number in the argument's range"
                )
            if isinstance(node, FloatValueNode) and not math.isfinite(float(node.value)):
                return f"a float literal{where} is beyond the range of a double; send a finite number"
            continue
        for key in node.keys:
            child = getattr(node, key, None)
            if isinstance(child, Node):
                stack.append(child)
            elif isinstance(child, tuple | list):
                stack.extend(c for c in child if isinstance(c, Node))
    return None


def _where(node: Node) -> str:
    """`` at line L, column C`` of the node in its document, or nothing where it has no location."""
    loc = node.loc
    if loc is None:
        return ""
    token = loc.start_token
    return f" at line {token.line}, column {token.column}"


def variables_problem(variables: Mapping[str, Any]) -> str | None:
    """Walks the variables without recursion (a deep value must not exhaust the stack)."""
    stack: list[tuple[str, Any, int]] = [(f"${name}", value, 1) for name, value in variables.items()]
    while stack:
        path, value, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return f"variable {_short(path)} nests deeper than {MAX_JSON_DEPTH} levels; send flatter variables"
        if isinstance(value, bool) or value is None or isinstance(value, str):
            continue
        if isinstance(value, int):
            if not -MAX_INT_MAGNITUDE < value < MAX_INT_MAGNITUDE:  # compares without converting to text
                return (
                    f"variable {_short(path)} holds an integer of more than {MAX_NUMBER_CHARS} digits; "
                    "send a number in the argument's range"
                )
        elif isinstance(value, float):
            if not math.isfinite(value):
                return f"variable {_short(path)} is not a finite number (Infinity or NaN); send a finite number"
        elif isinstance(value, Mapping):
            stack.extend((f"{path}.{_short(str(k), 40)}", v, depth + 1) for k, v in value.items())
        elif isinstance(value, list | tuple):
            stack.extend((f"{path}[{i}]", v, depth + 1) for i, v in enumerate(value))
    return None


def _short(text: str, limit: int = 120) -> str:
    """``text`` cut to ``limit`` characters (a variable's path is built from the client's keys)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


__all__ = ["MAX_INT_MAGNITUDE", "MAX_NUMBER_CHARS", "literal_problem", "oversized_input", "variables_problem"]
