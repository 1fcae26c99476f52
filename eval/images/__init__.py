"""Docker images made here, from Debian packages and the local task set, in place of pulled ones."""
