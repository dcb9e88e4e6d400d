#pragma once
// Where the test doubles tests/CMakeLists.txt builds are: beside the test binaries, in the
// build's tests/ folder (the pacer binary's folder + tests/).

#include <filesystem>

namespace pacer::test {

/// The fake NVML shared library (tests/fakes/fake_nvml.cpp).
inline std::filesystem::path fake_nvml_library() {
    return std::filesystem::path(PACER_BINARY).parent_path() / "tests" / "libpacer_fake_nvml.so";
}

/// The Prometheus endpoint serving a file (tests/fakes/metrics_fixture.cpp).
inline std::filesystem::path metrics_fixture_program() {
    return std::filesystem::path(PACER_BINARY).parent_path() / "tests" / "pacer_metrics_fixture";
}

} // namespace pacer::test
