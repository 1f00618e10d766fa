"""``python -m api.cli``: the same as the ``citegraph`` command."""

from __future__ import annotations

import sys

from api.cli.main import main

sys.exit(main())
