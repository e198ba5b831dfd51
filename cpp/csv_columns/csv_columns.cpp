// Column scanner for the profile readers' CSV tables: see csv_columns.hpp.
//
// What pyarrow's reader (quoting on, "" inside quotes, newlines_in_values off, empty lines
// ignored) makes of a line, reproduced here:
// - a quote opens a quoted section only at the start of a field; after the closing quote the field
//   goes on unquoted up to the next comma (so '"ab"c' is 'abc', and 'a"b' is 'a"b');
// - a line ends at \n or \r\n; a bare \r ends a line too (not taken here: it never occurs in
//   profiler output, and a quoted \r is a value character for pyarrow, which only the context tells);
// - an empty line is no row; a line with another number of fields than the header is a bad row.
// Numbers: pyarrow infers each column's type and the readers convert it to float64; for the forms
// accepted here ([-]digits[.digits][e[+-]digits], spaces and tabs around it, the empty cell as NaN)
// every inferred type gives the correctly rounded value, which is what is computed here.
#include "csv_columns.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>

namespace simsample::csv_columns {

namespace {

// Bytes handed to the line loop at a time: large enough that the per-window cost vanishes,
// small enough to stay in the CPU's cache between the read and the scan.
constexpr std::size_t kWindow = std::size_t{1} << 20;
// Bytes of body per piece: pieces are handed to the threads one at a time, so that a thread slowed
// by other work on the machine takes fewer of them.
constexpr std::uint64_t kMaxPiece = std::uint64_t{32} << 20;
constexpr std::uint64_t kMinPiece = std::uint64_t{1} << 20;

inline std::uint64_t mix(std::uint64_t h, std::uint64_t w) {
  h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
  return h ^ (h >> 29);
}

// A fast hash of a byte string (the input is trusted profiler output, not adversarial). Four
// independent lanes, so that long kernel names hash at the speed of the multiplier, not its latency.
std::uint64_t hash_bytes(std::string_view s) {
  const char* p = s.data();
  std::size_t n = s.size();
  std::uint64_t h[4] = {0x243F6A8885A308D3ULL ^ n, 0x13198A2E03707344ULL, 0xA4093822299F31D0ULL, 0x082EFA98EC4E6C89ULL};
  for (; n >= 32; p += 32, n -= 32) {
    std::uint64_t w[4];
    std::memcpy(w, p, 32);
    for (int i = 0; i < 4; ++i) h[i] = mix(h[i], w[i]);
  }
  for (int i = 0; n >= 8; p += 8, n -= 8, ++i) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    h[i] = mix(h[i], w);
  }
  if (n) {
    std::uint64_t w = 0;
    std::memcpy(&w, p, n);
    h[3] = mix(h[3], w);
  }
  std::uint64_t x = mix(mix(mix(h[0], h[1]), h[2]), h[3]);
  x ^= x >> 32;
  x *= 0xD6E8FEB86659FD93ULL;
  return x ^ (x >> 32);
}

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The first comma in [p, e), or e.
inline const char* find_comma(const char* p, const char* e) {
  while (p < e && *p != ',') ++p;
  return p;
}

// One field of a lexed line: [b, e) is its value when !complex; else the raw text [raw_b, raw_e)
// needs unquoting (doubled quotes, or text after the closing quote).
struct Field {
  const char* raw_b;
  const char* raw_e;
  const char* b;
  const char* e;
  bool complex;
};

// Splits the line [p, e) (no terminator) into fields, keeping the first `keep` in rec. Returns the
// number of fields, or -1 when a quote is left open (the value would go on past the line end).
long lex_line(const char* p, const char* e, Field* rec, std::size_t keep) {
  long count = 0;
  for (;;) {
    Field f{p, p, p, p, false};
    if (p < e && *p == '"') {
      const char* q = p + 1;
      for (;;) {
        q = static_cast<const char*>(std::memchr(q, '"', static_cast<std::size_t>(e - q)));
        if (q == nullptr) return -1;
        if (q + 1 < e && q[1] == '"') {
          f.complex = true;
          q += 2;
          continue;
        }
        break;
      }
      f.b = p + 1;
      f.e = q;
      p = q + 1;
      if (p < e && *p != ',') {
        f.complex = true;
        p = find_comma(p, e);
      }
    } else {
      p = find_comma(p, e);
      f.e = p;
    }
    f.raw_e = p;
    if (static_cast<std::size_t>(count) < keep) rec[count] = f;
    ++count;
    if (p == e) return count;
    ++p;
  }
}

// The value of a field (unquoted into scratch when it must be).
std::string_view value_of(const Field& f, std::string& scratch) {
  if (!f.complex) return {f.b, static_cast<std::size_t>(f.e - f.b)};
  scratch.clear();
  const char* p = f.raw_b;
  if (p < f.raw_e && *p == '"') {
    for (++p;; ++p) {  // the lexer found the closing quote
      if (*p == '"') {
        if (p + 1 == f.raw_e || p[1] != '"') {
          ++p;
          break;
        }
        ++p;
      }
      scratch.push_back(*p);
    }
  }
  scratch.append(p, f.raw_e);
  return scratch;
}

constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                             1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

// Integers up to 2**53 are exact in a double.
constexpr std::uint64_t kExactInt = std::uint64_t{1} << 53;

// The general case of parse_number: std::from_chars (correctly rounded), for the forms accepted.
bool parse_number_slow(const char* b, const char* e, double& out) {
  for (const char* p = b; p < e; ++p) {  // no inf, nan or hexadecimal: pyarrow reads those otherwise
    const char c = *p;
    if (!is_digit(c) && c != '.' && c != 'e' && c != 'E' && c != '-' && c != '+') return false;
  }
  if (*b == '+') return false;
  double v = 0;
  const auto [end, ec] = std::from_chars(b, e, v, std::chars_format::general);
  if (ec != std::errc() || end != e) return false;  // also out of range: pyarrow gives inf or 0
  out = v;
  return true;
}

// Reads a run of digits from p into m (m = m * 10**count + digits); returns the end of the run.
// m is exact while the run and the digits before it number at most 19.
inline const char* read_digits(const char* p, const char* e, std::uint64_t& m) {
  for (; p < e; ++p) {
    const auto d = static_cast<unsigned>(static_cast<unsigned char>(*p)) - '0';
    if (d > 9) break;
    m = m * 10 + d;
  }
  return p;
}

// Parses [-]digits[.digits][(e|E)[+-]digits] (after trimming spaces and tabs; empty = NaN) to
// the correctly rounded double. False for any other text.
bool parse_number(const char* b, const char* e, double& out) {
  while (b < e && (*b == ' ' || *b == '\t')) ++b;
  while (e > b && (e[-1] == ' ' || e[-1] == '\t')) --e;
  if (b == e) {
    out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  // Fast path (Clinger's): the digits as an integer m <= 2**53 (trailing zeros of the fraction
  // left out) over a power of ten up to 1e22; both are exact, so one division rounds correctly.
  const char* p = b;
  const bool negative = *p == '-';
  if (negative) ++p;
  const char* const digits = p;
  std::uint64_t m = 0;
  p = read_digits(p, e, m);
  std::ptrdiff_t count = p - digits, decimals = 0;
  if (p < e && *p == '.') {
    const char* const fraction = ++p;
    p = read_digits(p, e, m);
    decimals = p - fraction;
    count += decimals;
    if (m > kExactInt && count <= 19) {  // trailing zeros may be all that is too many
      for (; decimals > 0 && m % 10 == 0; --decimals) m /= 10;
    }
  }
  if (p != e || count == 0 || count > 19 || m > kExactInt || decimals > 22) return parse_number_slow(b, e, out);
  double v = static_cast<double>(m);
  if (decimals) v /= kPow10[decimals];
  out = negative ? -v : v;
  return true;
}

// nvprof's "name [123]": the length of the name part and the id, or false when there is no suffix
// (the id must be 1+ ASCII digits between " [" and the final "]"). `overflow` is set when the
// digits do not fit an int64 (pyarrow's conversion of them fails).
bool split_corr(std::string_view v, std::size_t& stem, std::int64_t& id, bool& overflow) {
  const std::size_t n = v.size();
  if (n < 4 || v[n - 1] != ']') return false;
  std::size_t j = n - 1;
  while (j > 0 && is_digit(v[j - 1])) --j;
  if (j == n - 1 || j < 2 || v[j - 1] != '[' || v[j - 2] != ' ') return false;
  std::int64_t x = 0;
  for (std::size_t i = j; i < n - 1; ++i) {
    if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, v[i] - '0', &x)) {
      overflow = true;
      return false;
    }
  }
  stem = j - 2;
  id = x;
  return true;
}

// The shared state of one scan: the pieces, the first reason to give up, the threads' results.
struct Job {
  const Source& source;
  std::uint64_t start;
  std::size_t ncols;
  const std::vector<ColumnSpec>& specs;
  std::size_t keep = 0;  // fields to record per line: up to the last column converted
  std::vector<std::uint64_t> bounds;  // piece k holds the rows whose lines start in [bounds[k], bounds[k + 1])
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::string declined;
  std::vector<Piece> pieces;
  std::vector<std::vector<ThreadColumn>> threads;  // [thread][column]

  Job(const Source& s, std::uint64_t st, std::size_t n, const std::vector<ColumnSpec>& sp)
      : source(s), start(st), ncols(n), specs(sp) {
    for (const auto& c : specs) keep = std::max(keep, c.index + 1);
  }

  void decline(const std::string& why) {
    std::lock_guard<std::mutex> lock(mutex);
    if (declined.empty()) declined = why;
    stop = true;
  }
};

// Converts the rows of the pieces one thread takes, into that thread's columns.
class PieceScanner {
 public:
  PieceScanner(Job& job, std::size_t thread) : job_(job), thread_(thread), rec_(job.keep) {
    auto& cols = job.threads[thread];
    for (std::size_t c = 0; c < job.specs.size(); ++c) {
      const ColumnSpec& spec = job.specs[c];
      if (spec.kind == Kind::Number) {
        numbers_.push_back(NumberSink{spec.index, &cols[c].numbers});
      } else {
        strings_.push_back(StringSink{spec.index, &cols[c], spec.kind == Kind::CorrName});
      }
    }
  }

  // The rows of piece k, appended to the thread's columns.
  void run(std::size_t k) {
    Piece& piece = job_.pieces[k];
    piece.thread = thread_;
    piece.first = rows_;
    bad_ = &piece.bad;
    scan_piece(job_.bounds[k], job_.bounds[k + 1]);
    piece.rows = rows_ - piece.first;
  }

 private:
  void scan_piece(std::uint64_t begin, std::uint64_t end) {
    const std::uint64_t size = job_.source.size();
    std::uint64_t pos = begin;
    std::size_t got = 0;
    if (begin > job_.start) {  // the line under way at `begin` belongs to the piece before
      pos = begin - 1;
      for (;;) {
        if (pos >= size) return;
        const char* w = job_.source.view(pos, kWindow, buf_, got);
        if (w == nullptr) return fail("read error");
        const void* nl = std::memchr(w, '\n', got);
        if (nl != nullptr) {
          pos += static_cast<std::uint64_t>(static_cast<const char*>(nl) - w) + 1;
          break;
        }
        pos += got;
      }
    }
    std::size_t want = kWindow;
    while (pos < end && !job_.stop.load(std::memory_order_relaxed)) {
      const char* w = job_.source.view(pos, want, buf_, got);
      if (w == nullptr) return fail("read error");
      const bool at_eof = pos + got >= size;
      bool done = false;
      const std::size_t used = lines(w, got, pos, end, at_eof, done);
      if (done || failed_) return;
      if (used == 0) {  // a line longer than the window
        want *= 2;
        continue;
      }
      pos += used;
      want = kWindow;
    }
  }

  // The complete lines in the window [w, w + n) at file offset `off` that start before `end`
  // (at the end of the file the last line needs no terminator). Returns the bytes used; `done`
  // once the piece is finished.
  std::size_t lines(const char* w, std::size_t n, std::uint64_t off, std::uint64_t end, bool at_eof, bool& done) {
    const char* p = w;
    const char* const e = w + n;
    has_cr_ = std::memchr(w, '\r', n) != nullptr;
    while (p < e) {
      if (off + static_cast<std::uint64_t>(p - w) >= end) {
        done = true;
        return static_cast<std::size_t>(p - w);
      }
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(e - p)));
      if (nl == nullptr) {
        if (!at_eof) break;
        nl = e;
      }
      line(p, nl);
      if (failed_) return 0;
      p = nl == e ? e : nl + 1;
    }
    if (p == e && at_eof) done = true;
    return static_cast<std::size_t>(p - w);
  }

  void fail(const char* why) {
    failed_ = true;
    job_.decline(why);
  }

  void line(const char* b, const char* e) {
    if (e > b && e[-1] == '\r') --e;
    if (b == e) return;  // pyarrow ignores empty lines
    if (has_cr_ && std::memchr(b, '\r', static_cast<std::size_t>(e - b)) != nullptr) {
      return fail("carriage return inside a line");
    }
    const long n = lex_line(b, e, rec_.data(), rec_.size());
    if (n < 0) return fail("a quoted value goes on past the end of its line");
    if (static_cast<std::size_t>(n) != job_.ncols) {
      bad_->push_back(BadRow{static_cast<std::size_t>(n), std::string(b, e)});
      return;
    }
    for (const NumberSink& sink : numbers_) {
      const std::string_view v = value_of(rec_[sink.field], scratch_);
      double x;
      if (!parse_number(v.data(), v.data() + v.size(), x)) return fail("a value the scanner does not read as a number");
      sink.out->push_back(x);
    }
    for (const StringSink& sink : strings_) {
      const std::string_view v = value_of(rec_[sink.field], scratch_);
      std::string_view key = v;
      if (sink.corr) {
        std::size_t stem = 0;
        std::int64_t id = -1;
        bool overflow = false;
        if (split_corr(v, stem, id, overflow)) key = v.substr(0, stem);
        if (overflow) return fail("a correlation id beyond int64");
        sink.col->ids.push_back(id);
      }
      const std::int32_t code = sink.col->dict.intern(key);
      if (code < 0) return fail("too many distinct values");
      sink.col->codes.push_back(code);
    }
    ++rows_;
  }

  // Where the converted values of a row go: number columns, and dictionary (or CorrName) columns.
  struct NumberSink {
    std::size_t field;
    Growing<double>* out;
  };
  struct StringSink {
    std::size_t field;
    ThreadColumn* col;
    bool corr;
  };

  Job& job_;
  const std::size_t thread_;
  std::vector<NumberSink> numbers_;
  std::vector<StringSink> strings_;
  std::vector<BadRow>* bad_ = nullptr;  // the bad rows of the piece being scanned
  std::size_t rows_ = 0;                // rows in the thread's columns
  std::vector<Field> rec_;
  std::vector<char> buf_;
  std::string scratch_;
  bool has_cr_ = false;  // whether the window has a carriage return at all
  bool failed_ = false;
};

void worker(Job& job, std::size_t thread) {
  try {
    PieceScanner scanner(job, thread);
    for (std::size_t k; (k = job.next.fetch_add(1)) + 1 < job.bounds.size() && !job.stop.load();) scanner.run(k);
  } catch (const std::exception& e) {  // out of memory, most likely: an exception must not leave a thread
    job.decline(e.what());
  }
}

}  // namespace

// --- Dictionary ---------------------------------------------------------------------------------
Dictionary::Dictionary() : offsets_{0}, slots_(64, -1) {}

std::int32_t Dictionary::intern(std::string_view s) {
  // Kernels run in repeating sequences: the value is often the previous one, or the one that
  // followed the previous one last time; a comparison then saves hashing a long name.
  if (last_ >= 0) {
    const auto last = static_cast<std::size_t>(last_);
    if (at(last) == s) return last_;
    const std::int32_t guess = next_[last];
    if (guess >= 0 && at(static_cast<std::size_t>(guess)) == s) return last_ = guess;
  }
  const std::int32_t code = lookup(s);
  if (code >= 0 && last_ >= 0) next_[static_cast<std::size_t>(last_)] = code;
  return last_ = code;
}

std::int32_t Dictionary::lookup(std::string_view s) {
  const std::uint64_t h = hash_bytes(s);
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = static_cast<std::size_t>(h) & mask;
  for (std::int32_t c; (c = slots_[i]) >= 0; i = (i + 1) & mask) {
    if (hashes_[static_cast<std::size_t>(c)] == h && at(static_cast<std::size_t>(c)) == s) return c;
  }
  if (size() >= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) return -1;
  const auto code = static_cast<std::int32_t>(size());
  arena_.insert(arena_.end(), s.begin(), s.end());
  offsets_.push_back(arena_.size());
  hashes_.push_back(h);
  next_.push_back(-1);
  slots_[i] = code;
  if (size() * 2 > slots_.size()) grow();
  return code;
}

void Dictionary::grow() {
  std::vector<std::int32_t> slots(slots_.size() * 2, -1);
  const std::size_t mask = slots.size() - 1;
  for (std::size_t c = 0; c < size(); ++c) {
    std::size_t i = static_cast<std::size_t>(hashes_[c]) & mask;
    while (slots[i] >= 0) i = (i + 1) & mask;
    slots[i] = static_cast<std::int32_t>(c);
  }
  slots_.swap(slots);
}

// --- Sources ------------------------------------------------------------------------------------
FileSource::FileSource(const std::string& path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    ::close(fd_);
    throw std::runtime_error("cannot stat " + path + ": " + std::strerror(errno));
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
}

FileSource::~FileSource() {
  if (fd_ >= 0) ::close(fd_);
}

const char* FileSource::view(std::uint64_t pos, std::size_t n, std::vector<char>& buf, std::size_t& got) const {
  if (buf.size() < n) buf.resize(n);
  got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd_, buf.data() + got, n - got, static_cast<off_t>(pos + got));
    if (r < 0) {
      if (errno == EINTR) continue;
      return nullptr;
    }
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  if (got < n && pos + got < size_) return nullptr;  // the file shrank while being read
  return buf.data();
}

const char* MemorySource::view(std::uint64_t pos, std::size_t n, std::vector<char>&, std::size_t& got) const {
  got = pos >= size_ ? 0 : static_cast<std::size_t>(std::min<std::uint64_t>(n, size_ - pos));
  return data_ + std::min<std::uint64_t>(pos, size_);
}

// --- Mapped memory ------------------------------------------------------------------------------
namespace {
std::size_t page_size() {
  static const auto size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

// Huge pages pay off from this size on (a huge page is 2 MiB on x86-64 and most arm64 systems).
constexpr std::size_t kHugeFrom = std::size_t{2} << 20;

void advise_huge(void* data, std::size_t bytes) {
#ifdef MADV_HUGEPAGE
  if (bytes >= kHugeFrom) ::madvise(data, bytes, MADV_HUGEPAGE);  // advice only: failure is harmless
#else
  (void)data;
  (void)bytes;
#endif
}
}  // namespace

MappedMemory::MappedMemory(std::size_t bytes) { grow(bytes); }

MappedMemory::~MappedMemory() { unmap_memory(data_, capacity_); }

MappedMemory::MappedMemory(MappedMemory&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), capacity_(std::exchange(other.capacity_, 0)) {}

MappedMemory& MappedMemory::operator=(MappedMemory&& other) noexcept {
  if (this != &other) {
    unmap_memory(data_, capacity_);
    data_ = std::exchange(other.data_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

void MappedMemory::grow(std::size_t bytes) {
  const std::size_t page = page_size();
  bytes = std::max<std::size_t>(bytes, 1);
  bytes = (bytes + page - 1) / page * page;
  if (bytes <= capacity_) return;
#ifdef MREMAP_MAYMOVE
  void* p = data_ == nullptr ? ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                             : ::mremap(data_, capacity_, bytes, MREMAP_MAYMOVE);
  if (p == MAP_FAILED) throw std::bad_alloc();
#else  // no mremap (not Linux): a new mapping and a copy
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  if (data_ != nullptr) {
    std::memcpy(p, data_, capacity_);
    unmap_memory(data_, capacity_);
  }
#endif
  data_ = p;
  capacity_ = bytes;
  advise_huge(data_, capacity_);
}

void* MappedMemory::release() {
  capacity_ = 0;
  return std::exchange(data_, nullptr);
}

void unmap_memory(void* data, std::size_t bytes) {
  if (data != nullptr) ::munmap(data, bytes);
}

// --- Scan ---------------------------------------------------------------------------------------
Scan scan(const Source& source, std::uint64_t start, std::size_t ncols, const std::vector<ColumnSpec>& specs,
          unsigned threads, std::uint64_t piece_bytes) {
  Scan out;
  out.specs_ = specs;
  for (const auto& c : specs) {
    if (c.index >= ncols) throw std::invalid_argument("column index beyond the header's fields");
  }
  const std::uint64_t size = source.size();
  if (start > size) throw std::invalid_argument("start offset beyond the end of the data");
  threads = std::max(1U, threads);
  Job job(source, start, ncols, specs);
  const std::uint64_t body = size - start;
  const std::uint64_t piece =
      piece_bytes ? piece_bytes : std::clamp<std::uint64_t>(body / (std::uint64_t{threads} * 4), kMinPiece, kMaxPiece);
  const std::uint64_t npieces = std::max<std::uint64_t>(1, (body + piece - 1) / piece);
  for (std::uint64_t k = 0; k < npieces; ++k) job.bounds.push_back(start + k * piece);
  job.bounds.push_back(size);
  job.pieces.resize(npieces);
  const auto nthreads = static_cast<std::size_t>(std::min<std::uint64_t>(threads, npieces));
  job.threads.resize(nthreads);
  for (auto& t : job.threads) t.resize(specs.size());

  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < nthreads; ++t) pool.emplace_back(worker, std::ref(job), t);
  worker(job, 0);
  for (auto& th : pool) th.join();
  if (!job.declined.empty()) {
    out.declined_ = job.declined;
    return out;
  }
  for (const auto& p : job.pieces) out.rows_ += p.rows;
  out.pieces_ = std::move(job.pieces);
  out.threads_ = std::move(job.threads);
  out.merged_.resize(specs.size());
  return out;
}

std::vector<BadRow> Scan::bad_rows() const {
  std::vector<BadRow> out;
  for (const auto& p : pieces_) out.insert(out.end(), p.bad.begin(), p.bad.end());
  return out;
}

void Scan::gather_numbers(std::size_t c, double* out) {
  for (const auto& p : pieces_) out = std::copy_n(threads_[p.thread][c].numbers.data() + p.first, p.rows, out);
  for (auto& t : threads_) t[c].numbers.clear();
}

void Scan::gather_codes(std::size_t c, std::int32_t* out) {
  // Each thread's dictionary has the values in the order that thread met them; walking the pieces
  // in file order and numbering each value at its first use gives the order of the file.
  std::vector<std::vector<std::int32_t>> remap(threads_.size());
  for (std::size_t t = 0; t < threads_.size(); ++t) remap[t].assign(threads_[t][c].dict.size(), -1);
  Dictionary& merged = merged_[c];
  for (const auto& p : pieces_) {
    const ThreadColumn& col = threads_[p.thread][c];
    auto& map = remap[p.thread];
    const std::int32_t* codes = col.codes.data() + p.first;
    for (std::size_t i = 0; i < p.rows; ++i) {
      std::int32_t& g = map[static_cast<std::size_t>(codes[i])];
      if (g < 0) g = merged.intern(col.dict.at(static_cast<std::size_t>(codes[i])));
      *out++ = g;
    }
  }
  for (auto& t : threads_) {
    t[c].codes.clear();
    t[c].dict = Dictionary();
  }
}

void Scan::gather_ids(std::size_t c, std::int64_t* out) {
  for (const auto& p : pieces_) out = std::copy_n(threads_[p.thread][c].ids.data() + p.first, p.rows, out);
  for (auto& t : threads_) t[c].ids.clear();
}

std::optional<std::vector<std::string>> split_line(std::string_view line) {
  if (line.find('\r') != std::string_view::npos) return std::nullopt;
  const char* b = line.data();
  const char* e = b + line.size();
  const long n = lex_line(b, e, nullptr, 0);
  if (n < 0) return std::nullopt;
  std::vector<Field> rec(static_cast<std::size_t>(n));
  lex_line(b, e, rec.data(), rec.size());
  std::vector<std::string> out;
  std::string scratch;
  for (const auto& f : rec) out.emplace_back(value_of(f, scratch));
  return out;
}

}  // namespace simsample::csv_columns
