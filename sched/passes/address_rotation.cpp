#include "sched/passes/address_rotation.h"

#include <algorithm>
#include <set>

#include <spdlog/spdlog.h>

#include "sched/support/error.h"
#include "sched/target/target.h"

namespace tandem {

std::vector<PassOptionSpec> AddressRotationPass::options() {
  return {
      {"space", PassOptionSpec::Choice, "sbuf", "the memory space whose tensors are rotated", {"sbuf", "psum"}},
      {"buffers", PassOptionSpec::String, "auto",
       "buffers per rotated tensor: auto (the largest of 4, 3, 2 that fits) or a number from 2 to 16", {}},
  };
}

AddressRotationPass::AddressRotationPass(const PassOptions& o) : space_(o.get_string("space")), buffers_(0) {
  const std::string b = o.get_string("buffers");
  if (b == "auto") return;
  try {
    size_t used = 0;
    buffers_ = std::stoll(b, &used);
    if (used != b.size()) throw std::invalid_argument(b);
  } catch (const std::exception&) {
    buffers_ = -1;
  }
  if (buffers_ < 2 || buffers_ > 16)
    throw Error("address-rotation: buffers must be auto or a number from 2 to 16, not '" + b + "'");
}

namespace {

int64_t bytes_per_partition(const Tensor& t, const SpaceInfo& space) {
  int64_t b = static_cast<int64_t>(dtype_bytes(t.dtype));
  for (size_t d = space.partitions > 0 ? 1 : 0; d < t.shape.size(); ++d) b *= t.shape[d];
  return b;
}

bool uses_loop(const Access& a, LoopId loop) {
  for (const IndexRange& r : a.dims)
    if (r.lo.coeff_of_loop(loop) != 0 || r.hi.coeff_of_loop(loop) != 0) return true;
  return false;
}

}  // namespace

void AddressRotationPass::run(PassContext& ctx) {
  Kernel& k = ctx.kernel;
  DepGraph& g = ctx.deps;
  const SpaceInfo* space = k.target->space(space_);
  if (!space) {
    ctx.skip("target '" + k.target->name + "' has no " + space_);
    return;
  }
  // n buffers of a tensor, in the space's capacity unit (banks or bytes per partition): the
  // one rule the simulator's capacity check uses too.
  auto footprint = [&](const Tensor& t, int64_t n) { return space->footprint(bytes_per_partition(t, *space), n); };
  const int64_t capacity = space->capacity();
  int64_t used = 0;
  for (const Tensor& t : k.tensors)
    if (t.space == space_) used += footprint(t, t.attrs.get_int("buffers").value_or(1));
  const char* unit = space->capacity_unit();

  const std::vector<InstId> order = k.program_order();
  for (LoopId loop = 0; loop < static_cast<LoopId>(k.loops.size()); ++loop) {
    const std::string where = "loop " + k.loops[loop].iv;
    for (size_t ti = 0; ti < k.tensors.size(); ++ti) {
      Tensor& t = k.tensors[ti];
      if (t.space != space_ || t.attrs.has("buffers")) continue;
      // Who touches the tensor, in program order; it must not be touched outside the loop,
      // and the loop's own body (not a nested loop) must write it.
      std::vector<InstId> readers, writers;
      bool outside = false, moving = false, carried = false, written_first = false, seen = false;
      for (InstId id : order) {
        const Instruction& in = k.insts[id];
        bool reads = false, writes = false;
        for (const Access& a : in.reads)
          if (a.tensor_id == static_cast<int>(ti)) reads = true, moving |= uses_loop(a, loop);
        for (const Access& a : in.writes)
          if (a.tensor_id == static_cast<int>(ti)) writes = true, moving |= uses_loop(a, loop);
        if (!reads && !writes) continue;
        if (!k.in_loop(id, loop)) {
          outside = true;
          continue;
        }
        if (in.attrs.has("accumulate") && writes) reads = true;
        // Rotation follows the loop whose own body rewrites the tensor: a write in a nested
        // loop belongs to that loop.
        if (writes && in.loop != loop) outside = true;
        // The value must not flow between iterations: the first touch in the body is a write
        // that is not also a read.
        if (!seen) written_first = writes && !reads;
        seen = true;
        carried |= reads && !written_first;
        if (reads) readers.push_back(id);
        if (writes) writers.push_back(id);
      }
      if (writers.empty() || outside || moving || carried || !written_first) continue;

      const int64_t one = footprint(t, 1);
      int64_t n = buffers_;
      if (n == 0) {
        for (n = 4; n >= 2 && used + footprint(t, n) - one > capacity; --n) {
        }
      }
      if (n < 2 || used + footprint(t, n) - one > capacity)
        throw Error(t.loc, "address-rotation: %" + t.name + " needs " + std::to_string(n < 2 ? 2 : n) + " x " +
                               std::to_string(one) + " " + unit + " in " + space_ + " but only " +
                               std::to_string(capacity - used + one) + " are free");
      used += footprint(t, n) - one;
      t.attrs.set("buffers", n);
      t.attrs.set("rotate", k.loops[loop].iv);
      t.attrs.set("stride", bytes_per_partition(t, *space));
      ctx.stats.add("tensors_rotated");
      ctx.log->debug("{}: %{} over {} buffers", where, t.name, n);

      // Buffers repeat every n iterations: carried WAR/WAW on the tensor move to distance n.
      const std::set<InstId> touching(readers.begin(), readers.end());
      std::set<InstId> all = touching;
      all.insert(writers.begin(), writers.end());
      for (InstId w : writers) {
        for (const DepEdgeRef& e : g.in_edges(w)) {
          if (!all.count(e.src) || e.props.loop != loop || e.props.distance == 0 || e.props.distance >= n) continue;
          if (e.props.kind != DepKind::Anti && e.props.kind != DepKind::Output) continue;
          // Keep the edge if the pair also conflicts on a tensor that is not rotated.
          bool other = false;
          const Instruction& src = k.insts[e.src];
          for (const Access& wa : k.insts[w].writes)
            for (const auto* list : {&src.reads, &src.writes})
              for (const Access& sa : *list)
                if (sa.tensor_id == wa.tensor_id && sa.tensor_id != static_cast<int>(ti) &&
                    !k.tensors[sa.tensor_id].attrs.has("buffers"))
                  other = true;
          if (other) continue;
          g.remove(e.src, e.dst, e.props.distance, e.props.loop);
          ctx.stats.add("edges_relaxed");
        }
        for (InstId r : readers)
          if (g.add(r, w, DepKind::Anti, static_cast<int>(n), loop)) ctx.stats.add("edges_added");
        for (InstId w2 : writers)
          if (g.add(w2, w, DepKind::Output, static_cast<int>(n), loop)) ctx.stats.add("edges_added");
      }
    }
  }
  if (ctx.stats.get("tensors_rotated") == 0) {
    ctx.skip("no " + space_ + " tensor is rewritten every iteration of a loop");
    return;
  }
  ctx.mark_deps_listed();
}

}  // namespace tandem
