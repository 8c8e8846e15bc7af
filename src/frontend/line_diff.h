// A line diff between two texts (the report's view of what a pass changed):
// the longest common subsequence of lines, every other line marked added or
// removed. Quadratic, so very long texts fall back to "all removed, all
// added" instead of taking seconds to compare.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace thunder::report {

struct DiffLine {
  enum class Kind { Same, Added, Removed };
  Kind kind;
  std::string text;
};

std::vector<std::string> split_lines(std::string_view text);

// `before` -> `after`, in order: each line of either text once; removed lines
// come before the added lines that replace them.
std::vector<DiffLine> diff_lines(const std::vector<std::string>& before,
                                 const std::vector<std::string>& after);

}  // namespace thunder::report
