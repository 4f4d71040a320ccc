// Layer catalog: accelerators, instances and dated prices (catalog files, price files, price fetch); includes only base.
#include "curl_library.hpp"

#include <dlfcn.h>

#include <stdexcept>
#include <string>

namespace gpuadvisor {
namespace {

void* library_handle() {
  void* handle = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    throw std::runtime_error(std::string("libcurl could not be loaded (") + (why ? why : "libcurl.so.4") +
                             "); install the libcurl4 package (apt install libcurl4) to fetch prices");
  }
  return handle;
}

template <typename F>
void bind(void* handle, F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(handle, name));
  if (!f) throw std::runtime_error(std::string("libcurl.so.4 has no ") + name + "; install libcurl4 7.62 or later");
}

struct Loaded {
  CurlLibrary api{};
  Loaded() {
    void* h = library_handle();
    bind(h, api.easy_init, "curl_easy_init");
    bind(h, api.easy_cleanup, "curl_easy_cleanup");
    bind(h, api.easy_setopt, "curl_easy_setopt");
    bind(h, api.easy_perform, "curl_easy_perform");
    bind(h, api.easy_getinfo, "curl_easy_getinfo");
    bind(h, api.easy_strerror, "curl_easy_strerror");
    bind(h, api.easy_escape, "curl_easy_escape");
    bind(h, api.free, "curl_free");
    bind(h, api.slist_append, "curl_slist_append");
    bind(h, api.slist_free_all, "curl_slist_free_all");
    bind(h, api.url, "curl_url");
    bind(h, api.url_cleanup, "curl_url_cleanup");
    bind(h, api.url_get, "curl_url_get");
    bind(h, api.url_set, "curl_url_set");
    bind(h, global_init, "curl_global_init");
    bind(h, global_cleanup, "curl_global_cleanup");
    global_init(CURL_GLOBAL_DEFAULT);
  }
  ~Loaded() { global_cleanup(); }
  decltype(&::curl_global_init) global_init = nullptr;
  decltype(&::curl_global_cleanup) global_cleanup = nullptr;
};

}  // namespace

const CurlLibrary& curl_library() {
  static const Loaded loaded;  // thread-safe once; a failed load throws and is retried on the next call
  return loaded.api;
}

}  // namespace gpuadvisor
