"""``python -m taskloom.server.cli`` runs the ``taskloom`` command."""

from . import main

main()
