#pragma once
// What the runner does with the exceptions its coroutines threw (a session's, a context's loop
// monitor's): none is dropped. Defined in src/session/runner.cpp.

#include <exception>
#include <vector>

namespace pacer::session {

/// Nothing for none; the exception itself for one (its type kept, so a caller's handlers still
/// tell it apart); for several, one std::runtime_error whose text names them all in order:
/// "N failures: [what 1] [what 2] ...".
void rethrow_all(const std::vector<std::exception_ptr>& thrown);

} // namespace pacer::session
