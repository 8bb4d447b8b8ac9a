// gutf8::parse_device_list: the one reading of a device list, for the CLI and the benchmarks.
#include <charconv>
#include <limits>
#include <string>

#include "gutf8/error.hpp"
#include "gutf8/file.hpp"

namespace gutf8 {
namespace {

int device_number(std::string_view text) {
  int value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || text.front() == '-' || ec != std::errc() || ptr != end)
    throw error(errc::invalid_argument, "'" + std::string(text) + "' is not a GPU number (expected all, or numbers "
                                            "from 0 to " + std::to_string(std::numeric_limits<int>::max()) +
                                            " separated by commas)");
  return value;
}

}  // namespace

device_list parse_device_list(std::string_view text) {
  device_list list;
  if (text == "all") {
    list.all = true;
    return list;
  }
  for (;;) {
    const std::size_t comma = text.find(',');
    list.devices.push_back(device_number(text.substr(0, comma)));
    if (comma == std::string_view::npos) return list;
    text.remove_prefix(comma + 1);
  }
}

}  // namespace gutf8
