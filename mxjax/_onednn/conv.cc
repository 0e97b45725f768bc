// Convolution forward, backward-data and backward-weights on oneDNN, as XLA FFI handlers.
//
// mxjax registers the three handlers as CPU custom-call targets and calls them with
// jax.ffi.ffi_call, so they run inside jitted programs.  Each distinct configuration
// (kind, dtype, layout, shapes, stride, pad, dilation, groups, bias) gets one plan: the
// oneDNN primitive, chosen with format_tag::any so oneDNN picks its preferred (often
// blocked) layouts, and the reorders between those layouts and the caller's plain
// arrays.  Plans are built once and kept in a bounded least-recently-used cache (1024 plans
// unless mxjax_onednn_set_cache_capacity says otherwise); a call only wraps the buffers,
// runs the reorders it needs and the primitive.  oneDNN threads with OpenMP
// (the wheel's runtime); calls run one at a time, each on all cores.  Any failure comes
// back to XLA as an ffi::Error naming Convolution and the shapes; nothing here aborts.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
using dnnl::memory;
using Dims = memory::dims;

namespace {

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

memory::data_type dnnl_type(int64_t dtype) {
  return dtype == 1 ? memory::data_type::bf16 : memory::data_type::f32;
}

// Strides of a dense array whose logical axes (oneDNN order) are laid out outermost-first
// in the order `physical`.
Dims dense_strides(const Dims& dims, const std::vector<int>& physical) {
  Dims strides(dims.size());
  int64_t step = 1;
  for (int i = static_cast<int>(physical.size()) - 1; i >= 0; --i) {
    strides[physical[i]] = step;
    step *= dims[physical[i]];
  }
  return strides;
}

// (N, C, spatial...) in oneDNN's order, laid out as NC... or N...C.
memory::desc activation_desc(const Config& cfg, int64_t ch, const Dims& sp) {
  Dims dims = {cfg.n, ch};
  dims.insert(dims.end(), sp.begin(), sp.end());
  std::vector<int> order = {0};
  const bool last = cfg.channel_last || cfg.memory_last;
  if (!last) order.push_back(1);
  for (int i = 0; i < cfg.nsp; ++i) order.push_back(2 + i);
  if (last) order.push_back(1);
  return memory::desc(dims, dnnl_type(cfg.dtype), dense_strides(dims, order));
}

// MXNet's weight (O, C/g, k...) or (O, k..., C/g); grouped, oneDNN sees (g, O/g, C/g, k...).
memory::desc weight_desc(const Config& cfg) {
  const int64_t g = cfg.groups, ig = cfg.c / g;
  Dims dims;
  int lead = 0;
  if (g > 1) {
    dims = {g, cfg.o / g, ig};
    lead = 1;
  } else {
    dims = {cfg.o, ig};
  }
  dims.insert(dims.end(), cfg.k.begin(), cfg.k.end());
  std::vector<int> order;
  for (int i = 0; i <= lead; ++i) order.push_back(i);  // g, O/g (or O)
  if (!cfg.channel_last) order.push_back(lead + 1);
  for (int i = 0; i < cfg.nsp; ++i) order.push_back(lead + 2 + i);
  if (cfg.channel_last) order.push_back(lead + 1);
  return memory::desc(dims, dnnl_type(cfg.dtype), dense_strides(dims, order));
}

memory::desc as_any(const memory::desc& d) {
  return memory::desc(d.get_dims(), d.get_data_type(), memory::format_tag::any);
}

// The engine and the plans live until the process ends and are never destroyed: nothing
// then runs at exit that XLA's threads could still be using.
dnnl::engine& cpu_engine() {
  static auto* eng = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *eng;
}

// One argument of a primitive: the caller's array and, when oneDNN wants another layout,
// the reorder between the two.
struct Operand {
  int arg;
  bool output;
  memory::desc user, inner;
  std::unique_ptr<dnnl::reorder> reorder;
};

struct Plan {
  dnnl::primitive prim;
  std::vector<Operand> operands;  // inputs first, in handler order, then the output
  memory::desc scratch;
  size_t scratch_bytes = 0;
};

void add_operand(Plan& plan, int arg, bool output, const memory::desc& user, const memory::desc& inner) {
  Operand op{arg, output, user, inner, nullptr};
  if (user != inner) {
    auto& eng = cpu_engine();
    op.reorder = output ? std::make_unique<dnnl::reorder>(dnnl::reorder::primitive_desc(eng, inner, eng, user))
                        : std::make_unique<dnnl::reorder>(dnnl::reorder::primitive_desc(eng, user, eng, inner));
  }
  plan.operands.push_back(std::move(op));
}

// Arrays whose layout oneDNN chooses (format_tag::any), the rest being the caller's: 0 none
// (its reference kernels, 100x slower), 1 the weights, 2 all (default: blocked activations
// too; on the benchmark's CNN this beat 1 even counting the reorders of every call).
// mxjax_onednn_set_layout_any() changes it, for measuring.
int g_layout_any = 2;

std::shared_ptr<Plan> build_plan(const Config& cfg) {
  auto& eng = cpu_engine();
  memory::desc src = activation_desc(cfg, cfg.c, cfg.in), dst = activation_desc(cfg, cfg.o, cfg.out);
  memory::desc wei = weight_desc(cfg);
  memory::desc bias({cfg.o}, dnnl_type(cfg.dtype), memory::format_tag::a);
  auto pick = [&cfg](const memory::desc& d) { return g_layout_any >= 2 && !cfg.plain ? as_any(d) : d; };
  auto pick_w = [](const memory::desc& d) { return g_layout_any >= 1 ? as_any(d) : d; };
  Dims dil(cfg.dilate), pad_l(cfg.pad), pad_r(cfg.pad);
  for (auto& d : dil) d -= 1;  // oneDNN counts the gaps, MXNet the step
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const auto algo = dnnl::algorithm::convolution_direct;
  // a plain forward serves inference only: nothing differentiates it
  const auto prop = cfg.plain && cfg.kind == kForward ? dnnl::prop_kind::forward_inference
                                                      : dnnl::prop_kind::forward_training;
  auto fwd_pd = [&](bool with_bias) {
    return with_bias ? dnnl::convolution_forward::primitive_desc(eng, prop, algo, pick(src), pick_w(wei), bias,
                                                                 pick(dst), cfg.stride, dil, pad_l, pad_r, attr)
                     : dnnl::convolution_forward::primitive_desc(eng, prop, algo, pick(src), pick_w(wei), pick(dst),
                                                                 cfg.stride, dil, pad_l, pad_r, attr);
  };
  auto plan = std::make_shared<Plan>();
  if (cfg.kind == kForward) {
    auto pd = fwd_pd(cfg.has_bias != 0);
    add_operand(*plan, DNNL_ARG_SRC, false, src, pd.src_desc());
    add_operand(*plan, DNNL_ARG_WEIGHTS, false, wei, pd.weights_desc());
    if (cfg.has_bias) add_operand(*plan, DNNL_ARG_BIAS, false, bias, bias);
    add_operand(*plan, DNNL_ARG_DST, true, dst, pd.dst_desc());
    plan->prim = dnnl::convolution_forward(pd);
    plan->scratch = pd.scratchpad_desc();
  } else if (cfg.kind == kBackwardData) {
    auto hint = fwd_pd(false);
    dnnl::convolution_backward_data::primitive_desc pd(eng, algo, pick(src), pick_w(wei), pick(dst), cfg.stride, dil,
                                                       pad_l, pad_r, hint, attr);
    add_operand(*plan, DNNL_ARG_DIFF_DST, false, dst, pd.diff_dst_desc());
    add_operand(*plan, DNNL_ARG_WEIGHTS, false, wei, pd.weights_desc());
    add_operand(*plan, DNNL_ARG_DIFF_SRC, true, src, pd.diff_src_desc());
    plan->prim = dnnl::convolution_backward_data(pd);
    plan->scratch = pd.scratchpad_desc();
  } else {
    auto hint = fwd_pd(false);
    dnnl::convolution_backward_weights::primitive_desc pd(eng, algo, pick(src), pick_w(wei), pick(dst), cfg.stride,
                                                          dil, pad_l, pad_r, hint, attr);
    add_operand(*plan, DNNL_ARG_SRC, false, src, pd.src_desc());
    add_operand(*plan, DNNL_ARG_DIFF_DST, false, dst, pd.diff_dst_desc());
    add_operand(*plan, DNNL_ARG_DIFF_WEIGHTS, true, wei, pd.diff_weights_desc());
    plan->prim = dnnl::convolution_backward_weights(pd);
    plan->scratch = pd.scratchpad_desc();
  }
  plan->scratch_bytes = plan->scratch.get_size();
  return plan;
}

std::string cache_key(const Config& cfg) {
  std::vector<int64_t> v = cfg.flat();
  v.push_back(g_layout_any);
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(int64_t));
}

// The plans, least recently used first evicted once more than g_capacity are kept (each holds
// oneDNN's JIT-compiled kernels: tens to hundreds of KB).  A call holds its plan by shared_ptr, so
// evicting one that another thread is running is safe; a configuration seen again is rebuilt.
std::mutex g_mutex;
auto& g_lru = *new std::list<std::string>();  // most recently used first
using Entry = std::pair<std::shared_ptr<Plan>, std::list<std::string>::iterator>;  // plan, its place in g_lru
auto& g_plans = *new std::unordered_map<std::string, Entry>();
int64_t g_plans_built = 0;
int64_t g_capacity = 1024;  // <= 0: unbounded

void evict_locked() {
  while (g_capacity > 0 && static_cast<int64_t>(g_plans.size()) > g_capacity) {
    g_plans.erase(g_lru.back());
    g_lru.pop_back();
  }
}

std::shared_ptr<Plan> get_plan(const Config& cfg) {
  std::string key = cache_key(cfg);
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_plans.find(key);
    if (it != g_plans.end()) {
      g_lru.splice(g_lru.begin(), g_lru, it->second.second);
      return it->second.first;
    }
  }
  auto plan = build_plan(cfg);  // outside the lock: building can take milliseconds
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_plans.find(key);
  if (it != g_plans.end()) return it->second.first;  // another thread built it meanwhile
  g_lru.push_front(key);
  g_plans.emplace(key, std::make_pair(plan, g_lru.begin()));
  ++g_plans_built;
  evict_locked();
  return plan;
}

// Reorder targets and the scratchpad come from one buffer that grows as needed, used by one
// call at a time (g_exec_mutex).
char* work_buffer(size_t bytes) {
  static char* ptr = nullptr;
  static size_t size = 0;
  if (bytes > size) {
    std::free(ptr);
    size = (bytes + 4095) / 4096 * 4096;
    ptr = static_cast<char*>(std::aligned_alloc(4096, size));
    if (!ptr) size = 0;
  }
  return ptr;
}

size_t align64(size_t n) { return (n + 63) / 64 * 64; }

void run_plan(const Plan& plan, const std::vector<void*>& pointers) {
  auto& eng = cpu_engine();
  thread_local dnnl::stream strm(eng);
  size_t bytes = align64(plan.scratch_bytes);
  for (const auto& op : plan.operands)
    if (op.reorder) bytes += align64(op.inner.get_size());
  char* buf = bytes ? work_buffer(bytes) : nullptr;
  if (bytes && !buf) throw std::bad_alloc();
  std::unordered_map<int, memory> args;
  std::vector<std::pair<const Operand*, std::pair<memory, memory>>> outputs;
  size_t offset = align64(plan.scratch_bytes);
  for (size_t i = 0; i < plan.operands.size(); ++i) {
    const Operand& op = plan.operands[i];
    memory user(op.user, eng, pointers[i]);
    if (!op.reorder) {
      args.emplace(op.arg, user);
      continue;
    }
    memory inner(op.inner, eng, buf + offset);
    offset += align64(op.inner.get_size());
    if (op.output) {
      outputs.push_back({&op, {inner, user}});
    } else {
      op.reorder->execute(strm, user, inner);
    }
    args.emplace(op.arg, inner);
  }
  if (plan.scratch_bytes) args.emplace(DNNL_ARG_SCRATCHPAD, memory(plan.scratch, eng, buf));
  plan.prim.execute(strm, args);
  for (auto& out : outputs) out.first->reorder->execute(strm, out.second.first, out.second.second);
  strm.wait();
}

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

// One oneDNN call at a time: oneDNN's OpenMP team already uses every core, and XLA may call
// from several of its threads at once (each would bring a team of its own: oversubscription).
std::mutex g_exec_mutex;

ffi::Error run(const Config& cfg, const std::vector<void*>& pointers) {
  try {
    auto plan = get_plan(cfg);
    std::lock_guard<std::mutex> lock(g_exec_mutex);
    run_plan(*plan, pointers);
  } catch (const dnnl::error& e) {
    return ffi::Error::Internal(cfg.describe() + ": " + e.what());
  } catch (const std::exception& e) {
    return ffi::Error::Internal(cfg.describe() + ": " + e.what());
  }
  return ffi::Error::Success();
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

}  // namespace

#define MXJAX_EXPORT extern "C" __attribute__((visibility("default")))

// The handlers are the library's only other exported symbols (it is built with hidden visibility).
MXJAX_EXPORT XLA_FFI_Error* mxjax_onednn_conv_forward(XLA_FFI_CallFrame* call_frame);
MXJAX_EXPORT XLA_FFI_Error* mxjax_onednn_conv_backward_data(XLA_FFI_CallFrame* call_frame);
MXJAX_EXPORT XLA_FFI_Error* mxjax_onednn_conv_backward_weights(XLA_FFI_CallFrame* call_frame);

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
    } catch (const dnnl::error& e) {
      error = cfg.describe() + ": " + e.what();
    } catch (const std::exception& e) {
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
MXJAX_EXPORT int64_t mxjax_onednn_plans_built() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_plans_built;
}

MXJAX_EXPORT void mxjax_onednn_set_layout_any(int any) { g_layout_any = any; }

// Bounds the plan cache to `capacity` plans (<= 0: unbounded), evicting the least recently used.
MXJAX_EXPORT void mxjax_onednn_set_cache_capacity(int64_t capacity) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_capacity = capacity;
  evict_locked();
}

// How many plans the cache holds now.
MXJAX_EXPORT int64_t mxjax_onednn_plans_cached() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return static_cast<int64_t>(g_plans.size());
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
