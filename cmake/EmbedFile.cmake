# embed_file(INPUT OUTPUT SYMBOL): writes OUTPUT, a C++ file that defines
#   extern const char* const gpuadvisor::SYMBOL;  (the file's bytes, NUL-terminated)
# The file is regenerated whenever INPUT changes.
function(embed_file input output symbol)
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${input} -DOUTPUT=${output} -DSYMBOL=${symbol}
            -P ${CMAKE_SOURCE_DIR}/cmake/EmbedFileScript.cmake
    DEPENDS ${input} ${CMAKE_SOURCE_DIR}/cmake/EmbedFileScript.cmake
    COMMENT "Embedding ${input}")
endfunction()
