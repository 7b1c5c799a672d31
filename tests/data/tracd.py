"""Trac's own ``tracd``, without the full garbage collection Trac runs after every request.

Trac's request dispatcher (``trac/web/main.py``) calls ``gc.collect()`` once a request is answered,
for every stylesheet, script and image too: a full collection of the server's heap, about a third
of the server's time per request (32 → 21 ms a page on the seeded tracker). Here that call collects
the youngest generation only; Python's automatic collections of the older ones go on as usual, and
nothing else of Trac changes. Run it with the Trac venv's Python, with ``tracd``'s arguments:
``tests/data/cache/trac-venv/bin/python tests/data/tracd.py -s -b 127.0.0.1 -p PORT ENV``.
"""

import gc
import sys
import types

import trac.web.main
from trac.web.standalone import main

trac.web.main.gc = types.SimpleNamespace(collect=lambda *args: gc.collect(0))

if __name__ == "__main__":
    sys.exit(main())
