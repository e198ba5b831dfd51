// Accel-Sim trace body scanner (see trace_scanner.hpp for what it computes and why this way).
#include "trace_scanner.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace simsample {
namespace trace_scan {

const char* const kCounterNames[kNumCounters] = {
    "ctas",         "warps",       "warp_insts",        "thread_insts",      "global_ld",
    "global_st",    "local_ld",    "local_st",          "shared_ld",         "shared_st",
    "global_atom",  "global_red",  "shared_atom",       "sectors_global_ld", "sectors_global_st",
    "sectors_local_ld", "sectors_local_st", "control_flow",
};

namespace {

// Python's bytes.split() separators: a line the tracer wrote with single spaces and one edited
// by hand (tabs, CRLF, runs of spaces) must give the same tokens, as they do in the simulator's
// stream extraction.
struct CharTables {
  bool space[256];
  std::uint8_t hex[256];  // digit value, or 0xFF
  CharTables() : space(), hex() {
    for (int c = 0; c < 256; ++c) hex[c] = 0xFF;
    for (int c = '0'; c <= '9'; ++c) hex[c] = static_cast<std::uint8_t>(c - '0');
    for (int c = 'a'; c <= 'f'; ++c) hex[c] = static_cast<std::uint8_t>(c - 'a' + 10);
    for (int c = 'A'; c <= 'F'; ++c) hex[c] = static_cast<std::uint8_t>(c - 'A' + 10);
    for (char c : {' ', '\t', '\r', '\v', '\f', '\n'}) space[static_cast<unsigned char>(c)] = true;
  }
};
const CharTables kChars;

inline bool is_space(char c) { return kChars.space[static_cast<unsigned char>(c)]; }
inline unsigned hex_digit(char c) { return kChars.hex[static_cast<unsigned char>(c)]; }
inline unsigned dec_digit(char c) { return static_cast<unsigned>(static_cast<unsigned char>(c)) - '0'; }

// Without -mpopcnt (portable wheels) the compiler's builtin is a library call; this is inline.
inline int popcount32(std::uint64_t mask) {
  auto x = static_cast<std::uint32_t>(mask);
  x = x - ((x >> 1) & 0x55555555u);
  x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
  x = (x + (x >> 4)) & 0x0F0F0F0Fu;
  return static_cast<int>((x * 0x01010101u) >> 24);
}

inline int ctz64(std::uint64_t x) {  // x != 0
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_ctzll(x);
#else
  int n = 0;
  for (; !(x & 1); x >>= 1) ++n;
  return n;
#endif
}

inline std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

#if (defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) || defined(_MSC_VER)
#define SIMSAMPLE_TRACE_SCAN_SWAR 1
// Eight ASCII hex digits loaded little-endian (first digit in the lowest byte) -> their value,
// all eight decoded at once; false if any byte is not a hex digit. Addresses are most of a
// memory-bound trace's bytes, and the tracer writes them as 16 digits.
inline bool hex8(std::uint64_t v, std::uint32_t& out) {
  const std::uint64_t v7 = v & 0x7F7F7F7F7F7F7F7Full;
  const std::uint64_t digit = (v7 + 0x5050505050505050ull) & ~(v7 + 0x4646464646464646ull);     // '0'..'9'
  const std::uint64_t low = v7 | 0x2020202020202020ull;
  const std::uint64_t alpha = (low + 0x1F1F1F1F1F1F1F1Full) & ~(low + 0x1919191919191919ull);  // a..f, A..F
  if (((digit | alpha) & ~v & 0x8080808080808080ull) != 0x8080808080808080ull) return false;
  std::uint64_t x = (v & 0x0F0F0F0F0F0F0F0Full) + 9 * ((v >> 6) & 0x0101010101010101ull);  // nibbles
  x = ((x & 0x000F000F000F000Full) << 4) | ((x >> 8) & 0x000F000F000F000Full);
  x = ((x & 0x000000FF000000FFull) << 8) | ((x >> 16) & 0x000000FF000000FFull);
  out = static_cast<std::uint32_t>(((x & 0xFFFF) << 16) | ((x >> 32) & 0xFFFF));
  return true;
}
#endif

inline bool equals(const char* b, const char* e, const char* word) {
  const std::size_t n = std::strlen(word);
  return static_cast<std::size_t>(e - b) == n && std::memcmp(b, word, n) == 0;
}

enum class Parsed { kOk, kMissing, kBad };

// Whitespace-separated fields of one line, decoded in place: the bytes of a field are read once,
// by the number parser itself.
class Fields {
 public:
  Fields(const char* begin, const char* end) : p_(begin), e_(end) {}

  bool token(const char*& b, const char*& t) {
    while (p_ < e_ && is_space(*p_)) ++p_;
    if (p_ == e_) return false;
    b = p_;
    while (p_ < e_ && !is_space(*p_)) ++p_;
    t = p_;
    return true;
  }

  bool skip() {
    const char *b, *t;
    return token(b, t);
  }

  // A token and its first 16 bytes packed into two words: the opcode cache compares those
  // instead of the text (opcodes are rarely longer).
  bool token_key(const char*& b, const char*& t, std::uint64_t key[2]) {
    while (p_ < e_ && is_space(*p_)) ++p_;
    if (p_ == e_) return false;
    b = p_;
    key[0] = key[1] = 0;
    for (unsigned n = 0; p_ < e_ && !is_space(*p_); ++p_, ++n)
      if (n < 16) key[n >> 3] |= std::uint64_t{static_cast<unsigned char>(*p_)} << (8 * (n & 7));
    t = p_;
    return true;
  }

  // Up to 64 bits of hex digits, with an optional 0x prefix (as Python's int(text, 16)).
  Parsed hex(std::uint64_t& out) {
    while (p_ < e_ && is_space(*p_)) ++p_;
    if (p_ == e_) return Parsed::kMissing;
    if (e_ - p_ > 2 && p_[0] == '0' && (p_[1] | 0x20) == 'x') p_ += 2;
#ifdef SIMSAMPLE_TRACE_SCAN_SWAR
    // Tokens of exactly 16 digits (addresses) or 8 (active masks) are decoded as words.
    const std::ptrdiff_t left = e_ - p_;
    const bool ends16 = left == 16 || (left > 16 && is_space(p_[16]));
    const bool ends8 = left == 8 || (left > 8 && is_space(p_[8]));
    if (ends16 || ends8) {
      std::uint64_t w[2];
      std::uint32_t hi, lo;
      std::memcpy(w, p_, ends16 ? 16 : 8);
      if (ends16 && hex8(w[0], hi) && hex8(w[1], lo)) {
        p_ += 16;
        out = (std::uint64_t{hi} << 32) | lo;
        return Parsed::kOk;
      }
      if (ends8 && hex8(w[0], lo)) {
        p_ += 8;
        out = lo;
        return Parsed::kOk;
      }
    }  // other lengths, and anything malformed, digit by digit below
#endif
    const char* start = p_;
    std::uint64_t v = 0;
    for (unsigned d; p_ < e_ && (d = hex_digit(*p_)) < 16; ++p_) {
      if (v >> 60) return Parsed::kBad;  // more than 64 bits
      v = (v << 4) | d;
    }
    if (p_ == start || (p_ < e_ && !is_space(*p_))) return Parsed::kBad;
    out = v;
    return Parsed::kOk;
  }

  // A decimal integer with an optional sign (signed) or none (unsigned), as Python's int(text).
  Parsed dec(std::int64_t& out, bool allow_sign = true) {
    while (p_ < e_ && is_space(*p_)) ++p_;
    if (p_ == e_) return Parsed::kMissing;
    bool negative = false;
    if (allow_sign && (*p_ == '-' || *p_ == '+')) negative = *p_++ == '-';
    const char* start = p_;
    std::uint64_t v = 0;
    for (unsigned d; p_ < e_ && (d = dec_digit(*p_)) < 10; ++p_) {
      if (v > 922337203685477579ull) return Parsed::kBad;  // beyond int64
      v = v * 10 + d;
    }
    if (p_ == start || (p_ < e_ && !is_space(*p_))) return Parsed::kBad;
    out = negative ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
    return Parsed::kOk;
  }

 private:
  const char* p_;
  const char* e_;
};

// The last field of a line ("warp = 3", "insts = 12") as an unsigned number.
bool last_number(const char* b, const char* e, std::uint64_t& out) {
  while (e > b && is_space(e[-1])) --e;
  const char* s = e;
  while (s > b && !is_space(s[-1])) --s;
  std::int64_t v = 0;
  Fields f(s, e);
  if (f.dec(v, false) != Parsed::kOk) return false;
  out = static_cast<std::uint64_t>(v);
  return true;
}

// The simulator resolves a generic LD/ST from its first active lane's address (opcodes.py).
MemClass resolve_generic(std::uint64_t first, bool load, std::uint64_t shmem_base, std::uint64_t local_base) {
  const MemClass shared = load ? kSharedLd : kSharedSt;
  if (shmem_base == 0 || local_base == 0) return shared;
  if (first >= shmem_base && first < local_base) return shared;
  if (first >= local_base && first - local_base < kLocalMemSizeMax) return load ? kLocalLd : kLocalSt;
  return load ? kGlobalLd : kGlobalSt;
}

// Where each memory class is counted: instruction counter, sector counter (or -1).
constexpr int kInstCounter[kNumMemClasses] = {
    -1, kGlobalLdInsts, kGlobalStInsts, kLocalLdInsts, kLocalStInsts, kSharedLdInsts,
    kSharedStInsts, kGlobalAtomInsts, kGlobalRedInsts, kSharedAtomInsts, -1, -1,
};
constexpr int kSectorCounter[kNumMemClasses] = {
    -1, kSectorsGlobalLd, kSectorsGlobalSt, kSectorsLocalLd, kSectorsLocalSt, -1, -1, -1, -1, -1, -1, -1,
};

}  // namespace

OpInfo classify(const Config& config, const char* begin, const char* end) {
  OpInfo info;
  const char* dot = std::find(begin, end, '.');
  const std::string base(begin, dot);
  const auto it = config.classes.find(base);
  if (it != config.classes.end()) info.mem_class = it->second;
  info.control_flow = std::find(config.control_flow.begin(), config.control_flow.end(), base) != config.control_flow.end();
  // Width: the first '.'-separated part that is a number of bits, or U<bits>; else 4 bytes.
  for (const char* p = begin; p < end;) {
    const char* q = std::find(p, end, '.');
    const char* digits = (q - p >= 2 && *p == 'U') ? p + 1 : p;
    if (q > digits && std::all_of(digits, q, [](char c) { return dec_digit(c) < 10; })) {
      std::uint64_t bits = 0;
      for (const char* d = digits; d < q; ++d) bits = std::min<std::uint64_t>(bits * 10 + dec_digit(*d), std::uint64_t{1} << 40);
      info.width = bits / 8;
      break;
    }
    p = q + (q < end);
  }
  return info;
}

Scanner::Scanner(Config config)
    : config_(std::move(config)),
      warps_per_cta_((config_.block_threads + 31) / 32),
      line_no_(config_.first_line),
      op_slots_(256) {}

void Scanner::fail(const char* begin, const char* end, const std::string& message) const {
  const std::size_t n = static_cast<std::size_t>(end - begin);
  throw ScanError(line_no_, message, std::string(begin, std::min<std::size_t>(n, 80)));
}

void Scanner::feed(const char* data, std::size_t size) {
  const char* p = data;
  const char* const end = data + size;
  if (!carry_.empty()) {  // complete the line cut by the previous chunk
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', size));
    if (nl == nullptr) {
      carry_.append(p, size);
      return;
    }
    carry_.append(p, static_cast<std::size_t>(nl - p));
    line(carry_.data(), carry_.data() + carry_.size());
    ++line_no_;
    carry_.clear();
    p = nl + 1;
  }
  while (p < end) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
    if (nl == nullptr) {
      carry_.assign(p, static_cast<std::size_t>(end - p));
      return;
    }
    line(p, nl);
    ++line_no_;
    p = nl + 1;
  }
}

void Scanner::line(const char* b, const char* e) {
  Fields f(b, e);
  const char *w0, *w0e;
  if (!f.token(w0, w0e)) return;  // blank lines separate blocks and warps
  if (*w0 == '#') {
    if (equals(w0, w0e, "#BEGIN_TB")) {
      if (in_block_) fail(b, e, "#BEGIN_TB before the previous thread block's #END_TB");
      in_block_ = true;
      return;
    }
    if (equals(w0, w0e, "#END_TB")) {
      if (!in_block_) fail(b, e, "#END_TB without #BEGIN_TB");
      end_warp(b, e);
      in_block_ = false;
      ++counts_[kCtas];
      return;
    }
  }
  if (!in_block_) fail(b, e, "line outside a thread block");
  switch (*w0) {
    case 't': {
      const char *w1, *w1e;
      if (equals(w0, w0e, "thread") && f.token(w1, w1e) && equals(w1, w1e, "block")) return;
      break;
    }
    case 'w':
      if (equals(w0, w0e, "warp")) {
        end_warp(b, e);
        std::uint64_t id;
        if (!last_number(b, e, id)) fail(b, e, "malformed warp line (expected 'warp = <id>')");
        if (id >= warps_per_cta_)
          fail(b, e, "warp " + std::to_string(id) + " does not exist in a block of " + std::to_string(config_.block_threads) + " threads");
        in_warp_ = true;
        insts_seen_ = false;
        warp_id_ = id;
        declared_ = executed_ = 0;
        return;
      }
      break;
    case 'i':
      if (equals(w0, w0e, "insts")) {
        if (!in_warp_) fail(b, e, "insts line before any warp line");
        // The simulator sizes the warp's instruction vector here: a second one would reset it.
        if (insts_seen_) fail(b, e, "a warp has more than one 'insts =' line");
        if (!last_number(b, e, declared_)) fail(b, e, "malformed insts line (expected 'insts = <count>')");
        insts_seen_ = true;
        return;
      }
      break;
    case '#':
      fail(b, e, "unexpected line");
    default:
      break;
  }
  if (!in_warp_) fail(b, e, "instruction line before any warp line");
  if (!insts_seen_) fail(b, e, "instruction line before its warp's 'insts =' line");
  instruction(w0, b, e);
}

void Scanner::instruction(const char* first, const char* b, const char* e) {
  static const char* const kTooFew = "malformed instruction line (too few fields)";
  Fields f(first, e);
  // A field's value, or the line's error saying whether it is missing or malformed.
  const auto expect = [&](Parsed r, const char* missing, const char* malformed) {
    if (r == Parsed::kMissing) fail(b, e, missing);
    if (r == Parsed::kBad) fail(b, e, malformed);
  };
  for (unsigned i = 0; i < config_.skip_tokens; ++i)
    if (!f.skip()) fail(b, e, kTooFew);
  std::uint64_t pc = 0, mask = 0;
  std::int64_t ndst = 0, nsrc = 0, mem_width = 0;
  expect(f.hex(pc), kTooFew, "malformed PC (not hexadecimal)");
  expect(f.hex(mask), kTooFew, "malformed active mask (not hexadecimal)");
  if (mask >> 32) fail(b, e, "active mask wider than the 32 lanes of a warp");
  expect(f.dec(ndst, false), kTooFew, "malformed destination count");
  for (std::int64_t i = 0; i < ndst; ++i)
    if (!f.skip()) fail(b, e, kTooFew);
  const char *op, *ope;
  std::uint64_t key[2];
  if (!f.token_key(op, ope, key)) fail(b, e, kTooFew);
  expect(f.dec(nsrc, false), kTooFew, "malformed source count");
  for (std::int64_t i = 0; i < nsrc; ++i)
    if (!f.skip()) fail(b, e, kTooFew);
  expect(f.dec(mem_width), "malformed instruction line (no memory width)", "malformed memory width");
  const OpInfo info = opcode(op, ope, key);
  const int lanes = popcount32(mask);

  ++counts_[kWarpInsts];
  counts_[kThreadInsts] += lanes;
  counts_[kControlFlow] += info.control_flow;

  // Basic blocks end after a control-flow opcode and before a PC that does not follow the last.
  if (executed_ == 0) {
    block_pc_ = pc;
    block_len_ = 1;
  } else {
    std::uint64_t next = last_pc_ + 16;  // Volta and later: 16-byte instructions
    const int bv = config_.binary_version;
    if (bv != 0 && bv < 70) {  // 8-byte instructions after a control word every 32 (64) bytes
      next = last_pc_ + 8;
      if (next % (bv >= 50 ? 32 : 64) == 0) next += 8;
    }
    if (last_cf_ || pc != next) {
      row_.push_back({block_pc_, block_len_, block_len_});
      block_pc_ = pc;
      block_len_ = 1;
    } else {
      ++block_len_;
    }
  }
  last_pc_ = pc;
  last_cf_ = info.control_flow;
  ++executed_;

  MemClass cls = info.mem_class;
  if (cls == kNone) return;
  // Addresses matter for sectors and for resolving generic accesses; atomics and shared
  // accesses skip them (as the numpy engine does).
  const bool addressed = cls <= kLocalSt || cls == kGenericLd || cls == kGenericSt;
  std::size_t n = 0;  // lanes with decoded addresses
  if (addressed && mem_width > 0 && lanes > 0) {
    std::int64_t mode = 0, step = 0;
    std::uint64_t base = 0;
    expect(f.dec(mode), "malformed instruction line (no address mode)", "malformed address mode");
    switch (mode) {
      case 0:  // one address per active lane
        for (int k = 0; k < lanes; ++k)
          expect(f.hex(addr_[k]), "fewer addresses than active lanes", "malformed address (not hexadecimal)");
        break;
      case 1: {  // base and stride; the simulator leaves 0 after the first gap in the mask
        expect(f.hex(base), "malformed instruction line (no base address)", "malformed base address (not hexadecimal)");
        expect(f.dec(step), "malformed instruction line (no stride)", "malformed stride");
        const int run = ctz64(~(mask >> ctz64(mask)));
        for (int k = 0; k < lanes; ++k)
          addr_[k] = k < run ? base + static_cast<std::uint64_t>(step) * static_cast<std::uint64_t>(k) : 0;
        break;
      }
      case 2:  // base, then the difference to the previous lane for each further active lane
        expect(f.hex(base), "malformed instruction line (no base address)", "malformed base address (not hexadecimal)");
        addr_[0] = base;
        for (int k = 1; k < lanes; ++k) {
          expect(f.dec(step), "fewer address deltas than active lanes", "malformed address delta");
          addr_[k] = addr_[k - 1] + static_cast<std::uint64_t>(step);
        }
        break;
      default:
        fail(b, e, "malformed instruction line (unknown address mode " + std::to_string(mode) + ", expected 0, 1 or 2)");
    }
    n = static_cast<std::size_t>(lanes);
  }
  if (cls == kGenericLd || cls == kGenericSt)
    cls = resolve_generic(n ? addr_[0] : 0, cls == kGenericLd, config_.shmem_base, config_.local_base);
  ++counts_[kInstCounter[cls]];
  if (kSectorCounter[cls] >= 0) counts_[kSectorCounter[cls]] += static_cast<std::int64_t>(sectors(n, info.width));
  if (config_.record_lines && n && (cls == kGlobalLd || cls == kGlobalSt)) touch(n, info.width, cls == kGlobalLd);
}

// The lines of every lane's access [a, a + width - 1] (scan_numpy's _touch): the lines from the
// first byte's to the last byte's; an access whose last line does not lie above its first (a zero
// width, or a wrap past 2**64) touches its first byte's line only.
void Scanner::touch(std::size_t lanes, std::uint64_t width, bool load) {
  inst_lines_.clear();
  bool sorted = true;
  for (std::size_t i = 0; i < lanes; ++i) {
    const std::uint64_t a = addr_[i];
    const std::uint64_t first = a >> kLineBits;
    const std::uint64_t last = (a + (width - 1)) >> kLineBits;
    const auto span = static_cast<std::int64_t>(last - first);
    const std::uint64_t n = span >= 1 ? std::min<std::uint64_t>(static_cast<std::uint64_t>(span) + 1, kMaxLinesPerAccess) : 1;
    if (!inst_lines_.empty() && first < inst_lines_.back()) sorted = false;
    for (std::uint64_t k = 0; k < n; ++k) inst_lines_.push_back(first + k);
  }
  if (!sorted) std::sort(inst_lines_.begin(), inst_lines_.end());
  LineTable& table = load ? reads_ : writes_;
  for (std::size_t i = 0; i < inst_lines_.size(); ++i)
    if (i == 0 || inst_lines_[i] != inst_lines_[i - 1]) table.add(inst_lines_[i], 1);
}

void LineTable::grow() {
  std::vector<std::uint64_t> keys(2 * keys_.size(), 0);
  std::vector<std::int64_t> counts(2 * keys_.size(), 0);
  const std::size_t mask = keys.size() - 1;
  for (std::size_t j = 0; j < keys_.size(); ++j) {
    if (keys_[j] == 0) continue;
    std::size_t i = slot(keys_[j]) & mask;
    while (keys[i] != 0) i = (i + 1) & mask;
    keys[i] = keys_[j];
    counts[i] = counts_[j];
  }
  keys_.swap(keys);
  counts_.swap(counts);
}

void LineTable::sorted(std::vector<std::uint64_t>& lines, std::vector<std::int64_t>& counts) const {
  std::vector<std::pair<std::uint64_t, std::int64_t>> pairs;
  pairs.reserve(used_);
  for (std::size_t j = 0; j < keys_.size(); ++j)
    if (keys_[j] != 0) pairs.emplace_back(keys_[j] - 1, counts_[j]);
  std::sort(pairs.begin(), pairs.end());
  lines.resize(pairs.size());
  counts.resize(pairs.size());
  for (std::size_t j = 0; j < pairs.size(); ++j) {
    lines[j] = pairs[j].first;
    counts[j] = pairs[j].second;
  }
}

// Distinct 32-byte sectors of the first and last byte of every lane's access (the reference's
// set semantics). Lanes usually come in address order, so the ids are usually sorted already
// and need no sort before counting the distinct ones.
std::uint64_t Scanner::sectors(std::size_t lanes, std::uint64_t width) {
  if (lanes == 0) return 0;
  // The reference computes the last byte without wrapping: past 2**64 its sector is 2**59 + x,
  // and for a zero width at address 0 it is -1. Both are kept distinct from every ordinary
  // sector id (< 2**59) here too, so that such accesses count as the reference counts them.
  constexpr std::uint64_t kBeyond = std::uint64_t{1} << 59;
  constexpr std::uint64_t kBelowZero = ~std::uint64_t{0};
  std::size_t k = 0;
  bool sorted = true;
  for (std::size_t i = 0; i < lanes; ++i) {
    const std::uint64_t a = addr_[i];
    const std::uint64_t lo = a >> 5;
    const std::uint64_t last = a + (width - 1);
    const std::uint64_t hi = width == 0 ? (a == 0 ? kBelowZero : (a - 1) >> 5) : last < a ? kBeyond + (last >> 5) : last >> 5;
    if (k && lo < sect_[k - 1]) sorted = false;
    sect_[k++] = lo;
    if (hi != lo) {
      if (hi < lo) sorted = false;
      sect_[k++] = hi;
    }
  }
  if (!sorted) std::sort(sect_.begin(), sect_.begin() + static_cast<std::ptrdiff_t>(k));
  std::uint64_t distinct = 1;
  for (std::size_t i = 1; i < k; ++i) distinct += sect_[i] != sect_[i - 1];
  return distinct;
}

void Scanner::end_warp(const char* b, const char* e) {
  if (!in_warp_) return;
  if (executed_ != declared_)
    fail(b, e, "warp " + std::to_string(warp_id_) + " declares insts = " + std::to_string(declared_) + " but has " +
                   std::to_string(executed_) + " instruction lines");
  if (executed_ > 0) row_.push_back({block_pc_, block_len_, block_len_});
  // The warp's block vector: executions of the same block (loops) merged, sorted by key.
  std::sort(row_.begin(), row_.end(), [](const Block& x, const Block& y) { return x.pc != y.pc ? x.pc < y.pc : x.len < y.len; });
  std::size_t m = 0;
  for (std::size_t i = 0; i < row_.size(); ++i) {
    if (m && row_[m - 1].pc == row_[i].pc && row_[m - 1].len == row_[i].len)
      row_[m - 1].count += row_[i].count;
    else
      row_[m++] = row_[i];
  }
  row_.resize(m);
  std::uint64_t h = 0x2545F4914F6CDD1Dull + m;
  for (const Block& blk : row_) h = mix(h ^ mix(blk.pc ^ mix(blk.len ^ mix(blk.count))));
  // Warp types compare the whole row, so that a hash collision never merges two types.
  const auto head = type_head_.find(h);
  std::int64_t t = head == type_head_.end() ? -1 : head->second;
  for (; t >= 0; t = types_[static_cast<std::size_t>(t)].next) {
    const WarpType& wt = types_[static_cast<std::size_t>(t)];
    if (wt.size == m && std::equal(row_.begin(), row_.end(), type_blocks_.begin() + static_cast<std::ptrdiff_t>(wt.begin),
                                   [](const Block& x, const Block& y) { return x.pc == y.pc && x.len == y.len && x.count == y.count; }))
      break;
  }
  if (t >= 0) {
    ++types_[static_cast<std::size_t>(t)].warps;
  } else {
    const std::int64_t next = head == type_head_.end() ? -1 : head->second;
    types_.push_back({h, type_blocks_.size(), m, 1, next});
    type_blocks_.insert(type_blocks_.end(), row_.begin(), row_.end());
    type_head_[h] = static_cast<std::int64_t>(types_.size() - 1);
  }
  ++counts_[kWarps];
  row_.clear();
  in_warp_ = false;
}

OpInfo Scanner::opcode(const char* b, const char* e, const std::uint64_t key[2]) {
  const auto length = static_cast<std::uint32_t>(e - b);
  const std::uint64_t h = mix(key[0] ^ mix(key[1] ^ mix(length)));
  std::size_t mask = op_slots_.size() - 1;
  std::size_t i = h & mask;
  for (; op_slots_[i].used; i = (i + 1) & mask) {
    const OpSlot& s = op_slots_[i];
    if (s.key[0] == key[0] && s.key[1] == key[1] && s.length == length &&
        (length <= 16 || std::memcmp(op_text_.data() + s.offset, b, length) == 0))
      return s.info;
  }
  // A new opcode text: classified once, then found by the probe above.
  if (2 * (op_used_ + 1) > op_slots_.size()) {
    grow_opcode_table();
    mask = op_slots_.size() - 1;
    for (i = h & mask; op_slots_[i].used; i = (i + 1) & mask) {
    }
  }
  OpSlot& s = op_slots_[i];
  s.used = true;
  s.hash = h;
  s.key[0] = key[0];
  s.key[1] = key[1];
  s.length = length;
  s.offset = static_cast<std::uint32_t>(op_text_.size());
  s.info = classify(config_, b, e);
  if (length > 16) op_text_.append(b, length);  // shorter ones are their key
  ++op_used_;
  return s.info;
}

void Scanner::grow_opcode_table() {
  std::vector<OpSlot> old(2 * op_slots_.size());
  old.swap(op_slots_);
  const std::size_t mask = op_slots_.size() - 1;
  for (const OpSlot& s : old) {
    if (!s.used) continue;
    std::size_t i = s.hash & mask;
    while (op_slots_[i].used) i = (i + 1) & mask;
    op_slots_[i] = s;
  }
}

Result Scanner::finish() {
  if (!carry_.empty()) {
    line(carry_.data(), carry_.data() + carry_.size());
    ++line_no_;
    carry_.clear();
  }
  if (in_block_) throw ScanError(0, "the trace ends inside a thread block (truncated)", "");

  Result r;
  r.counts = counts_;
  // Columns: the distinct blocks of all warp types, sorted by (start PC, length).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> keys;
  keys.reserve(type_blocks_.size());
  for (const Block& blk : type_blocks_) keys.emplace_back(blk.pc, blk.len);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  r.bbv_keys.reserve(2 * keys.size());
  for (const auto& k : keys) {
    r.bbv_keys.push_back(static_cast<std::int64_t>(k.first));
    r.bbv_keys.push_back(static_cast<std::int64_t>(k.second));
  }
  r.bbv_values.assign(keys.size(), 0);
  r.types_indptr.reserve(types_.size() + 1);
  r.types_indptr.push_back(0);
  r.types_indices.reserve(type_blocks_.size());
  r.types_data.reserve(type_blocks_.size());
  r.type_counts.reserve(types_.size());
  for (const WarpType& t : types_) {
    for (std::size_t j = t.begin; j < t.begin + t.size; ++j) {
      const Block& blk = type_blocks_[j];
      const auto col = static_cast<std::size_t>(
          std::lower_bound(keys.begin(), keys.end(), std::make_pair(blk.pc, blk.len)) - keys.begin());
      r.types_indices.push_back(static_cast<std::int64_t>(col));
      r.types_data.push_back(static_cast<std::int64_t>(blk.count));
      r.bbv_values[col] += t.warps * static_cast<std::int64_t>(blk.count);
    }
    r.types_indptr.push_back(static_cast<std::int64_t>(r.types_indices.size()));
    r.type_counts.push_back(t.warps);
  }
  if (config_.record_lines) {
    std::vector<std::int64_t> unused;
    reads_.sorted(r.line_reads, r.line_read_counts);
    writes_.sorted(r.line_writes, unused);
  }
  return r;
}

}  // namespace trace_scan
}  // namespace simsample
