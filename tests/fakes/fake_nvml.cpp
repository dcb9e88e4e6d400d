// A fake of NVIDIA's management library for the telemetry tests: the few C entry points pacer
// reads, with NVML's ABI, answering from a script named by PACER_FAKE_NVML_SCRIPT. Built as a
// shared library and loaded with `--nvml-library` (no GPU needed).
//
// The script, one directive a line ('#' starts a comment):
//   devices N                       how many GPUs (default 1)
//   init fail                       nvmlInit_v2 fails
//   FIELD INDEX MODE VALUES...      what a read of FIELD on GPU INDEX returns
// FIELD: energy_mj power_mw util_gpu util_mem mem_used mem_total sm_clock temperature
// MODE:  const V | seq V1 V2 ... (one value per call, the last repeats)
//        | linear A B (A + B × seconds since nvmlInit_v2, on CLOCK_MONOTONIC, rounded down)
//        | unsupported (NVML_ERROR_NOT_SUPPORTED; also what a field not in the script gives)

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

constexpr int nvml_success = 0;
constexpr int nvml_error_invalid_argument = 2;
constexpr int nvml_error_not_supported = 3;
constexpr int nvml_error_unknown = 999;

struct field {
    std::string mode = "unsupported";
    std::vector<long double> values;
    std::size_t calls = 0;
};

struct fake {
    std::mutex m;
    unsigned devices = 1;
    bool init_fails = false;
    double init_s = 0;
    std::map<std::pair<std::string, unsigned>, field> fields;
};

fake& state() {
    static fake f;
    return f;
}

double monotonic_s() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

bool load_script() {
    const char* path = std::getenv("PACER_FAKE_NVML_SCRIPT");
    if (!path)
        return false;
    std::ifstream in(path);
    if (!in)
        return false;
    auto& f = state();
    f.fields.clear();
    f.devices = 1;
    f.init_fails = false;
    for (std::string line; std::getline(in, line);) {
        if (const auto hash = line.find('#'); hash != std::string::npos)
            line.erase(hash);
        std::istringstream words(line);
        std::string first;
        if (!(words >> first))
            continue;
        if (first == "devices") {
            words >> f.devices;
        } else if (first == "init") {
            std::string what;
            words >> what;
            f.init_fails = what == "fail";
        } else {
            unsigned index = 0;
            field fd;
            words >> index >> fd.mode;
            for (long double v; words >> v;)
                fd.values.push_back(v);
            f.fields[{first, index}] = fd;
        }
    }
    return true;
}

// The value of `name` on GPU `index` for this call, or an NVML error.
int value_of(const char* name, void* device, unsigned long long& out) {
    auto& f = state();
    std::lock_guard lock(f.m);
    const auto index = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(device) - 1);
    if (index >= f.devices)
        return nvml_error_invalid_argument;
    const auto it = f.fields.find({name, index});
    if (it == f.fields.end() || it->second.mode == "unsupported" || it->second.values.empty())
        return nvml_error_not_supported;
    auto& fd = it->second;
    long double v = 0;
    if (fd.mode == "const") {
        v = fd.values[0];
    } else if (fd.mode == "seq") {
        v = fd.values[std::min(fd.calls, fd.values.size() - 1)];
    } else if (fd.mode == "linear" && fd.values.size() >= 2) {
        v = fd.values[0] + fd.values[1] * static_cast<long double>(monotonic_s() - f.init_s);
    } else {
        return nvml_error_not_supported;
    }
    ++fd.calls;
    out = static_cast<unsigned long long>(std::floor(v));
    return nvml_success;
}

template <class T>
int read_into(const char* name, void* device, T* out) {
    if (!out)
        return nvml_error_invalid_argument;
    unsigned long long v = 0;
    const int r = value_of(name, device, v);
    if (r == nvml_success)
        *out = static_cast<T>(v);
    return r;
}

} // namespace

extern "C" {

struct fake_utilization {
    unsigned gpu;
    unsigned memory;
};
struct fake_memory {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};

int nvmlInit_v2() {
    if (!load_script())
        return nvml_error_unknown;
    auto& f = state();
    f.init_s = monotonic_s();
    return f.init_fails ? nvml_error_unknown : nvml_success;
}

int nvmlShutdown() {
    return nvml_success;
}

const char* nvmlErrorString(int r) {
    switch (r) {
    case nvml_success:
        return "Success";
    case nvml_error_invalid_argument:
        return "Invalid Argument";
    case nvml_error_not_supported:
        return "Not Supported";
    default:
        return "Unknown Error";
    }
}

int nvmlDeviceGetCount_v2(unsigned* count) {
    if (!count)
        return nvml_error_invalid_argument;
    *count = state().devices;
    return nvml_success;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** device) {
    if (!device || index >= state().devices)
        return nvml_error_invalid_argument;
    *device = reinterpret_cast<void*>(static_cast<std::uintptr_t>(index) + 1);
    return nvml_success;
}

int nvmlDeviceGetName(void* device, char* name, unsigned length) {
    const auto index = reinterpret_cast<std::uintptr_t>(device) - 1;
    const std::string n = "Fake GPU " + std::to_string(index);
    if (!name || length <= n.size())
        return nvml_error_invalid_argument;
    n.copy(name, n.size());
    name[n.size()] = '\0';
    return nvml_success;
}

int nvmlDeviceGetTotalEnergyConsumption(void* device, unsigned long long* mj) {
    return read_into("energy_mj", device, mj);
}

int nvmlDeviceGetPowerUsage(void* device, unsigned* mw) {
    return read_into("power_mw", device, mw);
}

int nvmlDeviceGetUtilizationRates(void* device, fake_utilization* u) {
    if (!u)
        return nvml_error_invalid_argument;
    const int r = read_into("util_gpu", device, &u->gpu);
    if (r != nvml_success)
        return r;
    if (read_into("util_mem", device, &u->memory) != nvml_success)
        u->memory = 0;
    return nvml_success;
}

int nvmlDeviceGetMemoryInfo(void* device, fake_memory* m) {
    if (!m)
        return nvml_error_invalid_argument;
    const int r = read_into("mem_used", device, &m->used);
    if (r != nvml_success)
        return r;
    if (read_into("mem_total", device, &m->total) != nvml_success)
        m->total = 0;
    m->free = m->total > m->used ? m->total - m->used : 0;
    return nvml_success;
}

int nvmlDeviceGetClockInfo(void* device, int type, unsigned* mhz) {
    if (type != 1) // NVML_CLOCK_SM
        return nvml_error_not_supported;
    return read_into("sm_clock", device, mhz);
}

int nvmlDeviceGetTemperature(void* device, int sensor, unsigned* c) {
    if (sensor != 0) // NVML_TEMPERATURE_GPU
        return nvml_error_not_supported;
    return read_into("temperature", device, c);
}

} // extern "C"
