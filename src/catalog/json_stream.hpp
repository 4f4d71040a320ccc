// Layer catalog: accelerators, instances and dated prices (catalog files, price files, price fetch); includes only base.
// Internal: streams a JSON document of any size and hands over only the
// pieces a reader asks for ("records", each built as a small DOM), so memory
// stays bounded by the largest record, not the file (docs/catalog.md
// §Importing prices). Used for the AWS price files, which reach 3 GB.
#pragma once
#include <functional>
#include <istream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpuadvisor {

// The keys from the document's root to a value; array elements are their
// index in decimal ("products", "0", "sku").
using JsonPath = std::vector<std::string>;

struct JsonStreamReader {
  // Whether the value at `path` is a record: it is built whole and passed to
  // on_record, and nothing inside it reaches the other callbacks.
  std::function<bool(const JsonPath& path)> is_record;
  std::function<void(const JsonPath& path, nlohmann::json&& value)> on_record;
  // Every value outside a record at depth <= shallow_depth, with its type
  // (for "expected an object" checks); may be empty.
  std::function<void(const JsonPath& path, nlohmann::json::value_t type)> on_shallow;
  size_t shallow_depth = 2;
};

// Parses `in` to the end. Any syntax error, truncation or out-of-range number
// is an InputError "ORIGIN: not valid JSON at byte N: reason"; exceptions
// from the callbacks pass through.
void stream_json(std::istream& in, const std::string& origin, const JsonStreamReader& reader);

}  // namespace gpuadvisor
