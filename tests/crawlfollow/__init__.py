"""Tests of crawlfollow."""
