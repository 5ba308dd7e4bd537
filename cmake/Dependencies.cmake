# Third-party libraries, all from Debian 12 packages (scripts/debian-packages.txt).
find_package(fmt 9 REQUIRED)
set_package_properties(fmt PROPERTIES TYPE REQUIRED PURPOSE "formatting (libfmt-dev)")
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
