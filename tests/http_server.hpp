// Test helper: a small HTTP/1.1 server on 127.0.0.1 (an ephemeral port) that
// the test starts and stops itself, one connection at a time. Each route has
// a body and a behaviour, so tests can play a mirror of the AWS price
// endpoints: ETag revalidation (304), a 500 before success, a truncated body,
// a server that never answers, redirects (to itself, forever, or elsewhere), a
// drip of one byte at a time, a body cut short without Content-Length, 304
// whatever was asked, a slow body. Bounded: every wait has a deadline.
#pragma once
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "loopback.hpp"

namespace test_http {

enum class Behaviour {
  normal,
  fail_once,       // 500, then normal
  truncate,        // half the announced Content-Length, then close
  hang,            // never answer
  redirect_self,   // 302 to the same path, every time
  redirect,        // 302 to Route::location
  drip,            // the body one byte every 300 ms (at most 10 s)
  close_mid_body,  // no Content-Length, half the body, then close: looks complete
  always_304,      // 304 Not Modified, validators or not
  slow             // the body in 10 pieces over about 1 s
};

struct Route {
  std::string body;
  std::string etag;
  Behaviour behaviour = Behaviour::normal;
  std::string location;   // for Behaviour::redirect
  int requests = 0;       // requests seen
  int full_bodies = 0;    // 200 responses with the whole body
  std::string last_if_none_match;  // of the latest request
};

class Server {
 public:
  Server() {
    fd_ = listen_on_loopback(port_);
    thread_ = std::thread([this] { serve(); });
  }
  ~Server() {
    stop_ = true;
    thread_.join();
    close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void add(const std::string& path, Route r) {
    std::lock_guard<std::mutex> l(m_);
    routes_[path] = std::move(r);
  }
  Route route(const std::string& path) {
    std::lock_guard<std::mutex> l(m_);
    return routes_[path];
  }

 private:
  int fd_ = -1, port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex m_;
  std::map<std::string, Route> routes_;

  static bool wait_readable(int fd, int ms) {
    pollfd p{fd, POLLIN, 0};
    return poll(&p, 1, ms) > 0;
  }

  void serve() {
    while (!stop_) {
      if (!wait_readable(fd_, 50)) continue;
      const int c = accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      handle(c);
      close(c);
    }
  }

  static std::string header(const std::string& req, const std::string& name) {
    const auto at = req.find("\r\n" + name + ": ");
    if (at == std::string::npos) return "";
    const auto start = at + 4 + name.size();
    return req.substr(start, req.find("\r\n", start) - start);
  }

  void send_all(int c, const std::string& s) {
    size_t sent = 0;
    while (sent < s.size()) {
      const ssize_t n = send(c, s.data() + sent, s.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += static_cast<size_t>(n);
    }
  }

  // The body in pieces with sleeps: one byte per 300 ms (drip) or a tenth per 100 ms (slow). At most
  // 10 s; false if the client went away or the test ended first.
  bool send_paced(int c, const std::string& body, bool drip) {
    const size_t piece = drip ? 1 : body.size() / 10 + 1;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (size_t at = 0; at < body.size(); at += piece) {
      if (stop_ || std::chrono::steady_clock::now() > deadline) return false;
      const std::string s = body.substr(at, piece);
      if (send(c, s.data(), s.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(s.size())) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(drip ? 300 : 100));
    }
    return true;
  }

  void handle(int c) {
    std::string req;
    char buf[4096];
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (req.find("\r\n\r\n") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      if (!wait_readable(c, 100)) continue;
      const ssize_t n = recv(c, buf, sizeof buf, 0);
      if (n <= 0) return;
      req.append(buf, static_cast<size_t>(n));
    }
    const auto sp = req.find(' ');
    const std::string path = req.substr(sp + 1, req.find(' ', sp + 1) - sp - 1);
    Route r;
    {
      std::lock_guard<std::mutex> l(m_);
      auto it = routes_.find(path);
      if (it == routes_.end()) {
        send_all(c, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        return;
      }
      r = it->second;
      ++it->second.requests;
      it->second.last_if_none_match = header(req, "If-None-Match");
      if (r.behaviour == Behaviour::fail_once) it->second.behaviour = Behaviour::normal;
    }
    respond(c, path, r, header(req, "If-None-Match"));
  }

  void respond(int c, const std::string& path, const Route& r, const std::string& if_none_match) {
    if (r.behaviour == Behaviour::hang) {  // read nothing more, answer nothing, until the client gives up or the test ends
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!stop_ && std::chrono::steady_clock::now() < deadline) {
        char b;
        if (wait_readable(c, 50) && recv(c, &b, 1, 0) <= 0) return;
      }
      return;
    }
    if (r.behaviour == Behaviour::redirect_self || r.behaviour == Behaviour::redirect) {
      const std::string to = r.behaviour == Behaviour::redirect ? r.location : path;
      send_all(c, "HTTP/1.1 302 Found\r\nLocation: " + to + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    if (r.behaviour == Behaviour::always_304) {
      send_all(c, "HTTP/1.1 304 Not Modified\r\nETag: " + (r.etag.empty() ? std::string("\"x\"") : r.etag) + "\r\nConnection: close\r\n\r\n");
      return;
    }
    if (r.behaviour == Behaviour::fail_once) {
      send_all(c, "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    if (!r.etag.empty() && if_none_match == r.etag) {
      send_all(c, "HTTP/1.1 304 Not Modified\r\nETag: " + r.etag + "\r\nConnection: close\r\n\r\n");
      return;
    }
    const std::string head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(r.body.size()) +
                             (r.etag.empty() ? "" : "\r\nETag: " + r.etag) + "\r\nConnection: close\r\n\r\n";
    if (r.behaviour == Behaviour::truncate) {
      send_all(c, head + r.body.substr(0, r.body.size() / 2));
      return;
    }
    if (r.behaviour == Behaviour::close_mid_body) {
      send_all(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json" + (r.etag.empty() ? "" : "\r\nETag: " + r.etag) +
                      "\r\nConnection: close\r\n\r\n" + r.body.substr(0, r.body.size() / 2));
      return;
    }
    if (r.behaviour == Behaviour::drip || r.behaviour == Behaviour::slow) {
      send_all(c, head);
      if (!send_paced(c, r.body, r.behaviour == Behaviour::drip)) return;
    } else {
      send_all(c, head + r.body);
    }
    std::lock_guard<std::mutex> l(m_);
    ++routes_[path].full_bodies;
  }
};

}  // namespace test_http
