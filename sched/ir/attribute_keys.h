// The attribute keys the scheduler and the simulator read or write, declared once (docs/ir.md
// lists what each means). Every attrs.has/get/set of one of them names the constant, so a
// misspelt key is a compile error and `git grep kAttr...` finds every reader and writer.
#pragma once

namespace tandem::attr {

// Tensors.
inline constexpr const char* kBuffers = "buffers";  // address-rotation: buffers of a ring
inline constexpr const char* kRotate = "rotate";    // the loop (its induction variable) a ring turns with
inline constexpr const char* kStride = "stride";    // bytes per partition between buffers of a ring
inline constexpr const char* kAddress = "address";  // a placed tensor's first byte of each partition
inline constexpr const char* kExtent = "extent";    // the bytes of each partition it keeps from there

// Loops.
inline constexpr const char* kAdvance = "advance";                     // "v10 += 512": an address register's step
inline constexpr const char* kPrefetchDistance = "prefetch_distance";  // prefetch-schedule{after,prefetch-distance}
inline constexpr const char* kAsmLabel = "asm_label";  // import-amdgpu: the loop's label in the assembly

// Instructions.
inline constexpr const char* kAccumulate = "accumulate";  // a write that adds to what is there
inline constexpr const char* kStart = "start";            // the loop whose first iteration starts the group
inline constexpr const char* kOrder = "order";            // list-schedule: position in its run
inline constexpr const char* kPrefetch = "prefetch";      // prefetch-schedule: incoming-order stamp
inline constexpr const char* kFence = "fence";            // a barrier's engines ("act,dve")
inline constexpr const char* kSeparationBarrier = "separation_barrier";  // the split's stage divider
inline constexpr const char* kZeroInit = "zero_init";                    // the split's memset of an index tile
inline constexpr const char* kValue = "value";                           // memset's value
inline constexpr const char* kElementwise = "elementwise";               // a transposed transfer: element runs
inline constexpr const char* kDoubleRow = "double_row";                  // a matmul in FP8 double-row mode
inline constexpr const char* kIssueCycles = "issueCycles";               // per-instruction costs (wmma-reorder's)
inline constexpr const char* kLatencyCycles = "latencyCycles";
inline constexpr const char* kATile = "a_tile";       // wmma-reorder{vgpr}: the A operand tile a WMMA reads
inline constexpr const char* kBTile = "b_tile";       // wmma-reorder{vgpr}: the B operand tile a WMMA reads
inline constexpr const char* kRanks = "ranks";        // a collective's ranks
inline constexpr const char* kOp = "op";              // a collective's operation ("all_reduce")
inline constexpr const char* kMnemonic = "mnemonic";  // import-amdgpu: an opaque instruction's mnemonic
// An instruction after which later writes may not happen on every path or in every lane
// ("branch": a forward branch; "exec": it changes the active lanes). Register liveness
// does not count such later writes as kills.
inline constexpr const char* kControl = "control";
// Kernels: the on-chip buffer spills to DRAM where it overflows (sched/driver/spill.h);
// instructions: a save or reload that spill added.
inline constexpr const char* kSpill = "spill";
inline constexpr const char* kRefills = "refills";  // a spill's load again from DRAM: the tensor it stands for

// Kernels.
inline constexpr const char* kDepsListed = "deps_listed";  // the dep lines are the whole graph
inline constexpr const char* kLiveOut = "live_out";        // registers holding the result
inline constexpr const char* kAsmHash = "asm_hash";        // import-amdgpu: the assembly file's hash

}  // namespace tandem::attr
