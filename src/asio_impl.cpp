// The one translation unit that compiles Asio (with its SSL) and Beast (separate compilation).
// Everything else includes narrow headers and links this object.
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
