#include "sched/analysis/translation_validator.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "sched/ir/attribute_keys.h"
#include "sched/ir/kernel_queries.h"
#include "sched/support/box.h"
#include "sched/support/error.h"
#include "sched/target/target.h"

namespace tandem {

namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
  h = (h ^ (h >> 31)) * 0xBF58476D1CE4E5B9ULL;
  return h ^ (h >> 29);
}
uint64_t mix(uint64_t h, const std::string& s) {
  for (char c : s) h = mix(h, static_cast<uint64_t>(static_cast<unsigned char>(c)));
  return mix(h, s.size());
}

struct Segment {
  Box box;
  uint64_t value;
  Box origin;  // the whole range its write covered
};

// Symbolic execution of one kernel in program order.
class Executor {
 public:
  explicit Executor(const Kernel& k)
      : k_(k), ivs_(k.loops.size(), 0), memory_(k.tensors.size()), input_of_(k.tensors.size()) {
    for (size_t t = 0; t < input_of_.size(); ++t) input_of_[t] = static_cast<int>(t);
    // What does not change between instances, worked out once: each loop's advance, each
    // instruction's opcode and meaningful attributes.
    advance_.resize(k.loops.size());
    for (size_t l = 0; l < k.loops.size(); ++l)
      if (auto adv = k.loops[l].advance()) advance_[l] = *adv;
    static_hash_.resize(k.insts.size());
    for (size_t i = 0; i < k.insts.size(); ++i) {
      const Instruction& in = k.insts[i];
      uint64_t h = mix(0x5EED, in.opcode);
      for (const auto& [key, value] : in.attrs.entries()) {
        if (is_scheduling_attribute(key)) continue;
        h = mix(mix(h, key), format_attr_value(value));
      }
      static_hash_[i] = h;
    }
  }

  void run() { block(k_.body); }

  // Symbols of `tensor` over `box`: what a reader of that range would see.
  uint64_t read(int tensor, const Box& box) const {
    uint64_t h = mix(0x7A11D, box.size());
    std::vector<std::pair<Box, uint64_t>> parts;
    parts.reserve(4);
    std::vector<Box> unseen{box};
    for (const Segment& s : memory_[static_cast<size_t>(tensor)]) {
      if (!overlaps(s.box, box)) continue;
      const Box inter = intersect(box, s.box);
      uint64_t part = s.value;
      for (size_t d = 0; d < box.size(); ++d) {
        // Where in the read and where in the written range the part lies.
        part = mix(part, static_cast<uint64_t>(inter[d].first - box[d].first));
        part = mix(part, static_cast<uint64_t>(inter[d].first - s.origin[d].first));
        part = mix(part, static_cast<uint64_t>(inter[d].second - inter[d].first));
      }
      parts.push_back({inter, part});
      std::vector<Box> next;
      for (const Box& u : unseen)
        for (Box& piece : subtract(u, inter)) next.push_back(std::move(piece));
      unseen = std::move(next);
    }
    // What nobody wrote is input: a symbol of the tensor and the range.
    for (const Box& u : unseen) {
      uint64_t part = mix(0x1A9A7, k_.tensors[static_cast<size_t>(input_of_[static_cast<size_t>(tensor)])].name);
      for (size_t d = 0; d < u.size(); ++d) {
        part = mix(part, static_cast<uint64_t>(u[d].first - box[d].first));
        part = mix(part, static_cast<uint64_t>(u[d].first));
        part = mix(part, static_cast<uint64_t>(u[d].second - u[d].first));
      }
      parts.push_back({u, part});
    }
    std::sort(parts.begin(), parts.end());
    for (const auto& [b, v] : parts) h = mix(h, v);
    return h;
  }

  const std::vector<Segment>& memory(int tensor) const { return memory_[static_cast<size_t>(tensor)]; }
  const std::set<int>& written() const { return written_; }

 private:
  void block(const std::vector<Stmt>& stmts) {
    for (const Stmt& s : stmts) {
      if (s.kind == Stmt::kInst) {
        execute(s.id);
        continue;
      }
      const Loop& l = k_.loops[s.id];
      // `advance = "v10 += 512"`: the address register moves after every iteration.
      const auto& [reg, step] = advance_[static_cast<size_t>(s.id)];
      int64_t* value = reg.empty() ? nullptr : &registers_[reg];
      for (int64_t iv = l.lo; iv < l.hi; ++iv) {
        ivs_[s.id] = iv;
        block(l.body);
        if (value) *value += step;
      }
    }
  }

  // Every variable has a value here: the loops' current iterations, the registers' current
  // values (0 before their first advance).
  Box box_of(const Access& a) const {
    const auto value = [&](const AffineTerm& t) -> std::optional<int64_t> {
      if (t.loop != kNoId) return ivs_[t.loop];
      auto it = registers_.find(t.symbol);
      return it == registers_.end() ? 0 : it->second;
    };
    Box b;
    tandem::box_of(k_.tensors[static_cast<size_t>(a.tensor_id)], a, value, b);
    return b;
  }

  bool is_whole_copy(const Instruction& in) const {
    return in.reads.size() == 1 && in.writes.size() == 1 && in.reads.front().whole() && in.writes.front().whole() &&
           k_.tensors[static_cast<size_t>(in.reads.front().tensor_id)].shape ==
               k_.tensors[static_cast<size_t>(in.writes.front().tensor_id)].shape;
  }

  void execute(InstId id) {
    const Instruction& in = k_.insts[static_cast<size_t>(id)];
    // A spill's save or reload copies one whole tensor into another of its shape: the copy
    // holds what the original held, input included, and reads as it does. (A load again from
    // DRAM repeats the load it stands for: it computes as that one does.)
    if (in.attrs.has(attr::kSpill) && !in.attrs.has(attr::kRefills) && is_whole_copy(in)) {
      const size_t from = static_cast<size_t>(in.reads.front().tensor_id);
      const size_t to = static_cast<size_t>(in.writes.front().tensor_id);
      memory_[to] = memory_[from];
      input_of_[to] = input_of_[from];
      written_.insert(static_cast<int>(to));
      return;
    }
    uint64_t h = static_hash_[static_cast<size_t>(id)];
    for (const Access& a : in.reads) h = mix(h, read(a.tensor_id, box_of(a)));
    if (reads_accumulator(k_, id, ivs_.data()))
      for (const Access& a : in.writes) h = mix(h, read(a.tensor_id, box_of(a)));
    for (size_t w = 0; w < in.writes.size(); ++w) {
      const Access& a = in.writes[w];
      Box box = box_of(a);
      std::vector<Segment>& mem = memory_[static_cast<size_t>(a.tensor_id)];
      // The segments the write covers give way to what is left of them, in place; the others
      // move over untouched (the order is kept: it decides how unwritten ranges split).
      std::vector<Segment> next;
      next.reserve(mem.size() + 1);
      for (Segment& s : mem) {
        if (!overlaps(s.box, box)) {
          next.push_back(std::move(s));
          continue;
        }
        for (Box& piece : subtract(s.box, box)) next.push_back({std::move(piece), s.value, s.origin});
      }
      next.push_back({box, mix(h, w), std::move(box)});
      mem = std::move(next);
      written_.insert(a.tensor_id);
    }
  }

  const Kernel& k_;
  std::vector<int64_t> ivs_;
  std::map<std::string, int64_t> registers_;
  std::vector<std::pair<std::string, int64_t>> advance_;  // per loop; empty register: none
  std::vector<uint64_t> static_hash_;                     // per instruction
  std::vector<std::vector<Segment>> memory_;
  std::vector<int> input_of_;  // per tensor: the tensor whose input its unwritten ranges hold
  std::set<int> written_;
};

// The ranges whose final contents are the kernel's result: every DRAM range it writes, and
// the register groups of `live_out` ("v[100:107], v[108:115]").
std::vector<std::pair<int, Box>> outputs(const Kernel& k, const Executor& run) {
  std::vector<std::pair<int, Box>> out;
  for (int t : run.written()) {
    if (k.target->role_of(k.tensors[static_cast<size_t>(t)].space) != SpaceRole::Dram) continue;
    for (const Segment& s : run.memory(t)) out.push_back({t, s.box});
  }
  for (const Access& a : k.live_out_registers())
    out.push_back({a.tensor_id, Box{{a.dims[0].lo.constant, a.dims[0].hi.constant}}});
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

struct TranslationReference::Run {
  Kernel kernel;
  Executor executor;
  std::vector<std::pair<int, Box>> outputs;
  explicit Run(const Kernel& k) : kernel(k), executor(kernel) {
    executor.run();
    outputs = tandem::outputs(kernel, executor);
  }
};

TranslationReference::TranslationReference(const Kernel& original) : original_(std::make_unique<Run>(original)) {}
TranslationReference::~TranslationReference() = default;

std::optional<std::string> TranslationReference::difference(const Kernel& transformed) const {
  const Kernel& original = original_->kernel;
  const Executor& a = original_->executor;
  Executor b(transformed);
  b.run();
  auto outs = original_->outputs;
  auto outs_b = outputs(transformed, b);
  outs.insert(outs.end(), outs_b.begin(), outs_b.end());
  std::sort(outs.begin(), outs.end());
  outs.erase(std::unique(outs.begin(), outs.end()), outs.end());
  for (const auto& [t, box] : outs) {
    // A tensor the transformation added (a spill's DRAM copy) is scratch, not a result.
    if (static_cast<size_t>(t) >= original.tensors.size()) continue;
    const Tensor& tensor = original.tensors[static_cast<size_t>(t)];
    const int tb = transformed.find_tensor(tensor.name);
    if (tb == kNoId) return "output %" + tensor.name + " is gone";
    if (a.read(t, box) != b.read(tb, box)) {
      const std::string range = tensor.register_file  // registers read inclusive, as written
                                    ? "[" + std::to_string(box[0].first) + ":" + std::to_string(box[0].second - 1) + "]"
                                    : box_text(box);
      return (tensor.register_file ? "" : "%") + tensor.name + range + " holds different values";
    }
  }
  return std::nullopt;
}

std::optional<std::string> find_translation_difference(const Kernel& original, const Kernel& transformed) {
  return TranslationReference(original).difference(transformed);
}

}  // namespace tandem
