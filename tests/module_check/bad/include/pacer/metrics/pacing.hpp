#pragma once
// Fixture: metrics may not know the session (it would pull the transport in).
#include <pacer/core/clock.hpp>
#include <pacer/session/duplex_session.hpp>
