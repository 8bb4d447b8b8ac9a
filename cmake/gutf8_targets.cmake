# Helpers shared by every target: warnings and the static-runtime link.
function(gutf8_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall --expt-relaxed-constexpr -lineinfo>)
endfunction()

configure_file(${PROJECT_SOURCE_DIR}/include/gutf8/version.hpp.in
               ${PROJECT_BINARY_DIR}/include/gutf8/version.hpp)
