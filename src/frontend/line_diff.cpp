// Line diff by LCS over the lines that differ: common leading and trailing
// lines are peeled off first, which is most of a trace between two passes.
#include "line_diff.h"

#include <algorithm>
#include <cstdint>

namespace thunder::report {
namespace {

// Above this many table cells (middle lines before x after) the diff is not
// worth its memory: the whole middle is shown as replaced.
constexpr size_t kMaxCells = size_t{1} << 22;

}  // namespace

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    lines.emplace_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

std::vector<DiffLine> diff_lines(const std::vector<std::string>& before,
                                 const std::vector<std::string>& after) {
  size_t head = 0;
  while (head < before.size() && head < after.size() && before[head] == after[head]) ++head;
  size_t tail = 0;
  while (tail < before.size() - head && tail < after.size() - head &&
         before[before.size() - 1 - tail] == after[after.size() - 1 - tail])
    ++tail;
  const size_t n = before.size() - head - tail, m = after.size() - head - tail;

  std::vector<DiffLine> out;
  for (size_t i = 0; i < head; ++i) out.push_back({DiffLine::Kind::Same, before[i]});
  if (n * m > kMaxCells) {
    for (size_t i = 0; i < n; ++i) out.push_back({DiffLine::Kind::Removed, before[head + i]});
    for (size_t j = 0; j < m; ++j) out.push_back({DiffLine::Kind::Added, after[head + j]});
  } else {
    // lcs[i][j]: length of the LCS of before[head+i..] and after[head+j..].
    std::vector<uint32_t> lcs((n + 1) * (m + 1), 0);
    auto at = [&](size_t i, size_t j) -> uint32_t& { return lcs[i * (m + 1) + j]; };
    for (size_t i = n; i-- > 0;)
      for (size_t j = m; j-- > 0;)
        at(i, j) = before[head + i] == after[head + j] ? at(i + 1, j + 1) + 1
                                                       : std::max(at(i + 1, j), at(i, j + 1));
    size_t i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && before[head + i] == after[head + j]) {
        out.push_back({DiffLine::Kind::Same, before[head + i]});
        ++i, ++j;
      } else if (i < n && (j == m || at(i + 1, j) >= at(i, j + 1))) {
        out.push_back({DiffLine::Kind::Removed, before[head + i]});
        ++i;
      } else {
        out.push_back({DiffLine::Kind::Added, after[head + j]});
        ++j;
      }
    }
  }
  for (size_t i = before.size() - tail; i < before.size(); ++i)
    out.push_back({DiffLine::Kind::Same, before[i]});
  return out;
}

}  // namespace thunder::report
