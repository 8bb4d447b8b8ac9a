// Device scans of integer types with +, every algorithm, inclusive and exclusive.
#include "scan_test_common.cuh"

using namespace gutf8::test;

TEST(PrimScan, Int32Sum) {
  GUTF8_REQUIRE_GPU();
  check_scan_all<std::int32_t>(gutf8::prim::plus{}, 7, 1);
}
TEST(PrimScan, Uint32Sum) {
  GUTF8_REQUIRE_GPU();
  check_scan_all<std::uint32_t>(gutf8::prim::plus{}, 5u, 2);
}
TEST(PrimScan, Int64Sum) {
  GUTF8_REQUIRE_GPU();
  check_scan_all<std::int64_t>(gutf8::prim::plus{}, -3, 3);
}
TEST(PrimScan, Uint64Sum) {
  GUTF8_REQUIRE_GPU();
  check_scan_all<std::uint64_t>(gutf8::prim::plus{}, 11u, 4);
}
