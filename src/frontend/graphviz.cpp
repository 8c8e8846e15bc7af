// `dot -Tsvg` on a temporary file; the SVG is read from its stdout and cut
// down to the <svg> element (the XML prolog and doctype cannot be inlined).
#include "graphviz.h"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string_view>

namespace thunder::report {

std::string find_dot() {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "";
  while (!dirs.empty()) {
    const size_t end = dirs.find(':');
    std::string dir(dirs.substr(0, end));
    dirs.remove_prefix(end == std::string_view::npos ? dirs.size() : end + 1);
    if (dir.empty()) continue;
    const std::string candidate = dir + "/dot";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

Svg render_svg(const std::string& dot_text) {
  const std::string dot = find_dot();
  if (dot.empty()) return {"", "Graphviz's `dot` is not installed (not found on PATH)"};

  std::string file = (std::filesystem::temp_directory_path() / "thunder-report-XXXXXX").string();
  const int fd = ::mkstemp(file.data());
  if (fd < 0) return {"", "could not create a temporary file for dot"};
  ::close(fd);
  { std::ofstream(file) << dot_text; }

  std::string out;
  int status = -1;
  if (FILE* pipe = ::popen(fmt::format("'{}' -Tsvg '{}' 2>/dev/null", dot, file).c_str(), "r")) {
    char buf[8192];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
    status = ::pclose(pipe);
  }
  std::filesystem::remove(file);
  const size_t svg = out.find("<svg");
  if (status != 0 || svg == std::string::npos)
    return {"", fmt::format("`{} -Tsvg` failed (status {})", dot, status)};
  return {out.substr(svg), ""};
}

}  // namespace thunder::report
