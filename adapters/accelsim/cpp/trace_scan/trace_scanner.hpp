// Accel-Sim trace body scanner: per-launch features of a kernel-N.traceg body in one pass.
//
// Dependency-free C++17, compiled into simsample._trace_scan (see bindings.cpp). The semantics
// are those of the Python reference scanner, simsample_accelsim/scan_python.py, which follows
// the simulator's own parser (trace_parser::get_next_threadblock_traces and
// inst_trace_t::parse_from_string); tests compare the two on generated traces.
//
// The caller parses the header (it is a few hundred bytes of key = value lines, read by
// simsample_accelsim.traceg) and feeds the body as chunks of any size and boundary: the
// decompressed output of Python's lzma, or plain reads. A line cut by a chunk boundary is kept
// until the rest arrives, so chunking never changes the result.
//
// What is computed, per launch:
//  * counts: thread blocks, warps, warp instructions (one per instruction line), thread
//    instructions (active lanes), instructions per memory space, distinct 32-byte sectors per
//    global/local load or store (summed), control-flow instructions;
//  * the basic-block vector: a warp's instruction stream is cut after every control-flow opcode
//    and before every PC discontinuity; a block is keyed by (start PC, length) and counts the
//    instructions executed in it, summed over warps;
//  * warp types: warps with identical per-warp block vectors, with their number of warps.
//
// Cost model: one pass over the bytes, no allocation per line (buffers are reused and only
// grow), one hash-table probe per instruction for its opcode and one per warp for its type.
// The block vector of a launch is derived from its warp types when the scan finishes, which
// is far cheaper than updating a map per block execution.
//
// Optionally (Config::record_lines), the cache footprint the context column and the warm-up
// need, exactly as simsample_accelsim.scan_numpy records it: the distinct 128-byte lines the
// launch's global loads read, with how many warp-level loads read each (a line counts once per
// instruction, however many lanes share it), and the distinct lines its global stores write.
// Every line of every lane's access counts (an access crossing line boundaries touches all the
// lines between, at most 2**20 of them). Two open-addressing tables keyed by line number, one
// probe per line per instruction: a launch's footprint costs memory in its distinct lines, not
// in its instructions.
#ifndef SIMSAMPLE_TRACE_SCANNER_HPP
#define SIMSAMPLE_TRACE_SCANNER_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace simsample {
namespace trace_scan {

// Memory classes: the same small integers as simsample_accelsim.opcodes, so that the Python
// side can hand over its opcode table unchanged.
enum MemClass : std::uint8_t {
  kNone = 0,
  kGlobalLd,
  kGlobalSt,
  kLocalLd,
  kLocalSt,
  kSharedLd,
  kSharedSt,
  kGlobalAtom,
  kGlobalRed,
  kSharedAtom,
  kGenericLd,
  kGenericSt,
  kNumMemClasses
};

// Counters, in the order of simsample_accelsim.kernelfeatures.COUNTERS (names in kCounterNames).
enum Counter : int {
  kCtas = 0,
  kWarps,
  kWarpInsts,
  kThreadInsts,
  kGlobalLdInsts,
  kGlobalStInsts,
  kLocalLdInsts,
  kLocalStInsts,
  kSharedLdInsts,
  kSharedStInsts,
  kGlobalAtomInsts,
  kGlobalRedInsts,
  kSharedAtomInsts,
  kSectorsGlobalLd,
  kSectorsGlobalSt,
  kSectorsLocalLd,
  kSectorsLocalSt,
  kControlFlow,
  kNumCounters
};

extern const char* const kCounterNames[kNumCounters];

// A generic address within this many bytes above the local base is local (simulator constant,
// LOCAL_MEM_SIZE_MAX in opcodes.py).
constexpr std::uint64_t kLocalMemSizeMax = std::uint64_t{1} << 14;

// Launch parameters from the header, and the opcode table.
struct Config {
  unsigned skip_tokens = 0;  // fields before the PC: 4 for tracers before version 3, +1 with line info
  int binary_version = 0;    // picks the instruction size, hence the PC of straight-line successors
  std::uint64_t block_threads = 1;  // threads per block: warp ids must lie below ceil(threads / 32)
  std::uint64_t shmem_base = 0;  // generic LD/ST resolution; 0 means "not in the header"
  std::uint64_t local_base = 0;
  std::uint64_t first_line = 1;  // file line number of the body's first line, for error messages
  // Opcode base (text before the first '.') -> memory class; bases absent here are kNone.
  std::unordered_map<std::string, MemClass> classes;
  // Opcode bases after which a new basic block starts (a short list, searched per new opcode).
  std::vector<std::string> control_flow;
  bool record_lines = false;  // record the cache footprint (see the top of this file)
};

// log2 of the line the footprint counts (128 bytes: the L1 and L2 line of Volta and later).
constexpr unsigned kLineBits = 7;
// Lines one access may add (an access over a wild span keeps its start's neighbourhood).
constexpr std::uint64_t kMaxLinesPerAccess = std::uint64_t{1} << 20;

// Line number -> count, open addressing with linear probing (keys are line numbers + 1, so 0
// marks an empty slot; line 2**57 - 1 and above cannot occur for 64-bit addresses).
class LineTable {
 public:
  LineTable() : keys_(1024, 0), counts_(1024, 0) {}
  void add(std::uint64_t line, std::int64_t count) {
    const std::uint64_t key = line + 1;
    std::size_t mask = keys_.size() - 1;
    std::size_t i = slot(key) & mask;
    while (keys_[i] != 0 && keys_[i] != key) i = (i + 1) & mask;
    if (keys_[i] == 0) {
      if (2 * (used_ + 1) > keys_.size()) {
        grow();
        add(line, count);
        return;
      }
      keys_[i] = key;
      ++used_;
    }
    counts_[i] += count;
  }
  std::size_t size() const { return used_; }
  // The lines in ascending order, with their counts.
  void sorted(std::vector<std::uint64_t>& lines, std::vector<std::int64_t>& counts) const;

 private:
  static std::uint64_t slot(std::uint64_t key) { return (key * 0x9E3779B97F4A7C15ull) >> 20; }
  void grow();
  std::vector<std::uint64_t> keys_;
  std::vector<std::int64_t> counts_;
  std::size_t used_ = 0;
};

// A malformed body. `line` is the file line number (0 when the error concerns the whole body)
// and `text` the start of that line, so that the caller can say where and what.
class ScanError : public std::runtime_error {
 public:
  ScanError(std::uint64_t line, const std::string& message, std::string text)
      : std::runtime_error(message), line_(line), text_(std::move(text)) {}
  std::uint64_t line() const { return line_; }
  const std::string& text() const { return text_; }

 private:
  std::uint64_t line_;
  std::string text_;
};

// What an opcode means for the features (see opcodes.py: width from the first numeric
// modifier, as the simulator's get_datawidth_from_opcode).
struct OpInfo {
  MemClass mem_class = kNone;
  std::uint64_t width = 4;  // bytes per lane
  bool control_flow = false;
};

// The features of one launch, laid out as simsample_accelsim.kernelfeatures.LaunchFeatures:
// blocks sorted by (start PC, length); warp types in order of first appearance, each row's
// columns ascending (indices into the sorted blocks).
struct Result {
  std::array<std::int64_t, kNumCounters> counts{};
  std::vector<std::int64_t> bbv_keys;  // start PC, length; flattened pairs
  std::vector<std::int64_t> bbv_values;
  std::vector<std::int64_t> types_indptr;
  std::vector<std::int64_t> types_indices;
  std::vector<std::int64_t> types_data;
  std::vector<std::int64_t> type_counts;
  // The footprint (empty unless Config::record_lines): sorted line numbers (address >> 7).
  std::vector<std::uint64_t> line_reads;
  std::vector<std::int64_t> line_read_counts;  // warp-level loads of each read line
  std::vector<std::uint64_t> line_writes;
};

// Classification of one opcode against a configuration's tables (exposed for tests).
OpInfo classify(const Config& config, const char* begin, const char* end);

class Scanner {
 public:
  explicit Scanner(Config config);

  // Scan the next piece of the body. Throws ScanError on a malformed line; the scanner must
  // not be used after that.
  void feed(const char* data, std::size_t size);

  // End of the body: scans a last line without a newline, checks that no thread block is left
  // open, and returns the features. Throws ScanError.
  Result finish();

 private:
  struct Block {  // one block execution, or (after merging) one block of a warp's vector
    std::uint64_t pc;
    std::uint64_t len;
    std::uint64_t count;  // instructions executed in this block
  };
  struct WarpType {
    std::uint64_t hash;
    std::size_t begin;  // into type_blocks_
    std::size_t size;
    std::int64_t warps;
    std::int64_t next;  // next type with the same hash, -1 at the end
  };
  struct OpSlot {
    std::uint64_t hash = 0;
    std::uint64_t key[2] = {0, 0};  // the first 16 bytes of the text, zero-padded
    std::uint32_t offset = 0;       // into op_text_ (texts longer than 16 bytes only)
    std::uint32_t length = 0;
    bool used = false;
    OpInfo info;
  };

  void line(const char* begin, const char* end);
  void instruction(const char* first, const char* begin, const char* end);  // first: its first field
  void end_warp(const char* begin, const char* end);
  OpInfo opcode(const char* begin, const char* end, const std::uint64_t key[2]);
  void grow_opcode_table();
  std::uint64_t sectors(std::size_t lanes, std::uint64_t width);
  void touch(std::size_t lanes, std::uint64_t width, bool load);
  [[noreturn]] void fail(const char* begin, const char* end, const std::string& message) const;

  Config config_;
  std::uint64_t warps_per_cta_;
  std::array<std::int64_t, kNumCounters> counts_{};
  std::uint64_t line_no_;
  std::string carry_;  // a line cut by the end of the previous chunk

  // thread block and warp state
  bool in_block_ = false;
  bool in_warp_ = false;
  bool insts_seen_ = false;
  std::uint64_t warp_id_ = 0;
  std::uint64_t declared_ = 0;  // the warp's "insts = K"
  std::uint64_t executed_ = 0;  // its instruction lines so far
  std::uint64_t block_pc_ = 0;  // the open block: start PC, length; last PC and opcode
  std::uint64_t block_len_ = 0;
  std::uint64_t last_pc_ = 0;
  bool last_cf_ = false;
  std::vector<Block> row_;  // block executions of the current warp

  // warp types: rows stored back to back, a hash chain per distinct row hash
  std::vector<WarpType> types_;
  std::vector<Block> type_blocks_;
  std::unordered_map<std::uint64_t, std::int64_t> type_head_;

  // opcode cache: open addressing over the opcode text, classified once per distinct text
  std::vector<OpSlot> op_slots_;
  std::size_t op_used_ = 0;
  std::string op_text_;

  // per-lane addresses and sector ids of the current instruction
  std::array<std::uint64_t, 32> addr_{};
  std::array<std::uint64_t, 64> sect_{};

  // the footprint (Config::record_lines)
  LineTable reads_;
  LineTable writes_;
  std::vector<std::uint64_t> inst_lines_;  // lines of the current instruction
};

}  // namespace trace_scan
}  // namespace simsample

#endif  // SIMSAMPLE_TRACE_SCANNER_HPP
