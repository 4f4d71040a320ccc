// Layer cli: flags, one file per command: declare flags, build the request, call the library, render; the top layer.
// gpuadvisor's entry point: the global options, the commands (one file each
// in src/cli/), exit codes, and the JSON error document (docs/json.md §Errors).
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <regex>
#include <sstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>

#include "cli.hpp"
#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/base/json_text.hpp"
#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/base/quantity.hpp"

using namespace gpuadvisor;
using namespace gpuadvisor::cli;

namespace {

// Whether the command line asks for JSON; read from argv so that even a
// command line CLI11 refuses gets its error as JSON.
bool wants_json(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto is_json = [](std::string_view v) { return format_from_string(v) == Format::json; };
    if ((a.rfind("--format=", 0) == 0 && is_json(a.substr(9))) || (a == "--format" && i + 1 < argc && is_json(argv[i + 1]))) return true;
  }
  return false;
}

// "; --parms: did you mean --params?" for each flag on the command line that
// the chosen command does not have and that is close to one it has.
// The command named on the line (the app itself without one).
CLI::App* named_command(CLI::App& app, int argc, char** argv) {
  CLI::App* cmd = &app;
  for (int i = 1; i < argc; ++i)
    for (CLI::App* s : cmd->get_subcommands([](CLI::App*) { return true; }))
      if (s->get_name() == argv[i]) cmd = s;
  return cmd;
}

// Every --flag the app and the named command know.
std::vector<std::string> known_flags(CLI::App& app, CLI::App* cmd) {
  std::vector<std::string> names;
  for (const CLI::App* a : {static_cast<const CLI::App*>(&app), static_cast<const CLI::App*>(cmd)})
    for (const CLI::Option* o : a->get_options())
      for (const auto& n : o->get_lnames()) names.push_back("--" + n);
  return names;
}

// The --flags on the line that the command does not know: CLI11 reports a
// missing required option before them, which hides the typo that caused it.
std::vector<std::string> unknown_flags(CLI::App& app, int argc, char** argv) {
  const std::vector<std::string> names = known_flags(app, named_command(app, argc, argv));
  std::vector<std::string> out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") break;
    if (a.rfind("--", 0) != 0 || a.size() < 3) continue;
    const std::string flag = a.substr(0, a.find('='));
    if (std::find(names.begin(), names.end(), flag) == names.end()) out.push_back(flag);
  }
  return out;
}

// The parser's words for a flag given twice ("--params: At Most 1 required but
// received 2") in the tool's own.
std::string plain_parse_message(const std::string& message) {
  static const std::regex repeated("^(-[-a-z0-9]+): At Most 1 required but received ([0-9]+)$");
  std::smatch m;
  if (std::regex_match(message, m, repeated))
    return fmt::format("{} is given {} times; give it once", m[1].str(), m[2].str());
  return message;
}

// The nearest known flag to each unknown one, and a duration the shell split.
std::string flag_suggestions(CLI::App& app, int argc, char** argv, const std::vector<std::string>& unknown) {
  const std::vector<std::string> names = known_flags(app, named_command(app, argc, argv));
  std::string out;
  for (const std::string& flag : unknown) {
    const auto near = gpuadvisor::nearest_names(flag, names, 1);
    if (!near.empty() && gpuadvisor::edit_distance(flag, near.front()) <= std::max<size_t>(2, flag.size() / 4))
      out += fmt::format("; {}: did you mean {}?", flag, near.front());
  }
  // "--deadline 2 days": a unit word after a number the shell split off.
  static const std::vector<std::string> units{"s", "sec", "secs", "second", "seconds", "min", "mins", "minute", "minutes", "h", "hr",
                                              "hrs", "hour", "hours", "d", "day", "days", "w", "week", "weeks", "y", "year", "years"};
  for (int i = 2; i < argc; ++i)
    if (std::find(units.begin(), units.end(), std::string(argv[i])) != units.end() && std::string(argv[i - 1]).find_first_not_of("0123456789.") == std::string::npos) {
      out += fmt::format("; write a duration as one word: '{}{}' (2d, 36h, 90min)", argv[i - 1], argv[i]);
      break;
    }
  return out;
}

// An integer flag's text by the one grammar (docs/cli.md §Quantities), at
// least `least`, back in the canonical form CLI11 then converts.
std::string decimal_integer(const std::string& text, const std::string& flag, long long least) {
  const long long v = gpuadvisor::parse_decimal_integer(text, flag);
  if (v > std::numeric_limits<int>::max()) throw InputError(fmt::format("{}: '{}' is out of range", flag, text));
  if (v == 0 && least > 0) throw InputError(fmt::format("{}: 0 is not allowed here; give at least 1, or leave the flag out for its default", flag));
  if (v < least) throw InputError(fmt::format("{}: '{}' must be at least {}", flag, text, least));
  return std::to_string(v);
}

// Every integer-typed option of every command reads its text through
// decimal_integer before CLI11's conversion, which takes "010" as octal 8 and
// "0x10" as 16. Zero means nothing (or "not given") except on these flags.
void use_decimal_integers(CLI::App* cmd) {
  static const std::vector<std::string> zero_allowed{"--zero-stage", "--retries", "--min-accelerators"};
  for (CLI::Option* o : cmd->get_options()) {
    if (o->get_type_size_max() == 0 || (o->get_type_name() != "INT" && o->get_type_name() != "UINT")) continue;
    const std::string flag = o->get_name();
    const long long least = std::find(zero_allowed.begin(), zero_allowed.end(), flag) != zero_allowed.end() ? 0 : 1;
    o->transform([flag, least](std::string text) { return decimal_integer(text, flag, least); });
  }
  for (CLI::App* sub : cmd->get_subcommands([](CLI::App*) { return true; })) use_decimal_integers(sub);
}

constexpr std::string_view kCommands[] = {"recommend", "estimate", "cost", "catalog", "models", "validate", "calibrate", "prices"};

// The first word of the command line that is not a global option or its value:
// the command the user meant, known or not ("" when there is none).
std::string command_word(int argc, char** argv) {
  static constexpr std::string_view kValued[] = {"--catalog", "--catalog-add", "--format", "--discount"};
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (std::find(std::begin(kValued), std::end(kValued), a) != std::end(kValued)) ++i;
    else if (a.empty() || a[0] != '-') return std::string(a);
  }
  return "";
}

// The command's name as the JSON documents give it ("recommend", "prices import"),
// or the unknown word the user typed in its place.
std::string command_name(int argc, char** argv) {
  static constexpr std::string_view kSubcommands[] = {"import", "fetch", "show", "validate"};
  const std::string word = command_word(argc, argv);
  if (word != "prices" && word != "catalog") return word;
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i] == word && std::find(std::begin(kSubcommands), std::end(kSubcommands), std::string_view(argv[i + 1])) != std::end(kSubcommands))
      return fmt::format("{} {}", word, argv[i + 1]);
  return word;
}

// A word in the command's place that names no command is exit 2 with the nearest one,
// before the parser (which would take `plan --help` for the top-level help).
void refuse_unknown_command(int argc, char** argv) {
  const std::string word = command_word(argc, argv);
  if (word.empty() || std::find(std::begin(kCommands), std::end(kCommands), word) != std::end(kCommands)) return;
  const std::vector<std::string> names(std::begin(kCommands), std::end(kCommands));
  auto near = gpuadvisor::nearest_names(word, names, 1);
  if (!near.empty() && gpuadvisor::edit_distance(word, near.front()) > std::max<size_t>(2, word.size() / 3)) near.clear();
  throw InputError(fmt::format("unknown command '{}'{}; the commands are recommend, cost, estimate, catalog, models, validate, calibrate, prices (gpuadvisor --help)",
                               word.substr(0, 40), near.empty() ? "" : fmt::format(": did you mean '{}'?", near.front())));
}

// A list flag's value with an empty item ("--family ,", "g5,,p5"): the parser
// drops the empty items and, left with none, took the next flag as the value
// ("no instance family '--top'"). Refused with the flag's own name.
void collect_list_flags(const CLI::App* cmd, std::vector<std::string>& names) {
  for (const CLI::Option* opt : cmd->get_options())
    if (opt->get_delimiter() == ',')
      for (const auto& n : opt->get_lnames()) names.push_back("--" + n);
  for (const CLI::App* sub : cmd->get_subcommands({})) collect_list_flags(sub, names);
}

void refuse_empty_list_items(const CLI::App& app, int argc, char** argv) {
  std::vector<std::string> names;
  collect_list_flags(&app, names);
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    for (const auto& n : names) {
      std::optional<std::string_view> value;
      if (a == n && i + 1 < argc) value = argv[i + 1];
      else if (a.size() > n.size() && a.substr(0, n.size() + 1) == n + "=") value = a.substr(n.size() + 1);
      if (value) refuse_empty_item(n, *value);  // an empty value has its own message
    }
  }
}

int fail(ExitCode code, std::string_view kind, const std::string& message, const std::string& details_json, bool json, const std::string& command) {
  std::cerr << "gpuadvisor: " << (code == ExitCode::internal_error ? "internal error: " : "error: ") << message
            << (code == ExitCode::internal_error ? " (please report this)" : "") << "\n";
  if (json) {
    nlohmann::ordered_json j;
    j["schema_version"] = kJsonSchemaVersion;
    j["generated_by"] = fmt::format("gpuadvisor {}", tool_version());
    j["command"] = command;
    nlohmann::ordered_json e{{"exit_code", static_cast<int>(code)}, {"kind", kind}, {"message", message}};
    if (!details_json.empty()) {
      const nlohmann::ordered_json details = nlohmann::ordered_json::parse(details_json);
      for (auto it = details.begin(); it != details.end(); ++it) e[it.key()] = it.value();
    }
    j["error"] = e;
    j["warnings"] = warnings();
    std::cout << json_text(j, 2) << "\n";
  }
  return static_cast<int>(code);
}

int run(int argc, char** argv) {
  CLI::App app{
      "gpuadvisor: which EC2 accelerator instances to rent for a foundation-model job, how many, how long and what it costs.\n"
      "Examples:\n"
      "  gpuadvisor recommend --params 13B --task lora\n"
      "  gpuadvisor recommend --model llama-3-70b --task pretrain --tokens 1T --deadline 30d\n"
      "  gpuadvisor recommend --params 7B --task inference\n"
      "  gpuadvisor estimate --instance p5.48xlarge --count 8 --model llama-3-70b --task pretrain --precision fp8\n"
      "  gpuadvisor cost --instance p5.48xlarge --count 4 --hours 100\n"
      "  gpuadvisor cost --model llama-3-70b --task pretrain --tokens 200B --family p5 --chart cost.svg\n"
      "  gpuadvisor validate\n"
      "  gpuadvisor catalog --family p5 --format csv\n"
      "Exit codes: 0 ok, 1 internal error, 2 bad input, 3 nothing fits, 4 a CI gate (--fail-if-over, --fail-if-increase, --fail-if-pick-changes) failed,\n"
      "5 unavailable (prices fetch got no whole answer in time: try again later)\n"
      "(with --format json, errors are a JSON document too). "
      "Docs: docs/cli.md",
      "gpuadvisor"};
  const bool json = wants_json(argc, argv);
  app.set_version_flag("--version", [json] {
    Catalog c = load_catalog(embedded_catalog_source());
    if (json) return render_version_json(c);
    return fmt::format("gpuadvisor {} (catalog {}, prices as of {})", tool_version(), c.catalog_version, c.prices_as_of);
  });
  app.require_subcommand(1);
  app.fallthrough();
  GlobalOptions g;
  app.add_option("--catalog", g.catalog_file, "Replace the built-in catalog with this JSON file (or set GPUADVISOR_CATALOG)");
  app.add_option("--catalog-add", g.catalog_add, "Add or override catalog entries from this JSON overlay (repeatable)");
  app.add_option("--format", g.format, "table | json | csv | markdown | html (default table; html: a self-contained report, recommend and cost only)");
  app.add_flag("--wide", g.wide, "Show every column in tables");
  app.add_flag("-v,--verbose", g.verbose, "More detail on stderr (repeat for debug)");
  app.add_flag("-q,--quiet", g.quiet, "Only errors on stderr");
  app.add_flag("--no-cache-prices", g.no_cache_prices, "Ignore the prices `prices fetch` cached (use the built-in snapshot and --catalog-add)");
  app.add_option("--discount", g.discounts, "Negotiated discount off on-demand and commitment prices: 15%, or per family p5=20% (repeatable)");

  g.command_line = "gpuadvisor";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,:/%+@") == std::string::npos;
    // Quoted as the shell reads it back: an embedded ' closes the quotes, is escaped and reopens them.
    std::string quoted = "'";
    for (const char ch : a) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    g.command_line += " " + (plain ? a : quoted + "'");
  }
  refuse_unknown_command(argc, argv);
  // Only the command named on the line is built (building every command's
  // options was a third of start-up); all of them without one (the top-level
  // help), none for --version alone.
  const std::string word = command_word(argc, argv);
  const bool version_only = argc == 2 && std::string_view(argv[1]) == "--version";
  using AddCommand = std::unique_ptr<Command> (*)(CLI::App&);
  const std::pair<std::string_view, AddCommand> builders[] = {
      {"catalog", add_catalog_command}, {"models", add_models_command},       {"validate", add_validate_command},
      {"calibrate", add_calibrate_command}, {"prices", add_prices_command}, {"recommend", add_recommend_command},
      {"cost", add_cost_command},       {"estimate", add_estimate_command}};
  std::vector<std::unique_ptr<Command>> commands;
  for (const auto& [name, add] : builders)
    if (!version_only && (word.empty() || word == name)) commands.push_back(add(app));
  use_decimal_integers(&app);
  refuse_empty_list_items(app, argc, argv);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::vector<std::string> unknown = unknown_flags(app, argc, argv);
    const bool hidden = e.get_name() == "RequiredError" && !unknown.empty();
    const std::string message = (hidden ? fmt::format("{} {} not an option of `{}` (and {})", fmt::join(unknown, ", "), unknown.size() > 1 ? "are" : "is",
                                                      named_command(app, argc, argv)->get_name(), e.what())
                                        : plain_parse_message(e.what())) +
                                flag_suggestions(app, argc, argv, unknown);
    if (!wants_json(argc, argv)) {
      // The parser's message under the tool's own prefix, as every other input error.
      std::cerr << fmt::format("gpuadvisor: error: {}\nRun with --help for more information.\n", message);
      return static_cast<int>(ExitCode::input_error);
    }
    throw InputError(message);
  }

  refuse_empty_values(&app);
  auto logger = spdlog::stderr_color_mt("gpuadvisor", spdlog::color_mode::never);
  logger->set_pattern("gpuadvisor: %l: %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(g.quiet ? spdlog::level::err : g.verbose >= 2 ? spdlog::level::debug : spdlog::level::info);
  const Format format = parse_format(g);
  for (auto& c : commands) {
    if (!c->chosen()) continue;
    const std::string name = c->app->get_name();
    if (format == Format::html && name != "recommend" && name != "cost")
      throw InputError(fmt::format("--format html: `{}` has no HTML report (html is for recommend and cost); use table, json, csv or markdown", name));
    return c->run(g);
  }
  return 0;
}

// A closed standard stream (`>&-`) would hand its number to the next file
// opened, and output meant for stdout would land in that file: hold each with
// /dev/null, and remember that stdout was closed.
bool hold_closed_standard_streams() {
  bool stdout_closed = false;
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1) continue;
    if (fd == 1) stdout_closed = true;
    const int held = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (held >= 0 && held != fd) ::dup2(held, fd), ::close(held);
  }
  return stdout_closed;
}

// Output that did not reach stdout (closed, a full disk, /dev/full) is a failure, not a success.
int check_output_written(int code, bool stdout_closed) {
  std::cout.flush();
  const bool failed = stdout_closed || !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (!failed) return code;
  std::cerr << "gpuadvisor: error: the output could not be written to standard output" << (stdout_closed ? " (it is closed)" : "") << "\n";
  return code == 0 || code == static_cast<int>(ExitCode::gate_failed) ? static_cast<int>(ExitCode::input_error) : code;
}

// One document per run: what a command prints is held until it ends, and a
// failure after it began printing (a chart that cannot be written) replaces it
// with the error document rather than following it.
int run_and_report(int argc, char** argv, bool json, const std::string& command, std::ostringstream& held) {
  try {
    return run(argc, argv);
  } catch (const InputError& e) {
    held.str("");
    return fail(ExitCode::input_error, "input_error", e.what(), "", json, command);
  } catch (const UnavailableError& e) {
    held.str("");
    return fail(ExitCode::unavailable, "unavailable", e.what(), "", json, command);
  } catch (const NothingFitsError& e) {
    if (json) held.str("");  // a table or CSV of no rows (its header) is a whole answer: nothing fits
    return fail(ExitCode::nothing_fits, "nothing_fits", e.what(), e.details_json(), json, command);
  } catch (const std::exception& e) {
    held.str("");
    return fail(ExitCode::internal_error, "internal_error", e.what(), "", json, command);
  }
}

int run_holding_output(int argc, char** argv, bool json, const std::string& command) {
  std::ostringstream held;
  std::streambuf* real = std::cout.rdbuf(held.rdbuf());
  const int code = run_and_report(argc, argv, json, command, held);
  std::cout.rdbuf(real);
  std::cout << held.str();
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  const bool stdout_closed = hold_closed_standard_streams();
  const bool json = wants_json(argc, argv);
  const std::string command = command_name(argc, argv);
  return check_output_written(run_holding_output(argc, argv, json, command), stdout_closed);
}

