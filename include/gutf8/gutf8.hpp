// gutf8: validate, decode, repair and encode UTF-8 on the CPU or an NVIDIA GPU.
// Include this for the whole host API.
#pragma once

#include "gutf8/codec.hpp"
#include "gutf8/columns.hpp"
#include "gutf8/engine.hpp"
#include "gutf8/error.hpp"
#include "gutf8/errors.hpp"
#include "gutf8/stream.hpp"
#include "gutf8/types.hpp"
#include "gutf8/version.hpp"
