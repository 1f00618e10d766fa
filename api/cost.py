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

Objects are not all the work: a field whose statement reads far more than it returns adds its
**work** :math:`w_f`, in the same unit (objects read), once per object it is resolved on
(:math:`m\\,w_f`, scalars included):

* ``papers`` (a title search or a category listing reads every paper) and its ``totalCount`` (the
  count statement reads them again): :data:`SCAN_WORK` each;
* ``stats`` and ``completeness`` (counts over every node): :data:`SCAN_WORK`;
* the co-citation dashboard's store-wide reads (``coCitations``, ``coCitationPairs`` and its
  ``totalCount``, ``authors`` and ``sources`` searches, a source's ``papers``): :data:`SCAN_WORK` each;
* ``mapEdgeDocuments``: :data:`SCAN_WORK` (cited authors' and sources' documents come from every citation);
  ``mapUnits``: :data:`HOPS_WORK` (a relationship count per unit);
* ``mapNetwork``: :data:`SCAN_WORK` (it reads every citation or authorship), and its ``nodes`` and ``edges``
  count ``top`` objects each (``top`` is clamped to 1..:data:`~gnn.mapping.networks.MAX_NODES`, not to
  ``max_results``: a map of 5,000 nodes is what the dashboard draws);
* ``explore``: its recipe's work (:data:`EXPLORE_WORK`: a one-hop read from an id costs nothing
  extra, two or three hops :data:`HOPS_WORK`, a scan :data:`SCAN_WORK`, a scan over pairs of
  citations :data:`PAIR_SCAN_WORK`) plus its rows (``params.limit``, else ``max_results``: ``rows``
  is a JSON scalar the object count would miss).

Fifteen aliased title searches with ``totalCount`` thus cost about 60,000 and are refused under the
default limit, where each alone (about 4,000) runs. The bytes of the answer are bounded as it is
built, not here (:mod:`api.budget`).
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
TOP_ARGUMENT = "top"  # mapNetwork's node count: bounded by MAX_NODES (the map's own cap), not max_results
# Work of a statement that reads every paper (or every edge of a kind), in objects: a title search over the
# 133k papers of the shared data takes about as long as fetching 2,000 papers with their fields.
SCAN_WORK = 2_000
HOPS_WORK = 500  # two or three hops from one node: the degree squared, thousands of rows at the most cited papers
PAIR_SCAN_WORK = 5 * SCAN_WORK  # every pair of papers cited together: the sum of squared out-degrees
# Work of the fields that read more than they return, by "Type.field" or, for a field of a connection,
# "Type.field/connectionField" (the totalCount of `papers` is a second scan; a paper's citations' totalCount
# is the length of the list its page is cut from, read anyway).
FIELD_WORK: Mapping[str, int] = {
    "Query.papers": SCAN_WORK,
    "Query.papers/totalCount": SCAN_WORK,
    "Query.stats": SCAN_WORK,
    "Query.completeness": SCAN_WORK,
    # the co-citation dashboard's reads: every CO_CITED edge ordered (or, with years, every pair of citations),
    # every author's name, every paper's venue (no index on either)
    "Query.coCitations": SCAN_WORK,
    "Query.coCitationPairs": SCAN_WORK,
    "Query.coCitationPairs/totalCount": SCAN_WORK,
    "Query.authors": SCAN_WORK,
    "Query.authors/totalCount": SCAN_WORK,
    "Query.sources": SCAN_WORK,
    "Query.sources/totalCount": SCAN_WORK,
    "Source.papers": SCAN_WORK,
    "Query.thematicMap": SCAN_WORK,  # every keyword use, then the co-occurrence of the `top` keywords
    # a science map reads every citation (or authorship) and counts its pairs; its nodes and links are `top` long
    "Query.mapNetwork": SCAN_WORK,
    # the documents behind a link: two hops from its ends for most units, but the map's bulk read of every citation
    # for cited authors and sources (their node ids are computed from names and venues); priced as that read
    "Query.mapEdgeDocuments": SCAN_WORK,
    # which units a store can map: a count of one relationship type per unit (a count, not a read of the rows)
    "Query.mapUnits": HOPS_WORK,
    # science mapping: a cluster timeline reads every citation with its citing year (Arrow, once per request and
    # window: each Cluster.timeline of a request shares that read, so a cluster's share is a fraction of a scan)
    "Query.clusterTimeline": SCAN_WORK,
    "Cluster.timeline": HOPS_WORK,
}
# Work of each recipe of cypher/explore/ (a test checks every recipe is here): what its MATCH reads.
EXPLORE_WORK: Mapping[str, int] = {
    "arxiv_acm_mapping": 0,  # one hop from a category
    "cocitation_neighbourhood": 0,  # one hop from a paper
    "linked_sentences": 0,  # one hop from a sentence
    "papers_of_author": 0,  # one hop from an author
    "acm_subtree": HOPS_WORK,  # up to three levels below a class
    "citation_neighbourhood": HOPS_WORK,  # CITES*1..2 either way
    "citation_paths": HOPS_WORK,  # one to three hops between two papers
    "cocitation_neighbourhood_in_years": HOPS_WORK,  # papers citing a paper, and what else they cite
    "coauthors": HOPS_WORK,  # author -> paper <- author
    "cocitation_over_time": HOPS_WORK,  # papers citing both of two papers
    "papers_citing_both": HOPS_WORK,
    "category_acm_neighbours": SCAN_WORK,  # distance to every ACM class
    "taxonomy_neighbours": SCAN_WORK,  # distance to every ACM class
    "cluster_bridges": SCAN_WORK,  # every CO_CITED edge
    "cocitation_cluster": SCAN_WORK,  # every CO_CITED edge
    "ego_network": SCAN_WORK,  # every CITES edge, kept where both ends are neighbours
    "most_cited_papers": SCAN_WORK,  # every paper
    "top_cocited_pairs": SCAN_WORK,  # every CO_CITED edge
    "top_cocited_pairs_by_measure": SCAN_WORK,  # every CO_CITED edge
    "authors_by_name": SCAN_WORK,  # every author's name
    "sources_by_name": SCAN_WORK,  # every paper's venue
    "papers_in_source": SCAN_WORK,  # every paper's venue (no index on it)
    "historiograph": SCAN_WORK,  # every CITES edge between records
    "keyword_cooccurrence": SCAN_WORK,  # every pair of keywords of every paper
    "top_cocited_pairs_in_years": PAIR_SCAN_WORK,  # every pair of papers one paper cites
}


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
    counter = _Counter(schema, fragments, coerced, max_results)
    return counter.selection_set(operation.selection_set, root, 1, None, "")


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
        owner: str,
        seen: frozenset[str] = frozenset(),
    ) -> int:
        """Cost of ``selection_set`` on ``multiplier`` objects of type ``parent``; ``page`` is the length
        a parent's ``first``/``limit`` gives to lists in this object that take no length of their own, and
        ``owner`` the field (``Type.field``) that returned these objects."""
        if selection_set is None:
            return 0
        total = 0
        for selection in selection_set.selections:
            if isinstance(selection, FieldNode):
                total += self.field(selection, parent, multiplier, page, owner, seen)
            elif isinstance(selection, InlineFragmentNode):
                condition = selection.type_condition
                target = self.schema.get_type(condition.name.value) if condition else parent
                total += self.selection_set(selection.selection_set, target or parent, multiplier, page, owner, seen)
            elif isinstance(selection, FragmentSpreadNode):
                name = selection.name.value
                fragment = self.fragments.get(name)
                if fragment is None or name in seen:  # validation refuses unknown and cyclic fragments
                    continue
                target = self.schema.get_type(fragment.type_condition.name.value) or parent
                total += self.selection_set(fragment.selection_set, target, multiplier, page, owner, seen | {name})
        return total

    def field(
        self,
        node: FieldNode,
        parent: GraphQLNamedType,
        multiplier: int,
        page: int | None,
        owner: str,
        seen: frozenset[str],
    ) -> int:
        name = node.name.value
        if name.startswith("__") or not isinstance(parent, GraphQLObjectType):
            return 0  # introspection and __typename; a union's fields are selected through fragments
        definition = parent.fields.get(name)
        if definition is None:
            return 0
        key = f"{parent.name}.{name}"
        work = multiplier * (FIELD_WORK.get(key, 0) + FIELD_WORK.get(f"{owner}/{name}", 0))
        if key == "Query.explore":
            work += multiplier * self._explore_work(definition, node)
        named = get_named_type(definition.type)
        if not is_composite_type(named):
            return work  # scalars and enums, lists of them included, come with their object
        own = self._length(definition, node)
        if is_list_type(get_nullable_type(definition.type)):
            length = own or page or UNBOUNDED_LIST_SIZE
            count, inner_page = multiplier * length, None
        else:
            count, inner_page = multiplier, own  # a connection: its lists are `own` long
        return work + count + self.selection_set(node.selection_set, named, count, inner_page, key, seen)

    def _explore_work(self, definition: GraphQLField, node: FieldNode) -> int:
        """The recipe's work plus its rows (``params.limit`` clamped to 1..max_results, else max_results)."""
        try:
            values = get_argument_values(definition, node, self.variables)
        except GraphQLError:  # execution reports a bad argument
            return 0
        recipe = values.get("name")
        if not isinstance(recipe, str) or recipe not in EXPLORE_WORK:
            return 0  # NotFound: nothing runs
        params = values.get("params")
        limit = params.get("limit") if isinstance(params, Mapping) else None
        rows = self.max_results if not isinstance(limit, int) else min(max(limit, 1), self.max_results)
        return EXPLORE_WORK[recipe] + rows

    def _length(self, definition: GraphQLField, node: FieldNode) -> int | None:
        """The list length the field's own arguments ask for, clamped to 1..max_results; None without one."""
        if not any(arg in definition.args for arg in (*SIZE_ARGUMENTS, TOP_ARGUMENT, "input")):
            return None
        try:
            values = get_argument_values(definition, node, self.variables)
        except GraphQLError:  # execution reports a bad argument
            return None
        if isinstance(values.get(TOP_ARGUMENT), int):  # a science map: `top` nodes, up to MAX_NODES
            # here, not at the top: importing gnn.mapping loads torch, which api.settings (and so every CLI
            # command and the supervisor) would otherwise pay for at start-up; a server has it loaded already
            from gnn.mapping.networks import MAX_NODES

            return min(max(values[TOP_ARGUMENT], 1), MAX_NODES)
        value = next((values[arg] for arg in SIZE_ARGUMENTS if arg in values), None)
        if value is None and isinstance(values.get("input"), Mapping):
            value = values["input"].get("k")
        if not isinstance(value, int):
            return None
        return min(max(value, 1), self.max_results)


__all__ = [
    "DEFAULT_MAX_QUERY_COST",
    "EXPLORE_WORK",
    "FIELD_WORK",
    "HOPS_WORK",
    "PAIR_SCAN_WORK",
    "SCAN_WORK",
    "UNBOUNDED_LIST_SIZE",
    "query_cost",
]
