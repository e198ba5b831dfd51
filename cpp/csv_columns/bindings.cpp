// pybind11 module simsample._csv_columns: the compiled CSV column scanner of the profile readers.
//
// simsample.io.tables.read_csv_table finds the header and the first data row, then asks
// scan_file (an uncompressed file, read in blocks with plain reads) or scan_buffer (decompressed
// bytes) for the columns it needs. The GIL is released while the body is scanned by several
// threads. The result is a dict of numpy arrays, or a str saying why the scanner does not take
// the input, for the caller to read it with pyarrow instead.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../common/contiguous_bytes.hpp"
#include "csv_columns.hpp"

namespace py = pybind11;
namespace cc = simsample::csv_columns;

namespace {

std::vector<cc::ColumnSpec> parse_specs(const std::vector<std::pair<std::size_t, std::string>>& columns) {
  std::vector<cc::ColumnSpec> specs;
  for (const auto& [index, kind] : columns) {
    cc::ColumnSpec s;
    s.index = index;
    if (kind == "number") {
      s.kind = cc::Kind::Number;
    } else if (kind == "dictionary") {
      s.kind = cc::Kind::Dictionary;
    } else if (kind == "corr_name") {
      s.kind = cc::Kind::CorrName;
    } else {
      throw py::value_error("unknown column kind '" + kind + "' (expected number, dictionary or corr_name)");
    }
    specs.push_back(s);
  }
  return specs;
}

// A str from UTF-8 bytes, or nothing when they are not valid UTF-8 (pyarrow refuses those).
py::object decode(std::string_view s) {
  PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "strict");
  if (o == nullptr) {
    PyErr_Clear();
    return py::none();
  }
  return py::reinterpret_steal<py::object>(o);
}

// Arrays from this size on are mapped memory (see MappedMemory): fewer page faults while filled.
constexpr std::size_t kMappedFrom = std::size_t{4} << 20;

struct Mapping {
  void* data;
  std::size_t bytes;
};

// An uninitialised 1-d array of n values.
template <typename T>
py::array_t<T> new_array(std::size_t n) {
  if (n * sizeof(T) < kMappedFrom) return py::array_t<T>(static_cast<py::ssize_t>(n));
  cc::MappedMemory memory(n * sizeof(T));
  auto* mapping = new Mapping{nullptr, memory.capacity()};
  mapping->data = memory.release();
  const py::capsule owner(mapping, [](void* m) {
    const auto* mapped = static_cast<Mapping*>(m);
    cc::unmap_memory(mapped->data, mapped->bytes);
    delete mapped;
  });
  return py::array_t<T>({static_cast<py::ssize_t>(n)}, {static_cast<py::ssize_t>(sizeof(T))},
                        static_cast<T*>(mapping->data), owner);
}

// The scanned columns as numpy arrays (dictionaries as codes and a list of str), or why not.
py::object to_python(cc::Scan& s, unsigned threads) {
  if (!s.taken()) return py::str(s.declined());
  const std::size_t n = s.rows();
  const auto& specs = s.specs();
  std::vector<py::array> numbers(specs.size()), codes(specs.size()), ids(specs.size());
  for (std::size_t c = 0; c < specs.size(); ++c) {
    if (specs[c].kind == cc::Kind::Number) {
      numbers[c] = new_array<double>(n);
    } else {
      codes[c] = new_array<std::int32_t>(n);
      if (specs[c].kind == cc::Kind::CorrName) ids[c] = new_array<std::int64_t>(n);
    }
  }
  std::string failure;  // why the columns could not be gathered (out of memory)
  {
    std::vector<void*> number_ptr(specs.size()), code_ptr(specs.size()), id_ptr(specs.size());
    for (std::size_t c = 0; c < specs.size(); ++c) {
      if (specs[c].kind == cc::Kind::Number) {
        number_ptr[c] = numbers[c].mutable_data();
      } else {
        code_ptr[c] = codes[c].mutable_data();
        if (specs[c].kind == cc::Kind::CorrName) id_ptr[c] = ids[c].mutable_data();
      }
    }
    py::gil_scoped_release nogil;
    std::vector<std::thread> pool;
    const unsigned t = std::max(1U, std::min<unsigned>(threads, static_cast<unsigned>(specs.size())));
    std::vector<std::string> errors(t);
    for (unsigned w = 0; w < t; ++w) {
      pool.emplace_back([&, w] {
        try {
          for (std::size_t c = w; c < specs.size(); c += t) {
            if (number_ptr[c]) s.gather_numbers(c, static_cast<double*>(number_ptr[c]));
            if (code_ptr[c]) s.gather_codes(c, static_cast<std::int32_t*>(code_ptr[c]));
            if (id_ptr[c]) s.gather_ids(c, static_cast<std::int64_t*>(id_ptr[c]));
          }
        } catch (const std::exception& e) {  // out of memory: an exception must not leave a thread
          errors[w] = e.what();
        }
      });
    }
    for (auto& th : pool) th.join();
    for (const auto& e : errors) {
      if (failure.empty()) failure = e;
    }
  }
  if (!failure.empty()) return py::str(failure);
  py::list columns;
  for (std::size_t c = 0; c < specs.size(); ++c) {
    if (specs[c].kind == cc::Kind::Number) {
      columns.append(numbers[c]);
      continue;
    }
    const cc::Dictionary& dict = s.dictionary(c);
    py::list uniques(dict.size());
    for (std::size_t i = 0; i < dict.size(); ++i) {
      py::object u = decode(dict.at(i));
      if (u.is_none()) return py::str("a value is not valid UTF-8");
      uniques[i] = u;
    }
    if (specs[c].kind == cc::Kind::CorrName) {
      columns.append(py::make_tuple(codes[c], uniques, ids[c]));
    } else {
      columns.append(py::make_tuple(codes[c], uniques));
    }
  }
  py::list bad;
  for (const auto& row : s.bad_rows()) {
    py::object text = decode(row.text);
    if (text.is_none()) return py::str("a row is not valid UTF-8");
    bad.append(py::make_tuple(row.fields, text));
  }
  py::dict out;
  out["rows"] = s.rows();
  out["columns"] = columns;
  out["bad_rows"] = bad;
  return out;
}

}  // namespace

PYBIND11_MODULE(_csv_columns, mod) {
  mod.doc() = "CSV column scanner of the profile readers (the compiled path of readers_util.read_csv_table).";
  mod.attr("implementation") = "native";

  mod.def(
      "scan_file",
      [](const std::string& path, std::uint64_t start, std::size_t ncols,
         const std::vector<std::pair<std::size_t, std::string>>& columns, unsigned threads,
         std::uint64_t piece_bytes) -> py::object {
        const auto specs = parse_specs(columns);
        cc::Scan s;
        std::string error;
        {
          py::gil_scoped_release nogil;
          try {
            const cc::FileSource source(path);
            s = cc::scan(source, start, ncols, specs, threads, piece_bytes);
          } catch (const std::runtime_error& e) {  // cannot open: pyarrow then names the problem
            error = e.what();
          }
        }
        if (!error.empty()) return py::str(error);
        return to_python(s, threads);
      },
      py::arg("path"), py::arg("start"), py::arg("ncols"), py::arg("columns"), py::arg("threads"),
      py::arg("piece_bytes") = 0,
      "Scan the rows of the file at path (bytes, file-system encoding) from byte offset start. columns: "
      "(field index, 'number' | 'dictionary' | 'corr_name') pairs; piece_bytes: how the body is cut for the "
      "threads (0: automatic). Returns {'rows', 'columns', 'bad_rows'} "
      "or a str saying why the input is not taken.");

  mod.def(
      "scan_buffer",
      [](const py::buffer& data, std::uint64_t start, std::size_t ncols,
         const std::vector<std::pair<std::size_t, std::string>>& columns, unsigned threads,
         std::uint64_t piece_bytes) -> py::object {
        const auto specs = parse_specs(columns);
        const py::buffer_info info = data.request();
        const std::string_view bytes = simsample::pybuffer::contiguous_bytes(info, "scan_buffer()");
        const cc::MemorySource source(bytes.data(), bytes.size());
        cc::Scan s;
        {
          py::gil_scoped_release nogil;
          s = cc::scan(source, start, ncols, specs, threads, piece_bytes);
        }
        return to_python(s, threads);
      },
      py::arg("data"), py::arg("start"), py::arg("ncols"), py::arg("columns"), py::arg("threads"),
      py::arg("piece_bytes") = 0,
      "As scan_file, for the rows in a bytes-like object from byte offset start.");

  mod.def(
      "split_line",
      [](const py::bytes& line) -> py::object {
        const auto fields = cc::split_line(std::string_view(line));
        if (!fields) return py::none();
        py::list out;
        for (const auto& f : *fields) out.append(py::bytes(f));
        return out;
      },
      py::arg("line"),
      "The fields of one line (no terminator) as bytes, unquoted as the scanner does; None when the "
      "scanner would not take the line (a quote left open, a carriage return).");
}
