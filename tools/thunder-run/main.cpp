// thunder-run: starts N ranks of a program on this machine, like torchrun.
//
//   build/bin/thunder-run --nproc N prog args...
//
// Each rank gets RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR
// (127.0.0.1, unless already set) and MASTER_PORT (a free port, unless already
// set) in its environment. When a rank fails (non-zero exit or a signal) the
// others are terminated; the exit status is the first failure's (128 + signal
// for a signal), or 0 when every rank succeeds.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

int usage(const char* why) {
  std::fprintf(stderr,
               "thunder-run: %s\nusage: thunder-run --nproc N program [args...]\n"
               "Starts N ranks of program with RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR and "
               "MASTER_PORT set.\n",
               why);
  return 2;
}

// A port that is free now: bind port 0 and read back what the kernel chose.
int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

int status_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

std::vector<pid_t> g_children;

void forward_signal(int sig) {
  for (pid_t p : g_children)
    if (p > 0) kill(p, sig);
}

}  // namespace

int main(int argc, char** argv) {
  int nproc = -1, i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      usage("starts N ranks of a program");
      return 0;
    }
    if (a == "--nproc" || a == "--nproc_per_node" || a == "--nproc-per-node") {
      if (i + 1 >= argc) return usage("--nproc needs a number");
      nproc = std::atoi(argv[++i]);
    } else if (a.rfind("--nproc=", 0) == 0) {
      nproc = std::atoi(a.c_str() + 8);
    } else if (a == "--") {
      ++i;
      break;
    } else if (a.rfind("--", 0) == 0) {
      return usage(("unknown option " + a).c_str());
    } else {
      break;
    }
  }
  if (nproc < 1) return usage("--nproc N (N >= 1) is required");
  if (i >= argc) return usage("no program given");

  const char* addr = std::getenv("MASTER_ADDR");
  if (addr == nullptr || *addr == '\0') setenv("MASTER_ADDR", "127.0.0.1", 1);
  const char* port = std::getenv("MASTER_PORT");
  if (port == nullptr || *port == '\0') {
    int p = free_port();
    if (p < 0) {
      std::perror("thunder-run: no free port");
      return 1;
    }
    setenv("MASTER_PORT", std::to_string(p).c_str(), 1);
  }
  setenv("WORLD_SIZE", std::to_string(nproc).c_str(), 1);
  setenv("LOCAL_WORLD_SIZE", std::to_string(nproc).c_str(), 1);

  signal(SIGINT, forward_signal);
  signal(SIGTERM, forward_signal);
  g_children.assign(nproc, -1);
  for (int r = 0; r < nproc; ++r) {
    pid_t pid = fork();
    if (pid < 0) {
      std::perror("thunder-run: fork");
      forward_signal(SIGTERM);
      return 1;
    }
    if (pid == 0) {
      setenv("RANK", std::to_string(r).c_str(), 1);
      setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      execvp(argv[i], argv + i);
      std::fprintf(stderr, "thunder-run: cannot run %s: %s\n", argv[i], std::strerror(errno));
      _exit(127);
    }
    g_children[r] = pid;
  }

  int first_failure = 0, running = nproc;
  bool terminating = false;
  auto deadline = std::chrono::steady_clock::time_point::max();
  while (running > 0) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, terminating ? WNOHANG : 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (pid == 0) {  // terminating: the others get a grace period, then SIGKILL
      if (std::chrono::steady_clock::now() > deadline) {
        forward_signal(SIGKILL);
        deadline = std::chrono::steady_clock::time_point::max();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    int rank = -1;
    for (int r = 0; r < nproc; ++r)
      if (g_children[r] == pid) rank = r;
    if (rank < 0) continue;
    g_children[rank] = -1;
    --running;
    const int code = status_code(status);
    if (code != 0 && first_failure == 0) {
      first_failure = code;
      if (running > 0) {
        std::fprintf(stderr, "thunder-run: rank %d exited with status %d; stopping the others\n",
                     rank, code);
        forward_signal(SIGTERM);
        terminating = true;
        deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      }
    }
  }
  return first_failure;
}
