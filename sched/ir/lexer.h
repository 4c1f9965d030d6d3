// Tokens of the .kir text format. `#` starts a comment to the end of the line.
#pragma once

#include <deque>
#include <string>
#include <string_view>
#include <utility>

#include "sched/support/error.h"

namespace tandem {

enum class Tok {
  End,
  Ident,    // opcode, keyword, register (v10), attribute key
  Percent,  // %name or %123 (text holds the part after %)
  At,       // @name
  Int,
  Real,
  String,  // text holds the unescaped contents
  LBrace,
  RBrace,
  LBracket,
  RBracket,
  Comma,
  Colon,
  Equal,
  Plus,
  Minus,
  Star,
  LArrow,  // <-
  RArrow,  // ->
};

// A token's text is a view into the source, or for a string with escapes into its unescaped
// contents, which the Lexer keeps: the source and the Lexer must outlive its tokens.
struct Token {
  Tok kind = Tok::End;
  std::string_view text;
  SourceLoc loc;
};

const char* token_name(Tok t);

// Reads `source` a token at a time, as the parser asks, never all tokens up front: a large
// kernel has millions of them. `source` must outlive the lexer and its tokens.
class Lexer {
 public:
  Lexer(std::string_view source, const char* file) : src_(source), file_(file) {}

  // The next token; Tok::End at the end of the text, and again at every call after it.
  // Throws Error at a character it cannot read (and again at the next call).
  Token next();

  // Reads the rest of the text, throwing its first lexical error if there is one: a lexical
  // error anywhere in a file is the error reported, before any the parser found earlier in it.
  void check_rest();

  // The number of lines of the source (for reserving room before parsing).
  size_t lines() const;

  // Looks ahead without reading, as far as it takes (a loop's body may be 100k lines): the
  // first `{` or `}` after the lexer's position, or Tok::End, and whether a `{` follows it.
  // Right for text that lexes; where it does not, the lexical error that the parser meets
  // later (or check_rest finds) is the one reported, whatever this answered.
  std::pair<Tok, bool> next_brace() const;

 private:
  SourceLoc loc_at(size_t offset) const { return {file_, line_, static_cast<int>(offset - line_start_) + 1}; }

  std::string_view src_;
  const char* file_;
  size_t pos_ = 0;
  // The column is the offset from the line's first character (a token holds no newline but a
  // string's escaped one, counted where the string ends).
  int line_ = 1;
  size_t line_start_ = 0;
  std::deque<std::string> unescaped_;  // a deque: appending moves none, so the views stay valid
};

}  // namespace tandem
