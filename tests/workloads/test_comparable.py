"""A synthetic point of this version compares with an older factsheet's: the new descriptive fields of the
workload (profile, generator version, parameters, request-bodies digest) do not make it "a different
workload"; different prompts still do."""

import json
from pathlib import Path

from factsheet.compliance.diff import workload_key
from factsheet.document.schema import LoadPointEntry
from probes.load.workloads.profiles import SyntheticProfile

FIXTURE = Path(__file__).resolve().parents[1] / "factsheet/fixtures/factsheet-1.0.0/factsheet.json"


def test_new_fields_leave_the_comparison_key_alone():
    sheet = json.loads(FIXTURE.read_text())
    old = LoadPointEntry.model_validate(sheet["load"]["points"][0])
    new_workload = old.result.workload.model_copy(
        update={
            "profile": "synthetic",
            "generator_version": "synthetic/1",
            "parameters": SyntheticProfile(),
            "requests_digest": "sha256:" + "0" * 64,
        }
    )
    new = old.model_copy(update={"result": old.result.model_copy(update={"workload": new_workload})})
    assert workload_key(new) == workload_key(old)
    other = new_workload.model_copy(update={"prompts_digest": "sha256:" + "1" * 64})
    changed = old.model_copy(update={"result": old.result.model_copy(update={"workload": other})})
    assert workload_key(changed) != workload_key(old)


def test_records_outside_a_session_are_written_as_before():
    from probes.load.records import RequestRecord, load_records, records_jsonl

    plain = RequestRecord(index=0, sent_s=0.0, reply="text kept only in memory")
    turn = RequestRecord(index=1, sent_s=0.1, session=3, turn=2, reply="also never written")
    data = records_jsonl([plain, turn])
    first, second = data.decode().splitlines()
    assert "session" not in first and "turn" not in first and "reply" not in first
    assert '"session":3' in second and '"turn":2' in second and "reply" not in second
    back = load_records(data)
    assert (back[0].session, back[1].session, back[1].turn) == (None, 3, 2)
