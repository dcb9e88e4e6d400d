// `read_input_wav` reads the file given with --audio through libsndfile (any WAV, mixed down and
// converted to 16 kHz). For any bytes it must either return samples (a whole number of PCM16
// samples, at least one, no more than the file can make) or throw
// pacer::bad_input; anything else (another exception, a crash, a huge allocation) is a bug.

#include <pacer/core/bad_input.hpp>
#include <pacer/runtime/audio_file.hpp>

#include "fail.hpp"
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <sys/mman.h>
#include <typeinfo>
#include <unistd.h>

namespace {

using pacer::fuzz::fail;

// An in-memory file, reopened by path like a real --audio argument (no disk I/O per input).
int memory_file() {
    static const int fd = [] {
        const int fd = memfd_create("fuzz.wav", MFD_CLOEXEC);
        if (fd < 0)
            fail("memfd_create failed");
        return fd;
    }();
    return fd;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const int fd = memory_file();
    if (ftruncate(fd, 0) != 0)
        fail("ftruncate failed");
    for (std::size_t done = 0; done < size;) {
        const ssize_t n = pwrite(fd, data + done, size - done, static_cast<off_t>(done));
        if (n <= 0)
            fail("pwrite failed");
        done += static_cast<std::size_t>(n);
    }
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    try {
        const auto pcm = pacer::runtime::read_input_wav(path);
        if (pcm.empty() || pcm.size() % 2 != 0)
            fail("read_input_wav returned no or half samples");
        // A file holds at most one sample per byte (8-bit, A-law, mu-law), and converting
        // from the lowest accepted rate (1 kHz) to 16 kHz makes 16 of each (plus the
        // converter's rounding).
        if (pcm.size() > 2 * (16 * size + 32))
            fail("read_input_wav returned more samples than the file can make");
    } catch (const pacer::bad_input&) {
        // The documented failure.
    } catch (const std::exception& e) {
        fail(typeid(e).name(), e.what());
    }
    return 0;
}
