"""Helpers the tests import (pre-commit style): the shared fixtures, running the CLI."""
