"""``mx.nd``'s random ops under their 1.x op names: ``random_*`` (scalar parameters, ``shape=``),
``sample_*`` (parameter arrays), the ``random_pdf_*`` densities, ``normal`` and ``uniform``.

One line per name over the ops of ``operator/legacy_random*.py``; every sampler draws
its key from the stream ``mx.random.seed`` restarts.
"""
from __future__ import annotations

from ._maker import nd_function

random_uniform = nd_function("_random_uniform", name="random_uniform")
random_normal = nd_function("_random_normal", name="random_normal")
random_gamma = nd_function("_random_gamma", name="random_gamma")
random_exponential = nd_function("_random_exponential", name="random_exponential")
random_poisson = nd_function("_random_poisson", name="random_poisson")
random_negative_binomial = nd_function("_random_negative_binomial", name="random_negative_binomial")
random_generalized_negative_binomial = nd_function("_random_generalized_negative_binomial",
                                                   name="random_generalized_negative_binomial")
random_binomial = nd_function("_random_binomial", name="random_binomial")
random_randint = nd_function("_random_randint", name="random_randint")
uniform = nd_function("_random_uniform", name="uniform")
normal = nd_function("_random_normal", name="normal")

sample_uniform = nd_function("_sample_uniform", name="sample_uniform")
sample_normal = nd_function("_sample_normal", name="sample_normal")
sample_gamma = nd_function("_sample_gamma", name="sample_gamma")
sample_exponential = nd_function("_sample_exponential", name="sample_exponential")
sample_poisson = nd_function("_sample_poisson", name="sample_poisson")
sample_negative_binomial = nd_function("_sample_negative_binomial", name="sample_negative_binomial")
sample_generalized_negative_binomial = nd_function("_sample_generalized_negative_binomial",
                                                   name="sample_generalized_negative_binomial")
sample_binomial = nd_function("_sample_binomial", name="sample_binomial")
sample_multinomial = nd_function("_sample_multinomial", name="sample_multinomial")
sample_categorical = nd_function("_sample_categorical", name="sample_categorical")

random_pdf_uniform = nd_function("_random_pdf_uniform", name="random_pdf_uniform")
random_pdf_normal = nd_function("_random_pdf_normal", name="random_pdf_normal")
random_pdf_gamma = nd_function("_random_pdf_gamma", name="random_pdf_gamma")
random_pdf_exponential = nd_function("_random_pdf_exponential", name="random_pdf_exponential")
random_pdf_poisson = nd_function("_random_pdf_poisson", name="random_pdf_poisson")
random_pdf_negative_binomial = nd_function("_random_pdf_negative_binomial", name="random_pdf_negative_binomial")
random_pdf_generalized_negative_binomial = nd_function("_random_pdf_generalized_negative_binomial",
                                                       name="random_pdf_generalized_negative_binomial")
random_pdf_dirichlet = nd_function("_random_pdf_dirichlet", name="random_pdf_dirichlet")

__all__ = [
    "random_uniform", "random_normal", "random_gamma", "random_exponential", "random_poisson",
    "random_negative_binomial", "random_generalized_negative_binomial", "random_binomial", "random_randint",
    "uniform", "normal", "sample_uniform", "sample_normal", "sample_gamma", "sample_exponential",
    "sample_poisson", "sample_negative_binomial", "sample_generalized_negative_binomial", "sample_binomial",
    "sample_multinomial", "sample_categorical", "random_pdf_uniform", "random_pdf_normal", "random_pdf_gamma",
    "random_pdf_exponential", "random_pdf_poisson", "random_pdf_negative_binomial",
    "random_pdf_generalized_negative_binomial", "random_pdf_dirichlet",
]
