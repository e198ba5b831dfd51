// pybind11 module simsample._trace_scan: the compiled Accel-Sim trace scanner.
//
// Python (simsample_accelsim.scan_native) reads the header, then feeds the decompressed body in
// chunks and turns the result into LaunchFeatures. The GIL is released while a chunk is scanned,
// so scanners in different threads run in parallel (one scanner must not be shared by threads).
// A malformed body raises ScanError(line, message, text): line 0 when no line is to blame.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../common/contiguous_bytes.hpp"
#include "trace_scanner.hpp"

namespace py = pybind11;
using simsample::trace_scan::Config;
using simsample::trace_scan::MemClass;
using simsample::trace_scan::Result;
using simsample::trace_scan::Scanner;
using simsample::trace_scan::ScanError;

namespace {

PyObject* scan_error_type = nullptr;  // owned by the module for the interpreter's lifetime

[[noreturn]] void raise_scan_error(const ScanError& e) {
  py::tuple args = py::make_tuple(e.line(), py::str(e.what()), py::bytes(e.text()));
  PyErr_SetObject(scan_error_type, args.ptr());
  throw py::error_already_set();
}

Config make_config(unsigned skip_tokens, int binary_version, std::uint64_t block_threads, std::uint64_t shmem_base,
                   std::uint64_t local_base, std::uint64_t first_line, const py::dict& classes, const py::iterable& control_flow,
                   bool record_lines = false) {
  if (block_threads == 0) throw py::value_error("block_threads must be at least 1");
  Config c;
  c.skip_tokens = skip_tokens;
  c.binary_version = binary_version;
  c.block_threads = block_threads;
  c.shmem_base = shmem_base;
  c.local_base = local_base;
  c.first_line = first_line;
  c.record_lines = record_lines;
  for (const auto& item : classes) {
    const int v = item.second.cast<int>();
    if (v < 0 || v >= simsample::trace_scan::kNumMemClasses) throw py::value_error("memory class out of range");
    c.classes.emplace(item.first.cast<std::string>(), static_cast<MemClass>(v));
  }
  for (const auto& name : control_flow) c.control_flow.push_back(name.cast<std::string>());
  return c;
}

py::array_t<std::int64_t> to_array(const std::vector<std::int64_t>& v) {
  py::array_t<std::int64_t> a(static_cast<py::ssize_t>(v.size()));
  std::copy(v.begin(), v.end(), a.mutable_data());
  return a;
}

template <typename T>
py::array_t<T> to_array_of(const std::vector<T>& v) {
  py::array_t<T> a(static_cast<py::ssize_t>(v.size()));
  std::copy(v.begin(), v.end(), a.mutable_data());
  return a;
}

py::dict to_dict(const Result& r) {
  py::dict counts;
  for (int i = 0; i < simsample::trace_scan::kNumCounters; ++i) counts[simsample::trace_scan::kCounterNames[i]] = r.counts[i];
  py::dict out;
  out["counts"] = counts;
  out["bbv_keys"] = to_array(r.bbv_keys).reshape({static_cast<py::ssize_t>(r.bbv_keys.size() / 2), py::ssize_t{2}});
  out["bbv_values"] = to_array(r.bbv_values);
  out["types_indptr"] = to_array(r.types_indptr);
  out["types_indices"] = to_array(r.types_indices);
  out["types_data"] = to_array(r.types_data);
  out["type_counts"] = to_array(r.type_counts);
  out["line_reads"] = to_array_of(r.line_reads);
  out["line_read_counts"] = to_array_of(r.line_read_counts);
  out["line_writes"] = to_array_of(r.line_writes);
  return out;
}

}  // namespace

PYBIND11_MODULE(_trace_scan, mod) {
  mod.doc() = "Accel-Sim trace body scanner (C++ implementation of simsample_accelsim.scan_python).";
  mod.attr("implementation") = "native";

  scan_error_type = PyErr_NewException("simsample._trace_scan.ScanError", PyExc_ValueError, nullptr);
  if (scan_error_type == nullptr) throw py::error_already_set();
  mod.add_object("ScanError", py::handle(scan_error_type));

  py::tuple names(static_cast<py::size_t>(simsample::trace_scan::kNumCounters));
  for (int i = 0; i < simsample::trace_scan::kNumCounters; ++i) names[i] = simsample::trace_scan::kCounterNames[i];
  mod.attr("COUNTERS") = names;

  py::class_<Scanner>(mod, "Scanner", "Features of one trace body, fed in chunks of any size.")
      .def(py::init([](unsigned skip_tokens, int binary_version, std::uint64_t block_threads, std::uint64_t shmem_base,
                       std::uint64_t local_base, std::uint64_t first_line, const py::dict& classes,
                       const py::iterable& control_flow, bool record_lines) {
             return Scanner(make_config(skip_tokens, binary_version, block_threads, shmem_base, local_base, first_line,
                                        classes, control_flow, record_lines));
           }),
           py::kw_only(), py::arg("skip_tokens"), py::arg("binary_version"), py::arg("block_threads"),
           py::arg("shmem_base"), py::arg("local_base"), py::arg("first_line"), py::arg("classes"),
           py::arg("control_flow"), py::arg("record_lines") = false)
      .def(
          "feed",
          [](Scanner& s, const py::buffer& data) {
            const py::buffer_info info = data.request();
            const std::string_view bytes = simsample::pybuffer::contiguous_bytes(info, "feed()");
            try {
              py::gil_scoped_release nogil;
              s.feed(bytes.data(), bytes.size());
            } catch (const ScanError& e) {
              raise_scan_error(e);
            }
          },
          py::arg("data"), "Scan the next piece of the body (lines may be cut anywhere).")
      .def(
          "finish",
          [](Scanner& s) {
            Result r;
            try {
              py::gil_scoped_release nogil;
              r = s.finish();
            } catch (const ScanError& e) {
              raise_scan_error(e);
            }
            return to_dict(r);
          },
          "End of the body: counts and arrays in the layout of LaunchFeatures, and the footprint (line_reads, "
          "line_read_counts, line_writes; empty unless record_lines).");

  mod.def(
      "classify",
      [](const py::bytes& opcode, const py::dict& classes, const py::iterable& control_flow) {
        const Config c = make_config(0, 0, 1, 0, 0, 1, classes, control_flow);
        const std::string text = opcode;
        const auto info = simsample::trace_scan::classify(c, text.data(), text.data() + text.size());
        return py::make_tuple(static_cast<int>(info.mem_class), info.width, info.control_flow);
      },
      py::arg("opcode"), py::arg("classes"), py::arg("control_flow"),
      "Memory class, width in bytes and control-flow flag of an opcode (as opcodes.classify).");
}
