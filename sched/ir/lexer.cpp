#include "sched/ir/lexer.h"

#include <algorithm>
#include <array>

namespace tandem {

const char* token_name(Tok t) {
  switch (t) {
    case Tok::End:
      return "end of file";
    case Tok::Ident:
      return "identifier";
    case Tok::Percent:
      return "%name";
    case Tok::At:
      return "@name";
    case Tok::Int:
      return "integer";
    case Tok::Real:
      return "number";
    case Tok::String:
      return "string";
    case Tok::LBrace:
      return "'{'";
    case Tok::RBrace:
      return "'}'";
    case Tok::LBracket:
      return "'['";
    case Tok::RBracket:
      return "']'";
    case Tok::Comma:
      return "','";
    case Tok::Colon:
      return "':'";
    case Tok::Equal:
      return "'='";
    case Tok::Plus:
      return "'+'";
    case Tok::Minus:
      return "'-'";
    case Tok::Star:
      return "'*'";
    case Tok::LArrow:
      return "'<-'";
    case Tok::RArrow:
      return "'->'";
  }
  return "?";
}

namespace {

// Character classes of the C locale (the one tandem runs in), from a table rather than
// <cctype>'s calls.
enum : unsigned char { kAlpha = 1, kDigit = 2, kSpace = 4, kNamePunct = 8 };

constexpr std::array<unsigned char, 256> make_classes() {
  std::array<unsigned char, 256> c{};
  for (int i = 'a'; i <= 'z'; ++i) c[i] = kAlpha;
  for (int i = 'A'; i <= 'Z'; ++i) c[i] = kAlpha;
  for (int i = '0'; i <= '9'; ++i) c[i] = kDigit;
  for (char s : {' ', '\t', '\n', '\v', '\f', '\r'}) c[static_cast<unsigned char>(s)] = kSpace;
  c['_'] = kNamePunct;
  c['.'] = kNamePunct;
  return c;
}
constexpr std::array<unsigned char, 256> kClasses = make_classes();

bool is(char c, unsigned char cls) { return kClasses[static_cast<unsigned char>(c)] & cls; }
bool ident_char(char c) { return is(c, kAlpha | kDigit | kNamePunct); }
bool digit(char c) { return is(c, kDigit); }

// Past the whitespace and comments from `i`; counts the newlines passed into `*line` and
// `*line_start` (the offset after the last), when given.
size_t skip_blank(std::string_view src, size_t i, int* line = nullptr, size_t* line_start = nullptr) {
  while (i < src.size()) {
    if (src[i] == '#') {
      while (i < src.size() && src[i] != '\n') ++i;
    } else if (is(src[i], kSpace)) {
      if (src[i] == '\n' && line) ++*line, *line_start = i + 1;
      ++i;
    } else {
      break;
    }
  }
  return i;
}

// Where the string whose opening quote is just before `i` ends: at its closing quote, or at the
// newline or end of text that leaves it unterminated. A backslash takes the next character
// with it (an escaped quote or newline stays inside). `*escaped`: whether there was one.
size_t string_end(std::string_view src, size_t i, bool* escaped) {
  *escaped = false;
  while (i < src.size() && src[i] != '"' && src[i] != '\n') {
    if (src[i] == '\\' && i + 1 < src.size()) *escaped = true, ++i;
    ++i;
  }
  return i;
}

}  // namespace

Token Lexer::next() {
  const std::string_view src = src_;
  const size_t n = src.size();
  const size_t i = skip_blank(src, pos_, &line_, &line_start_);
  pos_ = i;  // a token starts here: an error leaves the lexer before it
  if (i >= n) return Token{Tok::End, {}, loc_at(i)};
  const char c = src[i];
  Token t;
  t.loc = loc_at(i);
  size_t j = i + 1;  // one past the token
  if (c == '%' || c == '@') {
    while (j < n && ident_char(src[j])) ++j;
    if (j == i + 1) throw Error(t.loc, std::string("expected a name after '") + c + "'");
    t.kind = c == '%' ? Tok::Percent : Tok::At;
    t.text = src.substr(i + 1, j - i - 1);
  } else if (is(c, kAlpha) || c == '_') {
    while (j < n && ident_char(src[j])) ++j;
    t.kind = Tok::Ident;
    t.text = src.substr(i, j - i);
  } else if (digit(c)) {
    while (j < n && digit(src[j])) ++j;
    bool real = false;
    if (j < n && src[j] == '.' && j + 1 < n && digit(src[j + 1])) {
      real = true;
      ++j;
      while (j < n && digit(src[j])) ++j;
    }
    if (j < n && (src[j] == 'e' || src[j] == 'E')) {
      size_t k = j + 1;
      if (k < n && (src[k] == '+' || src[k] == '-')) ++k;
      if (k < n && digit(src[k])) {
        real = true;
        j = k;
        while (j < n && digit(src[j])) ++j;
      }
    }
    if (j < n && (is(src[j], kAlpha) || src[j] == '_'))
      throw Error(loc_at(j), "unexpected character '" + printable(std::string(1, src[j])) + "' in number");
    t.kind = real ? Tok::Real : Tok::Int;
    t.text = src.substr(i, j - i);
  } else if (c == '"') {
    bool escaped;
    j = string_end(src, j, &escaped);
    if (j >= n || src[j] != '"') throw Error(t.loc, "unterminated string");
    const std::string_view raw = src.substr(i + 1, j - i - 1);
    ++j;  // the closing quote
    t.kind = Tok::String;
    if (!escaped) {
      t.text = raw;
    } else {
      std::string& s = unescaped_.emplace_back();
      for (size_t k = 0; k < raw.size(); ++k) {
        if (raw[k] == '\\') {  // its character is inside `raw`: the scan above stepped over it
          ++k;
          if (raw[k] == '\n') ++line_, line_start_ = i + 1 + k + 1;
          s += raw[k] == 'n' ? '\n' : raw[k];
        } else {
          s += raw[k];
        }
      }
      t.text = s;
    }
  } else if (c == '<' && j < n && src[j] == '-') {
    t.kind = Tok::LArrow;
    t.text = src.substr(i, 2);
    ++j;
  } else if (c == '-' && j < n && src[j] == '>') {
    t.kind = Tok::RArrow;
    t.text = src.substr(i, 2);
    ++j;
  } else {
    switch (c) {
      case '{':
        t.kind = Tok::LBrace;
        break;
      case '}':
        t.kind = Tok::RBrace;
        break;
      case '[':
        t.kind = Tok::LBracket;
        break;
      case ']':
        t.kind = Tok::RBracket;
        break;
      case ',':
        t.kind = Tok::Comma;
        break;
      case ':':
        t.kind = Tok::Colon;
        break;
      case '=':
        t.kind = Tok::Equal;
        break;
      case '+':
        t.kind = Tok::Plus;
        break;
      case '-':
        t.kind = Tok::Minus;
        break;
      case '*':
        t.kind = Tok::Star;
        break;
      default:
        throw Error(t.loc, "unexpected character '" + printable(std::string(1, c)) + "'");
    }
    t.text = src.substr(i, 1);
  }
  pos_ = j;
  return t;
}

void Lexer::check_rest() {
  while (next().kind != Tok::End) {
  }
}

std::pair<Tok, bool> Lexer::next_brace() const {
  // Outside comments and strings, a brace character is a brace token: no other token holds one.
  const size_t n = src_.size();
  for (size_t i = skip_blank(src_, pos_); i < n; i = skip_blank(src_, i)) {
    const char c = src_[i];
    if (c == '{' || c == '}') {
      const size_t j = skip_blank(src_, i + 1);
      return {c == '{' ? Tok::LBrace : Tok::RBrace, j < n && src_[j] == '{'};
    }
    ++i;
    if (c != '"') continue;
    bool escaped;
    i = string_end(src_, i, &escaped);
    if (i < n && src_[i] == '"') ++i;
  }
  return {Tok::End, false};
}

size_t Lexer::lines() const { return static_cast<size_t>(std::count(src_.begin(), src_.end(), '\n')) + 1; }

}  // namespace tandem
