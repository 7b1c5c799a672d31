"""The browser layer: Chromium launch, one pool of isolated contexts, the origin fence, DOM helpers.

It sits below both :mod:`taskloom.tools.graph` (crawling) and
:mod:`taskloom.tools.environment` (episodes) and imports neither.
"""

from .dom import DESCRIBE_JS, draw_marks
from .pool import CHROMIUM_ARGS, BrowserPool, EnvironmentUnavailable, GuardedContext, OriginFence, find_chromium, host_of

__all__ = ["DESCRIBE_JS", "draw_marks", "CHROMIUM_ARGS", "BrowserPool", "EnvironmentUnavailable", "GuardedContext", "OriginFence", "find_chromium", "host_of"]
