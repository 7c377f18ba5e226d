"""Tests of doi."""
