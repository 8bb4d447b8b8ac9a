# Helpers shared by every target: warnings and the static-runtime link.
function(gutf8_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall --expt-relaxed-constexpr -lineinfo>)
endfunction()

configure_file(${PROJECT_SOURCE_DIR}/include/gutf8/version.hpp.in
               ${PROJECT_BINARY_DIR}/include/gutf8/version.hpp)

# gutf8_sources(VAR FOLDER FILE...): VAR = the FILEs of FOLDER (relative to this CMakeLists.txt).
# Every .cpp and .cu file of FOLDER must be named, so that a file added without listing it stops
# the configure instead of silently not being built.
function(gutf8_sources var folder)
  file(GLOB present RELATIVE ${CMAKE_CURRENT_SOURCE_DIR}/${folder}
       ${CMAKE_CURRENT_SOURCE_DIR}/${folder}/*.cpp ${CMAKE_CURRENT_SOURCE_DIR}/${folder}/*.cu)
  list(REMOVE_ITEM present ${ARGN})
  if(present)
    message(FATAL_ERROR "${folder}: ${present} not in its source list in ${CMAKE_CURRENT_LIST_FILE}")
  endif()
  list(TRANSFORM ARGN PREPEND ${folder}/ OUTPUT_VARIABLE files)
  set(${var} ${files} PARENT_SCOPE)
endfunction()
