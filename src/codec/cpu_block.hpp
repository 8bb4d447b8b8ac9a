// The CPU backend moved to src/cpu; this name stays until src/file includes cpu/cpu_block.hpp.
#pragma once

#include "cpu/cpu_block.hpp"
