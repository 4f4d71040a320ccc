// Internal: the one way input files' JSON is parsed (catalogs, model configs,
// price files, case files), so every reader reports a bad file the same way.
#pragma once
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

#include "gpuadvisor/errors.hpp"

namespace gpuadvisor {

// Any failure is bad input naming `origin`: empty, not JSON (with the byte and
// the parser's reason, e.g. a truncated file), or JSON the parser cannot hold
// (a number beyond double range such as 1e605).
inline nlohmann::json parse_json_input(const std::string& text, const std::string& origin) {
  if (text.empty()) throw InputError(fmt::format("{}: the file is empty", origin));
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    const std::string what = e.what();
    throw InputError(fmt::format("{}: not valid JSON at byte {}: {}", origin, e.byte, what.substr(what.find(':') + 2)));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: not usable JSON: {}", origin, e.what()));
  }
}

}  // namespace gpuadvisor
