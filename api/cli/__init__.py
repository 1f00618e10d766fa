"""The ``citegraph`` command line: :func:`main` parses the arguments and runs one command."""

from __future__ import annotations

from api.cli.main import main

__all__ = ["main"]
