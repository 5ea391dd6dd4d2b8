"""An honest package, with hostile neighbours planted by the ``hostile_tree`` fixture."""
