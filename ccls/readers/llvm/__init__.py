"""The LLVM IR reader's parts, one job each: the module's text (`text`), instruction classes
(`opcodes`), machine code per IR block (`machine`), source lines (`lines`), what one function's
analyses share (`reading`), sizes named from memory (`named_bounds`), trip counts (`trips`) and
memory accesses (`memory`). `ccls.readers.llvm_ir` puts them together. A name with a leading
underscore is the package's own: shared between these modules, not meant for code outside."""
