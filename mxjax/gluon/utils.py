"""``mx.gluon.utils``: data splitting, gradient clipping, downloads and hook handles (MXNet 2.0)."""
from __future__ import annotations

import collections
import hashlib
import os
import shutil
import ssl
import urllib.error
import urllib.request
import uuid
import warnings
import weakref
from typing import Any

import numpy as onp

from .. import ndarray
from .. import numpy as _mx_np
from .._ndarray import NDArray
from ..util import is_np_array, is_np_shape

__all__ = ['split_data', 'split_and_load', 'clip_global_norm', 'check_sha1', 'download', 'replace_file',
           'shape_is_known', 'split_rnn_params', 'HookHandle']

_NO_NETWORK = ("download: cannot fetch {url}: {reason}. mxjax needs network access for this URL; "
               "download the file by other means and pass its path, or use a file:// URL.")


def split_data(data: Any, num_slice: int, batch_axis: int = 0, even_split: bool = True) -> list:
    """Split ``data`` into ``num_slice`` slices along ``batch_axis`` (a list even when 1 slice).

    With ``even_split=False`` the first ``size % num_slice`` slices get one extra element.
    """
    size = data.shape[batch_axis]
    if even_split and size % num_slice != 0:
        raise ValueError(
            "data with shape %s cannot be evenly split into %d slices along axis %d. "
            "Use a batch size that's multiple of %d or set even_split=False to allow "
            "uneven partitioning of data." % (str(data.shape), num_slice, batch_axis, num_slice))
    n_each, extras = divmod(size, num_slice)
    sizes = [0] + extras * [n_each + 1] + (num_slice - extras) * [n_each]
    div_points = onp.array(sizes).cumsum()
    if is_np_array():
        return _mx_np.split(data, indices_or_sections=[int(i) for i in div_points[1:-1]], axis=batch_axis)
    return [ndarray.slice_axis(data, axis=batch_axis, begin=int(div_points[i]), end=int(div_points[i + 1]))
            for i in range(num_slice)]


def split_and_load(data: Any, ctx_list: list, batch_axis: int = 0, even_split: bool = True) -> list:
    """Split ``data`` into ``len(ctx_list)`` slices along ``batch_axis`` and copy slice ``i`` to ``ctx_list[i]``."""
    if not isinstance(data, NDArray):
        array_fn = _mx_np.array if is_np_array() else ndarray.array
        data = array_fn(data, ctx=ctx_list[0])
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    slices = split_data(data, len(ctx_list), batch_axis, even_split)
    return [s.as_in_context(ctx) for s, ctx in zip(slices, ctx_list)]


def clip_global_norm(arrays: list, max_norm: float, check_isfinite: bool = True) -> Any:
    """Rescale ``arrays`` in place so that their global 2-norm is at most ``max_norm``.

    Returns the norm before clipping: a float when ``check_isfinite`` (which warns on
    nan/inf), else an array of shape ``(1,)``.
    """
    if not arrays:
        raise ValueError("clip_global_norm: expected a non-empty list of arrays")
    device = arrays[0].device
    groups = collections.defaultdict(list)  # one partial sum per device, as MXNet
    for arr in arrays:
        groups[arr.device].append(arr)
    total = _mx_np.zeros((1,), dtype='float32', device=device)
    for group in groups.values():
        for arr in group:
            total = total + _mx_np.square(arr.as_np_ndarray() if not is_np_array() else arr).astype(
                'float32').sum().as_in_context(device)
    total_norm = _mx_np.sqrt(total)
    if check_isfinite and not onp.isfinite(total_norm.item()):
        warnings.warn(UserWarning('nan or inf is detected. Clipping results will be undefined.'), stacklevel=2)
    scale = min(max_norm / (total_norm.item() + 1e-8), 1.0)
    for arr in arrays:
        arr *= scale
    return total_norm.item() if check_isfinite else total_norm


def check_sha1(filename: str, sha1_hash: str) -> bool:
    """Whether the SHA-1 of ``filename``'s content equals ``sha1_hash`` (hex digits)."""
    sha1 = hashlib.sha1()
    with open(filename, 'rb') as f:
        for chunk in iter(lambda: f.read(1048576), b''):
            sha1.update(chunk)
    return sha1.hexdigest() == sha1_hash


def replace_file(src: str, dst: str) -> None:
    """Atomically move ``src`` to ``dst`` (replacing it); on failure remove ``src`` and raise ``OSError``."""
    try:
        os.replace(src, dst)
    except OSError as err:
        try:
            os.remove(src)
        except OSError:
            pass
        raise OSError('Moving downloaded temp file - {}, to {} failed. Please retry the download.'
                      .format(src, dst)) from err


def _fetch(url: str, dest: str, verify_ssl: bool) -> None:
    context = None
    if url.startswith('https') and not verify_ssl:
        context = ssl._create_unverified_context()  # pylint: disable=protected-access
    try:
        with urllib.request.urlopen(url, context=context, timeout=60) as response, open(dest, 'wb') as f:
            status = getattr(response, 'status', None)
            if status is not None and status != 200:
                raise RuntimeError('Failed downloading url {}'.format(url))
            shutil.copyfileobj(response, f, 1024 * 64)
    except urllib.error.HTTPError as err:
        raise RuntimeError('Failed downloading url {} (HTTP {})'.format(url, err.code)) from err
    except urllib.error.URLError as err:
        raise ConnectionError(_NO_NETWORK.format(url=url, reason=err.reason)) from err


def download(url: str, path: str | None = None, overwrite: bool = False, sha1_hash: str | None = None,
             retries: int = 5, verify_ssl: bool = True) -> str:
    """Download ``url`` to ``path`` (default: the URL's file name in the current directory).

    An existing file is kept unless ``overwrite`` or its SHA-1 differs from ``sha1_hash``.
    Failed attempts are retried ``retries`` times; without network the last error is a
    ``ConnectionError`` naming the URL.  Returns the file path.
    """
    if path is None:
        fname = url.split('/')[-1]
        assert fname, "Can't construct file-name from this URL. Please set the `path` option manually."
    else:
        path = os.path.expanduser(path)
        fname = os.path.join(path, url.split('/')[-1]) if os.path.isdir(path) else path
    assert retries >= 0, "Number of retries should be at least 0, currently it's {}".format(retries)
    if not verify_ssl:
        warnings.warn('Unverified HTTPS request is being made (verify_ssl=False). '
                      'Adding certificate verification is strongly advised.')
    if not (overwrite or not os.path.exists(fname) or (sha1_hash and not check_sha1(fname, sha1_hash))):
        return fname
    dirname = os.path.dirname(os.path.abspath(os.path.expanduser(fname)))
    os.makedirs(dirname, exist_ok=True)
    tmp = ''
    while retries + 1 > 0:
        try:
            print('Downloading {} from {}...'.format(fname, url))
            tmp = '{}.{}'.format(fname, uuid.uuid4())
            _fetch(url, tmp, verify_ssl)
            if not os.path.exists(fname) or overwrite or (sha1_hash and not check_sha1(fname, sha1_hash)):
                replace_file(tmp, fname)
            else:  # another process finished the same file first
                os.remove(tmp)
                warnings.warn('File {} exists in file system so the downloaded file is deleted'.format(fname))
            if sha1_hash and not check_sha1(fname, sha1_hash):
                raise UserWarning('File {} is downloaded but the content hash does not match.'
                                  ' The repo may be outdated or download may be incomplete. '
                                  'If the "repo_url" is overridden, consider switching to '
                                  'the default repo.'.format(fname))
            break
        except Exception as err:  # pylint: disable=broad-except
            if tmp and os.path.exists(tmp):
                os.remove(tmp)
            retries -= 1
            if retries <= 0:
                raise err
            print('download failed due to {}, retrying, {} attempt{} left'
                  .format(repr(err), retries, 's' if retries > 1 else ''))
    return fname


def _get_repo_url() -> str:
    """The base URL of the Gluon dataset/model repository (``MXNET_GLUON_REPO`` overrides it)."""
    repo_url = os.environ.get('MXNET_GLUON_REPO', 'https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/')
    return repo_url if repo_url.endswith('/') else repo_url + '/'


def _get_repo_file_url(namespace: str, filename: str) -> str:
    """The URL of ``filename`` under ``namespace`` in the Gluon repository."""
    return '{}{}/{}'.format(_get_repo_url(), namespace, filename)


def _brief_print_list(lst: Any, limit: int = 7) -> str:
    """Print at most ``limit`` elements of ``lst``."""
    lst = list(lst)
    if len(lst) > limit:
        return _brief_print_list(lst[:limit // 2], limit) + ', ..., ' + _brief_print_list(lst[-limit // 2:], limit)
    return ', '.join(["'%s'" % str(i) for i in lst])


def _indent(s_: str, num_spaces: int) -> str:
    lines = s_.split('\n')
    if len(lines) == 1:
        return s_
    return '\n'.join(lines[:1] + [(num_spaces * ' ') + line for line in lines[1:]])


class HookHandle:
    """A handle that attaches a hook to a hooks dict (keyed by ``id(hook)``) and can detach it."""

    def __init__(self) -> None:
        self._hooks_dict_ref = None
        self._id = None

    def attach(self, hooks_dict: dict, hook: Any) -> None:
        assert not self._hooks_dict_ref, 'The same handle cannot be attached twice.'
        self._id = id(hook)
        hooks_dict[self._id] = hook
        self._hooks_dict_ref = weakref.ref(hooks_dict)

    def detach(self) -> None:
        hooks_dict = self._hooks_dict_ref() if self._hooks_dict_ref is not None else None
        if hooks_dict is not None and self._id in hooks_dict:
            del hooks_dict[self._id]

    def __getstate__(self) -> tuple:
        return (self._hooks_dict_ref(), self._id)

    def __setstate__(self, state: tuple) -> None:
        if state[0] is None:
            self._hooks_dict_ref = weakref.ref(collections.OrderedDict())
        else:
            self._hooks_dict_ref = weakref.ref(state[0])
        self._id = state[1]

    def __enter__(self) -> "HookHandle":
        return self

    def __exit__(self, ptype: Any, value: Any, trace: Any) -> None:
        self.detach()


def shape_is_known(shape: Any) -> bool:
    """Whether every dimension of ``shape`` is known (unknown is -1 under np shape semantics, else 0)."""
    if shape is None:
        return False
    unknown = -1 if is_np_shape() else 0
    if len(shape) == 0:
        return unknown == -1
    for dim in shape:
        if dim == unknown:
            return False
        assert dim > unknown, "shape dimension size cannot be less than {}, while received {}".format(unknown, dim)
    return True


def split_rnn_params(param: Any, mode: str, num_layers: int, input_size: int, hidden_size: int,
                     bidirectional: bool = False, projection_size: int | None = None) -> dict:
    """Split a fused RNN parameter vector into per-layer ``{l0_i2h_weight: ..., r0_h2h_bias: ...}``.

    ``mode`` is one of ``rnn_relu``, ``rnn_tanh``, ``lstm``, ``gru``; the layout is MXNet's
    (all weights, then all biases; per layer, per direction, i2h then h2h [then h2r]).
    """
    gates = {'rnn_relu': 1, 'rnn_tanh': 1, 'lstm': 4, 'gru': 3}[mode]
    dirs = ['l', 'r'][:2 if bidirectional else 1]
    out_size = projection_size if projection_size else hidden_size
    groups = ['i2h', 'h2h', 'h2r'] if projection_size else ['i2h', 'h2h']
    param_dict, begin = {}, 0
    for p in ['weight', 'bias']:
        for layer in range(num_layers):
            for d in dirs:
                for g in groups:
                    if g == 'h2r':
                        if p == 'bias':
                            continue
                        shape = (projection_size, hidden_size)
                    else:
                        ni = input_size if layer == 0 else out_size * len(dirs)
                        if g == 'h2h':
                            ni = out_size
                        shape = (gates * hidden_size, ni) if p == 'weight' else (gates * hidden_size,)
                    length = int(onp.prod(shape))
                    param_dict['{}{}_{}_{}'.format(d, layer, g, p)] = param[begin:begin + length].reshape(shape)
                    begin += length
    return param_dict
