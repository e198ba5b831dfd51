// Kernel events of a Kineto trace in one pass over the JSON text: see kineto_events.hpp.
//
// The walker follows the JSON grammar exactly as Python's json module accepts it (with its
// default strictness: no control characters inside strings, no trailing commas, no leading
// zeros), except that it also refuses what it cannot reproduce exactly (NaN/Infinity, lone
// surrogates in a kernel name, nesting deeper than kMaxDepth). Refusing is always safe: the
// caller then runs the Python paths. Refusal is an exception (Reject), thrown deep in the
// recursion and caught once in extract(); it costs nothing while the text is well formed.
//
// Cost model: every byte is looked at once (string contents sixteen bytes at a time with SSE2,
// else eight; digits and indentation eight at a time), nothing is allocated per event, a key
// costs one probe of a small table, and a kernel one hash-table probe for its name.
#include "kineto_events.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <mutex>
#include <system_error>
#include <thread>
#if defined(__SSE2__) && defined(__GNUC__)
#include <emmintrin.h>  // part of every x86-64 CPU: no -march flag needed
#define SIMSAMPLE_KINETO_SSE2 1
#endif
#include <unordered_map>
#include <utility>

// The token readers are small and called everywhere: inlined into the few functions that walk
// the structure (compilers otherwise give up inlining them once those grow).
#if defined(__GNUC__)
#define KINETO_HOT inline __attribute__((always_inline))
#define KINETO_OUTLINED __attribute__((noinline))
#else
#define KINETO_HOT inline
#define KINETO_OUTLINED
#endif

namespace simsample {
namespace kineto_events {
namespace {

// Thrown for anything the extractor does not take; extract() turns it into "nothing".
struct Reject {};

[[noreturn]] void reject() { throw Reject{}; }

// Thrown when a part of a split scan reaches an element start where a later part begins.
struct Stopped {
  std::size_t at;  // which of the stop points (see Parser::stop_at())
};

// Deeper nesting than this is refused (Python's json module would hit its recursion limit near
// 1000 levels; no trace comes close to either).
constexpr int kMaxDepth = 512;

constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
constexpr std::uint64_t kLows = 0x7F7F7F7F7F7F7F7FULL;

// The high bit of every zero byte of ``v`` (exact: no carry crosses a byte).
inline std::uint64_t zero_bytes(std::uint64_t v) { return ~(((v & kLows) + kLows) | v | kLows); }

// The high bit of every byte of ``v`` that ends or interrupts a plain run of string content: a
// quote, a backslash or a control character (below 0x20; exact, as (b & 0x7F) + 0x60 < 0x100).
inline std::uint64_t special_bytes(std::uint64_t v) {
  const std::uint64_t below_space = ~(((v & kLows) + kOnes * 0x60) | v) & kHighs;
  return zero_bytes(v ^ (kOnes * '"')) | zero_bytes(v ^ (kOnes * '\\')) | below_space;
}

inline bool special_byte(unsigned char c) { return c == '"' || c == '\\' || c < 0x20; }

// The index of the first flagged byte of a word loaded with memcpy, given the exact per-byte mask
// of zero_bytes() or special_bytes() (not zero): the masks are computed byte by byte, so the
// mask's bytes stand in memory order whatever the machine's byte order.
inline int first_flagged(std::uint64_t mask) {
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  return __builtin_ctzll(mask) >> 3;
#else
  unsigned char bytes[8];
  std::memcpy(bytes, &mask, 8);
  int i = 0;
  while ((bytes[i] & 0x80) == 0) ++i;
  return i;
#endif
}

// The first byte at or after ``p`` that ends or interrupts plain string content, or ``end``:
// sixteen bytes at a time with SSE2 where there is SSE2, else eight with the word masks above.
inline const char* skip_plain(const char* p, const char* end) {
#ifdef SIMSAMPLE_KINETO_SSE2
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i control = _mm_set1_epi8(0x1F);
  while (end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i below_space = _mm_cmpeq_epi8(_mm_max_epu8(v, control), control);
    const __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)), below_space);
    const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(hit));
    if (mask != 0) return p + __builtin_ctz(mask);
    p += 16;
  }
#endif
  while (end - p >= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    const std::uint64_t mask = special_bytes(word);
    if (mask != 0) return p + first_flagged(mask);
    p += 8;
  }
  while (p < end && !special_byte(static_cast<unsigned char>(*p))) ++p;
  return p;
}

inline bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The high bit of every byte of ``v`` that is not an ASCII digit (exact, as for special_bytes()).
inline std::uint64_t non_digits(std::uint64_t v) {
  const std::uint64_t low7 = v & kLows;
  const std::uint64_t from_zero = low7 + kOnes * (0x80 - '0');    // high bit: (b & 0x7F) >= '0'
  const std::uint64_t above_nine = low7 + kOnes * (0x7F - '9');   // high bit: (b & 0x7F) > '9'
  return (v | ~from_zero | above_nine) & kHighs;
}

// The end of the run of digits at ``p``, eight bytes at a time (no branch per digit).
inline const char* skip_digits(const char* p, const char* end) {
  while (end - p >= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    const std::uint64_t mask = non_digits(word);
    if (mask != 0) return p + first_flagged(mask);
    p += 8;
  }
  while (p < end && is_digit(*p)) ++p;
  return p;
}

inline int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A string's content between its quotes, as written (escapes not yet decoded).
struct Str {
  const char* begin = nullptr;
  const char* end = nullptr;
  bool escaped = false;
  std::string_view raw() const { return {begin, static_cast<std::size_t>(end - begin)}; }
};

// A JSON number as written: sign, integer digits, fraction digits (empty when there is no
// fraction: the grammar wants at least one digit after a '.'), and whether an exponent follows.
struct Number {
  bool negative = false;
  const char* int_begin = nullptr;
  const char* int_end = nullptr;
  const char* frac_begin = nullptr;
  const char* frac_end = nullptr;
  bool exponent = false;
};

// The magnitude of up to 19 decimal digits (2^63 has 19), or false when there are more.
bool magnitude(const char* begin, const char* end, std::uint64_t& out) {
  if (end - begin > 19) return false;
  std::uint64_t v = 0;
  for (const char* d = begin; d < end; ++d) v = v * 10 + static_cast<std::uint64_t>(*d - '0');
  out = v;
  return true;
}

constexpr std::uint64_t kInt64Max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());

// Signed value of a magnitude, or false when it does not fit int64.
bool signed_value(bool negative, std::uint64_t mag, std::int64_t& out) {
  if (negative) {
    if (mag > kInt64Max + 1) return false;
    out = mag == kInt64Max + 1 ? std::numeric_limits<std::int64_t>::min() : -static_cast<std::int64_t>(mag);
  } else {
    if (mag > kInt64Max) return false;
    out = static_cast<std::int64_t>(mag);
  }
  return true;
}

// A JSON integer (no fraction, no exponent) that fits int64, as Python's int would read it.
bool integer_value(const Number& n, std::int64_t& out) {
  std::uint64_t mag = 0;
  return !n.exponent && n.frac_begin == n.frac_end && magnitude(n.int_begin, n.int_end, mag) &&
         signed_value(n.negative, mag, out);
}

// Decimal microseconds → exact nanoseconds, as simsample.plugins.readers._kineto.decode._micros_to_ns
// does: integer part times 1000 plus the first four fraction digits (tenths of a nanosecond)
// rounded half up, subtracted for a negative number. False for an exponent or an overflow.
bool micros_to_ns(const Number& n, std::int64_t& out) {
  std::uint64_t whole = 0;
  if (n.exponent || !magnitude(n.int_begin, n.int_end, whole)) return false;
  std::uint64_t four = 0;
  const char* d = n.frac_begin;
  for (int i = 0; i < 4; ++i) four = four * 10 + (d < n.frac_end ? static_cast<std::uint64_t>(*d++ - '0') : 0);
  const std::uint64_t frac_ns = (four + 5) / 10;
  const std::uint64_t limit = n.negative ? kInt64Max + 1 : kInt64Max;
  if (whole > (limit - frac_ns) / 1000) return false;
  return signed_value(n.negative, whole * 1000 + frac_ns, out);
}

void append_utf8(std::uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::uint32_t hex4(const char* p) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 4) | static_cast<std::uint32_t>(hex_value(p[i]));
  return v;
}

// The value of a string whose escapes were validated by Parser::string(), as UTF-8. A surrogate
// pair becomes one character; a lone surrogate (which Python would keep, but UTF-8 cannot hold)
// is refused.
void unescape(const Str& s, std::string& out) {
  out.clear();
  const char* p = s.begin;
  while (p < s.end) {
    const char* slash = static_cast<const char*>(std::memchr(p, '\\', static_cast<std::size_t>(s.end - p)));
    if (slash == nullptr) {
      out.append(p, s.end);
      return;
    }
    out.append(p, slash);
    p = slash + 1;
    switch (*p++) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      default: {  // 'u' and four hex digits
        std::uint32_t cp = hex4(p);
        p += 4;
        if (cp >= 0xDC00 && cp <= 0xDFFF) reject();
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          if (s.end - p < 6 || p[0] != '\\' || p[1] != 'u') reject();
          const std::uint32_t low = hex4(p + 2);
          if (low < 0xDC00 || low > 0xDFFF) reject();
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          p += 6;
        }
        append_utf8(cp, out);
      }
    }
  }
}

// The category of an event, as far as launches are concerned.
enum class Category { kAbsent, kKernel, kMemcpy, kOther };

// A few known keys, told apart from any other key with one probe of a small table (on the
// length, first and last byte) and then one comparison, however many keys there are: most keys
// of an event or of its args are none of them, and a chain of comparisons costs branches.
class KeySet {
 public:
  explicit KeySet(std::vector<std::string> keys) : keys_(std::move(keys)), next_(keys_.size(), -1) {
    first_.fill(-1);
    for (int i = static_cast<int>(keys_.size()) - 1; i >= 0; --i) {
      const std::size_t s = slot(keys_[static_cast<std::size_t>(i)]);
      next_[static_cast<std::size_t>(i)] = first_[s];
      first_[s] = i;
    }
  }

  // The index of ``key`` in the list given, or -1.
  KINETO_HOT int find(std::string_view key) const {
    for (int i = first_[slot(key)]; i >= 0; i = next_[static_cast<std::size_t>(i)]) {
      const std::string& known = keys_[static_cast<std::size_t>(i)];
      if (known.size() == key.size() && same_bytes(known.data(), key.data(), key.size())) return i;
    }
    return -1;
  }

 private:
  // Short keys compared eight bytes at a time, without a call to memcmp.
  static bool same_bytes(const char* a, const char* b, std::size_t n) {
    for (; n >= 8; n -= 8, a += 8, b += 8) {
      std::uint64_t x;
      std::uint64_t y;
      std::memcpy(&x, a, 8);
      std::memcpy(&y, b, 8);
      if (x != y) return false;
    }
    for (; n > 0; --n)
      if (*a++ != *b++) return false;
    return true;
  }

  static std::size_t slot(std::string_view key) {
    if (key.empty()) return 0;
    return (key.size() * 7 + static_cast<unsigned char>(key.front()) * 3u + static_cast<unsigned char>(key.back())) & 255u;
  }

  std::vector<std::string> keys_;
  std::vector<int> next_;
  std::array<int, 256> first_{};
};

// Keys of an event that are read, in the order of KeySet event_keys_; a second occurrence of any
// of them is refused (Python keeps the last one, which the extractor does not bother to reproduce).
enum EventKey : int { kCat, kPh, kName, kTs, kDur, kArgs };
// Keys of the args read before Request::fields, in the order of KeySet args_keys_.
enum ArgsKey : int { kGrid, kBlock, kFirstField };

// A time (ts or dur) as far as it was read: present, and usable (a decimal number that fits).
struct Time {
  bool present = false;
  bool ok = false;
  std::int64_t ns = 0;
};

// The args of the event being read (reused from event to event: no allocation per event).
struct Args {
  bool present = false;
  bool ok = true;  // an object with a three-integer grid and block and integer optional fields
  bool has_grid = false;
  bool has_block = false;
  std::array<std::int64_t, 3> grid{};
  std::array<std::int64_t, 3> block{};
  std::vector<std::int64_t> values;  // per Request::fields
  std::vector<char> has;             // per Request::fields

  void reset() {
    present = has_grid = has_block = false;
    ok = true;
    std::fill(has.begin(), has.end(), 0);
  }
};

// A hash of names as written (hashed once per kernel: the byte-at-a-time std::hash shows), eight
// bytes per step; any mixing that spreads the bits does, as equal names are compared in full.
struct NameHash {
  std::size_t operator()(std::string_view s) const {
    constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ULL;
    std::uint64_t h = s.size() * kMul;
    const char* p = s.data();
    std::size_t n = s.size();
    for (; n >= 8; n -= 8, p += 8) {
      std::uint64_t word;
      std::memcpy(&word, p, 8);
      h = (h ^ word) * kMul;
      h ^= h >> 29;
    }
    std::uint64_t tail = 0;
    if (n > 0) std::memcpy(&tail, p, n);  // (an absent name has no data pointer at all)
    h = (h ^ tail) * kMul;
    return static_cast<std::size_t>(h ^ (h >> 32));
  }
};

std::vector<std::string> with_first(std::string first, const std::vector<std::string>& rest) {
  std::vector<std::string> keys{std::move(first)};
  keys.insert(keys.end(), rest.begin(), rest.end());
  return keys;
}

std::vector<std::string> args_key_list(const Request& request) {
  std::vector<std::string> keys{"grid", "block"};
  for (const OptionalField& f : request.fields) keys.push_back(f.key);
  return keys;
}

class Parser {
 public:
  Parser(std::string_view data, const Request& request, Kernels& out)
      : p_(data.data()),
        end_(data.data() + data.size()),
        request_(request),
        out_(out),
        top_keys_(with_first("traceEvents", request.meta_keys)),
        event_keys_({"cat", "ph", "name", "ts", "dur", "args"}),
        args_keys_(args_key_list(request)),
        meta_seen_(request.meta_keys.size(), 0),
        stop_(end_),
        stops_begin_(nullptr),
        stops_(nullptr),
        stops_end_(nullptr) {
    args_.values.assign(request.fields.size(), 0);
    args_.has.assign(request.fields.size(), 0);
    out_.fields.assign(request.fields.size(), {});
    out_.fields_present.assign(request.fields.size(), 0);
    out_.meta.assign(request.meta_keys.size(), {});
  }

  // The whole text: one object holding "traceEvents", and nothing but whitespace after it. With
  // stop points (see stop_at()), the scan ends at the first that is an element start (Stopped).
  void document() {
    ws();
    if (peek() != '{') reject();
    ++p_;
    ws();
    if (peek() == '}') reject();  // no traceEvents
    member();
    rest_of_document();
  }

  // The rest of the text from ``at``, which is taken for the start of an element of the
  // traceEvents array: what a scan of the whole text does from there if it is one (the caller
  // uses the result only once the previous part has confirmed it, by stopping exactly there).
  void resume(const char* at) {
    p_ = at;
    events_seen_ = true;
    element_loop();
    rest_of_document();
  }

  // Ends the scan at the first of the points [first, last) (increasing, after where the scan
  // begins) where an element of the traceEvents array starts (Stopped, with its index). A point
  // passed by (not an element start: a '{' inside a string or a nested value, or after the array)
  // is skipped; past them all, the scan goes on to the end of the text.
  void stop_at(const char* const* first, const char* const* last) {
    stops_begin_ = stops_ = first;
    stops_end_ = last;
    stop_ = first != last ? *first : end_;
  }

 private:
  // One member (key: value) of the top-level object at p_.
  void member() {
    const std::string_view key = key_text(string());
    ws();
    expect(':');
    ws();
    const int found = top_keys_.find(key);
    if (found == 0) {
      if (events_seen_ || peek() != '[') reject();
      events_seen_ = true;
      events();
    } else {
      const char* begin = p_;
      skip_value(1);
      if (found > 0) {
        const std::size_t i = static_cast<std::size_t>(found - 1);
        if (meta_seen_[i]) reject();
        meta_seen_[i] = 1;
        out_.meta[i] = std::string_view(begin, static_cast<std::size_t>(p_ - begin));
      }
    }
  }

  // After a member of the top-level object: the other members, then only whitespace.
  void rest_of_document() {
    while (another('}')) member();
    ws();
    if (p_ != end_ || !events_seen_) reject();
  }

 private:
  const char* p_;
  const char* end_;
  const Request& request_;
  Kernels& out_;
  KeySet top_keys_;    // "traceEvents", then Request::meta_keys
  KeySet event_keys_;  // in EventKey order
  KeySet args_keys_;   // in ArgsKey order, then Request::fields
  Args args_;
  std::string scratch_;  // unescaped keys and categories
  std::string name_text_;
  std::unordered_map<std::string_view, std::int32_t, NameHash> code_of_raw_;  // name as written → code
  std::unordered_map<std::string, std::int32_t> code_of_text_;       // name unescaped → code
  bool events_seen_ = false;
  std::vector<char> meta_seen_;  // per Request::meta_keys
  const char* stop_;             // the next stop point (see stop_at()); end_ for none
  const char* const* stops_begin_;
  const char* const* stops_;  // the stop point in stop_
  const char* const* stops_end_;

  // Whitespace at p_. (The hot loops work on a local copy of p_: a member written through every
  // step would not stay in a register.)
  KINETO_HOT void ws() {
    const char* p = p_;
    if (end_ - p >= 2) {
      const unsigned char c = static_cast<unsigned char>(*p);
      if (c > ' ') return;  // none: the usual case
      if (c == ' ' && static_cast<unsigned char>(p[1]) > ' ') {  // one space, as after ',' and ':'
        p_ = p + 1;
        return;
      }
    }
    p_ = whitespace_run(p, end_);
  }

  // The end of a longer run of whitespace (indentation: spaces are skipped eight at a time).
  static const char* whitespace_run(const char* p, const char* end) {
    for (;;) {
      if (end - p >= 8) {
        std::uint64_t word;
        std::memcpy(&word, p, 8);
        const std::uint64_t not_space = ~zero_bytes(word ^ (kOnes * ' ')) & kHighs;
        if (not_space == 0) {
          p += 8;
          continue;
        }
        p += first_flagged(not_space);
      } else {
        while (p < end && *p == ' ') ++p;
      }
      if (p < end && is_ws(*p)) {
        ++p;
        continue;
      }
      return p;
    }
  }

  KINETO_HOT char peek() const {
    if (p_ >= end_) reject();
    return *p_;
  }

  KINETO_HOT void expect(char c) {
    if (p_ >= end_ || *p_ != c) reject();
    ++p_;
  }

  // After a member of an object or an element of an array: true past a ',' (another one
  // follows), false past the closing `close`; anything else rejects the text.
  KINETO_HOT bool another(char close) {
    ws();
    if (peek() == ',') {
      ++p_;
      ws();
      return true;
    }
    expect(close);
    return false;
  }

  // A string at p_ (which must be a quote): validated (escapes, no control characters) and
  // skipped, its content returned as written.
  KINETO_HOT Str string() {
    if (peek() != '"') reject();
    Str s;
    const char* p = p_ + 1;
    const char* const end = end_;
    s.begin = p;
    for (;;) {
      p = skip_plain(p, end);
      if (p >= end) reject();
      const unsigned char c = static_cast<unsigned char>(*p);
      if (c == '"') {
        s.end = p;
        p_ = p + 1;
        return s;
      }
      if (c != '\\') reject();  // a control character
      s.escaped = true;
      if (end - p < 2) reject();
      switch (p[1]) {
        case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
          p += 2;
          break;
        case 'u':
          if (end - p < 6) reject();
          for (int i = 2; i < 6; ++i)
            if (hex_value(p[i]) < 0) reject();
          p += 6;
          break;
        default:
          reject();
      }
    }
  }

  // A key (or category) as text: the raw content, or its unescaped value in scratch_.
  KINETO_HOT std::string_view key_text(const Str& s) {
    if (!s.escaped) return s.raw();
    unescape(s, scratch_);
    return scratch_;
  }

  KINETO_HOT Number number() {
    Number n;
    const char* p = p_;
    const char* const end = end_;
    if (p < end && *p == '-') {
      n.negative = true;
      ++p;
    }
    n.int_begin = p;
    if (p < end && *p == '0') {
      ++p;
    } else if (p < end && is_digit(*p)) {
      p = skip_digits(p + 1, end);
    } else {
      reject();
    }
    n.int_end = n.frac_begin = n.frac_end = p;
    if (p < end && *p == '.') {
      n.frac_begin = ++p;
      if (p >= end || !is_digit(*p)) reject();
      p = skip_digits(p + 1, end);
      n.frac_end = p;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
      n.exponent = true;
      ++p;
      if (p < end && (*p == '+' || *p == '-')) ++p;
      if (p >= end || !is_digit(*p)) reject();
      p = skip_digits(p + 1, end);
    }
    p_ = p;
    return n;
  }

  bool at_number() const { return p_ < end_ && (*p_ == '-' || is_digit(*p_)); }

  void literal(const char* word, std::size_t size) {
    if (static_cast<std::size_t>(end_ - p_) < size || std::memcmp(p_, word, size) != 0) reject();
    p_ += size;
  }

  // Any JSON value at p_, validated and skipped.
  void skip_value(int depth) {
    switch (peek()) {
      case '"':
        string();
        return;
      case '{':
        if (depth > kMaxDepth) reject();
        ++p_;
        ws();
        if (peek() == '}') {
          ++p_;
          return;
        }
        for (;;) {
          string();
          ws();
          expect(':');
          ws();
          skip_value(depth + 1);
          if (another('}')) continue;
          return;
        }
      case '[':
        if (depth > kMaxDepth) reject();
        ++p_;
        ws();
        if (peek() == ']') {
          ++p_;
          return;
        }
        for (;;) {
          skip_value(depth + 1);
          if (another(']')) continue;
          return;
        }
      case 't':
        literal("true", 4);
        return;
      case 'f':
        literal("false", 5);
        return;
      case 'n':
        literal("null", 4);
        return;
      default:
        number();
    }
  }

  // The "traceEvents" array at p_: every element must be an object.
  void events() {
    ++p_;
    ws();
    if (peek() == ']') {
      ++p_;
      return;
    }
    element_loop();
  }

  // The elements of the traceEvents array from the one at p_, and its closing bracket.
  void element_loop() {
    for (;;) {
      if (p_ >= stop_) at_stop();
      if (peek() != '{') reject();
      event();
      if (another(']')) continue;
      return;
    }
  }

  // At an element start at or past stop_: stopped there, or the next stop point not passed yet.
  KINETO_OUTLINED void at_stop() {
    if (stop_ == end_) return;  // no stop: p_ is at the end of a truncated text, which peek() refuses
    while (stops_ != stops_end_ && *stops_ < p_) ++stops_;
    if (stops_ != stops_end_ && *stops_ == p_) throw Stopped{static_cast<std::size_t>(stops_ - stops_begin_)};
    stop_ = stops_ != stops_end_ ? *stops_ : end_;
  }

  Category category(const Str& s) {
    const std::string_view cat = key_text(s);
    for (const char c : cat)
      if (static_cast<unsigned char>(c) >= 0x80) reject();  // Python's lower() is Unicode-aware
    if (cat.size() == 6) {
      static constexpr char kKernelWord[] = "kernel";
      bool kernel = true;
      for (std::size_t i = 0; i < 6 && kernel; ++i) kernel = (cat[i] | 0x20) == kKernelWord[i];
      if (kernel) return Category::kKernel;
    }
    if (cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "Memcpy" || cat == "Memset") return Category::kMemcpy;
    return Category::kOther;
  }

  // ts or dur of an event whose category is not known to be uninteresting.
  Time time() {
    Time t;
    t.present = true;
    if (at_number()) {
      t.ok = micros_to_ns(number(), t.ns);
    } else {
      skip_value(2);
    }
    return t;
  }

  // One event object at p_ (its '{').
  KINETO_OUTLINED void event() {
    ++p_;
    Category cat = Category::kAbsent;
    unsigned seen = 0;
    bool ph_string = true;  // absent counts as "X"
    bool ph_x = true;
    bool name_string = true;  // absent counts as ""
    Str name;
    Time ts;
    Time dur;
    args_.reset();
    ws();
    if (peek() == '}') {
      ++p_;
      return;
    }
    for (;;) {
      const std::string_view key = key_text(string());
      const int found = event_keys_.find(key);
      const unsigned bit = found < 0 ? 0u : 1u << found;
      if (seen & bit) reject();
      seen |= bit;
      ws();
      expect(':');
      ws();
      // once the category says the event is neither a kernel nor a copy, its values are skipped
      const bool wanted = cat != Category::kOther && cat != Category::kMemcpy;
      if (found == kCat) {
        if (peek() != '"') reject();  // Python's paths would fail on a category of another type
        cat = category(string());
      } else if (found == kPh) {
        ph_string = peek() == '"';
        if (ph_string) {
          ph_x = key_text(string()) == "X";
        } else {
          skip_value(2);
        }
      } else if (found == kName && wanted) {
        name_string = peek() == '"';
        if (name_string) {
          name = string();
        } else {
          skip_value(2);
        }
      } else if (found == kTs && wanted) {
        ts = time();
      } else if (found == kDur && wanted) {
        dur = time();
      } else if (found == kArgs && wanted) {
        args();
      } else {
        skip_value(2);
      }
      if (another('}')) continue;
      break;
    }
    if (cat == Category::kMemcpy) {
      ++out_.memcpy;
    } else if (cat == Category::kKernel) {
      if (!ph_string) reject();
      if (ph_x) add_kernel(name_string, name, ts, dur);
    }
  }

  // An array of exactly three integers at p_ into ``xyz``; false (the value skipped) otherwise.
  bool triple(std::array<std::int64_t, 3>& xyz) {
    if (peek() != '[') {
      skip_value(3);
      return false;
    }
    ++p_;
    ws();
    if (peek() == ']') {
      ++p_;
      return false;
    }
    bool ok = true;
    std::size_t count = 0;
    for (;;) {
      if (at_number()) {
        std::int64_t v = 0;
        if (integer_value(number(), v) && count < 3) {
          xyz[count] = v;
        } else {
          ok = false;
        }
      } else {
        skip_value(4);
        ok = false;
      }
      ++count;
      if (another(']')) continue;
      return ok && count == 3;
    }
  }

  // The args value at p_ into args_.
  KINETO_OUTLINED void args() {
    args_.present = true;
    if (peek() != '{') {
      skip_value(2);
      args_.ok = false;
      return;
    }
    ++p_;
    ws();
    if (peek() == '}') {
      ++p_;
      return;
    }
    for (;;) {
      const std::string_view key = key_text(string());
      ws();
      expect(':');
      ws();
      const int found = args_keys_.find(key);
      if (found == kGrid || found == kBlock) {
        const bool grid = found == kGrid;
        bool& has = grid ? args_.has_grid : args_.has_block;
        if (has) args_.ok = false;  // a repeated key
        has = true;
        if (!triple(grid ? args_.grid : args_.block)) args_.ok = false;
      } else {
        if (found < 0) {
          skip_value(3);
        } else {
          const std::size_t i = static_cast<std::size_t>(found - kFirstField);
          if (args_.has[i]) args_.ok = false;
          args_.has[i] = 1;
          if (!at_number()) {
            skip_value(3);
            args_.ok = false;
          } else if (!integer_value(number(), args_.values[i])) {
            args_.ok = false;
          }
        }
      }
      if (another('}')) continue;
      return;
    }
  }

  std::int32_t name_code(const Str& name) {
    const std::string_view raw = name.raw();
    const auto found = code_of_raw_.find(raw);
    if (found != code_of_raw_.end()) return found->second;
    if (name.escaped) {
      unescape(name, name_text_);
    } else {
      name_text_.assign(raw);
    }
    if (out_.names.size() >= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) reject();
    const auto added = code_of_text_.emplace(name_text_, static_cast<std::int32_t>(out_.names.size()));
    if (added.second) out_.names.push_back(name_text_);
    code_of_raw_.emplace(raw, added.first->second);
    return added.first->second;
  }

  // A kernel event just read: all of its launch fields must be usable.
  void add_kernel(bool name_string, const Str& name, const Time& ts, const Time& dur) {
    if (!name_string || !ts.ok || !dur.ok || !args_.present || !args_.ok || !args_.has_grid || !args_.has_block) reject();
    out_.name_codes.push_back(name_code(name));
    out_.start_ns.push_back(ts.ns);
    out_.duration_ns.push_back(dur.ns);
    for (std::size_t i = 0; i < 3; ++i) {
      out_.grid[i].push_back(args_.grid[i]);
      out_.block[i].push_back(args_.block[i]);
    }
    for (std::size_t i = 0; i < request_.fields.size(); ++i) {
      if (args_.has[i]) {
        out_.fields[i].push_back(args_.values[i]);
        ++out_.fields_present[i];
      } else {
        out_.fields[i].push_back(request_.fields[i].absent);
      }
    }
  }
};

// Where the parts of a split scan start: for each k in 1..parts-1, the first '{' at or after
// k/parts of the text that follows '}' ',' and is followed by '"' (whitespace allowed between),
// as the elements of the traceEvents array do: a '}' and a '{' before and after a comma, and a
// key. Inside a string, that '"' would be escaped, unless the string ends there; a nested value
// (a list of objects in args, or a top-level value after the array) can look the same. Each is
// only a guess; the scan of an earlier part confirms it by stopping exactly there. Strictly
// increasing; fewer when the text runs out.
std::vector<const char*> split_points(std::string_view data, std::size_t parts) {
  std::vector<const char*> points;
  const char* const begin = data.data();
  const char* const end = begin + data.size();
  const char* from = begin;
  for (std::size_t k = 1; k < parts; ++k) {
    const char* p = std::max(from, begin + data.size() / parts * k);
    const char* found = nullptr;
    while (found == nullptr) {
      p = static_cast<const char*>(std::memchr(p, '{', static_cast<std::size_t>(end - p)));
      if (p == nullptr) break;
      const char* q = p;
      while (q > begin && is_ws(q[-1])) --q;
      const char* r = p + 1;
      while (r < end && is_ws(*r)) ++r;
      if (q > begin && q[-1] == ',' && r < end && *r == '"') {
        --q;
        while (q > begin && is_ws(q[-1])) --q;
        if (q > begin && q[-1] == '}') found = p;
      }
      ++p;
    }
    if (found == nullptr) break;
    points.push_back(found);
    from = found + 1;
  }
  return points;
}

// How a part's scan ended.
enum class Outcome { kEnd, kStopped, kRejected, kFailed };

// (a cache line of its own: the threads append to their parts' columns all the time)
struct alignas(64) Part {
  Kernels kernels;
  Outcome outcome = Outcome::kRejected;
  std::size_t next = 0;      // kStopped: the part that begins where this one stopped
  std::exception_ptr error;  // kFailed: out of memory, most likely (none: its thread did not start)
};

// Part k of a split scan: from starts[k] (the whole document for the first part, else an element
// start as guessed) up to the first later start that is an element start, or to the end of the
// text. Never throws: a thread must not let an exception escape.
void scan_part(std::string_view data, const Request& request, const std::vector<const char*>& starts, std::size_t k,
               Part& part) noexcept {
  try {
    Parser parser(data, request, part.kernels);
    parser.stop_at(starts.data() + k + 1, starts.data() + starts.size());
    try {
      if (k == 0) {
        parser.document();
      } else {
        parser.resume(starts[k]);
      }
      part.outcome = Outcome::kEnd;
    } catch (const Stopped& stopped) {
      part.outcome = Outcome::kStopped;
      part.next = k + 1 + stopped.at;
    }
  } catch (const Reject&) {
    part.outcome = Outcome::kRejected;
  } catch (...) {
    part.outcome = Outcome::kFailed;
    part.error = std::current_exception();
  }
}

// One column of the used parts, concatenated into ``to`` in part order, each part's column freed
// once copied (the merge then needs little more memory than the result).
template <class T, class Column>
void concatenate(std::vector<Part>& parts, std::size_t used, std::size_t total, Column column, std::vector<T>& to) {
  std::vector<T> all;
  all.reserve(total);
  for (std::size_t k = 0; k < used; ++k) {
    std::vector<T>& from = column(parts[k].kernels);
    all.insert(all.end(), from.begin(), from.end());
    std::vector<T>().swap(from);
  }
  to = std::move(all);
}

// The name codes of the used parts in part order, each part's codes turned into the merged ones.
void concatenate_codes(std::vector<Part>& parts, std::size_t used, std::size_t total,
                       const std::vector<std::vector<std::int32_t>>& recode, std::vector<std::int32_t>& to) {
  std::vector<std::int32_t> all = std::move(parts[0].kernels.name_codes);  // part 0's codes stay
  all.reserve(total);
  for (std::size_t k = 1; k < used; ++k) {
    std::vector<std::int32_t>& from = parts[k].kernels.name_codes;
    const std::vector<std::int32_t>& code = recode[k];
    for (const std::int32_t c : from) all.push_back(code[static_cast<std::size_t>(c)]);
    std::vector<std::int32_t>().swap(from);
  }
  to = std::move(all);
}

// Runs the jobs on up to ``threads`` threads (the calling one included), each job on one thread;
// the first exception of a job (out of memory) is rethrown once all have ended.
void run_jobs(std::vector<std::function<void()>>& jobs, std::size_t threads) {
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex error_lock;
  auto work = [&]() noexcept {
    for (std::size_t j; (j = next.fetch_add(1)) < jobs.size();) {
      try {
        jobs[j]();
      } catch (...) {
        const std::lock_guard<std::mutex> hold(error_lock);
        if (!error) error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> helpers;
  for (std::size_t t = 1; t < std::min(threads, jobs.size()); ++t) {
    try {
      helpers.emplace_back(work);
    } catch (const std::system_error&) {  // no more threads to be had: fewer do the jobs
      break;
    }
  }
  work();
  for (std::thread& h : helpers) h.join();
  if (error) std::rethrow_exception(error);
}

// The parts' kernels as one scan of the whole text would have found them: columns in part order;
// names coded in order of first appearance across the parts; a meta key found in two parts
// refused, as a scan of the whole text refuses a duplicated key. The columns are copied on up to
// ``threads`` threads (the copy is mostly the kernel's work of handing out fresh pages).
std::optional<Kernels> merge(std::vector<Part>& parts, std::size_t used, std::size_t threads) {
  if (used == 1) return std::move(parts[0].kernels);
  Kernels out;
  out.parts = used;
  Kernels& first = parts[0].kernels;
  out.names = std::move(first.names);
  out.memcpy = first.memcpy;
  out.meta = first.meta;
  out.fields_present = first.fields_present;
  out.fields.resize(first.fields.size());
  std::size_t total = 0;
  std::size_t names = 0;
  for (std::size_t k = 0; k < used; ++k) {
    total += parts[k].kernels.start_ns.size();
    names += parts[k].kernels.names.size();
  }
  out.names.reserve(names);  // no reallocation below: the views of code_of_text stay valid
  std::unordered_map<std::string_view, std::int32_t, NameHash> code_of_text;
  for (std::size_t c = 0; c < out.names.size(); ++c) code_of_text.emplace(out.names[c], static_cast<std::int32_t>(c));
  std::vector<std::vector<std::int32_t>> recode(used);
  for (std::size_t k = 1; k < used; ++k) {
    Kernels& part = parts[k].kernels;
    for (std::string& name : part.names) {
      const auto found = code_of_text.find(name);
      if (found != code_of_text.end()) {
        recode[k].push_back(found->second);
        continue;
      }
      if (out.names.size() >= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) return std::nullopt;
      const auto code = static_cast<std::int32_t>(out.names.size());
      out.names.push_back(std::move(name));
      code_of_text.emplace(out.names.back(), code);
      recode[k].push_back(code);
    }
    for (std::size_t i = 0; i < out.fields.size(); ++i) out.fields_present[i] += part.fields_present[i];
    out.memcpy += part.memcpy;
    for (std::size_t i = 0; i < out.meta.size(); ++i) {
      if (part.meta[i].empty()) continue;
      if (!out.meta[i].empty()) return std::nullopt;  // the same top-level key twice
      out.meta[i] = part.meta[i];
    }
  }
  using Column = std::vector<std::int64_t>;
  std::vector<std::function<void()>> jobs;
  const auto add = [&](auto column, Column& to) {
    jobs.emplace_back([&parts, used, total, column, &to] { concatenate(parts, used, total, column, to); });
  };
  jobs.emplace_back([&] { concatenate_codes(parts, used, total, recode, out.name_codes); });
  add([](Kernels& k) -> Column& { return k.start_ns; }, out.start_ns);
  add([](Kernels& k) -> Column& { return k.duration_ns; }, out.duration_ns);
  for (std::size_t i = 0; i < 3; ++i) {
    add([i](Kernels& k) -> Column& { return k.grid[i]; }, out.grid[i]);
    add([i](Kernels& k) -> Column& { return k.block[i]; }, out.block[i]);
  }
  for (std::size_t i = 0; i < out.fields.size(); ++i)
    add([i](Kernels& k) -> Column& { return k.fields[i]; }, out.fields[i]);
  run_jobs(jobs, threads);
  return out;
}

}  // namespace

std::optional<Kernels> extract(std::string_view data, const Request& request, unsigned threads, std::size_t min_part) {
  const std::size_t most = std::max<std::size_t>(1, data.size() / std::max<std::size_t>(min_part, 1));
  const std::size_t wanted = std::min<std::size_t>(std::max(threads, 1U), most);
  const std::vector<const char*> points = wanted > 1 ? split_points(data, wanted) : std::vector<const char*>{};
  if (points.empty()) {
    Kernels out;
    try {
      Parser(data, request, out).document();
    } catch (const Reject&) {
      return std::nullopt;
    }
    return out;
  }
  // part k scans from starts[k] to the first later start that it finds to be an element start
  std::vector<const char*> starts{data.data()};
  starts.insert(starts.end(), points.begin(), points.end());
  std::vector<Part> parts(starts.size());
  std::vector<std::thread> workers;
  workers.reserve(starts.size() - 1);
  for (std::size_t k = 1; k < starts.size(); ++k) {
    try {
      workers.emplace_back(scan_part, data, std::cref(request), std::cref(starts), k, std::ref(parts[k]));
    } catch (const std::system_error&) {  // no thread to be had: scanned here if it is needed
      parts[k].outcome = Outcome::kFailed;
    }
  }
  scan_part(data, request, starts, 0, parts[0]);
  for (std::thread& w : workers) w.join();
  // the parts used: from the first, each the one where the previous stopped, up to one that
  // reached the end (its start confirmed as an element start by the previous one's stop)
  std::vector<Part> used;
  for (std::size_t k = 0;;) {
    Part& part = parts[k];
    if (part.outcome == Outcome::kFailed && !part.error) scan_part(data, request, starts, k, part);
    if (part.outcome == Outcome::kRejected) return std::nullopt;
    if (part.outcome == Outcome::kFailed) std::rethrow_exception(part.error);
    used.push_back(std::move(part));
    if (used.back().outcome == Outcome::kEnd) break;
    k = used.back().next;
  }
  return merge(used, used.size(), starts.size());
}

}  // namespace kineto_events
}  // namespace simsample
