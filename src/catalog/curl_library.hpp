// Layer catalog: accelerators, instances and dated prices (catalog files, price files, price fetch); includes only base.
// Internal: libcurl, loaded when a command first goes to the network (prices fetch,
// --capacity-blocks). Linked, it made every process load some 30 shared
// libraries (TLS, Kerberos, LDAP, ...) at start: about 4 ms of each run's CPU
// time, for the two commands that fetch (speed issue, start-up).
#pragma once
#include <curl/curl.h>

namespace gpuadvisor {

// The libcurl functions the fetchers call, from libcurl.so.4.
struct CurlLibrary {
  decltype(&::curl_easy_init) easy_init;
  decltype(&::curl_easy_cleanup) easy_cleanup;
  decltype(&::curl_easy_setopt) easy_setopt;
  decltype(&::curl_easy_perform) easy_perform;
  decltype(&::curl_easy_getinfo) easy_getinfo;
  decltype(&::curl_easy_strerror) easy_strerror;
  decltype(&::curl_easy_escape) easy_escape;
  decltype(&::curl_free) free;
  decltype(&::curl_slist_append) slist_append;
  decltype(&::curl_slist_free_all) slist_free_all;
  decltype(&::curl_url) url;
  decltype(&::curl_url_cleanup) url_cleanup;
  decltype(&::curl_url_get) url_get;
  decltype(&::curl_url_set) url_set;
};

// Loaded and initialised (curl_global_init) on the first call, cleaned up at
// exit; throws std::runtime_error naming the package when it cannot be loaded.
const CurlLibrary& curl_library();

}  // namespace gpuadvisor
