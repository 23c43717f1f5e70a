"""The live-events hub: audiences, subscriptions and their limit, slow listeners, shutdown."""

from __future__ import annotations

import logging
import uuid
from datetime import UTC, datetime

import orjson
import pytest

from jobs_common.auth import Identity
from jobs_common.contracts import JobChange, JobChanges, JobLogLine, JobLogTail, JobStatus
from jobs_gateway.adapters.live import LiveEventsConsumer
from jobs_gateway.api.events import RedactTokens
from jobs_gateway.app.live_hub import Listener, LiveHub
from jobs_gateway.domain.live import Frame, LiveLimits, SubscriptionLimit

pytestmark = pytest.mark.unit

AT = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
JOB_A = uuid.UUID("00000000-0000-4000-8000-00000000000a")
JOB_B = uuid.UUID("00000000-0000-4000-8000-00000000000b")
ADMIN = Identity(user_id="u-admin", email="admin@test.com", role="admin")
ALICE = Identity(user_id="u-alice", email="alice@x.io", role="user")
BOB = Identity(user_id="u-bob", email="bob@x.io", role="user")


def hub(send_queue_size: int = 10, max_subscriptions: int = 3) -> LiveHub:
    return LiveHub(
        LiveLimits(
            send_queue_size=send_queue_size,
            max_subscriptions=max_subscriptions,
            max_message_bytes=4096,
        )
    )


def changes(*owners: str) -> JobChanges:
    return JobChanges(
        changes=[
            JobChange(
                job_id=uuid.uuid4(),
                attempt=1,
                from_status=JobStatus.QUEUED,
                to_status=JobStatus.RUNNING,
                reason="started",
                job_type="email",
                submitted_by=owner,
                at=AT,
            )
            for owner in owners
        ]
    )


def tail(*jobs: uuid.UUID) -> JobLogTail:
    return JobLogTail(
        lines=[
            JobLogLine(
                job_id=job, attempt=1, worker_id="w-1", level="info", message=f"{job}", at=AT
            )
            for job in jobs
        ]
    )


def drain(listener: Listener) -> list[Frame]:
    frames = []
    while not listener.outbox.empty():
        frames.append(listener.outbox.get_nowait())
    return frames


def owners_in(frame: Frame) -> list[str]:
    return [c.get("submittedBy", "?") for c in orjson.loads(frame.text)["changes"]]


def test_each_listener_gets_the_changes_it_may_see_and_admins_share_one_frame() -> None:
    live = hub()
    admin_1, admin_2 = live.join(ADMIN), live.join(ADMIN)
    alice, bob = live.join(ALICE), live.join(BOB)
    offered = live.publish_changes(changes("alice@x.io", "carol@x.io"))
    assert offered == 3  # two admins and alice; nothing for bob
    (first,), (second,) = drain(admin_1), drain(admin_2)
    assert first is second
    assert owners_in(first) == ["alice@x.io", "carol@x.io"]
    (own,) = drain(alice)
    assert len(orjson.loads(own.text)["changes"]) == 1
    assert drain(bob) == []


def test_log_lines_go_only_to_subscribers_of_their_jobs() -> None:
    live = hub()
    alice, bob = live.join(ALICE), live.join(BOB)
    live.subscribe(alice, JOB_A)
    assert live.publish_logs(tail(JOB_A, JOB_B)) == 1
    (frame,) = drain(alice)
    assert [x["jobId"] for x in orjson.loads(frame.text)["lines"]] == [str(JOB_A)]
    assert drain(bob) == []
    assert live.unsubscribe(alice, JOB_A) is True
    assert live.unsubscribe(alice, JOB_A) is False
    assert live.publish_logs(tail(JOB_A)) == 0
    assert drain(alice) == []


def test_subscriptions_are_bounded_per_listener() -> None:
    live = hub(max_subscriptions=2)
    alice = live.join(ALICE)
    live.subscribe(alice, JOB_A)
    live.subscribe(alice, JOB_B)
    live.subscribe(alice, JOB_B)  # already there: no new room needed
    with pytest.raises(SubscriptionLimit) as caught:
        live.subscribe(alice, uuid.uuid4())
    assert caught.value.code == "too_many_subscriptions"
    assert alice.subscriptions == {JOB_A, JOB_B}


def test_a_listener_whose_outbox_is_full_is_closed_with_1013_and_gets_no_more() -> None:
    live = hub(send_queue_size=2)
    slow, fast = live.join(ALICE), live.join(ALICE)
    live.publish_changes(changes("alice@x.io"))
    live.publish_changes(changes("alice@x.io"))
    drain(fast)
    assert not slow.closing.is_set()
    live.publish_changes(changes("alice@x.io"))
    assert slow.closing.is_set()
    assert slow.close_code == 1013
    assert len(drain(fast)) == 1
    assert fast.close_code is None
    assert slow.offer(Frame("job.changes", "{}")) is False


def test_a_listener_that_left_gets_nothing_and_is_forgotten() -> None:
    live = hub()
    alice = live.join(ALICE)
    live.subscribe(alice, JOB_A)
    live.leave(alice)
    assert len(live) == 0
    assert live.publish_changes(changes("alice@x.io")) == 0
    assert live.publish_logs(tail(JOB_A)) == 0


def test_shutdown_closes_every_listener_with_1001() -> None:
    live = hub()
    listeners = [live.join(ADMIN), live.join(ALICE), live.join(BOB)]
    live.close_all()
    assert [x.close_code for x in listeners] == [1001, 1001, 1001]


class Recording:
    def __init__(self, *, listening: bool = True) -> None:
        self.changes: list[JobChanges] = []
        self.tails: list[JobLogTail] = []
        self.listening = listening

    def wants(self, routing_key: str) -> bool:
        return self.listening

    def publish_changes(self, message: JobChanges) -> int:
        self.changes.append(message)
        return 1

    def publish_logs(self, message: JobLogTail) -> int:
        self.tails.append(message)
        return 1


def test_the_consumer_hands_parsed_events_to_the_sink_and_drops_the_rest() -> None:
    sink = Recording()
    consumer = LiveEventsConsumer(url="amqp://unused/", sink=sink, max_length=10)
    message = changes("alice@x.io")
    consumer.handle("job.changes", message.to_json())
    consumer.handle("job.logs", tail(JOB_A).to_json())
    consumer.handle("job.changes", b"{not json")
    consumer.handle("job.changes", tail(JOB_A).to_json())  # the wrong message for the key
    consumer.handle("control.cancel", b"{}")
    assert sink.changes == [message]
    assert [t.lines[0].job_id for t in sink.tails] == [JOB_A]


def test_with_no_one_listening_events_are_dropped_unparsed() -> None:
    sink = Recording(listening=False)
    consumer = LiveEventsConsumer(url="amqp://unused/", sink=sink, max_length=10)
    consumer.handle("job.changes", changes("alice@x.io").to_json())
    consumer.handle("job.changes", b"{not json")  # not even looked at
    assert sink.changes == []


def test_the_hub_wants_changes_while_anyone_is_connected_and_lines_while_followed() -> None:
    live = hub()
    assert not live.wants("job.changes") and not live.wants("job.logs")
    alice = live.join(ALICE)
    assert live.wants("job.changes") and not live.wants("job.logs")
    live.subscribe(alice, JOB_A)
    assert live.wants("job.logs")
    live.leave(alice)
    assert not live.wants("job.changes") and not live.wants("job.logs")


def test_tokens_in_websocket_paths_are_redacted_from_server_logs() -> None:
    record = logging.LogRecord(
        "uvicorn.error",
        logging.INFO,
        __file__,
        1,
        '%s - "WebSocket %s" [accepted]',
        ("127.0.0.1:5000", "/ws/events?token=eyJhbGciOi.abc.def&x=1"),
        None,
    )
    assert RedactTokens().filter(record) is True
    assert record.getMessage() == (
        '127.0.0.1:5000 - "WebSocket /ws/events?token=[redacted]&x=1" [accepted]'
    )
