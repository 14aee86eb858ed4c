"""The generated Markdown built into a static MkDocs Material site."""
