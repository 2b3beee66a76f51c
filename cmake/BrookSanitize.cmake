# Sanitizers and libFuzzer instrumentation for every target (docs/fuzzing.md).
#   -DBROOK_SANITIZE=address,undefined   compile and link everything with those sanitizers
#   -DBROOK_FUZZ_LIBFUZZER=ON            with clang: coverage-instrument everything and link the
#                                        fuzz targets with libFuzzer (else Brook's mutation driver)
# Included before any target is defined, since add_compile_options only reaches targets after it.
set(BROOK_SANITIZE "" CACHE STRING "Sanitizers compiled into every target, e.g. address,undefined (empty: none)")
option(BROOK_FUZZ_LIBFUZZER "With clang: link the fuzz targets with libFuzzer" OFF)

if(BROOK_SANITIZE)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    message(FATAL_ERROR "BROOK_SANITIZE needs GCC or Clang (got ${CMAKE_CXX_COMPILER_ID})")
  endif()
  # C++ only: nvcc does not take -fsanitize; CUDA host code simply goes unchecked.
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${BROOK_SANITIZE}>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-omit-frame-pointer>)
  if(BROOK_SANITIZE MATCHES "undefined")
    # Undefined behaviour ends the process like a memory error, so tests and fuzzers fail on it.
    add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize-recover=undefined>)
  endif()
  add_link_options(-fsanitize=${BROOK_SANITIZE})
  message(STATUS "Sanitizers: ${BROOK_SANITIZE}")
endif()

set(BROOK_USE_LIBFUZZER OFF)
if(BROOK_FUZZ_LIBFUZZER)
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    set(BROOK_USE_LIBFUZZER ON)
    add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>)
  else()
    message(WARNING "BROOK_FUZZ_LIBFUZZER needs clang (CMAKE_CXX_COMPILER=clang++); "
                    "the fuzz targets use Brook's mutation driver instead")
  endif()
endif()
