// Every `pacer ...` command line printed in README.md and docs/*.md is run with --dry-run and
// must exit 0: a documented command can never be refused.
//
// Conventions for writers (docs/README.md says the same for people):
//
// What counts as a command line
//   - In a fenced block (``` or ~~~): a line whose text starts with `pacer ` (after indentation
//     and an optional `$ ` prompt or YAML `- `), or a quoted `'pacer ...'` / `"pacer ..."`
//     (as in `sh -c '...'`), which ends at its closing quote. A line ending in `\` continues on
//     the next line; after a YAML `- pacer`, lines indented at least as far as `pacer` continue
//     it.
//   - Outside blocks: an inline code span starting with `pacer ` that has arguments.
//     `pacer run` alone (a subcommand's name) is a reference, not a command line.
//   - The command ends at an unquoted ` #` (comment), `&`, `;`, ` | ` (a pipe) or `>`.
//
// Synopsis notation
//   - `[...]` is optional: the line is checked with every optional part and without any.
//   - `a|b` (no spaces; `\|` in a table) are alternatives: the first one is checked.
//   - `WORD...` means one or more: checked with one.
//   - `$NAME` / `${NAME}` is a shell variable: replaced by 0 and also set to 0 in the
//     environment (so `--shards 3` finds JOB_COMPLETION_INDEX=0); a launcher's rank variable
//     (OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID) comes with its size set to 3.
//
// Placeholders: a word, or part of a word between non-alphanumerics, in capitals from this
// list (an unknown capitalised word fails the test, so add it here first):
//   URL -> ws://127.0.0.1:9/v1/realtime   PORT -> 9       HOST -> 127.0.0.1
//   DIR, DIR2, OUT, OUTDIR, FILE -> dir, dir2, out, outdir, file
//   WAV -> input.wav (a 1 s 16 kHz mono PCM16 file)
//   N -> 4   I -> 1 (so I/N is 1/4)   C -> 8   K -> 2   L -> 20   P -> 0.5   S -> 16   R -> 20
//   F, MODE -> server_error (a fault both mocks know)   SLO -> ttfa-p95=1.5s
//   T -> one hour from now, in Unix seconds   <command> -> run
//   VAR -> PACER_DOC_API_KEY (set in the command's environment: --api-key-env reads it)
//
// Inputs and outputs: each line runs in a fresh empty folder, so output folders named in the
// docs never exist yet (a dry run still refuses an existing one). The inputs a line names are
// made there first: the file after --audio (a WAV), after --schedule (a schedule.json), after
// --scenario NAME.json (a two-turn scenario), the
// dataset after `pacer record --dataset` (a manifest.jsonl of one WAV) and the recording after
// `--resume` (a run.json of that dataset, nothing recorded yet), the
// folders given to `pacer replay` (a run folder with a session-000/, or a session folder when
// its name starts with session-) and to `pacer merge`, `pacer report` and `pacer export`
// (copies of a real run's folder; merge refuses the same run twice, so write one). Every
// --start-at is moved to one hour from now (a date written in a doc is soon in the past).
// The files after --ca-file and --tls-cert are a throwaway self-signed certificate, the one
// after --tls-key its key.
// A dry run checks what the run checks: it loads NVML and binds --metrics-listen. So a line
// with --gpu-telemetry (and no --nvml-library) loads the tests' fake NVML of 8 GPUs
// (tests/fakes/fake_nvml.cpp), as no GPU is here, and --metrics-listen gets port 0 (the lines
// run in parallel: two binding one documented port would refuse each other).
// Absolute paths are used as they are.
//
// PACER_DOC_COMMANDS_VERBOSE=1 prints every command as it ran.

#include <gtest/gtest.h>

#include "fakes.hpp"
#include "integration/cli_process.hpp"
#include "integration/tls_files.hpp"
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace pacer::test {
namespace {

namespace fs = std::filesystem;

fs::path repo_root() {
    return fs::path(PACER_SOURCE_DIR);
}

struct doc_command {
    std::string where; ///< file:line
    std::string text;  ///< as written (continuations joined)
};

std::string trim(std::string s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string::npos)
        return {};
    const auto e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}

std::size_t indent_of(const std::string& line) {
    const auto b = line.find_first_not_of(' ');
    return b == std::string::npos ? line.size() : b;
}

// The command lines of one Markdown file, by the conventions above.
std::vector<doc_command> scan_markdown(const fs::path& file, const std::string& name) {
    std::vector<doc_command> found;
    std::ifstream in(file);
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);)
        lines.push_back(l);
    bool in_block = false;
    std::string fence;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string t = trim(lines[i]);
        const std::string where = name + ":" + std::to_string(i + 1);
        if (t.rfind("```", 0) == 0 || t.rfind("~~~", 0) == 0) {
            if (!in_block) {
                in_block = true;
                fence = t.substr(0, 3);
            } else if (t.substr(0, 3) == fence) {
                in_block = false;
            }
            continue;
        }
        if (in_block) {
            std::string rest = t;
            if (rest.rfind("$ ", 0) == 0)
                rest = trim(rest.substr(2));
            const bool yaml_item = rest.rfind("- pacer ", 0) == 0;
            if (yaml_item)
                rest = rest.substr(2);
            // `pacer run: 256 sessions ...` is what pacer printed, not a command line.
            if (rest.rfind("pacer ", 0) == 0 &&
                !std::regex_search(rest, std::regex("^pacer [a-z-]+:"))) {
                std::size_t j = i;
                if (yaml_item) {
                    const std::size_t column = lines[i].find("pacer ");
                    while (j + 1 < lines.size() && !trim(lines[j + 1]).empty() &&
                           indent_of(lines[j + 1]) >= column)
                        rest += " " + trim(lines[++j]);
                } else {
                    while (!rest.empty() && rest.back() == '\\' && j + 1 < lines.size())
                        rest = rest.substr(0, rest.size() - 1) + " " + trim(lines[++j]);
                }
                found.push_back({where, rest});
                i = j;
                continue;
            }
            for (const char q : {'\'', '"'}) {
                const std::string open = std::string(1, q) + "pacer ";
                if (const auto at = t.find(open); at != std::string::npos) {
                    const auto close = t.find(q, at + 1);
                    found.push_back(
                        {where, t.substr(at + 1, close == std::string::npos ? std::string::npos
                                                                            : close - at - 1)});
                    break;
                }
            }
            continue;
        }
        // Inline code spans of a prose or table line.
        std::size_t at = 0;
        while ((at = lines[i].find('`', at)) != std::string::npos) {
            const auto close = lines[i].find('`', at + 1);
            if (close == std::string::npos)
                break;
            std::string span = lines[i].substr(at + 1, close - at - 1);
            at = close + 1;
            if (span.rfind("pacer ", 0) != 0)
                continue;
            std::istringstream words(span);
            std::string w;
            int count = 0;
            while (words >> w)
                ++count;
            if (count <= 2)
                continue; // `pacer run`: a name, not a command line
            found.push_back({where, span});
        }
    }
    return found;
}

// README.md, then docs/*.md in name order.
std::vector<fs::path> markdown_files() {
    const auto root = repo_root();
    std::vector<fs::path> files{root / "README.md"};
    std::vector<fs::path> docs;
    for (const auto& e : fs::directory_iterator(root / "docs"))
        if (e.path().extension() == ".md")
            docs.push_back(e.path());
    std::sort(docs.begin(), docs.end());
    files.insert(files.end(), docs.begin(), docs.end());
    return files;
}

std::vector<doc_command> documented_commands() {
    std::vector<doc_command> all;
    for (const auto& f : markdown_files()) {
        auto found = scan_markdown(f, fs::relative(f, repo_root()).string());
        all.insert(all.end(), found.begin(), found.end());
    }
    return all;
}

// The shell words of a command, cut at a comment, `&`, `;`, a pipe or a redirection.
std::vector<std::string> shell_words(const std::string& text) {
    std::vector<std::string> words;
    std::string cur;
    bool have = false;
    char quote = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quote) {
            if (c == quote)
                quote = 0;
            else
                cur += c;
            continue;
        }
        if (c == '\'' || c == '"') {
            quote = c;
            have = true;
            continue;
        }
        if (c == '\\' && i + 1 < text.size()) {
            cur += text[++i];
            have = true;
            continue;
        }
        const bool word_start = !have;
        if ((c == '#' && word_start) || c == '&' || c == ';' || c == '>' ||
            (c == '|' && word_start))
            break;
        if (c == ' ' || c == '\t') {
            if (have)
                words.push_back(cur);
            cur.clear();
            have = false;
            continue;
        }
        cur += c;
        have = true;
    }
    if (have)
        words.push_back(cur);
    return words;
}

// `[...]` groups: with every optional part (brackets dropped) and without any.
std::vector<std::string> synopsis_variants(const std::string& text) {
    std::string full, minimal;
    int depth = 0;
    for (const char c : text) {
        if (c == '[') {
            ++depth;
            continue;
        }
        if (c == ']') {
            depth = std::max(0, depth - 1);
            continue;
        }
        full += c;
        if (depth == 0)
            minimal += c;
    }
    if (full == text)
        return {text};
    return {full, minimal};
}

std::string future_unix_seconds() {
    return std::to_string(static_cast<long long>(std::time(nullptr)) + 3600);
}

// Replaces the placeholders of one word; returns the unknown ones.
std::string substitute(const std::string& word, std::set<std::string>& unknown,
                       std::map<std::string, std::string>& env) {
    static const std::map<std::string, std::string> table = {
        {"URL", "ws://127.0.0.1:9/v1/realtime"},
        {"PORT", "9"},
        {"HOST", "127.0.0.1"},
        {"DIR", "dir"},
        {"DIR2", "dir2"},
        {"OUT", "out"},
        {"OUTDIR", "outdir"},
        {"FILE", "file"},
        {"WAV", "input.wav"},
        {"N", "4"},
        {"I", "1"},
        {"C", "8"},
        {"K", "2"},
        {"L", "20"},
        {"P", "0.5"},
        {"R", "20"},
        {"S", "16"},
        {"F", "server_error"},
        {"MODE", "server_error"},
        {"SLO", "ttfa-p95=1.5s"},
        {"VAR", "PACER_DOC_API_KEY"},
    };
    std::string w = word;
    if (w == "T")
        return future_unix_seconds();
    // `a|b`: the first alternative; `WORD...`: one of them.
    if (const auto bar = w.find('|'); bar != std::string::npos)
        w = w.substr(0, bar);
    if (w.size() > 3 && w.compare(w.size() - 3, 3, "...") == 0)
        w.resize(w.size() - 3);
    // Shell variables.
    static const std::regex var(R"(\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?)");
    static const std::map<std::string, std::string> launcher_size = {
        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
        {"PMI_RANK", "PMI_SIZE"},
        {"SLURM_PROCID", "SLURM_NTASKS"}};
    for (std::sregex_iterator it(w.begin(), w.end(), var), end; it != end; ++it) {
        env[(*it)[1]] = "0";
        if (const auto size = launcher_size.find((*it)[1]); size != launcher_size.end())
            env[size->second] = "3"; // a launcher sets its rank and its size together
    }
    w = std::regex_replace(w, var, "0");
    // Capitalised words between non-alphanumerics.
    std::string out;
    std::size_t i = 0;
    while (i < w.size()) {
        if (!std::isalnum(static_cast<unsigned char>(w[i]))) {
            out += w[i++];
            continue;
        }
        std::size_t j = i;
        while (j < w.size() && (std::isalnum(static_cast<unsigned char>(w[j])) || w[j] == '_'))
            ++j;
        const std::string token = w.substr(i, j - i);
        const bool capitals =
            std::all_of(
                token.begin(), token.end(),
                [](char c) { return std::isupper(static_cast<unsigned char>(c)) || c == '_'; }) &&
            std::isupper(static_cast<unsigned char>(token.front()));
        if (capitals && table.count(token))
            out += table.at(token);
        else {
            if (capitals && token.size() > 0 && w.find("://") == std::string::npos)
                unknown.insert(token);
            out += token;
        }
        i = j;
    }
    return out;
}

// A 1 s 16 kHz mono PCM16 WAV of silence.
void write_wav(const fs::path& p) {
    fs::create_directories(p.parent_path().empty() ? fs::path(".") : p.parent_path());
    const std::uint32_t data = 32000;
    std::ofstream f(p, std::ios::binary);
    auto u32 = [&](std::uint32_t v) { f.write(reinterpret_cast<const char*>(&v), 4); };
    auto u16 = [&](std::uint16_t v) { f.write(reinterpret_cast<const char*>(&v), 2); };
    f.write("RIFF", 4);
    u32(36 + data);
    f.write("WAVEfmt ", 8);
    u32(16);
    u16(1);
    u16(1);
    u32(16000);
    u32(32000);
    u16(2);
    u16(16);
    f.write("data", 4);
    u32(data);
    const std::string zeros(data, '\0');
    f.write(zeros.data(), data);
}

class DocCommands : public ::testing::Test {
protected:
    // The inputs every file shares, made on first use: one real run (built-in mock, 3 worker
    // processes of one session, 0.4 s) whose workers' folders stand for every run folder
    // `pacer merge`, `report` and `export` read, one schedule.json for --schedule and a
    // self-signed certificate. A file whose commands need none of them never pays for the run.
    static const fs::path& fixtures() {
        if (!fixtures_) {
            fixtures_ = new scratch_dir;
            // Three worker processes: three distinct runs that streamed together, as the parts
            // of one `pacer merge` must be (it refuses the same run twice).
            const auto r = run_cli({"run", "-c", "1", "--processes", "3", "-d", "0.4s", "-o",
                                    (fixtures_->path() / "part").string()});
            EXPECT_TRUE(fs::exists(fixtures_->path() / "part" / "worker-2" / "summary.json"))
                << "the fixture run for `pacer merge` failed:\n"
                << r.out + r.err;
            const auto s =
                run_cli({"schedule", "--rate", "10", "--count", "5", "--format", "json"});
            std::ofstream(fixtures_->path() / "schedule.json") << s.out;
            make_self_signed(fixtures_->path() / "cert.pem", fixtures_->path() / "key.pem");
        }
        return fixtures_->path();
    }
    static void TearDownTestSuite() {
        delete fixtures_;
        fixtures_ = nullptr;
    }

    // Makes the inputs `args` names inside `cwd`.
    static void make_inputs(const std::vector<std::string>& args, const fs::path& cwd) {
        if (args.size() < 2)
            return;
        const std::string& command = args[1];
        auto at = [&](const std::string& p) {
            return fs::path(p).is_absolute() ? fs::path(p) : cwd / p;
        };
        static const std::set<std::string> merge_values{"-o", "--output", "--max-clock-error-ms",
                                                        "--format"};
        static const std::set<std::string> replay_values{"--profile", "--startup-reserve-ms",
                                                         "--output"};
        std::size_t parts = 0; // the folders given so far (merge takes a different part each)
        for (std::size_t i = 2; i < args.size(); ++i) {
            const std::string& a = args[i];
            if ((a == "--audio") && (command == "run" || command == "serve")) {
                for (std::size_t j = i + 1; j < args.size() && args[j].rfind("-", 0) != 0; ++j)
                    if (!fs::exists(at(args[j])))
                        write_wav(at(args[j]));
                continue;
            }
            if (command == "record" && (a == "--dataset" || a == "--resume") &&
                i + 1 < args.size() && !fs::exists(at(args[i + 1]))) {
                // A one-sample dataset; for --resume, a recording of it with nothing recorded.
                const fs::path dataset = a == "--dataset" ? at(args[i + 1]) : cwd / "dataset";
                write_wav(dataset / "a.wav");
                std::ofstream(dataset / "manifest.jsonl")
                    << R"({"id":"a","variants":{"clean":"a.wav"}})"
                    << "\n";
                if (a == "--resume") {
                    fs::create_directories(at(args[i + 1]));
                    std::ofstream(at(args[i + 1]) / "run.json")
                        << R"({"config":{"url":"","dataset":")" << dataset.string()
                        << R"(","concurrency":1,"per_subset":0,"profile":"nemotron",)"
                        << R"("timeout_s":60,"stagger_ms":0,"startup_reserve_ms":80,)"
                        << R"("threads":1,"workers":1},"samples":[]})"
                        << "\n";
                }
                continue;
            }
            if ((a == "--ca-file" || a == "--tls-cert" || a == "--tls-key") &&
                i + 1 < args.size() && !fs::exists(at(args[i + 1]))) {
                fs::create_directories(at(args[i + 1]).parent_path());
                fs::copy_file(fixtures() / (a == "--tls-key" ? "key.pem" : "cert.pem"),
                              at(args[i + 1]));
                ++i;
                continue;
            }
            if (a == "--scenario" && i + 1 < args.size() && args[i + 1].ends_with(".json") &&
                !fs::exists(at(args[i + 1]))) {
                // A two-turn conversation of the run's input (docs/scenarios.md).
                std::ofstream(at(args[i + 1]))
                    << R"({"turns":[{"audio":"input","pause":"0.3s"},{"audio":"input"}]})";
                continue;
            }
            if (a == "--schedule" && i + 1 < args.size() && !fs::exists(at(args[i + 1]))) {
                fs::create_directories(at(args[i + 1]).parent_path());
                fs::copy_file(fixtures() / "schedule.json", at(args[i + 1]));
                continue;
            }
            const bool positional =
                a.rfind("-", 0) != 0 &&
                !((command == "merge" || command == "report" || command == "export") &&
                  merge_values.count(args[i - 1])) &&
                !(command == "replay" && replay_values.count(args[i - 1]));
            if (!positional || fs::exists(at(a)))
                continue;
            if (command == "replay") {
                const fs::path dir = at(a);
                const fs::path session =
                    dir.filename().string().rfind("session-", 0) == 0 ? dir : dir / "session-000";
                fs::create_directories(session);
                std::ofstream(session / "trace.jsonl");
                std::ofstream(session / "input-send-receipts.json");
            } else if (command == "merge" || command == "report" || command == "export") {
                fs::create_directories(at(a).parent_path());
                fs::copy(fixtures() / "part" / ("worker-" + std::to_string(parts++ % 3)), at(a),
                         fs::copy_options::recursive);
            }
        }
    }

    static scratch_dir* fixtures_;
};

scratch_dir* DocCommands::fixtures_ = nullptr;

TEST_F(DocCommands, TheScannerFindsTheHeadlineCommand) {
    const auto commands = documented_commands();
    const bool headline = std::any_of(commands.begin(), commands.end(), [](const doc_command& c) {
        return c.where.rfind("README.md:", 0) == 0 && c.text.find("pacer run --url") == 0 &&
               c.text.find("--duration 90s") != std::string::npos;
    });
    EXPECT_TRUE(headline) << "README.md's `pacer run ... --duration 90s` was not found";
    EXPECT_GE(commands.size(), 20u);
    EXPECT_EQ(shell_words("pacer run -d 2s   # comment"),
              (std::vector<std::string>{"pacer", "run", "-d", "2s"}));
    EXPECT_EQ(shell_words("pacer mock --port 8097 &"),
              (std::vector<std::string>{"pacer", "mock", "--port", "8097"}));
    EXPECT_EQ(synopsis_variants("pacer x [--a A] --b"),
              (std::vector<std::string>{"pacer x --a A --b", "pacer x  --b"}));
}

// One test per Markdown file, so each stays well inside its time limit under the sanitizers
// (a pacer process starts in ~0.4 s under ASan, and the docs print over 160 commands).
class DocCommandsOf : public DocCommands, public ::testing::WithParamInterface<std::string> {};

TEST_P(DocCommandsOf, EveryCommandPassesItsDryRun) {
    const auto commands = scan_markdown(repo_root() / GetParam(), GetParam());
    ASSERT_FALSE(commands.empty()) << GetParam();
    for (const auto& c : commands) {
        std::string text = c.text;
        for (std::size_t at; (at = text.find("<command>")) != std::string::npos;)
            text.replace(at, 9, "run"); // before the shell words: `<` and `>` would cut them
        for (const auto& variant : synopsis_variants(text)) {
            std::set<std::string> unknown;
            std::map<std::string, std::string> env;
            std::vector<std::string> args;
            for (const auto& w : shell_words(variant))
                args.push_back(substitute(w, unknown, env));
            ASSERT_FALSE(args.empty());
            for (std::size_t i = 0; i + 1 < args.size(); ++i)
                if (args[i] == "--start-at")
                    args[i + 1] = future_unix_seconds();
                else if (args[i] == "--metrics-listen")
                    args[i + 1] = args[i + 1].substr(0, args[i + 1].rfind(':')) + ":0";
            const bool fake_nvml =
                std::find(args.begin(), args.end(), "--gpu-telemetry") != args.end() &&
                std::find(args.begin(), args.end(), "--nvml-library") == args.end();
            if (fake_nvml)
                args.insert(args.end(), {"--nvml-library", fake_nvml_library().string()});
            if (!unknown.empty()) {
                std::string names;
                for (const auto& u : unknown)
                    names += " " + u;
                ADD_FAILURE() << c.where << ": `" << c.text << "` uses unknown placeholder(s)"
                              << names
                              << ": use one of those listed at the top of "
                                 "tests/integration/test_doc_commands.cpp (or add it there)";
                continue;
            }
            scratch_dir cwd;
            make_inputs(args, cwd.path());
            std::vector<std::string> argv(args.begin() + 1, args.end());
            const bool help = std::find(argv.begin(), argv.end(), "--help") != argv.end() ||
                              std::find(argv.begin(), argv.end(), "-h") != argv.end();
            if (!help && std::find(argv.begin(), argv.end(), "--dry-run") == argv.end())
                argv.push_back("--dry-run");
            auto o = in_dir(cwd.path());
            o.env = env;
            scratch_dir nvml_script_dir;
            if (fake_nvml) {
                const auto script = nvml_script_dir.path() / "script";
                std::ofstream(script) << "devices 8\n";
                o.env["PACER_FAKE_NVML_SCRIPT"] = script.string();
            }
            for (std::size_t i = 0; i + 1 < args.size(); ++i)
                if (args[i] == "--api-key-env")
                    o.env[args[i + 1]] = "doc-test-key";
            const auto r = run_cli(argv, o);
            std::string ran = "pacer";
            for (const auto& a : argv)
                ran += " " + a;
            if (std::getenv("PACER_DOC_COMMANDS_VERBOSE"))
                std::printf("%s: %s -> exit %d\n", c.where.c_str(), ran.c_str(), r.exit_code);
            EXPECT_EQ(r.exit_code, 0)
                << c.where << ": the documented command\n    " << c.text << "\nran as\n    " << ran
                << "\nand exited " << r.exit_code << ":\n"
                << r.err << (r.err.empty() ? r.out : "");
        }
    }
}

// Every Markdown file the scanner reads (README.md and docs/*.md) that prints a command line.
std::vector<std::string> documented_files() {
    std::vector<std::string> names;
    for (const auto& f : markdown_files()) {
        const auto name = fs::relative(f, repo_root()).string();
        if (!scan_markdown(f, name).empty())
            names.push_back(name);
    }
    return names;
}

INSTANTIATE_TEST_SUITE_P(Docs, DocCommandsOf, ::testing::ValuesIn(documented_files()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                             std::string name = info.param;
                             for (auto& ch : name)
                                 if (!std::isalnum(static_cast<unsigned char>(ch)))
                                     ch = '_';
                             return name;
                         });

} // namespace
} // namespace pacer::test
