# The compression libraries behind src/compress (Debian: zlib1g-dev libzstd-dev liblzma-dev
# libbz2-dev liblz4-dev libdeflate-dev, and libxxhash-dev for the frames' proofs, which
# scripts/setup.sh installs). With GUTF8_STATIC their static archives are linked, so that a binary
# runs on a host that has none of them installed;
# GUTF8_STATIC_COMPRESSION=OFF keeps them shared where a shared module cannot take Debian's non-PIC
# archives (scripts/gpu/stage_python.sh's wheel).
option(GUTF8_STATIC_COMPRESSION "Link the compression libraries statically" ${GUTF8_STATIC})
set(GUTF8_COMPRESSION_LIBRARIES)
set(GUTF8_COMPRESSION_INCLUDE_DIRS)
foreach(spec "z;zlib.h;zlib1g-dev" "zstd;zstd.h;libzstd-dev" "lzma;lzma.h;liblzma-dev" "bz2;bzlib.h;libbz2-dev"
             "lz4;lz4frame.h;liblz4-dev" "deflate;libdeflate.h;libdeflate-dev" "xxhash;xxhash.h;libxxhash-dev")
  list(GET spec 0 lib)
  list(GET spec 1 header)
  list(GET spec 2 package)
  if(GUTF8_STATIC_COMPRESSION)
    set(kind STATIC)
    set(names lib${lib}.a)
  else()
    set(kind SHARED)
    set(names ${lib})
  endif()
  find_path(GUTF8_${lib}_INCLUDE_DIR ${header})
  find_library(GUTF8_${lib}_${kind}_LIBRARY NAMES ${names})
  if(NOT GUTF8_${lib}_INCLUDE_DIR OR NOT GUTF8_${lib}_${kind}_LIBRARY)
    message(FATAL_ERROR "gutf8: lib${lib} (${header}) not found; install ${package} (scripts/setup.sh does)")
  endif()
  list(APPEND GUTF8_COMPRESSION_LIBRARIES ${GUTF8_${lib}_${kind}_LIBRARY})
  list(APPEND GUTF8_COMPRESSION_INCLUDE_DIRS ${GUTF8_${lib}_INCLUDE_DIR})
endforeach()
list(REMOVE_DUPLICATES GUTF8_COMPRESSION_INCLUDE_DIRS)
