"""Tests of seeds."""
