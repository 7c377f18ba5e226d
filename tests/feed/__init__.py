"""Tests of feed."""
