// Column scanner for the profile readers' CSV tables (nsys stats reports, nvprof GPU traces).
//
// Reads the body of a CSV file (from the first data row on) and converts only the columns asked
// for, splitting the work across threads. It reproduces what pyarrow's CSV reader followed by the
// readers' conversions yields, for the input it accepts; for anything else (a bare carriage
// return, a quote left open at the end of a line, a number in a form it does not parse exactly)
// it gives up and says why, and the caller reads the file with pyarrow instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace simsample::csv_columns {

class Source;

// How a column is converted.
enum class Kind : int {
  Number = 0,      // float64; NaN for an empty cell
  Dictionary = 1,  // int32 codes into the distinct values, in order of first appearance
  CorrName = 2,    // Dictionary of the values less nvprof's " [123]" suffix, plus the ids (-1: none)
};

struct ColumnSpec {
  std::size_t index = 0;  // position in the row (0-based)
  Kind kind = Kind::Number;
};

// Distinct strings in order of first appearance, with a hash index for interning.
class Dictionary {
 public:
  Dictionary();
  // The code of s (added at the end when new); -1 when the dictionary is full (2**31 - 1 values).
  std::int32_t intern(std::string_view s);
  std::size_t size() const { return offsets_.size() - 1; }
  std::string_view at(std::size_t i) const {
    return {arena_.data() + offsets_[i], static_cast<std::size_t>(offsets_[i + 1] - offsets_[i])};
  }

 private:
  std::int32_t lookup(std::string_view s);  // intern() by hash
  void grow();
  std::vector<char> arena_;
  std::vector<std::uint64_t> offsets_;  // size() + 1 entries
  std::vector<std::uint64_t> hashes_;   // per string, for rehashing
  std::vector<std::int32_t> next_;      // per string: the code interned after it last time (-1: none)
  std::vector<std::int32_t> slots_;     // open addressing, -1 = empty
  std::int32_t last_ = -1;              // the previous result
};

// Memory mapped straight from the kernel for the columns: it grows without copying (mremap), and
// large mappings are backed by huge pages where the system allows, which saves most of the page
// faults of filling hundreds of megabytes (a large part of the time otherwise).
class MappedMemory {
 public:
  MappedMemory() = default;
  explicit MappedMemory(std::size_t bytes);  // throws std::bad_alloc
  ~MappedMemory();
  MappedMemory(MappedMemory&& other) noexcept;
  MappedMemory& operator=(MappedMemory&& other) noexcept;
  MappedMemory(const MappedMemory&) = delete;
  MappedMemory& operator=(const MappedMemory&) = delete;
  void* data() const { return data_; }
  std::size_t capacity() const { return capacity_; }
  void grow(std::size_t bytes);  // to at least `bytes`, keeping the contents; throws std::bad_alloc
  // Hands the mapping over: the caller unmaps it with unmap_memory(pointer, capacity()).
  void* release();

 private:
  void* data_ = nullptr;
  std::size_t capacity_ = 0;
};

void unmap_memory(void* data, std::size_t bytes);

// A column being filled by one thread.
template <typename T>
class Growing {
 public:
  void push_back(T v) {
    if (size_ == capacity_) grow();
    data_[size_++] = v;
  }
  std::size_t size() const { return size_; }
  const T* data() const { return data_; }
  void clear() { *this = Growing(); }

 private:
  void grow() {
    memory_.grow((capacity_ ? capacity_ * 2 : std::size_t{8192}) * sizeof(T));
    data_ = static_cast<T*>(memory_.data());
    capacity_ = memory_.capacity() / sizeof(T);
  }
  MappedMemory memory_;
  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

// One converted column as filled by one thread, for all the pieces it took.
struct ThreadColumn {
  Growing<double> numbers;
  Growing<std::int32_t> codes;  // into dict
  Growing<std::int64_t> ids;    // CorrName only
  Dictionary dict;
};

// A row whose field count differs from the header's: the caller skips it or reports it.
struct BadRow {
  std::size_t fields = 0;
  std::string text;  // the line without its terminator
};

// Which thread converted a piece of the body, and where its rows are in that thread's columns.
struct Piece {
  std::size_t thread = 0;
  std::size_t first = 0;
  std::size_t rows = 0;
  std::vector<BadRow> bad;
};

// The body scanned piece by piece: gathered into whole columns with Scan::gather_*.
class Scan {
 public:
  bool taken() const { return declined_.empty(); }
  const std::string& declined() const { return declined_; }  // why not taken ("" when taken)
  std::size_t rows() const { return rows_; }
  const std::vector<ColumnSpec>& specs() const { return specs_; }
  std::vector<BadRow> bad_rows() const;
  // Column c of every piece in order into out (rows() values), releasing the threads' copies.
  // Different columns may be gathered by different threads at once.
  void gather_numbers(std::size_t c, double* out);
  // The codes gathered are into dictionary(c), which this fills: values in order of first
  // appearance in the file.
  void gather_codes(std::size_t c, std::int32_t* out);
  void gather_ids(std::size_t c, std::int64_t* out);
  const Dictionary& dictionary(std::size_t c) const { return merged_[c]; }

 private:
  friend Scan scan(const Source&, std::uint64_t, std::size_t, const std::vector<ColumnSpec>&, unsigned, std::uint64_t);
  std::string declined_;
  std::size_t rows_ = 0;
  std::vector<ColumnSpec> specs_;
  std::vector<Piece> pieces_;
  std::vector<std::vector<ThreadColumn>> threads_;  // [thread][column]
  std::vector<Dictionary> merged_;                  // per column (empty for numbers)
};

// Where the bytes come from: a file read with plain reads, or a buffer in memory.
class Source {
 public:
  virtual ~Source() = default;
  virtual std::uint64_t size() const = 0;
  // Up to n bytes from offset pos (fewer only at the end); buf is scratch space the result may
  // point into. Returns nullptr when the bytes cannot be read.
  virtual const char* view(std::uint64_t pos, std::size_t n, std::vector<char>& buf, std::size_t& got) const = 0;
};

class FileSource : public Source {
 public:
  explicit FileSource(const std::string& path);  // throws std::runtime_error when it cannot open
  ~FileSource() override;
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;
  std::uint64_t size() const override { return size_; }
  const char* view(std::uint64_t pos, std::size_t n, std::vector<char>& buf, std::size_t& got) const override;

 private:
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

class MemorySource : public Source {
 public:
  MemorySource(const char* data, std::size_t size) : data_(data), size_(size) {}
  std::uint64_t size() const override { return size_; }
  const char* view(std::uint64_t pos, std::size_t n, std::vector<char>& buf, std::size_t& got) const override;

 private:
  const char* data_;
  std::size_t size_;
};

// Scans the rows from byte offset `start` (the first data row) to the end of `source`, with up to
// `threads` threads. Each row must have `ncols` fields; the columns of `specs` are converted. The
// body is split into pieces of `piece_bytes` (0: sized for the body and the threads; tests use tiny
// pieces to cut the body everywhere).
Scan scan(const Source& source, std::uint64_t start, std::size_t ncols, const std::vector<ColumnSpec>& specs,
          unsigned threads, std::uint64_t piece_bytes = 0);

// The fields of one line (no terminator), unquoted as the body's are; nullopt when the line is
// one the scanner would not take (a quote left open, a carriage return).
std::optional<std::vector<std::string>> split_line(std::string_view line);

}  // namespace simsample::csv_columns
