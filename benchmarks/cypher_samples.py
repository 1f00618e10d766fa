"""Regenerate the sample outputs of docs/cypher.md from a store.

Every recipe section of docs/cypher.md shows a command (a fenced ``bash`` block holding one
``citegraph cypher --recipe NAME ...`` line) and, in the fenced block right after it, what that command
printed on a store built from the shared data. This script runs those commands through ``api.cli`` on
``--db`` (read-only) and writes their output back into the blocks, so a recipe whose columns change
shows its new output::

    python benchmarks/cypher_samples.py --db var/citegraph.db                        # every sample
    python benchmarks/cypher_samples.py --db var/citegraph.db --only ego_network --only top_cocited_pairs

A command whose output block is missing gets one. The script never edits anything else of the file.
"""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "cypher.md"
# a bash block with one `citegraph cypher --recipe` command, then optionally its output block
_SAMPLE = re.compile(
    r"```bash\n(?P<command>citegraph cypher --recipe (?P<name>\w+)[^\n]*)\n```\n"
    r"(?P<output>\n```\n.*?\n```\n)?",
    re.S,
)


def run_recipe(command: str, db: Path) -> str:
    """What ``command`` (a ``citegraph cypher --recipe ...`` line) prints on the store ``db``."""
    args = shlex.split(command)[1:]  # without the program name
    completed = subprocess.run(
        [sys.executable, "-m", "api.cli", "--db", str(db), "-q", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    if completed.returncode != 0:
        raise SystemExit(f"`{command}` failed (exit {completed.returncode}):\n{completed.stderr}")
    return completed.stdout.rstrip("\n")


def regenerate(text: str, db: Path, only: set[str] | None) -> tuple[str, list[str]]:
    """``text`` with the output block of every selected sample replaced; the names regenerated."""
    done: list[str] = []

    def replace(match: re.Match[str]) -> str:
        name = match.group("name")
        if name == "list" or (only is not None and name not in only):  # the list sample is curated by hand
            return match.group(0)
        output = run_recipe(match.group("command"), db)
        done.append(name)
        return f"```bash\n{match.group('command')}\n```\n\n```\n{output}\n```\n"

    return _SAMPLE.sub(replace, text), done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True, help="the embedded store to run the recipes on")
    parser.add_argument("--only", action="append", help="regenerate only this recipe's samples (repeatable)")
    parser.add_argument("--doc", type=Path, default=DOC, help="the Markdown file (default docs/cypher.md)")
    args = parser.parse_args(argv)
    text, done = regenerate(args.doc.read_text(encoding="utf-8"), args.db, set(args.only) if args.only else None)
    missing = set(args.only or ()) - set(done)
    if missing:
        raise SystemExit(f"no `citegraph cypher --recipe` sample of {', '.join(sorted(missing))} in {args.doc}")
    args.doc.write_text(text, encoding="utf-8")
    print(f"regenerated {len(done)} samples: {', '.join(done)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
