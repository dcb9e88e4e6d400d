// The one translation unit that compiles Asio and Beast (separate compilation).
// Everything else includes narrow headers and links this object.
#include <boost/asio/impl/src.hpp>
#include <boost/beast/src.hpp>
