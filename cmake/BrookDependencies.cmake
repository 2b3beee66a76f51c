# Finds the Debian 12 packages Brook builds against (see README.md for the list).
find_package(Threads REQUIRED)
find_package(yaml-cpp REQUIRED)

# The Windows cross build (packaging/windows/cross-build.sh) has no Debian CMake packages for the
# header-only libraries: it copies Debian's headers into its dependency prefix, and these targets
# stand in for the packages' own (spdlog and fmt switched to header-only mode).
option(BROOK_HEADER_ONLY_DEPS "spdlog, fmt, nlohmann-json and CLI11 as plain headers found in CMAKE_PREFIX_PATH" OFF)
if(BROOK_HEADER_ONLY_DEPS)
  find_path(BROOK_HEADER_ONLY_INCLUDE_DIR spdlog/spdlog.h REQUIRED)
  foreach(_header fmt/format.h nlohmann/json.hpp CLI/CLI.hpp)
    if(NOT EXISTS ${BROOK_HEADER_ONLY_INCLUDE_DIR}/${_header})
      message(FATAL_ERROR "${_header} is missing from ${BROOK_HEADER_ONLY_INCLUDE_DIR}")
    endif()
  endforeach()
  add_library(spdlog::spdlog INTERFACE IMPORTED)
  target_include_directories(spdlog::spdlog INTERFACE ${BROOK_HEADER_ONLY_INCLUDE_DIR})
  target_compile_definitions(spdlog::spdlog INTERFACE SPDLOG_HEADER_ONLY SPDLOG_FMT_EXTERNAL FMT_HEADER_ONLY)
  add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
  target_include_directories(nlohmann_json::nlohmann_json INTERFACE ${BROOK_HEADER_ONLY_INCLUDE_DIR})
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  target_include_directories(CLI11::CLI11 INTERFACE ${BROOK_HEADER_ONLY_INCLUDE_DIR})
else()
  find_package(spdlog REQUIRED)
  find_package(nlohmann_json 3.10 REQUIRED)
  find_package(CLI11 REQUIRED)
endif()

# sentencepiece ships a pkg-config file but no CMake package.
find_path(SENTENCEPIECE_INCLUDE_DIR sentencepiece_processor.h REQUIRED)
find_library(SENTENCEPIECE_LIBRARY sentencepiece REQUIRED)
find_library(SENTENCEPIECE_TRAIN_LIBRARY sentencepiece_train REQUIRED)
add_library(brook::sentencepiece INTERFACE IMPORTED)
target_include_directories(brook::sentencepiece INTERFACE ${SENTENCEPIECE_INCLUDE_DIR})
target_link_libraries(brook::sentencepiece INTERFACE ${SENTENCEPIECE_LIBRARY})
add_library(brook::sentencepiece_train INTERFACE IMPORTED)
target_link_libraries(brook::sentencepiece_train INTERFACE ${SENTENCEPIECE_TRAIN_LIBRARY} brook::sentencepiece)

# OpenBLAS (fp32 matrices of the CPU backend): Debian puts the pthread flavour's cblas.h and
# library in a subfolder. Optional: without it (the Windows cross build; Debian has no mingw
# OpenBLAS) fp32 matrices go through Brook's own kernel (src/engine/cpu/cpu_ops.cpp).
find_path(OPENBLAS_INCLUDE_DIR cblas.h
  PATH_SUFFIXES x86_64-linux-gnu/openblas-pthread openblas-pthread openblas aarch64-linux-gnu/openblas-pthread)
find_library(OPENBLAS_LIBRARY NAMES openblas
  PATH_SUFFIXES x86_64-linux-gnu/openblas-pthread openblas-pthread aarch64-linux-gnu/openblas-pthread)
add_library(brook::openblas INTERFACE IMPORTED)
if(OPENBLAS_INCLUDE_DIR AND OPENBLAS_LIBRARY)
  target_include_directories(brook::openblas INTERFACE ${OPENBLAS_INCLUDE_DIR})
  target_link_libraries(brook::openblas INTERFACE ${OPENBLAS_LIBRARY})
  target_compile_definitions(brook::openblas INTERFACE BROOK_HAVE_OPENBLAS=1)
elseif(NOT WIN32)
  message(FATAL_ERROR "OpenBLAS not found: install libopenblas-dev (scripts/install-deps.sh)")
endif()

# PCRE2 (Unicode regexes) and utf8proc (NFC) for the byte-level BPE tokenizers of tokenizer.json
# (Qwen3, Llama 3: src/engine/tokenizer_bytelevel_bpe.h). Required on Linux; the Windows cross
# build has no mingw packages of them and builds without those tokenizers.
find_path(PCRE2_INCLUDE_DIR pcre2.h)
find_library(PCRE2_LIBRARY NAMES pcre2-8)
find_path(UTF8PROC_INCLUDE_DIR utf8proc.h)
find_library(UTF8PROC_LIBRARY NAMES utf8proc)
add_library(brook::bytelevel_deps INTERFACE IMPORTED)
if(PCRE2_INCLUDE_DIR AND PCRE2_LIBRARY AND UTF8PROC_INCLUDE_DIR AND UTF8PROC_LIBRARY)
  set(BROOK_HAVE_BYTELEVEL_BPE ON)
  target_include_directories(brook::bytelevel_deps INTERFACE ${PCRE2_INCLUDE_DIR} ${UTF8PROC_INCLUDE_DIR})
  target_link_libraries(brook::bytelevel_deps INTERFACE ${PCRE2_LIBRARY} ${UTF8PROC_LIBRARY})
  target_compile_definitions(brook::bytelevel_deps INTERFACE BROOK_HAVE_BYTELEVEL_BPE=1)
elseif(NOT WIN32)
  message(FATAL_ERROR "PCRE2 or utf8proc not found: install libpcre2-dev and libutf8proc-dev (scripts/install-deps.sh)")
endif()

# cpp-httplib is used header-only.
find_path(HTTPLIB_INCLUDE_DIR httplib.h REQUIRED)
add_library(brook::httplib INTERFACE IMPORTED)
target_include_directories(brook::httplib INTERFACE ${HTTPLIB_INCLUDE_DIR})
target_link_libraries(brook::httplib INTERFACE Threads::Threads)
if(WIN32)
  target_link_libraries(brook::httplib INTERFACE ws2_32)
endif()

# Debian's cpp-httplib is split: the header declares, libcpp-httplib.so defines. The library is
# built with OpenSSL, zlib and brotli support, and the header's class layouts depend on the same
# macros, so every includer must define them (pkg-config's Cflags say which).
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(BROOK_HTTPLIB_PC QUIET cpp-httplib)
endif()
find_library(BROOK_HTTPLIB_LIBRARY NAMES cpp-httplib)
add_library(brook_httplib_impl INTERFACE)
target_link_libraries(brook_httplib_impl INTERFACE brook::httplib)
if(BROOK_HTTPLIB_LIBRARY)
  target_link_libraries(brook_httplib_impl INTERFACE ${BROOK_HTTPLIB_LIBRARY})
  if(BROOK_HTTPLIB_PC_CFLAGS_OTHER)
    target_compile_options(brook_httplib_impl INTERFACE ${BROOK_HTTPLIB_PC_CFLAGS_OTHER})
  else()
    target_compile_definitions(brook_httplib_impl INTERFACE
      CPPHTTPLIB_OPENSSL_SUPPORT CPPHTTPLIB_ZLIB_SUPPORT CPPHTTPLIB_BROTLI_SUPPORT)
  endif()
endif()

if(BROOK_BUILD_TESTS OR BROOK_WITH_GUI)
  set(_qt_components Core Test)
  if(BROOK_WITH_GUI)
    list(APPEND _qt_components Gui Widgets Network Sql LinguistTools)
    if(BROOK_WITH_CHARTS)
      list(APPEND _qt_components Charts)
    endif()
  endif()
  find_package(Qt6 6.4 REQUIRED COMPONENTS ${_qt_components})
endif()

if(BROOK_WITH_CUDA)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    # Release builds cover T4, A100, RTX 30xx, Jetson Orin, RTX 40xx and H100/H200.
    set(CMAKE_CUDA_ARCHITECTURES "75;80;86;87;89;90" CACHE STRING "CUDA architectures")
  endif()
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 17)  # CMake 3.25 does not know nvcc's C++20 flag; host code is C++20
  find_package(CUDAToolkit REQUIRED)
endif()
