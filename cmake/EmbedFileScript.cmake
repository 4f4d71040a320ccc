# Run with -DINPUT -DOUTPUT -DSYMBOL. Emits the bytes as a hex array so no
# character of the input can break the generated source.
file(READ ${INPUT} hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR byte_count "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){32})" "\\1\n" bytes "${bytes}")
file(WRITE ${OUTPUT} "// Generated from ${INPUT}; do not edit.\n#include <cstddef>\nnamespace gpuadvisor {\nstatic const char ${SYMBOL}_bytes[] = {\n${bytes}\n0x00};\nextern const char* const ${SYMBOL} = ${SYMBOL}_bytes;\nextern const std::size_t ${SYMBOL}_size = ${byte_count};\n}\n")
