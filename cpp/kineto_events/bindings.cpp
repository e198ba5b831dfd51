// pybind11 module simsample._kineto_events: the compiled kernel-event extractor for Kineto traces.
//
// Python (simsample.plugins.readers._kineto.native) hands over the whole decompressed trace and gets the
// kernels' columns as numpy arrays, their distinct names as bytes with an int32 code per kernel,
// the number of memory-copy events and the raw JSON text of a few top-level values, or None when
// the extractor does not take the file (the Python paths then read it, or name what is wrong).
// The GIL is released while the text is scanned (by several threads for a large text); the arrays
// take over the scanner's buffers.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../common/contiguous_bytes.hpp"
#include "kineto_events.hpp"

namespace py = pybind11;
using simsample::kineto_events::Kernels;
using simsample::kineto_events::OptionalField;
using simsample::kineto_events::Request;

namespace {

// A numpy array owning the vector's memory (no copy of the column).
template <class T>
py::array_t<T> to_array(std::vector<T>&& values) {
  if (values.empty()) return py::array_t<T>(0);
  auto* owned = new std::vector<T>(std::move(values));
  py::capsule owner(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(static_cast<py::ssize_t>(owned->size()), owned->data(), owner);
}

py::dict to_dict(Kernels&& k) {
  py::dict out;
  out["start_ns"] = to_array(std::move(k.start_ns));
  out["duration_ns"] = to_array(std::move(k.duration_ns));
  static const char* const kAxes[3] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i) {
    out[py::str(std::string("grid_") + kAxes[i])] = to_array(std::move(k.grid[i]));
    out[py::str(std::string("block_") + kAxes[i])] = to_array(std::move(k.block[i]));
  }
  py::list fields;
  for (std::size_t i = 0; i < k.fields.size(); ++i)
    fields.append(py::make_tuple(to_array(std::move(k.fields[i])), k.fields_present[i]));
  out["fields"] = fields;
  out["name_codes"] = to_array(std::move(k.name_codes));
  py::list names;
  for (const std::string& name : k.names) names.append(py::bytes(name));
  out["names"] = names;
  out["memcpy"] = k.memcpy;
  out["parts"] = k.parts;
  py::list meta;
  for (const std::string_view text : k.meta) {  // views into the input, still held by the caller
    if (text.empty()) {
      meta.append(py::none());
    } else {
      meta.append(py::bytes(text.data(), text.size()));
    }
  }
  out["meta"] = meta;
  return out;
}

}  // namespace

PYBIND11_MODULE(_kineto_events, mod) {
  mod.doc() = "Kernel events of Kineto (PyTorch profiler) trace JSON, extracted in one pass (C++).";
  mod.attr("implementation") = "native";

  mod.def(
      "extract",
      [](const py::buffer& data, const std::vector<std::pair<std::string, std::int64_t>>& fields,
         const std::vector<std::string>& meta_keys, unsigned threads, std::size_t min_part) -> py::object {
        Request request;
        for (const auto& f : fields) request.fields.push_back(OptionalField{f.first, f.second});
        request.meta_keys = meta_keys;
        const py::buffer_info info = data.request();
        const std::string_view text = simsample::pybuffer::contiguous_bytes(info, "extract()");
        std::optional<Kernels> got;
        {
          py::gil_scoped_release nogil;
          got = simsample::kineto_events::extract(text, request, threads, min_part);
        }
        if (!got) return py::none();
        return to_dict(std::move(*got));
      },
      py::arg("data"), py::arg("fields"), py::arg("meta_keys"), py::arg("threads") = 1,
      py::arg("min_part") = simsample::kineto_events::kMinPartBytes,
      "Kernels of a whole trace text as a dict of columns, or None when the text is not taken.\n\n"
      "fields: (args key, value when absent) of the optional integer args fields, in column order;\n"
      "meta_keys: top-level keys whose values' JSON text is returned (None where absent);\n"
      "threads: how many threads may scan parts of the text at the same time (the result is that of\n"
      "one scan), given at least min_part bytes per part; the dict's \"parts\" says how many parts\n"
      "were scanned and merged.");
}
