"""Publishing: the producer every message goes out through, the messages' shapes and headers, dead
letters, and the ledger outbox the crawl.log runner writes through (batch results are written by
:mod:`watcher.output`)."""
