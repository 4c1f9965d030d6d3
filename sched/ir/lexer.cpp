#include "sched/ir/lexer.h"

#include <cctype>

namespace tandem {

const char* token_name(Tok t) {
  switch (t) {
    case Tok::End: return "end of file";
    case Tok::Ident: return "identifier";
    case Tok::Percent: return "%name";
    case Tok::At: return "@name";
    case Tok::Int: return "integer";
    case Tok::Real: return "number";
    case Tok::String: return "string";
    case Tok::LBrace: return "'{'";
    case Tok::RBrace: return "'}'";
    case Tok::LBracket: return "'['";
    case Tok::RBracket: return "']'";
    case Tok::Comma: return "','";
    case Tok::Colon: return "':'";
    case Tok::Equal: return "'='";
    case Tok::Plus: return "'+'";
    case Tok::Minus: return "'-'";
    case Tok::Star: return "'*'";
    case Tok::LArrow: return "'<-'";
    case Tok::RArrow: return "'->'";
  }
  return "?";
}

static bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

std::vector<Token> lex(const std::string& src, const char* file) {
  std::vector<Token> out;
  // Room for a token per two characters (kernels average 2.5) up front, instead of copying
  // the tokens at each doubling, both copies resident; pages never written are not.
  out.reserve(src.size() / 2 + 16);
  size_t i = 0;
  int line = 1, col = 1;
  auto advance = [&](size_t n) {
    for (size_t k = 0; k < n; ++k, ++i) {
      if (src[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
  };
  while (i < src.size()) {
    char c = src[i];
    if (c == '#') {
      while (i < src.size() && src[i] != '\n') advance(1);
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      advance(1);
      continue;
    }
    Token t;
    t.loc = {file, line, col};
    auto single = [&](Tok k) {
      t.kind = k;
      t.text = std::string(1, c);
      advance(1);
    };
    if (c == '%' || c == '@') {
      size_t j = i + 1;
      while (j < src.size() && ident_char(src[j])) ++j;
      if (j == i + 1) throw Error(t.loc, std::string("expected a name after '") + c + "'");
      t.kind = c == '%' ? Tok::Percent : Tok::At;
      t.text = src.substr(i + 1, j - i - 1);
      advance(j - i);
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < src.size() && ident_char(src[j])) ++j;
      t.kind = Tok::Ident;
      t.text = src.substr(i, j - i);
      advance(j - i);
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      while (j < src.size() && std::isdigit(static_cast<unsigned char>(src[j]))) ++j;
      bool real = false;
      if (j < src.size() && src[j] == '.' && j + 1 < src.size() && std::isdigit(static_cast<unsigned char>(src[j + 1]))) {
        real = true;
        ++j;
        while (j < src.size() && std::isdigit(static_cast<unsigned char>(src[j]))) ++j;
      }
      if (j < src.size() && (src[j] == 'e' || src[j] == 'E')) {
        size_t k = j + 1;
        if (k < src.size() && (src[k] == '+' || src[k] == '-')) ++k;
        if (k < src.size() && std::isdigit(static_cast<unsigned char>(src[k]))) {
          real = true;
          j = k;
          while (j < src.size() && std::isdigit(static_cast<unsigned char>(src[j]))) ++j;
        }
      }
      if (j < src.size() && (std::isalpha(static_cast<unsigned char>(src[j])) || src[j] == '_'))
        throw Error(SourceLoc{file, line, col + static_cast<int>(j - i)},
                    "unexpected character '" + printable(std::string(1, src[j])) + "' in number");
      t.kind = real ? Tok::Real : Tok::Int;
      t.text = src.substr(i, j - i);
      advance(j - i);
    } else if (c == '"') {
      size_t j = i + 1;
      std::string s;
      while (j < src.size() && src[j] != '"' && src[j] != '\n') {
        if (src[j] == '\\' && j + 1 < src.size()) {
          ++j;
          s += src[j] == 'n' ? '\n' : src[j];
        } else {
          s += src[j];
        }
        ++j;
      }
      if (j >= src.size() || src[j] != '"') throw Error(t.loc, "unterminated string");
      t.kind = Tok::String;
      t.text = s;
      advance(j + 1 - i);
    } else if (c == '<' && i + 1 < src.size() && src[i + 1] == '-') {
      t.kind = Tok::LArrow;
      t.text = "<-";
      advance(2);
    } else if (c == '-' && i + 1 < src.size() && src[i + 1] == '>') {
      t.kind = Tok::RArrow;
      t.text = "->";
      advance(2);
    } else {
      switch (c) {
        case '{': single(Tok::LBrace); break;
        case '}': single(Tok::RBrace); break;
        case '[': single(Tok::LBracket); break;
        case ']': single(Tok::RBracket); break;
        case ',': single(Tok::Comma); break;
        case ':': single(Tok::Colon); break;
        case '=': single(Tok::Equal); break;
        case '+': single(Tok::Plus); break;
        case '-': single(Tok::Minus); break;
        case '*': single(Tok::Star); break;
        default:
          throw Error(t.loc, "unexpected character '" + printable(std::string(1, c)) + "'");
      }
    }
    out.push_back(std::move(t));
  }
  Token end;
  end.kind = Tok::End;
  end.loc = {file, line, col};
  out.push_back(end);
  return out;
}

}  // namespace tandem
