// The trace parser. A hand-written reader of the printer's line format: one
// line is one header comment, input type, statement, marker, del or return,
// so the parser works line by line with a small cursor for what is inside.
#include "thunder/core/parse_trace.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <unordered_map>
#include <unordered_set>

#include "thunder/core/del_symbol.h"
#include "thunder/core/error.h"
#include "thunder/core/tracing.h"

namespace thunder {

namespace {

template <typename... Args>
[[noreturn]] void fail_at(int line, fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format("line {}: ", line) + fmt::format(f, std::forward<Args>(args)...));
}

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// A position in one line, with the line number for errors.
class Cursor {
 public:
  Cursor(std::string_view s, int line) : s_(s), line_(line) {}

  int line() const { return line_; }
  bool done() const { return i_ >= s_.size(); }
  char peek() const { return done() ? '\0' : s_[i_]; }
  std::string_view rest() const { return s_.substr(i_); }
  size_t pos() const { return i_; }
  void reset(size_t pos) { i_ = pos; }

  bool consume(std::string_view lit) {
    if (s_.substr(i_, lit.size()) != lit) return false;
    i_ += lit.size();
    return true;
  }
  void expect(std::string_view lit, std::string_view what) {
    if (!consume(lit)) fail_at(line_, "expected {} ('{}'), found '{}'", what, lit, excerpt());
  }
  // [A-Za-z_][A-Za-z0-9_]*; empty if none here.
  std::string_view ident() {
    size_t start = i_;
    if (!done() && is_ident_start(s_[i_]))
      while (!done() && is_ident_char(s_[i_])) ++i_;
    return s_.substr(start, i_ - start);
  }
  // Symbol ids: identifiers joined by dots ("prims.mul", "del", "cppFusion0").
  std::string_view symbol_id() {
    size_t start = i_;
    while (!done() && (is_ident_char(s_[i_]) || s_[i_] == '.')) ++i_;
    return s_.substr(start, i_ - start);
  }
  // The text at the cursor, shortened, for messages.
  std::string excerpt() const {
    std::string_view r = rest();
    if (r.empty()) return "end of line";
    return std::string(r.substr(0, 40)) + (r.size() > 40 ? "..." : "");
  }

 private:
  std::string_view s_;
  int line_;
  size_t i_ = 0;
};

DType dtype_from_long_name(std::string_view name, int line) {
  for (int d = 0; d < kNumDTypes; ++d)
    if (long_name(static_cast<DType>(d)) == name) return static_cast<DType>(d);
  fail_at(line, "bad literal: unknown dtype 'dtypes.{}'", name);
}

// What a statement assigns to: a name, a list of targets, or None.
struct Target {
  enum class Kind { Name, List, None } kind = Kind::None;
  std::string name;
  std::vector<Target> items;
};

// The parse of one type comment entry: `t0: "cpu f32[2, 3]" detached`.
struct TypedName {
  std::string name;
  Proxy type;  // kind, shape, dtype, device, requires_grad, tags
};

class Parser {
 public:
  explicit Parser(std::string_view text) {
    size_t start = 0;
    int n = 1;
    while (start <= text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      std::string_view l = text.substr(start, end - start);
      if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
      if (!(end == text.size() && l.empty())) lines_.push_back({n, l});
      start = end + 1;
      ++n;
    }
    end_line_ = lines_.empty() ? 1 : lines_.back().number + 1;
  }

  bool at_end() {
    skip_blank();
    return next_ >= lines_.size();
  }

  int current_line() const { return next_ < lines_.size() ? lines_[next_].number : last_line(); }

  Trace trace() {
    skip_blank();
    Trace t;
    local_.clear();
    header(t);
    inputs(t);
    body(t);
    return t;
  }

 private:
  struct Line {
    int number;
    std::string_view text;
  };

  // Blank lines and `;` lines (FileCheck's RUN/CHECK directives in .trace files).
  static bool skippable(std::string_view l) {
    size_t k = l.find_first_not_of(' ');
    return k == std::string_view::npos || l[k] == ';';
  }
  void skip_blank() {
    while (next_ < lines_.size() && skippable(lines_[next_].text)) ++next_;
  }
  bool has_line() {
    skip_blank();
    return next_ < lines_.size();
  }
  const Line& peek_line() { return lines_[next_]; }
  // End-of-text errors name the line after the last one.
  int last_line() const { return end_line_; }

  // `# provenance`, `# note`..., then `def name(a, b):`.
  void header(Trace& t) {
    bool first = true;
    while (has_line() && peek_line().text.starts_with("#")) {
      std::string_view c = peek_line().text.substr(1);
      if (c.starts_with(" ")) c.remove_prefix(1);
      (first ? t.provenance : t.notes.emplace_back()) = std::string(c);
      first = false;
      ++next_;
    }
    if (!has_line()) fail_at(last_line(), "expected 'def name(inputs):', found end of text");
    const Line& l = lines_[next_++];
    Cursor c(l.text, l.number);
    c.expect("def ", "a trace header 'def name(inputs):'");
    t.fn_name = std::string(c.ident());
    if (t.fn_name.empty()) fail_at(l.number, "expected the trace's name after 'def'");
    c.expect("(", "the input list");
    while (!c.consume(")")) {
      if (!pending_inputs_.empty()) c.expect(", ", "',' between inputs");
      std::string_view name = c.ident();
      if (name.empty()) fail_at(l.number, "expected an input name, found '{}'", c.excerpt());
      pending_inputs_.emplace_back(name);
    }
    c.expect(":", "':' after the input list");
    if (!c.done()) fail_at(l.number, "unexpected text after 'def': '{}'", c.excerpt());
  }

  // One `# x: "cpu f32[3]" requires_grad` line per input, in order.
  void inputs(Trace& t) {
    std::vector<std::string> names = std::move(pending_inputs_);
    pending_inputs_.clear();
    for (const std::string& name : names) {
      if (!has_line())
        fail_at(last_line(), "expected the type comment of input {} ('# {}: \"...\"')", name, name);
      const Line& l = lines_[next_++];
      Cursor c(l.text, l.number);
      if (!c.consume("  # "))
        fail_at(l.number, "expected the type comment of input {} ('  # {}: \"...\"'), found '{}'",
                name, name, l.text);
      TypedName tn = typed_name(c, true);
      if (tn.name != name)
        fail_at(l.number, "expected the type comment of input {}, found one for {}", name, tn.name);
      if (!c.done())
        fail_at(l.number, "unexpected text after the type of {}: '{}'", name, c.excerpt());
      if (local_.count(name)) fail_at(l.number, "input {} is listed twice", name);
      ProxyPtr p = earlier(name, tn.type, true);
      if (!p) {
        p = std::make_shared<Proxy>(tn.type);
        p->name = name;
      }
      define(t, p);
      t.inputs.push_back(p);
    }
  }

  void body(Trace& t) {
    const bool all_backward = t.fn_name == kBackwardFnName;
    bool in_backward = false;
    for (;;) {
      if (!has_line()) fail_at(last_line(), "expected '  return ...' to end trace {}", t.fn_name);
      const Line& l = lines_[next_++];
      size_t indent = l.text.find_first_not_of(' ');
      Cursor c(l.text.substr(indent), l.number);
      if (indent == 2) {
        if (c.consume("return ")) {
          t.output = value(c);
          if (!c.done())
            fail_at(l.number, "unexpected text after the returned value: '{}'", c.excerpt());
          return;
        }
        if (c.consume("# ")) {
          if (c.rest() == kBackwardMarker || c.rest() == kForwardMarker) {
            in_backward = c.rest() == kBackwardMarker;
            continue;
          }
          fail_at(l.number, "expected a statement, '# {}' or '# {}' at indentation 2, found '{}'",
                  kBackwardMarker, kForwardMarker, l.text);
        }
        BoundSymbol b = statement(t, c, {}, in_backward || all_backward);
        if (in_backward || all_backward) b.tags |= static_cast<uint32_t>(StmtTag::BACKWARD);
        t.bsyms.push_back(std::move(b));
        continue;
      }
      // A decomposition line: "# " at 2 + 2 * depth spaces, depth one more than
      // the statement it belongs to (or a sibling of an earlier one).
      size_t depth = indent >= 4 && indent % 2 == 0 ? (indent - 2) / 2 : 0;
      if (depth == 0 || !c.consume("# "))
        fail_at(l.number,
                "bad indentation: expected a statement at 2 spaces or a '# ' decomposition line "
                "at 4, 6, ... spaces, found {} spaces",
                indent);
      BoundSymbol* parent = t.bsyms.empty() ? nullptr : &t.bsyms.back();
      for (size_t d = 1; parent && d < depth; ++d)
        parent = parent->subsymbols.empty() ? nullptr : &parent->subsymbols.back();
      if (!parent || parent->sym == &del_symbol())
        fail_at(l.number,
                "bad indentation: a decomposition line at depth {} has no statement at depth {} "
                "above it",
                depth, depth - 1);
      std::vector<const Symbol*> origins = parent->origins;
      origins.push_back(parent->sym);
      BoundSymbol b = statement(t, c, std::move(origins), all_backward || in_backward);
      parent->subsymbols.push_back(std::move(b));
    }
  }

  // Traces of one text share values, as a forward and its backward do in
  // memory (rematerialize matches saved values by identity): a name an
  // earlier trace defined with the same type is the same value.
  ProxyPtr earlier(const std::string& name, const Proxy& type, bool with_requires_grad) {
    auto it = names_.find(name);
    if (it == names_.end() || local_.count(name)) return nullptr;
    const Proxy& p = *it->second;
    bool same = p.type_str() == type.type_str() && p.tags == type.tags &&
                (!with_requires_grad || p.requires_grad == type.requires_grad);
    return same ? it->second : nullptr;
  }

  void define(Trace& t, const ProxyPtr& p) {
    names_[p->name] = p;
    local_.insert(p->name);
    if (!t.name_taken(p->name)) t.reserve_name(p->name);
  }

  // `del a, b`, or `[target = ]symbol(args)[  # type comment]`.
  BoundSymbol statement(Trace& t, Cursor& c, std::vector<const Symbol*> origins, bool backward) {
    int line = c.line();
    BoundSymbol b;
    b.origins = std::move(origins);
    if (c.consume("del ")) {
      b.sym = &del_symbol();
      do {
        std::string_view name = c.ident();
        if (name.empty()) fail_at(line, "expected a name to delete, found '{}'", c.excerpt());
        b.args.emplace_back(lookup(name, line));
      } while (c.consume(", "));
      if (!c.done()) fail_at(line, "unexpected text in del: '{}'", c.excerpt());
      return b;
    }
    // An assignment target, if " = " follows one.
    Target target;
    size_t start = c.pos();
    if (c.peek() == '[' || is_ident_start(c.peek())) {
      Target maybe = parse_target(c);
      if (c.consume(" = "))
        target = std::move(maybe);
      else
        c.reset(start);
    }
    std::string id(c.symbol_id());
    if (id.empty()) fail_at(line, "expected a symbol id (e.g. prims.add), found '{}'", c.excerpt());
    const Symbol* sym = symbol_registry().find(id);
    if (!sym)
      fail_at(line, "unknown symbol id '{}'{}", id,
              id.find('.') == std::string::npos
                  ? " (fusion regions and other symbols made by a pass cannot be read back)"
                  : " (not in the symbol registry)");
    b.sym = sym;
    c.expect("(", "'(' after " + id);
    if (!c.consume(")")) {
      do b.args.push_back(value(c));
      while (c.consume(", "));
      c.expect(")", "',' or ')' in the arguments of " + id);
    }
    if (!sym->params.empty() && b.args.size() != sym->params.size()) {
      std::string params;
      for (const auto& p : sym->params) params += (params.empty() ? "" : ", ") + p;
      fail_at(line, "wrong arity: {} takes {} arguments ({}), got {}", id, sym->params.size(),
              params, b.args.size());
    }
    std::vector<TypedName> types;
    if (c.consume("  # ")) {
      do types.push_back(typed_name(c, false));
      while (c.consume(", "));
    }
    if (!c.done()) fail_at(line, "unexpected text after the statement: '{}'", c.excerpt());
    b.output = bind_outputs(t, target, types, b, backward, line);
    check_meta(b, line);
    return b;
  }

  Target parse_target(Cursor& c) {
    Target t;
    if (c.consume("[")) {
      t.kind = Target::Kind::List;
      if (c.consume("]")) return t;
      do t.items.push_back(parse_target(c));
      while (c.consume(", "));
      c.expect("]", "']' closing the output list");
      return t;
    }
    std::string_view name = c.ident();
    if (name == "None") return t;
    t.kind = Target::Kind::Name;
    t.name = std::string(name);
    return t;
  }

  // Makes (or, for a name already defined, finds) the proxies a statement
  // assigns, typed by its type comment.
  Value bind_outputs(Trace& t, const Target& target, const std::vector<TypedName>& types,
                     const BoundSymbol& b, bool backward, int line) {
    std::vector<std::string> assigned;
    collect_names(target, assigned);
    for (const TypedName& tn : types)
      if (std::find(assigned.begin(), assigned.end(), tn.name) == assigned.end())
        fail_at(line, "the type comment names {}, which the statement does not assign", tn.name);
    std::vector<ProxyPtr> args = b.flat_args();
    bool args_require_grad = std::any_of(args.begin(), args.end(), [](const ProxyPtr& p) {
      return p->is_tensor() && p->requires_grad;
    });
    std::unordered_map<std::string, ProxyPtr> made;
    for (const std::string& name : assigned) {
      auto ty = std::find_if(types.begin(), types.end(),
                             [&](const TypedName& tn) { return tn.name == name; });
      if (ty == types.end())
        fail_at(line, "malformed type comment: no type for {} (expected '# {}: \"...\"')", name,
                name);
      if (made.count(name)) continue;
      (void)backward;
      if (ProxyPtr p = earlier(name, ty->type, false)) {
        define(t, p);
        made[name] = p;
        continue;
      }
      auto old = names_.find(name);
      if (old != names_.end() && local_.count(name)) {
        // A composite's outputs reappear in its decomposition; a statement may
        // also return one of its inputs. Same name, same value.
        const Proxy& p = *old->second;
        if (p.type_str() != ty->type.type_str() || p.tags != ty->type.tags)
          fail_at(line, "{} is already defined as \"{}\", the type comment says \"{}\"", name,
                  p.type_str(), ty->type.type_str());
        made[name] = old->second;
        continue;
      }
      auto p = std::make_shared<Proxy>(ty->type);
      p->name = name;
      // As tracing sets it (set_grad_metadata): a detached value was made with
      // grad disabled.
      // (Backward values' requires_grad is an artifact of how rules were
      // recorded, on placeholders, and nothing reads it: there is no double
      // backward. The same rule applies to them; it may differ from memory.)
      p->requires_grad = p->is_tensor() && is_float(p->dtype) && args_require_grad &&
                         !p->has_tag(ProxyTag::DETACHED_AUTOGRAD_GRAPH);
      define(t, p);
      made[name] = p;
    }
    return target_value(target, made);
  }

  static void collect_names(const Target& t, std::vector<std::string>& out) {
    if (t.kind == Target::Kind::Name) out.push_back(t.name);
    for (const Target& i : t.items) collect_names(i, out);
  }
  static Value target_value(const Target& t, std::unordered_map<std::string, ProxyPtr>& made) {
    switch (t.kind) {
      case Target::Kind::None:
        return Value();
      case Target::Kind::Name:
        return Value(made.at(t.name));
      case Target::Kind::List: {
        std::vector<Value> l;
        for (const Target& i : t.items) l.push_back(target_value(i, made));
        return Value(std::move(l));
      }
    }
    return Value();
  }

  // A prim's meta must agree with the printed types: a hand-edited trace with a
  // wrong shape fails here, at its line, not deep inside a later pass.
  static void check_meta(const BoundSymbol& b, int line) {
    if (!b.sym->is_prim || !b.sym->meta) return;
    Trace scratch;
    Value expected;
    {
      TracingScope scope(scratch);
      try {
        expected = b.sym->meta(OpArgs(b.sym, b.args));
      } catch (const Error& e) {
        fail_at(line, "{}", e.what());
      }
    }
    std::vector<ProxyPtr> want, got;
    expected.collect_proxies(want);
    b.output.collect_proxies(got);
    if (want.size() != got.size())
      fail_at(line, "{} makes {} outputs, the statement assigns {}", b.sym->id, want.size(),
              got.size());
    for (size_t i = 0; i < want.size(); ++i)
      if (want[i]->type_str() != got[i]->type_str())
        fail_at(line, "malformed type comment: {} is \"{}\", but {} makes \"{}\"", got[i]->name,
                got[i]->type_str(), b.sym->id, want[i]->type_str());
  }

  const ProxyPtr& lookup(std::string_view name, int line) {
    auto it = names_.find(std::string(name));
    if (it == names_.end() || !local_.count(it->first)) fail_at(line, "undefined name '{}'", name);
    return it->second;
  }

  // `name: "type"` and the words after it.
  TypedName typed_name(Cursor& c, bool is_input) {
    int line = c.line();
    TypedName tn;
    tn.name = std::string(c.ident());
    if (tn.name.empty())
      fail_at(line, "malformed type comment: expected a name, found '{}'", c.excerpt());
    c.expect(": \"", "malformed type comment: ': \"' after " + tn.name);
    size_t close = c.rest().find('"');
    if (close == std::string_view::npos)
      fail_at(line, "malformed type comment: the type of {} has no closing '\"'", tn.name);
    std::string_view type = c.rest().substr(0, close);
    c.reset(c.pos() + close + 1);
    tn.type = parse_type(type, tn.name, line);
    // Words: " requires_grad" (inputs only), then tags.
    for (;;) {
      size_t at = c.pos();
      if (!c.consume(" ")) break;
      std::string_view w = c.ident();
      if (w.empty()) {
        c.reset(at);
        break;
      }
      if (is_input && w == "requires_grad") {
        tn.type.requires_grad = true;
        continue;
      }
      bool found = false;
      for (ProxyTag tag : kProxyTags)
        if (w == tag_word(tag)) {
          tn.type.tags |= static_cast<uint32_t>(tag);
          found = true;
        }
      if (!found)
        fail_at(line, "malformed type comment: unknown word '{}' after the type of {}{}", w,
                tn.name, is_input ? "" : " (requires_grad is printed on inputs only)");
    }
    return tn;
  }

  static Proxy parse_type(std::string_view s, const std::string& name, int line) {
    Proxy p;
    if (s == "int" || s == "float" || s == "bool") {
      p.kind = Proxy::Kind::Number;
      p.dtype = s == "int" ? DType::i64 : s == "float" ? DType::f64 : DType::b8;
      return p;
    }
    auto bad = [&](const char* why) {
      fail_at(line,
              "malformed type comment for {}: \"{}\" ({}; expected e.g. \"cpu f32[2, 3]\", "
              "\"int\", \"float\" or \"bool\")",
              name, s, why);
    };
    size_t space = s.find(' ');
    if (space == std::string_view::npos) bad("no device");
    try {
      p.device = Device::parse(s.substr(0, space));
    } catch (const Error&) {
      bad("unknown device");
    }
    std::string_view rest = s.substr(space + 1);
    size_t open = rest.find('[');
    if (open == std::string_view::npos || rest.back() != ']') bad("no shape");
    std::string_view dt = rest.substr(0, open);
    bool found = false;
    for (int d = 0; d < kNumDTypes; ++d)
      if (short_name(static_cast<DType>(d)) == dt) {
        p.dtype = static_cast<DType>(d);
        found = true;
      }
    if (!found) bad("unknown dtype");
    std::string_view dims = rest.substr(open + 1, rest.size() - open - 2);
    while (!dims.empty()) {
      int64_t v = 0;
      auto [ptr, ec] = std::from_chars(dims.data(), dims.data() + dims.size(), v);
      if (ec != std::errc() || v < 0) bad("bad dimension");
      dims.remove_prefix(ptr - dims.data());
      p.shape.push_back(v);
      if (dims.empty()) break;
      if (!dims.starts_with(", ")) bad("dimensions are separated by ', '");
      dims.remove_prefix(2);
    }
    return p;
  }

  // A literal as Value::str() prints it, or a defined name.
  Value value(Cursor& c) {
    int line = c.line();
    char ch = c.peek();
    if (c.consume("[")) {
      std::vector<Value> l;
      if (c.consume("]")) return Value(std::move(l));
      do l.push_back(value(c));
      while (c.consume(", "));
      c.expect("]", "',' or ']' in a list");
      return Value(std::move(l));
    }
    if (c.consume("(")) {
      std::vector<int64_t> l;
      if (c.consume(")")) return Value(std::move(l));
      for (;;) {
        Value v = value(c);
        if (v.kind() != Value::Kind::Int)
          fail_at(line, "bad literal: int tuples hold ints only, found {}", v.str());
        l.push_back(v.as_int());
        if (c.consume(")") || (l.size() == 1 && c.consume(",)"))) break;
        c.expect(", ", "bad literal: ',' or ')' in an int tuple");
      }
      return Value(std::move(l));
    }
    if (ch == '\'') {
      c.consume("'");
      size_t close = c.rest().find('\'');
      if (close == std::string_view::npos) fail_at(line, "bad literal: unterminated string");
      std::string s(c.rest().substr(0, close));
      c.reset(c.pos() + close + 1);
      return Value(std::move(s));
    }
    if (c.consume("dtypes.")) return Value(dtype_from_long_name(c.ident(), line));
    if (c.consume("devices.Device(\"")) {
      size_t close = c.rest().find("\")");
      if (close == std::string_view::npos) fail_at(line, "bad literal: unterminated device");
      std::string_view d = c.rest().substr(0, close);
      c.reset(c.pos() + close + 2);
      try {
        return Value(Device::parse(d));
      } catch (const Error& e) {
        fail_at(line, "bad literal: {}", e.what());
      }
    }
    if (std::isdigit(static_cast<unsigned char>(ch)) || ch == '-') return number(c);
    size_t at = c.pos();
    std::string_view w = c.ident();
    if (w.empty()) fail_at(line, "bad literal: expected a value, found '{}'", c.excerpt());
    if (w == "None") return Value();
    if (w == "True") return Value(true);
    if (w == "False") return Value(false);
    if (w == "inf" || w == "nan") {
      c.reset(at);
      return number(c);
    }
    return Value(lookup(w, line));
  }

  // Ints ("-7") and Python float reprs ("2.0", "1e-05", "inf", "-inf", "nan").
  static Value number(Cursor& c) {
    int line = c.line();
    size_t start = c.pos();
    std::string tok;
    while (!c.done()) {
      char ch = c.peek();
      bool exp_sign = (ch == '+' || ch == '-') && !tok.empty() && (tok.back() == 'e');
      if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || exp_sign ||
          (ch == '-' && tok.empty())) {
        tok += ch;
        c.reset(c.pos() + 1);
      } else {
        break;
      }
    }
    std::string body = tok[0] == '-' ? tok.substr(1) : tok;
    if (body == "inf" || body == "nan") return Value(std::strtod(tok.c_str(), nullptr));
    bool is_float = tok.find_first_of(".e") != std::string::npos;
    if (!is_float) {
      int64_t v = 0;
      auto [ptr, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
      if (ec == std::errc() && ptr == tok.data() + tok.size()) return Value(v);
    } else {
      char* end = nullptr;
      double d = std::strtod(tok.c_str(), &end);
      if (!tok.empty() && end == tok.c_str() + tok.size()) return Value(d);
    }
    c.reset(start);
    fail_at(line, "bad literal: '{}' is not a number", tok);
  }

  std::vector<Line> lines_;
  size_t next_ = 0;
  int end_line_ = 1;
  std::vector<std::string> pending_inputs_;
  std::unordered_map<std::string, ProxyPtr> names_;  // every trace's values so far
  std::unordered_set<std::string> local_;            // names the current trace defined
};

}  // namespace

Trace parse_trace(std::string_view text) {
  Parser p(text);
  Trace t = p.trace();
  if (!p.at_end())
    fail("line {}: expected the end of the text after trace {} (parse_traces reads several)",
         p.current_line(), t.fn_name);
  return t;
}

std::vector<Trace> parse_traces(std::string_view text) {
  Parser p(text);
  std::vector<Trace> out;
  while (!p.at_end()) out.push_back(p.trace());
  if (out.empty()) fail("line 1: expected a trace ('def name(inputs):'), found none");
  return out;
}

}  // namespace thunder
