// Benchmark driver for the PKP monitor: nanoseconds per update() when fed every cycle (the
// simulator hook's case) and per sample when fed every `period` cycles. Built and run by
// benchmarks/bench_pkp.py; prints one JSON object.
//
// usage: bench_pkp CYCLES PERIOD WINDOW
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "pkp_monitor.hpp"

using simsample::pkp::Config;
using simsample::pkp::Monitor;

namespace {

Config config(std::uint64_t period, std::uint64_t window) {
  Config c;
  c.period = period;
  c.window = window;
  c.threshold = 1e-12;  // never stable: every call does the full work
  c.total_ctas = 1u << 30;
  c.wave_size = 80;
  return c;
}

// Feeds `cycles` consecutive cycles; returns ns per call.
double every_cycle(std::uint64_t cycles, std::uint64_t period, std::uint64_t window, std::uint64_t& sink) {
  Monitor m(config(period, window));
  std::uint64_t insns = 0, ctas = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (std::uint64_t c = 1; c <= cycles; ++c) {
    insns += 37 + (c & 7);
    ctas += (c & 1023) == 0;
    sink += m.update(c, insns, ctas);
  }
  const auto t1 = std::chrono::steady_clock::now();
  sink += m.samples();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(cycles);
}

// Feeds only the sample cycles (every `period`); returns ns per call (= per sample).
double every_period(std::uint64_t samples, std::uint64_t period, std::uint64_t window, std::uint64_t& sink) {
  Monitor m(config(period, window));
  std::uint64_t insns = 0, ctas = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (std::uint64_t s = 1; s <= samples; ++s) {
    insns += 37 * period + (s & 7);
    ctas += (s & 3) == 0;
    sink += m.update(s * period, insns, ctas);
  }
  const auto t1 = std::chrono::steady_clock::now();
  sink += m.samples();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(samples);
}

// The loop alone (same input generation, no monitor): what the hook's numbers include anyway.
double baseline(std::uint64_t cycles, std::uint64_t& sink) {
  volatile std::uint64_t v = 0;
  std::uint64_t insns = 0, ctas = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (std::uint64_t c = 1; c <= cycles; ++c) {
    insns += 37 + (c & 7);
    ctas += (c & 1023) == 0;
    v = insns + ctas;
  }
  const auto t1 = std::chrono::steady_clock::now();
  sink += v;
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(cycles);
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t cycles = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100000000ULL;
  const std::uint64_t period = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 500;
  const std::uint64_t window = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 3000;
  if (const char* err = simsample::pkp::validate(config(period, window))) {
    std::fprintf(stderr, "bench_pkp: %s\n", err);
    return 2;
  }
  std::uint64_t sink = 0;
  every_cycle(cycles / 10, period, window, sink);  // warm-up
  const double per_cycle = every_cycle(cycles, period, window, sink);
  const double per_sample = every_period(cycles / 50, period, window, sink);
  const double loop = baseline(cycles, sink);
  std::printf("{\"cycles\": %llu, \"period\": %llu, \"window\": %llu, \"ns_per_cycle\": %.3f, "
              "\"ns_per_sample\": %.3f, \"ns_loop_only\": %.3f, \"sink\": %llu}\n",
              (unsigned long long)cycles, (unsigned long long)period, (unsigned long long)window, per_cycle,
              per_sample, loop, (unsigned long long)(sink & 1));
  return 0;
}
