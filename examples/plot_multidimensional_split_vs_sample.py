"""Several attributes under one budget: splitting it against sampling one attribute
====================================================================================

Each person of the UCI Adult census holds d attributes (the first d of age, workclass,
education, marital status, occupation and sex; 2 to 16 values each) and has a budget of
epsilon for all of them. :class:`~skldp.BudgetSplitting` reports every attribute with k-RR
at epsilon / d; :class:`~skldp.AttributeSampling` reports one uniformly drawn attribute with
k-RR at the whole epsilon. The figure shows the error of each attribute's unbiased estimate
(the total squared error, averaged over the d attributes) against d, measured over repeated
collections of n people drawn from the table (markers), with the closed-form variances of
the user guide (lines): splitting, the k-RR variance at epsilon / d with n reports; sampling,
the k-RR variance of one report at epsilon times :math:`E[1/N_j]`, about d / n.

At epsilon = 1 sampling wins at every d, by a factor that grows with d; at epsilon = 8
splitting wins for small d, where epsilon / d is still large (the rule of the user guide,
:ref:`budgets_multidimensional`).

Run it with ``python examples/plot_multidimensional_split_vs_sample.py [figure.png]``: it
shows the figure, or writes it to the file given (the user guide's copy is
``docs/user_guide/images/plot_multidimensional_split_vs_sample.png``). The docs build runs a
fast version (``SKLDP_GALLERY_FAST=1``: fewer people and repetitions).
"""

import os
import sys

import matplotlib.pyplot as plt
import numpy as np

from skldp import AttributeSampling, BudgetSplitting, MultidimensionalEstimator
from skldp.channels import RandomizedResponseChannel
from skldp.channels._multidimensional import expected_inverse_count
from skldp.datasets import load_adult_joint
from skldp.privacy import simulation

FAST = os.environ.get("SKLDP_GALLERY_FAST", "0") != "0"
N_PEOPLE = 5_000 if FAST else 48_842
REPETITIONS = 4 if FAST else 40
EPSILONS = (1.0, 8.0)


def adult():
    """The attribute codes of every non-empty cell, its probability, the domain sizes."""
    data = load_adult_joint()
    names = list(data.attribute_values)
    frame = data.frame  # categorical columns, in the order of attribute_values
    codes = np.column_stack([frame[a].cat.codes.to_numpy() for a in names])
    prob = frame["count"].to_numpy(dtype=float)
    return names, codes, prob / prob.sum(), [len(data.attribute_values[a]) for a in names]


def formula(cls, epsilon, marginals, n):
    """Mean over attributes of the closed-form total variance of the unbiased estimate."""
    d = len(marginals)
    total = 0.0
    for p in marginals:
        if cls is BudgetSplitting:
            total += RandomizedResponseChannel(epsilon / d, len(p)).variance(p, n).sum()
        else:
            one = RandomizedResponseChannel(epsilon, len(p)).variance(p, 1).sum()
            total += one * expected_inverse_count(n, d)
    return total / d


def measured(cls, epsilon, codes, prob, sizes, rng):
    """Mean over attributes and repetitions of the measured total squared error."""
    d = codes.shape[1]
    privatizer = cls(
        epsilon=epsilon, categories=[list(range(k)) for k in sizes], random_state=rng
    ).fit(codes[:1])
    marginals = [np.bincount(codes[:, j], weights=prob, minlength=k) for j, k in enumerate(sizes)]
    error = 0.0
    for _ in range(REPETITIONS):
        X = codes[rng.choice(len(prob), size=N_PEOPLE, p=prob)]
        with simulation():  # synthetic people: no budget is spent
            est = MultidimensionalEstimator().fit(privatizer.transform(X))
        error += sum(
            float(np.sum((q - p) ** 2)) for q, p in zip(est.distribution_, marginals, strict=True)
        )
    return error / (REPETITIONS * d), marginals


def main():
    names, codes, prob, sizes = adult()
    rng = np.random.default_rng(16)
    fig, axes = plt.subplots(1, len(EPSILONS), figsize=(11, 4.2), layout="constrained")
    dims = np.arange(1, len(names) + 1)
    for ax, epsilon in zip(axes, EPSILONS, strict=True):
        for cls, color in ((BudgetSplitting, "C0"), (AttributeSampling, "C1")):
            points, lines = [], []
            for d in dims:
                err, marginals = measured(cls, epsilon, codes[:, :d], prob, sizes[:d], rng)
                points.append(err)
                lines.append(formula(cls, epsilon, marginals, N_PEOPLE))
            ax.plot(dims, lines, color=color, label=f"{cls.__name__}: formula")
            ax.plot(dims, points, "o", color=color, label=f"{cls.__name__}: measured")
            print(f"epsilon={epsilon} {cls.__name__:18s} measured {np.array(points)}")
            print(f"epsilon={epsilon} {cls.__name__:18s} formula  {np.array(lines)}")
        ax.set_yscale("log")
        ax.set_xlabel("d, attributes per person")
        ax.set_ylabel("mean total squared error per attribute")
        ax.set_title(f"k-RR, epsilon = {epsilon:g} per person, n = {N_PEOPLE}", fontsize="medium")
        ax.legend(fontsize="small")
    fig.suptitle("UCI Adult, the first d of: " + ", ".join(names), fontsize="medium")
    if len(sys.argv) > 1:
        fig.savefig(sys.argv[1], dpi=110)
        print(f"wrote {sys.argv[1]}")
    else:
        plt.show()


if __name__ == "__main__":
    main()
