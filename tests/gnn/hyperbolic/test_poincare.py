"""Property tests of gnn.hyperbolic.poincare: seeded, in float32 and float64, each with its own tolerance."""

from __future__ import annotations

import geoopt
import pytest
import torch

from gnn.hyperbolic import poincare

DTYPES = [torch.float32, torch.float64]
# Relative/absolute tolerances per dtype: float32 keeps ~7 digits, less after the artanh near the boundary.
TOL = {torch.float32: {"rtol": 1e-4, "atol": 1e-5}, torch.float64: {"rtol": 1e-10, "atol": 1e-12}}


def points(n: int, dim: int, dtype: torch.dtype, *, seed: int, max_norm: float = 0.9) -> torch.Tensor:
    """``n`` seeded points of the unit ball, norms uniform in [0, max_norm)."""
    generator = torch.Generator().manual_seed(seed)
    direction = torch.randn(n, dim, generator=generator, dtype=torch.float64)
    direction = direction / direction.norm(dim=-1, keepdim=True)
    radius = torch.rand(n, 1, generator=generator, dtype=torch.float64) * max_norm
    return (direction * radius).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_left_cancellation(dtype: torch.dtype) -> None:
    x, y = points(64, 5, dtype, seed=1), points(64, 5, dtype, seed=2)
    back = poincare.mobius_add(-x, poincare.mobius_add(x, y))
    torch.testing.assert_close(back, y, **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_distance_symmetric_zero_on_diagonal_positive_off_it(dtype: torch.dtype) -> None:
    x, y = points(64, 3, dtype, seed=3), points(64, 3, dtype, seed=4)
    torch.testing.assert_close(poincare.dist(x, y), poincare.dist(y, x), **TOL[dtype])
    assert torch.allclose(
        poincare.dist(x, x), torch.zeros(64, dtype=dtype), atol=1e-3 if dtype == torch.float32 else 1e-6
    )
    assert (poincare.dist(x, y) > 0).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_triangle_inequality_on_samples(dtype: torch.dtype) -> None:
    x, y, z = (points(256, 4, dtype, seed=s, max_norm=0.99) for s in (5, 6, 7))
    slack = 1e-4 if dtype == torch.float32 else 1e-10
    assert (poincare.dist(x, z) <= poincare.dist(x, y) + poincare.dist(y, z) + slack).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_agrees_with_geoopt(dtype: torch.dtype) -> None:
    ball = geoopt.PoincareBall(c=1.0)
    x, y = points(32, 6, dtype, seed=8), points(32, 6, dtype, seed=9)
    u = torch.randn(32, 6, generator=torch.Generator().manual_seed(10), dtype=torch.float64).to(dtype)
    tol = TOL[dtype]
    torch.testing.assert_close(poincare.mobius_add(x, y), ball.mobius_add(x, y), **tol)
    torch.testing.assert_close(poincare.dist(x, y), ball.dist(x, y), **tol)
    torch.testing.assert_close(poincare.dist0(x), ball.dist0(x), **tol)
    torch.testing.assert_close(poincare.project(poincare.expmap0(u)), ball.expmap0(u), **tol)  # geoopt projects
    torch.testing.assert_close(poincare.logmap0(x), ball.logmap0(x), **tol)
    torch.testing.assert_close(
        poincare.mobius_scalar_mul(0.3, x), ball.mobius_scalar_mul(torch.tensor(0.3, dtype=dtype), x), **tol
    )
    torch.testing.assert_close(poincare.lambda_x(x), ball.lambda_x(x, keepdim=True), **tol)
    weights = torch.rand(32, generator=torch.Generator().manual_seed(11), dtype=torch.float64).to(dtype)
    ours = poincare.weighted_midpoint(x, weights, dim=0)
    theirs = ball.weighted_midpoint(x, weights, reducedim=[0])
    torch.testing.assert_close(ours, theirs, **tol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_curvature_scales_distance(dtype: torch.dtype) -> None:
    x, y = points(16, 3, dtype, seed=12, max_norm=0.4), points(16, 3, dtype, seed=13, max_norm=0.4)
    ball = geoopt.PoincareBall(c=2.0)  # geoopt keeps c in float32: agreement to ~1e-7 only
    torch.testing.assert_close(poincare.dist(x, y, c=2.0), ball.dist(x, y), rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="c > 0"):
        poincare.dist(x, y, c=0.0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pairwise_matches_elementwise(dtype: torch.dtype) -> None:
    x, y = points(20, 4, dtype, seed=14), points(30, 4, dtype, seed=15)
    pairwise = poincare.pairwise_dist(x, y)
    elementwise = poincare.dist(x.unsqueeze(1), y.unsqueeze(0))
    tol = {"rtol": 1e-3, "atol": 1e-3} if dtype == torch.float32 else TOL[dtype]
    torch.testing.assert_close(pairwise, elementwise, **tol)


@pytest.mark.parametrize("c", [1.0, 0.5])
def test_pairwise_gradient_in_closed_form_is_autograds(c: float) -> None:
    """The written-out gradient of pairwise_dist equals autograd's trace of the elementwise distance, for
    two sets and for a set against itself (the class layout's case, diagonal included), and passes gradcheck."""
    x = points(12, 4, torch.float64, seed=40, max_norm=0.9).requires_grad_(True)
    y = points(9, 4, torch.float64, seed=41, max_norm=0.9).requires_grad_(True)
    weights = torch.randn(12, 9, generator=torch.Generator().manual_seed(42), dtype=torch.float64)
    (poincare.pairwise_dist(x, y, c=c) * weights).sum().backward()
    closed_x, closed_y = x.grad.clone(), y.grad.clone()
    x.grad = y.grad = None
    (poincare.dist(x.unsqueeze(1), y.unsqueeze(0), c=c) * weights).sum().backward()
    torch.testing.assert_close(closed_x, x.grad, rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(closed_y, y.grad, rtol=1e-9, atol=1e-9)
    x.grad = None
    square = torch.randn(12, 12, generator=torch.Generator().manual_seed(43), dtype=torch.float64)
    (poincare.pairwise_dist(x, x, c=c) * square).sum().backward()
    closed_self = x.grad.clone()
    x.grad = None
    off_diagonal = ~torch.eye(12, dtype=torch.bool)  # the elementwise form's gradient at d(x, x) = 0 is undefined
    (poincare.dist(x.unsqueeze(1), x.unsqueeze(0), c=c)[off_diagonal] * square[off_diagonal]).sum().backward()
    torch.testing.assert_close(closed_self, x.grad, rtol=1e-9, atol=1e-9)
    assert torch.autograd.gradcheck(
        lambda a, b: poincare.pairwise_dist(a, b, c=c),
        (x.detach()[:4].requires_grad_(), y.detach()[:3].requires_grad_()),
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_expmap0_logmap0_inverse_and_distance(dtype: torch.dtype) -> None:
    u = torch.randn(32, 5, generator=torch.Generator().manual_seed(16), dtype=torch.float64).to(dtype)
    x = poincare.expmap0(u)
    torch.testing.assert_close(
        poincare.logmap0(x), u, **({"rtol": 1e-3, "atol": 1e-3} if dtype == torch.float32 else TOL[dtype])
    )
    # d(0, exp_0(u)) = 2‖u‖
    torch.testing.assert_close(
        poincare.dist0(x),
        2 * u.norm(dim=-1),
        **({"rtol": 1e-3, "atol": 1e-3} if dtype == torch.float32 else TOL[dtype]),
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_project_keeps_points_inside_the_margin(dtype: torch.dtype) -> None:
    x = points(16, 3, dtype, seed=17) * 3  # many outside the ball
    projected = poincare.project(x)
    assert (projected.norm(dim=-1) <= 1 - poincare.BALL_EPS[dtype] + 1e-6).all()
    inside = x.norm(dim=-1) < 0.5
    torch.testing.assert_close(projected[inside], x[inside])


@pytest.mark.parametrize("dtype", DTYPES)
def test_finite_gradients_near_the_boundary_and_at_coinciding_points(dtype: torch.dtype) -> None:
    eps = poincare.BALL_EPS[dtype]
    x = poincare.project(points(16, 3, dtype, seed=18, max_norm=1.0) / 1e-9, eps=eps).requires_grad_(
        True
    )  # on the margin
    y = points(16, 3, dtype, seed=19, max_norm=0.999).requires_grad_(True)
    z = x.detach().clone().requires_grad_(True)
    loss = poincare.dist(x, y).sum() + poincare.dist(x, z).sum() + poincare.pairwise_dist(x, x).sum()
    loss = loss + poincare.logmap0(x).sum() + poincare.weighted_midpoint(torch.stack([x, y], dim=1)).sum()
    loss = loss + poincare.expmap0(torch.zeros(2, 3, dtype=dtype, requires_grad=True)).sum()
    loss.backward()
    for tensor in (x, y, z):
        assert tensor.grad is not None and torch.isfinite(tensor.grad).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_midpoint_of_two_points_is_on_their_geodesic_halfway(dtype: torch.dtype) -> None:
    x, y = points(32, 4, dtype, seed=20, max_norm=0.8), points(32, 4, dtype, seed=21, max_norm=0.8)
    m = poincare.weighted_midpoint(torch.stack([x, y], dim=1))
    tol = {"rtol": 1e-3, "atol": 1e-4} if dtype == torch.float32 else TOL[dtype]
    torch.testing.assert_close(poincare.dist(x, m), poincare.dist(m, y), **tol)
    torch.testing.assert_close(poincare.dist(x, m) + poincare.dist(m, y), poincare.dist(x, y), **tol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_midpoint_is_its_point_and_commutes_with_translations(dtype: torch.dtype) -> None:
    x = points(8, 3, dtype, seed=22)
    tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == torch.float32 else TOL[dtype]
    torch.testing.assert_close(poincare.weighted_midpoint(x.unsqueeze(1)), x, **tol)
    xs = points(5, 3, dtype, seed=23, max_norm=0.7)
    weights = torch.tensor([1.0, 2.0, 0.5, 3.0, 1.0], dtype=dtype)
    a = points(1, 3, dtype, seed=24, max_norm=0.5)[0]
    moved = poincare.weighted_midpoint(poincare.mobius_add(a, xs), weights, dim=0)
    torch.testing.assert_close(moved, poincare.mobius_add(a, poincare.weighted_midpoint(xs, weights, dim=0)), **tol)
    # a zero weight removes its point
    torch.testing.assert_close(
        poincare.weighted_midpoint(xs[:2], torch.tensor([1.0, 0.0], dtype=dtype), dim=0), xs[0], **tol
    )


def test_not_the_spherical_distance() -> None:
    """SymTax's printed 2·tan⁻¹‖(-x)⊕y‖ is bounded by π; the hyperbolic distance is not."""
    x = torch.tensor([[0.0, 0.0]], dtype=torch.float64)
    y = torch.tensor([[0.999999, 0.0]], dtype=torch.float64)
    spherical = 2 * torch.atan(poincare.mobius_add(-x, y).norm(dim=-1))
    assert float(spherical) < torch.pi
    assert float(poincare.dist(x, y)) > 14.0  # 2·artanh(0.999999) = ln(1.999999 / 1e-6)


def test_far_points_near_the_boundary_keep_their_distance() -> None:
    """Opposite points at the float64 margin are 2·dist0 apart (≈ 24.4), past geoopt's artanh cap of ≈ 16.8."""
    x = torch.tensor([[1 - 1e-5, 0.0]], dtype=torch.float64)
    expected = 2 * poincare.dist0(x)
    torch.testing.assert_close(poincare.dist(x, -x), expected, rtol=1e-6, atol=0)  # geoopt: 16.8
    torch.testing.assert_close(poincare.pairwise_dist(x, -x)[0], expected, rtol=1e-6, atol=0)


def test_midpoint_of_one_point_near_the_boundary_is_that_point() -> None:
    x = torch.tensor([[[-0.9984337132416106, 0.05344850325314576]]], dtype=torch.float64)
    torch.testing.assert_close(poincare.weighted_midpoint(x), x[:, 0], rtol=0, atol=1e-9)
