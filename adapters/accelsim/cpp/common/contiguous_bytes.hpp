// Shared by the pybind11 bindings of the compiled modules: the memory of a bytes-like Python
// object (bytes, bytearray, mmap, or a memoryview of one) as a view, for scanning with the GIL
// released. The caller keeps the py::buffer_info alive while it uses the view: that holds the
// object's buffer export, so a bytearray or mmap cannot be resized or closed underneath.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace simsample::pybuffer {

// The buffer's bytes; a strided or multi-dimensional buffer is a TypeError naming `caller`.
inline std::string_view contiguous_bytes(const pybind11::buffer_info& info, const char* caller) {
  if (info.ndim > 1 || (info.ndim == 1 && info.strides[0] != info.itemsize))
    throw pybind11::type_error(std::string(caller) + " needs a contiguous bytes-like object");
  return {static_cast<const char*>(info.ptr), static_cast<std::size_t>(info.size * info.itemsize)};
}

}  // namespace simsample::pybuffer
