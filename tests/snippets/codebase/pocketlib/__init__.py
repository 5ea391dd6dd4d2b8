"""pocketlib: small text, number, date and geometry helpers."""
