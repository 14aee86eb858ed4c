"""The front half of a build: which files are read, the facts parsed from them, the graph, the page plan."""
