// Multi-process tests: each test starts its own ranks by running this test
// binary again as `thunder-run --nproc N <this binary> --worker=NAME --dir=DIR`.
// A worker is a function registered with THUNDER_WORKER; it reads and writes
// files in DIR (a fresh directory per launch) that the test then checks.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <utility>
#include <vector>

namespace thunder_test {

using WorkerFn = int (*)(const std::string& dir);
bool register_worker(const char* name, WorkerFn fn);

#define THUNDER_WORKER(name)                                                                    \
  static int worker_##name(const std::string& dir);                                             \
  static const bool registered_##name = ::thunder_test::register_worker(#name, &worker_##name); \
  static int worker_##name(const std::string& dir)

struct Launch {
  int exit_code = -1;  // thunder-run's: the first failing rank's, or 0
  bool timed_out = false;
  double seconds = 0;
  std::string output;  // every rank's stdout and stderr
  std::string dir;     // removed with the Launch unless THUNDER_KEEP_TEST_DIRS is set
  Launch() = default;
  Launch(Launch&& o) noexcept
      : exit_code(o.exit_code),
        timed_out(o.timed_out),
        seconds(o.seconds),
        output(std::move(o.output)),
        dir(std::exchange(o.dir, {})) {}
  Launch& operator=(Launch&&) = delete;
  ~Launch();
};

// Runs `worker` on `nproc` ranks; kills them all after `timeout_s`.
Launch launch(const std::string& worker, int nproc, double timeout_s = 120);

// Tensors as raw float64 files (what workers hand back to tests).
void write_doubles(const std::string& path, const std::vector<at::Tensor>& ts);
std::vector<double> read_doubles(const std::string& path);
void write_text(const std::string& path, const std::string& text);
std::string read_text(const std::string& path);

}  // namespace thunder_test
