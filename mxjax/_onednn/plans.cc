// oneDNN convolution plans (plans.h): building, caching and running them.
#include "plans.h"

#include <cstdlib>
#include <cstring>
#include <list>
#include <mutex>
#include <unordered_map>

namespace mxjax_onednn {

using dnnl::memory;

// Everything below is internal to the extension (built with hidden visibility).

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

// Calls run one at a time (g_exec_mutex), each on its thread's stream.
dnnl::stream& thread_stream() {
  thread_local dnnl::stream strm(cpu_engine());
  return strm;
}

void run_plan(const Plan& plan, const std::vector<void*>& pointers, bool packed_weights) {
  auto& eng = cpu_engine();
  dnnl::stream& strm = thread_stream();
  size_t bytes = align64(plan.scratch_bytes);
  for (const auto& op : plan.operands)
    if (op.reorder && !(packed_weights && op.arg == DNNL_ARG_WEIGHTS)) bytes += align64(op.inner.get_size());
  char* buf = bytes ? work_buffer(bytes) : nullptr;
  if (bytes && !buf) throw std::bad_alloc();
  std::unordered_map<int, memory> args;
  std::vector<std::pair<const Operand*, std::pair<memory, memory>>> outputs;
  size_t offset = align64(plan.scratch_bytes);
  for (size_t i = 0; i < plan.operands.size(); ++i) {
    const Operand& op = plan.operands[i];
    if (packed_weights && op.arg == DNNL_ARG_WEIGHTS) {  // already in the primitive's layout
      args.emplace(op.arg, memory(op.inner, eng, pointers[i]));
      continue;
    }
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

// One oneDNN call at a time: oneDNN's OpenMP team already uses every core, and XLA may call
// from several of its threads at once (each would bring a team of its own: oversubscription).
std::mutex g_exec_mutex;

// The forward plan's weights operand.
const Operand& weights_operand(const Plan& plan) {
  for (const auto& op : plan.operands)
    if (op.arg == DNNL_ARG_WEIGHTS) return op;
  throw std::logic_error("a forward plan without weights");
}

void execute(const Plan& plan, const std::vector<void*>& pointers, bool packed_weights) {
  std::lock_guard<std::mutex> lock(g_exec_mutex);
  run_plan(plan, pointers, packed_weights);
}

size_t packed_weight_bytes(const Plan& plan) {
  const Operand& op = weights_operand(plan);
  return op.reorder ? op.inner.get_size() : 0;
}

void pack_weights(const Plan& plan, const void* w, void* out) {
  const Operand& op = weights_operand(plan);
  if (!op.reorder) throw std::logic_error("this plan reads the weights as given: nothing to pack");
  auto& eng = cpu_engine();
  memory user(op.user, eng, const_cast<void*>(w)), inner(op.inner, eng, out);
  std::lock_guard<std::mutex> lock(g_exec_mutex);
  dnnl::stream& strm = thread_stream();
  op.reorder->execute(strm, user, inner);
  strm.wait();
}

int64_t plans_built() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_plans_built;
}

int64_t plans_cached() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return static_cast<int64_t>(g_plans.size());
}

void set_cache_capacity(int64_t capacity) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_capacity = capacity;
  evict_locked();
}

void set_layout_any(int any) { g_layout_any = any; }

}  // namespace mxjax_onednn
