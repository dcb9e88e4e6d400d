#include <pacer/core/failure.hpp>

namespace pacer {

namespace {

class failure_kind_category_impl final : public boost::system::error_category {
public:
    const char* name() const noexcept override { return "pacer.failure_kind"; }
    // The names summary.json groups errors under (the reference client's exception types).
    std::string message(int k) const override {
        switch (static_cast<failure_kind>(k)) {
        case failure_kind::os_error:
            return "OSError";
        case failure_kind::invalid_status:
            return "InvalidStatus";
        case failure_kind::connection_closed_ok:
            return "ConnectionClosedOK";
        case failure_kind::connection_closed_error:
            return "ConnectionClosedError";
        case failure_kind::value_error:
            return "ValueError";
        case failure_kind::runtime_error:
            return "RuntimeError";
        case failure_kind::timeout:
            return "Timeout";
        case failure_kind::admission_rejected:
            return "admission rejected";
        case failure_kind::wrong_protocol:
            return "wrong protocol";
        case failure_kind::interrupted:
            return "Interrupted";
        case failure_kind::trace:
            return "trace";
        case failure_kind::incomplete:
            return "incomplete";
        case failure_kind::other:
            break;
        }
        return "other";
    }
};

class reach_failure_category_impl final : public boost::system::error_category {
public:
    const char* name() const noexcept override { return "pacer.reach_failure"; }
    std::string message(int r) const override {
        switch (static_cast<reach_failure>(r)) {
        case reach_failure::cannot_resolve:
            return "cannot resolve the host";
        case reach_failure::cannot_connect:
            return "cannot connect";
        case reach_failure::handshake_failed:
            return "WebSocket handshake failed";
        case reach_failure::upgrade_declined:
            return "the server declined the WebSocket upgrade";
        case reach_failure::no_connection_in_time:
            return "no connection within the session timeout";
        }
        return "unknown reach failure";
    }
};

} // namespace

const boost::system::error_category& failure_kind_category() noexcept {
    static const failure_kind_category_impl instance;
    return instance;
}

const boost::system::error_category& reach_failure_category() noexcept {
    static const reach_failure_category_impl instance;
    return instance;
}

std::string reference_text(const failure& f) {
    if (const auto* c = dynamic_cast<const failure_category*>(&f.code.category()))
        return c->reference_text(f);
    return "OSError: " + f.code.message();
}

failure without_figure(failure f) {
    f.figure.reset();
    return f;
}

failure_kind kind_of(const boost::system::error_code& code) noexcept {
    const auto condition = code.default_error_condition();
    if (condition.category() == failure_kind_category())
        return static_cast<failure_kind>(condition.value());
    return failure_kind::other;
}

} // namespace pacer
