// Elementwise fusion: a chain of elementwise primitives over one output shape
// runs as one pass over memory, block by block. Intermediates live in small
// per-thread buffers (one block each, reused by liveness), so they stay in
// cache; blocks split across the pool above the backend's threshold. The
// per-block work goes through the CPU elementwise kernels, so values match
// the unfused program exactly.

#include <cstring>

#include "ad/program_exec.hpp"
#include "backend/cpu/elementwise_kernels.hpp"
#include "backend/cpu/kernels.hpp"

namespace tenferro::detail {

namespace {

// Whether a node may join a fused group (operands already in the kernel's
// compute dtype, so no conversion hides inside the pass).
bool fusable(const ProgramGraph& g, const ProgramNode& n) {
  if (n.kind != ProgramNode::Kind::Op || n.outputs.size() != 1) return false;
  auto* p = dynamic_cast<const PrimitiveOp*>(n.op.get());
  if (p == nullptr) return false;
  auto in = [&](std::size_t k) { return g.meta(n.inputs[k]).dtype; };
  const DType out = n.outputs[0].dtype;
  if (p->get<prim::Unary>()) return is_inexact(in(0));
  if (auto* b = p->get<prim::Binary>()) {
    if (b->op == BinaryOp::LogicalAnd || b->op == BinaryOp::LogicalOr) return false;
    return in(0) == in(1) && binary_compute_dtype(b->op, in(0), in(1)) == in(0);
  }
  if (p->get<prim::Select>()) return in(0) == DType::Bool && in(1) == out && in(2) == out;
  if (p->get<prim::Clamp>()) return in(0) == out && !is_complex(out) && !is_bool(out);
  if (auto* c = p->get<prim::Convert>()) return !c->lossy && in(0) != out;
  if (p->get<prim::Full>()) return !n.outputs[0].shape.empty();
  return false;
}

// Copies elements [begin, begin + n) (column-major order) of a strided view
// into a compact buffer.
template <std::size_t Bytes>
void gather_fixed(const StridedPlan<1>& plan, const std::byte* src, std::byte* dst,
                  std::int64_t begin, std::int64_t n) {
  plan.run(begin, begin + n, [&](std::int64_t len, const auto& off, const auto& inc) {
    const std::byte* s = src + off[0] * static_cast<std::int64_t>(Bytes);
    const std::int64_t step = inc[0] * static_cast<std::int64_t>(Bytes);
    for (std::int64_t i = 0; i < len; ++i, s += step, dst += Bytes) std::memcpy(dst, s, Bytes);
  });
}

void gather(const StridedPlan<1>& plan, std::size_t itemsize, const void* src, void* dst,
            std::int64_t begin, std::int64_t n) {
  auto* s = static_cast<const std::byte*>(src);
  auto* d = static_cast<std::byte*>(dst);
  switch (itemsize) {
    case 1:
      return gather_fixed<1>(plan, s, d, begin, n);
    case 4:
      return gather_fixed<4>(plan, s, d, begin, n);
    case 8:
      return gather_fixed<8>(plan, s, d, begin, n);
    default:
      return gather_fixed<16>(plan, s, d, begin, n);
  }
}

enum class Mode : unsigned char { Direct, Scalar, Gather };

struct External {
  Mode mode = Mode::Direct;
  Tensor flat;       // Direct: the compact input as [N]; Scalar: as [1]
  Tensor broadcast;  // Gather: the input broadcast to the group shape
  std::optional<StridedPlan<1>> plan;
};

void run_member(CpuBackend& cpu, const FusedPlan::Member& m, std::span<const Tensor> ops,
                const Tensor& out) {
  const PrimitiveOp& op = *m.op;
  if (auto* u = op.get<prim::Unary>()) {
    cpu::unary_kernel(cpu, u->op, ops[0], out);
  } else if (auto* b = op.get<prim::Binary>()) {
    cpu::binary_kernel(cpu, b->op, ops[0], ops[1], out);
  } else if (op.get<prim::Select>()) {
    cpu::where_kernel(cpu, ops[0], ops[1], ops[2], out);
  } else if (auto* c = op.get<prim::Clamp>()) {
    cpu::clamp_kernel(cpu, ops[0], c->lo, c->hi, out);
  } else if (op.get<prim::Convert>()) {
    cpu::copy(cpu, ops[0], out);
  } else if (auto* f = op.get<prim::Full>()) {
    cpu::fill(cpu, out, f->value);
  }
}

}  // namespace

std::vector<FusedPlan> plan_fusion(const ProgramGraph& g, std::vector<int>& group_of) {
  const std::size_t n = g.nodes.size();
  std::vector<std::vector<std::uint32_t>> consumers(n);
  for (std::uint32_t i = 0; i < n; ++i)
    for (ValueRef v : g.nodes[i].inputs) consumers[v.node].push_back(i);
  std::vector<char> is_output(n, 0);
  for (ValueRef v : g.outputs) is_output[v.node] = 1;

  // Reverse order: a node joins its consumers' group when every consumer is
  // in that one group (so no value leaves a group except its root).
  std::vector<std::vector<std::uint32_t>> members;
  std::vector<const SymShape*> shapes;
  group_of.assign(n, -1);
  for (std::size_t k = n; k-- > 0;) {
    const auto i = static_cast<std::uint32_t>(k);
    const ProgramNode& node = g.nodes[i];
    if (!fusable(g, node)) continue;
    int target = -1;
    bool join = !is_output[i] && !consumers[i].empty();
    for (std::uint32_t c : consumers[i]) {
      if (!join) break;
      if (group_of[c] < 0 || (target >= 0 && target != group_of[c])) join = false;
      target = group_of[c];
    }
    if (join && *shapes[static_cast<std::size_t>(target)] == node.outputs[0].shape) {
      group_of[i] = target;
      members[static_cast<std::size_t>(target)].push_back(i);
      continue;
    }
    const bool is_full = static_cast<const PrimitiveOp&>(*node.op).get<prim::Full>() != nullptr;
    if (is_full) continue;  // a lone fill is not worth a group
    group_of[i] = static_cast<int>(members.size());
    members.push_back({i});
    shapes.push_back(&node.outputs[0].shape);
  }

  std::vector<FusedPlan> plans;
  std::vector<int> renumber(members.size(), -1);
  for (std::size_t gi = 0; gi < members.size(); ++gi) {
    if (members[gi].size() < 2) continue;
    renumber[gi] = static_cast<int>(plans.size());
    FusedPlan plan;
    plan.nodes.assign(members[gi].rbegin(), members[gi].rend());  // ascending node order
    plan.shape = *shapes[gi];
    std::vector<int> member_of(n, -1);
    for (std::size_t m = 0; m < plan.nodes.size(); ++m)
      member_of[plan.nodes[m]] = static_cast<int>(m);
    std::vector<std::size_t> last_use(plan.nodes.size(), 0);
    for (std::size_t m = 0; m < plan.nodes.size(); ++m) {
      const ProgramNode& node = g.nodes[plan.nodes[m]];
      FusedPlan::Member mem;
      mem.op = static_cast<const PrimitiveOp*>(node.op.get());
      mem.dtype = node.outputs[0].dtype;
      for (ValueRef v : node.inputs) {
        FusedPlan::Operand o;
        if (member_of[v.node] >= 0) {
          o.external = false;
          o.index = static_cast<std::uint32_t>(member_of[v.node]);
          last_use[o.index] = m;
        } else {
          std::size_t e = 0;
          while (e < plan.externals.size() && !(plan.externals[e] == v)) ++e;
          if (e == plan.externals.size()) plan.externals.push_back(v);
          o.index = static_cast<std::uint32_t>(e);
        }
        mem.operands.push_back(o);
      }
      plan.members.push_back(std::move(mem));
    }
    // Scratch buffers by liveness: released after their last reader has its own.
    std::vector<int> free_list;
    for (std::size_t m = 0; m + 1 < plan.members.size(); ++m) {
      if (free_list.empty()) free_list.push_back(plan.buffer_count++);
      plan.members[m].buffer = free_list.back();
      free_list.pop_back();
      for (std::size_t q = 0; q < m; ++q)
        if (last_use[q] == m && plan.members[q].buffer >= 0)
          free_list.push_back(plan.members[q].buffer);
    }
    plans.push_back(std::move(plan));
  }
  for (auto& gidx : group_of)
    if (gidx >= 0) gidx = renumber[static_cast<std::size_t>(gidx)];
  return plans;
}

Tensor run_fused(CpuBackend& cpu, const FusedPlan& plan, std::span<const Tensor> externals,
                 const Shape& shape, std::int64_t block) {
  const std::int64_t total = shape_numel(shape);
  Tensor out = cpu.empty(shape, plan.members.back().dtype);
  if (total == 0) return out;
  const Shape flat_shape{total};
  std::vector<External> ext(externals.size());
  for (std::size_t e = 0; e < externals.size(); ++e) {
    const Tensor& t = externals[e];
    if (t.numel() == 1) {
      ext[e].mode = Mode::Scalar;
      ext[e].flat = t.reshape_copy({1});
    } else if (t.shape() == shape && t.is_contiguous()) {
      ext[e].flat = t.reshape(flat_shape.span());
    } else {
      ext[e].mode = Mode::Gather;
      ext[e].broadcast = t.broadcast_to(shape.span());
      ext[e].plan.emplace(shape.span(), std::array<std::span<const std::int64_t>, 1>{
                                            ext[e].broadcast.strides().span()});
    }
  }
  const Tensor out_flat = out.reshape(flat_shape.span());
  const std::int64_t blocks = (total + block - 1) / block;
  const std::int64_t grain = std::max<std::int64_t>(1, cpu.parallel_threshold() / block);
  const std::size_t slots = static_cast<std::size_t>(plan.buffer_count) + ext.size();

  cpu.parallel_for(blocks, grain, [&](std::int64_t b0, std::int64_t b1) {
    // 16 bytes per element covers every dtype; c128 storage keeps alignment.
    std::vector<c128_t> scratch(slots * static_cast<std::size_t>(block));
    const Shape block_shape{block};
    auto slot_ptr = [&](std::size_t s) { return static_cast<void*>(scratch.data() + s * block); };
    std::vector<Tensor> member_buf(plan.members.size()), ext_buf(ext.size());
    for (std::size_t m = 0; m + 1 < plan.members.size(); ++m) {
      member_buf[m] = Tensor::wrap(slot_ptr(static_cast<std::size_t>(plan.members[m].buffer)),
                                   plan.members[m].dtype, block_shape.span());
    }
    for (std::size_t e = 0; e < ext.size(); ++e) {
      if (ext[e].mode == Mode::Direct) continue;
      ext_buf[e] =
          Tensor::wrap(slot_ptr(plan.buffer_count + e), externals[e].dtype(), block_shape.span());
      if (ext[e].mode == Mode::Scalar)
        cpu::copy(cpu, ext[e].flat.broadcast_to(block_shape.span()), ext_buf[e]);
    }
    std::vector<Tensor> ext_view(ext.size()), member_view(plan.members.size()), ops;
    for (std::int64_t blk = b0; blk < b1; ++blk) {
      const std::int64_t s = blk * block;
      const std::int64_t len = std::min(block, total - s);
      auto head = [&](const Tensor& t) { return len == block ? t : t.slice(0, 0, len); };
      for (std::size_t e = 0; e < ext.size(); ++e) {
        if (ext[e].mode == Mode::Direct) {
          ext_view[e] = ext[e].flat.slice(0, s, s + len);
          continue;
        }
        if (ext[e].mode == Mode::Gather) {
          gather(*ext[e].plan, itemsize(externals[e].dtype()), ext[e].broadcast.raw_data(),
                 slot_ptr(plan.buffer_count + e), s, len);
        }
        ext_view[e] = head(ext_buf[e]);
      }
      for (std::size_t m = 0; m < plan.members.size(); ++m) {
        const FusedPlan::Member& mem = plan.members[m];
        ops.clear();
        for (const auto& o : mem.operands)
          ops.push_back(o.external ? ext_view[o.index] : member_view[o.index]);
        member_view[m] =
            m + 1 == plan.members.size() ? out_flat.slice(0, s, s + len) : head(member_buf[m]);
        run_member(cpu, mem, ops, member_view[m]);
      }
    }
  });
  return out;
}

}  // namespace tenferro::detail
