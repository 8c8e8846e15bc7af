#include "launch.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "thunder/core/error.h"

namespace thunder_test {
namespace {

std::map<std::string, WorkerFn>& workers() {
  static std::map<std::string, WorkerFn> w;
  return w;
}

std::string self_exe() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  buf[n] = '\0';
  return buf;
}

int run_worker(const std::string& name, const std::string& dir) {
  auto it = workers().find(name);
  if (it == workers().end()) {
    std::cerr << "unknown worker " << name << "\n";
    return 2;
  }
  try {
    return it->second(dir);
  } catch (const thunder::Error& e) {
    std::cerr << "rank " << std::getenv("RANK") << ": thunder::Error: " << e.what() << "\n";
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "rank " << std::getenv("RANK") << ": other exception: " << e.what() << "\n";
    return 4;
  }
}

}  // namespace

Launch::~Launch() {
  if (!dir.empty() && std::getenv("THUNDER_KEEP_TEST_DIRS") == nullptr)
    std::filesystem::remove_all(dir);
}

bool register_worker(const char* name, WorkerFn fn) {
  // Two files defining one worker name would silently run the wrong one.
  if (!workers().emplace(name, fn).second) {
    std::cerr << "THUNDER_WORKER(" << name << ") is defined twice\n";
    std::abort();
  }
  return true;
}

Launch launch(const std::string& worker, int nproc, double timeout_s) {
  Launch r;
  char tmpl[] = "/tmp/thunder-dist-XXXXXX";
  r.dir = mkdtemp(tmpl);
  const std::string out_path = r.dir + "/output.txt";
  const std::string exe = self_exe();
  // build/tests/distributed_tests -> build/bin/thunder-run, unless THUNDER_RUN says otherwise.
  const char* run_env = std::getenv("THUNDER_RUN");
  const std::string run =
      run_env ? std::string(run_env) : exe.substr(0, exe.rfind('/')) + "/../bin/thunder-run";
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);  // one process group: a timeout kills every rank
    FILE* f = std::freopen(out_path.c_str(), "w", stdout);
    if (f == nullptr) _exit(125);
    dup2(fileno(stdout), fileno(stderr));
    unsetenv("MASTER_PORT");  // thunder-run picks a free one
    unsetenv("MASTER_ADDR");
    const std::string n = std::to_string(nproc), w = "--worker=" + worker, d = "--dir=" + r.dir;
    execl(run.c_str(), "thunder-run", "--nproc", n.c_str(), exe.c_str(), w.c_str(), d.c_str(),
          static_cast<char*>(nullptr));
    _exit(126);
  }
  setpgid(pid, pid);
  int status = 0;
  for (;;) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed > timeout_s) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      r.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.output = read_text(out_path);
  return r;
}

void write_doubles(const std::string& path, const std::vector<at::Tensor>& ts) {
  std::ofstream f(path, std::ios::binary);
  for (const at::Tensor& t : ts) {
    at::Tensor c = t.detach().to(at::kDouble).contiguous();
    f.write(reinterpret_cast<const char*>(c.data_ptr<double>()),
            static_cast<std::streamsize>(c.numel() * sizeof(double)));
  }
}

std::vector<double> read_doubles(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<double> out(bytes.size() / sizeof(double));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(double));
  return out;
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace thunder_test

// A worker when started with --worker=NAME (by thunder-run), else the tests.
int main(int argc, char** argv) {
  std::string worker, dir;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--worker=", 9) == 0) worker = argv[i] + 9;
    if (std::strncmp(argv[i], "--dir=", 6) == 0) dir = argv[i] + 6;
  }
  if (!worker.empty()) return thunder_test::run_worker(worker, dir);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
