"""Serving stacks: builds, overlays, launchers, provenance, metrics."""
