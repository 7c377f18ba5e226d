"""Tests of output."""
