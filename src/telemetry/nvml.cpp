// NVML through dlopen: the handful of entry points pacer reads, declared here with NVML's
// own ABI (nvml.h is not needed to build pacer).

#include <pacer/core/clock.hpp>
#include <pacer/telemetry/nvml.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <dlfcn.h>

namespace pacer::telemetry {

namespace {

// nvml.h: nvmlReturn_t is an enum (int); NVML_SUCCESS 0; nvmlDevice_t an opaque pointer.
using nvml_return = int;
using nvml_device = struct nvml_device_st*;
constexpr nvml_return nvml_success = 0;
struct nvml_utilization { // nvmlUtilization_t
    unsigned gpu;
    unsigned memory;
};
struct nvml_memory { // nvmlMemory_t (v1)
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};
constexpr int nvml_clock_sm = 1;        // NVML_CLOCK_SM
constexpr int nvml_temperature_gpu = 0; // NVML_TEMPERATURE_GPU

} // namespace

struct nvml_library::api {
    nvml_return (*init)() = nullptr;
    nvml_return (*shutdown)() = nullptr;
    const char* (*error_string)(nvml_return) = nullptr;
    nvml_return (*device_count)(unsigned*) = nullptr;
    nvml_return (*handle_by_index)(unsigned, nvml_device*) = nullptr;
    nvml_return (*total_energy)(nvml_device, unsigned long long*) = nullptr;
    nvml_return (*power_usage)(nvml_device, unsigned*) = nullptr;
    nvml_return (*utilization)(nvml_device, nvml_utilization*) = nullptr;
    nvml_return (*memory_info)(nvml_device, nvml_memory*) = nullptr;
    nvml_return (*clock_info)(nvml_device, int, unsigned*) = nullptr;
    nvml_return (*temperature)(nvml_device, int, unsigned*) = nullptr;
    nvml_return (*name)(nvml_device, char*, unsigned) = nullptr; // optional

    std::string why(nvml_return r) const {
        const char* s = error_string ? error_string(r) : nullptr;
        return s ? fmt::format("{} (NVML error {})", s, r) : fmt::format("NVML error {}", r);
    }
};

nvml_library::nvml_library(const std::string& path)
    : path_(path.empty() ? default_nvml_library : path), api_(std::make_unique<api>()) {
    handle_ = ::dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
        const char* e = ::dlerror();
        throw telemetry_error(fmt::format(
            "--gpu-telemetry nvml: cannot load {} (NVIDIA's management library, installed with "
            "the driver): {}",
            path_, e ? e : "unknown error"));
    }
    const auto bind = [&](auto& fn, const char* symbol, bool required) {
        void* p = ::dlsym(handle_, symbol);
        if (!p && required) {
            ::dlclose(handle_);
            handle_ = nullptr;
            throw telemetry_error(
                fmt::format("--gpu-telemetry nvml: {} has no {} (not NVML, or too old a driver)",
                            path_, symbol));
        }
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    };
    auto& a = *api_;
    bind(a.init, "nvmlInit_v2", true);
    bind(a.shutdown, "nvmlShutdown", true);
    bind(a.error_string, "nvmlErrorString", true);
    bind(a.device_count, "nvmlDeviceGetCount_v2", true);
    bind(a.handle_by_index, "nvmlDeviceGetHandleByIndex_v2", true);
    bind(a.total_energy, "nvmlDeviceGetTotalEnergyConsumption", true);
    bind(a.power_usage, "nvmlDeviceGetPowerUsage", true);
    bind(a.utilization, "nvmlDeviceGetUtilizationRates", true);
    bind(a.memory_info, "nvmlDeviceGetMemoryInfo", true);
    bind(a.clock_info, "nvmlDeviceGetClockInfo", true);
    bind(a.temperature, "nvmlDeviceGetTemperature", true);
    bind(a.name, "nvmlDeviceGetName", false);
    if (const auto r = a.init(); r != nvml_success) {
        const auto why = a.why(r);
        ::dlclose(handle_);
        handle_ = nullptr;
        throw telemetry_error(
            fmt::format("--gpu-telemetry nvml: nvmlInit failed ({}): {}", path_, why));
    }
}

nvml_library::~nvml_library() {
    if (handle_) {
        api_->shutdown();
        ::dlclose(handle_);
    }
}

unsigned nvml_library::device_count() const {
    unsigned n = 0;
    if (api_->device_count(&n) != nvml_success)
        return 0;
    return n;
}

std::string nvml_library::device_name(unsigned index) const {
    nvml_device d = nullptr;
    if (!api_->name || api_->handle_by_index(index, &d) != nvml_success)
        return {};
    char buf[96] = {}; // NVML_DEVICE_NAME_V2_BUFFER_SIZE
    if (api_->name(d, buf, sizeof buf) != nvml_success)
        return {};
    buf[sizeof buf - 1] = '\0';
    return buf;
}

sample nvml_library::read(unsigned index) const {
    const auto& a = *api_;
    sample s;
    s.source = fmt::format("nvml:{}", index);
    const auto clocks = read_clock_pair();
    s.monotonic_s = clocks.monotonic_s;
    s.realtime_s = clocks.realtime_s;
    nvml_device d = nullptr;
    if (const auto r = a.handle_by_index(index, &d); r != nvml_success) {
        s.error = fmt::format("nvmlDeviceGetHandleByIndex: {}", a.why(r));
        return s;
    }
    // The energy counter first: it is what windows are cut from, so it is read closest to the
    // stamp.
    if (unsigned long long mj = 0; a.total_energy(d, &mj) == nvml_success)
        s.energy_mj = mj;
    if (unsigned mw = 0; a.power_usage(d, &mw) == nvml_success)
        s.power_w = mw / 1e3;
    if (nvml_utilization u{}; a.utilization(d, &u) == nvml_success) {
        s.utilization_pct = u.gpu;
        s.memory_utilization_pct = u.memory;
    }
    if (nvml_memory m{}; a.memory_info(d, &m) == nvml_success) {
        s.memory_used_bytes = static_cast<double>(m.used);
        s.memory_total_bytes = static_cast<double>(m.total);
    }
    if (unsigned mhz = 0; a.clock_info(d, nvml_clock_sm, &mhz) == nvml_success)
        s.sm_clock_mhz = mhz;
    if (unsigned c = 0; a.temperature(d, nvml_temperature_gpu, &c) == nvml_success)
        s.temperature_c = c;
    return s;
}

gpu_selection parse_gpu_telemetry(const std::string& spec) {
    const auto bad = [&](std::string_view why) {
        return telemetry_error(fmt::format("--gpu-telemetry '{}' {}", spec, why));
    };
    gpu_selection g;
    if (spec == "nvml")
        return g;
    if (!spec.starts_with("nvml:"))
        throw bad("is not nvml or nvml:INDEXES (e.g. nvml:0,1)");
    g.all = false;
    std::string_view rest = std::string_view(spec).substr(5);
    while (true) {
        const auto comma = rest.find(',');
        const auto item = rest.substr(0, comma);
        unsigned v = 0;
        const auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
        if (item.empty() || ec != std::errc{} || p != item.data() + item.size())
            throw bad(fmt::format("has '{}', not a GPU index", item));
        if (std::find(g.indexes.begin(), g.indexes.end(), v) != g.indexes.end())
            throw bad(fmt::format("names GPU {} twice", v));
        g.indexes.push_back(v);
        if (comma == std::string_view::npos)
            break;
        rest.remove_prefix(comma + 1);
    }
    return g;
}

nvml_source::nvml_source(std::shared_ptr<const nvml_library> lib, const gpu_selection& gpus)
    : lib_(std::move(lib)) {
    const unsigned n = lib_->device_count();
    if (n == 0)
        throw telemetry_error(
            fmt::format("--gpu-telemetry nvml: NVML ({}) sees no GPU", lib_->path()));
    if (gpus.all) {
        for (unsigned i = 0; i < n; ++i)
            indexes_.push_back(i);
        return;
    }
    for (unsigned i : gpus.indexes)
        if (i >= n)
            throw telemetry_error(fmt::format(
                "--gpu-telemetry nvml: there is no GPU {}: NVML sees {} (0..{})", i, n, n - 1));
    indexes_ = gpus.indexes;
}

void nvml_source::read(std::vector<sample>& out) {
    for (unsigned i : indexes_)
        out.push_back(lib_->read(i));
}

std::string nvml_source::describe() const {
    std::string devices;
    for (unsigned i : indexes_) {
        const auto name = lib_->device_name(i);
        devices += fmt::format("{}GPU {}{}", devices.empty() ? "" : ", ", i,
                               name.empty() ? "" : " (" + name + ")");
    }
    return fmt::format("nvml from {}: {}", lib_->path(), devices);
}

} // namespace pacer::telemetry
