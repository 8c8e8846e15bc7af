#include "thunder/runtime/collective_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "thunder/core/error.h"
#include "thunder/prims/distributed.h"
#include "thunder/runtime/process_groups.h"

namespace thunder::runtime {
namespace {

// What one rank sends: "<hash> <count>\n" then one description per line.
struct Sequence {
  uint64_t hash = 0;
  int64_t count = 0;
  std::vector<std::string> descs;
};

std::string encode(const Sequence& s) {
  std::string out = fmt::format("{:016x} {}\n", s.hash, s.count);
  for (const std::string& d : s.descs) out += d + "\n";
  return out;
}

Sequence decode(const std::string& text) {
  Sequence s;
  std::istringstream in(text);
  std::string line;
  if (std::getline(in, line)) {
    std::istringstream head(line);
    std::string hex;
    head >> hex >> s.count;
    s.hash = std::strtoull(hex.c_str(), nullptr, 16);
  }
  while (std::getline(in, line)) s.descs.push_back(line);
  return s;
}

// This rank's sequence around `at` (the first difference), numbered.
std::string summary(const std::vector<std::string>& descs, size_t at) {
  if (descs.empty()) return "none";
  const size_t from = at > 2 ? at - 2 : 0, to = std::min(descs.size(), at + 3);
  std::string out = from > 0 ? "... " : "";
  for (size_t i = from; i < to; ++i)
    out += fmt::format("{}#{} {}", i == from ? "" : "; ", i, descs[i]);
  if (to < descs.size()) out += fmt::format("; ... ({} in all)", descs.size());
  return out;
}

void check_group(const std::vector<CollectiveInfo>& seq, int64_t group) {
  const int64_t world = group_size(group);
  if (world <= 1) return;
  const int64_t rank = group_rank(group);
  Sequence mine;
  for (const CollectiveInfo& c : seq)
    if (c.group == group) mine.descs.push_back(c.desc);
  mine.count = static_cast<int64_t>(mine.descs.size());
  mine.hash = collective_hash(seq, group);
  runtime::Compared all = compare_across_ranks(
      group, mine.hash, encode(mine),
      "thunder::distributed: comparing the collectives of a new cache entry with the other "
      "ranks failed: another rank did not compile a new entry for this call (its shapes or "
      "program differ, so it reused an entry it already had, or it is not calling this program "
      "now), or it exited");
  if (all.texts.empty()) return;  // every rank's hash is this one
  std::vector<Sequence> seqs;
  for (const std::string& s : all.texts) seqs.push_back(decode(s));
  int64_t differs = 1;  // the first rank whose sequence is not rank 0's
  while (differs + 1 < world && seqs[differs].hash == seqs[0].hash) ++differs;
  const Sequence& root = seqs[0];
  std::string others;
  if (rank == 0 || seqs[rank].hash == root.hash)
    others = fmt::format("; rank {}: {} collectives, hash {:016x}", differs, seqs[differs].count,
                         seqs[differs].hash);
  // The first position where this rank's sequence leaves rank 0's.
  size_t at = 0;
  if (mine.hash != root.hash)
    while (at < mine.descs.size() && at < root.descs.size() && mine.descs[at] == root.descs[at])
      ++at;
  std::string first;
  if (mine.hash != root.hash) {
    auto at_or_none = [&](const std::vector<std::string>& d) {
      return at < d.size() ? d[at] : std::string("nothing (the sequence ends)");
    };
    first = fmt::format(". First difference, collective #{}: rank 0 issues {}, this rank {}", at,
                        at_or_none(root.descs), at_or_none(mine.descs));
  }
  fail(
      "thunder::distributed: the ranks compiled different collective sequences for this call "
      "(rank 0: {} collectives, hash {:016x}; this rank ({} of {}): {} collectives, hash "
      "{:016x}{}); every rank must run the same program on the same shapes, on process group "
      "{}{}. This rank's collectives on it: {}",
      root.count, root.hash, rank, world, mine.count, mine.hash, others, group, first,
      summary(mine.descs, at));
}

}  // namespace

std::vector<CollectiveInfo> collectives_of(const std::vector<const Trace*>& traces) {
  std::vector<CollectiveInfo> out;
  for (const Trace* t : traces) {
    if (t == nullptr) continue;
    for (const BoundSymbol& b : t->bsyms) {
      if (!prims::is_collective(*b.sym)) continue;
      CollectiveInfo c;
      std::string args;
      for (size_t i = 0; i < b.args.size(); ++i) {
        const Value& v = b.args[i];
        const std::string& name = i < b.sym->params.size() ? b.sym->params[i] : "";
        if (name == "group") c.group = v.as_int();
        std::string a = v.is_tensor() ? v.proxy()->type_str() : v.str();
        args += (i ? ", " : "") + (name == "group" ? "group=" + a : a);
      }
      c.desc = fmt::format("{}({})", b.sym->id, args);
      out.push_back(std::move(c));
    }
  }
  return out;
}

uint64_t collective_hash(const std::vector<CollectiveInfo>& seq, int64_t group) {
  uint64_t h = 1469598103934665603ull;
  for (const CollectiveInfo& c : seq) {
    if (c.group != group) continue;
    for (unsigned char ch : c.desc) h = (h ^ ch) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;  // separator: "ab","c" differs from "a","bc"
  }
  return h;
}

void check_collectives(const std::vector<CollectiveInfo>& seq, std::vector<int64_t> groups) {
  for (const CollectiveInfo& c : seq) groups.push_back(c.group);
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  for (int64_t g : groups) check_group(seq, g);
}

}  // namespace thunder::runtime
