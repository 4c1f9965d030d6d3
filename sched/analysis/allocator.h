// SBUF and PSUM allocated by live range (docs/models.md, "Capacity"), the one allocator the
// passes, the lowering's capacity check, the structural verifier and the report read.
//
// The program is laid out on a line of positions: each loop takes one position before its body
// and one after it, each instruction one in between, in program order. A tensor of a bounded
// space is live from its first use to its last, and over the whole of every loop in which it
// carries a value from one iteration to the next:
//   - a loop that it is also used outside of (defined before it, or read after it);
//   - a loop whose body does not begin its use of the tensor with a write that replaces all of
//     it (a read first, an accumulation that continues a group, a partial write);
//   - the loop it rotates on (`rotate`): every buffer of the ring holds a value across iterations.
// A tensor every access of which takes the block `%i` of one dimension, where loop %i runs over
// exactly that dimension and holds all its uses, is a tile per iteration of %i (NKI's block
// dimension, nl.ndarray((n, par_dim(128), ...))): it takes one block's bytes, live as that tile
// (and so for each such dimension and loop).
// A placed tensor (`address`, with `extent` bytes from there, by default its own size) is the
// kernel's own allocation: it keeps those bytes of every partition for the whole kernel, and
// placed tensors whose bytes overlap share them (NKI's direct allocation).
// A dimension that every access of a tensor indexes with a constant (`%qk[0:128, 3, %j, 0:512]`)
// splits it: each of its indices is a part allocated on its own (NKI's logical tiles, which the
// compiler allocates one by one), with the rules above applied to the part's accesses; a part
// that only ever takes one index of another dimension is that index's tile alone.
// At every position the placed bytes (in PSUM: the banks they touch) and the live tensors'
// footprints (SpaceInfo::footprint: bytes per partition, or whole banks per buffer in PSUM)
// must fit the space. A tensor no instruction uses takes no space.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sched/ir/kernel.h"

namespace tandem {

// The first position where the live tensors of a bounded space overflow it (placed tensors
// aside): what stands there and the tensors live there that a spill could move out, those
// allocated whole (one part, no block dimension, unplaced, one buffer, not rotated), in
// declaration order.
struct Overflow {
  std::string space;
  InstId inst = kNoId;  // the instruction there; kNoId at the start or end of `loop`
  LoopId loop = kNoId;
  bool loop_end = false;
  int64_t excess = 0;  // bytes per partition (or banks) over the space's capacity there
  std::vector<int> whole_tensors;
};

struct CapacityProblem {
  SourceLoc loc;        // the instruction (or loop) where the live tensors overflow the space
  std::string message;  // "at %mm, the tensors live in sbuf need ... (%t 256 written by %ld, ...)"
};

// A closed range of positions; empty when the tensor is never used.
struct LiveInterval {
  int first = -1;
  int last = -1;
  bool empty() const { return first < 0; }
};

class Allocator {
 public:
  explicit Allocator(const Kernel& k);
  ~Allocator();
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;

  // Where the tensor (any part of it) is live with its present `buffers` and `rotate`.
  LiveInterval live(int tensor) const;
  // Where it would be live if it rotated on `loop`.
  LiveInterval live_if_rotated(int tensor, LoopId loop) const;

  // The largest footprint that `buffers` buffers of the tensor may take, rotating on `loop`,
  // given every other tensor's present allocation: capacity minus the peak of the others over
  // the positions where the ring (any part of it) would be live. Unbounded spaces answer
  // INT64_MAX.
  int64_t free_for(int tensor, LoopId loop);
  // Records that the tensor now takes `buffers` buffers rotating on `loop`.
  void rotate(int tensor, int64_t buffers, LoopId loop);

  // The most the space holds at once, in its capacity unit (saturating).
  int64_t peak(const std::string& space) const;
  // The first bounded space (in the target's order) whose live tensors overflow it somewhere,
  // with the first position where they do; nullopt when every space fits.
  std::optional<CapacityProblem> first_problem() const;
  // The first overflow of a space, as first_problem() finds it; nullopt when every space fits
  // or the placed tensors alone overflow.
  std::optional<Overflow> first_overflow() const;
  // Is the tensor (any part of it) live where the instruction stands (or where the loop starts
  // or ends)?
  bool live_at(int tensor, InstId inst) const;
  bool live_at_loop(int tensor, LoopId loop, bool loop_end) const;

 private:
  struct SpaceUse;
  // A tensor, or one part of a split tensor: the indices `key` of its split dimensions.
  struct Part {
    int tensor = -1;
    std::vector<int64_t> key;
  };
  struct Block {
    LoopId loop = kNoId;  // the loop whose iterations each have a block of their own
    int dim = -1;         // the dimension it indexes
  };
  void compute_live_ranges();
  void split_tensors();
  void collect_uses();
  int part_of(const Access& a) const;  // -1: not a tensor of a bounded space
  bool in_part(const Access& a, int part) const { return part_of(a) == part; }
  LiveInterval live_part_if_rotated(int part, LoopId loop) const;
  LiveInterval extend_over_carrying_loops(int part, LiveInterval iv, LoopId rotated_on) const;
  int64_t footprint(int part, int64_t buffers) const;
  std::vector<Block> find_blocks(int part) const;
  std::string part_name(int part) const;
  std::string where(int position) const;
  SourceLoc loc_at(int position) const;
  // The placed tensors' bytes, as the space counts them (bytes, or banks touched).
  int64_t placed_usage(const SpaceUse& s) const;
  std::optional<CapacityProblem> placed_problem() const;

  const Kernel& k_;
  std::vector<int> inst_pos_;                                     // by instruction, -1 when erased
  std::vector<std::pair<int, int>> loop_span_;                    // by loop: its open and close positions
  std::vector<int32_t> at_;                                       // by position: instruction id, or -1 - loop id
  std::vector<std::vector<int>> split_dims_;                      // by tensor: the dimensions that split it
  std::vector<std::vector<int>> parts_of_;                        // by tensor: its parts
  std::vector<std::map<std::vector<int64_t>, int>> part_by_key_;  // by split tensor: its parts by key
  std::vector<Part> parts_;
  // By part:
  std::vector<LiveInterval> live_;
  std::vector<int64_t> buffers_;
  // In a bounded space: bytes per partition, worked out once (an allocator lives while a
  // pass changes buffers, never a shape or a type).
  std::vector<int64_t> bytes_;
  std::vector<std::vector<int>> uses_;  // positions of its users, ascending
  std::vector<SpaceUse*> space_of_;     // its bounded space, or nullptr
  std::vector<std::vector<Block>> blocks_;
  // The dimensions in which it is one index: the tensor's split ones, and any other that all its
  // accesses index with the same constant.
  std::vector<std::vector<int>> fixed_dims_;
  std::vector<std::pair<int64_t, int64_t>> placed_;  // [first, end) bytes when placed, else {0, 0}
  std::vector<SpaceUse> spaces_;
};

// The first space the kernel's live tensors overflow, or nullopt when they fit.
std::optional<CapacityProblem> find_capacity_problem(const Kernel& k);

// The most of a bounded space the kernel's live tensors take at once, in its capacity unit.
int64_t space_allocation(const Kernel& k, const std::string& space);

}  // namespace tandem
