// Tokens of the .kir text format. `#` starts a comment to the end of the line.
#pragma once

#include <string>
#include <vector>

#include "sched/support/error.h"

namespace tandem {

enum class Tok {
  End,
  Ident,      // opcode, keyword, register (v10), attribute key
  Percent,    // %name or %123 (text holds the part after %)
  At,         // @name
  Int,
  Real,
  String,     // text holds the unescaped contents
  LBrace, RBrace, LBracket, RBracket, Comma, Colon, Equal, Plus, Minus, Star,
  LArrow,     // <-
  RArrow,     // ->
};

struct Token {
  Tok kind = Tok::End;
  std::string text;
  SourceLoc loc;
};

const char* token_name(Tok t);

// Splits `source` into tokens; throws Error at the first character it cannot read.
std::vector<Token> lex(const std::string& source, const char* file);

}  // namespace tandem
