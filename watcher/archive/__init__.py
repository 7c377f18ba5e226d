"""Web archives, read: WARC/ARC records and their index, input sniffing, replay URIs.  Below both
:mod:`watcher.sources` (batch inputs) and :mod:`watcher.acquire` (an event's bytes), which import
this and never each other."""
