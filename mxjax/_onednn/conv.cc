// Convolution forward, backward-data and backward-weights on oneDNN, as XLA FFI handlers.
//
// mxjax registers the handlers as CPU custom-call targets and calls them with
// jax.ffi.ffi_call, so they run inside jitted programs.  A call builds the configuration
// from its buffers and attributes and runs that configuration's plan (plans.h): oneDNN's
// primitive with the layouts it prefers, built once and cached.  A fourth handler packs
// weights into the forward plan's own layout once, for inference calls that then take them
// packed (no reorder per call).  oneDNN threads with OpenMP (the wheel's runtime); calls run
// one at a time, each on all cores.  Any failure comes back to XLA as an ffi::Error naming
// Convolution and the shapes; nothing here aborts.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "plans.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
using namespace mxjax_onednn;

namespace {

// Builds the Config of a call from its buffers: `data` is (N, C, sp) or (N, sp, C),
// `weight` MXNet's weight, `out` the convolution's output.
ffi::Error make_config(Kind kind, const ffi::AnyBuffer::Dimensions& data, const ffi::AnyBuffer::Dimensions& weight,
                       const ffi::AnyBuffer::Dimensions& out, ffi::DataType dtype, ffi::Span<const int64_t> stride,
                       ffi::Span<const int64_t> pad, ffi::Span<const int64_t> dilate, int64_t groups,
                       int64_t channel_last, int64_t memory_last, int64_t plain, bool has_bias, Config* cfg) {
  const size_t rank = data.size();
  if (rank < 3 || rank > 5 || weight.size() != rank || out.size() != rank || stride.size() != rank - 2 ||
      pad.size() != rank - 2 || dilate.size() != rank - 2 || groups < 1)
    return ffi::Error::InvalidArgument("Convolution (oneDNN): inconsistent ranks of data, weight, output and "
                                       "stride/pad/dilate");
  if (dtype != ffi::DataType::F32 && dtype != ffi::DataType::BF16)
    return ffi::Error::InvalidArgument("Convolution (oneDNN): only float32 and bfloat16 are supported");
  Config c;
  c.kind = kind;
  c.dtype = dtype == ffi::DataType::BF16 ? 1 : 0;
  c.nsp = static_cast<int64_t>(rank) - 2;
  c.channel_last = channel_last != 0;
  c.memory_last = memory_last != 0 && !c.channel_last;
  c.groups = groups;
  c.has_bias = has_bias;
  c.plain = plain != 0;
  const size_t ch = c.channel_last ? rank - 1 : 1, sp0 = c.channel_last ? 1 : 2;
  c.n = data[0];
  c.c = data[ch];
  c.o = out[ch];
  for (int64_t i = 0; i < c.nsp; ++i) {
    c.in.push_back(data[sp0 + i]);
    c.out.push_back(out[sp0 + i]);
    c.k.push_back(weight[sp0 + i]);
    c.stride.push_back(stride[i]);
    c.pad.push_back(pad[i]);
    c.dilate.push_back(dilate[i]);
  }
  *cfg = c;
  return ffi::Error::Success();
}

// Calls `work`; oneDNN's and the library's exceptions (dnnl::error is one) become errors naming cfg.
template <typename Work>
ffi::Error guarded(const Config& cfg, Work&& work) {
  try {
    work();
  } catch (const std::exception& e) {
    return ffi::Error::Internal(cfg.describe() + ": " + e.what());
  }
  return ffi::Error::Success();
}

// Runs cfg's plan on the buffers.
ffi::Error run(const Config& cfg, const std::vector<void*>& pointers) {
  return guarded(cfg, [&] { execute(*get_plan(cfg), pointers); });
}

ffi::Error forward(ffi::AnyBuffer x, ffi::AnyBuffer w, ffi::RemainingArgs rest, ffi::Result<ffi::AnyBuffer> y,
                   ffi::Span<const int64_t> stride, ffi::Span<const int64_t> pad, ffi::Span<const int64_t> dilate,
                   int64_t groups, int64_t channel_last, int64_t memory_last, int64_t plain) {
  Config cfg;
  const bool has_bias = rest.size() == 1;
  auto err = make_config(kForward, x.dimensions(), w.dimensions(), y->dimensions(), x.element_type(), stride, pad,
                         dilate, groups, channel_last, memory_last, plain, has_bias, &cfg);
  if (!err.success()) return err;
  std::vector<void*> ptrs = {x.untyped_data(), w.untyped_data()};
  if (has_bias) {
    auto b = rest.get<ffi::AnyBuffer>(0);
    if (b.has_error()) return b.error();
    ptrs.push_back(b->untyped_data());
  }
  ptrs.push_back(y->untyped_data());
  return run(cfg, ptrs);
}

ffi::Error backward_data(ffi::AnyBuffer dy, ffi::AnyBuffer w, ffi::Result<ffi::AnyBuffer> dx,
                         ffi::Span<const int64_t> stride, ffi::Span<const int64_t> pad, ffi::Span<const int64_t> dilate,
                         int64_t groups, int64_t channel_last, int64_t memory_last, int64_t plain) {
  Config cfg;
  auto err = make_config(kBackwardData, dx->dimensions(), w.dimensions(), dy.dimensions(), dy.element_type(), stride,
                         pad, dilate, groups, channel_last, memory_last, plain, false, &cfg);
  if (!err.success()) return err;
  return run(cfg, {dy.untyped_data(), w.untyped_data(), dx->untyped_data()});
}

ffi::Error backward_weights(ffi::AnyBuffer x, ffi::AnyBuffer dy, ffi::Result<ffi::AnyBuffer> dw,
                            ffi::Span<const int64_t> stride, ffi::Span<const int64_t> pad,
                            ffi::Span<const int64_t> dilate, int64_t groups, int64_t channel_last,
                            int64_t memory_last, int64_t plain) {
  Config cfg;
  auto err = make_config(kBackwardWeights, x.dimensions(), dw->dimensions(), dy.dimensions(), x.element_type(),
                         stride, pad, dilate, groups, channel_last, memory_last, plain, false, &cfg);
  if (!err.success()) return err;
  return run(cfg, {x.untyped_data(), dy.untyped_data(), dw->untyped_data()});
}


// The forward configuration given as Config::flat() in the `config` attribute of the packing
// handlers, its plan and its packed size (never 0: a plan that reads the weights as they are
// has nothing to pack).
ffi::Error packed_config(ffi::Span<const int64_t> config, Config* cfg, std::shared_ptr<Plan>* plan, size_t* bytes) {
  if (!Config::from_flat(config.begin(), static_cast<int64_t>(config.size()), cfg) || cfg->kind != kForward ||
      !cfg->plain)
    return ffi::Error::InvalidArgument("Convolution (oneDNN): packed weights need an inference (plain) forward "
                                       "configuration");
  auto err = guarded(*cfg, [&] {
    *plan = get_plan(*cfg);
    *bytes = packed_weight_bytes(**plan);
  });
  if (!err.success()) return err;
  if (*bytes == 0)
    return ffi::Error::InvalidArgument(cfg->describe() + ": this plan reads the weights as given; nothing to pack");
  return ffi::Error::Success();
}

int64_t count(const Dims& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

ffi::Error size_error(const Config& cfg, const char* what, size_t got, size_t want) {
  return ffi::Error::InvalidArgument(cfg.describe() + ": " + what + " of " + std::to_string(got) +
                                     ", this configuration takes " + std::to_string(want));
}

// Packs MXNet's weights `w` into `out` (uint8) in the layout of the forward plan `config`.
ffi::Error pack(ffi::AnyBuffer w, ffi::Result<ffi::AnyBuffer> out, ffi::Span<const int64_t> config) {
  Config cfg;
  std::shared_ptr<Plan> plan;
  size_t bytes = 0;
  auto err = packed_config(config, &cfg, &plan, &bytes);
  if (!err.success()) return err;
  const size_t weights = static_cast<size_t>(count(cfg.weight_shape()));
  if (w.element_count() != weights) return size_error(cfg, "weights of elements", w.element_count(), weights);
  if (out->size_bytes() != bytes) return size_error(cfg, "a packed buffer of bytes", out->size_bytes(), bytes);
  return guarded(cfg, [&] { pack_weights(*plan, w.untyped_data(), out->untyped_data()); });
}

// The inference forward of `config` on weights packed by `pack`: no reorder of the weights.
ffi::Error forward_packed(ffi::AnyBuffer x, ffi::AnyBuffer packed, ffi::RemainingArgs rest,
                          ffi::Result<ffi::AnyBuffer> y, ffi::Span<const int64_t> config) {
  Config cfg;
  std::shared_ptr<Plan> plan;
  size_t bytes = 0;
  auto err = packed_config(config, &cfg, &plan, &bytes);
  if (!err.success()) return err;
  const size_t in = static_cast<size_t>(count(cfg.data_shape())), out = static_cast<size_t>(count(cfg.out_shape()));
  if (x.element_count() != in) return size_error(cfg, "data of elements", x.element_count(), in);
  if (y->element_count() != out) return size_error(cfg, "an output of elements", y->element_count(), out);
  if (packed.size_bytes() != bytes) return size_error(cfg, "packed weights of bytes", packed.size_bytes(), bytes);
  if (static_cast<int64_t>(rest.size()) != cfg.has_bias)
    return ffi::Error::InvalidArgument(cfg.describe() + ": bias given and configuration disagree");
  std::vector<void*> ptrs = {x.untyped_data(), packed.untyped_data()};
  if (cfg.has_bias) {
    auto b = rest.get<ffi::AnyBuffer>(0);
    if (b.has_error()) return b.error();
    if (b->element_count() != static_cast<size_t>(cfg.o)) return size_error(cfg, "a bias of elements",
                                                                          b->element_count(), cfg.o);
    ptrs.push_back(b->untyped_data());
  }
  ptrs.push_back(y->untyped_data());
  return guarded(cfg, [&] { execute(*plan, ptrs, true); });
}

}  // namespace

#define MXJAX_EXPORT extern "C" __attribute__((visibility("default")))

// The handlers are the library's only other exported symbols (it is built with hidden visibility).
MXJAX_EXPORT XLA_FFI_Error* mxjax_onednn_conv_forward(XLA_FFI_CallFrame* call_frame);
MXJAX_EXPORT XLA_FFI_Error* mxjax_onednn_conv_backward_data(XLA_FFI_CallFrame* call_frame);
MXJAX_EXPORT XLA_FFI_Error* mxjax_onednn_conv_backward_weights(XLA_FFI_CallFrame* call_frame);
MXJAX_EXPORT XLA_FFI_Error* mxjax_onednn_conv_pack_weights(XLA_FFI_CallFrame* call_frame);
MXJAX_EXPORT XLA_FFI_Error* mxjax_onednn_conv_forward_packed(XLA_FFI_CallFrame* call_frame);

XLA_FFI_DEFINE_HANDLER_SYMBOL(mxjax_onednn_conv_forward, forward,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .RemainingArgs()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<ffi::Span<const int64_t>>("stride")
                                  .Attr<ffi::Span<const int64_t>>("pad")
                                  .Attr<ffi::Span<const int64_t>>("dilate")
                                  .Attr<int64_t>("groups")
                                  .Attr<int64_t>("channel_last")
                                  .Attr<int64_t>("memory_last")
                                  .Attr<int64_t>("plain"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(mxjax_onednn_conv_backward_data, backward_data,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<ffi::Span<const int64_t>>("stride")
                                  .Attr<ffi::Span<const int64_t>>("pad")
                                  .Attr<ffi::Span<const int64_t>>("dilate")
                                  .Attr<int64_t>("groups")
                                  .Attr<int64_t>("channel_last")
                                  .Attr<int64_t>("memory_last")
                                  .Attr<int64_t>("plain"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(mxjax_onednn_conv_backward_weights, backward_weights,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<ffi::Span<const int64_t>>("stride")
                                  .Attr<ffi::Span<const int64_t>>("pad")
                                  .Attr<ffi::Span<const int64_t>>("dilate")
                                  .Attr<int64_t>("groups")
                                  .Attr<int64_t>("channel_last")
                                  .Attr<int64_t>("memory_last")
                                  .Attr<int64_t>("plain"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(mxjax_onednn_conv_pack_weights, pack,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<ffi::Span<const int64_t>>("config"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(mxjax_onednn_conv_forward_packed, forward_packed,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .RemainingArgs()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<ffi::Span<const int64_t>>("config"));

// Builds (and caches) the plans of all three kinds for a configuration given as
// Config::flat() with kind 0 (of the forward alone when it is plain: the inference path);
// returns 0, or 1 with oneDNN's reason in `msg`.  mxjax calls
// it while tracing, so an unsupported configuration falls back to XLA before any program
// is compiled.
MXJAX_EXPORT int mxjax_onednn_conv_check(const int64_t* flat, int64_t len, char* msg, int64_t msg_len) {
  Config cfg;
  std::string error;
  if (!Config::from_flat(flat, len, &cfg)) {
    error = "malformed configuration";
  } else {
    try {
      const int64_t has_bias = cfg.has_bias;
      for (int64_t kind : {kForward, kBackwardData, kBackwardWeights}) {
        if (cfg.plain && kind != kForward) break;
        cfg.kind = kind;
        cfg.has_bias = kind == kForward ? has_bias : 0;  // the backward handlers never take a bias
        get_plan(cfg);
      }
    } catch (const std::exception& e) {  // dnnl::error is one
      error = cfg.describe() + ": " + e.what();
    }
  }
  if (error.empty()) return 0;
  if (msg && msg_len > 0) {
    std::strncpy(msg, error.c_str(), static_cast<size_t>(msg_len) - 1);
    msg[msg_len - 1] = '\0';
  }
  return 1;
}

// How many plans have been built (each configuration and kind once, again after an eviction).
MXJAX_EXPORT int64_t mxjax_onednn_plans_built() { return plans_built(); }

MXJAX_EXPORT void mxjax_onednn_set_layout_any(int any) { set_layout_any(any); }

// Bounds the plan cache to `capacity` plans (<= 0: unbounded), evicting the least recently used.
MXJAX_EXPORT void mxjax_onednn_set_cache_capacity(int64_t capacity) { set_cache_capacity(capacity); }

// How many plans the cache holds now.
MXJAX_EXPORT int64_t mxjax_onednn_plans_cached() { return plans_cached(); }

// Bytes of the weights packed for the inference forward given as Config::flat(): 0 when its
// plan reads them as given (nothing to pack), -1 when the configuration is malformed or
// oneDNN rejects it.
MXJAX_EXPORT int64_t mxjax_onednn_packed_bytes(const int64_t* flat, int64_t len) {
  Config cfg;
  if (!Config::from_flat(flat, len, &cfg) || cfg.kind != kForward || !cfg.plain) return -1;
  try {
    return static_cast<int64_t>(packed_weight_bytes(*get_plan(cfg)));
  } catch (const std::exception&) {
    return -1;
  }
}

// Runs one convolution of a configuration given as Config::flat() on caller-owned buffers
// (inputs then output, in the handlers' order).  Not used by mxjax's op: it lets
// benchmarks/conv.py time the same kernels called through jax.pure_callback.
MXJAX_EXPORT int mxjax_onednn_conv_run(const int64_t* flat, int64_t len, void** buffers, int64_t count) {
  Config cfg;
  if (!Config::from_flat(flat, len, &cfg)) return 1;
  const int64_t want = cfg.kind == kForward ? 3 + cfg.has_bias : 3;
  if (count != want) return 1;
  ffi::Error err = run(cfg, std::vector<void*>(buffers, buffers + count));
  return err.success() ? 0 : 1;
}
