# Common compile settings applied to every tenferro target.
add_library(tenferro_options INTERFACE)
target_compile_options(tenferro_options INTERFACE -Wall -Wextra)
if(TENFERRO_WERROR)
  target_compile_options(tenferro_options INTERFACE -Werror)
endif()
# Test code (targets with the TENFERRO_TEST_CODE property: the test
# executables and their precompiled header) compiles with
# TENFERRO_TEST_SANITIZERS; the library, whose errors the run is after, always
# with address and undefined. ./run passes "address" for the tests: UBSan's
# checks in the tests' own code cost a third of their compile time.
set(TENFERRO_TEST_SANITIZERS "address,undefined" CACHE STRING
    "Sanitizers for the test code of a TENFERRO_SANITIZE build (a -fsanitize= list)")
# UBSan checks left out of the library's code (a -fno-sanitize= list; empty:
# all of -fsanitize=undefined). ./run leaves out pointer-overflow, alignment,
# object-size and vptr: together they are a fifth to a quarter of the
# sanitizer build's library compile time (GCC 12: cpu/unary_kernels.cpp 57
# -> 43 s, ad/eager/backward.cpp 9.7 -> 7.7 s), and AddressSanitizer already
# reports the out-of-bounds and freed-object accesses object-size and vptr
# look for; signed overflow, shifts, bounds, null, bool, enum, return and
# division by zero stay checked.
set(TENFERRO_SANITIZE_SKIP "" CACHE STRING
    "UBSan checks not applied to the library in a TENFERRO_SANITIZE build (a -fno-sanitize= list)")
if(TENFERRO_SANITIZE)
  string(REPLACE "," "$<COMMA>" tenferro_test_sanitizers "${TENFERRO_TEST_SANITIZERS}")
  target_compile_options(tenferro_options INTERFACE
    "-fsanitize=$<IF:$<BOOL:$<TARGET_PROPERTY:TENFERRO_TEST_CODE>>,${tenferro_test_sanitizers},address$<COMMA>undefined>"
    -fno-sanitize-recover=all -fno-omit-frame-pointer)
  if(TENFERRO_SANITIZE_SKIP)
    string(REPLACE "," "$<COMMA>" tenferro_sanitize_skip "${TENFERRO_SANITIZE_SKIP}")
    target_compile_options(tenferro_options INTERFACE
      "$<$<NOT:$<BOOL:$<TARGET_PROPERTY:TENFERRO_TEST_CODE>>>:-fno-sanitize=${tenferro_sanitize_skip}>")
  endif()
  target_link_options(tenferro_options INTERFACE -fsanitize=address,undefined)
endif()
if(TENFERRO_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "TENFERRO_FUZZ needs clang (libFuzzer), found ${CMAKE_CXX_COMPILER_ID}; "
                        "configure with -DCMAKE_CXX_COMPILER=clang++-14 (Debian: clang-14, libclang-rt-14-dev)")
  endif()
  if(TENFERRO_SANITIZE OR TENFERRO_TSAN)
    message(FATAL_ERROR "TENFERRO_FUZZ brings its own sanitizers; use a separate build directory")
  endif()
  # Coverage of the library is what guides libFuzzer; the fuzz targets add
  # -fsanitize=fuzzer when they link (tests/fuzz/CMakeLists.txt).
  target_compile_options(tenferro_options INTERFACE -fsanitize=fuzzer-no-link,address,undefined
                                                    -fno-sanitize-recover=all -fno-omit-frame-pointer)
  target_link_options(tenferro_options INTERFACE -fsanitize=address,undefined)
endif()
if(TENFERRO_TSAN)
  if(TENFERRO_SANITIZE)
    message(FATAL_ERROR "TENFERRO_TSAN and TENFERRO_SANITIZE cannot be combined; use two build directories")
  endif()
  target_compile_options(tenferro_options INTERFACE -fsanitize=thread -fno-omit-frame-pointer)
  target_link_options(tenferro_options INTERFACE -fsanitize=thread)
endif()

# tenferro_add_layer(<name> DIRS <src dirs...> DEPS <targets...>
#                    [PRIVATE_HEADERS <src dirs...>])
# One static library per layer of DESIGN.md section 3, exported as tenferro::<name>.
#
# Each layer gets its own private include root, holding only src/<name> (and
# the src/ folders named in PRIVATE_HEADERS), so `#include "<name>/..."` finds
# the layer's own private headers and another layer's private headers do not
# resolve: the build enforces the layering. Everything else a layer uses comes
# through the public headers in include/.
function(tenferro_add_layer name)
  cmake_parse_arguments(ARG "" "" "DIRS;DEPS;PRIVATE_DEPS;PRIVATE_HEADERS" ${ARGN})
  set(sources)
  foreach(dir IN LISTS ARG_DIRS)
    file(GLOB dir_sources CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/src/${dir}/*.cpp")
    list(APPEND sources ${dir_sources})
  endforeach()
  add_library(tenferro_${name} STATIC ${sources})
  add_library(tenferro::${name} ALIAS tenferro_${name})
  set_target_properties(tenferro_${name} PROPERTIES EXPORT_NAME ${name} POSITION_INDEPENDENT_CODE ON)
  set(private_root "${PROJECT_BINARY_DIR}/private-include/${name}")
  file(MAKE_DIRECTORY "${private_root}")
  foreach(dir IN ITEMS ${name} ${ARG_PRIVATE_HEADERS})
    if(NOT EXISTS "${private_root}/${dir}")
      file(CREATE_LINK "${PROJECT_SOURCE_DIR}/src/${dir}" "${private_root}/${dir}" SYMBOLIC)
    endif()
  endforeach()
  target_include_directories(tenferro_${name}
    PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:include>
    PRIVATE "${private_root}")
  target_link_libraries(tenferro_${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS}
                        $<BUILD_INTERFACE:tenferro_options>)
  target_compile_features(tenferro_${name} PUBLIC cxx_std_20)
  set_property(GLOBAL APPEND PROPERTY TENFERRO_LAYERS tenferro_${name})
endfunction()
