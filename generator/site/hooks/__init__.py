"""The MkDocs hooks every generated site runs (this folder goes on sys.path: keep it to one module)."""
