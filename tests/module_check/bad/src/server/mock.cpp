// Fixture: a quoted include of a module the server may not know.
#include "pacer/metrics/pacing.hpp"
