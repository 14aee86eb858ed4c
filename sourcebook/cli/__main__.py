"""`python -m sourcebook.cli`."""

from sourcebook.cli import main

main()
