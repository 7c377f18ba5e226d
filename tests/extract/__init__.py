"""Tests of extract."""
