# Run by 'cmake --install' (install(SCRIPT) in CMakeLists.txt): writes the
# Python package's _libpath.py, the path of the libplanner installed with it,
# under the prefix of this install (--prefix), without DESTDIR (a staging
# directory a package is built in). In: PL_PY_DIR, PL_PY_LIBDIR (each
# absolute or under the prefix), PL_PY_SOVERSION.
foreach(v PL_PY_DIR PL_PY_LIBDIR)
  if(NOT IS_ABSOLUTE "${${v}}")
    set(${v} "${CMAKE_INSTALL_PREFIX}/${${v}}")
  endif()
endforeach()
set(lib "${PL_PY_LIBDIR}/libplanner.so.${PL_PY_SOVERSION}")
set(out "$ENV{DESTDIR}${PL_PY_DIR}/planner/_libpath.py")
message(STATUS "Installing: ${out} (${lib})")
file(WRITE "${out}"
     "# Written by cmake --install: the libplanner installed with this package.\nLIBRARY = \"${lib}\"\n")
