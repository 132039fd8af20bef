"""Queries a user asks, as one call each; the CLI and notebooks render what these return."""
