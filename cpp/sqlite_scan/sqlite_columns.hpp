// Whole integer columns of an SQLite table, read through SQLite's C API.
//
// The Nsight Systems reader needs a dozen integer columns of every row of a table with millions
// of rows. Row-by-row reading through Python costs a Python object per value, and the Arrow
// driver spends more time building its buffers than SQLite spends decoding the records; here each
// value goes from sqlite3_column_int64 straight into a caller-owned int64 array. Large tables are
// split into rowid ranges read by several threads, one read-only connection each, so the record
// decoding (SQLite's own cost, single-threaded per connection) runs on several cores; ranges are
// written at their offsets, so the result is in table (rowid) order, as a plain scan returns it.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace simsample::sqlite_scan {

// A database that cannot be opened or a statement that cannot be prepared or stepped.
class SqliteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Request {
  std::string uri;                 // an SQLite URI (file:...?mode=ro), opened read-only
  std::string table;               // table name, quoted by the caller's SQL rules ("" doubled)
  std::vector<std::string> exprs;  // SQL expressions over one row, one output column each
  std::int64_t rows = 0;           // the table's row count, as counted by the caller
  int threads = 1;                 // 1 reads in one plain scan; more split the rowid range
};

struct Result {
  // Per column: false when some row's value was not an INTEGER (NULL, REAL, TEXT, BLOB).
  std::vector<bool> integral;
  // false when the rows read differ from Request::rows (the table changed, or rowids repeat).
  bool complete = true;
};

// Fills out (rows * exprs.size() values, column after column: column c starts at c * rows) with
// the expressions' values over every row. Throws SqliteError when the database cannot be read.
// Touches no Python object: the caller may release the GIL around it.
Result read_columns(const Request& req, std::int64_t* out);

}  // namespace simsample::sqlite_scan
