# Third-party libraries, all from Debian 12 packages (scripts/debian-packages.txt).
find_package(fmt 9 REQUIRED)
set_package_properties(fmt PROPERTIES TYPE REQUIRED PURPOSE "formatting (libfmt-dev, used header-only)")
# Nothing built links libfmt.so, so the binary, the module and the plugins need no fmt on the
# user's machine (Debian ships no libfmt.a to link statically): fmt's compiled part is built once
# here (cmake/fmt/fmt_library.cpp) as a static, position-independent library. Header-only fmt
# (FMT_HEADER_ONLY) did the same but compiled fmt's implementation into every translation unit.
get_target_property(_fmt_includes fmt::fmt-header-only INTERFACE_INCLUDE_DIRECTORIES)
add_library(reservoir_fmt STATIC ${CMAKE_CURRENT_LIST_DIR}/fmt/fmt_library.cpp)
add_library(reservoir::fmt ALIAS reservoir_fmt)
target_include_directories(reservoir_fmt SYSTEM PUBLIC ${_fmt_includes})
target_compile_features(reservoir_fmt PUBLIC cxx_std_20)
find_package(nlohmann_json 3 REQUIRED)
set_package_properties(nlohmann_json PROPERTIES TYPE REQUIRED PURPOSE "JSON output (nlohmann-json3-dev)")
find_package(CLI11 REQUIRED)
set_package_properties(CLI11 PROPERTIES TYPE REQUIRED PURPOSE "command line parsing (libcli11-dev)")
find_package(ZLIB REQUIRED)
set_package_properties(ZLIB PROPERTIES TYPE REQUIRED PURPOSE "gzip-compressed snapshots (zlib1g-dev)")
find_package(Boost 1.74 REQUIRED)
set_package_properties(Boost PROPERTIES TYPE REQUIRED PURPOSE "Boost.Graph: the call graph of stack frames (libboost-graph-dev)")
find_package(Threads REQUIRED)

# zstd ships a pkg-config file on Debian, no CMake config.
find_package(PkgConfig REQUIRED)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
set_package_properties(PkgConfig PROPERTIES TYPE REQUIRED PURPOSE "finds libzstd (zstd-compressed snapshots)")

# The compression libraries the reader links: shared ones, or the static archives for a target
# that sets the property RESERVOIR_SELF_CONTAINED (cmake/SelfContained.cmake; the generator
# expression is evaluated for the target being linked).
find_library(RESERVOIR_ZSTD_STATIC NAMES libzstd.a HINTS ${ZSTD_LIBRARY_DIRS})
find_library(RESERVOIR_ZLIB_STATIC NAMES libz.a)
set(_self_contained "$<BOOL:$<TARGET_PROPERTY:RESERVOIR_SELF_CONTAINED>>")
add_library(reservoir_compression INTERFACE)
add_library(reservoir::compression ALIAS reservoir_compression)
target_link_libraries(reservoir_compression INTERFACE
  "$<$<NOT:${_self_contained}>:PkgConfig::ZSTD>" "$<$<NOT:${_self_contained}>:ZLIB::ZLIB>"
  "$<${_self_contained}:${RESERVOIR_ZSTD_STATIC}>" "$<${_self_contained}:${RESERVOIR_ZLIB_STATIC}>")
target_include_directories(reservoir_compression INTERFACE ${ZSTD_INCLUDE_DIRS} ${ZLIB_INCLUDE_DIRS})
