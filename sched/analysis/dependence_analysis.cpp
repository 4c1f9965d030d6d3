#include "sched/analysis/dependence_analysis.h"

#include <algorithm>
#include <map>
#include <memory_resource>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include <boost/container/small_vector.hpp>
#include <boost/graph/depth_first_search.hpp>
#include <boost/graph/filtered_graph.hpp>

#include "sched/ir/attribute_keys.h"
#include "sched/ir/kernel_queries.h"
#include "sched/support/box.h"
#include "sched/target/target.h"

namespace tandem {

namespace {

// `{accumulate}` makes the written accesses read-modify-write (matmul into PSUM).
bool accumulates(const Instruction& in) { return in.attrs.has(attr::kAccumulate); }

// Where an instruction sits: its program position and its loop nest.
struct InstPlace {
  int pos = -1;
  uint32_t nest_begin = 0, nest_end = 0;  // its loops, outermost first, in Analyzer::nest_pool_
};

// An instruction's loop nest, outermost first: a view of Analyzer::nest_pool_.
struct Nest {
  const LoopId* first;
  const LoopId* last;
  size_t size() const { return static_cast<size_t>(last - first); }
  LoopId operator[](size_t i) const { return first[i]; }
  const LoopId* begin() const { return first; }
  const LoopId* end() const { return last; }
};

struct Entry {
  int pos;
  InstId inst;
  const Access* access;  // nullptr: the whole resource (a DMA queue)
  // For a write, once analysed: every older write of the resource has completed, and every
  // older read finished reading, before this instruction starts, through edges (see
  // Analyzer::order). A later instruction ordered after this one needs no edge from those.
  bool writes_before_done = false;
  bool reads_before_done = false;
};

// A half-open range [lo, hi) of one dimension's index.
struct Span {
  int64_t lo, hi;
};

// The loop terms of an access's range on one dimension when its start and end have the same
// ones (`%o*64 + 3 : %o*64 + 4`), sorted by loop: the range is then the terms plus a constant
// span ([3, 4)). Constant ranges have none.
using LoopTerms = boost::container::small_vector<std::pair<LoopId, int64_t>, 2>;
struct FiledRange {
  LoopTerms terms;
  Span offsets;
};

// The entries of one list (a resource's writes or reads) by their range on one key dimension,
// so that a scan back over them can pass over those that cannot overlap the access X being
// analysed (without it, saves of many disjoint slices of one tensor make every scan quadratic).
// An entry whose key range is a few loop terms plus a constant span is filed under the terms
// (a "signature", at most kSignatures per list) and the span; the others, in `rest_`.
// Passing over one is exact: the caller gives, per signature, a window of spans outside which
// may_overlap is false (a same-iteration scan) or min_distance is 0 (a carried one) for every
// entry of the signature, whatever its span (Analyzer::window). The other entries are visited in
// the order a plain scan visits them, so the edges are the same and added in that order.
class RangeIndex {
 public:
  static constexpr size_t kSignatures = 8;

  size_t key() const { return key_; }
  const std::vector<AffineExpr>& signatures() const { return signatures_; }

  // `range(i)`: entry i's FiledRange, when it has one. `dim` is the key dimension.
  template <class RangeOf>
  void build(size_t count, size_t dim, RangeOf range) {
    key_ = dim;
    std::vector<LoopTerms> seen;
    struct Filed {
      size_t signature;
      Span offsets;
      size_t entry;
    };
    std::vector<Filed> filed;
    for (size_t i = 0; i < count; ++i) {
      std::optional<FiledRange> f = range(i);
      size_t sig = seen.size();
      if (f) sig = static_cast<size_t>(std::find(seen.begin(), seen.end(), f->terms) - seen.begin());
      if (f && sig == seen.size() && seen.size() < kSignatures) seen.push_back(f->terms);
      if (sig < seen.size())
        filed.push_back({sig, f->offsets, i});
      else
        rest_.push_back(i);
    }
    for (const LoopTerms& terms : seen) {
      AffineExpr e;
      for (auto [loop, coeff] : terms) e.terms.push_back({std::string(), coeff, loop});
      signatures_.push_back(std::move(e));
    }
    const auto by_range = [](const Filed& x, const Filed& y) {
      return std::make_tuple(x.signature, x.offsets.lo, x.offsets.hi) <
             std::make_tuple(y.signature, y.offsets.lo, y.offsets.hi);
    };
    // Often in order already: slices of a tensor taken one after the other.
    if (!std::is_sorted(filed.begin(), filed.end(), by_range)) std::stable_sort(filed.begin(), filed.end(), by_range);
    std::vector<size_t> signature_of;  // per group
    longest_.assign(seen.size(), 0);
    for (const Filed& f : filed) {
      if (groups_.empty() || signature_of.back() != f.signature || groups_.back().range.lo != f.offsets.lo ||
          groups_.back().range.hi != f.offsets.hi) {
        groups_.push_back({f.offsets, {}});
        signature_of.push_back(f.signature);
      }
      groups_.back().entries.push_back(f.entry);  // ascending: `filed` was sorted stably
      longest_[f.signature] = std::max(longest_[f.signature], f.offsets.hi - f.offsets.lo);
    }
    groups_of_.assign(seen.size() + 1, 0);
    for (size_t g = 0; g < groups_.size(); ++g) groups_of_[signature_of[g] + 1] = g + 1;
    for (size_t s = 1; s < groups_of_.size(); ++s) groups_of_[s] = std::max(groups_of_[s], groups_of_[s - 1]);
  }

  // Calls visit(i) for each entry i in [a, b) that may overlap X, latest first, until visit
  // returns true: `window(s)` is the window of signature s; without `bounded` (X's range on
  // the key dimension cannot be bounded) every entry. Returns whether it passed over an entry
  // on the way (down to the one that returned true, or to a).
  template <class WindowOf, class Visit>
  bool scan_back(size_t a, size_t b, bool bounded, WindowOf window, Visit visit) const {
    if (!bounded) {
      for (size_t i = b; i-- > a;)
        if (visit(i)) return false;
      return false;
    }
    // A cursor per list that may hold a candidate, at its last entry below b; the one with
    // the latest entry goes next.
    struct Cursor {
      const std::vector<size_t>* list;
      size_t next;  // entries [0, next) are left
      size_t entry() const { return (*list)[next - 1]; }
      bool operator<(const Cursor& o) const { return entry() < o.entry(); }
    };
    boost::container::small_vector<Cursor, 8> heap;  // a few lists per scan: no allocation per access
    auto add = [&](const std::vector<size_t>& list) {
      const size_t next = static_cast<size_t>(std::lower_bound(list.begin(), list.end(), b) - list.begin());
      if (next > 0 && list[next - 1] >= a) heap.push_back({&list, next});
    };
    add(rest_);
    for (size_t s = 0; s < signatures_.size(); ++s) {
      const Span w = window(s);
      // A group overlaps when lo < w.hi and hi > w.lo; hi <= lo + longest bounds the lo to look from.
      const auto first = groups_.begin() + static_cast<ptrdiff_t>(groups_of_[s]);
      const auto last = groups_.begin() + static_cast<ptrdiff_t>(groups_of_[s + 1]);
      auto g = std::lower_bound(first, last, w.lo - longest_[s] + 1,
                                [](const Group& x, int64_t lo) { return x.range.lo < lo; });
      for (; g != last && g->range.lo < w.hi; ++g)
        if (g->range.hi > w.lo) add(g->entries);
    }
    std::make_heap(heap.begin(), heap.end());
    size_t last = b;  // the entry visited last
    bool passed = false;
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end());
      Cursor& c = heap.back();
      const size_t i = c.entry();
      passed |= i + 1 < last;
      last = i;
      if (visit(i)) return passed;
      if (--c.next > 0 && c.entry() >= a)
        std::push_heap(heap.begin(), heap.end());
      else
        heap.pop_back();
    }
    return passed || last > a;
  }

 private:
  struct Group {
    Span range;
    std::vector<size_t> entries;  // ascending
  };
  size_t key_ = 0;
  std::vector<AffineExpr> signatures_;  // each signature's terms, as an expression with constant 0
  std::vector<Group> groups_;           // by signature, then range
  std::vector<size_t> groups_of_;       // signature s's groups: [groups_of_[s], groups_of_[s + 1])
  std::vector<int64_t> longest_;        // per signature, the largest hi - lo of its groups
  std::vector<size_t> rest_;            // ascending
};

struct Resource {
  std::vector<Entry> writes;
  std::vector<Entry> reads;
  const Tensor* tensor = nullptr;     // nullptr for a DMA queue
  const IndexRange* whole = nullptr;  // the full range of each dimension (Analyzer::whole_of)
  RangeIndex write_index, read_index;
  size_t writes_before = 0, reads_before = 0;  // entries before the visited position (Analyzer::list_at)
};

// How the loops of an expression relate the two instances being compared.
struct Relation {
  LoopId carrier = kNoId;  // the loop whose iterations differ by `distance`
  int64_t distance = 0;
  int shared_depth = 0;  // loops at depth <= this enclose both at the same iteration
};

// What part of X's access the writes seen so far leave uncovered. Constant accesses (all
// register groups, most tiles) are tracked exactly, so that two loads filling v[36:39] and
// v[40:43] together cover a read of v[36:43]; others need one write that covers alone.
class Coverage {
 public:
  explicit Coverage(std::optional<Box> target) : exact_(target.has_value()) {
    if (target) left_.push_back(*target);
  }
  // Returns true once X's access is fully covered.
  bool add(const std::optional<Box>& write, bool covers_alone) {
    if (covers_alone) {
      left_.clear();
      cleared_ = true;
    } else if (exact_ && write) {
      std::vector<Box> next;
      for (const Box& b : left_)
        for (Box& piece : subtract(b, *write)) next.push_back(std::move(piece));
      left_ = std::move(next);
    }
    return covered();
  }
  bool covered() const { return left_.empty() && (exact_ || cleared_); }

 private:
  bool exact_;
  bool cleared_ = false;
  std::vector<Box> left_;
};

class Analyzer {
 public:
  explicit Analyzer(const Kernel& k) : k_(k) {}

  DepGraph run() {
    order_ = k_.program_order();
    place_.assign(k_.insts.size(), {});
    for (size_t i = 0; i < order_.size(); ++i) {
      InstPlace& place = place_[order_[i]];
      place.pos = static_cast<int>(i);
      // As Kernel::loop_nest, into one pool: no allocation per instruction.
      place.nest_begin = static_cast<uint32_t>(nest_pool_.size());
      for (LoopId l = k_.insts[order_[i]].loop; l != kNoId; l = k_.loops[l].parent) nest_pool_.push_back(l);
      place.nest_end = static_cast<uint32_t>(nest_pool_.size());
      std::reverse(nest_pool_.begin() + place.nest_begin, nest_pool_.end());
    }
    loop_start_.assign(k_.loops.size(), 0);
    loop_end_.assign(k_.loops.size(), 0);
    for (size_t l = 0; l < k_.loops.size(); ++l) {
      loop_start_[l] = static_cast<int>(order_.size());
      loop_end_[l] = 0;
    }
    for (size_t i = 0; i < order_.size(); ++i)
      for (LoopId l : nest(order_[i])) {
        loop_start_[l] = std::min(loop_start_[l], static_cast<int>(i));
        loop_end_[l] = std::max(loop_end_[l], static_cast<int>(i) + 1);
      }

    resources_.resize(k_.tensors.size());
    for (size_t t = 0; t < k_.tensors.size(); ++t) {
      resources_[t].tensor = &k_.tensors[t];
      resources_[t].whole = whole_of(k_.tensors[t].shape);
    }
    for (size_t i = 0; i < order_.size(); ++i) {
      InstId id = order_[i];
      const Instruction& in = k_.insts[id];
      for (const Access& a : in.reads) resources_[a.tensor_id].reads.push_back({static_cast<int>(i), id, &a});
      for (const Access& a : address_register_reads(id))
        resources_[a.tensor_id].reads.push_back({static_cast<int>(i), id, &a});
      for (const Access& a : in.writes) {
        resources_[a.tensor_id].writes.push_back({static_cast<int>(i), id, &a});
        if (accumulates(in)) resources_[a.tensor_id].reads.push_back({static_cast<int>(i), id, &a});
      }
      if (!in.engine.empty() && k_.target->is_dma_queue(in.engine)) {
        auto [it, fresh] = queue_index_.emplace(in.engine, resources_.size());
        if (fresh) {
          resources_.emplace_back();
          resources_.back().whole = whole_of({1});
        }
        resources_[it->second].writes.push_back({static_cast<int>(i), id, nullptr});
      }
    }

    for (Resource& r : resources_) {
      build_index(r, r.writes, r.write_index);
      build_index(r, r.reads, r.read_index);
    }

    edges_.reserve(order_.size() * 3);
    succ_.resize(k_.insts.size());
    reached_.assign(k_.insts.size(), -1);
    for (size_t i = 0; i < order_.size(); ++i) {
      InstId id = order_[i];
      stamp_ = static_cast<int>(i);
      const Instruction& in = k_.insts[id];
      for (const Access& a : in.reads) visit(id, a.tensor_id, &a, /*is_write=*/false);
      for (const Access& a : address_register_reads(id)) visit(id, a.tensor_id, &a, /*is_write=*/false);
      if (accumulates(in)) {
        const LoopId start = accumulation_start(k_, id);
        for (const Access& a : in.writes) visit(id, a.tensor_id, &a, /*is_write=*/false, start);
      }
      for (const Access& a : in.writes) visit(id, a.tensor_id, &a, /*is_write=*/true);
      if (!in.engine.empty() && k_.target->is_dma_queue(in.engine))
        visit(id, queue_index_.at(in.engine), nullptr, true);
    }

    DepGraph g(k_.insts.size());
    std::vector<uint32_t> out_degree(k_.insts.size(), 0), in_degree(k_.insts.size(), 0);
    for (const auto& [key, kind] : edges_)
      ++out_degree[static_cast<size_t>(key.src)], ++in_degree[static_cast<size_t>(key.dst)];
    g.reserve_edges(out_degree, in_degree);
    for (const auto& [key, kind] : edges_)
      g.add_unique(key.src, key.dst, DepEdge{kind, key.distance, key.loop, false, implies_.count(key) > 0});
    return g;
  }

 private:
  struct Key {
    InstId src, dst;
    int distance;
    LoopId loop;
    bool operator==(const Key& o) const {
      return src == o.src && dst == o.dst && distance == o.distance && loop == o.loop;
    }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      size_t h = static_cast<size_t>(k.src) * 1000003u ^ static_cast<size_t>(k.dst);
      return h * 31 + static_cast<size_t>(k.distance) * 7 + static_cast<size_t>(k.loop + 1);
    }
  };

  void add_edge(InstId src, InstId dst, DepKind kind, int distance, LoopId loop) {
    auto [it, fresh] =
        edges_.try_emplace(Key{src, dst, distance, distance ? loop : kNoId}, kind);  // no node when present
    if (!fresh && kind > it->second) it->second = kind;
    if (fresh && distance == 0 && stable(dst, common_depth(src, dst))) succ_[src].push_back(dst);
  }

  // ---- Edges implied by others (issue: N loops over one DRAM tensor made ~1.5 N^2 edges) ----
  //
  // The simulator starts an instruction after each predecessor's event: its start (Ordered),
  // its reads done (Anti), its completion (Flow, Output). So c -> s (Flow or Output) and
  // s -> x (any kind) make x start after c completed: the edge c -> x adds nothing; with
  // c -> s Anti, x starts after c finished reading. Such an edge is left out when c and x
  // share no loop; edges inside a loop are all kept, as the passes read their shape. The
  // edges the argument goes through must survive the passes: distance 0, and not an edge
  // inside a loop into a load (separate-load-compute cuts those; no pass removes another
  // distance-0 edge). reached_[i] == stamp_: the instruction being visited starts after i
  // starts, through such edges.
  bool stable(InstId dst, int shared_depth) {
    if (shared_depth == 0) return true;
    const std::optional<OpClass> c = op_class_(dst);
    return !(c == OpClass::Load || c == OpClass::IndirectLoad);
  }

  // Does c finish (completion) or finish reading (!completion) before the visited
  // instruction starts, through edges added so far?
  // The two edges it goes through (c -> s, s -> the visited instruction) are marked: a
  // per-tile edge would order only some instances (sched/analysis/tile_dependence.h).
  bool implied(InstId c, bool completion) {
    for (InstId s : succ_[c]) {
      if (reached_[s] != stamp_) continue;
      const DepKind kind = edges_.at(Key{c, s, 0, kNoId});
      if (kind == DepKind::Flow || kind == DepKind::Output || (!completion && kind == DepKind::Anti)) {
        implies_.insert(Key{c, s, 0, kNoId});
        implies_.insert(Key{s, order_[static_cast<size_t>(stamp_)], 0, kNoId});
        return true;
      }
    }
    return false;
  }

  // Orders c before x in the same iteration with an edge of `kind` (Flow, Output or Anti),
  // unless edges already added imply it. Returns whether the order is stable (see above).
  bool order(InstId c, InstId x, int shared_depth, DepKind kind) {
    const bool is_stable = stable(x, shared_depth);
    if (!(shared_depth == 0 && implied(c, kind != DepKind::Anti))) add_edge(c, x, kind, 0, kNoId);
    if (is_stable) reached_[c] = stamp_;
    return is_stable;
  }

  // An index `v10 + 512` reads address register v10: one-register accesses of its file,
  // made once per instruction and kept (entries point at them).
  const std::vector<Access>& address_register_reads(InstId id) {
    static const std::vector<Access> kNone;
    if (!has_register_file_) return kNone;
    auto [it, fresh] = register_reads_.try_emplace(id);
    if (!fresh) return it->second;
    const Instruction& in = k_.insts[id];
    for (const auto* list : {&in.reads, &in.writes})
      for (const Access& a : *list)
        for (const IndexRange& r : a.dims)
          for (const AffineExpr* e : {&r.lo, &r.hi})
            for (const AffineTerm& t : e->terms) {
              if (t.loop != kNoId) continue;
              auto [tensor, reg] = register_of(t.symbol);
              if (tensor == kNoId) continue;
              bool seen = false;
              for (const Access& x : it->second) seen |= x.tensor_id == tensor && x.dims[0].lo.constant == reg;
              if (seen) continue;
              Access read;
              read.tensor = k_.tensors[tensor].name;
              read.tensor_id = tensor;
              read.loc = a.loc;
              IndexRange one;
              one.lo.constant = reg;
              one.hi.constant = reg + 1;
              one.single = true;
              read.dims.push_back(one);
              it->second.push_back(read);
            }
    return it->second;
  }

  // "v10" -> (the register file tensor for prefix "v", 10), or (kNoId, 0).
  std::pair<int, int64_t> register_of(const std::string& symbol) const {
    for (size_t t = 0; t < k_.tensors.size(); ++t) {
      const Tensor& tensor = k_.tensors[t];
      if (!tensor.register_file || symbol.rfind(tensor.name, 0) != 0) continue;
      std::string num = symbol.substr(tensor.name.size());
      if (!num.empty() && std::all_of(num.begin(), num.end(), ::isdigit)) return {static_cast<int>(t), std::stoll(num)};
    }
    return {kNoId, 0};
  }

  static IndexRange whole_range(int64_t extent) {
    IndexRange r;
    r.hi.constant = extent;
    return r;
  }

  static DepKind kind_for(bool src_writes, bool dst_writes, bool queue) {
    if (queue) return DepKind::Ordered;
    if (src_writes && dst_writes) return DepKind::Output;
    return src_writes ? DepKind::Flow : DepKind::Anti;
  }

  // A resource's list of entries seen from the visited position p: `at` entries lie before
  // it. Visits come in program order, so `at` is a cursor that only moves forward; a bound at
  // p then needs no search and any other searches one side of it, never the whole list.
  struct ListAt {
    const std::vector<Entry>& list;
    int p;
    size_t at;

    // Entries with position in [lo, hi), as an index range.
    std::pair<size_t, size_t> span(int lo, int hi) const { return {first_at(lo), first_at(hi)}; }
    // The first entry at position `pos` or later.
    size_t first_at(int pos) const {
      if (pos == p) return at;
      const auto cmp = [](const Entry& e, int q) { return e.pos < q; };
      const auto from = pos < p ? list.begin() : list.begin() + static_cast<std::ptrdiff_t>(at);
      const auto to = pos < p ? list.begin() + static_cast<std::ptrdiff_t>(at) : list.end();
      return static_cast<size_t>(std::lower_bound(from, to, pos, cmp) - list.begin());
    }
  };
  static ListAt list_at(const std::vector<Entry>& list, size_t& cursor, int p) {
    while (cursor < list.size() && list[cursor].pos < p) ++cursor;
    return {list, p, cursor};
  }

  int common_depth(InstId a, InstId b) const {
    const Nest na = nest(a);
    const Nest nb = nest(b);
    int d = 0;
    while (d < static_cast<int>(na.size()) && d < static_cast<int>(nb.size()) && na[d] == nb[d]) ++d;
    return d;
  }

  // Largest (sign = +1) or smallest (sign = -1) value of
  //   dst_expr(X's instance) - src_expr(W's instance)
  // over the iteration space the relation allows.
  int64_t extreme(const AffineExpr& dst_expr, const AffineExpr& src_expr, const Relation& rel, int sign) const {
    int64_t total = dst_expr.constant - src_expr.constant;
    // Coefficient per loop of the shared and carrier variables; free variables bound alone.
    // (A few loops per expression: no allocation per call, the scans call this per pair.)
    boost::container::small_vector<std::pair<LoopId, int64_t>, 8> shared;
    auto add_shared = [&](LoopId l, int64_t c) {
      for (auto& [sl, sc] : shared)
        if (sl == l) {
          sc += c;
          return;
        }
      shared.push_back({l, c});
    };
    auto bound_free = [&](LoopId l, int64_t c) {
      const Loop& loop = k_.loops[l];
      int64_t a = c * loop.lo, b = c * (loop.hi - 1);
      total += sign > 0 ? std::max(a, b) : std::min(a, b);
    };
    auto handle = [&](const AffineExpr& e, int64_t side) {  // side: +1 for X, -1 for W
      for (const AffineTerm& t : e.terms) {
        int64_t c = side * t.coeff;
        const Loop& l = k_.loops[t.loop];
        if (t.loop == rel.carrier) {
          add_shared(t.loop, c);
          if (side < 0) total -= c * rel.distance;  // W runs at i - distance: -cW*(i-d) adds +cW*d
        } else if (l.depth <= rel.shared_depth) {
          add_shared(t.loop, c);
        } else {
          bound_free(t.loop, c);
        }
      }
    };
    handle(dst_expr, +1);
    handle(src_expr, -1);
    for (auto [l, c] : shared) {
      const Loop& loop = k_.loops[l];
      int64_t lo = loop.lo + (l == rel.carrier ? rel.distance : 0);
      int64_t a = c * lo, b = c * (loop.hi - 1);
      total += sign > 0 ? std::max(a, b) : std::min(a, b);
    }
    return total;
  }

  Nest nest(InstId id) const {
    const InstPlace& p = place_[static_cast<size_t>(id)];
    return {nest_pool_.data() + p.nest_begin, nest_pool_.data() + p.nest_end};
  }

  // The full ranges of a shape's dimensions, made once per distinct shape (a kernel may have
  // 100k tensors of a few shapes).
  const IndexRange* whole_of(const std::vector<int64_t>& shape) {
    auto [it, fresh] = whole_by_shape_.try_emplace(shape);
    if (fresh)
      for (int64_t extent : shape) it->second.push_back(whole_range(extent));
    return it->second.data();
  }

  static const IndexRange& dim_range(const Resource& r, const Access* a, size_t d) {
    return a && !a->whole() ? a->dims[d] : r.whole[d];
  }

  size_t rank(const Resource& r) const { return r.tensor ? r.tensor->shape.size() : 1; }

  // The range's loop terms and constant span, when its start and end have the same terms and
  // no register (RangeIndex).
  static std::optional<FiledRange> filed_range(const IndexRange& x) {
    const auto terms_of = [](const AffineExpr& e, LoopTerms& out) {
      for (const AffineTerm& t : e.terms) {
        if (t.loop < 0) return false;
        auto at = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == t.loop; });
        if (at == out.end())
          out.push_back({t.loop, t.coeff});
        else
          at->second += t.coeff;
      }
      out.erase(std::remove_if(out.begin(), out.end(), [](const auto& p) { return p.second == 0; }), out.end());
      std::sort(out.begin(), out.end());
      return true;
    };
    FiledRange f{{}, {x.lo.constant, x.hi.constant}};
    LoopTerms hi_terms;
    if (!terms_of(x.lo, f.terms) || !terms_of(x.hi, hi_terms) || f.terms != hi_terms) return std::nullopt;
    return f;
  }

  // Files `list` by the dimension on which its filed ranges are the most varied (the first of
  // those with the most distinct ranges).
  void build_index(const Resource& r, const std::vector<Entry>& list, RangeIndex& index) const {
    // How many distinct filed ranges each dimension has, as 0, 1 or 2 for "more": usually at
    // most one dimension varies, and then it is the answer without counting its ranges.
    boost::container::small_vector<int, 4> varies(rank(r), 0);
    for (size_t d = 0; d < rank(r); ++d) {
      std::optional<FiledRange> first;
      for (const Entry& e : list) {
        std::optional<FiledRange> f = filed_range(dim_range(r, e.access, d));
        if (!f) continue;
        if (!first) {
          first = std::move(f), varies[d] = 1;
        } else if (f->offsets.lo != first->offsets.lo || f->offsets.hi != first->offsets.hi ||
                   f->terms != first->terms) {
          varies[d] = 2;
          break;
        }
      }
    }
    size_t best = static_cast<size_t>(std::max_element(varies.begin(), varies.end()) - varies.begin());
    if (std::count(varies.begin(), varies.end(), 2) > 1) {
      size_t best_count = 0;
      std::vector<std::tuple<LoopTerms, int64_t, int64_t>>& seen = seen_scratch_;  // one buffer for every list
      for (size_t d = 0; d < rank(r); ++d) {
        if (varies[d] < 2) continue;
        seen.clear();
        for (const Entry& e : list)
          if (std::optional<FiledRange> f = filed_range(dim_range(r, e.access, d)))
            seen.emplace_back(std::move(f->terms), f->offsets.lo, f->offsets.hi);
        std::sort(seen.begin(), seen.end());
        const size_t count = static_cast<size_t>(std::unique(seen.begin(), seen.end()) - seen.begin());
        if (count > best_count) best = d, best_count = count;
      }
    }
    index.build(list.size(), best, [&](size_t i) { return filed_range(dim_range(r, list[i].access, best)); });
  }

  // Whether X's range on `dim` can be bounded: it reads no register (may_overlap ignores such
  // a dimension).
  static bool bounded(const Resource& r, const Access* a, size_t dim) {
    const IndexRange& x = dim_range(r, a, dim);
    for (const AffineExpr* e : {&x.lo, &x.hi})
      for (const AffineTerm& t : e->terms)
        if (t.loop < 0) return false;
    return true;
  }

  // The window of spans an entry filed under `signature` (RangeIndex) must reach into to
  // overlap X's access `dst` (of instruction `x`) on `dim`: X's range less the signature's
  // terms, at its extremes under the scan's relation, as extreme() computes it for the entry
  // itself, so that an entry outside it is one may_overlap or min_distance would reject.
  // Without `carrier` (a same-iteration scan) the signature's loops that enclose X enclose
  // every entry of it too, at X's iteration: at most the entry's common depth with X is shared,
  // and sharing fewer loops only widens the window. With one, its iterations 1 to trip-1 back
  // (min_distance's), the window linear in the distance: its two ends bound it.
  Span window(const Resource& r, const Access* dst, size_t dim, InstId x, const AffineExpr& signature,
              LoopId carrier) const {
    const IndexRange& range = dim_range(r, dst, dim);
    const auto at = [&](const Relation& rel) {
      return Span{extreme(range.lo, signature, rel, -1), extreme(range.hi, signature, rel, +1)};
    };
    if (carrier == kNoId) {
      const Nest nest = this->nest(x);
      int shared = 0;
      for (const AffineTerm& t : signature.terms)
        if (std::find(nest.begin(), nest.end(), t.loop) != nest.end())
          shared = std::max(shared, k_.loops[t.loop].depth);
      return at(Relation{kNoId, 0, shared});
    }
    const Loop& l = k_.loops[carrier];
    const Span first = at(Relation{carrier, 1, l.depth - 1});
    const Span last = at(Relation{carrier, std::max<int64_t>(1, l.trip_count() - 1), l.depth - 1});
    return {std::min(first.lo, last.lo), std::max(first.hi, last.hi)};
  }

  // RangeIndex::scan_back over `index` for X's access under the scan's relation (window()).
  template <class Visit>
  bool scan_back(const Resource& r, const RangeIndex& index, size_t a, size_t b, InstId x, const Access* dst,
                 LoopId carrier, Visit visit) const {
    const size_t dim = index.key();
    return index.scan_back(
        a, b, bounded(r, dst, dim), [&](size_t s) { return window(r, dst, dim, x, index.signatures()[s], carrier); },
        visit);
  }

  // The box a write fills for Coverage: its constant box, but none for a strided write, whose
  // range has gaps.
  std::optional<Box> written_box(const Resource& r, const Access* a) const {
    if (a && std::any_of(a->dims.begin(), a->dims.end(), [](const IndexRange& d) { return d.strided(); }))
      return std::nullopt;
    return constant_box(r, a);
  }

  // The access's box when it is the same in every instance (no variable), else nullopt.
  std::optional<Box> constant_box(const Resource& r, const Access* a) const {
    if (!r.tensor) return Box{{0, 1}};  // a DMA queue: one element
    const auto no_value = [](const AffineTerm&) -> std::optional<int64_t> { return std::nullopt; };
    Box box;
    if (!box_of(*r.tensor, a ? *a : Access{}, no_value, box)) return std::nullopt;
    return box;
  }

  // AffineExpr::uses_register, inline: asked per access pair the scans visit.
  static bool uses_register(const AffineExpr& e) {
    for (const AffineTerm& t : e.terms)
      if (t.loop < 0 && !t.symbol.empty() && t.symbol[0] != '%') return true;
    return false;
  }
  static bool uses_register(const IndexRange& x) { return uses_register(x.lo) || uses_register(x.hi); }

  // Can W's access (src) and X's access (dst) touch a common element under `rel`?
  // Per dimension: X.hi > W.lo and W.hi > X.lo must both be possible.
  bool may_overlap(const Resource& r, const Access* src, const Access* dst, const Relation& rel) const {
    for (size_t d = 0; d < rank(r); ++d) {
      const IndexRange &s = dim_range(r, src, d), &x = dim_range(r, dst, d);
      if (uses_register(s) || uses_register(x)) continue;
      if (extreme(x.hi, s.lo, rel, +1) <= 0) return false;  // X always ends before W starts
      if (extreme(x.lo, s.hi, rel, -1) >= 0) return false;  // W always ends before X starts
    }
    return true;
  }

  // Does W's access contain X's for every instance pair under `rel`? A strided W leaves gaps
  // in its range: it covers nothing.
  bool covers(const Resource& r, const Access* src, const Access* dst, const Relation& rel) const {
    for (size_t d = 0; d < rank(r); ++d) {
      const IndexRange &s = dim_range(r, src, d), &x = dim_range(r, dst, d);
      if (uses_register(s) || uses_register(x) || s.strided()) return false;
      if (extreme(x.lo, s.lo, rel, -1) < 0) return false;  // X may start before W
      if (extreme(x.hi, s.hi, rel, +1) > 0) return false;  // X may end after W
    }
    return true;
  }

  // Smallest distance d in [1, trip-1] of `carrier` at which the accesses may overlap, or 0.
  int min_distance(const Resource& r, const Access* src, const Access* dst, LoopId carrier) const {
    const Loop& l = k_.loops[carrier];
    int64_t trip = l.trip_count();
    if (trip < 2) return 0;
    Relation rel{carrier, 0, l.depth - 1};
    // Each overlap condition is g(d) = A + B*d > 0 (the maximum over the box is linear in d).
    int64_t dmin = 1, dmax = trip - 1;
    for (size_t d = 0; d < rank(r); ++d) {
      const IndexRange &s = dim_range(r, src, d), &x = dim_range(r, dst, d);
      if (uses_register(s) || uses_register(x)) continue;
      for (int cond = 0; cond < 2; ++cond) {
        auto g = [&](int64_t dist) {
          Relation at = rel;
          at.distance = dist;
          return cond == 0 ? extreme(x.hi, s.lo, at, +1) : -extreme(x.lo, s.hi, at, -1);
        };
        int64_t a = g(0), b = g(1) - a;
        // Need a + b*d > 0, i.e. a + b*d >= 1.
        if (b == 0) {
          if (a <= 0) return 0;
        } else if (b > 0) {
          int64_t need = (1 - a + b - 1) / b;  // ceil((1 - a) / b)
          if (1 - a <= 0) need = -((a - 1) / b);
          dmin = std::max(dmin, need);
        } else {
          int64_t nb = -b;  // a - nb*d >= 1  ->  d <= (a - 1) / nb
          if (a - 1 < 0) return 0;
          dmax = std::min(dmax, (a - 1) / nb);
        }
      }
    }
    return dmin <= dmax ? static_cast<int>(dmin) : 0;
  }

  // All dependences ending at X's access `dst` of resource `res`. `within` (an accumulating
  // read with `start`): only writes inside that loop reach it. Its first iteration starts the
  // group; in a later one, X's own write of the iteration before (which does not move with
  // the loop: start_problem) hides everything older.
  void visit(InstId x, size_t res, const Access* dst, bool is_write, LoopId within = kNoId) {
    const Resource& r = resources_[res];
    const bool queue = r.tensor == nullptr;
    const int p = place_[x].pos;
    const Nest nest = this->nest(x);
    const ListAt writes = list_at(r.writes, resources_[res].writes_before, p);
    const ListAt reads = list_at(r.reads, resources_[res].reads_before, p);

    // Same iteration of every common loop: scan back to the latest write covering X.
    int kill_depth = -1;  // carried scans of loops at depth <= this are killed
    int kill_pos = -1;
    const std::optional<Box> x_box = constant_box(r, dst);
    {
      Coverage cov(x_box);
      int cover_depth = 1 << 30;
      // Whether every older write (read) is ordered before X, for X's own entry; the scan
      // stops at a write ordered before X that has every older write ordered before it.
      bool writes_done = !queue, reads_done = !queue;
      int reads_stop = -1;  // older reads are ordered before X
      // A write the index passes over does not overlap X: writes_done becomes false, as
      // when may_overlap says so below. Returns true to stop the scan.
      auto [a, b] = writes.span(within == kNoId ? 0 : loop_start_[within], p);
      const bool passed = scan_back(r, r.write_index, a, b, x, dst, kNoId, [&](size_t i) {
        const Entry& w = r.writes[i];
        Relation rel{kNoId, 0, common_depth(w.inst, x)};
        if (!may_overlap(r, w.access, dst, rel)) {
          writes_done = false;
          return false;
        }
        bool ordered = false;
        if (queue)
          add_edge(w.inst, x, kind_for(true, is_write, queue), 0, kNoId);
        else
          ordered = order(w.inst, x, rel.shared_depth, kind_for(true, is_write, queue));
        writes_done &= ordered;
        cover_depth = std::min(cover_depth, rel.shared_depth);
        if (cov.add(written_box(r, w.access), covers(r, w.access, dst, rel))) {
          kill_depth = cover_depth;
          kill_pos = w.pos;
          writes_done = reads_done = false;
          return true;
        }
        if (ordered && w.writes_before_done) {
          if (w.reads_before_done) reads_stop = w.pos;
          return true;
        }
        return false;
      });
      if (passed) writes_done = false;
      if (is_write && !queue) {
        auto [ra, rb] = reads.span(std::max(kill_pos + 1, reads_stop), p);
        const bool passed_read = scan_back(r, r.read_index, ra, rb, x, dst, kNoId, [&](size_t i) {
          const Entry& rd = r.reads[i];
          Relation rel{kNoId, 0, common_depth(rd.inst, x)};
          if (!may_overlap(r, rd.access, dst, rel))
            reads_done = false;
          else
            reads_done &= order(rd.inst, x, rel.shared_depth, DepKind::Anti);
          return false;
        });
        if (passed_read) reads_done = false;
        if (reads_stop < 0 && ra > 0) reads_done = false;
        auto [xa, xb] = writes.span(p, p + 1);  // X's own entries
        for (size_t i = xa; i < xb; ++i) {
          Entry& e = resources_[res].writes[i];
          if (e.access != dst) continue;
          e.writes_before_done = writes_done;
          e.reads_before_done = reads_done;
        }
      }
    }

    // Earlier iterations of each enclosing loop, innermost first.
    for (size_t n = nest.size(); n-- > 0;) {
      LoopId l = nest[n];
      if (k_.loops[l].depth <= kill_depth) break;
      if (within != kNoId && k_.loops[l].depth < k_.loops[within].depth) break;
      const int s = loop_start_[l], e = loop_end_[l];
      int cover_pos = -1;
      // The previous iteration from its end back to X: once its writes cover X, everything
      // older is hidden.
      Coverage cov(x_box);
      auto [a, b] = writes.span(p, e);
      scan_back(r, r.write_index, a, b, x, dst, l, [&](size_t i) {
        const Entry& w = r.writes[i];
        int d = min_distance(r, w.access, dst, l);
        if (!d) return false;
        add_edge(w.inst, x, kind_for(true, is_write, queue), d, l);
        if (d == 1 &&
            cov.add(written_box(r, w.access), covers(r, w.access, dst, Relation{l, 1, k_.loops[l].depth - 1}))) {
          cover_pos = w.pos;
          return true;
        }
        return false;
      });
      if (cover_pos < 0) {
        auto [c, dd] = writes.span(s, p);
        scan_back(r, r.write_index, c, dd, x, dst, l, [&](size_t i) {
          const Entry& w = r.writes[i];
          if (int d = min_distance(r, w.access, dst, l)) add_edge(w.inst, x, kind_for(true, is_write, queue), d, l);
          return false;
        });
      }
      if (is_write && !queue) {
        auto [ra, rb] = reads.span(cover_pos >= 0 ? cover_pos + 1 : s, e);
        scan_back(r, r.read_index, ra, rb, x, dst, l, [&](size_t i) {
          const Entry& rd = r.reads[i];
          int d = min_distance(r, rd.access, dst, l);
          if (d && (cover_pos < 0 || d == 1)) add_edge(rd.inst, x, DepKind::Anti, d, l);
          return false;
        });
      }
    }
  }

  const Kernel& k_;
  std::vector<InstId> order_;
  std::vector<InstPlace> place_;
  std::vector<int> loop_start_, loop_end_;
  std::vector<Resource> resources_;
  std::unordered_map<std::string, size_t> queue_index_;
  std::map<std::vector<int64_t>, std::vector<IndexRange>> whole_by_shape_;
  std::vector<LoopId> nest_pool_;  // every instruction's loop nest (InstPlace)
  mutable std::vector<std::tuple<LoopTerms, int64_t, int64_t>> seen_scratch_;  // build_index's
  // The edge maps' nodes from one arena, released at once: no allocation or free per edge.
  // (Same containers, so the same iteration order: it is the order the graph gets its edges in.)
  std::pmr::monotonic_buffer_resource arena_;
  std::pmr::unordered_map<Key, DepKind, KeyHash> edges_{&arena_};
  std::pmr::unordered_set<Key, KeyHash> implies_{&arena_};  // edges implied() went through
  std::unordered_map<InstId, std::vector<Access>> register_reads_;
  std::vector<std::vector<InstId>> succ_;  // distance-0 stable edges added so far, by source
  std::vector<int> reached_;
  OpClassOf op_class_{k_};  // stable()'s
  int stamp_ = -1;
  const bool has_register_file_ =
      std::any_of(k_.tensors.begin(), k_.tensors.end(), [](const Tensor& t) { return t.register_file; });
};

}  // namespace

DepGraph analyze_dependences(const Kernel& k) { return Analyzer(k).run(); }

DepGraph build_dep_graph(const Kernel& k) {
  DepGraph g = k.deps_listed() ? DepGraph(k.insts.size()) : analyze_dependences(k);
  for (const ExplicitDep& d : k.explicit_deps)
    g.add(d.src, d.dst, static_cast<DepKind>(d.kind), d.distance, d.loop, /*is_explicit=*/true);
  check_acyclic(k, g);
  return g;
}

namespace {

// Depth-first search over the distance-0 edges of live instructions: a back edge closes a
// cycle, thrown as the path around it (the tree edges give each vertex's parent).
struct CycleFinder : boost::default_dfs_visitor {
  struct Found {
    InstId from, to;  // the back edge from -> to
  };
  std::vector<InstId>* parent;
  template <class Edge, class G>
  void tree_edge(Edge e, const G& g) {
    (*parent)[boost::target(e, g)] = static_cast<InstId>(boost::source(e, g));
  }
  template <class Edge, class G>
  void back_edge(Edge e, const G& g) {
    throw Found{static_cast<InstId>(boost::source(e, g)), static_cast<InstId>(boost::target(e, g))};
  }
};

// filtered_graph needs assignable predicates (lambdas are not).
struct SameIteration {
  const DepGraph::Graph* g = nullptr;
  bool operator()(DepGraph::Graph::edge_descriptor e) const { return (*g)[e].distance == 0; }
};
struct Live {
  const Kernel* k = nullptr;
  bool operator()(DepGraph::Graph::vertex_descriptor v) const { return !k->insts[v].erased; }
};

}  // namespace

// Are the distance-0 edges between live instructions acyclic? Kahn's algorithm over a flat
// copy of them: after every pass this is the usual answer, found without Boost's filtered
// depth-first search.
static bool acyclic_same_iteration(const Kernel& k, const DepGraph& g) {
  const size_t n = g.num_vertices();
  std::vector<uint32_t> first(n + 1, 0), pending(n, 0), targets;  // v's edges: targets[first[v], first[v + 1])
  std::vector<uint8_t> erased(n);
  for (size_t v = 0; v < n; ++v) erased[v] = k.insts[v].erased;
  targets.reserve(g.num_edges());
  size_t live = 0;
  for (size_t v = 0; v < n; ++v) {
    first[v] = static_cast<uint32_t>(targets.size());
    if (erased[v]) continue;
    ++live;
    for (const DepEdgeRef& e : g.outgoing(static_cast<InstId>(v))) {
      const size_t dst = static_cast<size_t>(e.dst);
      if (e.props.distance != 0 || erased[dst]) continue;
      targets.push_back(static_cast<uint32_t>(dst));
      ++pending[dst];
    }
  }
  first[n] = static_cast<uint32_t>(targets.size());
  std::vector<uint32_t> ready;
  for (size_t v = 0; v < n; ++v)
    if (!erased[v] && pending[v] == 0) ready.push_back(static_cast<uint32_t>(v));
  for (size_t done = 0; done < ready.size(); ++done) {
    const uint32_t v = ready[done];
    for (uint32_t e = first[v]; e < first[v + 1]; ++e)
      if (--pending[targets[e]] == 0) ready.push_back(targets[e]);
  }
  return ready.size() == live;
}

void check_acyclic(const Kernel& k, const DepGraph& g) {
  if (acyclic_same_iteration(k, g)) return;
  // Otherwise a depth-first search, which names the cycle if there is one.
  using Graph = DepGraph::Graph;
  const Graph& graph = g.graph();
  boost::filtered_graph<Graph, SameIteration, Live> order(graph, SameIteration{&graph}, Live{&k});
  std::vector<InstId> parent(g.num_vertices(), kNoId);
  std::vector<boost::default_color_type> colors(g.num_vertices());
  try {
    boost::depth_first_search(
        order, CycleFinder{{}, &parent},
        boost::make_iterator_property_map(colors.begin(), boost::get(boost::vertex_index, graph)));
  } catch (const CycleFinder::Found& f) {
    // Cycle: to -> ... -> from -> to. Report it at an explicit edge on it, if there is one.
    std::vector<InstId> cycle{f.from};
    for (InstId u = f.from; u != f.to; u = parent[u]) cycle.push_back(parent[u]);
    std::reverse(cycle.begin(), cycle.end());
    std::string path;
    for (InstId u : cycle) path += k.display_name(u) + " -> ";
    path += k.display_name(f.to);
    SourceLoc where = k.loc;
    for (size_t i = 0; i < cycle.size(); ++i) {
      InstId a = cycle[i], b = i + 1 < cycle.size() ? cycle[i + 1] : f.to;
      for (const ExplicitDep& d : k.explicit_deps)
        if (d.src == a && d.dst == b && d.distance == 0) where = d.loc;
    }
    throw Error(where, "dependence cycle: " + path);
  }
}

}  // namespace tandem
