// pybind11 module simsample._sqlite_scan: whole integer columns of an SQLite table (see
// sqlite_columns.hpp), for the Nsight Systems reader (simsample.plugins.readers._nsys_sqlite.columns).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include <sqlite3.h>

#include "sqlite_columns.hpp"

namespace py = pybind11;
using simsample::sqlite_scan::Request;
using simsample::sqlite_scan::SqliteError;

namespace {

// A list with one int64 array per expression, None where some value was not an integer; None
// instead of the list when the table did not hold `rows` rows.
py::object read_int_columns(const std::string& uri, const std::string& table, const std::vector<std::string>& exprs,
                            std::int64_t rows, int threads) {
  if (rows < 0) throw py::value_error("rows must not be negative");
  if (exprs.empty()) throw py::value_error("no expressions to read");
  Request req{uri, table, exprs, rows, threads};
  py::array_t<std::int64_t> block({static_cast<py::ssize_t>(exprs.size()), static_cast<py::ssize_t>(rows)});
  std::int64_t* out = block.mutable_data();
  simsample::sqlite_scan::Result result;
  {
    py::gil_scoped_release nogil;
    result = simsample::sqlite_scan::read_columns(req, out);
  }
  if (!result.complete) return py::none();
  py::list columns;
  for (std::size_t c = 0; c < exprs.size(); ++c) {
    if (result.integral[c])
      columns.append(block[py::int_(c)]);
    else
      columns.append(py::none());
  }
  return std::move(columns);
}

}  // namespace

PYBIND11_MODULE(_sqlite_scan, m) {
  m.doc() = "Whole integer columns of an SQLite table, read through SQLite's C API (GIL released, rowid ranges in threads).";
  py::register_exception<SqliteError>(m, "SqliteError", PyExc_RuntimeError);
  m.def("read_int_columns", &read_int_columns, py::arg("uri"), py::arg("table"), py::arg("exprs"), py::arg("rows"),
        py::arg("threads") = 1,
        "One int64 array per SQL expression over every row of `table` (table order), None for an "
        "expression with a non-integer value; None instead of the list when the row count differs.");
  m.attr("sqlite_version") = std::string(sqlite3_libversion());
}
