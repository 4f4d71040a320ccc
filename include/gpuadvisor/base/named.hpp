// Layer base: small utilities every layer may use (quantities, files, names, JSON input); includes nothing above base.
// Lookups over lists of profiles that carry a `name` (serving engines,
// training stacks): by name, and all names for messages and --help.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace gpuadvisor {

template <class T>
const T* find_named(const std::vector<T>& items, std::string_view name) {
  for (const auto& x : items)
    if (x.name == name) return &x;
  return nullptr;
}

template <class T>
std::vector<std::string> names_of(const std::vector<T>& items) {
  std::vector<std::string> out;
  for (const auto& x : items) out.push_back(x.name);
  return out;
}

template <class T>
std::string joined_names(const std::vector<T>& items) {
  std::string out;
  for (const auto& x : items) out += (out.empty() ? "" : ", ") + x.name;
  return out;
}

}  // namespace gpuadvisor
