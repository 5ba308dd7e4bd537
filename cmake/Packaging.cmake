# Packages made from the install rules (scripts/build-deb.sh; docs/install.md).
#   reservoir_<version>_amd64.deb: the CLI, the GUI and the Python module for Debian's python3
#     (components cli, gui, python); dpkg-shlibdeps declares the libraries they link, and the
#     Qt platform plugins (loaded at run time, so not seen by it) are declared by hand.
#   reservoir-mpi_<version>_amd64.deb: the MPI driver plugin (component mpi), with OpenMPI.
# The GPU backend plugins (component gpu) need CUDA or LibTorch, which Debian does not ship: they
# are not packaged (build them from source where those are installed).
set(CPACK_PACKAGE_NAME reservoir)
set(CPACK_PACKAGE_VENDOR "Reservoir")
set(CPACK_PACKAGE_CONTACT "Reservoir developers <reservoir@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ONE_PER_GROUP)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://localhost/reservoir")

set(CPACK_DEBIAN_MAIN_PACKAGE_NAME reservoir)
set(CPACK_DEBIAN_MPI_PACKAGE_NAME reservoir-mpi)
set(CPACK_DEBIAN_MPI_PACKAGE_DEPENDS "reservoir (= ${PROJECT_VERSION})")
set(_main_depends "")
if(TARGET reservoir-gui)
  # offscreen, xcb and wayland platform plugins: the GUI's window, and its --screenshot
  list(APPEND _main_depends "qt6-qpa-plugins")
endif()
if(RESERVOIR_HAVE_PYTHON_MODULE)
  # the module is built for this python3's version
  string(REGEX MATCH "^[0-9]+\\.[0-9]+" _py_mm "${RESERVOIR_DEV_PY_VERSION}")
  string(REPLACE "." ";" _py_parts "${_py_mm}")
  list(GET _py_parts 1 _py_minor)
  math(EXPR _py_next "${_py_minor} + 1")
  list(APPEND _main_depends "python3 (>= ${_py_mm})" "python3 (<< 3.${_py_next})")
endif()
string(REPLACE ";" ", " CPACK_DEBIAN_MAIN_PACKAGE_DEPENDS "${_main_depends}")

set(CPACK_COMPONENTS_ALL cli gui python)
if(TARGET reservoir-mpi)
  list(APPEND CPACK_COMPONENTS_ALL mpi)
endif()
include(CPack)
cpack_add_component_group(main DISPLAY_NAME "Reservoir")
cpack_add_component_group(mpi DISPLAY_NAME "Reservoir's MPI driver")
cpack_add_component(cli GROUP main)
cpack_add_component(gui GROUP main)
cpack_add_component(python GROUP main)
cpack_add_component(mpi GROUP mpi)
