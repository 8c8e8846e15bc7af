// Runs Graphviz's `dot` to turn dot text into SVG for the compile report.
// `dot` is optional: without it the report says so instead of drawing.
#pragma once

#include <string>

namespace thunder::report {

struct Svg {
  std::string svg;    // the <svg> element, ready to inline; empty on failure
  std::string error;  // why there is no SVG ("dot" not found, dot failed)
};

// The `dot` executable on PATH, or "" when there is none.
std::string find_dot();

Svg render_svg(const std::string& dot_text);

}  // namespace thunder::report
