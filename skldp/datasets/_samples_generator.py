"""Synthetic distributions of the papers' experiments, and raw samples drawn from them.

Every ``make_*`` function returns a :class:`Distribution` (the probabilities over categories
``0 .. k-1``). Given ``n_samples`` it also draws that many raw values from it, and returns
``(X, distribution)``, as scikit-learn's ``make_*`` return ``(X, y)``.
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from skldp._docstring import substitute
from skldp._domain import check_category_list
from skldp._memory import check_allocation
from skldp._random import check_random_state
from skldp._validation import check_int, check_probability_vector

if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import ArrayLike, NDArray

    from skldp._typing import RandomStateLike
__all__ = [
    "Distribution",
    "make_dirichlet",
    "make_geometric",
    "make_sparse",
    "make_two_step",
    "make_uniform",
    "make_zipf",
]


class Distribution:
    """A discrete distribution over a public domain, from which raw values can be drawn.

    Parameters
    ----------
    probabilities : array-like of shape (n_categories,)
        Non-negative, summing to one.
    categories : array-like of shape (n_categories,) or None, default=None
        The domain; None means the integers ``0 .. n_categories - 1``.
    name : str, default="distribution"
        A short label for tables and plots, such as ``"Zipf(1)"``.

    Attributes
    ----------
    probabilities : ndarray of shape (n_categories,)
    categories : ndarray of shape (n_categories,)
    name : str

    Examples
    --------
    >>> from skldp.datasets import make_zipf
    >>> d = make_zipf(4)
    >>> d
    Distribution('Zipf(1)', n_categories=4)
    >>> d.probabilities.round(3)
    array([0.48, 0.24, 0.16, 0.12])
    >>> d.sample(6, random_state=0).shape
    (6,)
    """

    def __init__(
        self,
        probabilities: ArrayLike,
        categories: ArrayLike | None = None,
        *,
        name: str = "distribution",
    ) -> None:
        p = check_probability_vector(probabilities, name="probabilities")
        self.probabilities = p / p.sum()
        if categories is None:
            categories = np.arange(p.shape[0])
        categories = check_category_list(categories, min_size=1, name="categories")
        if categories.shape != p.shape:
            raise ValueError(
                f"categories must have one entry per probability ({p.shape[0]}); got shape "
                f"{categories.shape}"
            )
        self.categories = categories
        self.name = str(name)

    @property
    def n_categories(self) -> int:
        """The size k of the domain."""
        return self.probabilities.shape[0]

    def __len__(self):
        return self.n_categories

    def __array__(self, dtype=None, copy=None):
        return np.array(self.probabilities, dtype=dtype, copy=True if copy else None)

    def __repr__(self):
        return f"Distribution({self.name!r}, n_categories={self.n_categories})"

    def sample_indices(
        self, n_samples: int, *, random_state: RandomStateLike | None = None
    ) -> NDArray[np.int64]:
        """Draw ``n_samples`` i.i.d. category indices (int64) by inverse transform sampling."""
        n_samples = check_int(n_samples, "n_samples", min_value=0)
        # the uniforms (float64) and the indices (int64), and the values sample() returns
        check_allocation(
            n_samples,
            16 + self.categories.dtype.itemsize,
            f"{n_samples} samples",
            "draw them in chunks of at most {rows} (one child of Generator.spawn per chunk)",
        )
        rng = check_random_state(random_state)
        cdf = np.cumsum(self.probabilities)
        cdf /= cdf[-1]
        idx = np.searchsorted(cdf, rng.random(n_samples), side="right")
        # a zero-probability category at the very end can never be drawn
        return np.minimum(idx, self.n_categories - 1).astype(np.int64)

    def sample(
        self, n_samples: int, *, random_state: RandomStateLike | None = None
    ) -> NDArray[Any]:
        """Draw ``n_samples`` i.i.d. raw values from the distribution.

        Parameters
        ----------
        n_samples : int
            Number of values, >= 0.
        random_state : int, numpy.random.Generator or None, default=None
            An int makes the draw reproducible.

        Returns
        -------
        X : ndarray of shape (n_samples,)
            Values from ``categories``.
        """
        return self.categories[self.sample_indices(n_samples, random_state=random_state)]

    def to_series(self) -> pd.Series:
        """The probabilities as a pandas Series indexed by the categories."""
        return pd.Series(
            self.probabilities, index=pd.Index(self.categories, name="category"), name=self.name
        )


def _check_k(n_categories):
    return check_int(n_categories, "n_categories", min_value=2)


def _check_real(value, name, *, low, high, low_open=True, high_open=True):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
        raise TypeError(f"{name} must be a number; got {value!r}")
    value = float(value)
    ok_low = value > low if low_open else value >= low
    ok_high = value < high if high_open else value <= high
    if not (ok_low and ok_high):
        lo = "(" if low_open else "["
        hi = ")" if high_open else "]"
        raise ValueError(f"{name} must lie in {lo}{low}, {high}{hi}; got {value}")
    return value


def _finish(p, name, n_samples, random_state, rng=None):
    dist = Distribution(p, name=name)
    if n_samples is None:
        return dist
    rng = check_random_state(random_state) if rng is None else rng
    return dist.sample(n_samples, random_state=rng), dist


#: Docstring text that every ``make_*`` generator shares (see :func:`skldp._docstring.substitute`).
_generator_docs = substitute(
    n_categories="""\
    n_categories : int
        k, at least 2.
    n_samples : int or None, default=None
        Number of raw values to draw, or None for the distribution only.""",
    seed_draw="""\
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the draw of raw values.""",
    returns="""\
    Returns
    -------
    distribution : Distribution
        When ``n_samples`` is None.
    X, distribution : ndarray of shape (n_samples,), Distribution
        When ``n_samples`` is given: raw values drawn i.i.d. with ``random_state``, and the
        distribution they were drawn from.""",
)


@_generator_docs
def make_uniform(
    n_categories: int,
    n_samples: int | None = None,
    *,
    random_state: RandomStateLike | None = None,
) -> Distribution | tuple[NDArray[Any], Distribution]:
    """The uniform distribution over k categories: the worst case of most error bounds.

    Parameters
    ----------
    {n_categories}
    {seed_draw}

    {returns}

    Examples
    --------
    >>> from skldp.datasets import make_uniform
    >>> X, d = make_uniform(5, 1000, random_state=0)
    >>> X.shape, d.probabilities
    ((1000,), array([0.2, 0.2, 0.2, 0.2, 0.2]))
    """
    k = _check_k(n_categories)
    return _finish(np.full(k, 1.0 / k), "Uniform", n_samples, random_state)


@_generator_docs
def make_geometric(
    n_categories: int,
    n_samples: int | None = None,
    *,
    lam: float = 0.95,
    reading: str = "ratio",
    permute: bool = False,
    random_state: RandomStateLike | None = None,
) -> Distribution | tuple[NDArray[Any], Distribution]:
    r"""A geometric distribution truncated to k categories and renormalized.

    The papers write the geometric distribution in two ways that differ drastically for the
    same :math:`\lambda`, so both are offered:

    - ``reading="ratio"``: :math:`p_i \propto \lambda^i (1 - \lambda)`, decay ratio
      :math:`\lambda`. This is the reading of the Hadamard response code lineage, and the
      likely one of the Figure 2 experiments of Acharya et al. (context-aware LDP) with
      :math:`\lambda = 0.95` (a slow decay over about a hundred symbols).
    - ``reading="text"``: :math:`p_i \propto (1 - \lambda)^i \lambda`, decay ratio
      :math:`1 - \lambda`, as printed in the context-aware LDP paper and as used by the
      compressive-sensing paper's Geo(0.6) and Geo(0.8) (ratios 0.4 and 0.2: approximately
      sparse).

    Here :math:`i = 0, \dots, k - 1`. With ``permute=True`` the probabilities are shuffled over
    the categories by a permutation drawn from ``random_state`` (the paper's Geo*, which spreads
    the heavy symbols over several blocks).

    Parameters
    ----------
    {n_categories}
    lam : float, default=0.95
        :math:`\lambda` in (0, 1).
    reading : {'ratio', 'text'}, default='ratio'
        Which formula, as above.
    permute : bool, default=False
        Shuffle the probabilities over the categories (Geo*).
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the permutation (drawn first) and then the raw values.

    {returns}

    Examples
    --------
    >>> from skldp.datasets import make_geometric
    >>> make_geometric(4, lam=0.5).probabilities.round(4)
    array([0.5333, 0.2667, 0.1333, 0.0667])
    >>> make_geometric(3, lam=0.8, reading="text").probabilities.round(4)
    array([0.8065, 0.1613, 0.0323])
    """
    k = _check_k(n_categories)
    lam = _check_real(lam, "lam", low=0.0, high=1.0)
    if reading not in ("ratio", "text"):
        raise ValueError(f"reading must be 'ratio' or 'text'; got {reading!r}")
    ratio = lam if reading == "ratio" else 1.0 - lam
    # work in logs: ratio**i underflows for large k, which is fine (those symbols get 0 mass)
    logp = np.arange(k) * math.log(ratio)
    p = np.exp(logp - logp.max())
    p /= p.sum()
    name = f"Geo({lam:g})" if reading == "ratio" else f"Geo({lam:g}, text)"
    rng = check_random_state(random_state) if (permute or n_samples is not None) else None
    if permute:
        assert rng is not None  # drawn above whenever permute is set
        p = p[rng.permutation(k)]
        name += "*"
    return _finish(p, name, n_samples, random_state, rng)


@_generator_docs
def make_zipf(
    n_categories: int,
    n_samples: int | None = None,
    *,
    exponent: float = 1.0,
    random_state: RandomStateLike | None = None,
) -> Distribution | tuple[NDArray[Any], Distribution]:
    r"""The Zipf (power-law) distribution :math:`p_i \propto i^{-s}` on :math:`i = 1, \dots, k`.

    Parameters
    ----------
    {n_categories}
    exponent : float, default=1.0
        s >= 0 (0 is uniform).
    {seed_draw}

    {returns}

    Examples
    --------
    >>> from skldp.datasets import make_zipf
    >>> make_zipf(3, exponent=2.0).probabilities.round(4)
    array([0.7347, 0.1837, 0.0816])
    """
    k = _check_k(n_categories)
    s = _check_real(exponent, "exponent", low=0.0, high=math.inf, low_open=False)
    p = np.arange(1, k + 1, dtype=float) ** (-s)
    return _finish(p / p.sum(), f"Zipf({s:g})", n_samples, random_state)


@_generator_docs
def make_two_step(
    n_categories: int,
    n_samples: int | None = None,
    *,
    heavy_fraction: float = 0.5,
    heavy_mass: float = 0.75,
    random_state: RandomStateLike | None = None,
) -> Distribution | tuple[NDArray[Any], Distribution]:
    r"""A two-step distribution: the first categories share more mass than the rest.

    The first :math:`h = \lceil f k \rceil` categories (``heavy_fraction`` f) share
    ``heavy_mass`` m equally and the other :math:`k - h` share :math:`1 - m`:

    .. math:: p_i = m / h \ (i < h), \qquad p_i = (1 - m) / (k - h) \ (i \ge h).

    With the defaults half of the symbols carry three times the probability of the other half,
    a mildly skewed case between uniform and Zipf used in the Hadamard-response experiments.

    Parameters
    ----------
    {n_categories}
    heavy_fraction : float, default=0.5
        f in (0, 1); at least one category is heavy and at least one light.
    heavy_mass : float, default=0.75
        m in (0, 1).
    {seed_draw}

    {returns}

    Examples
    --------
    >>> from skldp.datasets import make_two_step
    >>> make_two_step(4).probabilities
    array([0.375, 0.375, 0.125, 0.125])
    """
    k = _check_k(n_categories)
    f = _check_real(heavy_fraction, "heavy_fraction", low=0.0, high=1.0)
    m = _check_real(heavy_mass, "heavy_mass", low=0.0, high=1.0)
    h = min(max(math.ceil(f * k), 1), k - 1)
    p = np.empty(k)
    p[:h] = m / h
    p[h:] = (1.0 - m) / (k - h)
    return _finish(p, "Two-step", n_samples, random_state)


@_generator_docs
def make_sparse(
    n_categories: int,
    n_samples: int | None = None,
    *,
    sparsity: int = 10,
    support: Any = "first",
    weights: Any = "uniform",
    random_state: RandomStateLike | None = None,
) -> Distribution | tuple[NDArray[Any], Distribution]:
    r"""An s-sparse distribution: mass on s of the k categories, zero elsewhere.

    The compressive-sensing paper's Unif(s) puts :math:`1/s` on each of s symbols; its
    location is unspecified there, so it is a parameter here.

    Parameters
    ----------
    {n_categories}
    sparsity : int, default=10
        s, between 1 and k.
    support : {'first', 'random'}, default='first'
        The first s categories, or s categories drawn without replacement from
        ``random_state``.
    weights : {'uniform', 'dirichlet'}, default='uniform'
        Equal mass :math:`1/s` (Unif(s)), or weights drawn from a flat Dirichlet.
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the support and weights (drawn first) and then the raw values.

    {returns}

    Examples
    --------
    >>> from skldp.datasets import make_sparse
    >>> make_sparse(6, sparsity=2).probabilities
    array([0.5, 0.5, 0. , 0. , 0. , 0. ])
    """
    k = _check_k(n_categories)
    s = check_int(sparsity, "sparsity", min_value=1)
    if s > k:
        raise ValueError(f"sparsity must be at most n_categories={k}; got {s}")
    if support not in ("first", "random"):
        raise ValueError(f"support must be 'first' or 'random'; got {support!r}")
    if weights not in ("uniform", "dirichlet"):
        raise ValueError(f"weights must be 'uniform' or 'dirichlet'; got {weights!r}")
    rng = check_random_state(random_state)
    where = np.arange(s) if support == "first" else np.sort(rng.choice(k, size=s, replace=False))
    w = np.full(s, 1.0 / s) if weights == "uniform" else rng.dirichlet(np.ones(s))
    p = np.zeros(k)
    p[where] = w
    return _finish(
        p, f"Unif({s})" if weights == "uniform" else f"Sparse({s})", n_samples, random_state, rng
    )


@_generator_docs
def make_dirichlet(
    n_categories: int,
    n_samples: int | None = None,
    *,
    alpha: float = 1.0,
    random_state: RandomStateLike | None = None,
) -> Distribution | tuple[NDArray[Any], Distribution]:
    r"""A distribution drawn from the symmetric Dirichlet :math:`\mathrm{Dir}(\alpha,\dots,\alpha)`.

    With :math:`\alpha = 1` this is a uniformly random point of the simplex: the flat case of
    Kairouz, Bonawitz and Ramage (ICML 2016), where normalization beats projection.

    Parameters
    ----------
    {n_categories}
    alpha : float, default=1.0
        Concentration, positive.
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the distribution (drawn first) and then the raw values.

    {returns}

    Examples
    --------
    >>> from skldp.datasets import make_dirichlet
    >>> d = make_dirichlet(5, random_state=0)
    >>> round(float(d.probabilities.sum()), 12)
    1.0
    """
    k = _check_k(n_categories)
    a = _check_real(alpha, "alpha", low=0.0, high=math.inf)
    rng = check_random_state(random_state)
    p = rng.dirichlet(np.full(k, a))
    return _finish(p, f"Dir({a:g})", n_samples, random_state, rng)
