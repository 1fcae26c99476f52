"""Importers of other agents' trajectories (mini-swe-agent, OpenHands) into specqual unit directories."""
