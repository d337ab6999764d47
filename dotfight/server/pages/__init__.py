"""The page authority and its domain: commands in, domain errors out, pages through a `PageStore`."""
