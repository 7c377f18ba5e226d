"""Labels, the review queue, mutes and pins in the real PostgreSQL store (throwaway cluster)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.reviewdata import make_gold, scan_to
from watcher.review.ingest import open_input, open_store_spec
from watcher.review.labels import export_gold, export_labels
from watcher.store.labels import Query, review_data, seed_muted

pytestmark = pytest.mark.postgres


def test_labels_in_postgres(postgres_dsn: str, tmp_path: Path) -> None:
    result = scan_to(make_gold(tmp_path), tmp_path / "result.json")
    store, review, _, _ = open_input(str(result), postgres_dsn)  # a scan result into a PostgreSQL review store
    try:
        page = review.queue(Query())
        assert page.total == 8 and [i.change for i in page.items[:2]] == ["off-topic", "off-topic"]
        assert review.queue(Query(where="gold:1", date_from="2011-01-01", date_to="2012-12-31")).total == 2
        off = page.items[0]
        review.set_label(off.verdict_id, off.version, "off-topic", "parked")
        on = review.queue(Query(change="minor", where="http://site1.example.org/")).items[0]
        review.set_label(on.verdict_id, on.version, "unsure")
        review.set_label(on.verdict_id, on.version, "off-topic")  # replaced; the note kept (none)
        assert [i.verdict_id for i in review.queue(Query(disagree=True)).items] == [on.verdict_id]
        assert review.agreement() == {"off-topic": (1, 1), "minor": (1, 0)}
        review.mute(off.seed, True)
        assert seed_muted(store, off.seed)
        review.set_pin("gold:1", on.ts)
        assert review.pins() == {"gold:1": on.ts}
    finally:
        store.close()
    # a second session (the DSN as `driftline review` gets it): everything is still there
    store = open_store_spec(postgres_dsn)
    try:
        again = review_data(store)
        again.sync()
        lab = again.get_label(off.verdict_id)
        assert lab is not None and (lab.label, lab.note, lab.reviewer) == ("off-topic", "parked", "curator")
        assert again.reviewed() == 2 and again.muted() == [off.seed]
    finally:
        store.close()
    assert export_gold(postgres_dsn, tmp_path / "labels.tsv") == 2
    rows = (tmp_path / "labels.tsv").read_text().splitlines()
    assert rows[0] == "id\tdate\tURI\tlabel" and sorted(r.split("\t")[3] for r in rows[1:]) == ["0", "0"]
    assert export_labels(postgres_dsn, tmp_path / "labels.jsonl", "jsonl") == 2
