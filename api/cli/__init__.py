"""The ``citegraph`` command line: :func:`main` parses the arguments and runs one command.

Each command turns its flags into typed settings and calls the functions that do the work; the steps shared with
the build and the server's background build are the step registry's (:mod:`api.pipeline`), which imports nothing
from here.

==============  ===========================================================================
``main``        the top parser, global flags (``--db``, ``--backend``, ``--debug``, ``-q``), exit codes
``common``      opening the store, ``--param`` parsing, table/JSON/CSV output, harness reports
``build``       ``build`` (the registry's build plan and runner)
``ingest``      ``ingest``
``compute``     ``compute embeddings|cocitation|taxonomy|hyperbolic|linkage|index|all``
``linkage``     ``link``, ``linkage train|silver|eval|task-input|score``
``recommend``   ``recommend``, ``eval recommend``, ``train reranker``
``encoder``     ``train encoder``
``query``       ``stats`` (``--files``), ``cypher``, ``export``
``data``        ``copy``, ``fetch-data``
``serve``       ``serve``
==============  ===========================================================================
"""

from __future__ import annotations

from api.cli.main import main

__all__ = ["main"]
