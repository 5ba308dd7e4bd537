# Initial cache for building on the GPU machine (cmake -C .device-data/deps.cmake): the
# third-party libraries the project finds with find_package, carried in .device-data/deps.
get_filename_component(_deps "${CMAKE_CURRENT_LIST_DIR}/deps" ABSOLUTE)
set(fmt_DIR "${_deps}/cmake/fmt" CACHE PATH "")
set(nlohmann_json_DIR "${_deps}/cmake/nlohmann_json" CACHE PATH "")
set(CLI11_DIR "${_deps}/cmake/CLI11" CACHE PATH "")
set(GTest_DIR "${_deps}/cmake/GTest" CACHE PATH "")
set(Boost_DIR "${_deps}/cmake/Boost" CACHE PATH "")
set(ZLIB_INCLUDE_DIR "${_deps}/include" CACHE PATH "")
set(ZLIB_LIBRARY "${_deps}/lib/libz.a" CACHE FILEPATH "")
set(PKG_CONFIG_EXECUTABLE "${_deps}/bin/pkg-config" CACHE FILEPATH "")
set(CMAKE_CXX_FLAGS "-DFMT_HEADER_ONLY=1" CACHE STRING "")
