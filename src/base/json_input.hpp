// Layer base: small utilities every layer may use (quantities, files, names, JSON input); includes nothing above base.
// Internal: the one way input files' JSON is parsed (catalogs, model configs,
// price files, case files), so every reader reports a bad file the same way.
#pragma once
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "gpuadvisor/base/names.hpp"
#include "gpuadvisor/base/json_text.hpp"
#include "gpuadvisor/base/errors.hpp"

namespace gpuadvisor {

// No input gpuadvisor reads nests deeper than a few levels (a price file about
// 8); deeper nesting is refused before parsing, so no recursive walk (an error
// message that prints a value back) can exhaust the stack.
inline constexpr int kMaxJsonDepth = 64;

// The deepest nesting of arrays and objects in `text`, outside strings; stops
// counting once `limit` is passed. Linear, no allocation.
inline int json_nesting_depth(std::string_view text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest && (deepest = depth) > limit) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

// A value as an error message quotes it: at most `max_chars` of its JSON text.
inline std::string json_excerpt(const nlohmann::json& v, size_t max_chars = 40) {
  std::string s = json_text(v);
  if (s.size() > max_chars) s = s.substr(0, max_chars - 3) + "...";
  return s;
}

// Any failure is bad input naming `origin`: empty, not JSON (with the byte and
// the parser's reason, e.g. a truncated file), or JSON the parser cannot hold
// (a number beyond double range such as 1e605).
inline nlohmann::json parse_json_input(const std::string& text, const std::string& origin) {
  if (text.empty()) throw InputError(fmt::format("{}: the file is empty", origin));
  if (json_nesting_depth(text, kMaxJsonDepth) > kMaxJsonDepth)
    throw InputError(fmt::format("{}: nested more than {} levels deep; no gpuadvisor input nests so deep", origin, kMaxJsonDepth));
  // A key twice in one object: the parser keeps the last, so an overlay's second "name" would silently win.
  std::vector<std::set<std::string>> keys;  // per open object
  const auto refuse_duplicate_keys = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (event == E::object_start) keys.emplace_back();
    else if (event == E::object_end && !keys.empty()) keys.pop_back();
    else if (event == E::key && !keys.empty()) {
      const std::string& k = parsed.get_ref<const std::string&>();
      if (!keys.back().insert(k).second)
        throw InputError(fmt::format("{}: the key '{}' appears twice in one object; which one was meant is unknowable", origin, k.substr(0, 64)));
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text, refuse_duplicate_keys);
  } catch (const nlohmann::json::parse_error& e) {
    const std::string what = e.what();
    throw InputError(fmt::format("{}: not valid JSON at byte {}: {}", origin, e.byte, what.substr(what.find(':') + 2)));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: not usable JSON: {}", origin, e.what()));
  }
}

// The first key of `obj` that is not among `known`, with what to say of it
// ("unknown key (did you mean 'prompt_tokens'?)"): a misspelt key would
// otherwise change nothing while the file reads as applied. Nothing when all are known.
struct UnknownKey {
  std::string key, message;
};
inline std::optional<UnknownKey> unknown_key(const nlohmann::json& obj, const std::vector<std::string>& known) {
  if (!obj.is_object()) return std::nullopt;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (std::find(known.begin(), known.end(), it.key()) != known.end()) continue;
    const std::string nearest = nearest_names(it.key(), known, 1).front();
    const bool close = edit_distance(it.key(), nearest) <= std::max<size_t>(2, it.key().size() / 3);
    return UnknownKey{it.key().substr(0, 64), close ? fmt::format("unknown key (did you mean '{}'?)", nearest)
                                                    : fmt::format("unknown key (known: {})", fmt::join(known, ", "))};
  }
  return std::nullopt;
}

}  // namespace gpuadvisor
