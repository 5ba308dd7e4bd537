# Self-contained shared objects: the wheels' reservoir._core (packaging/, docs/install.md).
# reservoir_make_self_contained(<target>) links libstdc++, zstd and zlib statically (fmt's compiled
# part is the project's static reservoir_fmt) and keeps their symbols inside the object, so that its NEEDED
# list stays within libc, libm, libgcc_s and the dynamic loader. libgcc stays shared: its static
# copy calls _dl_find_object (glibc 2.35). packaging/glibc_floor.cpp keeps libstdc++'s
# std::random_device off arc4random (glibc 2.36). The wheel builder measures what remains
# (packaging/reservoir_build/elf.py) and tags the wheel with it.
function(reservoir_make_self_contained target)
  if(NOT RESERVOIR_ZSTD_STATIC OR NOT RESERVOIR_ZLIB_STATIC)
    message(FATAL_ERROR "a self-contained ${target} needs the static libraries libzstd.a and libz.a "
                        "(Debian: libzstd-dev, zlib1g-dev)")
  endif()
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    message(FATAL_ERROR "a self-contained ${target} is made with GCC (-static-libstdc++), not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  set_target_properties(${target} PROPERTIES RESERVOIR_SELF_CONTAINED ON)
  target_sources(${target} PRIVATE "${PROJECT_SOURCE_DIR}/packaging/glibc_floor.cpp")
  target_link_options(${target} PRIVATE -static-libstdc++ "LINKER:--exclude-libs,ALL" "LINKER:--wrap=arc4random"
                      "LINKER:--as-needed")
endfunction()
