# Sanitizer and fuzzing builds (docs/RELIABILITY.md; scripts/ci_reliability.sh uses both).
#
#   -DGUTF8_SANITIZE=address,undefined
#       every C++ target (library, CLI, tests) built and linked with those sanitizers and
#       -fno-sanitize-recover=all, so that the first report fails the test that caused it.
#   -DGUTF8_FUZZ=ON  (clang only)
#       the library is instrumented for coverage (-fsanitize=fuzzer-no-link) and tests/fuzz
#       adds the libFuzzer targets gutf8_fuzz_utf8, gutf8_fuzz_encode and gutf8_fuzz_stream.
#       Combine with GUTF8_SANITIZE to fuzz under ASan/UBSan.
#
# Both touch host C++ only; CUDA sources keep their flags (use compute-sanitizer for those:
# scripts/gpu/driver.py OUT reliability).
set(GUTF8_SANITIZE "" CACHE STRING "Sanitizers for every C++ target, e.g. address,undefined (empty: none)")
option(GUTF8_FUZZ "Build the libFuzzer targets in tests/fuzz (needs clang)" OFF)

if(GUTF8_SANITIZE)
  add_compile_options(
    "$<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${GUTF8_SANITIZE}>"
    "$<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize-recover=all>"
    "$<$<COMPILE_LANGUAGE:CXX>:-fno-omit-frame-pointer>")
  add_link_options("$<$<LINK_LANGUAGE:CXX>:-fsanitize=${GUTF8_SANITIZE}>")
  message(STATUS "gutf8: sanitizers ${GUTF8_SANITIZE}")
endif()

if(GUTF8_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "GUTF8_FUZZ=ON needs clang (libFuzzer), e.g. -DCMAKE_CXX_COMPILER=clang++")
  endif()
  if(NOT GUTF8_TESTS)
    message(FATAL_ERROR "GUTF8_FUZZ=ON needs GUTF8_TESTS=ON (the targets live in tests/fuzz)")
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>")
  message(STATUS "gutf8: libFuzzer targets on")
endif()
