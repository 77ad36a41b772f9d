"""Chat sessions' bodies are logged to a file as each is sent (drive.SentBodies) and digested after the run
in request order, from one log or several workers' (drive.bodies_digest)."""

import hashlib
import io

from probes.load.drive import SentBodies, bodies_digest


def _expected(bodies: list[bytes]) -> str:
    return "sha256:" + hashlib.sha256(b"".join(b + b"\n" for b in bodies)).hexdigest()


def test_the_digest_is_of_the_records_bodies_in_index_order_across_logs():
    a, b = io.BytesIO(), io.BytesIO()
    one, two = SentBodies(a), SentBodies(b)
    # sent out of order across two workers; a body may hold a newline and digits (lengths frame them)
    one.add(3, b'{"m": "three"}')
    two.add(0, b'{"m": "zero\n12 7"}')
    one.add(1, b"{}")
    two.add(2, b'{"m": "two"}')
    two.add(5, b'{"m": "five: sent, its request never finished"}')
    everything = [b'{"m": "zero\n12 7"}', b"{}", b'{"m": "two"}', b'{"m": "three"}']
    assert bodies_digest([a, b], [3, 0, 1, 2]) == _expected(everything)
    # a body whose record was not written (its worker died mid-request) is not in the digest
    assert bodies_digest([b, a], range(5)) == _expected(everything)


def test_a_body_cut_short_by_a_worker_s_death_is_not_read():
    log = io.BytesIO()
    SentBodies(log).add(0, b"whole")
    log.write(b"1 100\npartial")  # its header and the start of its body, then the worker died
    assert bodies_digest([log], [0, 1]) == _expected([b"whole"])
