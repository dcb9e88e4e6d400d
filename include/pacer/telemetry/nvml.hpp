#pragma once
// NVIDIA's management library (NVML), loaded at run time with dlopen: pacer has no build
// dependency on it and runs without it; only `--gpu-telemetry nvml` needs it. The few entry
// points pacer reads: init/shutdown, the device count and handles, the total energy counter
// (mJ), power (mW), utilisation, memory, the SM clock and the temperature.

#include <pacer/telemetry/sample.hpp>

#include <memory>
#include <string>
#include <vector>

namespace pacer::telemetry {

/// What `dlopen` is given when no `--nvml-library` path is: the driver's library.
inline constexpr const char* default_nvml_library = "libnvidia-ml.so.1";

/// The library, loaded and initialised (`nvmlInit_v2`); `nvmlShutdown` and dlclose at the end.
///
/// @par Thread safety
/// NVML's own calls are thread-safe; this object is read-only after construction.
class nvml_library {
public:
    /// Loads `path` (default_nvml_library when empty) and initialises NVML. Throws
    /// telemetry_error with one line: the library cannot be loaded (dlerror's reason), lacks
    /// an entry point, or `nvmlInit_v2` failed (NVML's error string).
    explicit nvml_library(const std::string& path);
    ~nvml_library();
    nvml_library(const nvml_library&) = delete;
    nvml_library& operator=(const nvml_library&) = delete;

    /// The GPUs NVML sees.
    unsigned device_count() const;
    /// The device's name (`nvmlDeviceGetName`), or "" when NVML gives none.
    std::string device_name(unsigned index) const;
    /// One reading of GPU `index`, source `nvml:<index>`, stamped before its first call. A
    /// quantity the GPU does not report (NVML_ERROR_NOT_SUPPORTED and other errors) is absent;
    /// a GPU whose handle cannot be had gives a sample with only `error`.
    sample read(unsigned index) const;
    /// The path given to dlopen.
    const std::string& path() const noexcept { return path_; }

private:
    struct api;
    std::string path_;
    void* handle_ = nullptr;
    std::unique_ptr<api> api_;
};

/// `--gpu-telemetry`: "nvml" (every GPU) or "nvml:0,2" (those). Throws telemetry_error for
/// anything else, or an index list that is empty, not a number or repeated.
struct gpu_selection {
    bool all = true;
    std::vector<unsigned> indexes; ///< when not `all`, in the order given
};
gpu_selection parse_gpu_telemetry(const std::string& spec);

/// Reads the selected GPUs of `lib`, one sample each per read.
class nvml_source : public sample_source {
public:
    /// Throws telemetry_error when an index is not one of the library's devices or it has none.
    nvml_source(std::shared_ptr<const nvml_library> lib, const gpu_selection& gpus);
    void read(std::vector<sample>& out) override;
    std::string describe() const override;
    const std::vector<unsigned>& indexes() const noexcept { return indexes_; }

private:
    std::shared_ptr<const nvml_library> lib_;
    std::vector<unsigned> indexes_;
};

} // namespace pacer::telemetry
