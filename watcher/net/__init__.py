"""The guarded HTTP client (address checks at connect time, size, ratio and time caps) every fetch
goes through: batch TimeMaps and replays (:mod:`watcher.sources`), live and archived captures
(:mod:`watcher.acquire`), the DOI monitor, review."""
