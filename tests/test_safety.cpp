// Inputs and outputs that cannot hurt (docs/reliability.md): the one safe
// writer, the one bounded reader, depth and size caps before any work, and the
// hostile-input review's findings, each as a regression test. No test writes to
// a device path: devices are stood in for by FIFOs in a temporary directory.
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <functional>
#include <thread>

#include "cli_run.hpp"
#include "gpuadvisor/base/json_text.hpp"
#include "test_files.hpp"
#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/base/files.hpp"

using cli_test::data;
using cli_test::run;
namespace fs = std::filesystem;

namespace {

using test_files::slurp;
using test_files::TempDir;
using test_files::write;

// A fresh directory of the test's own, removed at the end.



std::string nested(const std::string& open, const std::string& inner, const std::string& close, int depth) {
  std::string s;
  s.reserve((open.size() + close.size()) * depth + inner.size());
  for (int i = 0; i < depth; ++i) s += open;
  s += inner;
  for (int i = 0; i < depth; ++i) s += close;
  return s;
}

// Reads a FIFO until its writer closes it, for at most `ms`: a writer that
// never comes (one that replaced the FIFO instead) fails the test, never hangs it.
std::string read_fifo_for(const std::string& path, int ms) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);
  if (fd < 0) return "";
  std::string text;
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  char buffer[65536];
  while (std::chrono::steady_clock::now() < end) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) text.append(buffer, static_cast<size_t>(n));
    else if (n == 0 && !text.empty()) break;  // the writer closed it
    else std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::close(fd);
  return text;
}

bool is_fifo(const std::string& path) {
  struct stat st{};
  return ::lstat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

}  // namespace

// ---------------------------------------------------------------------------
// The safe writer

TEST_CASE("safe writer: a FIFO is written into, never replaced, and one without a reader is refused, not waited on") {
  TempDir t("gpuadvisor_safety_fifo");
  const std::string fifo = t.file("out.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_AS(gpuadvisor::write_file_atomically(fifo, "no reader\n"), gpuadvisor::InputError);
  CHECK(is_fifo(fifo));
  std::string received;
  std::thread reader([&] { received = read_fifo_for(fifo, 20000); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the reader has the FIFO open
  gpuadvisor::write_file_atomically(fifo, "through the pipe\n");
  reader.join();
  CHECK(received == "through the pipe\n");
  CHECK(is_fifo(fifo));  // still a FIFO: the device case (/dev/null) takes the same path
  CHECK(std::distance(fs::directory_iterator(t.path), fs::directory_iterator()) == 1);  // no temporary left beside it
}

TEST_CASE("bounded reader: a FIFO is read as its writer writes, and one no process writes to is refused, not waited on") {
  TempDir t("gpuadvisor_safety_read_fifo");
  const std::string fifo = t.file("trace.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // after the reader opened it
    std::ofstream(fifo) << "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 5}\n";
  });
  CHECK(gpuadvisor::read_input_file_capped(fifo, "a trace", 1000, 5000).find("input_length") != std::string::npos);
  writer.join();
  // No writer: the open does not block, and the wait for data is bounded (200 ms here, 30 s in the tool).
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(gpuadvisor::read_input_file_capped(fifo, "a trace", 1000, 200), Catch::Contains("gave no data for 0.2 s"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  CHECK(is_fifo(fifo));
  // A writer that sends more than the cap is cut off as a file is.
  std::thread flood([&] { std::ofstream(fifo) << std::string(5000, 'x'); });
  CHECK_THROWS_WITH(gpuadvisor::read_input_file_capped(fifo, "a trace", 1000, 5000), Catch::Contains("larger than the 1000 bytes"));
  flood.join();
}

TEST_CASE("safe writer: a link planted at the old temporary name is not followed, its target is untouched") {
  TempDir t("gpuadvisor_safety_link");
  const std::string victim = t.file("victim.txt"), out = t.file("chart.svg");
  write(victim, "precious\n");
  // The writer once used .<name>.tmp-<pid>, opened by following links.
  fs::create_symlink(victim, t.file(".chart.svg.tmp-" + std::to_string(getpid())));
  gpuadvisor::write_file_atomically(out, "<svg/>\n");
  CHECK(slurp(victim) == "precious\n");
  CHECK(slurp(out) == "<svg/>\n");
}

TEST_CASE("safe writer: a symlink the user names is replaced as a link, its target untouched, and a regular file keeps its mode") {
  TempDir t("gpuadvisor_safety_named_link");
  const std::string target = t.file("target.txt"), link = t.file("link.txt");
  write(target, "old\n");
  fs::create_symlink(target, link);
  gpuadvisor::write_file_atomically(link, "new\n");
  CHECK(slurp(target) == "old\n");
  CHECK_FALSE(fs::is_symlink(link));
  CHECK(slurp(link) == "new\n");
  ::chmod(target.c_str(), 0640);
  gpuadvisor::write_file_atomically(target, "again\n");
  CHECK((fs::status(target).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
}

TEST_CASE("safe writer: a set of files is written all or nothing") {
  TempDir t("gpuadvisor_safety_set");
  write(t.file("a.txt"), "old a\n");
  fs::create_directory(t.file("b.txt"));  // cannot be replaced
  CHECK_THROWS_AS(gpuadvisor::write_files_atomically({{t.file("a.txt"), "new a\n"}, {t.file("b.txt"), "new b\n"}}), gpuadvisor::InputError);
  CHECK(slurp(t.file("a.txt")) == "old a\n");
  CHECK(std::distance(fs::directory_iterator(t.path), fs::directory_iterator()) == 2);  // no temporaries left
  gpuadvisor::write_files_atomically({{t.file("a.txt"), "new a\n"}, {t.file("c.txt"), "new c\n"}});
  CHECK(slurp(t.file("a.txt")) == "new a\n");
  CHECK(slurp(t.file("c.txt")) == "new c\n");
}

TEST_CASE("cli: --output and --chart to a FIFO leave it a FIFO") {
  TempDir t("gpuadvisor_safety_cli_fifo");
  const std::string fifo = t.file("overlay.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string received;
  std::thread reader([&] { received = read_fifo_for(fifo, 20000); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the reader has the FIFO open
  const auto r = run("prices import --offer-file " + data("prices/offer_ec2.json") + " --output " + fifo);
  reader.join();
  CHECK(r.code == 0);
  CHECK(is_fifo(fifo));
  CHECK(nlohmann::json::parse(received).contains("instances"));
  // No reader: refused with exit 2 at once, and still a FIFO.
  const std::string chart_fifo = t.file("c.svg");
  REQUIRE(::mkfifo(chart_fifo.c_str(), 0600) == 0);
  const auto d = run("cost --model llama-3-8b --task pretrain --tokens 50B --family p5 --chart " + chart_fifo);
  CHECK(d.code == 2);
  CHECK(d.err.find("a FIFO that no process reads from") != std::string::npos);
  CHECK(is_fifo(chart_fifo));
}

TEST_CASE("cli: launch files are replaced as a set, never mixed") {
  TempDir t("gpuadvisor_safety_emit");
  const std::string dir = t.file("out");
  REQUIRE(run("recommend --params 7B --task finetune --emit slurm --emit-dir " + dir).code == 0);
  const std::string before = slurp(dir + "/job.sbatch");
  fs::remove(dir + "/deepspeed.json");
  fs::create_directory(dir + "/deepspeed.json");  // one target that cannot be replaced
  CHECK(run("recommend --params 13B --task finetune --emit slurm --emit-dir " + dir).code == 2);
  CHECK(slurp(dir + "/job.sbatch") == before);  // not rewritten for the new pick
}

TEST_CASE("cli: a newline in a value becomes no live line in a launch file, and unsafe values are refused") {
  TempDir t("gpuadvisor_safety_inject");
  const std::string dir = t.file("out\nrm -rf /tmp/gpuadvisor-never #");
  const std::string quoted = "'" + dir + "'";
  fs::create_directories(fs::path(dir).parent_path());  // --emit-dir creates its last directory only
  REQUIRE(run("recommend --params 7B --task finetune --emit slurm --emit-dir " + quoted).code == 0);
  std::ifstream in(dir + "/job.sbatch");
  std::string line;
  int live = 0;
  while (std::getline(in, line))
    if (line.rfind("rm -rf", 0) == 0) ++live;
  CHECK(live == 0);
  CHECK(slurp(dir + "/job.sbatch").find("out\\nrm -rf") != std::string::npos);  // shown escaped in the comment
  const auto image = run("recommend --params 7B --task finetune --emit slurm --image 'img;reboot' --emit-dir " + t.file("x"));
  CHECK(image.code == 2);
  CHECK(image.err.find("--image") != std::string::npos);
  const auto entry = run("recommend --params 7B --task finetune --emit k8s --entrypoint 'train.py\"; reboot' --emit-dir " + t.file("x"));
  CHECK(entry.code == 2);
  CHECK_FALSE(fs::exists(t.file("x") + "/pytorchjob.yaml"));
}

// ---------------------------------------------------------------------------
// The bounded reader, depth and size caps

TEST_CASE("bounded reader: a pipe or device is capped by what is read, not by what stat says") {
  for (const std::string args : {"estimate --instance p5.48xlarge --task lora --model-config /dev/zero", "--catalog-add /dev/zero catalog",
                                 "validate --cases /dev/zero"}) {
    const auto r = run(args);
    INFO(args << "\n" << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("larger than the 32 MB") != std::string::npos);
  }
}

TEST_CASE("deeply nested input is refused before any recursive walk (config, overlay, cases, baseline)") {
  TempDir t("gpuadvisor_safety_deep");
  const std::string deep = nested("[", "1", "]", 100000);
  write(t.file("config.json"), "{\"num_hidden_layers\": " + deep + "}");
  write(t.file("overlay.json"), "{\"instances\": [{\"name\": \"p5.48xlarge\", \"prices\": {\"us-east-1\": {\"on_demand\": {\"usd_per_hour\": " +
                                    deep + "}}}}]}");
  write(t.file("cases.json"), "{\"cases\": " + deep + "}");
  write(t.file("base.json"), "{\"recommendation\": " + nested("{\"a\":", "1", "}", 100000) + "}");
  for (const std::string args :
       {"estimate --instance p5.48xlarge --task lora --model-config " + t.file("config.json"), "--catalog-add " + t.file("overlay.json") + " catalog",
        "validate --cases " + t.file("cases.json"), "recommend --params 7B --task lora --compare-to " + t.file("base.json")}) {
    const auto r = run(args);
    INFO(args << "\n" << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("nested more than 64 levels") != std::string::npos);
    CHECK(r.err.size() < 1000);  // the message quotes no value back
  }
}

TEST_CASE("a config.json with 100 million layers is refused before the per-layer work, at once") {
  TempDir t("gpuadvisor_safety_layers");
  std::string layers = "[";
  for (int i = 0; i < 10000; ++i) layers += (i ? "," : "") + std::to_string(i);
  layers += "]";
  write(t.file("config.json"), "{\"model_type\": \"qwen2_moe\", \"num_hidden_layers\": 100000000, \"hidden_size\": 4096, \"num_attention_heads\": 32, "
                               "\"intermediate_size\": 11008, \"vocab_size\": 32000, \"num_experts\": 8, \"num_experts_per_tok\": 2, "
                               "\"moe_intermediate_size\": 1408, \"mlp_only_layers\": " + layers + "}");
  const auto start = std::chrono::steady_clock::now();
  const auto r = run("estimate --instance p5.48xlarge --task lora --model-config " + t.file("config.json"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  CHECK(r.code == 2);
  CHECK(r.err.find("num_hidden_layers 100000000") != std::string::npos);
}

TEST_CASE("a config.json whose hidden size is not a whole number of heads is refused, as the --hidden override is") {
  TempDir t("gpuadvisor_safety_heads");
  write(t.file("config.json"), "{\"num_hidden_layers\": 32, \"hidden_size\": 4097, \"num_attention_heads\": 32, \"intermediate_size\": 11008, "
                               "\"vocab_size\": 32000}");
  const auto r = run("estimate --instance p5.48xlarge --task lora --model-config " + t.file("config.json"));
  CHECK(r.code == 2);
  CHECK(r.err.find("not divisible by num_attention_heads") != std::string::npos);
}

// ---------------------------------------------------------------------------
// Silent nonsense

TEST_CASE("a service for a trickle of requests is one replica, never zero instances at $nan") {
  const auto r = run("recommend --params 7B --task inference --requests-per-second 1e-7 --format json");
  REQUIRE(r.code == 0);
  const auto pick = nlohmann::json::parse(r.out)["recommendation"];
  CHECK(pick["count"].get<int>() >= 1);
  CHECK(pick["replicas"].get<int>() >= 1);
  CHECK(r.out.find("nan") == std::string::npos);
  CHECK(r.out.find("inf%") == std::string::npos);
}

TEST_CASE("overlays: an unknown key inside an entry, a name twice, an impossible or future date and a 1e-300 rate are refused") {
  TempDir t("gpuadvisor_safety_overlay");
  auto overlay = [&](const std::string& prices) {
    write(t.file("o.json"), "{\"sources\": {\"T\": {\"title\": \"t\", \"url\": \"https://example.com\"}}, \"instances\": [" + prices + "]}");
    return run("--catalog-add " + t.file("o.json") + " catalog");
  };
  const std::string p5 = "{\"name\": \"p5.48xlarge\", \"prices\": {\"us-east-1\": {\"on_demand\": {\"usd_per_hour\": RATE, \"as_of\": \"DATE\", "
                         "\"source\": \"T\"}}}}";
  auto with = [&](const std::string& rate, const std::string& date) {
    std::string s = p5;
    s.replace(s.find("RATE"), 4, rate);
    s.replace(s.find("DATE"), 4, date);
    return s;
  };
  CHECK(overlay(with("40", "2026-11-20")).code == 0);
  const auto misspelt = overlay("{\"name\": \"p5.48xlarge\", \"price\": {}}");
  CHECK(misspelt.code == 2);
  CHECK(misspelt.err.find("did you mean 'prices'") != std::string::npos);
  const auto twice = overlay(with("40", "2026-11-20") + "," + with("41", "2026-11-20"));
  CHECK(twice.code == 2);
  CHECK(twice.err.find("appears twice") != std::string::npos);
  CHECK(overlay(with("40", "2026-02-30")).code == 2);
  CHECK(overlay(with("40", "2025-02-29")).code == 2);
  CHECK(overlay(with("40", "2024-02-29")).code == 0);  // a leap day
  const auto future = run("--catalog-add " + t.file("o.json") + " catalog");
  CHECK(future.code == 0);
  write(t.file("o.json"), "{\"sources\": {\"T\": {\"title\": \"t\", \"url\": \"u\"}}, \"instances\": [" + with("40", "2999-01-01") + "]}");
  const auto ahead = run("--catalog-add " + t.file("o.json") + " catalog");
  CHECK(ahead.code == 2);
  CHECK(ahead.err.find("in the future") != std::string::npos);
  const auto tiny = overlay(with("1e-300", "2026-11-20"));
  CHECK(tiny.code == 2);
  CHECK(tiny.err.find("less than any EC2 instance costs") != std::string::npos);
}

TEST_CASE("cli: a damaged cache of fetched prices says how to go on") {
  TempDir t("gpuadvisor_safety_cache");
  fs::create_directories(t.file("cache/gpuadvisor"));
  write(t.file("cache/gpuadvisor/prices.json"), "{\"instances\": [");
  const auto r = run("models", "GPUADVISOR_TODAY=2026-12-01 XDG_CACHE_HOME=" + t.file("cache"));
  CHECK(r.code == 2);
  CHECK(r.err.find("--no-cache-prices") != std::string::npos);
  CHECK(run("--no-cache-prices models", "GPUADVISOR_TODAY=2026-12-01 XDG_CACHE_HOME=" + t.file("cache")).code == 0);
}

TEST_CASE("cli: a --compare-to baseline with a wrongly typed or absurd field is bad input, not a crash or -$inf") {
  TempDir t("gpuadvisor_safety_baseline");
  const auto b = run("recommend --params 13B --task lora --format json");
  REQUIRE(b.code == 0);
  auto edited = [&](const std::string& key, const nlohmann::json& value, bool in_costs) {
    nlohmann::json doc = nlohmann::json::parse(b.out);
    (in_costs ? doc["recommendation"]["costs"] : doc["recommendation"])[key] = value;
    write(t.file("base.json"), doc.dump());
    return run("recommend --params 13B --task lora --fail-if-increase 10% --compare-to " + t.file("base.json"));
  };
  const auto count = edited("count", "2", false);
  CHECK(count.code == 2);
  CHECK(count.err.find("recommendation.count") != std::string::npos);
  const auto huge = edited("ranked_usd", 1e308, true);
  CHECK(huge.code == 2);
  CHECK(huge.out.find("inf") == std::string::npos);
  CHECK(edited("instance", 5, false).code == 2);
  CHECK(edited("ranked_usd", "lots", true).code == 2);
}

TEST_CASE("cli: output that cannot be written is a failure, not exit 0") {
  CHECK(run("models >&-").code == 2);
  struct stat st{};
  if (::stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode)) CHECK(run("models >/dev/full").code == 2);  // the shell opens it; nothing replaces it
}

TEST_CASE("cli: a failure after the output began replaces it: one JSON document, no partial table") {
  for (const std::string args : {"recommend --params 13B --task lora", "cost --model llama-3-8b --task pretrain --tokens 50B --family p5",
                                 "recommend --params 7B --task inference", "cost --model llama-3-8b --task inference --requests-per-second 2"}) {
    const auto j = run(args + " --chart /nonexistent-dir/c.svg --format json");
    INFO(args << "\n" << j.out);
    CHECK(j.code == 2);
    const auto doc = nlohmann::json::parse(j.out);  // throws on "Extra data": two documents
    CHECK(doc.contains("error"));
    CHECK_FALSE(doc.contains("recommendation"));
    const auto c = run(args + " --chart /nonexistent-dir/c.svg --format csv");
    CHECK(c.code == 2);
    CHECK(c.out.empty());
  }
}

TEST_CASE("second review: a future-dated price file, a region that climbs out of the cache, a key twice, a unit that skips a bound") {
  TempDir t("gpuadvisor_safety_review2");
  std::string offer = slurp(data("prices/offer_ec2.json"));
  offer.replace(offer.find("2026-11-01T00:00:00Z"), 20, "2999-01-01T00:00:00Z");
  write(t.file("future.json"), offer);
  const auto future = run("prices import --offer-file " + t.file("future.json") + " --output " + t.file("o.json"));
  CHECK(future.code == 2);  // would have made every later command refuse the cache
  CHECK(future.err.find("publicationDate 2999-01-01 is after the import date") != std::string::npos);
  CHECK_FALSE(fs::exists(t.file("o.json")));
  const auto climb = run("prices fetch --base-url http://127.0.0.1:9 --region a/../../evil --deadline 5 --download-dir " + t.file("dl") +
                         " --output " + t.file("o.json"));
  CHECK(climb.code == 2);
  CHECK(climb.err.find("is not an AWS region name") != std::string::npos);
  write(t.file("twice.json"), "{\"instances\": [{\"name\": \"p5.48xlarge\", \"name\": \"p4d.24xlarge\"}]}");
  const auto twice = run("--catalog-add " + t.file("twice.json") + " catalog");
  CHECK(twice.code == 2);
  CHECK(twice.err.find("the key 'name' appears twice") != std::string::npos);
  std::string dup = slurp(data("prices/offer_ec2.json"));
  const size_t usd = dup.find("\"USD\"");
  REQUIRE(usd != std::string::npos);
  dup.insert(usd, "\"USD\": \"0.01\", ");
  write(t.file("dup.json"), dup);
  CHECK(run("prices import --offer-file " + t.file("dup.json") + " --output " + t.file("o.json")).code == 2);
  for (const std::string hours : {"1e305d", "1.7e308h", "1e20h"}) {
    const auto h = run("cost --instance p5.48xlarge --count 1 --hours " + hours);
    INFO(hours);
    CHECK(h.code == 2);
  }
  CHECK(run("cost --instance p5.48xlarge --count 1 --hours 90min").code == 0);
  CHECK(run("cost --instance p5.48xlarge --count 1 --hours 10 --discount p5=99.9999999%").code == 2);
  CHECK(run("cost --instance p5.48xlarge --count 1 --hours 10 --discount p5=30%").code == 0);
}

TEST_CASE("second review: a baseline must be a costed document of this version with a real cost and count") {
  TempDir t("gpuadvisor_safety_baseline2");
  const auto b = run("recommend --params 13B --task lora --format json");
  REQUIRE(b.code == 0);
  auto with = [&](const std::function<void(nlohmann::json&)>& change) {
    nlohmann::json doc = nlohmann::json::parse(b.out);
    change(doc);
    write(t.file("base.json"), doc.dump());
    return run("recommend --params 13B --task lora --fail-if-increase 10% --compare-to " + t.file("base.json")).code;
  };
  CHECK(with([](nlohmann::json&) {}) == 0);
  CHECK(with([](nlohmann::json& d) { d["recommendation"]["costs"]["ranked_usd"] = 1e-300; }) == 2);
  CHECK(with([](nlohmann::json& d) { d["recommendation"]["count"] = 0; }) == 2);
  CHECK(with([](nlohmann::json& d) { d["schema_version"] = 9; }) == 2);
  CHECK(with([](nlohmann::json& d) { d["command"] = "catalog"; }) == 2);
  // Printed to the terminal: control characters in the instance are refused (a hostile review saw a newline and U+202E printed raw).
  CHECK(with([](nlohmann::json& d) { d["recommendation"]["instance"] = "p5.48xlarge\nFAKE: pass"; }) == 2);
  CHECK(with([](nlohmann::json& d) { d["recommendation"]["instance"] = "p5\u202e.48xlarge"; }) == 2);
  // The model's name is warned with (another job), its controls escaped as a launch file's comments escape them (base one_line).
  nlohmann::json doc = nlohmann::json::parse(b.out);
  doc["model"]["name"] = "x\nFAKE\u202e";
  write(t.file("named.json"), doc.dump());
  const auto named = run("recommend --params 13B --task lora --compare-to " + t.file("named.json"));
  CHECK(named.code == 0);
  CHECK(named.err.find("the baseline is for x\\nFAKE\\u202e lora") != std::string::npos);
  CHECK(named.err.find("\xE2\x80\xAE") == std::string::npos);
}

TEST_CASE("second review: a config.json too small to be a model, or whose layer lists disagree with its layers, is refused") {
  TempDir t("gpuadvisor_safety_config2");
  write(t.file("tiny.json"), "{\"num_hidden_layers\": 1, \"hidden_size\": 1, \"num_attention_heads\": 1, \"intermediate_size\": 1, \"vocab_size\": 1}");
  CHECK(run("estimate --instance p5.48xlarge --task lora --model-config " + t.file("tiny.json")).code == 2);
  write(t.file("types.json"), "{\"num_hidden_layers\": 32, \"hidden_size\": 4096, \"num_attention_heads\": 32, \"intermediate_size\": 11008, "
                              "\"vocab_size\": 32000, \"sliding_window\": 4096, \"layer_types\": [\"full_attention\", \"sliding_attention\"]}");
  const auto types = run("estimate --instance p5.48xlarge --task lora --model-config " + t.file("types.json"));
  CHECK(types.code == 2);
  CHECK(types.err.find("layer_types lists 2 layers") != std::string::npos);
}

TEST_CASE("cli: cost --task inference carries the gates: over a limit and past an increase exits 4, a missing baseline exits 2") {
  TempDir t("gpuadvisor_safety_service_gates");
  const std::string service = "cost --model llama-3-70b --task inference --requests-per-second 8";
  const auto base = run("--discount 40% " + service + " --format json");
  REQUIRE(base.code == 0);
  write(t.file("base.json"), base.out);
  const auto gated = run(service + " --compare-to " + t.file("base.json") + " --fail-if-increase 10% --fail-if-over 20000 --format json");
  CHECK(gated.code == 4);
  const auto doc = nlohmann::json::parse(gated.out);
  REQUIRE(doc["gates"].size() == 2);
  CHECK(doc["gates"][0]["gate"] == "fail_if_over");
  CHECK(doc["gates"][0]["passed"] == false);
  CHECK(doc["gates"][1]["gate"] == "fail_if_increase");
  CHECK(doc["gates"][1]["passed"] == false);
  CHECK(doc["comparison"]["cost_delta_fraction"].get<double>() > 0.10);
  CHECK(run(service + " --compare-to /nonexistent.json --format json").code == 2);
  const auto plain = nlohmann::json::parse(run(service + " --format json").out);
  CHECK(plain["gates"].empty());
  CHECK(plain["comparison"].is_null());
}

TEST_CASE("third review: names that reach the launch files are plain: an overlay's instance, a config's model name, an image") {
  TempDir t("gpuadvisor_safety_review3");
  // An overlay instance named to run a command from the EFA check: refused at load, nothing written, nothing run.
  nlohmann::json overlay = nlohmann::json::parse(slurp(data("overlay_team.json")));
  nlohmann::json* dgx = nullptr;
  for (auto& i : overlay["instances"])
    if (i.contains("family")) dgx = &i;
  REQUIRE(dgx);
  (*dgx)["name"] = "x$(touch " + t.file("ran") + ")";
  write(t.file("overlay.json"), overlay.dump());
  const auto named = run("--catalog-add " + t.file("overlay.json") + " catalog");
  CHECK(named.code == 2);
  CHECK(named.err.find("a name holds letters, digits and . _ - only") != std::string::npos);
  CHECK_FALSE(fs::exists(t.file("ran")));
  // A config.json whose name holds a newline would break a comment line of megatron_args.txt in two.
  nlohmann::json config = nlohmann::json::parse(slurp(data("hf-configs/DeepSeek-V3.json")));
  config["_name_or_path"] = "org/m\n--nodes=999";
  write(t.file("config.json"), config.dump());
  const auto multiline = run("estimate --model-config " + t.file("config.json") + " --task finetune --instance p5.48xlarge --count 16");
  CHECK(multiline.code == 2);
  CHECK(multiline.err.find("'_name_or_path' holds a control character") != std::string::npos);
  // Values that break YAML or turn into an engine flag; a real image tag passes.
  for (const std::string bad : {"--image=@foo", "--image=org/m:", "--image=null", "--hf-model=--trust-remote-code"}) {
    INFO(bad);
    const auto r = run("recommend --model llama-3-8b --task inference --requests-per-second 5 --emit k8s --emit-dir " + t.file("out") + " " + bad);
    CHECK(r.code == 2);
    CHECK(r.err.find("cannot be written into the launch files as it is") != std::string::npos);
  }
  CHECK(run("recommend --model llama-3-8b --task inference --requests-per-second 5 --emit k8s --emit-dir " + t.file("ok") +
            " --image nvcr.io/nvidia/pytorch:24.05-py3")
            .code == 0);
}

TEST_CASE("safety: every JSON document becomes text through json_text, which cannot abort on bytes that are not UTF-8") {
  // nlohmann's dump() throws type_error 316 on such bytes (a name or file the user gave): exit 134 with nothing on stdout.
  const std::filesystem::path src = std::filesystem::path(GPUADVISOR_SOURCE_DIR) / "src";
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(src)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    ++files;
    INFO(entry.path().string());
    CHECK(text.str().find(".dump(") == std::string::npos);
  }
  CHECK(files > 50);
  const nlohmann::json bad = std::string("a\xff");
  CHECK_THROWS(bad.dump());
  CHECK(gpuadvisor::json_text(bad) == "\"a\xEF\xBF\xBD\"");
}
