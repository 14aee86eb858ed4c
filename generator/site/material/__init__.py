"""Every use of MkDocs', Material's, Jinja's, Python-Markdown's and pymdown's private internals."""
