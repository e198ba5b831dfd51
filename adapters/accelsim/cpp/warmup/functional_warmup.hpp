// Functional cache warm-up for Accel-Sim (SMARTS-style functional warming), header-only C++11.
//
// A sampled simulation runs a launch without the launches before it, so the launch meets a cold
// L2 and runs slower than in the full run. Simulating the predecessors in detail fixes that but
// costs as much as simulating them. Functional warming replays only the predecessors' global
// memory accesses, taken from their Accel-Sim traces, into the cache tags, without timing: the
// next detailed launch then finds the lines its predecessors left.
//
// This header holds the parts that do not depend on the simulator, so that the package can
// compile and test them: which trace opcodes touch global memory and how (read, write, atomic),
// and which 32-byte sectors a warp instruction touches (the granularity of GPGPU-Sim's sectored
// L2). The tag times of replayed accesses are the simulator's: each L2 partition gives every
// replayed access the next tick of the offset it already keeps for memcpy fills, which all its
// later accesses add to the clock, so the replay keeps its order (also across warm-up traces
// played at the same cycle and at cycle 0) and stays older than the next kernel's accesses.
// The Accel-Sim patch
// (adapters/accelsim/patches/accel-sim-warmup.patch) adds a copy of this file to the simulator
// as gpu-simulator/trace-driven/functional_warmup.hpp; the simulator's trace-driven module is
// compiled as C++11, hence no newer features here.
#ifndef SIMSAMPLE_FUNCTIONAL_WARMUP_HPP
#define SIMSAMPLE_FUNCTIONAL_WARMUP_HPP

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace simsample {
namespace warmup {

// What a warp instruction does to global memory. Atomics and reductions run at L2 in GPGPU-Sim
// (they bypass L1) and leave the line modified, so they count as read and write.
enum Access { kNone = 0, kRead = 1, kWrite = 2, kReadWrite = 3 };

// Sector size of GPGPU-Sim's sectored caches (SECTOR_SIZE) and the warp width of the traces.
const std::uint64_t kSectorBytes = 32;
const unsigned kWarpSize = 32;
// Per-thread local memory window after the trace's local base (Accel-Sim's LOCAL_MEM_SIZE_MAX).
const std::uint64_t kLocalMemSizeMax = 1ull << 14;

// The opcode's base, the part before the first '.': "LDG" for "LDG.E.64.SYS".
inline std::string opcode_base(const std::string &opcode) {
  std::string::size_type dot = opcode.find('.');
  return dot == std::string::npos ? opcode : opcode.substr(0, dot);
}

// Global-memory effect of a traced instruction, decided as Accel-Sim's trace_warp_inst_t does:
// LDG and LDGSTS read, STG writes, ATOMG/ATOM/RED read and write; generic LD/ST reach global
// memory only when the trace gives the shared and local windows and the first active address
// lies outside both (without the windows Accel-Sim treats them as shared). LDL/STL (local
// memory) and everything else are left out.
inline Access classify(const std::string &opcode, std::uint64_t first_active_addr,
                       std::uint64_t shmem_base, std::uint64_t local_base) {
  const std::string base = opcode_base(opcode);
  if (base == "LDG" || base == "LDGSTS") return kRead;
  if (base == "STG") return kWrite;
  if (base == "ATOMG" || base == "ATOM" || base == "RED") return kReadWrite;
  if (base == "LD" || base == "ST") {
    if (shmem_base == 0 || local_base == 0) return kNone;
    if (first_active_addr >= shmem_base && first_active_addr < local_base) return kNone;
    if (first_active_addr >= local_base && first_active_addr < local_base + kLocalMemSizeMax)
      return kNone;
    return base == "LD" ? kRead : kWrite;
  }
  return kNone;
}

// Appends to `out` the distinct sector addresses (multiples of kSectorBytes) touched by the
// active lanes of one warp instruction, each lane covering [addr, addr + width), in the order
// the lanes first touch them. This is what reaches a sectored L2: one request per sector, the
// lanes' duplicates coalesced. Returns the number appended.
inline std::size_t warp_sectors(const std::uint64_t *addrs, std::uint32_t active_mask,
                                unsigned width, std::vector<std::uint64_t> &out) {
  const std::size_t start = out.size();
  if (width == 0) width = 1;
  for (unsigned lane = 0; lane < kWarpSize; ++lane) {
    if (!((active_mask >> lane) & 1u)) continue;
    const std::uint64_t first = addrs[lane] / kSectorBytes;
    const std::uint64_t last = (addrs[lane] + width - 1) / kSectorBytes;
    for (std::uint64_t s = first; s <= last; ++s) {
      const std::uint64_t sector = s * kSectorBytes;
      bool seen = false;
      for (std::size_t i = start; i < out.size(); ++i) {
        if (out[i] == sector) {
          seen = true;
          break;
        }
      }
      if (!seen) out.push_back(sector);
    }
  }
  return out.size() - start;
}

// One replayed access packs the sector address and a write bit into one word (sector addresses
// have their five low bits clear), so a whole trace's accesses fit in one flat vector.
inline std::uint64_t encode(std::uint64_t sector_addr, bool is_write) {
  return sector_addr | (is_write ? 1u : 0u);
}
inline std::uint64_t decoded_addr(std::uint64_t word) { return word & ~(kSectorBytes - 1); }
inline bool decoded_write(std::uint64_t word) { return (word & 1u) != 0; }

// Counts reported after a warm-up trace has been played.
struct Stats {
  std::uint64_t warp_insts = 0;       // instructions read from the trace
  std::uint64_t global_insts = 0;     // of which touched global memory
  std::uint64_t read_sectors = 0;     // sector reads replayed (atomics count here and below)
  std::uint64_t written_sectors = 0;  // sector writes replayed
};

// Adds one traced instruction: classifies it and appends its sectors as encoded accesses (an
// atomic as a read then a write of each sector).
inline void add_instruction(const std::string &opcode, const std::uint64_t *addrs,
                            std::uint32_t active_mask, unsigned width, std::uint64_t shmem_base,
                            std::uint64_t local_base, std::vector<std::uint64_t> &accesses,
                            Stats &stats) {
  ++stats.warp_insts;
  if (active_mask == 0) return;
  std::uint64_t first = 0;
  for (unsigned lane = 0; lane < kWarpSize; ++lane) {
    if ((active_mask >> lane) & 1u) {
      first = addrs[lane];
      break;
    }
  }
  const Access a = classify(opcode, first, shmem_base, local_base);
  if (a == kNone) return;
  ++stats.global_insts;
  std::vector<std::uint64_t> sectors;
  warp_sectors(addrs, active_mask, width, sectors);
  for (std::size_t i = 0; i < sectors.size(); ++i) {
    if (a & kRead) {
      accesses.push_back(encode(sectors[i], false));
      ++stats.read_sectors;
    }
    if (a & kWrite) {
      accesses.push_back(encode(sectors[i], true));
      ++stats.written_sectors;
    }
  }
}

}  // namespace warmup
}  // namespace simsample

#endif  // SIMSAMPLE_FUNCTIONAL_WARMUP_HPP
