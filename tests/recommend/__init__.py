"""Tests of recommend."""
