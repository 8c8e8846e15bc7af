// The compile report's page. Everything comes from the jit's public
// introspection (stages, prologue, saved values, stats) plus cpu_fuser's
// region sources and counters; the page is assembled as one string and
// written at once. Elements carry ids and data- attributes so tests (and
// people) can find them without reading the layout.
#include "thunder/frontend/report.h"

#include <c10/core/ScalarType.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include "entry_guards.h"
#include "graphviz.h"
#include "line_diff.h"
#include "thunder/core/error.h"
#include "thunder/executors/cpu_fuser.h"
#include "trace_dot.h"

namespace thunder {
namespace detail {
namespace {

using report::DiffLine;

std::string esc(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string ms_str(double ms) { return fmt::format("{:.3f}", ms); }

constexpr const char* kStyle = R"(
body { font-family: sans-serif; margin: 1.5em; color: #222; max-width: 1400px; }
h1 { font-size: 1.5em; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
h3 { font-size: 1.05em; margin: 0.3em 0; }
pre { background: #f7f7f7; padding: 0.5em; overflow-x: auto; font-size: 12px; }
table { border-collapse: collapse; font-size: 13px; }
td, th { border: 1px solid #ccc; padding: 2px 8px; text-align: left; }
td.num, th.num { text-align: right; font-family: monospace; }
.stage { border-left: 3px solid #3366cc; padding-left: 0.7em; margin: 1em 0; }
.provenance { color: #666; font-size: 12px; margin: 0; font-family: monospace; }
.add { background: #d9f7d9; display: block; } .del { background: #fadcdc; display: block; }
.skip { color: #888; display: block; font-style: italic; }
.bar { background: #3366cc; height: 10px; display: inline-block; }
.missing { color: #a33; }
nav a { margin-right: 1em; }
figure { margin: 0; overflow-x: auto; }
)";

// Opens a <details> targeted by a link (a region's source from its cluster)
// and marks the body so a test can tell the script ran without errors.
constexpr const char* kScript = R"(
(function () {
  function openTarget() {
    var el = location.hash ? document.getElementById(location.hash.slice(1)) : null;
    for (; el; el = el.parentElement) if (el.tagName === 'DETAILS') el.open = true;
  }
  window.addEventListener('hashchange', openTarget);
  openTarget();
  document.body.setAttribute('data-script-ok', '1');
})();
)";

// Lines of a stage without its provenance (which differs between any two).
std::vector<std::string> trace_lines(const Trace& t) {
  std::vector<std::string> lines = report::split_lines(t.str());
  std::erase_if(lines, [](const std::string& l) { return l.starts_with("# Constructed by"); });
  return lines;
}

// Changed lines with two lines of context; longer unchanged runs collapse.
std::string diff_html(const std::vector<DiffLine>& d, int& added, int& removed) {
  constexpr size_t kContext = 2;
  std::vector<bool> shown(d.size(), false);
  for (size_t i = 0; i < d.size(); ++i) {
    if (d[i].kind == DiffLine::Kind::Same) continue;
    (d[i].kind == DiffLine::Kind::Added ? added : removed)++;
    for (size_t k = i >= kContext ? i - kContext : 0; k <= i + kContext && k < d.size(); ++k)
      shown[k] = true;
  }
  std::string out;
  for (size_t i = 0; i < d.size();) {
    if (!shown[i]) {
      size_t j = i;
      while (j < d.size() && !shown[j]) ++j;
      out += fmt::format("<span class=\"skip\">... {} unchanged lines</span>", j - i);
      i = j;
      continue;
    }
    switch (d[i].kind) {
      case DiffLine::Kind::Same:
        out += "  " + esc(d[i].text) + "\n";
        break;
      case DiffLine::Kind::Added:
        out += "<span class=\"add\">+ " + esc(d[i].text) + "</span>";
        break;
      case DiffLine::Kind::Removed:
        out += "<span class=\"del\">- " + esc(d[i].text) + "</span>";
        break;
    }
    ++i;
  }
  return out;
}

// Each stage's pass time from compile_stats: the k-th stage named X takes
// the k-th time recorded for X (+ suffix). Split and rematerialization time
// their backward stage on the forward side, so it has none of its own.
class PassTimes {
 public:
  PassTimes(const std::vector<std::pair<std::string, double>>& pass_ms, std::string suffix)
      : pass_ms_(pass_ms), suffix_(std::move(suffix)) {}
  std::optional<double> next(std::string_view stage) {
    const std::string name = std::string(stage) + suffix_;
    int seen = 0;
    for (const auto& [pass, ms] : pass_ms_)
      if (pass == name && seen++ == used_[name]) {
        ++used_[name];
        return ms;
      }
    return std::nullopt;
  }

 private:
  const std::vector<std::pair<std::string, double>>& pass_ms_;
  std::string suffix_;
  std::map<std::string, int> used_;
};

std::string stages_html(const std::vector<Trace>& stages, const std::string& side,
                        PassTimes times) {
  std::string out;
  std::vector<std::string> previous;
  for (size_t i = 0; i < stages.size(); ++i) {
    const Trace& t = stages[i];
    const std::string name(stage_name(t));
    const std::optional<double> ms = times.next(name);
    const std::vector<std::string> lines = trace_lines(t);
    out += fmt::format(
        "<article class=\"stage\" id=\"{0}-stage-{1}\" data-side=\"{0}\" data-stage=\"{2}\"{3}>\n"
        "<h3>{4}. {2} <small>{5}</small></h3>\n<p class=\"provenance\">{6}</p>\n",
        side, i, esc(name), ms ? fmt::format(" data-ms=\"{}\"", ms_str(*ms)) : "", i + 1,
        ms ? ms_str(*ms) + " ms" : "timed with the forward", esc(t.provenance));
    if (i > 0) {
      int added = 0, removed = 0;
      const std::string d = diff_html(report::diff_lines(previous, lines), added, removed);
      if (added + removed == 0)
        out += fmt::format("<p class=\"unchanged\" data-diff=\"0\">unchanged from {}</p>\n",
                           esc(std::string(stage_name(stages[i - 1]))));
      else
        out += fmt::format(
            "<details class=\"diff\" data-added=\"{0}\" data-removed=\"{1}\" open>"
            "<summary>changes from {2}: +{0} &minus;{1} lines</summary><pre>{3}</pre></details>\n",
            added, removed, esc(std::string(stage_name(stages[i - 1]))), d);
    }
    std::string text;
    for (const std::string& l : lines) text += l + "\n";
    out += fmt::format(
        "<details class=\"trace\"{}><summary>full trace ({} lines)</summary><pre>{}</pre>"
        "</details>\n</article>\n",
        i == 0 ? " open" : "", lines.size(), esc(text));
    previous = lines;
  }
  return out;
}

std::set<std::string> computed_names(const Trace& t) {
  std::set<std::string> names;
  for (const BoundSymbol& b : t.bsyms) {
    for (const ProxyPtr& p : b.flat_outputs()) names.insert(p->name);
    for (const BoundSymbol& s : b.subsymbols)
      for (const ProxyPtr& p : s.flat_outputs()) names.insert(p->name);
  }
  return names;
}

// Beyond this many statements dot takes long and the picture stops helping
// (a report per compile must not make compiling a large model slow).
constexpr size_t kMaxGraphNodes = 2000;

std::string graph_html(const Trace& t, const report::DotMarks& marks) {
  std::string out =
      fmt::format("<h3>{}</h3>\n<figure id=\"graph-{}\" data-graph=\"{}\">\n",
                  marks.side == "forward" ? "Forward" : "Backward", marks.side, marks.side);
  size_t nodes = 0;
  for (const BoundSymbol& b : t.bsyms) nodes += 1 + b.subsymbols.size();
  if (nodes > kMaxGraphNodes) {
    out += fmt::format(
        "<p class=\"missing\" data-missing=\"too-large\">No graph: {} statements is more than "
        "dot lays out quickly ({}); the stages have the text.</p>\n",
        nodes, kMaxGraphNodes);
  } else if (const report::Svg svg = report::render_svg(report::trace_to_dot(t, marks));
             svg.svg.empty()) {
    out += fmt::format(
        "<p class=\"missing\" data-missing=\"dot\">No graph: {}. Install Graphviz "
        "(scripts/install-deps.sh) to draw it.</p>\n",
        esc(svg.error));
  } else {
    out += svg.svg;  // dot escapes the text it writes
  }
  out += "</figure>\n";
  int regions = 0;
  for (const BoundSymbol& b : t.bsyms) {
    if (!b.sym->is_region) continue;
    ++regions;
    const std::string src = fusion_source(b);
    out += fmt::format(
        "<details class=\"region-source\" id=\"{}\" data-region=\"{}\" data-side=\"{}\">"
        "<summary>{}: {} prims, generated C++</summary><pre>{}</pre></details>\n",
        report::region_anchor(marks.side, b), esc(b.sym->id), marks.side, esc(b.sym->id),
        b.subsymbols.size(),
        src.empty() ? "(no generated source: code generation is off or the region runs on ATen)"
                    : esc(src));
  }
  if (regions == 0) out += "<p>No fusion regions.</p>\n";
  return out;
}

const BoundSymbol* producer_of(const Trace& t, const std::string& name) {
  for (const BoundSymbol& b : t.bsyms) {
    for (const BoundSymbol& s : b.subsymbols)
      if (b.sym->is_region)
        for (const ProxyPtr& p : s.flat_outputs())
          if (p->name == name) return &s;
    for (const ProxyPtr& p : b.flat_outputs())
      if (p->name == name) return &b;
  }
  return nullptr;
}

// What made the value a saved one, as far as tags tell.
std::string decided_by(const ProxyPtr& p, const BoundSymbol* made_by, bool rematerialized) {
  if (p && p->has_tag(ProxyTag::SAVED_FOR_BACKWARD)) return "tag saved_for_backward";
  if (made_by && made_by->has_op_tag(OpTag::DONT_RECOMPUTE_IN_BACKWARD))
    return "op tag DONT_RECOMPUTE_IN_BACKWARD";
  if (p && p->has_tag(ProxyTag::RECOMPUTE_IN_BACKWARD))
    return "tag recompute_in_backward (saved anyway)";
  if (!made_by) return "forward input";
  return rematerialized ? "rematerialization (min-cut)" : "autodiff";
}

std::string saved_html(const std::vector<TensorInfo>& saved, const std::vector<Trace>& fwd,
                       const std::vector<Trace>& bwd) {
  if (bwd.empty()) return "<p>No backward: nothing is saved.</p>\n";
  const Trace& forward = fwd.back();
  const Trace& backward = bwd.back();
  std::map<std::string, ProxyPtr> inputs;  // the backward reads the saved values as inputs
  for (const ProxyPtr& p : backward.inputs) inputs[p->name] = p;
  const bool remat = has_stage(fwd, "Rematerialization");
  std::string out =
      "<table id=\"saved-table\"><tr><th>name</th><th>shape</th><th>dtype</th>"
      "<th class=\"num\">bytes</th><th>made by</th><th>decided by</th></tr>\n";
  int64_t total = 0;
  for (const TensorInfo& info : saved) {
    auto it = inputs.find(info.name);
    const ProxyPtr p = it == inputs.end() ? nullptr : it->second;
    const BoundSymbol* made_by = producer_of(forward, info.name);
    total += info.bytes;
    out += fmt::format(
        "<tr class=\"saved\" data-saved=\"{0}\" data-saved-bytes=\"{3}\"><td>{0}</td><td>{1}</td>"
        "<td>{2}</td><td class=\"num\">{3}</td><td>{4}</td><td>{5}</td></tr>\n",
        esc(info.name), esc(shape_str(info.shape)),
        esc(p ? std::string(short_name(p->dtype)) : std::string(c10::toString(info.dtype))),
        info.bytes, made_by ? esc(made_by->sym->id) : "(input)",
        esc(decided_by(p, made_by, remat)));
  }
  out += fmt::format(
      "<tr><th colspan=\"3\">total</th><th class=\"num\" id=\"saved-total\" "
      "data-saved-total=\"{}\">{}</th><th colspan=\"2\"></th></tr></table>\n",
      total, total);
  for (const std::string& note : backward.notes)
    if (note.starts_with("saved for backward"))
      out +=
          fmt::format("<p id=\"saved-note\">The backward's note: <code>{}</code></p>\n", esc(note));
  return out;
}

std::string timings_html(const CompileStats& stats) {
  double longest = 0;
  for (const auto& [pass, ms] : stats.pass_ms) longest = std::max(longest, ms);
  std::string out = fmt::format(
      "<p>Last compile: {} ms in total; compiles of this function so far: {}.</p>\n"
      "<table id=\"pass-times\"><tr><th>pass</th><th class=\"num\">ms</th><th></th></tr>\n",
      ms_str(stats.last_compile_ms), stats.compiles);
  for (const auto& [pass, ms] : stats.pass_ms)
    out += fmt::format(
        "<tr data-pass=\"{0}\" data-ms=\"{1}\"><td>{0}</td><td class=\"num\">{1}</td>"
        "<td><span class=\"bar\" style=\"width:{2}px\"></span></td></tr>\n",
        esc(pass), ms_str(ms), longest > 0 ? static_cast<int>(300 * ms / longest) : 0);
  const CpuFuserStats k = cpu_fuser_stats();
  out += fmt::format(
      "</table>\n<h3>Fusion kernels (cpu_fuser, whole process so far)</h3>\n"
      "<table id=\"kernel-stats\">"
      "<tr data-kernel-stat=\"compiler_invocations\"><td>built by the C++ compiler</td>"
      "<td class=\"num\">{}</td></tr>"
      "<tr data-kernel-stat=\"disk_cache_hits\"><td>loaded from the disk cache</td>"
      "<td class=\"num\">{}</td></tr>"
      "<tr data-kernel-stat=\"memory_cache_hits\"><td>already loaded in this process</td>"
      "<td class=\"num\">{}</td></tr>"
      "<tr data-kernel-stat=\"fallback_regions\"><td>regions run op by op on ATen</td>"
      "<td class=\"num\">{}</td></tr></table>\n",
      k.compiler_invocations, k.disk_cache_hits, k.memory_cache_hits, k.fallback_regions);
  return out;
}

std::string page(const JitState& s) {
  const std::vector<Trace> fwd = last_traces(s);
  const std::vector<Trace> bwd = last_backward_traces(s);
  const std::vector<TensorInfo> saved = last_saved_for_backward(s);
  const CompileStats stats = compile_stats(s);
  const int64_t hits = cache_hits(s), misses = cache_misses(s);

  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>thunder compile report: {0}</title>\n<style>{1}</style>\n</head>\n<body>\n"
      "<h1>thunder compile report: <code>{0}</code></h1>\n"
      "<nav><a href=\"#summary\">summary</a><a href=\"#graphs\">graphs</a>"
      "<a href=\"#stages\">stages</a><a href=\"#backward-stages\">backward stages</a>"
      "<a href=\"#saved\">saved for backward</a><a href=\"#guards\">guards</a>"
      "<a href=\"#cache\">cache</a><a href=\"#timings\">compile time</a></nav>\n",
      esc(fwd.front().fn_name), kStyle);

  out += fmt::format(
      "<section id=\"summary\">\n<h2>Summary</h2>\n<table>"
      "<tr><td>forward stages</td><td class=\"num\">{}</td></tr>"
      "<tr><td>backward stages</td><td class=\"num\">{}</td></tr>"
      "<tr><td>fusion regions</td><td class=\"num\">{}</td></tr>"
      "<tr><td>values saved for backward</td><td class=\"num\">{}</td></tr>"
      "<tr><td>last compile</td><td class=\"num\">{} ms</td></tr></table>\n</section>\n",
      fwd.size(), bwd.size(), stats.fusion_regions, saved.size(), ms_str(stats.last_compile_ms));

  // Saved values are highlighted in both graphs; backward statements that
  // make a value the forward made are recomputations.
  report::DotMarks marks;
  marks.side = "forward";
  for (const TensorInfo& info : saved) marks.saved_bytes[info.name] = info.bytes;
  out +=
      "<section id=\"graphs\">\n<h2>Dataflow graphs</h2>\n<p>Boxes are statements, ellipses "
      "inputs; blue clusters are fusion regions (click one for its generated C++); orange: "
      "saved for backward; pink: recomputed in the backward.</p>\n";
  out += graph_html(fwd.back(), marks);
  if (!bwd.empty()) {
    marks.side = "backward";
    marks.forward_names = computed_names(fwd.back());
    out += graph_html(bwd.back(), marks);
  }
  out += "</section>\n";

  out += "<section id=\"stages\">\n<h2>Forward stages</h2>\n";
  out += stages_html(fwd, "forward", PassTimes(stats.pass_ms, ""));
  out += "</section>\n<section id=\"backward-stages\">\n<h2>Backward stages</h2>\n";
  out += bwd.empty() ? "<p>No backward: nothing requires grad, or grad mode was off.</p>\n"
                     : stages_html(bwd, "backward", PassTimes(stats.pass_ms, " (backward)"));
  out += "</section>\n";

  out += "<section id=\"saved\">\n<h2>Saved for backward</h2>\n" + saved_html(saved, fwd, bwd) +
         "</section>\n";
  // Every entry's guards; the entry run last (whose traces this page shows)
  // keeps id="prologue".
  out +=
      "<section id=\"guards\">\n<h2>Guards</h2>\n<p>Each cache entry runs when its checks "
      "pass (its prologue trace); a call that passes none compiles a new entry.</p>\n";
  const std::string last = last_prologue_trace(s).str();
  const std::vector<Trace> entries = entry_prologues(s);
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string text = entries[i].str();
    const bool is_last = text == last;
    out += fmt::format("<h3>Entry {}{}</h3>\n<pre {} data-entry=\"{}\">{}</pre>\n", i + 1,
                       is_last ? " (run last: the traces above)" : "",
                       is_last ? "id=\"prologue\"" : "class=\"prologue\"", i, esc(text));
  }
  out += "</section>\n";
  out += fmt::format(
      "<section id=\"cache\" data-hits=\"{0}\" data-misses=\"{1}\">\n<h2>Cache</h2>\n<table>"
      "<tr><td>hits</td><td class=\"num\">{0}</td></tr>"
      "<tr><td>misses (compiles)</td><td class=\"num\">{1}</td></tr>"
      "<tr><td>entries</td><td class=\"num\">{2}</td></tr>"
      "<tr><td>buffers reused by the memory plan</td><td class=\"num\">{3}</td></tr></table>\n"
      "</section>\n",
      hits, misses, stats.cache_entries, stats.buffer_reuses);
  out += "<section id=\"timings\">\n<h2>Compile time per pass</h2>\n" + timings_html(stats) +
         "</section>\n";
  return out + "<script>" + kScript + "</script>\n</body>\n</html>\n";
}

}  // namespace

void write_report(const JitState& s, const std::string& path) {
  THUNDER_CHECK(!last_traces(s).empty(),
                "write_report: the function has not been compiled yet; call it once before "
                "writing its report to {}",
                path);
  const std::string html = page(s);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  THUNDER_CHECK(f.good(), "write_report: cannot write {}: {}", path, std::strerror(errno));
  f << html;
  f.close();
  THUNDER_CHECK(!f.fail(), "write_report: cannot write {}: {}", path, std::strerror(errno));
}

void write_report_if_requested(const JitState& s) {
  const char* dir = std::getenv("THUNDER_REPORT_DIR");
  if (!dir || !*dir) return;
  try {
    std::filesystem::create_directories(dir);
    // The first free report-<n>.html, claimed exclusively ("x") so that two
    // functions or processes writing to one directory never share a file.
    for (int n = 0;; ++n) {
      const std::string path = fmt::format("{}/report-{}.html", dir, n);
      if (FILE* f = std::fopen(path.c_str(), "wx")) {
        std::fclose(f);
        write_report(s, path);
        return;
      }
      THUNDER_CHECK(errno == EEXIST, "THUNDER_REPORT_DIR: cannot write {}: {}", path,
                    std::strerror(errno));
    }
  } catch (const std::exception& e) {
    std::cerr << "thunder::jit: no compile report written: " << e.what() << "\n";
  }
}

}  // namespace detail
}  // namespace thunder
