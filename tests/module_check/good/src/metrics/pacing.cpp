#include <pacer/metrics/pacing.hpp>
#include <pacer/schedule/open_loop.hpp>
