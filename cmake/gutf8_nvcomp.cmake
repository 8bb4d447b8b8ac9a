# nvCOMP (PyPI nvidia-libnvcomp-cu13: headers, libnvcomp.so and a CMake package), optional: GPU
# decompression of zstd frames (src/cuda/nvcomp/) in the engine's GPU lanes (codec/gpu_decompress.hpp).
# AUTO: on when found and the CUDA backend is built; OFF, or not found under AUTO: nothing of it is
# built and nothing else changes.
# GUTF8_NVCOMP_ROOT (cache or environment): the wheel's nvidia/libnvcomp folder; without it, the
# standard CMake search.
set(GUTF8_NVCOMP AUTO CACHE STRING "GPU decompression with nvCOMP: AUTO (if found with CUDA), ON or OFF")
set_property(CACHE GUTF8_NVCOMP PROPERTY STRINGS AUTO ON OFF)
set(GUTF8_NVCOMP_ROOT "$ENV{GUTF8_NVCOMP_ROOT}" CACHE PATH "nvCOMP's prefix (the pip wheel's nvidia/libnvcomp)")
set(GUTF8_HAVE_NVCOMP OFF)
if(NOT GUTF8_NVCOMP STREQUAL "OFF")
  if(NOT GUTF8_HAVE_CUDA)
    if(GUTF8_NVCOMP STREQUAL "ON")
      message(FATAL_ERROR "GUTF8_NVCOMP=ON needs the CUDA backend (GUTF8_CUDA)")
    endif()
  else()
    find_package(nvcomp 6 CONFIG QUIET HINTS ${GUTF8_NVCOMP_ROOT}
                 PATH_SUFFIXES lib64/cmake/nvcomp lib/cmake/nvcomp)
    if(TARGET nvcomp::nvcomp)
      set(GUTF8_HAVE_NVCOMP ON)
    elseif(GUTF8_NVCOMP STREQUAL "ON")
      message(FATAL_ERROR "GUTF8_NVCOMP=ON but nvCOMP 6 was not found: pip install nvidia-libnvcomp-cu13 "
                          "and set GUTF8_NVCOMP_ROOT to its nvidia/libnvcomp folder")
    endif()
  endif()
endif()
if(GUTF8_HAVE_NVCOMP)
  # The shared library travels beside the binaries that use it: <build>/lib here, <bundle>/lib on the
  # GPU host (scripts/gpu/stage.sh), found there through an $ORIGIN/../lib rpath.
  get_target_property(gutf8_nvcomp_library nvcomp::nvcomp IMPORTED_LOCATION_RELEASE)
  file(COPY ${gutf8_nvcomp_library} DESTINATION ${PROJECT_BINARY_DIR}/lib)
  # Everything that links gutf8 needs it now (the engine's GPU lanes): the CLI in <build>/, tests and
  # benchmarks one folder down.
  list(APPEND CMAKE_BUILD_RPATH "$ORIGIN/lib" "$ORIGIN/../lib")
  message(STATUS "gutf8: nvCOMP ${nvcomp_VERSION} (${gutf8_nvcomp_library})")
else()
  message(STATUS "gutf8: nvCOMP OFF")
endif()
