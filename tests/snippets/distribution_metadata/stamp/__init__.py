"""A package that reads its own version at import, as humanize does: it loads only where its
distribution's metadata can be had (installed, or shipped with the context)."""

import importlib.metadata

from stamp.maths import double

__version__ = importlib.metadata.version(__name__)
__all__ = ["double"]
