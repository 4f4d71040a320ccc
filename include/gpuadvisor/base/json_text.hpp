// Layer base: small utilities every layer may use; includes nothing above base.
// The one way a JSON document becomes text: bytes that are not UTF-8 (a name
// or a file the user gave may hold them) are written as U+FFFD, never an abort.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace gpuadvisor {

// `indent` as nlohmann's dump: -1 one line, else spaces per level.
template <class Json>
std::string json_text(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace gpuadvisor
