"""What a GraphQL operation will fetch, counted before it runs: the query cost limit.

The cost of an operation is the number of objects it can return: every field of an object type
counts once per object it is resolved on, and a list multiplies everything below it by its length.
For a list field the length is its own ``first``, ``limit`` or ``k`` argument (``input.k`` for
``recommend``), or the schema default of that argument when the client gives none; a field that
takes ``first``/``limit`` but returns one object (a connection, an ``EgoNetwork``) passes the length
on to the lists inside it (``edges``, ``nodes``, ``pairs``, ``items``). Lists without such an
argument count :data:`UNBOUNDED_LIST_SIZE` items (a paper's authors, categories, a class's children).
Lengths are clamped to 1..``max_results``: an argument outside that range is the resolver's
``BAD_USER_INPUT``, not a cost. Variables are resolved, fragments expanded (both branches of a
union count), scalar fields and introspection (``__schema``, ``__type``: in-memory, bounded by the
token limit) cost nothing.

.. math::

    \\mathrm{cost}(S, m) = \\sum_{f \\in S,\\ f \\text{ composite}} m\\,n_f
        + \\mathrm{cost}(S_f,\\ m\\,n_f)

with :math:`m` the number of parent objects (1 at the root) and :math:`n_f` the length of ``f``
(1 for a single object). Four nested ``coCited(first: 200) { paper { … } }`` cost about
:math:`2 \\cdot 200^4 \\approx 3.2` billion.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLField,
    GraphQLNamedType,
    GraphQLObjectType,
    GraphQLSchema,
    InlineFragmentNode,
    SelectionSetNode,
    get_named_type,
    get_nullable_type,
    is_composite_type,
    is_list_type,
)
from graphql.execution.values import VariableValues, get_argument_values, get_variable_values
from graphql.utilities import get_operation_ast

DEFAULT_MAX_QUERY_COST = 50_000  # CITEGRAPH_MAX_QUERY_COST (AppSettings.max_query_cost says what fits)
UNBOUNDED_LIST_SIZE = 20  # assumed length of a list field that takes no first/limit/k
SIZE_ARGUMENTS = ("first", "limit", "k")  # GraphQL argument names that bound a list's length


def query_cost(
    schema: GraphQLSchema,
    document: DocumentNode,
    *,
    operation_name: str | None = None,
    variables: Mapping[str, Any] | None = None,
    max_results: int,
) -> int | None:
    """The cost of the operation ``operation_name`` of ``document`` (see the module docstring).

    None where the operation or its variables are not valid; execution reports those.
    """
    operation = get_operation_ast(document, operation_name)
    if operation is None:
        return None
    root = schema.get_root_type(operation.operation)
    if root is None:
        return None
    coerced = get_variable_values(schema, operation.variable_definitions or (), dict(variables or {}), max_errors=1)
    if isinstance(coerced, list):  # variables that do not fit their types
        return None
    fragments = {d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)}
    return _Counter(schema, fragments, coerced, max_results).selection_set(operation.selection_set, root, 1, None)


class _Counter:
    def __init__(
        self,
        schema: GraphQLSchema,
        fragments: dict[str, FragmentDefinitionNode],
        variables: VariableValues,
        max_results: int,
    ) -> None:
        self.schema = schema
        self.fragments = fragments
        self.variables = variables
        self.max_results = max_results

    def selection_set(
        self,
        selection_set: SelectionSetNode | None,
        parent: GraphQLNamedType,
        multiplier: int,
        page: int | None,
        seen: frozenset[str] = frozenset(),
    ) -> int:
        """Cost of ``selection_set`` on ``multiplier`` objects of type ``parent``; ``page`` is the length
        a parent's ``first``/``limit`` gives to lists in this object that take no length of their own."""
        if selection_set is None:
            return 0
        total = 0
        for selection in selection_set.selections:
            if isinstance(selection, FieldNode):
                total += self.field(selection, parent, multiplier, page, seen)
            elif isinstance(selection, InlineFragmentNode):
                condition = selection.type_condition
                target = self.schema.get_type(condition.name.value) if condition else parent
                total += self.selection_set(selection.selection_set, target or parent, multiplier, page, seen)
            elif isinstance(selection, FragmentSpreadNode):
                name = selection.name.value
                fragment = self.fragments.get(name)
                if fragment is None or name in seen:  # validation refuses unknown and cyclic fragments
                    continue
                target = self.schema.get_type(fragment.type_condition.name.value) or parent
                total += self.selection_set(fragment.selection_set, target, multiplier, page, seen | {name})
        return total

    def field(
        self, node: FieldNode, parent: GraphQLNamedType, multiplier: int, page: int | None, seen: frozenset[str]
    ) -> int:
        name = node.name.value
        if name.startswith("__") or not isinstance(parent, GraphQLObjectType):
            return 0  # introspection and __typename; a union's fields are selected through fragments
        definition = parent.fields.get(name)
        if definition is None:
            return 0
        named = get_named_type(definition.type)
        if not is_composite_type(named):
            return 0  # scalars and enums, lists of them included, come with their object
        own = self._length(definition, node)
        if is_list_type(get_nullable_type(definition.type)):
            length = own or page or UNBOUNDED_LIST_SIZE
            count, inner_page = multiplier * length, None
        else:
            count, inner_page = multiplier, own  # a connection: its lists are `own` long
        return count + self.selection_set(node.selection_set, named, count, inner_page, seen)

    def _length(self, definition: GraphQLField, node: FieldNode) -> int | None:
        """The list length the field's own arguments ask for, clamped to 1..max_results; None without one."""
        if not any(arg in definition.args for arg in (*SIZE_ARGUMENTS, "input")):
            return None
        try:
            values = get_argument_values(definition, node, self.variables)
        except GraphQLError:  # execution reports a bad argument
            return None
        value = next((values[arg] for arg in SIZE_ARGUMENTS if arg in values), None)
        if value is None and isinstance(values.get("input"), Mapping):
            value = values["input"].get("k")
        if not isinstance(value, int):
            return None
        return min(max(value, 1), self.max_results)


__all__ = ["DEFAULT_MAX_QUERY_COST", "UNBOUNDED_LIST_SIZE", "query_cost"]
