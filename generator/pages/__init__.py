"""The wiki's pages: contexts, drafts by a page writer, Markdown through the templates."""
