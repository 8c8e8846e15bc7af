// The loop-nest IR of generated kernels (torch-free): what codegen.cpp builds
// from a fusion region, what the transformations (loop_transforms.h) rewrite,
// and what print_cpp turns into C++ as the last step.
//
// Semantics are C's: every expression is a pure scalar value (loads read
// memory that no statement of the same loop nest writes, except a tile
// filled before the loop that reads it); statements run in order. The
// builder names variables: a value's Let name is unique within its kernel
// (transformations move Lets by name), while loop indices, row indices and a
// reduction's accumulators and mean (in a Scope of their own) repeat in sibling
// loops and scopes. Integer index arithmetic is int64_t. A kernel is a list
// of nests, each printed as a function over [lo, hi) of its outermost index
// and called directly or in OpenMP chunks.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace thunder::cpu_fuser::ir {

// Scalar types of values and buffers. F16 and BF16 exist only in memory
// (BF16 as its bits, a uint16_t); bool buffers are bytes.
enum class Type { Bool, U8, I8, I16, I32, I64, U64, F16, BF16, F32, F64 };

const char* c_type(Type t);

struct Node;
using Expr = std::shared_ptr<const Node>;

enum class UnOp { Neg, Not, BitNot };
enum class BinOp {
  Add,
  Sub,
  Mul,
  Div,
  Mod,
  Lt,
  Le,
  Gt,
  Ge,
  Eq,
  Ne,
  And,
  Or,
  BitAnd,
  BitOr,
  BitXor
};

// One scalar expression node.
struct Node {
  enum class Kind {
    Int,     // an int64_t literal (`value`)
    Lit,     // a literal written as `text` (a float, true, __builtin_inf())
    Var,     // the variable `text`
    Load,    // buffer `text` (elements of `type`) at index args[0]
    Unary,   // un(args[0])
    Binary,  // args[0] bin args[1]
    Select,  // args[0] ? args[1] : args[2]
    Cast,    // (type)args[0]
    Call,    // function `text` (a vector-math or preamble function) of args
  } kind;
  std::string text{};
  int64_t value = 0;
  Type type = Type::I64;
  UnOp un = UnOp::Neg;
  BinOp bin = BinOp::Add;
  std::vector<Expr> args{};
};

Expr int_lit(int64_t v);
Expr lit(std::string text);
Expr var(std::string name);
Expr load(std::string buffer, Type t, Expr index);
Expr unary(UnOp op, Expr a);
Expr binary(BinOp op, Expr a, Expr b);
Expr select(Expr c, Expr a, Expr b);
Expr cast(Type t, Expr a);
Expr call(std::string fn, std::vector<Expr> args);

// Structural equality (the same tree, the same names).
bool same(const Expr& a, const Expr& b);
// Whether e reads variable `name`.
bool uses(const Expr& e, const std::string& name);
// e with every variable `name` replaced by `by`.
Expr substitute(const Expr& e, const std::string& name, const Expr& by);
// e with every load of `buffer` at `index` replaced by `by`; sets `other` when
// e loads `buffer` at another index.
Expr replace_load(const Expr& e, const std::string& buffer, const Expr& index, const Expr& by,
                  bool& other);

struct Stmt;
using Block = std::vector<Stmt>;

// A loop over [lo, hi) by `step`. `vector`: its iterations are independent
// SIMD lanes (`#pragma omp simd`), with reduction clauses for accumulators
// that every lane updates.
struct Reduction {
  std::string op;  // an OpenMP reduction operator: +, max, min, |
  std::string var;
};
struct Loop {
  std::string var{};
  Expr lo{}, hi{};
  int64_t step = 1;
  bool vector = false;
  std::vector<Reduction> reductions{};
  Block body{};
};

struct Stmt {
  enum class Kind {
    Let,     // const type var = expr;
    Decl,    // type var = expr; (mutable; expr may be null: declared only)
    Assign,  // var op= expr (op "=", "+=", "|=")
    Store,   // buffer[index] = expr (converted to the buffer's `type`)
    Alloc,   // a local array `var` of `size` elements of `type` (a tile)
    Eval,    // expr; (a call that fills a tile)
    If,      // if (expr) body
    Scope,   // { body }: keeps accumulators' names local
    For,     // loop
  } kind;
  Type type = Type::I64;
  std::string var{}, op{};
  Expr expr{}, index{};
  int64_t size = 0;
  Block body{};
  std::shared_ptr<Loop> loop{};
};

Stmt let(Type t, std::string name, Expr e);
Stmt decl(Type t, std::string name, Expr init = nullptr);
Stmt assign(std::string name, std::string op, Expr e);
Stmt store(std::string buffer, Type t, Expr index, Expr value);
Stmt alloc(Type t, std::string name, int64_t size);
Stmt eval(Expr e);
Stmt if_(Expr cond, Block body);
Stmt scope(Block body);
Stmt for_(Loop loop);

// A kernel parameter: p[slot] as a buffer pointer (a tensor) or a number.
struct Param {
  std::string name;
  Type type;
  int slot;
  bool buffer = true, writable = false;
};

// A loop nest: a body over the iterations [lo, hi) of its outermost index
// (variables `lo` and `hi` in `body`), printed as a function of its own. The
// kernel runs it over [0, range): on the calling thread when `chunk` is 0,
// else in OpenMP chunks of `chunk` iterations, but on the calling thread
// while range < min_parallel (for a range known only at run time).
struct Nest {
  Block body{};
  Expr range{};
  int64_t work = 0;  // elements touched over the whole range (parallelize's input)
  int64_t chunk = 0, min_parallel = 0;
};

struct Kernel {
  std::vector<Param> params{};
  std::vector<Nest> nests{};
};

}  // namespace thunder::cpu_fuser::ir
