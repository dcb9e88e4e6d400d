#include <pacer/record/postprocess.hpp>
#include <pacer/record/run_state.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <unistd.h>

namespace pacer::record {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

json::object zero_counts() {
    json::object o;
    for (auto s : statuses)
        o[s] = 0;
    return o;
}

void bump(json::object& counts, const std::string& status) {
    auto& v = counts[status];
    v = (v.is_number() ? v.to_number<std::uint64_t>() : 0) + 1;
}

} // namespace

json::object run_json(const json::object& config, const std::vector<variant_record>& variants,
                      std::string_view status, const json::object& load) {
    json::array samples;
    std::map<std::string, std::size_t> index; // sample -> position in `samples`
    json::object counts = zero_counts();
    json::object per_subset;
    std::map<std::string, bool> all_pass;
    for (const auto& v : variants) {
        auto [it, added] = index.emplace(v.sample, samples.size());
        if (added)
            samples.push_back(json::object{{"id", v.sample},
                                           {"subset", v.subset},
                                           {"text", v.text},
                                           {"variants", json::object{}}});
        json::object entry = v.detail;
        entry["directory"] = v.directory;
        entry["source"] = v.source;
        entry["status"] = v.status;
        entry["qualified"] = v.status == "pass";
        samples[it->second].as_object()["variants"].as_object()[v.variant] = std::move(entry);
        bump(counts, v.status);
        auto& sub = per_subset[v.subset];
        if (!sub.is_object())
            sub = zero_counts();
        bump(sub.as_object(), v.status);
        auto [p, first] = all_pass.emplace(v.sample, true);
        p->second = p->second && v.status == "pass";
    }
    std::size_t pairs = 0;
    for (const auto& [_, ok] : all_pass)
        pairs += ok;
    json::object summary{{"samples_selected", index.size()},
                         {"variants_selected", variants.size()},
                         {"variants", std::move(counts)},
                         {"pairs_qualified", pairs},
                         {"per_subset", std::move(per_subset)}};
    return json::object{{"schema_version", 1},
                        {"kind", "pacer-record"},
                        {"status", status},
                        {"config", config},
                        {"summary", std::move(summary)},
                        {"load", load},
                        {"samples", std::move(samples)}};
}

resume_state parse_run_json(std::string_view text) {
    std::error_code ec;
    const auto v = json::parse(text, ec);
    if (ec || !v.is_object())
        throw std::invalid_argument("run.json is not a JSON object");
    const auto& o = v.get_object();
    const auto* config = o.if_contains("config");
    const auto* samples = o.if_contains("samples");
    if (!config || !config->is_object() || !samples || !samples->is_array())
        throw std::invalid_argument("run.json has no config or samples: not a pacer record run");
    resume_state r;
    r.config = config->get_object();
    if (const auto* load = o.if_contains("load"); load && load->is_object())
        r.load = load->get_object();
    for (const auto& s : samples->get_array()) {
        const auto* so = s.if_object();
        const auto* id = so ? so->if_contains("id") : nullptr;
        const auto* vars = so ? so->if_contains("variants") : nullptr;
        if (!id || !id->is_string() || !vars || !vars->is_object())
            throw std::invalid_argument("run.json: a sample without id or variants");
        for (const auto& [name, entry] : vars->get_object()) {
            const auto* eo = entry.if_object();
            const auto* st = eo ? eo->if_contains("status") : nullptr;
            if (!st || !st->is_string())
                throw std::invalid_argument(
                    fmt::format("run.json: variant {}/{} has no status", id->get_string(), name));
            if (st->get_string() == "pending")
                continue;
            variant_record rec;
            rec.sample = id->get_string();
            rec.variant = name;
            rec.status = st->get_string();
            rec.detail = *eo;
            for (const char* k : {"directory", "source", "status", "qualified"})
                rec.detail.erase(k);
            r.finished[rec.sample + "/" + rec.variant] = std::move(rec);
        }
    }
    return r;
}

void write_atomically(const fs::path& path, std::string_view text) {
    const fs::path tmp = path.string() + ".tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        throw std::runtime_error(
            fmt::format("cannot write {}: {}", tmp.string(), std::strerror(errno)));
    std::string_view rest = text;
    while (!rest.empty()) {
        const ssize_t n = ::write(fd, rest.data(), rest.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            const int e = errno;
            ::close(fd);
            throw std::runtime_error(
                fmt::format("cannot write {}: {}", tmp.string(), std::strerror(e)));
        }
        rest.remove_prefix(static_cast<std::size_t>(n));
    }
    ::fsync(fd);
    ::close(fd);
    if (::rename(tmp.c_str(), path.c_str()) != 0)
        throw std::runtime_error(
            fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
}

checkpointer::checkpointer(fs::path path) : path_(std::move(path)), thread_([this] { loop(); }) {}

checkpointer::~checkpointer() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
}

void checkpointer::post(json::object snapshot) {
    {
        std::lock_guard lock(mutex_);
        pending_ = std::move(snapshot);
        ++posts_;
    }
    cv_.notify_all();
}

void checkpointer::flush() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return !pending_ && !busy_; });
    if (!error_.empty())
        throw std::runtime_error(error_);
}

std::size_t checkpointer::writes() const {
    std::lock_guard lock(mutex_);
    return writes_;
}

std::size_t checkpointer::posts() const {
    std::lock_guard lock(mutex_);
    return posts_;
}

void checkpointer::loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
        cv_.wait(lock, [&] { return stop_ || pending_; });
        if (!pending_)
            return; // stopping, nothing left
        json::object snapshot = std::move(*pending_);
        pending_.reset();
        busy_ = true;
        lock.unlock();
        std::string error;
        try {
            write_atomically(path_, json::serialize(snapshot) + "\n");
        } catch (const std::exception& e) {
            error = e.what();
        }
        lock.lock();
        busy_ = false;
        ++writes_;
        if (!error.empty())
            error_ = error;
        cv_.notify_all();
    }
}

} // namespace pacer::record
