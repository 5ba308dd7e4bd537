# The Python package (python/): reservoir._core for one or more interpreters, through pybind11's
# headers (no FindPython: each interpreter is asked for its include folder and module suffix).
#   RESERVOIR_PYTHON: the build tree's package (<build>/python) and its tests. Debian's
#     /usr/bin/python3 is the default when it exists (it has python3-pytest; an interpreter earlier
#     on PATH, e.g. pyenv's, may have neither pytest nor the Debian paths).
#   RESERVOIR_WHEEL_PYTHONS: interpreters to build self-contained modules for, one per wheel
#     (<build>/wheel/<tag>/reservoir/_core*.so; packaging/reservoir_build assembles the wheels).
# Sets RESERVOIR_HAVE_PYTHON_MODULE when the build tree's reservoir._core can be built, and
# Python3_EXECUTABLE to its interpreter (the Python tests run with it).
set(RESERVOIR_PYTHON "" CACHE FILEPATH "Python interpreter for the Python package and its tests (default: /usr/bin/python3)")
set(RESERVOIR_WHEEL_PYTHONS "" CACHE STRING "Interpreters to build self-contained wheel modules for (';'-separated)")
if(RESERVOIR_PYTHON)
  set(Python3_EXECUTABLE "${RESERVOIR_PYTHON}")
elseif(NOT Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python3_EXECUTABLE /usr/bin/python3)
elseif(NOT Python3_EXECUTABLE)
  find_program(Python3_EXECUTABLE NAMES python3)
endif()

# reservoir_python_facts(<python> <prefix>): sets <prefix>_OK, _INCLUDE (the folder of Python.h),
# _SUFFIX (".cpython-312-x86_64-linux-gnu.so"), _TAG ("cp312") and _VERSION ("3.12.1"), and
# <prefix>_WHY when the interpreter cannot build a module.
function(reservoir_python_facts python prefix)
  set(${prefix}_OK FALSE PARENT_SCOPE)
  execute_process(
    COMMAND "${python}" -c "import sys, sysconfig; print(sysconfig.get_paths()['include']); print(sysconfig.get_config_var('EXT_SUFFIX')); print('cp%d%d' % sys.version_info[:2]); print('%d.%d.%d' % sys.version_info[:3])"
    OUTPUT_VARIABLE out RESULT_VARIABLE rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    set(${prefix}_WHY "${python} does not run" PARENT_SCOPE)
    return()
  endif()
  string(REPLACE "\n" ";" out "${out}")
  list(GET out 0 include)
  list(GET out 1 suffix)
  list(GET out 2 tag)
  list(GET out 3 version)
  if(NOT EXISTS "${include}/Python.h")
    set(${prefix}_WHY "${python} (${version}) has no Python.h in ${include} (Debian: python3-dev)" PARENT_SCOPE)
    return()
  endif()
  set(${prefix}_OK TRUE PARENT_SCOPE)
  set(${prefix}_INCLUDE "${include}" PARENT_SCOPE)
  set(${prefix}_SUFFIX "${suffix}" PARENT_SCOPE)
  set(${prefix}_TAG "${tag}" PARENT_SCOPE)
  set(${prefix}_VERSION "${version}" PARENT_SCOPE)
endfunction()

set(RESERVOIR_HAVE_PYTHON_MODULE OFF)
set(RESERVOIR_PYTHON_MODULES "")  # "<python>|<prefix>" of every module to build (python/src)
if(RESERVOIR_BUILD_PYTHON OR RESERVOIR_WHEEL_PYTHONS)
  set(PYBIND11_NOPYTHON ON)  # only pybind11's headers: each interpreter is asked for its own facts
  find_package(pybind11 2.6 CONFIG QUIET)
  set_package_properties(pybind11 PROPERTIES TYPE OPTIONAL PURPOSE "the Python package's compiled part (pybind11-dev)")
endif()

if(RESERVOIR_BUILD_PYTHON)
  if(NOT pybind11_FOUND)
    message(STATUS "Python package skipped: needs pybind11-dev")
  elseif(NOT Python3_EXECUTABLE)
    message(STATUS "Python package skipped: no python3 found (set RESERVOIR_PYTHON)")
  else()
    reservoir_python_facts("${Python3_EXECUTABLE}" RESERVOIR_DEV_PY)
    if(RESERVOIR_DEV_PY_OK)
      set(RESERVOIR_HAVE_PYTHON_MODULE ON)
      message(STATUS "Python package: reservoir._core for ${Python3_EXECUTABLE} (${RESERVOIR_DEV_PY_VERSION})")
    else()
      message(STATUS "Python package skipped: ${RESERVOIR_DEV_PY_WHY}")
    endif()
  endif()
endif()
add_feature_info(Python RESERVOIR_HAVE_PYTHON_MODULE "Python package (import reservoir; pybind11)")

set(RESERVOIR_WHEEL_TAGS "")  # the wheels' module tags (cp312 ...), in RESERVOIR_WHEEL_PYTHONS' order
set(_wheel_index 0)
foreach(python IN LISTS RESERVOIR_WHEEL_PYTHONS)
  if(NOT pybind11_FOUND)
    message(FATAL_ERROR "wheel modules need pybind11's headers (Debian: pybind11-dev)")
  endif()
  reservoir_python_facts("${python}" RESERVOIR_WHEEL_PY${_wheel_index})
  if(NOT RESERVOIR_WHEEL_PY${_wheel_index}_OK)
    message(FATAL_ERROR "cannot build a wheel module: ${RESERVOIR_WHEEL_PY${_wheel_index}_WHY}")
  endif()
  list(APPEND RESERVOIR_WHEEL_TAGS "${RESERVOIR_WHEEL_PY${_wheel_index}_TAG}")
  math(EXPR _wheel_index "${_wheel_index} + 1")
endforeach()
list(REMOVE_DUPLICATES RESERVOIR_WHEEL_TAGS)
