"""Command-line flags read from the ``*Settings`` dataclasses, so that each setting is declared once.

A settings field declares its flag's help with the field itself::

    # Leiden resolution γ: above 1 gives more, smaller clusters; below 1 fewer, larger ones.
    resolution: float = field(default=1.0, metadata={"help": "Leiden resolution (higher: more, smaller clusters)"})

and the command adds it with :func:`add_settings_flags`, which reads the rest from the field: its type (``int``,
``float``, ``str``, ``X | None``; a ``Literal`` or ``metadata["choices"]`` gives the choices), its default (that of
``SettingsClass()``) and the help (``%(default)s`` in it is argparse's). A ``bool`` that is off by default is a
switch (``--force``); one that is on by default can be turned off (``--label-abstracts/--no-label-abstracts``).
:func:`settings_from_args` builds the settings back from the parsed flags. The settings stay plain dataclasses
that the library takes: the command line only names which of their fields it offers, and under which flag.
"""

from __future__ import annotations

import argparse
import dataclasses
import types
import typing
from collections.abc import Iterable, Sequence
from typing import Any, Literal, TypeVar, Union

from api.pipeline.commands import FlagSpec, flag_name

S = TypeVar("S")


def _dest(flag: str) -> str:
    """The attribute argparse stores ``flag`` under (``--map-epochs`` -> ``map_epochs``)."""
    return flag.lstrip("-").replace("-", "_")


def _value_type(annotation: Any) -> tuple[type, tuple[Any, ...] | None]:
    """The type a flag converts its text to, and the choices a ``Literal`` annotation allows (else None)."""
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        members = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        if len(members) != 1:
            raise TypeError(f"a flag takes one type, not {annotation}")
        return _value_type(members[0])
    if origin is Literal:
        choices = typing.get_args(annotation)
        return type(choices[0]), choices
    if annotation in (int, float, str, bool):
        return annotation, None
    raise TypeError(f"no flag for a field of type {annotation}; give the command its own argument")


def _fields(settings: type[Any]) -> dict[str, dataclasses.Field[Any]]:
    if not dataclasses.is_dataclass(settings):
        raise TypeError(f"{settings.__name__} is not a dataclass")
    return {f.name: f for f in dataclasses.fields(settings)}


def add_settings_flags(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    settings: type[Any],
    fields: Iterable[FlagSpec],
    *,
    prefix: str = "",
) -> None:
    """Add one flag per field of ``settings`` named in ``fields``: type, choices, default and help from the field.

    ``prefix`` names the flags of a settings class whose fields another class also offers
    (``CouplingSettings.min_count`` is ``--coupling-min-count`` beside co-citation's ``--min-count``).
    A field without ``metadata["help"]`` is refused: every flag says what it does.
    """
    declared, hints, defaults = _fields(settings), typing.get_type_hints(settings), settings()
    for spec in fields:
        name, flag = flag_name(spec, prefix)
        if name not in declared:
            raise TypeError(f"{settings.__name__} has no field {name!r} to offer as {flag}")
        help_text = declared[name].metadata.get("help")
        if not help_text:
            raise TypeError(f"{settings.__name__}.{name} declares no help (field(metadata={{'help': ...}}))")
        kind, choices = _value_type(hints[name])
        choices = declared[name].metadata.get("choices", choices)
        default = getattr(defaults, name)
        if kind is bool:
            action: Any = argparse.BooleanOptionalAction if default else "store_true"
            parser.add_argument(flag, action=action, default=default, help=help_text)
        elif choices is not None:
            parser.add_argument(flag, choices=list(choices), default=default, help=help_text)
        else:
            parser.add_argument(flag, type=kind, default=default, help=help_text)


def settings_from_args(
    settings: type[S], args: argparse.Namespace, fields: Sequence[FlagSpec], *, prefix: str = "", **given: Any
) -> S:
    """``settings`` with the values of the flags :func:`add_settings_flags` added for ``fields``, and ``given``
    (values the command takes from elsewhere: another group's flag, a nested settings object)."""
    values = {name: getattr(args, _dest(flag)) for name, flag in map(lambda s: flag_name(s, prefix), fields)}
    return settings(**values, **given)


__all__ = ["FlagSpec", "add_settings_flags", "settings_from_args"]
