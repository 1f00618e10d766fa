"""The ``citegraph`` command line: :func:`main` parses the arguments and runs one command.

==============  ===========================================================================
``main``        the top parser, global flags (``--db``, ``--backend``, ``--debug``, ``-q``), exit codes
``common``      opening the store, ``--param`` parsing, table/JSON/CSV output, harness reports
``ingest``      ``ingest``
``compute``     ``compute embeddings|cocitation|taxonomy|hyperbolic|linkage|index|all``
``linkage``     ``link``, ``linkage train|silver|eval|task-input|score``
``recommend``   ``recommend``, ``eval recommend``, ``train reranker``
``query``       ``stats`` (``--files``), ``cypher``, ``export``
``data``        ``copy``, ``fetch-data``
``serve``       ``serve``
==============  ===========================================================================
"""

from __future__ import annotations

from api.cli.main import main

__all__ = ["main"]
