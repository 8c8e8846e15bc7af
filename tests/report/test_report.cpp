// The compile report (thunder::write_report, THUNDER_REPORT_DIR): the page's
// structure read back by id and data- attribute (never whole pages), the
// saved-for-backward table under two RNG policies, one file per compile, the
// errors, the page without Graphviz, and the page opened in a real browser.
#include <gtest/gtest.h>
#include <thunder/thunder.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "char_gpt.h"
#include "router_program.h"
#include "scoped_env.h"

namespace thunder {
using thunder::test_util::ScopedEnv;
namespace {

namespace fs = std::filesystem;
namespace F = nn::functional;

// A fresh folder per test, under the working directory (the build tree when
// run by ctest), left behind for a person to open.
fs::path test_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path dir = fs::current_path() / "report-tests" / info->name();
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The text of <section id="id">...</section> ("" when absent).
std::string section(const std::string& html, const std::string& id) {
  const size_t begin = html.find("<section id=\"" + id + "\"");
  if (begin == std::string::npos) return "";
  return html.substr(begin, html.find("</section>", begin) - begin);
}

// Every value of an attribute, in page order.
std::vector<std::string> attr_values(const std::string& html, const std::string& attr) {
  std::vector<std::string> out;
  const std::regex re(attr + "=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), re); it != std::sregex_iterator();
       ++it)
    out.push_back((*it)[1]);
  return out;
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size())) ++n;
  return n;
}

std::vector<std::string> stage_names(const std::vector<Trace>& stages) {
  std::vector<std::string> names;
  for (const Trace& t : stages) names.emplace_back(stage_name(t));
  return names;
}

struct SavedRow {
  std::string name, shape, dtype;
  int64_t bytes;
};

std::vector<SavedRow> saved_rows(const std::string& html) {
  std::vector<SavedRow> rows;
  const std::string table = section(html, "saved");
  const std::regex re(
      "<tr class=\"saved\" data-saved=\"([^\"]*)\" data-saved-bytes=\"([0-9]+)\"><td>[^<]*</td>"
      "<td>([^<]*)</td><td>([^<]*)</td>");
  for (auto it = std::sregex_iterator(table.begin(), table.end(), re); it != std::sregex_iterator();
       ++it)
    rows.push_back({(*it)[1], (*it)[3], (*it)[4], std::stoll((*it)[2])});
  return rows;
}

// A stage's lines as the report diffs them (without its provenance).
std::vector<std::string> lines_of(const Trace& t) {
  std::vector<std::string> lines;
  std::stringstream in(t.str());
  for (std::string l; std::getline(in, l);)
    if (!l.starts_with("# Constructed by")) lines.push_back(l);
  return lines;
}

int count_regions(const Trace& t) {
  int n = 0;
  for (const BoundSymbol& b : t.bsyms) n += b.sym->is_region;
  return n;
}

// exp(x * 2 + 1) with x requiring grad: a forward, a backward, fusion regions.
auto small_function() {
  return jit([](const Tensor& x) { return exp(x * 2 + 1); }, {.arg_names = {"x"}});
}

TEST(Report, SmallFunctionStructure) {
  auto jfn = small_function();
  jfn(at::rand({4, 5}).requires_grad_());
  const fs::path path = test_dir() / "report.html";
  write_report(jfn, path.string());
  const std::string html = read(path);

  for (const char* id :
       {"summary", "stages", "backward-stages", "graphs", "saved", "guards", "cache", "timings"})
    EXPECT_NE(section(html, id), "") << "no section " << id;
  // Stages by pass name, in pipeline order, each side in its own section.
  EXPECT_EQ(attr_values(section(html, "stages"), "data-stage"), stage_names(last_traces(jfn)));
  EXPECT_EQ(attr_values(section(html, "backward-stages"), "data-stage"),
            stage_names(last_backward_traces(jfn)));
  // Each stage's diff against the one before: nothing marked exactly when
  // the text is the same, and the marks account for the change in length.
  const std::vector<Trace> all = last_traces(jfn);
  const std::string stages_html = section(html, "stages");
  const std::regex added_re("data-added=\"([0-9]+)\" data-removed=\"([0-9]+)\"");
  size_t at = stages_html.find("<article");
  int changed = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    const size_t next = stages_html.find("<article", at + 1);
    const std::string article = stages_html.substr(at, next - at);
    at = next;
    if (i == 0) continue;
    SCOPED_TRACE(stage_name(all[i]));
    const std::vector<std::string> before = lines_of(all[i - 1]), after = lines_of(all[i]);
    std::smatch m;
    if (before == after) {
      EXPECT_NE(article.find("class=\"unchanged\""), std::string::npos);
      continue;
    }
    ++changed;
    ASSERT_TRUE(std::regex_search(article, m, added_re)) << article;
    const int added = std::stoi(m[1]), removed = std::stoi(m[2]);
    EXPECT_GT(added + removed, 0);
    EXPECT_EQ(static_cast<int>(after.size()) - static_cast<int>(before.size()), added - removed);
  }
  EXPECT_GE(changed, 1);
  // Text is escaped: the prologue's quotes and arrows never reach the markup raw.
  const std::string guards = section(html, "guards");
  const size_t pre = guards.find('>', guards.find("<pre id=\"prologue\"")) + 1;
  const std::string prologue = guards.substr(pre, guards.find("</pre>", pre) - pre);
  EXPECT_EQ(prologue.find_first_of("<>\""), std::string::npos) << prologue;
  EXPECT_NE(prologue.find("&quot;"), std::string::npos) << prologue;

  // Two graphs; the forward's fusion regions are clusters with their source.
  const std::string graphs = section(html, "graphs");
  ASSERT_EQ(count(graphs, "<svg"), 2) << "is graphviz installed? (scripts/install-deps.sh)";
  const std::vector<Trace> stages = last_traces(jfn);
  const Trace& fwd = stages.back();
  ASSERT_EQ(count_regions(fwd), 1) << fwd;
  const size_t bwd_at = graphs.find("id=\"graph-backward\"");
  const std::string fwd_graph = graphs.substr(0, bwd_at);
  EXPECT_EQ(count(fwd_graph, "<g id=\"cluster_forward_"), 1);
  EXPECT_EQ(count(fwd_graph, "class=\"cluster\""), 1);
  for (const BoundSymbol& b : fwd.bsyms)
    if (b.sym->is_region) {
      EXPECT_NE(graphs.find("id=\"source-forward-" + b.sym->id + "\""), std::string::npos);
      EXPECT_NE(fwd_graph.find("#source-forward-" + b.sym->id), std::string::npos);
    }

  // The saved table: exactly last_saved_for_backward, with bytes.
  const std::vector<TensorInfo> saved = last_saved_for_backward(jfn);
  const std::vector<SavedRow> rows = saved_rows(html);
  ASSERT_FALSE(saved.empty());
  ASSERT_EQ(rows.size(), saved.size());
  int64_t total = 0;
  for (size_t i = 0; i < saved.size(); ++i) {
    EXPECT_EQ(rows[i].name, saved[i].name);
    EXPECT_EQ(rows[i].bytes, saved[i].bytes);
    EXPECT_EQ(rows[i].shape, shape_str(saved[i].shape));
    total += saved[i].bytes;
  }
  EXPECT_EQ(attr_values(section(html, "saved"), "data-saved-total"),
            std::vector<std::string>{std::to_string(total)});

  // Guards, cache counters, one timing row per pass.
  EXPECT_NE(section(html, "guards").find("id=\"prologue\""), std::string::npos);
  EXPECT_EQ(attr_values(html, "data-misses"), std::vector<std::string>{"1"});
  EXPECT_EQ(attr_values(section(html, "timings"), "data-pass").size(),
            compile_stats(jfn).pass_ms.size());
  // Self-contained: nothing to fetch.
  for (const char* ref : {"<script src", "<link", "@import", "url("})
    EXPECT_EQ(html.find(ref), std::string::npos) << ref;
}

// Under the default policy dropout's backward replays the draw from the
// saved seed and offset; without replace_uniform it saves the bool mask.
TEST(Report, DropoutSavesSeedAndOffsetOrTheMask) {
  const fs::path dir = test_dir();
  auto fn = [](const Tensor& x) { return F::dropout(x, 0.5, true); };
  at::Tensor x = at::rand({16, 8}).requires_grad_();

  auto stateless = jit(fn, {.arg_names = {"x"}});
  stateless(x);
  write_report(stateless, (dir / "stateless.html").string());
  auto masked = jit(fn, {.disable_replace_uniform = true, .arg_names = {"x"}});
  masked(x);
  write_report(masked, (dir / "mask.html").string());

  auto bytes_of_dtype = [](const std::vector<SavedRow>& rows, const std::string& dtype) {
    int64_t n = 0;
    for (const SavedRow& r : rows) n += r.dtype == dtype ? r.bytes : 0;
    return n;
  };
  const std::vector<SavedRow> a = saved_rows(read(dir / "stateless.html"));
  const std::vector<SavedRow> b = saved_rows(read(dir / "mask.html"));
  EXPECT_EQ(a.size(), last_saved_for_backward(stateless).size());
  EXPECT_EQ(b.size(), last_saved_for_backward(masked).size());
  // Seed and offset: two i64 scalars, 16 bytes; no mask.
  EXPECT_EQ(bytes_of_dtype(a, "i64"), 16);
  EXPECT_EQ(bytes_of_dtype(a, "b8"), 0);
  // The mask: one bool per element.
  EXPECT_EQ(bytes_of_dtype(b, "b8"), 16 * 8);
  EXPECT_EQ(bytes_of_dtype(b, "i64"), 0);
}

TEST(Report, ReportDirWritesOneFilePerCompile) {
  const fs::path dir = test_dir() / "reports";
  ScopedEnv env("THUNDER_REPORT_DIR", dir.string());
  auto jfn = small_function();
  jfn(at::rand({2, 3}).requires_grad_());
  jfn(at::rand({2, 3}).requires_grad_());  // a hit: no report
  jfn(at::rand({4, 5}).requires_grad_());
  ASSERT_EQ(cache_misses(jfn), 2);
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"report-0.html", "report-1.html"}));
  // Each report is of its own compile: the guards name its shape.
  EXPECT_NE(section(read(dir / "report-0.html"), "guards").find("2, 3"), std::string::npos);
  EXPECT_NE(section(read(dir / "report-1.html"), "guards").find("4, 5"), std::string::npos);
}

// A report that cannot be written must not fail the user's call.
TEST(Report, ReportDirThatCannotBeWrittenOnlyWarns) {
  const fs::path file = test_dir() / "not-a-folder";
  std::ofstream(file) << "x";
  ScopedEnv env("THUNDER_REPORT_DIR", file.string());
  auto jfn = small_function();
  ::testing::internal::CaptureStderr();
  at::Tensor y = jfn(at::ones({3})).aten();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(at::allclose(y, at::full({3}, std::exp(3.0f))));
  EXPECT_NE(err.find("no compile report written"), std::string::npos) << err;
  EXPECT_NE(err.find(file.string()), std::string::npos) << err;
}

TEST(Report, Errors) {
  auto jfn = small_function();
  try {
    write_report(jfn, (test_dir() / "report.html").string());
    FAIL() << "expected thunder::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("write_report"), std::string::npos) << e.what();
  }
  jfn(at::rand({3}));
  const std::string bad = "/nonexistent-folder/report.html";
  try {
    write_report(jfn, bad);
    FAIL() << "expected thunder::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
  }
}

TEST(Report, WithoutGraphvizTheGraphSectionSaysSo) {
  auto jfn = small_function();
  jfn(at::rand({4, 5}).requires_grad_());
  const fs::path path = test_dir() / "report.html";
  {
    ScopedEnv no_dot("PATH", (path.parent_path() / "empty").string());
    write_report(jfn, path.string());
  }
  const std::string html = read(path);
  EXPECT_EQ(count(section(html, "graphs"), "<svg"), 0);
  EXPECT_EQ(count(section(html, "graphs"), "data-missing=\"dot\""), 2);
  EXPECT_EQ(saved_rows(html).size(), last_saved_for_backward(jfn).size());
  EXPECT_EQ(attr_values(section(html, "stages"), "data-stage"), stage_names(last_traces(jfn)));
}

// An optimizer-style step with its update under no_grad, called with grad
// mode on and then off: no backward either time, and the guards tell the two
// cache entries apart by grad mode.
TEST(Report, NoGradHasNoBackwardAndGuardsOnGradMode) {
  auto step = [](Tensor w, Tensor g) {
    NoGradGuard no_grad;
    w.add_(g, -0.1);
    return w * 1.0;
  };
  auto jstep = jit(step, {.arg_names = {"w", "g"}});
  at::Tensor w = at::randn({4, 3}).requires_grad_(), g = at::randn({4, 3});
  const fs::path dir = test_dir();
  jstep(w, g);
  write_report(jstep, (dir / "grad_on.html").string());
  {
    NoGradGuard no_grad;
    jstep(w, g);
  }
  write_report(jstep, (dir / "grad_off.html").string());

  for (const char* name : {"grad_on.html", "grad_off.html"}) {
    SCOPED_TRACE(name);
    const std::string html = read(dir / name);
    EXPECT_NE(section(html, "backward-stages").find("No backward"), std::string::npos);
    EXPECT_NE(section(html, "saved").find("No backward: nothing is saved"), std::string::npos);
    EXPECT_TRUE(saved_rows(html).empty());
    EXPECT_EQ(attr_values(section(html, "backward-stages"), "data-stage").size(), 0u);
    EXPECT_EQ(count(section(html, "graphs"), "<svg"), 1);  // the forward's only
    // The forward still shows the in-place update written back to w.
    EXPECT_NE(section(html, "stages").find("copy_"), std::string::npos);
  }
  const std::string on = section(read(dir / "grad_on.html"), "guards");
  const std::string off = section(read(dir / "grad_off.html"), "guards");
  EXPECT_NE(on.find("prologue.check_grad_mode(True)"), std::string::npos) << on;
  // The second page lists both entries' guards; the one run last is marked.
  EXPECT_EQ(attr_values(off, "data-entry"), (std::vector<std::string>{"0", "1"}));
  const size_t marked = off.find("<pre id=\"prologue\"");
  ASSERT_NE(marked, std::string::npos) << off;
  const std::string last = off.substr(marked, off.find("</pre>", marked) - marked);
  EXPECT_NE(last.find("prologue.check_grad_mode(False)"), std::string::npos) << last;
  EXPECT_NE(off.find("prologue.check_grad_mode(True)"), std::string::npos) << off;
  EXPECT_EQ(attr_values(read(dir / "grad_off.html"), "data-misses"), std::vector<std::string>{"2"});
}

// The router: a custom autograd function saves a zero tensor and the
// selected indices; its backward's in-place scatter_add_ appears
// functionalized in the backward stages, and the saved table lists exactly
// what the compiled forward hands the backward.
TEST(Report, RouterShowsTheCustomFunctionsSavedValuesAndScatter) {
  auto jrouter = jit(test::router, {.arg_names = {"hidden", "w_gate"}});
  at::Tensor hidden = at::randn({6, 8}), w = at::randn({4, 8}).requires_grad_();
  jrouter(hidden, w).aten().sum().backward();
  const fs::path path = test_dir() / "router.html";
  write_report(jrouter, path.string());
  const std::string html = read(path);

  EXPECT_EQ(attr_values(section(html, "backward-stages"), "data-stage"),
            stage_names(last_backward_traces(jrouter)));
  EXPECT_NE(section(html, "backward-stages").find("ltorch.scatter_add"), std::string::npos);
  EXPECT_EQ(count(section(html, "graphs"), "<svg"), 2);

  const std::vector<TensorInfo> saved = last_saved_for_backward(jrouter);
  const std::vector<SavedRow> rows = saved_rows(html);
  ASSERT_EQ(rows.size(), saved.size());
  bool indices = false;
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].name, saved[i].name);
    EXPECT_EQ(rows[i].bytes, saved[i].bytes);
    // The selected expert per token: [6, 1] int64, 48 bytes.
    if (rows[i].dtype == "i64" && rows[i].shape == "[6, 1]") indices = rows[i].bytes == 48;
  }
  EXPECT_TRUE(indices) << section(html, "saved");
}

std::string run(const std::string& command) {
  std::string out;
  if (FILE* p = ::popen(command.c_str(), "r")) {
    char buf[8192];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    ::pclose(p);
  }
  return out;
}

// The demo's model (a small char-GPT: embeddings, two attention blocks, the
// loss) opened in a real browser: both graphs render, the page's script runs
// to its end, and a screenshot is taken.
TEST(Report, DemoModelOpensInHeadlessChromium) {
  const char* chromium = "/usr/bin/chromium";
  if (!fs::exists(chromium))
    GTEST_SKIP() << chromium << " is not installed (scripts/install-deps.sh)";
  at::manual_seed(0);
  models::CharGPT gpt(/*vocab=*/20, /*context=*/8, /*C=*/16, /*heads=*/2, /*layers=*/2);
  auto jgpt = jit(gpt);
  jgpt(at::randint(0, 20, {3, 8}), at::randint(0, 20, {3, 8})).aten().backward();
  const fs::path dir = test_dir();
  const fs::path page = dir / "report.html";
  write_report(jgpt, page.string());
  const std::string browser =
      std::string("timeout 120 ") + chromium +
      " --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking"
      " --disable-dev-shm-usage --user-data-dir=" +
      (dir / "profile").string();
  const std::string dom = run(browser + " --dump-dom file://" + page.string() + " 2>/dev/null");
  ASSERT_NE(dom.find("</html>"), std::string::npos) << "chromium printed no page:\n" << dom;
  EXPECT_EQ(count(dom, "<svg"), 2);
  // The page's one script ran to its end without an error.
  EXPECT_NE(dom.find("data-script-ok=\"1\""), std::string::npos);
  // One cluster per fusion region, forward and backward, as the browser sees it.
  const int regions =
      count_regions(last_traces(jgpt).back()) + count_regions(last_backward_traces(jgpt).back());
  EXPECT_GT(regions, 2);
  EXPECT_EQ(count(dom, "class=\"cluster\""), regions);
  // Every saved value is a row of the table in the rendered page too.
  EXPECT_EQ(count(dom, "<tr class=\"saved\""),
            static_cast<int>(last_saved_for_backward(jgpt).size()));

  const fs::path png = dir / "report.png";
  run(browser + " --screenshot=" + png.string() + " --window-size=1280,2000 file://" +
      page.string() + " >/dev/null 2>&1");
  ASSERT_TRUE(fs::exists(png));
  EXPECT_GT(fs::file_size(png), 1000u);
  EXPECT_EQ(read(png).substr(1, 3), "PNG");
}

}  // namespace
}  // namespace thunder
