"""Test doubles: stand-ins for what cannot run in a test (a real vLLM server, a model, a cluster's job), each
named as a double. Tests import them from here, never from another test module."""
