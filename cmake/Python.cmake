# The Python package (python/): the interpreter it is built for and tested with, and pybind11.
# Debian's /usr/bin/python3 is the default when it exists (it has python3-pytest; an interpreter
# earlier on PATH, e.g. pyenv's, may have neither pytest nor the Debian paths); set
# RESERVOIR_PYTHON=/path/to/python3 for another (setup.py passes the one running pip).
# Sets RESERVOIR_HAVE_PYTHON_MODULE when reservoir._core can be built.
set(RESERVOIR_PYTHON "" CACHE FILEPATH "Python interpreter for the Python package and its tests (default: /usr/bin/python3)")
if(RESERVOIR_PYTHON)
  set(Python3_EXECUTABLE "${RESERVOIR_PYTHON}")
elseif(NOT Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python3_EXECUTABLE /usr/bin/python3)
endif()

set(RESERVOIR_HAVE_PYTHON_MODULE OFF)
if(RESERVOIR_BUILD_PYTHON)
  find_package(Python3 COMPONENTS Interpreter Development.Module QUIET)
  set(PYBIND11_FINDPYTHON ON)
  find_package(pybind11 2.6 CONFIG QUIET)
  set_package_properties(pybind11 PROPERTIES TYPE OPTIONAL PURPOSE "the Python package's compiled part (pybind11-dev)")
  if(Python3_Interpreter_FOUND AND Python3_Development.Module_FOUND AND pybind11_FOUND)
    set(RESERVOIR_HAVE_PYTHON_MODULE ON)
    message(STATUS "Python package: reservoir._core for ${Python3_EXECUTABLE} (${Python3_VERSION})")
  else()
    message(STATUS "Python package skipped: needs python3-dev and pybind11-dev "
                   "(Python3 interpreter ${Python3_Interpreter_FOUND}, development ${Python3_Development.Module_FOUND}, "
                   "pybind11 ${pybind11_FOUND})")
  endif()
endif()
add_feature_info(Python RESERVOIR_HAVE_PYTHON_MODULE "Python package (import reservoir; pybind11)")
