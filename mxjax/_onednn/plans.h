// oneDNN convolution plans: a convolution's configuration, the primitive and reorders built
// for it once, a bounded cache of them, and running one on caller-owned buffers.
//
// Each distinct configuration (kind, dtype, layout, shapes, stride, pad, dilation, groups,
// bias) gets one plan: the oneDNN primitive, chosen with format_tag::any so oneDNN picks its
// preferred (often blocked) layouts, and the reorders between those layouts and the caller's
// plain arrays.  conv.cc exposes them to XLA as FFI handlers.  Everything here reports
// failure by throwing (dnnl::error, std::exception); the handlers turn that into errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"

namespace mxjax_onednn {

using Dims = dnnl::memory::dims;

enum Kind : int64_t { kForward = 0, kBackwardData = 1, kBackwardWeights = 2 };

// One convolution, in MXNet's terms.  flat() is the cache key and what Python passes to
// mxjax_onednn_conv_check.
struct Config {
  // channel_last: the arrays' axis order (MXNet's layout); memory_last: activations are stored
  // channel-last whatever their axis order (mxjax asks XLA for that layout: no transposes
  // between oneDNN and XLA's own channel-last pooling).
  // plain: activations stay in the caller's layout (no reorders; mxjax's inference path, channel-last
  // storage), oneDNN choosing only the weights' layout.
  int64_t kind = kForward, dtype = 0, nsp = 0, channel_last = 0, memory_last = 0, groups = 1, has_bias = 0;
  int64_t n = 0, c = 0, o = 0, plain = 0;
  Dims in, k, out, stride, pad, dilate;

  std::vector<int64_t> flat() const {
    std::vector<int64_t> v = {kind, dtype, nsp, channel_last, memory_last, groups, has_bias, n, c, o, plain};
    for (const Dims* d : {&in, &k, &out, &stride, &pad, &dilate}) v.insert(v.end(), d->begin(), d->end());
    return v;
  }

  static bool from_flat(const int64_t* v, int64_t len, Config* cfg) {
    if (len < 11) return false;
    Config c;
    c.kind = v[0], c.dtype = v[1], c.nsp = v[2], c.channel_last = v[3], c.memory_last = v[4], c.groups = v[5];
    c.has_bias = v[6], c.n = v[7], c.c = v[8], c.o = v[9], c.plain = v[10] != 0;
    if (c.nsp < 1 || c.nsp > 3 || len != 11 + 6 * c.nsp || c.kind < 0 || c.kind > 2 || c.dtype < 0 ||
        c.dtype > 1 || c.groups < 1)
      return false;
    if (c.channel_last) c.memory_last = 0;
    const int64_t* p = v + 11;
    for (Dims* d : {&c.in, &c.k, &c.out, &c.stride, &c.pad, &c.dilate}) {
      d->assign(p, p + c.nsp);
      p += c.nsp;
    }
    *cfg = c;
    return true;
  }

  std::string describe() const {
    std::ostringstream s;
    auto list = [&s](const Dims& d) {
      s << "(";
      for (size_t i = 0; i < d.size(); ++i) s << (i ? ", " : "") << d[i];
      s << ")";
    };
    static const char* kinds[] = {"forward", "backward-data", "backward-weights"};
    s << "Convolution (oneDNN " << kinds[kind] << "): data ";
    list(data_shape());
    s << ", weight ";
    list(weight_shape());
    s << ", output ";
    list(out_shape());
    s << ", stride ";
    list(stride);
    s << ", pad ";
    list(pad);
    s << ", dilate ";
    list(dilate);
    s << ", num_group " << groups << ", layout " << (channel_last ? "channel-last" : "channel-first");
    if (plain) s << " (activations in that layout)";
    return s.str();
  }

  // The caller's (MXNet's) shapes.
  Dims data_shape() const { return with_channel(n, c, in); }
  Dims out_shape() const { return with_channel(n, o, out); }
  Dims weight_shape() const { return with_channel(o, c / groups, k); }
  Dims with_channel(int64_t lead, int64_t ch, const Dims& sp) const {
    Dims d = {lead};
    if (!channel_last) d.push_back(ch);
    d.insert(d.end(), sp.begin(), sp.end());
    if (channel_last) d.push_back(ch);
    return d;
  }
};

struct Plan;

// The plan of a configuration, built on first use and kept (least recently used evicted).
std::shared_ptr<Plan> get_plan(const Config& cfg);

// Runs a plan on `pointers` (inputs in handler order, then the output).  packed_weights: the
// weights pointer already holds them in the plan's own layout (pack_weights), so their reorder
// is skipped.  One call at a time, on all cores.
void execute(const Plan& plan, const std::vector<void*>& pointers, bool packed_weights = false);

// Bytes of the weights in the layout a forward plan uses, or 0 when it reads them as given
// (nothing to pack).
size_t packed_weight_bytes(const Plan& plan);

// Writes the weights `w` (MXNet's layout) into `out` in a forward plan's own layout (a plan
// whose packed_weight_bytes is not 0).
void pack_weights(const Plan& plan, const void* w, void* out);

// The cache: plans built so far, plans held now, its capacity (<= 0: unbounded).
int64_t plans_built();
int64_t plans_cached();
void set_cache_capacity(int64_t capacity);

// Which arrays' layouts oneDNN chooses: 0 none, 1 the weights, 2 all (default).  For measuring.
void set_layout_any(int any);

}  // namespace mxjax_onednn
