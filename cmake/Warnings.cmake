# Warnings for the project's own targets: reservoir_set_warnings(<target>)
function(reservoir_set_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                           -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wconversion -Wsign-conversion
                           -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough)
    if(RESERVOIR_WERROR)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
  endif()
endfunction()
