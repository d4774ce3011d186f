"""C source text shared by the host code generator and the vendors' codegens: names, comments,
literals (format.py). Vendors reach it through their CodegenContext."""
