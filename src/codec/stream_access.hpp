// In-tree access to a gutf8::stream's bookkeeping, for the CLI's file pipeline, which processes
// a regular file in pieces on its own threads and accounts them in the stream it reports from.
#pragma once

#include "codec/session.hpp"
#include "gutf8/stream.hpp"

namespace gutf8::internal {

struct stream_access {
  static session& session_of(stream& s);
};

}  // namespace gutf8::internal
