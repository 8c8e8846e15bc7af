#include "thunder/core/symbol.h"

#include <algorithm>

#include "thunder/core/error.h"

namespace thunder {

const std::string& OpArgs::param_name(size_t i) const {
  static const std::string unnamed = "?";
  return i < sym_->params.size() ? sym_->params[i] : unnamed;
}

void OpArgs::bad(size_t i, const char* expected) const {
  if (i >= args_.size())
    fail("{}: missing argument {} (got {} arguments)", sym_->id, param_name(i), args_.size());
  fail("{}: argument {} must be {}, got {}", sym_->id, param_name(i), expected, args_[i].str());
}

const Value& OpArgs::get(std::string_view name) const {
  for (size_t i = 0; i < sym_->params.size(); ++i)
    if (sym_->params[i] == name) {
      if (i >= args_.size()) bad(i, "present");
      return args_[i];
    }
  fail("{}: has no parameter named '{}'", sym_->id, name);
}

const Proxy& OpArgs::tensor(size_t i) const { return *tensor_ptr(i); }

const ProxyPtr& OpArgs::tensor_ptr(size_t i) const {
  if (i >= args_.size() || !args_[i].is_tensor()) bad(i, "a tensor");
  return args_[i].proxy();
}

int64_t OpArgs::integer(size_t i) const {
  if (i >= args_.size() || args_[i].kind() != Value::Kind::Int) bad(i, "an int");
  return args_[i].as_int();
}

double OpArgs::number(size_t i) const {
  if (i >= args_.size()) bad(i, "a number");
  auto k = args_[i].kind();
  if (k != Value::Kind::Int && k != Value::Kind::Double && k != Value::Kind::Bool)
    bad(i, "a number");
  return args_[i].to_double();
}

bool OpArgs::boolean(size_t i) const {
  if (i >= args_.size() || args_[i].kind() != Value::Kind::Bool) bad(i, "a bool");
  return args_[i].as_bool();
}

const std::vector<int64_t>& OpArgs::ints(size_t i) const {
  if (i >= args_.size() || args_[i].kind() != Value::Kind::IntList) bad(i, "an int list");
  return args_[i].as_int_list();
}

DType OpArgs::dtype(size_t i) const {
  if (i >= args_.size() || args_[i].kind() != Value::Kind::DType) bad(i, "a dtype");
  return args_[i].as_dtype();
}

const std::string& OpArgs::string(size_t i) const {
  if (i >= args_.size() || args_[i].kind() != Value::Kind::String) bad(i, "a string");
  return args_[i].as_string();
}

const std::vector<Value>& OpArgs::list(size_t i) const {
  if (i >= args_.size() || !args_[i].is_list()) bad(i, "a list");
  return args_[i].as_list();
}

std::string_view Symbol::module() const {
  auto dot = id.find('.');
  return dot == std::string::npos ? std::string_view() : std::string_view(id).substr(0, dot);
}

std::string_view Symbol::name() const {
  auto dot = id.find('.');
  return dot == std::string::npos ? std::string_view(id) : std::string_view(id).substr(dot + 1);
}

Symbol& SymbolRegistry::add(Symbol s) {
  std::lock_guard<std::mutex> lock(mu_);
  THUNDER_CHECK(std::none_of(symbols_.begin(), symbols_.end(),
                             [&](const auto& other) { return other->id == s.id; }),
                "symbol registry: '{}' is already registered", s.id);
  s.index = static_cast<int>(symbols_.size());
  symbols_.push_back(std::make_unique<Symbol>(std::move(s)));
  return *symbols_.back();
}

const Symbol& SymbolRegistry::find_or_add(Symbol s) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& other : symbols_)
    if (other->id == s.id) return *other;
  s.index = static_cast<int>(symbols_.size());
  symbols_.push_back(std::make_unique<Symbol>(std::move(s)));
  return *symbols_.back();
}

const Symbol* SymbolRegistry::find(std::string_view id) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& s : symbols_)
    if (s->id == id) return s.get();
  return nullptr;
}

size_t SymbolRegistry::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return symbols_.size();
}

const Symbol& SymbolRegistry::at(size_t index) const {
  std::lock_guard<std::mutex> lock(mu_);
  return *symbols_.at(index);
}

const Symbol& SymbolRegistry::get(std::string_view id) const {
  const Symbol* s = find(id);
  THUNDER_CHECK(s != nullptr, "unknown symbol '{}'", id);
  return *s;
}

Symbol& SymbolRegistry::mutable_get(std::string_view id) {
  Symbol& s = const_cast<Symbol&>(get(id));
  bump_registry_version();
  return s;
}

RegistryChange SymbolRegistry::add_tags(std::string_view id, uint32_t bits) {
  Symbol& s = const_cast<Symbol&>(get(id));
  const uint64_t layer = next_layer_++;
  tag_layers_.push_back({layer, &s, bits, bits & ~s.tags});
  s.tags |= bits;
  bump_registry_version();
  return RegistryChange([this, layer] { remove_tag_layer(layer); });
}

// Takes back the bits the layer turned on, except those a newer layer still in
// effect also asked for: that layer now owns them (and takes them back later).
void SymbolRegistry::remove_tag_layer(uint64_t layer) {
  auto it = std::find_if(tag_layers_.begin(), tag_layers_.end(),
                         [&](const TagLayer& l) { return l.id == layer; });
  if (it == tag_layers_.end()) return;
  const TagLayer gone = *it;
  tag_layers_.erase(it);
  uint32_t clear = gone.owned;
  for (TagLayer& l : tag_layers_) {
    if (l.sym != gone.sym) continue;
    uint32_t kept = clear & l.asked;
    l.owned |= kept;
    clear &= ~kept;
  }
  const_cast<Symbol*>(gone.sym)->tags &= ~clear;
  bump_registry_version();
}

SymbolRegistry& symbol_registry() {
  static SymbolRegistry registry;
  return registry;
}

}  // namespace thunder
