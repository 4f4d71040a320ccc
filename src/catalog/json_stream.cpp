// Layer catalog: accelerators, instances and dated prices (catalog files, price files, price fetch); includes only base.
#include "catalog/json_stream.hpp"

#include <fmt/format.h>

#include "gpuadvisor/base/errors.hpp"
#include "base/json_input.hpp"

namespace gpuadvisor {

namespace {

using json = nlohmann::json;

// A SAX handler that tracks the path, and builds a DOM only inside records.
class RecordHandler : public nlohmann::json_sax<json> {
 public:
  RecordHandler(const JsonStreamReader& r, const std::string& origin) : reader_(r), origin_(origin) {}

  bool null() override { return scalar(json(nullptr)); }
  bool boolean(bool v) override { return scalar(json(v)); }
  bool number_integer(number_integer_t v) override { return scalar(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return scalar(json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return scalar(json(v)); }
  bool string(string_t& v) override { return scalar(json(std::move(v))); }
  bool binary(binary_t&) override { return scalar(json(nullptr)); }
  bool start_object(std::size_t) override { return open(json::value_t::object); }
  bool start_array(std::size_t) override { return open(json::value_t::array); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool key(string_t& k) override {
    if (!building_.empty()) {
      pending_key_ = k;
      return true;
    }
    frames_.back().key = k;
    return true;
  }

  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    const std::string what = e.what();
    const auto colon = what.find(':');
    throw InputError(fmt::format("{}: not valid JSON at byte {}: {}", origin_, position,
                                 colon == std::string::npos ? what : what.substr(colon + 2)));
  }

 private:
  struct Frame {
    bool array = false;
    long index = -1;   // array elements seen
    std::string key;   // object: the key of the value being read
  };
  const JsonStreamReader& reader_;
  const std::string& origin_;
  std::vector<Frame> frames_;          // containers outside records
  JsonPath path_;                      // path of the value being read (outside records)
  json record_;                        // the record being built
  std::vector<json*> building_;        // open containers inside the record
  std::string pending_key_;

  // The path of the value that starts now, outside records.
  const JsonPath& next_path() {
    path_.clear();
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;  // a new element
    for (const auto& f : frames_) path_.push_back(f.array ? std::to_string(f.index) : f.key);
    return path_;
  }

  // Inserts a value into the record's innermost open container.
  json* insert(json&& v) {
    json& parent = *building_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    if (parent.contains(pending_key_))
      throw InputError(fmt::format("{}: the key '{}' appears twice in one object; which one was meant is unknowable", origin_,
                                   pending_key_.substr(0, 64)));
    json& slot = parent[pending_key_];
    slot = std::move(v);
    return &slot;
  }

  bool scalar(json&& v) {
    if (!building_.empty()) {
      insert(std::move(v));
      return true;
    }
    const JsonPath& p = next_path();
    if (reader_.is_record && reader_.is_record(p)) {
      reader_.on_record(p, std::move(v));
    } else if (reader_.on_shallow && p.size() <= reader_.shallow_depth) {
      reader_.on_shallow(p, v.type());
    }
    return true;
  }

  bool open(json::value_t type) {
    if (frames_.size() + building_.size() >= static_cast<size_t>(kMaxJsonDepth))
      throw InputError(fmt::format("{}: nested more than {} levels deep; no price file nests so deep", origin_, kMaxJsonDepth));
    if (!building_.empty()) {
      building_.push_back(insert(json(type)));
      return true;
    }
    const JsonPath& p = next_path();
    if (reader_.is_record && reader_.is_record(p)) {
      record_ = json(type);
      building_.push_back(&record_);
      record_path_ = p;
      return true;
    }
    if (reader_.on_shallow && p.size() <= reader_.shallow_depth && !p.empty()) reader_.on_shallow(p, type);
    frames_.push_back({type == json::value_t::array, -1, {}});
    return true;
  }

  bool close() {
    if (!building_.empty()) {
      building_.pop_back();
      if (building_.empty()) {
        reader_.on_record(record_path_, std::move(record_));
        record_ = json();
      }
      return true;
    }
    frames_.pop_back();
    return true;
  }

  JsonPath record_path_;
};

}  // namespace

void stream_json(std::istream& in, const std::string& origin, const JsonStreamReader& reader) {
  if (in.peek() == std::char_traits<char>::eof()) throw InputError(fmt::format("{}: the file is empty", origin));
  RecordHandler handler(reader, origin);
  json::sax_parse(in, &handler);
}

}  // namespace gpuadvisor
