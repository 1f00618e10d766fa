"""The settings every co-citation count shares, on one machine (``compute cocitation``) or on Spark."""

from __future__ import annotations

from dataclasses import dataclass, field

from graph.errors import ConfigError


@dataclass(frozen=True)
class PairCountSettings:
    """What a pair count keeps and how its noise distributions are shaped (both co-citation steps)."""

    # A pair becomes a CO_CITED edge (a coupling row) when at least this many papers hold both. 1 keeps every
    # pair; raise it on large corpora, where most pairs are co-cited once. The noise distributions use every pair.
    min_count: int = field(default=1, metadata={"help": "smallest co-citation count kept as a CO_CITED edge"})
    # Partners kept per paper in cocite_partners/cocite_probs (the top of p(j|t)); the probability of
    # the rest is stored as cocite_tail, so a reader knows how much of the distribution it lacks.
    top_m: int = field(default=32, metadata={"help": "co-citation partners stored per paper (cocite_partners)"})
    # Exponent α of both noise distributions, freq^α (MP-BERT4CR eq. 1-2, word2vec's 3/4). Below 1 it
    # flattens the distributions, moving probability towards rare pairs and rarely cited papers.
    power: float = field(default=0.75, metadata={"help": "exponent of the noise distributions (MP-BERT4CR: 0.75)"})

    def __post_init__(self) -> None:
        if self.min_count < 1:
            raise ConfigError(f"min_count is {self.min_count}; a co-citation count is at least 1 (default 1)")
        if self.top_m < 1:
            raise ConfigError(f"top_m is {self.top_m}; keep at least one partner per paper (default 32)")
        if not 0.0 <= self.power <= 1.0:
            raise ConfigError(f"power is {self.power}; use a value in [0, 1] (default 0.75, MP-BERT4CR's 3/4)")


__all__ = ["PairCountSettings"]
