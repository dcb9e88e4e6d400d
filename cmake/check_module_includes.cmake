# Fails when a file of module M includes a header of a module M may not know.
#   cmake -DROOT=<tree> [-DSTAMP=<file>] -P check_module_includes.cmake
# Scans include/pacer/<M>/ and src/<M>/ of ROOT for `#include <pacer/X/...>` and
# `#include "pacer/X/..."`; X must be M itself or one of PACER_MODULE_DEPS_<M>
# (cmake/PacerModules.cmake). A header of no known module is also refused.
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/PacerModules.cmake)
if(NOT ROOT)
    message(FATAL_ERROR "check_module_includes: pass -DROOT=<source tree>")
endif()

set(violations "")
foreach(module IN LISTS PACER_MODULES)
    set(allowed ${module} ${PACER_MODULE_DEPS_${module}})
    file(GLOB_RECURSE files LIST_DIRECTORIES false
        ${ROOT}/include/pacer/${module}/* ${ROOT}/src/${module}/*)
    foreach(file IN LISTS files)
        if(NOT file MATCHES "\\.(hpp|h|cpp|ipp)$")
            continue()
        endif()
        file(STRINGS ${file} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]pacer/")
        foreach(line IN LISTS lines)
            if(NOT line MATCHES "[<\"]pacer/([A-Za-z0-9_]+)/")
                # pacer/<file> with no module folder: not a module's header.
                string(REGEX MATCH "[<\"]pacer/[^>\"]*" what "${line}")
                list(APPEND violations "${file}: ${what}: not a module header")
                continue()
            endif()
            set(used ${CMAKE_MATCH_1})
            if(NOT used IN_LIST allowed)
                file(RELATIVE_PATH rel ${ROOT} ${file})
                list(JOIN PACER_MODULE_DEPS_${module} ", " known)
                if(known STREQUAL "")
                    set(known "none")
                endif()
                list(APPEND violations
                    "${rel}: module ${module} may not include ${used} (allowed: ${known})")
            endif()
        endforeach()
    endforeach()
endforeach()

if(violations)
    list(JOIN violations "\n  " text)
    message(FATAL_ERROR "module boundaries broken (cmake/PacerModules.cmake):\n  ${text}")
endif()
if(STAMP)
    file(TOUCH ${STAMP})
endif()
