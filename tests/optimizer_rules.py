"""MXNet 2's update rule of every optimizer, transcribed to NumPy (float64, one weight at a time).

Shared by the optimizer tests (``Optimizer.update``) and the Trainer tests (``gluon.Trainer.step``):
each ``ref_*(k, w, g, s, lr, wd, t)`` takes the constructor kwargs ``k`` (``rescale_grad``,
``clip_gradient`` and the optimizer's own hyper-parameters), the weight, its raw gradient, a dict
``s`` of state arrays (missing keys start at zeros), the parameter's learning rate and weight decay
(multipliers applied) and its update count ``t``; it returns the new weight and updates ``s``.
"""
import numpy as onp


def _pre(k, g):
    g = g * k.get("rescale_grad", 1.0)
    c = k.get("clip_gradient")
    return onp.clip(g, -c, c) if c else g


def _z(s, name, w):
    return s.setdefault(name, onp.zeros_like(w))


def ref_sgd(k, w, g, s, lr, wd, t, nesterov=False):
    g = _pre(k, g) + wd * w
    mu = k.get("momentum", 0.9 if nesterov else 0.0)
    if mu == 0:
        return w - lr * g
    s["mom"] = mu * _z(s, "mom", w) - lr * g
    return w + (mu * s["mom"] - lr * g if nesterov else s["mom"])


def ref_nag(k, w, g, s, lr, wd, t):
    return ref_sgd(k, w, g, s, lr, wd, t, nesterov=True)


def ref_adam(k, w, g, s, lr, wd, t):
    b1, b2, eps = k.get("beta1", 0.9), k.get("beta2", 0.999), k.get("epsilon", 1e-8)
    g = _pre(k, g) + wd * w
    s["m"] = b1 * _z(s, "m", w) + (1 - b1) * g
    s["v"] = b2 * _z(s, "v", w) + (1 - b2) * g * g
    return w - lr * onp.sqrt(1 - b2 ** t) / (1 - b1 ** t) * s["m"] / (onp.sqrt(s["v"]) + eps)


def ref_adamw(k, w, g, s, lr, wd, t):
    b1, b2, eps = k.get("beta1", 0.9), k.get("beta2", 0.999), k.get("epsilon", 1e-6)
    g = _pre(k, g)
    s["m"] = b1 * _z(s, "m", w) + (1 - b1) * g
    s["v"] = b2 * _z(s, "v", w) + (1 - b2) * g * g
    eta = lr * onp.sqrt(1 - b2 ** t) / (1 - b1 ** t) if k.get("correct_bias", True) else lr
    return w - eta * (s["m"] / (onp.sqrt(s["v"]) + eps) + wd * w)


def ref_adagrad(k, w, g, s, lr, wd, t):
    g = _pre(k, g) + wd * w
    s["h"] = _z(s, "h", w) + g * g
    return w - lr * g / (onp.sqrt(s["h"]) + k.get("epsilon", 1e-6))


def ref_rmsprop(k, w, g, s, lr, wd, t):
    rho, mu, eps = k.get("rho", 0.9), k.get("momentum", 0.9), k.get("epsilon", 1e-8)
    g = _pre(k, g) + wd * w
    s["var"] = rho * _z(s, "var", w) + (1 - rho) * g * g
    if k.get("centered", False):
        s["mean"] = rho * _z(s, "mean", w) + (1 - rho) * g
        s["mom"] = mu * _z(s, "mom", w) - lr * g / onp.sqrt(s["var"] - s["mean"] ** 2 + eps)
        w = w + s["mom"]
    else:
        w = w - lr * g / (onp.sqrt(s["var"]) + eps)
    cw = k.get("clip_weights")
    return onp.clip(w, -cw, cw) if cw else w


def ref_adadelta(k, w, g, s, lr, wd, t):
    rho, eps = k.get("rho", 0.9), k.get("epsilon", 1e-6)
    g = _pre(k, g) + wd * w
    s["acc_g"] = rho * _z(s, "acc_g", w) + (1 - rho) * g * g
    delta = onp.sqrt(_z(s, "acc_d", w) + eps) / onp.sqrt(s["acc_g"] + eps) * g
    s["acc_d"] = rho * s["acc_d"] + (1 - rho) * delta * delta
    return w - lr * delta


def ref_ftrl(k, w, g, s, lr, wd, t):
    lamda1, beta = k.get("lamda1", 0.01), k.get("beta", 1.0)
    g = _pre(k, g)
    n = _z(s, "n", w)
    s["z"] = _z(s, "z", w) + g - (onp.sqrt(n + g * g) - onp.sqrt(n)) * w / lr
    s["n"] = n + g * g
    z = s["z"]
    return (onp.sign(z) * lamda1 - z) / ((beta + onp.sqrt(s["n"])) / lr + wd) * (onp.abs(z) > lamda1)


def _safe_ratio(r1, r2):
    with onp.errstate(divide="ignore", invalid="ignore"):
        ratio = r1 / r2
    return 1.0 if (not onp.isfinite(ratio) or ratio == 0) else ratio


def ref_lamb(k, w, g, s, lr, wd, t):
    b1, b2, eps = k.get("beta1", 0.9), k.get("beta2", 0.999), k.get("epsilon", 1e-6)
    g = _pre(k, g)
    s["m"] = b1 * _z(s, "m", w) + (1 - b1) * g
    s["v"] = b2 * _z(s, "v", w) + (1 - b2) * g * g
    r1 = onp.linalg.norm(w)
    if k.get("lower_bound") is not None:
        r1 = max(r1, k["lower_bound"])
    if k.get("upper_bound") is not None:
        r1 = min(r1, k["upper_bound"])
    if k.get("bias_correction", True):
        d = (s["m"] / (1 - b1 ** t)) / (onp.sqrt(s["v"] / (1 - b2 ** t)) + eps) + wd * w
    else:
        d = s["m"] / (onp.sqrt(s["v"]) + eps) + wd * w
    return w - lr * _safe_ratio(r1, onp.linalg.norm(d)) * d


def ref_lars(k, w, g, s, lr, wd, t, name=""):
    eta, eps = k.get("eta", 0.001), k.get("epsilon", 1e-8)
    if not name.endswith(("gamma", "beta", "bias")):
        w_norm, g_norm = onp.linalg.norm(w), onp.linalg.norm(g * k.get("rescale_grad", 1.0))
        lars = eta * w_norm / (g_norm + wd * w_norm + eps) if w_norm > 0 and g_norm > 0 else 1.0
        lr = lr * lars
    return ref_sgd(k, w, g, s, lr, wd, t)


def ref_signum(k, w, g, s, lr, wd, t):
    mu, wd_lh = k.get("momentum", 0.9), k.get("wd_lh", 0.0)
    if mu == 0:
        return (1 - lr * (wd + wd_lh)) * w - lr * onp.sign(g)
    g = _pre(k, g) + wd * w
    s["mom"] = mu * _z(s, "mom", w) - (1 - mu) * g
    return (1 - lr * wd_lh) * w + lr * onp.sign(s["mom"])


PRE = dict(rescale_grad=0.5, clip_gradient=0.6, wd=0.05)
# (registered name, constructor kwargs, reference) -- learning rates are explicit for the references
CASES = [
    ("sgd", dict(learning_rate=0.1, **PRE), ref_sgd),
    ("sgd", dict(learning_rate=0.1, momentum=0.9, **PRE), ref_sgd),
    ("nag", dict(learning_rate=0.1, momentum=0.8, **PRE), ref_nag),
    ("nag", dict(learning_rate=0.1, momentum=0.0, **PRE), ref_nag),
    ("adam", dict(learning_rate=0.01, **PRE), ref_adam),
    ("adam", dict(learning_rate=0.01, beta1=0.8, beta2=0.9, epsilon=1e-3, begin_num_update=5, **PRE), ref_adam),
    ("adamw", dict(learning_rate=0.01, **PRE), ref_adamw),
    ("adamW", dict(learning_rate=0.01, correct_bias=False, epsilon=1e-3, **PRE), ref_adamw),
    ("adagrad", dict(learning_rate=0.1, **PRE), ref_adagrad),
    ("rmsprop", dict(learning_rate=0.01, **PRE), ref_rmsprop),
    ("rmsprop", dict(learning_rate=0.01, centered=True, momentum=0.7, clip_weights=1.5, **PRE), ref_rmsprop),
    ("adadelta", dict(learning_rate=1.0, **PRE), ref_adadelta),
    ("ftrl", dict(learning_rate=0.1, lamda1=0.05, beta=0.5, **PRE), ref_ftrl),
    ("lamb", dict(learning_rate=0.01, **PRE), ref_lamb),
    ("lamb", dict(learning_rate=0.01, bias_correction=False, lower_bound=0.5, upper_bound=1.5, **PRE), ref_lamb),
    ("lars", dict(learning_rate=0.1, momentum=0.9, eta=0.01, **PRE), ref_lars),
    ("signum", dict(learning_rate=0.01, wd_lh=0.1, **PRE), ref_signum),
    ("signum", dict(learning_rate=0.01, momentum=0.0, wd_lh=0.1, **PRE), ref_signum),
]
