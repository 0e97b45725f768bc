"""Write tests/fixtures/probability/*.npz: MXNet 2.0's ``mx.gluon.probability`` on fixed inputs.

Run inside a reference MXNet 2.0 virtualenv (``python tools/make_probability_fixtures.py``).  Each
distribution case stores its constructor arguments (``arg_<name>``; JSON ``spec`` says which are
Python scalars), the values it was evaluated at (``value``, ``icdf_in``) and whatever MXNet 2.0.0b1
computes for ``log_prob``, ``cdf``, ``icdf``, ``mean``, ``variance``, ``entropy`` (methods MXNet
raises on are left out).  ``kl_*.npz`` store ``kl_divergence(p, q)`` for the registered pairs.
"""
from __future__ import annotations

import json
import pathlib

import mxnet as mx
import numpy as np
from mxnet.gluon import probability as mgp

mx.npx.set_np()
OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "probability"
RNG = np.random.default_rng(7)


def rand(*shape, low=0.5, high=2.0):
    return RNG.uniform(low, high, shape).astype("float32")


def to_mx(args):
    return {k: (mx.np.array(v, dtype=v.dtype) if isinstance(v, np.ndarray) else v) for k, v in args.items()}


def run(fn):
    try:
        out = fn()
    except Exception:  # noqa: BLE001  (MXNet 2.0.0b1 raises for several methods; those are skipped)
        return None
    return np.asarray(out.asnumpy() if hasattr(out, "asnumpy") else out, dtype="float64")


def save(name, cls, args, value=None, icdf_in=None, extra=None):
    dist = getattr(mgp, cls)(**to_mx(args))
    record = {"spec": np.array(json.dumps({"cls": cls, "scalars": {k: v for k, v in args.items()
                                                                    if not isinstance(v, np.ndarray)},
                                           **(extra or {})}))}
    record.update({f"arg_{k}": v for k, v in args.items() if isinstance(v, np.ndarray)})
    outs = {}
    if value is not None:
        record["value"] = value
        outs["log_prob"] = run(lambda: dist.log_prob(mx.np.array(value, dtype=value.dtype)))
        outs["cdf"] = run(lambda: dist.cdf(mx.np.array(value, dtype=value.dtype)))
    if icdf_in is not None:
        record["icdf_in"] = icdf_in
        outs["icdf"] = run(lambda: dist.icdf(mx.np.array(icdf_in)))
    for prop in ("mean", "variance"):
        outs[prop] = run(lambda: getattr(dist, prop))
    outs["entropy"] = run(dist.entropy)
    record.update({k: v for k, v in outs.items() if v is not None})
    np.savez_compressed(OUT / f"{name}.npz", **record)


def save_kl(name, p_cls, p_args, q_cls, q_args):
    p = getattr(mgp, p_cls)(**to_mx(p_args))
    q = getattr(mgp, q_cls)(**to_mx(q_args))
    kl = run(lambda: mgp.kl_divergence(p, q))
    record = {"spec": np.array(json.dumps({"p": p_cls, "q": q_cls,
                                           "p_scalars": {k: v for k, v in p_args.items() if not isinstance(v, np.ndarray)},
                                           "q_scalars": {k: v for k, v in q_args.items() if not isinstance(v, np.ndarray)}})),
              "kl": kl}
    record.update({f"p_{k}": v for k, v in p_args.items() if isinstance(v, np.ndarray)})
    record.update({f"q_{k}": v for k, v in q_args.items() if isinstance(v, np.ndarray)})
    np.savez_compressed(OUT / f"kl_{name}.npz", **record)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for f in OUT.glob("*.npz"):
        f.unlink()
    s = (2, 3)
    u = rand(*s, low=0.05, high=0.95)
    real = rand(*s, low=-2, high=2)
    pos = rand(*s, low=0.2, high=3)
    counts = RNG.integers(0, 5, s).astype("float32")
    save("normal", "Normal", {"loc": rand(*s, low=-1, high=1), "scale": rand(*s)}, real, u)
    save("normal_scalar", "Normal", {"loc": 0.5, "scale": 2.0}, real, u)
    save("laplace", "Laplace", {"loc": rand(*s, low=-1, high=1), "scale": rand(*s)}, real, u)
    save("cauchy", "Cauchy", {"loc": rand(*s, low=-1, high=1), "scale": rand(*s)}, real, u)
    save("gumbel", "Gumbel", {"loc": rand(*s, low=-1, high=1), "scale": rand(*s)}, real, u)
    save("uniform", "Uniform", {"low": rand(*s, low=-3, high=-2), "high": rand(*s, low=2, high=3)}, real, u)
    save("studentT", "StudentT", {"df": rand(*s, low=3, high=6), "loc": rand(*s, low=-1, high=1),
                                  "scale": rand(*s)}, real)
    save("exponential", "Exponential", {"scale": rand(*s)}, pos, u)
    save("gamma", "Gamma", {"shape": rand(*s), "scale": rand(*s)}, pos)
    save("chi2", "Chi2", {"df": rand(*s, low=1, high=5)}, pos)
    save("beta", "Beta", {"alpha": rand(*s), "beta": rand(*s)}, u)
    alpha = rand(2, 4)
    simplex = RNG.dirichlet(np.ones(4), 2).astype("float32")
    save("dirichlet", "Dirichlet", {"alpha": alpha}, simplex)
    save("fishersnedecor", "FisherSnedecor", {"df1": rand(*s, low=1, high=6), "df2": rand(*s, low=5, high=9)}, pos)
    save("half_normal", "HalfNormal", {"scale": rand(*s)}, pos, u)
    save("half_cauchy", "HalfCauchy", {"scale": rand(*s)}, pos, u)
    save("pareto", "Pareto", {"alpha": rand(*s, low=2.5, high=4), "scale": rand(*s, low=0.1, high=0.2)}, pos, u)
    save("weibull", "Weibull", {"concentration": rand(*s), "scale": rand(*s)}, pos, u)
    save("bernoulli", "Bernoulli", {"prob": u}, (counts % 2).astype("float32"))
    save("bernoulli_logit", "Bernoulli", {"logit": real}, (counts % 2).astype("float32"))
    save("binomial", "Binomial", {"n": 4, "prob": u}, counts)
    save("geometric", "Geometric", {"prob": u}, counts)
    save("negative_binomial", "NegativeBinomial", {"n": pos, "prob": u}, counts)
    save("poisson", "Poisson", {"rate": pos}, counts)
    prob = RNG.dirichlet(np.ones(4), 3).astype("float32")
    save("categorical", "Categorical", {"num_events": 4, "prob": prob},
         np.array([0, 3, 2], "float32"))
    save("categorical_logit", "Categorical", {"num_events": 4, "logit": rand(3, 4, low=-2, high=2)},
         np.array([1, 1, 3], "float32"))
    onehot = np.eye(4, dtype="float32")[[2, 0, 1]]
    save("one_hot_categorical", "OneHotCategorical", {"num_events": 4, "prob": prob}, onehot)
    save("multinomial", "Multinomial", {"num_events": 4, "prob": prob, "total_count": 5},
         np.array([[1, 2, 0, 2], [5, 0, 0, 0], [0, 1, 1, 3]], "float32"))
    save("relaxed_bernoulli", "RelaxedBernoulli", {"T": 0.7, "prob": u}, u)
    save("relaxed_one_hot_categorical", "RelaxedOneHotCategorical", {"T": 0.7, "num_events": 4, "prob": prob},
         RNG.dirichlet(np.ones(4), 3).astype("float32"))
    a = RNG.normal(size=(2, 3, 3)).astype("float32")
    cov = (a @ a.transpose(0, 2, 1) + 3 * np.eye(3)).astype("float32")
    save("multivariate_normal", "MultivariateNormal", {"loc": rand(2, 3, low=-1, high=1), "cov": cov},
         rand(2, 3, low=-2, high=2))
    save("multivariate_normal_tril", "MultivariateNormal",
         {"loc": rand(2, 3, low=-1, high=1), "scale_tril": np.linalg.cholesky(cov).astype("float32")},
         rand(2, 3, low=-2, high=2))
    save("multivariate_normal_precision", "MultivariateNormal",
         {"loc": rand(2, 3, low=-1, high=1), "precision": np.linalg.inv(cov).astype("float32")},
         rand(2, 3, low=-2, high=2))

    def pair(*shape, low=0.5, high=2.0):
        return rand(*shape, low=low, high=high)
    save_kl("normal", "Normal", {"loc": pair(*s, low=-1), "scale": pair(*s)}, "Normal",
            {"loc": pair(*s, low=-1), "scale": pair(*s)})
    save_kl("bernoulli", "Bernoulli", {"prob": u}, "Bernoulli", {"prob": rand(*s, low=0.1, high=0.9)})
    save_kl("categorical", "Categorical", {"num_events": 4, "prob": prob}, "Categorical",
            {"num_events": 4, "prob": RNG.dirichlet(np.ones(4), 3).astype("float32")})
    save_kl("one_hot_categorical", "OneHotCategorical", {"num_events": 4, "prob": prob}, "OneHotCategorical",
            {"num_events": 4, "prob": RNG.dirichlet(np.ones(4), 3).astype("float32")})
    save_kl("uniform", "Uniform", {"low": pair(*s, low=-1, high=0), "high": pair(*s, low=1, high=2)}, "Uniform",
            {"low": pair(*s, low=-3, high=-1), "high": pair(*s, low=2, high=3)})
    save_kl("cauchy", "Cauchy", {"loc": pair(*s, low=-1), "scale": pair(*s)}, "Cauchy",
            {"loc": pair(*s, low=-1), "scale": pair(*s)})
    save_kl("laplace", "Laplace", {"loc": pair(*s, low=-1), "scale": pair(*s)}, "Laplace",
            {"loc": pair(*s, low=-1), "scale": pair(*s)})
    save_kl("poisson", "Poisson", {"rate": pair(*s)}, "Poisson", {"rate": pair(*s)})
    save_kl("geometric", "Geometric", {"prob": u}, "Geometric", {"prob": rand(*s, low=0.1, high=0.9)})
    save_kl("exponential", "Exponential", {"scale": pair(*s)}, "Exponential", {"scale": pair(*s)})
    save_kl("pareto", "Pareto", {"alpha": pair(*s), "scale": pair(*s, low=1, high=2)}, "Pareto",
            {"alpha": pair(*s), "scale": pair(*s, low=0.2, high=0.9)})
    save_kl("gumbel", "Gumbel", {"loc": pair(*s, low=-1), "scale": pair(*s)}, "Gumbel",
            {"loc": pair(*s, low=-1), "scale": pair(*s)})
    save_kl("gamma", "Gamma", {"shape": pair(*s), "scale": pair(*s)}, "Gamma", {"shape": pair(*s), "scale": pair(*s)})
    save_kl("beta", "Beta", {"alpha": pair(*s), "beta": pair(*s)}, "Beta", {"alpha": pair(*s), "beta": pair(*s)})
    save_kl("dirichlet", "Dirichlet", {"alpha": pair(2, 4)}, "Dirichlet", {"alpha": pair(2, 4)})
    save_kl("half_normal", "HalfNormal", {"scale": pair(*s)}, "HalfNormal", {"scale": pair(*s)})
    save_kl("binomial", "Binomial", {"n": 5, "prob": u}, "Binomial", {"n": 5, "prob": rand(*s, low=0.1, high=0.9)})
    save_kl("mvn", "MultivariateNormal", {"loc": pair(2, 3, low=-1), "cov": cov}, "MultivariateNormal",
            {"loc": pair(2, 3, low=-1), "cov": cov[::-1].copy()})
    save_kl("uniform_normal", "Uniform", {"low": pair(*s, low=-1, high=0), "high": pair(*s, low=1, high=2)},
            "Normal", {"loc": pair(*s, low=-1), "scale": pair(*s)})
    save_kl("uniform_gumbel", "Uniform", {"low": pair(*s, low=-1, high=0), "high": pair(*s, low=1, high=2)},
            "Gumbel", {"loc": pair(*s, low=-1), "scale": pair(*s)})
    save_kl("exponential_gumbel", "Exponential", {"scale": pair(*s)}, "Gumbel",
            {"loc": pair(*s, low=-1), "scale": pair(*s)})
    save_kl("exponential_normal", "Exponential", {"scale": pair(*s)}, "Normal",
            {"loc": pair(*s, low=-1), "scale": pair(*s)})
    save_kl("exponential_gamma", "Exponential", {"scale": pair(*s)}, "Gamma", {"shape": pair(*s), "scale": pair(*s)})


if __name__ == "__main__":
    main()
