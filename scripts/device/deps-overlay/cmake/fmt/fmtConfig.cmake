# fmt 9.1 headers carried to the GPU machine, header-only (the project links fmt::fmt-header-only).
get_filename_component(_d "${CMAKE_CURRENT_LIST_DIR}/../../include" ABSOLUTE)
foreach(_t fmt::fmt fmt::fmt-header-only)
  if(NOT TARGET ${_t})
    add_library(${_t} INTERFACE IMPORTED)
    set_target_properties(${_t} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_d}" INTERFACE_COMPILE_DEFINITIONS "FMT_HEADER_ONLY=1")
  endif()
endforeach()
set(fmt_FOUND TRUE)
