"""Anytime-valid tests of the mean of bounded variables by betting (Waudby-Smith & Ramdas, JRSS-B 2024).

A bettor starts with capital 1 and, before seeing observation t, stakes a fraction lambda_t (chosen from the past
only) on "x_t is above m" (the UP side) or "x_t is below m" (the DOWN side):

    K_t^up(m)   = prod_i (1 + lambda_i (x_i - m)),        K_t^down(m) = prod_i (1 - lambda_i (x_i - m)).

If the true mean is <= m (resp. >= m) the capital is a nonnegative supermartingale, so by Ville's inequality
P(sup_t K_t >= 1/alpha) <= alpha: rejecting "mean <= m" the first time K^up reaches 1/alpha is a level-alpha
test that may look after every observation and stop whenever it likes. No normality, no variance estimate with
its small-sample failure, no degenerate interval: an all-zero sample only excludes a mean of m once the capital
has grown to 1/alpha, which takes about log(1/alpha) / log(1/(1-m)) observations.

The stake is the aGRAPA plug-in of the paper (an approximation of the growth-optimal Kelly bet from the running
mean and variance, with the paper's prior pseudo-observation mu_0 = 1/2, sigma^2_0 = 1/4 on the [0, 1] scale),
truncated to [0, C / (1 - m)] (down) or [0, C / m] (up) so that a single observation can cost at most a share C of
the capital. Everything is vectorised: the plug-in mean and variance are prefix sums, so many sequences (paths of a
simulation, or a grid of m for a confidence sequence) are processed without a Python loop.
"""

from __future__ import annotations

import numpy as np

TRUNCATION = 0.75  # C: the largest share of the capital one observation may cost (docs/trust/analysis.md: why)
UP, DOWN = 1, -1


def _unit(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    return (np.asarray(x, dtype=float) - lo) / (hi - lo)


def plug_in(x01: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The predictable running mean and variance (WSR eq. 27): entry t uses observations before t only."""
    n = x01.shape[-1]
    t = np.arange(1, n + 1, dtype=float)
    mu = (0.5 + np.cumsum(x01, axis=-1)) / (t + 1)  # mu_t after t observations
    mu_prev = np.concatenate([np.full((*x01.shape[:-1], 1), 0.5), mu[..., :-1]], axis=-1)
    # The paper's variance uses each observation's deviation from the running mean that includes it.
    var = (0.25 + np.cumsum((x01 - mu) ** 2, axis=-1)) / (t + 1)
    var_prev = np.concatenate([np.full((*x01.shape[:-1], 1), 0.25), var[..., :-1]], axis=-1)
    return mu_prev, var_prev


def log_capital(
    x: np.ndarray, m: float | np.ndarray, side: int, lo: float = -1.0, hi: float = 1.0, trunc: float = TRUNCATION
) -> np.ndarray:
    """Running log capital (same shape as x, last axis = time) of a bet against mean <= m (UP) or >= m (DOWN).

    x: observations in [lo, hi], shape (..., n); m: the null mean, a scalar or an array broadcasting against
    x[..., :1] (e.g. a grid of m values of shape (G, 1) against one sequence of shape (n,)).
    """
    x01 = _unit(x, lo, hi)
    m01 = np.asarray(_unit(np.asarray(m, dtype=float), lo, hi))
    mu, var = plug_in(x01)
    gap = side * (mu - m01)  # the plug-in expects the bet to win when gap > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = gap / (var + gap * gap)
        room = m01 if side == UP else 1 - m01  # the largest loss per unit stake is (m - lo) or (hi - m)
        cap = np.where(room > 0, trunc / np.maximum(room, 1e-300), np.inf)
    lam = np.clip(np.nan_to_num(lam, nan=0.0), 0.0, cap)
    step = 1 + lam * side * (x01 - m01)
    return np.cumsum(np.log(np.maximum(step, 1e-300)), axis=-1)


def first_crossing(logk: np.ndarray, alpha: float) -> np.ndarray:
    """Index (0-based) of the first observation at which the capital reaches 1/alpha, or -1 (per sequence)."""
    hit = logk >= np.log(1 / alpha)
    if hit.shape[-1] == 0:
        return np.full(hit.shape[:-1], -1)
    first = np.argmax(hit, axis=-1)
    return np.where(hit.any(axis=-1), first, -1)


def bound(x: np.ndarray, side: int, alpha: float, lo: float = -1.0, hi: float = 1.0, step: float = 5e-4) -> float:
    """One-sided (1 - alpha) confidence-sequence bound on the mean after all of x (running intersection).

    side=DOWN gives the upper bound (every m above it was rejected by a bet on "below m" at some time), side=UP
    the lower bound. Computed on a grid of m with spacing `step`, rounded outwards.
    """
    x = np.asarray(x, dtype=float)
    if x.size == 0:
        return hi if side == DOWN else lo
    grid = np.arange(lo, hi + step / 2, step)
    inner = grid[1:-1]  # the ends are never rejected (a mean at the boundary of the support)
    rejected = (log_capital(x[None, :], inner[:, None], side, lo, hi) >= np.log(1 / alpha)).any(axis=1)
    if side == DOWN:
        alive = inner[~rejected]
        return float(min(hi, alive.max() + step)) if alive.size else lo
    alive = inner[~rejected]
    return float(max(lo, alive.min() - step)) if alive.size else hi
