"""The DOI landing-page monitor: DOI lists, the scholarly record, the ``doi``
profile, resolution and capture, scheduling and reporting.

Engine side only: nothing here imports Kafka (``consumers/doi.py`` is the
glue that produces this package's capture events).
"""
