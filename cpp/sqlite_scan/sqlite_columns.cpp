// Whole integer columns of an SQLite table: see sqlite_columns.hpp.
#include "sqlite_columns.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

namespace simsample::sqlite_scan {
namespace {

// One read-only connection, closed on scope exit.
class Connection {
 public:
  explicit Connection(const std::string& uri) {
    const int flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX;
    const int rc = sqlite3_open_v2(uri.c_str(), &db_, flags, nullptr);
    if (rc != SQLITE_OK) {
      const std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
      sqlite3_close(db_);
      db_ = nullptr;
      throw SqliteError("cannot open " + uri + ": " + msg);
    }
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection() { sqlite3_close(db_); }
  sqlite3* get() const { return db_; }

 private:
  sqlite3* db_ = nullptr;
};

// One prepared statement, finalized on scope exit.
class Statement {
 public:
  Statement(const Connection& conn, const std::string& sql) : db_(conn.get()) {
    if (sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt_, nullptr) != SQLITE_OK)
      throw SqliteError(std::string("cannot prepare `") + sql + "`: " + sqlite3_errmsg(db_));
  }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement() { sqlite3_finalize(stmt_); }
  sqlite3_stmt* get() const { return stmt_; }

  // true while there is a row; throws on an error.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw SqliteError(std::string("cannot read: ") + sqlite3_errmsg(db_));
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

std::string select_sql(const Request& req, bool ranged) {
  std::string sql = "SELECT ";
  for (std::size_t i = 0; i < req.exprs.size(); ++i) {
    if (i) sql += ", ";
    sql += req.exprs[i];
  }
  sql += " FROM \"" + req.table + "\" NOT INDEXED";
  if (ranged) sql += " WHERE rowid BETWEEN ?1 AND ?2";
  return sql;
}

// Rows [first, first + count) of the output, from one statement's rows. Returns the rows read
// (stopping at count + 1, which tells the caller the table holds more than it was told).
std::int64_t fill(Statement& stmt, const Request& req, std::int64_t* out, std::int64_t first, std::int64_t count,
                  std::vector<char>& integral) {
  const int ncols = static_cast<int>(req.exprs.size());
  sqlite3_stmt* s = stmt.get();
  std::int64_t got = 0;
  while (stmt.step()) {
    if (got == count) return got + 1;
    const std::int64_t row = first + got;
    for (int c = 0; c < ncols; ++c) {
      std::int64_t* slot = out + static_cast<std::int64_t>(c) * req.rows + row;
      // one column call per value (each takes and checks the connection's state); the value
      // accessors after it are plain reads
      sqlite3_value* v = sqlite3_column_value(s, c);
      if (sqlite3_value_type(v) == SQLITE_INTEGER) {
        *slot = sqlite3_value_int64(v);
      } else {
        *slot = 0;
        integral[c] = 0;
      }
    }
    ++got;
  }
  return got;
}

// Runs fn(i) for i in [0, n) on n threads and rethrows the first exception.
template <class Fn>
void parallel(int n, Fn fn) {
  std::vector<std::thread> pool;
  std::exception_ptr error;
  std::mutex lock;
  for (int i = 0; i < n; ++i) {
    pool.emplace_back([&, i] {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> guard(lock);
        if (!error) error = std::current_exception();
      }
    });
  }
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace

Result read_columns(const Request& req, std::int64_t* out) {
  const std::size_t ncols = req.exprs.size();
  Result result;
  std::vector<char> integral(ncols, 1);
  int threads = std::max(1, req.threads);
  Connection conn(req.uri);

  // Rowid ranges of about equal span, when the rowids are exactly min..max (an nsys export's
  // are: rows are only ever appended): then each range's place in the output is known without
  // counting. Other tables (a view, WITHOUT ROWID, gaps after deletions) are read in one scan.
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  if (threads > 1 && req.rows >= 2 * threads) {
    try {
      Statement bounds(conn, "SELECT min(rowid), max(rowid) FROM \"" + req.table + "\"");
      if (bounds.step() && sqlite3_column_type(bounds.get(), 0) == SQLITE_INTEGER) {
        const std::int64_t lo = sqlite3_column_int64(bounds.get(), 0);
        const std::int64_t hi = sqlite3_column_int64(bounds.get(), 1);
        if (hi - lo + 1 == req.rows) {
          for (int i = 0; i < threads; ++i)
            ranges.emplace_back(lo + req.rows * i / threads, lo + req.rows * (i + 1) / threads - 1);
        }
      }
    } catch (const SqliteError&) {
      ranges.clear();  // no rowid to split by: one plain scan
    }
  }

  if (ranges.empty()) {
    Statement stmt(conn, select_sql(req, false));
    const std::int64_t got = fill(stmt, req, out, 0, req.rows, integral);
    result.complete = got == req.rows;
  } else {
    const int n = static_cast<int>(ranges.size());
    const std::int64_t lo = ranges.front().first;
    std::vector<std::vector<char>> flags(n, std::vector<char>(ncols, 1));
    std::atomic<bool> complete{true};
    parallel(n, [&](int i) {
      Connection c(req.uri);
      Statement stmt(c, select_sql(req, true));
      sqlite3_bind_int64(stmt.get(), 1, ranges[i].first);
      sqlite3_bind_int64(stmt.get(), 2, ranges[i].second);
      const std::int64_t count = ranges[i].second - ranges[i].first + 1;
      if (fill(stmt, req, out, ranges[i].first - lo, count, flags[i]) != count) complete = false;
    });
    result.complete = complete;
    for (const auto& f : flags)
      for (std::size_t c = 0; c < ncols; ++c) integral[c] = integral[c] && f[c];
  }
  result.integral.assign(integral.begin(), integral.end());
  return result;
}

}  // namespace simsample::sqlite_scan
