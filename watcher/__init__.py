"""driftline: crawl-time content-drift watcher.

The engine lives here, laid out by pipeline stage: ``sources`` (batch inputs),
``acquire`` (bytes for streaming events), ``extract`` (decode, clean, text),
``fingerprint`` (one parse per capture), ``measures`` (pure functions over two
fingerprints), ``verdict`` (policy, change class, reason), ``store`` (baselines
and verdict history), ``output``, ``evaluate`` and ``cli``.
"""

__version__ = "0.1.0"
