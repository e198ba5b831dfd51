// Principal Kernel Projection (PKP) monitor: decides when a running kernel's IPC is stable
// enough to stop simulating it, and projects its total cycles and instructions.
//
// Header-only, dependency-free C++17. The same arithmetic is implemented in Python
// (simsample/pkp/monitor.py); both give bit-identical doubles because every value is computed
// with the same IEEE operations in the same order (no fused multiply-add: see the pragmas
// below) and the window's statistics are recomputed from the ring buffer at each sample.
//
// Semantics (PKA, MICRO'21, section 3.2, and its public artifact):
//  * The caller feeds the kernel's cycle count, cumulative instructions and cumulative
//    completed CTAs, either every cycle or every `period` cycles. A sample is taken whenever
//    the cycle reaches the next multiple of `period`; other calls cost one comparison.
//  * Signal: cumulative in-kernel IPC = instructions / cycles at each sample.
//  * Window: the last window / period samples (at least 2). The window is stable when its
//    coefficient of variation in percent, 100 * sample standard deviation / mean, is below
//    `threshold` (and the mean is positive). Stability is latched: once seen, the monitor
//    waits only for the wave condition.
//  * Wave condition: completed CTAs >= one wave (max resident CTAs per SM x SMs).
//    Grids smaller than one wave: the paper ignores the condition, the artifact requires
//    `small_grid_fraction` (0.3) of the grid. In every case at least one CTA must have
//    completed, otherwise no projection is defined.
//  * Enough left to cut (`min_remaining`, a share of the grid, 0 = off): a stop needs at least
//    that share of the CTAs still to be issued, counting one wave as resident (completed +
//    wave_size <= (1 - min_remaining) * total_ctas). Late in a kernel a stop saves little, and
//    the projection would stand for a tail it cannot see (the last CTAs running alone); such a
//    kernel runs to completion and its counts are exact. The count only grows, so once this
//    fails it fails for good.
//  * Projection at the stop: total = value_at_stop * total_ctas / completed (paper) or
//    / (completed + 1) (artifact), for cycles and instructions alike.
//  * Projection by instructions (`Projection::Instructions`, when the kernel's total
//    instructions are known ahead, `total_insns` > 0, e.g. counted from its trace): the IPC is
//    stable, so the cycles still to come are those the remaining instructions take at the rate
//    so far: projected cycles = L + (cycle - L) * total_insns / insns, projected instructions =
//    total_insns. Completed CTAs move in steps when CTAs run in synchronised waves, instructions
//    do not, so this projection does not depend on where in a wave the stop falls. Without a
//    total (0) it falls back to the paper's CTA projection.
//  * Launch latency apart (`launch_latency` L > 0 cycles): the simulator spends a fixed L
//    cycles after each launch before the first CTA runs. That part does not grow with the
//    grid, so it is kept out of both the signal and the scaling: samples start after L,
//    IPC = instructions / (cycle - L), and projected cycles = L + (cycle - L) * total / denom.
//    L = 0 gives the paper's formula exactly (same doubles).
//  * Settled (`settle` S > 0, a share of the run): stability also needs the cumulative IPC
//    samples of the last S of the kernel's run so far (after the launch latency) to have a
//    coefficient of variation below the threshold, not only the window's. A kernel whose IPC
//    is still moving (a memory-bound kernel whose L2 fills with dirty lines after a few waves,
//    then runs at a third of its early IPC) can look stable for one short window while its
//    cumulative IPC keeps drifting; it is stopped only once the IPC has held for that share of
//    its run, or not at all. The samples are kept in a fixed history of kHistory entries: every
//    `stride`-th sample, the stride doubling (every other entry dropped) when it fills, so it
//    always spans the whole run at least kHistory / 2 entries deep. S = 0: the paper's rule.
//  * The drain as the kernel's tail (`drain_tail`, applied by finish()): after a stop the
//    simulator issues no more CTAs and lets the resident ones run out. A kernel's real end is
//    the same event: once its last CTA is issued, the CTAs then resident run out with nothing
//    to overlap them, at a lower IPC that no sample before the stop can see (the projection
//    above lands a few percent low for that reason). The drain is a measured copy of that tail, so
//    finish() projects only the steady part and adds the drain as it was:
//    final cycles = L + (stop - L) * (total - tail) / denom + (end - stop), where tail is the
//    drain's share in the projection's own unit (instructions, or CTAs with the CTA
//    projections) and denom is the value at the stop; final instructions = total_insns
//    (instructions) or stop instructions * (total CTAs - tail CTAs) / denom + drain
//    instructions (CTAs). Without drain_tail the final values are the projections at the stop.
//
// No allocation after construction; no exceptions from update() or the getters.
#ifndef SIMSAMPLE_PKP_MONITOR_HPP
#define SIMSAMPLE_PKP_MONITOR_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>

#if defined(__clang__)
// Clang contracts only within one expression by default; the code below never writes a*b+c
// in one expression, so nothing can be fused.
#define SIMSAMPLE_PKP_STRICT_FP
#elif defined(__GNUC__)
// GCC contracts a*b+c into an FMA on targets that have one (aarch64, x86 with -march=...);
// that would change the rounding and break bit-identity with the Python twin.
#define SIMSAMPLE_PKP_STRICT_FP __attribute__((optimize("fp-contract=off"), noinline))
#else
#define SIMSAMPLE_PKP_STRICT_FP
#endif

namespace simsample {
namespace pkp {

enum class WaveRule : int { Paper = 0, Artifact = 1 };
enum class Projection : int { Paper = 0, Artifact = 1, Instructions = 2 };

struct Config {
  std::uint64_t period = 500;        // cycles between samples
  std::uint64_t window = 3000;       // cycles covered by the window (window / period samples)
  double threshold = 0.25;           // coefficient of variation, percent
  std::uint64_t total_ctas = 1;      // CTAs in the grid
  std::uint64_t wave_size = 1;       // max resident CTAs per SM x number of SMs
  WaveRule wave_rule = WaveRule::Paper;
  Projection projection = Projection::Paper;
  double small_grid_fraction = 0.3;  // artifact rule for grids smaller than one wave
  std::uint64_t launch_latency = 0;  // fixed cycles before the first CTA (0: paper's formula)
  std::uint64_t total_insns = 0;     // the kernel's instructions if known (Projection::Instructions)
  double min_remaining = 0.0;        // share of the grid that must remain to be issued at a stop
  bool drain_tail = false;           // finish(): count the drain as the kernel's tail
  double settle = 0.0;               // share of the run the IPC must have held (0: window only)
};

// nullptr when `c` is valid, else a message saying what is wrong (used before construction,
// so that the hot path never has to report errors).
inline const char* validate(const Config& c) noexcept {
  if (c.period == 0) return "period must be at least 1 cycle";
  if (c.window / c.period < 2) return "window must span at least 2 sample periods";
  if (c.window / c.period > (std::uint64_t{1} << 20)) return "window spans too many samples (at most 1048576)";
  if (!(c.threshold > 0.0) || !std::isfinite(c.threshold)) return "threshold must be a positive number (percent)";
  if (c.total_ctas == 0) return "total_ctas must be at least 1";
  if (c.wave_size == 0) return "wave_size must be at least 1";
  if (c.wave_rule != WaveRule::Paper && c.wave_rule != WaveRule::Artifact) return "unknown wave rule";
  if (c.projection != Projection::Paper && c.projection != Projection::Artifact &&
      c.projection != Projection::Instructions)
    return "unknown projection";
  if (!(c.small_grid_fraction > 0.0) || !(c.small_grid_fraction <= 1.0))
    return "small_grid_fraction must be in (0, 1]";
  if (!(c.min_remaining >= 0.0) || !(c.min_remaining < 1.0)) return "min_remaining must be in [0, 1)";
  if (!(c.settle >= 0.0) || !(c.settle < 1.0)) return "settle must be in [0, 1)";
  return nullptr;
}

// value * total / denominator, rounded half up: the integers printed by the simulator hook.
inline std::uint64_t round_projection(double x) noexcept {
  if (!(x >= 0.0)) return 0;
  if (x >= 18446744073709551615.0) return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(std::floor(x + 0.5));
}

class Monitor {
 public:
  // `c` must be valid (see validate()); an invalid config is clamped to something harmless
  // rather than throwing, so that a simulator never dies inside the hook.
  explicit Monitor(const Config& c)
      : cfg_(c),
        n_(window_length(c)),
        ring_(new double[n_]),
        hist_cycle_(new std::uint64_t[kHistory]),
        hist_ipc_(new double[kHistory]) {
    if (cfg_.period == 0) cfg_.period = 1;
    restart(c.total_ctas, c.wave_size, c.total_insns);
  }

  // Samples in the window: window / period, clamped to [2, 2^20].
  static std::size_t window_length(const Config& c) noexcept {
    const std::uint64_t n = c.period ? c.window / c.period : 2;
    if (n < 2) return 2;
    if (n > (std::uint64_t{1} << 20)) return std::size_t{1} << 20;
    return static_cast<std::size_t>(n);
  }

  Monitor(const Monitor&) = delete;
  Monitor& operator=(const Monitor&) = delete;
  Monitor(Monitor&&) noexcept = default;
  Monitor& operator=(Monitor&&) noexcept = default;

  // Start over for a new kernel (same period, window, threshold and rules); `total_insns` is
  // the new kernel's instruction count if known (0: unknown).
  void restart(std::uint64_t total_ctas, std::uint64_t wave_size, std::uint64_t total_insns = 0) noexcept {
    cfg_.total_ctas = total_ctas ? total_ctas : 1;
    cfg_.wave_size = wave_size ? wave_size : 1;
    cfg_.total_insns = total_insns;
    next_due_ = cfg_.period;
    head_ = 0;
    count_ = 0;
    samples_ = 0;
    stable_seen_ = false;
    stopped_ = false;
    stable_since_ = 0;
    last_ipc_ = 0.0;
    last_cov_ = std::numeric_limits<double>::quiet_NaN();
    stop_cycle_ = stop_insns_ = stop_ctas_ = 0;
    projected_cycles_ = projected_insns_ = std::numeric_limits<double>::quiet_NaN();
    finished_ = false;
    final_cycles_ = final_insns_ = std::numeric_limits<double>::quiet_NaN();
    for (std::size_t i = 0; i < n_; ++i) ring_[i] = 0.0;
    hist_len_ = 0;
    hist_stride_ = 1;
    last_settle_cov_ = std::numeric_limits<double>::quiet_NaN();
  }

  // Entries of the settle history (a power of two).
  static constexpr std::size_t kHistory = 128;

  // Feed the kernel's state; returns true once the kernel may stop (and from then on,
  // ignoring further input). `cycle` counts from the kernel's launch (> 0).
  bool update(std::uint64_t cycle, std::uint64_t insns, std::uint64_t completed_ctas) noexcept {
    if (stopped_) return true;
    if (cycle < next_due_) return false;
    return sample(cycle, insns, completed_ctas);
  }

  // The stopped kernel has ended (its resident CTAs drained): `cycle`, `insns` and
  // `completed_ctas` are its final counts. Sets the final projections (see drain_tail at the
  // top); returns false, changing nothing, if the kernel was not stopped or finish() was
  // already called. Counts below the stop's are taken as the stop's (no drain).
  SIMSAMPLE_PKP_STRICT_FP bool finish(std::uint64_t cycle, std::uint64_t insns,
                                      std::uint64_t completed_ctas) noexcept {
    if (!stopped_ || finished_) return false;
    finished_ = true;
    if (!cfg_.drain_tail) {
      final_cycles_ = projected_cycles_;
      final_insns_ = projected_insns_;
      return true;
    }
    const std::uint64_t tail_cycles = cycle > stop_cycle_ ? cycle - stop_cycle_ : 0;
    const std::uint64_t tail_insns = insns > stop_insns_ ? insns - stop_insns_ : 0;
    const std::uint64_t tail_ctas = completed_ctas > stop_ctas_ ? completed_ctas - stop_ctas_ : 0;
    const std::uint64_t l = cfg_.launch_latency;
    const std::uint64_t run = stop_cycle_ > l ? stop_cycle_ - l : 0;
    if (by_instructions(stop_insns_)) {
      const std::uint64_t steady = cfg_.total_insns > tail_insns ? cfg_.total_insns - tail_insns : 0;
      const double body = add_fixed(l, project_value(run, steady, stop_insns_));
      final_cycles_ = body + static_cast<double>(tail_cycles);
      final_insns_ = static_cast<double>(cfg_.total_insns);
    } else {
      const std::uint64_t steady = cfg_.total_ctas > tail_ctas ? cfg_.total_ctas - tail_ctas : 0;
      const std::uint64_t denom = cfg_.projection == Projection::Artifact ? stop_ctas_ + 1 : stop_ctas_;
      const double body = add_fixed(l, project_value(run, steady, denom));
      final_cycles_ = body + static_cast<double>(tail_cycles);
      const double steady_insns = project_value(stop_insns_, steady, denom);
      final_insns_ = steady_insns + static_cast<double>(tail_insns);
    }
    return true;
  }

  bool stopped() const noexcept { return stopped_; }
  bool finished() const noexcept { return finished_; }
  double final_cycles() const noexcept { return final_cycles_; }  // NaN until finished
  double final_insns() const noexcept { return final_insns_; }
  bool stable_seen() const noexcept { return stable_seen_; }
  std::uint64_t stable_since() const noexcept { return stable_since_; }  // cycle; 0 = never
  std::uint64_t samples() const noexcept { return samples_; }
  std::size_t window_samples() const noexcept { return n_; }
  double last_ipc() const noexcept { return last_ipc_; }
  double last_cov() const noexcept { return last_cov_; }  // NaN until the window is full
  // CoV (percent) of the cumulative IPC over the settle span, computed at the last sample whose
  // window was stable before stability was seen; NaN when not computed (settle 0, fewer than 2
  // samples in the span, or no such sample yet).
  double last_settle_cov() const noexcept { return last_settle_cov_; }
  std::uint64_t stop_cycle() const noexcept { return stop_cycle_; }  // 0 until stopped
  std::uint64_t stop_insns() const noexcept { return stop_insns_; }
  std::uint64_t stop_ctas() const noexcept { return stop_ctas_; }
  double projected_cycles() const noexcept { return projected_cycles_; }  // NaN until stopped
  double projected_insns() const noexcept { return projected_insns_; }
  const Config& config() const noexcept { return cfg_; }

  // Whether `completed` CTAs satisfy the wave rule (and the at-least-one-CTA guard).
  bool wave_ok(std::uint64_t completed) const noexcept {
    if (completed < 1) return false;
    if (cfg_.total_ctas < cfg_.wave_size) {
      if (cfg_.wave_rule == WaveRule::Paper) return true;
      return static_cast<double>(completed) >= cfg_.small_grid_fraction * static_cast<double>(cfg_.total_ctas);
    }
    return completed >= cfg_.wave_size;
  }

  // Whether enough of the grid remains to be issued for a stop with `completed` CTAs done.
  SIMSAMPLE_PKP_STRICT_FP bool remaining_ok(std::uint64_t completed) const noexcept {
    if (!(cfg_.min_remaining > 0.0)) return true;
    const double issued = static_cast<double>(completed) + static_cast<double>(cfg_.wave_size);
    const double limit = (1.0 - cfg_.min_remaining) * static_cast<double>(cfg_.total_ctas);
    return issued <= limit;
  }

  // value * total / completed (paper and instructions) or / (completed + 1) (artifact).
  double project(std::uint64_t value, std::uint64_t completed) const noexcept {
    const std::uint64_t denom = cfg_.projection == Projection::Artifact ? completed + 1 : completed;
    return project_value(value, cfg_.total_ctas, denom);
  }

  // Whether a stop projects by instructions: that projection, a known total, some progress.
  bool by_instructions(std::uint64_t insns) const noexcept {
    return cfg_.projection == Projection::Instructions && cfg_.total_insns > 0 && insns > 0;
  }

  // Projected cycles of a kernel stopped at `cycle`: the launch latency is added once, only
  // the cycles after it are scaled, by CTAs (L = 0: project(cycle, completed)) or by
  // instructions (see by_instructions()).
  double project_cycles(std::uint64_t cycle, std::uint64_t completed, std::uint64_t insns = 0) const noexcept {
    const std::uint64_t l = cfg_.launch_latency;
    const std::uint64_t run = cycle > l ? cycle - l : 0;
    if (by_instructions(insns)) return add_fixed(l, project_value(run, cfg_.total_insns, insns));
    return add_fixed(l, project(run, completed));
  }

  // Projected instructions of a kernel stopped with `insns` done and `completed` CTAs.
  double project_insns(std::uint64_t insns, std::uint64_t completed) const noexcept {
    if (by_instructions(insns)) return static_cast<double>(cfg_.total_insns);
    return project(insns, completed);
  }

 private:
  SIMSAMPLE_PKP_STRICT_FP static double project_value(std::uint64_t value, std::uint64_t total,
                                                      std::uint64_t denom) noexcept {
    if (denom == 0) return std::numeric_limits<double>::quiet_NaN();
    return static_cast<double>(value) * static_cast<double>(total) / static_cast<double>(denom);
  }

  static double add_fixed(std::uint64_t fixed, double x) noexcept {
    return static_cast<double>(fixed) + x;
  }

  SIMSAMPLE_PKP_STRICT_FP bool sample(std::uint64_t cycle, std::uint64_t insns,
                                      std::uint64_t completed) noexcept {
    next_due_ = (cycle / cfg_.period + 1) * cfg_.period;
    // With the launch latency apart, nothing is sampled until the first CTA can run.
    if (cycle <= cfg_.launch_latency) return false;
    ++samples_;
    const double ipc =
        static_cast<double>(insns) / static_cast<double>(cycle - cfg_.launch_latency);
    last_ipc_ = ipc;
    ring_[head_] = ipc;
    head_ = head_ + 1 == n_ ? 0 : head_ + 1;
    const bool kept = remember(cycle, ipc);
    if (count_ < n_) ++count_;
    if (count_ == n_) {
      // Oldest first (head_ now points at the oldest entry), one fixed order of additions.
      double sum = 0.0;
      for (std::size_t j = 0, i = head_; j < n_; ++j, i = (i + 1 == n_ ? 0 : i + 1)) sum += ring_[i];
      const double mean = sum / static_cast<double>(n_);
      double ss = 0.0;
      for (std::size_t j = 0, i = head_; j < n_; ++j, i = (i + 1 == n_ ? 0 : i + 1)) {
        const double d = ring_[i] - mean;
        const double sq = d * d;
        ss += sq;
      }
      const double sd = std::sqrt(ss / static_cast<double>(n_ - 1));
      if (mean > 0.0) {
        last_cov_ = sd / mean * 100.0;
      } else {
        last_cov_ = std::numeric_limits<double>::infinity();
      }
      if (!stable_seen_ && mean > 0.0 && last_cov_ < cfg_.threshold && settled(cycle, ipc, kept)) {
        stable_seen_ = true;
        stable_since_ = cycle;
      }
    }
    if (stable_seen_ && wave_ok(completed) && remaining_ok(completed)) {
      stopped_ = true;
      stop_cycle_ = cycle;
      stop_insns_ = insns;
      stop_ctas_ = completed;
      projected_cycles_ = project_cycles(cycle, completed, insns);
      projected_insns_ = project_insns(insns, completed);
    }
    return stopped_;
  }

  // Keep every hist_stride_-th sample; when full, drop every other entry and double the stride
  // (entry p holds sample (p + 1) x stride, so the odd positions are the multiples of 2 x stride).
  bool remember(std::uint64_t cycle, double ipc) noexcept {
    if (samples_ % hist_stride_ != 0) return false;
    if (hist_len_ == kHistory) {
      for (std::size_t p = 1, q = 0; p < kHistory; p += 2, ++q) {
        hist_cycle_[q] = hist_cycle_[p];
        hist_ipc_[q] = hist_ipc_[p];
      }
      hist_len_ = kHistory / 2;
      hist_stride_ *= 2;
      if (samples_ % hist_stride_ != 0) return false;
    }
    hist_cycle_[hist_len_] = cycle;
    hist_ipc_[hist_len_] = ipc;
    ++hist_len_;
    return true;
  }

  // Whether the cumulative IPC held over the last `settle` of the run: the kept samples at or
  // after L + (cycle - L) x (1 - settle), and the current one, have a CoV below the threshold.
  SIMSAMPLE_PKP_STRICT_FP bool settled(std::uint64_t cycle, double ipc, bool kept) noexcept {
    last_settle_cov_ = std::numeric_limits<double>::quiet_NaN();
    if (!(cfg_.settle > 0.0)) return true;
    const double run = static_cast<double>(cycle - cfg_.launch_latency);
    const double from = static_cast<double>(cfg_.launch_latency) + run * (1.0 - cfg_.settle);
    std::size_t first = hist_len_;
    for (std::size_t p = 0; p < hist_len_; ++p) {
      if (static_cast<double>(hist_cycle_[p]) >= from) {
        first = p;
        break;
      }
    }
    const std::size_t count = (hist_len_ - first) + (kept ? 0 : 1);
    if (count < 2) return true;  // the window alone decides
    double sum = 0.0;
    for (std::size_t p = first; p < hist_len_; ++p) sum += hist_ipc_[p];
    if (!kept) sum += ipc;
    const double mean = sum / static_cast<double>(count);
    double ss = 0.0;
    for (std::size_t p = first; p < hist_len_; ++p) {
      const double d = hist_ipc_[p] - mean;
      const double sq = d * d;
      ss += sq;
    }
    if (!kept) {
      const double d = ipc - mean;
      const double sq = d * d;
      ss += sq;
    }
    const double sd = std::sqrt(ss / static_cast<double>(count - 1));
    if (!(mean > 0.0)) {
      last_settle_cov_ = std::numeric_limits<double>::infinity();
      return false;
    }
    last_settle_cov_ = sd / mean * 100.0;
    return last_settle_cov_ < cfg_.threshold;
  }

  Config cfg_;
  std::size_t n_;
  std::unique_ptr<double[]> ring_;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
  std::uint64_t next_due_ = 0;
  std::uint64_t samples_ = 0;
  bool stable_seen_ = false;
  bool stopped_ = false;
  std::uint64_t stable_since_ = 0;
  double last_ipc_ = 0.0;
  double last_cov_ = 0.0;
  std::uint64_t stop_cycle_ = 0;
  std::uint64_t stop_insns_ = 0;
  std::uint64_t stop_ctas_ = 0;
  double projected_cycles_ = 0.0;
  double projected_insns_ = 0.0;
  bool finished_ = false;
  double final_cycles_ = 0.0;
  double final_insns_ = 0.0;
  std::unique_ptr<std::uint64_t[]> hist_cycle_;
  std::unique_ptr<double[]> hist_ipc_;
  std::size_t hist_len_ = 0;
  std::uint64_t hist_stride_ = 1;
  double last_settle_cov_ = 0.0;
};

}  // namespace pkp
}  // namespace simsample

#undef SIMSAMPLE_PKP_STRICT_FP

#endif  // SIMSAMPLE_PKP_MONITOR_HPP
