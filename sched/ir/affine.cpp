#include "sched/ir/affine.h"

namespace tandem {

bool AffineExpr::uses_register() const {
  for (const auto& t : terms)
    if (t.loop < 0 && !t.symbol.empty() && t.symbol[0] != '%') return true;
  return false;
}

int64_t AffineExpr::coeff_of_loop(int loop) const {
  for (const auto& t : terms)
    if (t.loop == loop) return t.coeff;
  return 0;
}

void AffineExpr::add_term(const std::string& symbol, int64_t coeff, int loop) {
  for (auto it = terms.begin(); it != terms.end(); ++it)
    if (it->symbol == symbol) {
      it->coeff += coeff;
      if (it->coeff == 0) terms.erase(it);
      return;
    }
  if (coeff != 0) terms.push_back({symbol, coeff, loop});
}

AffineExpr AffineExpr::operator+(int64_t c) const {
  AffineExpr e = *this;
  e.constant += c;
  return e;
}

std::string AffineExpr::str() const {
  std::string s;
  for (const auto& t : terms) {
    int64_t c = t.coeff;
    if (s.empty()) {
      if (c < 0) s += "-";
    } else {
      s += c < 0 ? " - " : " + ";
    }
    int64_t mag = c < 0 ? -c : c;
    s += t.symbol;
    if (mag != 1) s += "*" + std::to_string(mag);
  }
  // GPU addressing keeps its immediate even when it is zero: `v10 + 0` reads as an offset.
  if (s.empty()) return std::to_string(constant);
  if (constant != 0 || uses_register()) {
    s += constant < 0 ? " - " : " + ";
    s += std::to_string(constant < 0 ? -constant : constant);
  }
  return s;
}

AffineExpr operator-(const AffineExpr& a, const AffineExpr& b) {
  AffineExpr d = a;
  d.constant -= b.constant;
  for (const auto& t : b.terms) d.add_term(t.symbol, -t.coeff, t.loop);
  return d;
}

bool operator==(const AffineExpr& a, const AffineExpr& b) {
  if (a.constant != b.constant || a.terms.size() != b.terms.size()) return false;
  for (size_t i = 0; i < a.terms.size(); ++i)
    if (a.terms[i].symbol != b.terms[i].symbol || a.terms[i].coeff != b.terms[i].coeff) return false;
  return true;
}

}  // namespace tandem
