// thunder-opt: the `opt` of thunder-cpp. Reads printed traces, runs named
// passes in order, prints the result:
//   thunder-opt --passes=dce,cse FILE     (FILE `-` is stdin)
// Exit code 1 on any error (parse errors name their line), 2 on bad usage.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "thunder/core/error.h"
#include "thunder/core/parse_trace.h"
#include "thunder/frontend/passes.h"
#include "thunder/lang/ltorch.h"

namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

void usage(std::ostream& os) {
  os << "usage: thunder-opt --passes=p1,p2,... [--print-all] [--executors=e1,e2]\n"
        "                   [--fusion-type=dataflow|consecutive] FILE|-\n\n"
        "Parses printed traces (several: e.g. a forward then its backward), runs the passes\n"
        "in order and prints the resulting traces.\n\npasses:\n";
  size_t width = 0;
  for (const thunder::NamedPass& p : thunder::named_passes())
    width = std::max(width, p.name.size());
  for (const thunder::NamedPass& p : thunder::named_passes()) {
    os << "  " << p.name << std::string(width + 2 - p.name.size(), ' ') << p.description << "\n";
  }
}

void print(const std::vector<thunder::Trace>& traces) {
  for (size_t i = 0; i < traces.size(); ++i) std::cout << (i ? "\n" : "") << traces[i];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> passes;
  thunder::PassOptions options;
  bool print_all = false;
  std::string file;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      usage(std::cout);
      return 0;
    } else if (a.rfind("--passes=", 0) == 0) {
      passes = split_commas(a.substr(9));
    } else if (a.rfind("--executors=", 0) == 0) {
      options.executors = split_commas(a.substr(12));
    } else if (a.rfind("--fusion-type=", 0) == 0) {
      options.fusion_type = a.substr(14);
    } else if (a == "--print-all") {
      print_all = true;
    } else if (a != "-" && a.rfind("-", 0) == 0) {
      std::cerr << "thunder-opt: unknown option '" << a << "'\n";
      usage(std::cerr);
      return 2;
    } else if (file.empty()) {
      file = a;
    } else {
      std::cerr << "thunder-opt: more than one input file ('" << file << "', '" << a << "')\n";
      return 2;
    }
  }
  if (file.empty()) {
    usage(std::cerr);
    return 2;
  }
  try {
    // Resolve every pass before reading anything: a typo fails fast.
    std::vector<const thunder::NamedPass*> pipeline;
    for (const std::string& p : passes) pipeline.push_back(&thunder::find_pass(p));
    std::string text;
    if (file == "-") {
      text.assign(std::istreambuf_iterator<char>(std::cin), {});
    } else {
      std::ifstream in(file);
      if (!in) {
        std::cerr << "thunder-opt: cannot read '" << file << "'\n";
        return 1;
      }
      text.assign(std::istreambuf_iterator<char>(in), {});
    }
    thunder::ltorch::ensure_registered();
    std::vector<thunder::Trace> traces = thunder::parse_traces(text);
    for (const thunder::NamedPass* p : pipeline) {
      traces = p->run(traces, options);
      if (print_all) {
        std::cout << "; after " << p->name << "\n";
        print(traces);
        std::cout << "\n";
      }
    }
    if (!print_all) print(traces);
  } catch (const thunder::Error& e) {
    std::cerr << "thunder-opt: " << (file == "-" ? "<stdin>" : file) << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}
