"""Settings back to the command line that gives them: what a step's ``command()`` is made of.

Each settings class of the registry renders only the flags whose value differs from the command's default, so a
step's line reads as a person would type it (``citegraph compute embeddings --embed papers``). The tests parse
every plan's commands with the CLI and check that the settings the CLI builds from them are the step's own
(tests/api/test_pipeline.py), so a rendering cannot drift from the flags.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# A settings field offered as a flag: its name (the flag is --<prefix><name with dashes>), or (name, flag) when the
# flag is named otherwise (HyperbolicSettings.fit_map is --map). The CLI adds the flags from the same tables
# (api/cli/flags.py), so a command line and the step's settings name each flag once.
FlagSpec = str | tuple[str, str]


def flag_name(spec: FlagSpec, prefix: str = "") -> tuple[str, str]:
    """(field name, flag) of one spec."""
    if isinstance(spec, tuple):
        return spec
    return spec, f"--{prefix}{spec.replace('_', '-')}"


def settings_flags(settings: Any, specs: Iterable[FlagSpec], prefix: str = "") -> tuple[str, ...]:
    """The flags of ``specs`` whose value in ``settings`` (a dataclass) differs from its class's default: a bool as
    :func:`switch`, anything else as :func:`option`."""
    defaults = type(settings)()
    out: list[str] = []
    for spec in specs:
        name, flag = flag_name(spec, prefix)
        value, default = getattr(settings, name), getattr(defaults, name)
        if isinstance(value, bool):  # only a bool field holds a bool (an int field's value is an int)
            out.extend(switch(flag, value, default))
        else:
            out.extend(option(flag, value, default))
    return tuple(out)


def option(flag: str, value: object, default: object = None) -> tuple[str, ...]:
    """``flag value`` where ``value`` differs from ``default`` (nothing otherwise)."""
    return () if value == default or value is None else (flag, str(value))


def switch(flag: str, value: bool, default: bool = False) -> tuple[str, ...]:
    """A boolean flag: ``--x`` for a True that is not the default, ``--no-x`` for a False that is not."""
    if value == default:
        return ()
    return (flag,) if value else ("--no-" + flag.removeprefix("--"),)


def joined(*parts: Iterable[str]) -> tuple[str, ...]:
    """The parts' flags in order, each flag once (``--seed`` and ``--device`` are shared by ``compute all``'s
    steps: the first part's value stands, and the tests check the parts agree)."""
    out: list[str] = []
    seen: set[str] = set()
    for part in parts:
        items = list(part)
        i = 0
        while i < len(items):
            flag = items[i]
            takes_value = i + 1 < len(items) and not items[i + 1].startswith("--")
            chunk = items[i : i + 2] if takes_value else items[i : i + 1]
            if flag not in seen:
                seen.add(flag)
                out.extend(chunk)
            i += len(chunk)
    return tuple(out)


__all__ = ["FlagSpec", "flag_name", "joined", "option", "settings_flags", "switch"]
