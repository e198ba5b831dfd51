// Kernel events of a Kineto (PyTorch profiler) trace, extracted in one pass over the JSON text.
//
// Dependency-free C++17, compiled into simsample._kineto_events (see bindings.cpp). The semantics
// are those of the Python paths in simsample/plugins (the typed decoder _kineto_decode.py and the
// json-module reference in kineto.py); tests compare them on real and generated traces.
//
// A trace is one JSON object whose "traceEvents" array holds about ten CPU-side events per GPU
// kernel. A small recursive-descent walker validates the whole document as strictly as Python's
// json module does, but reads only what the launches need: each event's "cat", "ph", "name",
// "ts", "dur" and "args" (the rest is skipped without being built), and the raw text of a few
// top-level values (deviceProperties, ...) that Python decodes itself.
//
// Kernels are the events whose cat is "kernel" in any ASCII case and whose ph is "X" (or absent).
// Their times, written as decimal microseconds, become exact integer nanoseconds; names are
// unescaped and dictionary-encoded (codes in order of first appearance).
//
// The extractor never guesses: anything it does not take exactly as the Python paths would (a
// syntax error, a value of an unexpected type, a number with an exponent, a duplicated key, a
// kernel without a usable grid) makes extract() return nothing, and the caller falls back to the
// Python paths, which either read the file or name what is wrong with it.
#ifndef SIMSAMPLE_KINETO_EVENTS_HPP
#define SIMSAMPLE_KINETO_EVENTS_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace simsample {
namespace kineto_events {

// An optional integer field of a kernel's args ("stream", ...) and its value when absent.
struct OptionalField {
  std::string key;
  std::int64_t absent = 0;
};

// What the Python side asks for: the optional args fields and the top-level keys whose raw JSON
// text is wanted.
struct Request {
  std::vector<OptionalField> fields;
  std::vector<std::string> meta_keys;
};

// The kernels of one trace, one entry per kernel in file order.
struct Kernels {
  std::vector<std::int64_t> start_ns;     // ts, exact (baseTimeNanoseconds is not added here)
  std::vector<std::int64_t> duration_ns;  // dur, exact
  std::array<std::vector<std::int64_t>, 3> grid;
  std::array<std::vector<std::int64_t>, 3> block;
  std::vector<std::vector<std::int64_t>> fields;  // per Request::fields, its absent value where missing
  std::vector<std::size_t> fields_present;        // per Request::fields, how many kernels have it
  std::vector<std::int32_t> name_codes;           // index into names
  std::vector<std::string> names;                 // distinct names, UTF-8 bytes, first appearance first
  std::size_t memcpy = 0;                         // events of a memory-copy or memset category
  // per Request::meta_keys: the value's JSON text (a view into the input), empty when absent
  std::vector<std::string_view> meta;
  std::size_t parts = 1;  // how many parts of the text were scanned on their own and merged
};

// Below this many bytes per part, a text is not split across threads (starting a thread and
// merging its columns would cost more than its share of the scan saves).
constexpr std::size_t kMinPartBytes = std::size_t{16} << 20;

// Extract the kernels of the trace text ``data`` (the whole decompressed file), or nothing when the
// text is not a trace this extractor takes exactly. Thread-safe; needs no Python.
//
// With ``threads`` > 1 and at least ``min_part`` bytes per part, the text is cut into that many
// parts at what look like starts of traceEvents elements, scanned at the same time, and the parts
// merged: the result (columns, name codes in order of first appearance, counts, metadata,
// refusals) is exactly that of one scan, which a part confirms by stopping exactly where the next
// one began (a cut that was no element start costs time, never correctness).
std::optional<Kernels> extract(std::string_view data, const Request& request, unsigned threads = 1,
                               std::size_t min_part = kMinPartBytes);

}  // namespace kineto_events
}  // namespace simsample

#endif  // SIMSAMPLE_KINETO_EVENTS_HPP
