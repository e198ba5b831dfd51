// pybind11 module simsample._pkp: the C++ PKP monitor with the same Python interface as the
// pure-Python twin in simsample/pkp/monitor.py (values not yet defined are None).
#include <pybind11/pybind11.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "pkp_monitor.hpp"

namespace py = pybind11;
using simsample::pkp::Config;
using simsample::pkp::Monitor;
using simsample::pkp::Projection;
using simsample::pkp::WaveRule;

namespace {

WaveRule parse_wave_rule(const std::string& s) {
  if (s == "paper") return WaveRule::Paper;
  if (s == "artifact") return WaveRule::Artifact;
  throw py::value_error("wave_rule must be 'paper' or 'artifact', not '" + s + "'");
}

Projection parse_projection(const std::string& s) {
  if (s == "paper") return Projection::Paper;
  if (s == "artifact") return Projection::Artifact;
  if (s == "instructions") return Projection::Instructions;
  throw py::value_error("projection must be 'paper', 'artifact' or 'instructions', not '" + s + "'");
}

const char* name(WaveRule r) { return r == WaveRule::Paper ? "paper" : "artifact"; }
const char* name(Projection p) {
  return p == Projection::Paper ? "paper" : p == Projection::Artifact ? "artifact" : "instructions";
}

Monitor make_monitor(std::uint64_t period, std::uint64_t window, double threshold,
                     std::uint64_t total_ctas, std::uint64_t wave_size, const std::string& wave_rule,
                     const std::string& projection, double small_grid_fraction,
                     std::uint64_t launch_latency, std::uint64_t total_insns, double min_remaining,
                     bool drain_tail, double settle) {
  Config c;
  c.period = period;
  c.window = window;
  c.threshold = threshold;
  c.total_ctas = total_ctas;
  c.wave_size = wave_size;
  c.wave_rule = parse_wave_rule(wave_rule);
  c.projection = parse_projection(projection);
  c.small_grid_fraction = small_grid_fraction;
  c.launch_latency = launch_latency;
  c.total_insns = total_insns;
  c.min_remaining = min_remaining;
  c.drain_tail = drain_tail;
  c.settle = settle;
  if (const char* err = simsample::pkp::validate(c)) throw py::value_error(err);
  return Monitor(c);
}

py::object if_stopped_int(const Monitor& m, std::uint64_t v) {
  return m.stopped() ? py::object(py::int_(v)) : py::object(py::none());
}

py::object if_stopped_float(const Monitor& m, double v) {
  return m.stopped() ? py::object(py::float_(v)) : py::object(py::none());
}

}  // namespace

PYBIND11_MODULE(_pkp, mod) {
  mod.doc() = "Principal Kernel Projection monitor (C++ implementation).";
  mod.attr("implementation") = "native";

  py::class_<Monitor>(mod, "Monitor", "IPC-stability monitor of one running kernel (see simsample.pkp).")
      .def(py::init(&make_monitor), py::kw_only(), py::arg("period") = 500, py::arg("window") = 3000,
           py::arg("threshold") = 0.25, py::arg("total_ctas") = 1, py::arg("wave_size") = 1,
           py::arg("wave_rule") = "paper", py::arg("projection") = "paper",
           py::arg("small_grid_fraction") = 0.3, py::arg("launch_latency") = 0,
           py::arg("total_insns") = 0, py::arg("min_remaining") = 0.0,
           py::arg("drain_tail") = false, py::arg("settle") = 0.0)
      .def("update", &Monitor::update, py::arg("cycle"), py::arg("insns"), py::arg("completed_ctas"),
           "Feed the kernel's cycle, cumulative instructions and completed CTAs; True once it may stop.")
      .def(
          "restart",
          [](Monitor& m, std::uint64_t total_ctas, std::uint64_t wave_size, std::uint64_t total_insns) {
            if (total_ctas == 0) throw py::value_error("total_ctas must be at least 1");
            if (wave_size == 0) throw py::value_error("wave_size must be at least 1");
            m.restart(total_ctas, wave_size, total_insns);
          },
          py::arg("total_ctas"), py::arg("wave_size"), py::arg("total_insns") = 0,
          "Start over for a new kernel (total_insns: its instructions if known, else 0).")
      .def("finish", &Monitor::finish, py::arg("cycle"), py::arg("insns"), py::arg("completed_ctas"),
           "The stopped kernel's final counts after its drain; sets the final projections.")
      .def("wave_ok", &Monitor::wave_ok, py::arg("completed_ctas"))
      .def("remaining_ok", &Monitor::remaining_ok, py::arg("completed_ctas"))
      .def("project", &Monitor::project, py::arg("value"), py::arg("completed_ctas"))
      .def("project_cycles", &Monitor::project_cycles, py::arg("cycle"), py::arg("completed_ctas"),
           py::arg("insns") = 0)
      .def("project_insns", &Monitor::project_insns, py::arg("insns"), py::arg("completed_ctas"))
      .def_property_readonly("stopped", &Monitor::stopped)
      .def_property_readonly("stable_seen", &Monitor::stable_seen)
      .def_property_readonly("stable_since",
                             [](const Monitor& m) {
                               return m.stable_seen() ? py::object(py::int_(m.stable_since()))
                                                      : py::object(py::none());
                             })
      .def_property_readonly("samples", &Monitor::samples)
      .def_property_readonly("window_samples", &Monitor::window_samples)
      .def_property_readonly("last_ipc", &Monitor::last_ipc)
      .def_property_readonly("last_cov",
                             [](const Monitor& m) {
                               const double v = m.last_cov();
                               return std::isnan(v) ? py::object(py::none()) : py::object(py::float_(v));
                             })
      .def_property_readonly("stop_cycle", [](const Monitor& m) { return if_stopped_int(m, m.stop_cycle()); })
      .def_property_readonly("stop_insns", [](const Monitor& m) { return if_stopped_int(m, m.stop_insns()); })
      .def_property_readonly("stop_ctas", [](const Monitor& m) { return if_stopped_int(m, m.stop_ctas()); })
      .def_property_readonly("projected_cycles",
                             [](const Monitor& m) { return if_stopped_float(m, m.projected_cycles()); })
      .def_property_readonly("projected_insns",
                             [](const Monitor& m) { return if_stopped_float(m, m.projected_insns()); })
      .def_property_readonly("last_settle_cov",
                             [](const Monitor& m) {
                               const double v = m.last_settle_cov();
                               return std::isnan(v) ? py::object(py::none()) : py::object(py::float_(v));
                             })
      .def_property_readonly("finished", &Monitor::finished)
      .def_property_readonly("final_cycles",
                             [](const Monitor& m) {
                               return m.finished() ? py::object(py::float_(m.final_cycles())) : py::object(py::none());
                             })
      .def_property_readonly("final_insns",
                             [](const Monitor& m) {
                               return m.finished() ? py::object(py::float_(m.final_insns())) : py::object(py::none());
                             })
      .def_property_readonly("config", [](const Monitor& m) {
        const Config& c = m.config();
        py::dict d;
        d["period"] = c.period;
        d["window"] = c.window;
        d["threshold"] = c.threshold;
        d["total_ctas"] = c.total_ctas;
        d["wave_size"] = c.wave_size;
        d["wave_rule"] = name(c.wave_rule);
        d["projection"] = name(c.projection);
        d["small_grid_fraction"] = c.small_grid_fraction;
        d["launch_latency"] = c.launch_latency;
        d["total_insns"] = c.total_insns;
        d["min_remaining"] = c.min_remaining;
        d["drain_tail"] = c.drain_tail;
        d["settle"] = c.settle;
        return d;
      });

  mod.def("round_projection", &simsample::pkp::round_projection, py::arg("x"),
          "A projected value as the simulator hook prints it: floor(x + 0.5), 0 for NaN or negatives.");
}
