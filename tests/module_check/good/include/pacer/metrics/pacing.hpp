#pragma once
// Fixture: metrics reads only what it may know.
#include <pacer/core/clock.hpp>
#include <pacer/trace/receipts.hpp>
// #include <pacer/session/duplex_session.hpp> (a comment is not an include)
