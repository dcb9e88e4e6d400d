#include <pacer/runtime/exit_status.hpp>

namespace pacer::runtime {

int exit_status(const run_verdict& v) {
    if (v.interrupted)
        return exit_interrupted;
    if (v.client_fell_behind && !v.unreachable)
        return exit_unqualified;
    if (v.client_failed)
        return exit_failed;
    if (v.server_failed || v.unreachable)
        return exit_server_failed;
    return exit_ok;
}

} // namespace pacer::runtime
