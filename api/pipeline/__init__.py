"""The step registry: every step of ``citegraph build``, ``compute all``, the server's background build and an
``update`` declared once, below the CLI, and run by both the CLI and the server.

==============  ===========================================================================================
``registry``    :class:`Step` (name, action, typed settings, what it reads, ``beside``), :class:`Action` (the
                function that runs it, and why a completing plan may skip it), :class:`StepContext` (the store
                it runs on), fingerprints, ``<db>.build.json``, :class:`PlanRun` (a plan run in process)
``plans``       the plans: ``build`` (default and full), ``compute all``, ``background``; :data:`PLANS` and
                :func:`register_plan` (where ``update`` goes)
``build``       the build's runner: step lines, the second process of a step run ``beside`` another, resume,
                the timing table
``ingest``      the ingest step;  ``compute``: embeddings, co-citation, taxonomy, hyperbolic, index, sentence
                links, ``compute all``;  ``train``: the reranker and the encoder;  ``linkage``: the linker
``commands``    settings back to the command line that gives them (each step's line in the build)
==============  ===========================================================================================

Dependencies: the CLI (``api/cli``) builds settings from its flags and calls these functions; the server
(:mod:`api.background`) runs the background plan with them. Nothing here imports ``api.cli``
(tests/test_architecture.py).
"""

from __future__ import annotations

from api.pipeline.registry import Action, PlanRun, Step, StepContext, StepOutcome

__all__ = ["Action", "PlanRun", "Step", "StepContext", "StepOutcome"]
