"""Flags read from the settings dataclasses (api/cli/flags.py): each setting declared once, with its field."""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass, field
from typing import Literal

import pytest

from api.cli import compute, data, linkage
from api.cli.flags import add_settings_flags, settings_from_args
from api.cli.main import build_parser


@dataclass(frozen=True)
class Toy:
    count: int = field(default=3, metadata={"help": "how many (default %(default)s)"})
    rate: float | None = field(default=None, metadata={"help": "a rate"})
    mode: Literal["fast", "slow"] = field(default="fast", metadata={"help": "how"})
    device: str | None = field(default=None, metadata={"help": "where", "choices": ("cpu", "cuda")})
    force: bool = field(default=False, metadata={"help": "do it again"})
    labels: bool = field(default=True, metadata={"help": "label them"})
    hidden: int = 7  # not offered: no flag, the settings' default stays


FIELDS = ("count", "rate", "mode", "device", "force", "labels")


def _parser(**kwargs: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toy")
    add_settings_flags(parser, Toy, FIELDS, **kwargs)
    return parser


def test_no_flag_gives_the_settings_defaults() -> None:
    assert settings_from_args(Toy, _parser().parse_args([]), FIELDS) == Toy()


def test_flags_are_typed_and_fill_the_settings() -> None:
    args = _parser().parse_args(
        ["--count", "5", "--rate", "0.5", "--mode", "slow", "--device", "cuda", "--force", "--no-labels"]
    )
    assert settings_from_args(Toy, args, FIELDS, hidden=9) == Toy(
        count=5, rate=0.5, mode="slow", device="cuda", force=True, labels=False, hidden=9
    )


def test_choices_come_from_a_literal_or_the_metadata(capsys: pytest.CaptureFixture[str]) -> None:
    for flag in (["--mode", "medium"], ["--device", "tpu"], ["--count", "many"]):
        with pytest.raises(SystemExit):
            _parser().parse_args(flag)
    assert "invalid choice: 'tpu'" in capsys.readouterr().err


def test_help_is_the_fields_with_its_default() -> None:
    text = _parser().format_help()
    assert "how many (default 3)" in text
    assert "--labels, --no-labels" in text  # on by default: can be turned off
    assert "--no-force" not in text  # off by default: a switch


def test_a_prefix_or_a_name_renames_the_flag() -> None:
    parser = argparse.ArgumentParser()
    add_settings_flags(parser, Toy, ("count",), prefix="toy-")
    add_settings_flags(parser, Toy, (("rate", "--speed"),))
    args = parser.parse_args(["--toy-count", "4", "--speed", "2"])
    assert settings_from_args(Toy, args, ("count",), prefix="toy-") == Toy(count=4)
    assert settings_from_args(Toy, args, (("rate", "--speed"),)) == Toy(rate=2.0)


def test_a_field_without_help_or_a_missing_field_is_refused() -> None:
    with pytest.raises(TypeError, match=r"Toy.hidden declares no help"):
        add_settings_flags(argparse.ArgumentParser(), Toy, ("hidden",))
    with pytest.raises(TypeError, match="Toy has no field 'size'"):
        add_settings_flags(argparse.ArgumentParser(), Toy, ("size",))


def _subparser(*path: str) -> argparse.ArgumentParser:
    """The parser of ``citegraph PATH...`` (``("linkage", "train")``)."""
    parser = build_parser()
    for name in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    return parser


COMMAND = ("compute",)
LINKAGE_TRAIN = ("linkage", "train")


@pytest.mark.parametrize(
    ("command", "settings", "fields", "prefix"),
    [
        (LINKAGE_TRAIN, linkage.LinkerSettings, linkage.LINKER_FLAGS, ""),
        (LINKAGE_TRAIN, linkage.CrossEncoderSettings, linkage.CROSS_ENCODER_FLAGS, "cross-encoder-"),
        (("linkage", "eval"), linkage.CrossEncoderSettings, linkage.CROSS_ENCODER_FLAGS, "cross-encoder-"),
        (("copy",), data.CopySettings, data.COPY_FLAGS, ""),
        (COMMAND, compute.EmbeddingSettings, compute.EMBEDDING_FLAGS, ""),
        (COMMAND, compute.CocitationSettings, compute.COCITATION_FLAGS, ""),
        (COMMAND, compute.FusionSettings, compute.FUSION_FLAGS, ""),
        (COMMAND, compute.CategorySettings, compute.CATEGORY_FLAGS, ""),
        (COMMAND, compute.HyperbolicSettings, (*compute.HYPERBOLIC_FLAGS, *compute.FIT_MAP_FLAGS), ""),
        (COMMAND, compute.MapSettings, compute.MAP_FLAGS, ""),
        (COMMAND, compute.BurstSettings, compute.BURST_FLAGS, ""),
        (COMMAND, compute.CentralitySettings, compute.CENTRALITY_FLAGS, ""),
        (COMMAND, compute.CouplingSettings, compute.COUPLING_FLAGS, "coupling-"),
    ],
)
def test_command_flags_are_the_settings_fields(
    command: tuple[str, ...], settings: type, fields: tuple, prefix: str
) -> None:
    """Each flag of a command that fills a settings field has that field's default and declared help."""
    parser = _subparser(*command)
    actions = {option: action for action in parser._actions for option in action.option_strings}
    declared = {f.name: f for f in dataclasses.fields(settings)}
    for spec in fields:
        name, flag = spec if isinstance(spec, tuple) else (spec, f"--{prefix}{spec.replace('_', '-')}")
        assert actions[flag].default == getattr(settings(), name), flag
        assert actions[flag].help == declared[name].metadata["help"], flag
    required = {("compute",): ["cocitation"], ("copy",): ["--from", "embedded", "--to", "embedded"]}
    parsed = parser.parse_args(required.get(command, []))
    assert settings_from_args(settings, parsed, fields, prefix=prefix) == settings()
