// Layer base: small utilities every layer may use; includes nothing above base.
#include "gpuadvisor/base/names.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <tuple>
#include <utility>

namespace gpuadvisor {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<std::string> nearest_names(std::string_view name, const std::vector<std::string>& candidates, size_t limit) {
  // Names that begin with what was typed come first ("llama-4": llama-4-scout,
  // llama-4-maverick), then the rest by edit distance.
  // Case is ignored: "P5.48XLARGE" is p5.48xlarge.
  const auto lower = [](std::string_view x) {
    std::string out(x);
    for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return out;
  };
  const std::string typed = lower(name);
  std::vector<std::tuple<bool, size_t, std::string>> scored;
  for (const auto& c : candidates) {
    const std::string known = lower(c);
    scored.emplace_back(!(typed.size() >= 2 && known.starts_with(typed)), edit_distance(typed, known), c);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (size_t k = 0; k < scored.size() && k < limit; ++k) out.push_back(std::get<2>(scored[k]));
  return out;
}

std::string shortened(std::string_view text, size_t max_chars) {
  size_t chars = 0, i = 0;
  for (; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;  // a continuation byte
    if (chars == max_chars) return std::string(text.substr(0, i)) + "...";
    ++chars;
  }
  return std::string(text);
}

std::string one_line(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto b = [&](size_t k) { return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0u; };
    const bool bidi = b(0) == 0xE2 && ((b(1) == 0x80 && b(2) >= 0xAA && b(2) <= 0xAE) || (b(1) == 0x81 && b(2) >= 0xA6 && b(2) <= 0xA9));
    if (bidi) {
      out += fmt::format("\\u{:04x}", (b(1) == 0x80 ? 0x2000 : 0x2040) + (b(2) - 0x80));
      i += 2;
    } else if (b(0) == '\n') {
      out += "\\n";
    } else if (b(0) < 0x20 || b(0) == 0x7f) {
      out += fmt::format("\\x{:02x}", b(0));
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

}  // namespace gpuadvisor
