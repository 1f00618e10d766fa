r"""Geometry of the Poincaré ball: small pure functions, one formula each.

The Poincaré ball of curvature :math:`-c` (:math:`c > 0`) is the open ball
:math:`\mathbb{D}^n_c = \{x \in \mathbb{R}^n : c\|x\|^2 < 1\}` with the metric
:math:`g_x = (\lambda^c_x)^2 g^E`, :math:`\lambda^c_x = 2 / (1 - c\|x\|^2)`. Every function takes the
curvature as the keyword-only ``c`` (default 1: curvature :math:`-1`, the unit ball) and works on
the last dimension of broadcastable tensors, in the dtype it is given. The formulas follow Ganea,
Bécigneul & Hofmann (2018), "Hyperbolic Neural Networks" (NeurIPS), and Ungar (2008), *A
Gyrovector Space Approach to Hyperbolic Geometry*; each function here is geoopt's (``geoopt.manifolds.stereographic.math``, curvature
:math:`\kappa = -c`) under the project's signature — only :func:`dist`, :func:`pairwise_dist` and :func:`weighted_midpoint` are
written out, each for the measured reason in its docstring.

The distance is

.. math::
    d_c(x, y) = \frac{2}{\sqrt c} \operatorname{artanh}\bigl(\sqrt c \, \|(-x) \oplus_c y\|\bigr),

for :math:`c = 1` equal to :math:`\operatorname{arcosh}\bigl(1 + 2\|x-y\|^2 / ((1-\|x\|^2)(1-\|y\|^2))\bigr)`
(Nickel & Kiela, 2017, eq. 1). SymTax prints :math:`2\tan^{-1}(\|(-x) \oplus y\|)`: that is the
distance of the *sphere* (positive curvature) and is bounded by :math:`\pi`, so it cannot separate
the levels of a hierarchy; it is deliberately not offered here.

Numerics. Near the boundary :math:`1 - c\|x\|^2` cancels: in float32 a point can sit no closer
than about :math:`10^{-3}` to it before distances lose every digit, in float64 about
:math:`10^{-7}` (distances from the origin up to about 30). :func:`project` keeps points inside a
dtype-dependent margin (:data:`BALL_EPS`), and every ``clamp`` below says what it guards.
"""

from __future__ import annotations

from typing import Any

import torch
from geoopt.manifolds.stereographic import math as stereographic

# Margin kept from the boundary by project(), per dtype: a point is pulled back to norm (1 - eps)/√c.
# float32: 4e-3 keeps 1 - ‖x‖² at ≥ 8e-3, where float32's 6e-8 resolution still leaves ~5 digits;
# float64: 1e-5 keeps ≥ 2e-5, with ~11 digits (these are geoopt's margins for the same reason).
BALL_EPS = {torch.float32: 4e-3, torch.float64: 1e-5}
# Smallest norm divided by: x/‖x‖ and the gradient of ‖x‖ are undefined at 0 (0/0, NaN gradients).
MIN_NORM = 1e-15


def _norm(x: torch.Tensor) -> torch.Tensor:
    """‖x‖ over the last dimension, kept, clamped away from 0 so divisions and gradients stay finite."""
    return x.norm(dim=-1, p=2, keepdim=True).clamp_min(MIN_NORM)  # MIN_NORM: 0/0 at the origin


def _artanh(x: torch.Tensor) -> torch.Tensor:
    """artanh on (-1, 1), its argument clamped to 1 - 1e-15: ‖·‖ rounds to exactly 1 at the boundary (inf)."""
    x = x.clamp(-1 + 1e-15, 1 - 1e-15)  # 1e-15: within float64 resolution of 1; float32 rounds it to 1 - 6e-8
    return 0.5 * (torch.log1p(x) - torch.log1p(-x))


def _curvature(c: float, like: torch.Tensor) -> torch.Tensor:
    """geoopt's κ = -c as a tensor of ``like``'s dtype and device; c ≤ 0 is refused with its reason."""
    if c <= 0:
        raise ValueError(f"curvature parameter c is {c}; the Poincaré ball needs c > 0 (curvature -c)")
    return torch.as_tensor(-c, dtype=like.dtype, device=like.device)


def lambda_x(x: torch.Tensor, *, c: float = 1.0) -> torch.Tensor:
    r"""Conformal factor :math:`\lambda^c_x = \dfrac{2}{1 - c\|x\|^2}` (last dimension kept, size 1)."""
    return stereographic.lambda_x(x, k=_curvature(c, x), keepdim=True)


def project(x: torch.Tensor, *, c: float = 1.0, eps: float | None = None) -> torch.Tensor:
    r"""Pull points back inside the ball: :math:`x \mapsto x \cdot \min\bigl(1, \frac{1 - \epsilon}{\sqrt c\,\|x\|}\bigr)`.

    ``eps`` defaults to :data:`BALL_EPS` of ``x``'s dtype; points already inside that margin are unchanged.
    """
    margin = BALL_EPS.get(x.dtype, 4e-3) if eps is None else eps
    return stereographic.project(x, k=_curvature(c, x), eps=margin)


def mobius_add(x: torch.Tensor, y: torch.Tensor, *, c: float = 1.0) -> torch.Tensor:
    r"""Möbius addition (Ungar 2008; Ganea et al. 2018, eq. 4).

    .. math::
        x \oplus_c y = \frac{(1 + 2c\langle x, y\rangle + c\|y\|^2)\, x + (1 - c\|x\|^2)\, y}
                            {1 + 2c\langle x, y\rangle + c^2\|x\|^2\|y\|^2}

    Not commutative nor associative, but left-cancelling: :math:`(-x) \oplus_c (x \oplus_c y) = y`.
    """
    return stereographic.mobius_add(x, y, k=_curvature(c, x))


def dist(x: torch.Tensor, y: torch.Tensor, *, c: float = 1.0) -> torch.Tensor:
    r"""Geodesic distance (Ganea et al. 2018, eq. 5; Nickel & Kiela 2017, eq. 1 for :math:`c = 1`).

    .. math::
        d_c(x, y) = \frac{2}{\sqrt c} \operatorname{artanh}\bigl(\sqrt c\,\|(-x) \oplus_c y\|\bigr)

    Symmetric, zero exactly on the diagonal, unbounded towards the boundary. Shape: the broadcast
    of ``x`` and ``y`` without the last dimension.

    Written out rather than geoopt's ``dist``: geoopt clamps artanh's argument at 1 − 1e-7, which caps
    every distance at 2·artanh(1 − 1e-7) ≈ 16.8, while two float64 points inside :data:`BALL_EPS` on
    opposite sides of the ball are ≈ 24.4 apart (``test_far_points_near_the_boundary_keep_their_distance``).
    """
    k = _curvature(c, x)
    sqrt_c = (-k).sqrt()
    return 2 / sqrt_c * _artanh(sqrt_c * _norm(mobius_add(-x, y, c=c))).squeeze(-1)


def dist0(x: torch.Tensor, *, c: float = 1.0) -> torch.Tensor:
    r"""Distance from the origin: :math:`d_c(0, x) = \frac{2}{\sqrt c}\operatorname{artanh}(\sqrt c\,\|x\|)`."""
    return stereographic.dist0(x, k=_curvature(c, x))


def pairwise_dist(x: torch.Tensor, y: torch.Tensor, *, c: float = 1.0) -> torch.Tensor:
    r"""Every distance between the rows of ``x`` [n, d] and of ``y`` [m, d], as an [n, m] matrix.

    Uses the closed form of :func:`dist` that needs no Möbius sum per pair (Nickel & Kiela 2017, eq. 1,
    scaled to curvature :math:`-c`):

    .. math::
        d_c(x, y) = \frac{1}{\sqrt c}\operatorname{arcosh}(1 + z), \qquad
        z = \frac{2c\,\|x - y\|^2}{(1 - c\|x\|^2)(1 - c\|y\|^2)}.

    Its gradient is written out (:class:`_PairwiseDistance`) rather than traced: the exact-softmax
    class layout (:mod:`gnn.hyperbolic.embedding`) takes one [n, n] matrix and its gradient per epoch,
    and autograd's chain through a dozen elementwise [n, n] steps took about twice as long.
    """
    _curvature(c, x)  # rejects c <= 0 with its message
    return _PairwiseDistance.apply(x, y, c)


class _PairwiseDistance(torch.autograd.Function):
    r""":func:`pairwise_dist` with its gradient in closed form.

    With :math:`a_i = 1 - c\|x_i\|^2`, :math:`b_j = 1 - c\|y_j\|^2`, :math:`D_{ij} = \|x_i - y_j\|^2`,
    the upstream gradient :math:`G` and :math:`P_{ij} = G_{ij}\,\partial d_{ij}/\partial z_{ij} / (a_i b_j)`,
    where :math:`\partial d / \partial z = 1 / (\sqrt c \sqrt{z(z + 2)})`:

    .. math::
        \nabla_{x_i} = 4c\Bigl(x_i \sum_j P_{ij} - \sum_j P_{ij}\,y_j\Bigr)
                       + \frac{4c^2 x_i}{a_i}\sum_j P_{ij} D_{ij},

    and :math:`\nabla_{y_j}` the same with the roles swapped — two matrix products and a few
    elementwise passes. Where a clamp holds (a point on the boundary, :math:`z \approx 0` on the
    diagonal) the gradient is the clamped formula's, as autograd would give it.
    """

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, y: torch.Tensor, c: float) -> torch.Tensor:
        # ‖x - y‖² from the differences, not as ‖x‖² + ‖y‖² - 2⟨x, y⟩: near the boundary the denominator below is
        # tiny and the expansion's cancellation error would swamp it; cdist's direct mode also avoids an [n, m, d] tensor
        diff2 = torch.cdist(x, y, compute_mode="donot_use_mm_for_euclid_dist").pow_(2)  # [n, m]
        alpha_raw = 1 - c * x.pow(2).sum(dim=-1)
        beta_raw = 1 - c * y.pow(2).sum(dim=-1)
        # MIN_NORM: a point on the boundary (1 - c‖x‖² = 0) would divide by zero
        alpha, beta = alpha_raw.clamp_min(MIN_NORM), beta_raw.clamp_min(MIN_NORM)
        z = (2 * c) * diff2 / (alpha.unsqueeze(-1) * beta.unsqueeze(-2))
        # arcosh(1 + z) = log(1 + z + sqrt(z (z + 2))): exact for small z, where acosh(1 + z) loses digits;
        # the clamp keeps the gradient finite on the diagonal (z = 0)
        root = (z * (z + 2)).clamp_min_(MIN_NORM**2).sqrt_()
        ctx.save_for_backward(x, y, alpha, beta, alpha_raw > MIN_NORM, beta_raw > MIN_NORM, diff2, z, root)
        ctx.c = c
        return torch.log1p(z + root) / c**0.5

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor | None, None]:
        x, y, alpha, beta, alpha_free, beta_free, diff2, z, root = ctx.saved_tensors
        c = ctx.c
        # ∂d/∂z: 1/√(z(z+2)) where the root's clamp is off, else that of log1p(z + const)
        slope = torch.where(root > MIN_NORM, root.reciprocal(), (1 + z + root).reciprocal())
        p = grad * slope / (c**0.5 * alpha.unsqueeze(-1) * beta.unsqueeze(-2))
        pd = p * diff2
        grad_x = grad_y = None
        if ctx.needs_input_grad[0]:
            grad_x = 4 * c * (x * p.sum(1, keepdim=True) - p @ y)
            grad_x += (4 * c * c) * x * (alpha_free / alpha * pd.sum(1)).unsqueeze(-1)
        if ctx.needs_input_grad[1]:
            grad_y = 4 * c * (y * p.sum(0).unsqueeze(-1) - p.T @ x)
            grad_y += (4 * c * c) * y * (beta_free / beta * pd.sum(0)).unsqueeze(-1)
        return grad_x, grad_y, None


def expmap0(u: torch.Tensor, *, c: float = 1.0) -> torch.Tensor:
    r"""Exponential map at the origin (Ganea et al. 2018, Lemma 2 at :math:`x = 0`).

    .. math::
        \exp^c_0(u) = \tanh(\sqrt c\,\|u\|)\,\frac{u}{\sqrt c\,\|u\|}

    Maps the tangent space :math:`T_0\mathbb{D}_c = \mathbb{R}^n` onto the ball; :math:`d_c(0, \exp^c_0(u)) = 2\|u\|`.
    """
    return stereographic.expmap0(u, k=_curvature(c, u))


def logmap0(y: torch.Tensor, *, c: float = 1.0) -> torch.Tensor:
    r"""Logarithmic map at the origin, the inverse of :func:`expmap0`.

    .. math::
        \log^c_0(y) = \operatorname{artanh}(\sqrt c\,\|y\|)\,\frac{y}{\sqrt c\,\|y\|}
    """
    return stereographic.logmap0(y, k=_curvature(c, y))


def mobius_scalar_mul(r: torch.Tensor | float, x: torch.Tensor, *, c: float = 1.0) -> torch.Tensor:
    r"""Möbius scalar multiplication (Ganea et al. 2018, eq. 6).

    .. math::
        r \otimes_c x = \frac{1}{\sqrt c}\tanh\bigl(r\,\operatorname{artanh}(\sqrt c\,\|x\|)\bigr)\,\frac{x}{\|x\|}

    Scales the distance from the origin by :math:`r`: :math:`d_c(0, r \otimes_c x) = |r|\, d_c(0, x)`.
    """
    return stereographic.mobius_scalar_mul(torch.as_tensor(r, dtype=x.dtype, device=x.device), x, k=_curvature(c, x))


def weighted_midpoint(
    xs: torch.Tensor, weights: torch.Tensor | None = None, *, c: float = 1.0, dim: int = -2
) -> torch.Tensor:
    r"""Weighted Möbius gyromidpoint of the points along ``dim`` of ``xs`` (Ungar 2010, eq. 3.134).

    .. math::
        m_c(x_{1..n}; \alpha_{1..n}) = \frac12 \otimes_c
            \frac{\sum_i \alpha_i \lambda^c_{x_i} x_i}{\sum_i \alpha_i (\lambda^c_{x_i} - 1)}

    The gyromidpoint is the Einstein midpoint of the Klein model carried to the Poincaré ball
    (Ungar 2010, *Barycentric Calculus in Euclidean and Hyperbolic Geometry*, §3.6): the midpoint of
    two points lies on their geodesic at equal distance from both, one point is its own midpoint,
    and it commutes with isometries (Möbius left translations and rotations). Weights need not sum
    to 1 (only ratios count) and must be non-negative; default: all equal. ``xs`` has the points
    along ``dim`` (default: the second to last, [..., n, d]); ``weights`` broadcasts to ``xs``
    without its last dimension.

    Written out rather than geoopt's ``weighted_midpoint`` for the halving step's artanh (see the comment
    there; ``test_midpoint_of_one_point_near_the_boundary_is_that_point``).
    """
    if weights is None:
        weights = torch.ones(xs.shape[:-1], dtype=xs.dtype, device=xs.device)
    alpha = weights.unsqueeze(-1)  # [..., n, 1]
    lam = lambda_x(xs, c=c)  # [..., n, 1]
    num = (alpha * lam * xs).sum(dim=dim)
    # λ - 1 ≥ 1 > 0 inside the ball, so the denominator vanishes only when every weight does
    two_mean = num / (alpha * (lam - 1)).sum(dim=dim).clamp_min(MIN_NORM)
    # ½ ⊗ two_mean with the exact artanh: two_mean lies far closer to the boundary than its points (1e-8 away
    # for a point 1e-4 away), where geoopt's clamp at 1 - 1e-7 would move a float64 midpoint by 3e-4
    k = _curvature(c, xs)
    sqrt_c = (-k).sqrt()
    norm = _norm(two_mean)
    return torch.tanh(0.5 * _artanh(sqrt_c * norm)) * two_mean / (sqrt_c * norm)


__all__ = [
    "BALL_EPS",
    "MIN_NORM",
    "dist",
    "dist0",
    "expmap0",
    "lambda_x",
    "logmap0",
    "mobius_add",
    "mobius_scalar_mul",
    "pairwise_dist",
    "project",
    "weighted_midpoint",
]
