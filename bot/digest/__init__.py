"""A repository's digest for a window: the builder, and the filters, noise controls, roll-ups and
bookkeeping it applies."""
