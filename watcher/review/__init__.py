"""Curator review: the ``driftline review`` page, labels kept in the store, ``driftline labels export``.

Submodules: :mod:`.settings` (the ``review`` config section), :mod:`.labels` (export of the
curator's labels), :mod:`.ingest` (a store or a scan result opened for review), :mod:`.content`
(captures re-read from the archive, text, word diff), :mod:`.server` (the aiohttp page),
:mod:`.cli` (the two subcommands).  Nothing here is imported by the verdict layer.
"""
