#include "compiler.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <thread>
#include <unordered_set>

#include "thunder/executors/cpu_fuser.h"
#include "vector_math.h"

extern char** environ;

namespace thunder {

namespace cpu_fuser {
namespace {

namespace fs = std::filesystem;

// -ffp-contract=off keeps a * b + c two roundings, as in eager execution; the
// kernels' polynomials ask for fused multiply-adds explicitly.
// -fno-trapping-math changes no value (nothing enables FP traps); without it
// GCC will not if-convert a select between two computed values on AVX2, so
// loops with tanh, erf or a division stay scalar there (AVX-512's masks hide it).
const std::vector<std::string> kFlags = {
    "-O3",   "-march=native",     "-fopenmp",        "-shared",
    "-fPIC", "-ffp-contract=off", "-fno-math-errno", "-fno-trapping-math",
    "-w"};

std::atomic<int64_t> compiles{0}, compiler_runs{0}, disk_hits{0}, memory_hits{0}, fallbacks{0}, rebuilds{0};
std::atomic<int64_t> counter{0};

struct Compiler {
  std::string path;      // empty: none found
  std::string identity;  // part of every cache key
};

const Compiler& compiler() {
  static const Compiler c = [] {
    Compiler out;
    const char* env = std::getenv("CXX");
    std::string name = env && *env ? env : "c++";
    if (name.find('/') == std::string::npos) {
      const char* path = std::getenv("PATH");
      std::stringstream dirs(path ? path : "");
      for (std::string d; std::getline(dirs, d, ':');) {
        fs::path p = fs::path(d) / name;
        if (!d.empty() && access(p.c_str(), X_OK) == 0) {
          name = p.string();
          break;
        }
      }
    }
    std::error_code ec;
    fs::path real = fs::canonical(name, ec);
    struct stat st;
    if (ec || stat(real.c_str(), &st) != 0 || access(real.c_str(), X_OK) != 0) return out;
    out.path = name;
    // -march=native means this CPU: its feature flags join the key, so a
    // cache shared between machines never hands out code for another CPU.
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line, flags;
    while (std::getline(cpuinfo, line))
      if (line.rfind("flags", 0) == 0) {
        flags = line;
        break;
      }
    out.identity = fmt::format("{} {} {} {}", real.string(), static_cast<int64_t>(st.st_size),
                               static_cast<int64_t>(st.st_mtime), flags);
    return out;
  }();
  return c;
}

fs::path cache_dir() {
  const char* env = std::getenv("THUNDER_CACHE_DIR");
  fs::path dir;
  if (env && *env) {
    dir = env;
  } else {
    const char* home = std::getenv("HOME");
    dir = fs::path(home && *home ? home : "/tmp") / ".cache" / "thunder-cpp";
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  return dir;
}

uint64_t fnv1a(const std::string& s, uint64_t h) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string cache_key(const std::string& source) {
  std::string all = source;
  for (const auto& f : kFlags) all += "\n" + f;
  all += "\n" + compiler().identity;
  all += "\nkeyed symbols";  // libraries name their entry by key (older files differ)
  return fmt::format("{:016x}{:016x}", fnv1a(all, 14695981039346656037ull),
                     fnv1a(all, 0x9e3779b97f4a7c15ull));
}

// The kernel library's symbols carry the cache key, so one library can hold
// many kernels, and a file that is truncated, corrupted or another kernel's
// is detected instead of run.
std::string entry_symbol(const std::string& key) { return "thunder_kernel_" + key; }
std::string key_symbol(const std::string& key) { return "thunder_kernel_key_" + key; }

KernelFn open_kernel(const fs::path& so, const std::string& key) {
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) return nullptr;
  const auto* named = static_cast<const char*>(dlsym(h, key_symbol(key).c_str()));
  auto* fn = reinterpret_cast<KernelFn>(dlsym(h, entry_symbol(key).c_str()));
  if (!named || key != named || !fn) {
    dlclose(h);
    return nullptr;
  }
  return fn;
}

void warn_once(const std::string& msg) {
  static std::once_flag once;
  std::call_once(once, [&] {
    std::cerr << "thunder cpu_fuser: " << msg << " (running fused regions op by op on ATen)\n";
  });
}

struct Job {
  std::string key;
  const std::string* source;
};

// One translation unit for several kernels: the shared helpers once, then
// each kernel in its own namespace with its entry renamed by its key. Most of
// a small kernel's build is starting the compiler and the linker (~0.13 s),
// so 40 kernels build ~5x faster together than one by one.
std::string unit_source(const std::vector<Job>& jobs) {
  const std::string_view pre = kernel_preamble();
  std::string out;
  const bool shared = jobs.size() > 1;
  if (shared) out += pre;
  for (const Job& j : jobs) {
    out += fmt::format("#define thunder_kernel {}\n", entry_symbol(j.key));
    if (shared) {
      out += fmt::format("namespace k{} {{\n", j.key);
      out.append(*j.source, pre.size());
      out += "}\n";
    } else {
      out += *j.source;
    }
    out += fmt::format("#undef thunder_kernel\nextern \"C\" const char {}[] = \"{}\";\n",
                       key_symbol(j.key), j.key);
  }
  return out;
}

// Runs the compiler over one unit; each kernel's library appears at
// <key>.so (hard links to one file) only if it succeeded, with its own
// source beside it at <key>.cpp for reading.
bool compile(const std::vector<Job>& jobs, const fs::path& dir) {
  std::string tmp = fmt::format("{}.{}.{}.tmp", jobs[0].key, getpid(), counter++);
  fs::path cpp = dir / (tmp + ".cpp"), obj = dir / (tmp + ".so"), log = dir / (tmp + ".log");
  {
    std::ofstream f(cpp);
    f << unit_source(jobs);
    if (!f) return false;
  }
  std::vector<std::string> args = {compiler().path};
  args.insert(args.end(), kFlags.begin(), kFlags.end());
  args.insert(args.end(), {cpp.string(), "-o", obj.string()});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  bool ok =
      rc == 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  ++compiler_runs;
  std::error_code ec;
  if (ok) {
    compiles += static_cast<int64_t>(jobs.size());
    for (const Job& j : jobs) {
      // Under a temporary name first: the rename is atomic, so no process
      // ever opens a half-made <key>.so.
      fs::path link = dir / fmt::format("{}.{}.{}.tmp.so", j.key, getpid(), counter++);
      fs::create_hard_link(obj, link, ec);
      if (ec) fs::copy_file(obj, link, ec);  // a file system without hard links
      if (!ec) fs::rename(link, dir / (j.key + ".so"), ec);
      ok = ok && !ec;
      fs::remove(link, ec);
      std::ofstream(dir / (j.key + ".cpp")) << *j.source;
    }
  } else if (jobs.size() == 1) {
    std::ifstream f(log);
    std::string head(2000, '\0');
    f.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(f.gcount()));
    warn_once(fmt::format("compiling {} failed: {}", cpp.string(), head));
  }
  fs::remove(cpp, ec);
  fs::remove(obj, ec);
  fs::remove(log, ec);
  return ok;
}

// Builds the kernels in at most one unit per core, concurrently. A unit that
// fails is retried kernel by kernel, so one bad kernel costs only itself.
void compile_all(const std::vector<Job>& jobs, const fs::path& dir) {
  if (jobs.empty()) return;
  const std::string_view pre = kernel_preamble();
  std::vector<std::vector<Job>> units;
  std::vector<Job> together;
  for (const Job& j : jobs) {
    if (j.source->compare(0, pre.size(), pre) == 0)
      together.push_back(j);
    else
      units.push_back({j});
  }
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t n = std::min(together.size(), cores);
  for (size_t u = 0; u < n; ++u) {
    units.emplace_back();
    for (size_t i = u; i < together.size(); i += n) units.back().push_back(together[i]);
  }
  std::vector<std::future<void>> running;
  for (const auto& unit : units)
    running.push_back(std::async(std::launch::async, [&unit, &dir] {
      if (compile(unit, dir) || unit.size() == 1) return;
      for (const Job& j : unit) compile({j}, dir);
    }));
  for (auto& f : running) f.get();
}

std::mutex mu;
std::unordered_map<std::string, KernelFn>& loaded() {
  static std::unordered_map<std::string, KernelFn> m;
  return m;
}

}  // namespace

void count_fallback_region() { ++fallbacks; }

bool codegen_enabled() {
  const char* off = std::getenv("THUNDER_DISABLE_CODEGEN");
  if (off && std::string(off) == "1") return false;
  return !compiler().path.empty();
}

std::vector<KernelFn> load_kernels(const std::vector<std::string>& sources, bool compile) {
  std::vector<KernelFn> out(sources.size(), nullptr);
  std::vector<std::string> keys;
  for (const auto& s : sources) keys.push_back(cache_key(s));
  const fs::path dir = cache_dir();
  // Missing kernels, and broken files in the disk cache (deleted first),
  // compile together, deduplicated by key. A rebuilt file replaces the
  // broken one by an atomic rename, so no process sees it half-written.
  std::vector<Job> missing;
  std::unordered_set<std::string> building, from_disk;
  {
    std::lock_guard<std::mutex> lock(mu);
    for (size_t i = 0; i < sources.size(); ++i) {
      if (loaded().count(keys[i]) || building.count(keys[i])) continue;
      const fs::path so = dir / (keys[i] + ".so");
      if (fs::exists(so)) {
        if (KernelFn fn = open_kernel(so, keys[i])) {
          loaded()[keys[i]] = fn;
          from_disk.insert(keys[i]);
          continue;
        }
        std::error_code ec;
        fs::remove(so, ec);
        ++rebuilds;
      }
      if (!compile) continue;
      building.insert(keys[i]);
      missing.push_back({keys[i], &sources[i]});
    }
  }
  compile_all(missing, dir);
  std::lock_guard<std::mutex> lock(mu);
  for (size_t i = 0; i < sources.size(); ++i) {
    auto it = loaded().find(keys[i]);
    if (it != loaded().end()) {
      ++(from_disk.erase(keys[i]) ? disk_hits : memory_hits);
      out[i] = it->second;
      continue;
    }
    out[i] = open_kernel(dir / (keys[i] + ".so"), keys[i]);
    if (out[i]) loaded()[keys[i]] = out[i];
  }
  return out;
}

}  // namespace cpu_fuser

CpuFuserStats cpu_fuser_stats() {
  return {cpu_fuser::compiles.load(),    cpu_fuser::disk_hits.load(),
          cpu_fuser::memory_hits.load(), cpu_fuser::fallbacks.load(),
          cpu_fuser::rebuilds.load(),    cpu_fuser::compiler_runs.load()};
}

void reset_cpu_fuser_stats() {
  cpu_fuser::compiles = 0;
  cpu_fuser::disk_hits = 0;
  cpu_fuser::memory_hits = 0;
  cpu_fuser::fallbacks = 0;
  cpu_fuser::rebuilds = 0;
  cpu_fuser::compiler_runs = 0;
}

}  // namespace thunder
