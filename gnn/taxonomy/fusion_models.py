r"""The two graph-fusion models of SymTax (GAT and APPNP over the joint taxonomy) and their link scorer.

SymTax (Goyal et al., 2024, https://arxiv.org/abs/2406.01606) fuses the arXiv and ACM taxonomies
by running a GNN over the joint graph initialised with text embeddings. Both models here keep the
output in the text-embedding space, so fused class vectors stay comparable with paper embeddings
(category inference is a cosine): the GNN adds a *learned correction* to the text vector, scaled
by a gate :math:`\gamma` that starts at 0 (ReZero, Bachlechner et al., 2020,
https://arxiv.org/abs/2003.04887). An untrained model is therefore the text embedding itself (GAT)
or its personalised-PageRank smoothing over the taxonomy (APPNP), and training can only move away
from that where held-out links say it helps (early stopping keeps the best validation epoch).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.nn import APPNP, GATConv


def _skip(in_channels: int, out_channels: int) -> nn.Module:
    """Identity when the sizes agree (the output stays in the text space), else a linear map."""
    return nn.Identity() if in_channels == out_channels else nn.Linear(in_channels, out_channels, bias=False)


class GATFusion(nn.Module):
    r"""Two graph-attention layers as a gated residual on the text vectors.

    Graph attention: Veličković et al., 2018, "Graph Attention Networks",
    https://arxiv.org/abs/1710.10903 (PyG :class:`~torch_geometric.nn.conv.GATConv`).

    .. math::
        H &= \mathrm{ELU}\big(\mathrm{GAT}_1(X)\big) \qquad\text{(``heads`` heads, concatenated)}

        Z &= \frac{S(X) + \gamma\, \mathrm{GAT}_2(H)}{\lVert S(X) + \gamma\, \mathrm{GAT}_2(H) \rVert_2}

    with :math:`S` the identity (or a linear map when the output size differs) and :math:`\gamma`
    a learned scalar initialised at 0.

    Args:
        in_channels (int): Size of the text embeddings.
        out_channels (int): Size of the fused vectors (the store's taxonomy size).
        hidden_channels (int, optional): Size of each head of the first layer. (default: :obj:`64`)
        heads (int, optional): Attention heads of the first layer. (default: :obj:`4`)
        dropout (float, optional): Dropout on features and attention weights. (default: :obj:`0.2`)

    Shapes:
        - **input:** node features :math:`(|\mathcal{V}|, F_{in})`, edge indices :math:`(2, |\mathcal{E}|)`
        - **output:** unit vectors :math:`(|\mathcal{V}|, F_{out})`
    """

    def __init__(
        self, in_channels: int, out_channels: int, *, hidden_channels: int = 64, heads: int = 4, dropout: float = 0.2
    ) -> None:
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.hidden_channels = hidden_channels
        self.heads = heads
        self.dropout = dropout
        self.skip = _skip(in_channels, out_channels)
        self.conv1 = GATConv(in_channels, hidden_channels, heads=heads, dropout=dropout)
        self.conv2 = GATConv(hidden_channels * heads, out_channels, heads=1, dropout=dropout)
        self.gate = nn.Parameter(torch.zeros(()))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.conv1.reset_parameters()
        self.conv2.reset_parameters()
        if isinstance(self.skip, nn.Linear):
            self.skip.reset_parameters()
        nn.init.zeros_(self.gate)

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        h = F.dropout(x, p=self.dropout, training=self.training)
        h = F.elu(self.conv1(h, edge_index))  # (N, heads * hidden)
        h = F.dropout(h, p=self.dropout, training=self.training)
        h = self.conv2(h, edge_index)  # (N, out)
        return F.normalize(self.skip(x) + self.gate * h, p=2, dim=-1)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}({self.in_channels}, {self.out_channels}, hidden={self.hidden_channels}, "
            f"heads={self.heads}, dropout={self.dropout})"
        )


class APPNPFusion(nn.Module):
    r"""Predict then propagate: a gated MLP correction, propagated by approximate personalised PageRank.

    Klicpera et al., 2019, "Predict then Propagate: Graph Neural Networks meet Personalized
    PageRank", https://arxiv.org/abs/1810.05997 (PyG :class:`~torch_geometric.nn.conv.APPNP`).

    .. math::
        H^{(0)} &= S(X) + \gamma\, \mathrm{MLP}(X)

        H^{(k)} &= (1 - \alpha)\, \hat D^{-1/2} \hat A \hat D^{-1/2} H^{(k-1)} + \alpha H^{(0)},
        \qquad k = 1..K

        Z &= H^{(K)} / \lVert H^{(K)} \rVert_2

    with :math:`\hat A = A + I` the symmetric taxonomy adjacency with self-loops.

    Args:
        in_channels (int): Size of the text embeddings.
        out_channels (int): Size of the fused vectors.
        hidden_channels (int, optional): Hidden size of the MLP. (default: :obj:`256`)
        K (int, optional): Propagation steps. (default: :obj:`10`)
        alpha (float, optional): Teleport probability :math:`\alpha`. (default: :obj:`0.1`)
        dropout (float, optional): Dropout in the MLP. (default: :obj:`0.2`)

    Shapes:
        - **input:** node features :math:`(|\mathcal{V}|, F_{in})`, edge indices :math:`(2, |\mathcal{E}|)`
        - **output:** unit vectors :math:`(|\mathcal{V}|, F_{out})`
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        *,
        hidden_channels: int = 256,
        K: int = 10,
        alpha: float = 0.1,
        dropout: float = 0.2,
    ) -> None:
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.hidden_channels = hidden_channels
        self.dropout = dropout
        self.skip = _skip(in_channels, out_channels)
        self.lin1 = nn.Linear(in_channels, hidden_channels)
        self.lin2 = nn.Linear(hidden_channels, out_channels)
        self.gate = nn.Parameter(torch.zeros(()))
        self.propagate = APPNP(K=K, alpha=alpha)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.lin1.reset_parameters()
        self.lin2.reset_parameters()
        if isinstance(self.skip, nn.Linear):
            self.skip.reset_parameters()
        nn.init.zeros_(self.gate)

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        h = F.dropout(x, p=self.dropout, training=self.training)
        h = self.lin2(F.dropout(F.relu(self.lin1(h)), p=self.dropout, training=self.training))  # (N, out)
        h = self.skip(x) + self.gate * h
        return F.normalize(self.propagate(h, edge_index), p=2, dim=-1)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}({self.in_channels}, {self.out_channels}, hidden={self.hidden_channels}, "
            f"K={self.propagate.K}, alpha={self.propagate.alpha}, dropout={self.dropout})"
        )


class LinkScorer(nn.Module):
    r"""Link logits from unit node vectors: a scaled cosine.

    .. math::
        \ell(u, v) = e^{\rho}\, z_u^\top z_v + b

    :math:`\rho` (initialised at :math:`\log 10`, a temperature of 0.1) and :math:`b` are learned.
    The logit is monotone in the cosine, so ranking metrics (AUC, AP) of a fusion can be computed
    from the cosine of its written-back vectors alone.
    """

    def __init__(self, *, scale: float = 10.0) -> None:
        super().__init__()
        self.initial_scale = scale
        self.log_scale = nn.Parameter(torch.tensor(math.log(scale)))
        self.bias = nn.Parameter(torch.zeros(()))

    def reset_parameters(self) -> None:
        with torch.no_grad():
            self.log_scale.fill_(math.log(self.initial_scale))
            self.bias.zero_()

    def forward(self, z: Tensor, pairs: Tensor) -> Tensor:
        """Logits ``(P,)`` of the pairs ``(2, P)`` (rows: first and second node)."""
        return self.log_scale.exp() * (z[pairs[0]] * z[pairs[1]]).sum(dim=-1) + self.bias

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(scale={self.initial_scale})"


__all__ = ["APPNPFusion", "GATFusion", "LinkScorer"]
