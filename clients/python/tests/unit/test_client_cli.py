"""The ``jobs`` command line without a server: parsing, where --json may go, exit codes of
what fails before any request, the choice of gateway and credentials, the progress bar."""

from __future__ import annotations

import io
from pathlib import Path

import httpx
import pytest

from jobs_client import JobsClient
from jobs_client.cli import commands
from jobs_client.cli.main import run
from jobs_client.cli.output import ProgressBar
from jobs_client.cli.parser import build_parser
from jobs_client.models import Tokens
from jobs_client.session import Session, SessionFile
from jobs_client.waiting import WaitProgress

pytestmark = pytest.mark.unit

UNUSED = "http://127.0.0.1:9"  # discard port: nothing is ever sent there in these tests


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("JOBS_URL", "JOBS_TOKEN", "JOBS_API_KEY", "JOBS_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


@pytest.mark.parametrize(
    "argv",
    [
        ["--json", "list"],
        ["list", "--json"],
        ["--json", "schedules", "list"],
        ["schedules", "list", "--json"],
        ["dlq", "--json", "list"],
    ],
)
def test_json_is_accepted_before_or_after_the_subcommand(argv: list[str]) -> None:
    assert build_parser().parse_args(argv).json is True


def test_without_json_it_is_off_and_url_is_taken_anywhere() -> None:
    args = build_parser().parse_args(["get", "abc", "--url", "http://x"])
    assert (args.json, args.url, args.job_id) == (False, "http://x", "abc")
    assert build_parser().parse_args(["--url", "http://y", "get", "abc"]).url == "http://y"


def test_submit_arguments() -> None:
    args = build_parser().parse_args(
        [
            "submit",
            "simulate",
            "--payload",
            "@p.json",
            "--priority",
            "3",
            "--wait",
            "--depends-on",
            "a",
            "--depends-on",
            "b",
            "--delay",
            "5",
        ]
    )
    assert (args.type, args.payload, args.priority, args.wait) == ("simulate", "@p.json", 3, True)
    assert args.depends_on == ["a", "b"] and args.delay == 5.0 and args.run_at is None


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["submit"],
        ["submit", "simulate", "--priority", "7"],
        ["submit", "simulate", "--delay", "5", "--run-at", "2030-01-01T00:00:00Z"],
        ["list", "--status", "runing"],
        ["wait"],
        ["wait", "a", "--timeout", "0"],
        ["schedules"],
        ["schedules", "create", "n", "--type", "simulate"],
        ["dlq", "list", "--status", "closed"],
        ["types", "extra"],
    ],
)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(argv)
    assert exited.value.code == commands.USAGE
    assert "usage: jobs" in capsys.readouterr().err


def test_statuses_may_be_repeated_or_comma_separated() -> None:
    args = build_parser().parse_args(["list", "--status", "queued,running", "--status", "dead"])
    assert args.status == [["queued", "running"], ["dead"]]


def test_an_unreadable_or_invalid_payload_is_a_usage_error_before_any_request(
    tmp_path: Path,
) -> None:
    err = io.StringIO()
    code = run(["--url", UNUSED, "submit", "simulate", "--payload", "{nope"], err=err)
    assert code == commands.USAGE and "--payload: not valid JSON" in err.getvalue()
    missing = str(tmp_path / "absent.json")
    code = run(["--url", UNUSED, "submit", "simulate", "--payload", f"@{missing}"], err=err)
    assert code == commands.USAGE
    code = run(["--url", UNUSED, "submit", "simulate", "--payload", "[1]"], err=err)
    assert code == commands.USAGE


def test_without_a_session_a_command_exits_4_and_says_how_to_log_in() -> None:
    err = io.StringIO()
    assert run(["--url", UNUSED, "list"], err=err) == commands.AUTH
    assert "jobs login" in err.getvalue()
    err = io.StringIO()
    assert run(["--url", UNUSED, "list", "--json"], err=err) == commands.AUTH
    assert '"status":null' in err.getvalue() and '"message":"not logged in' in err.getvalue()


def test_a_session_is_used_only_for_the_gateway_it_belongs_to(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    store = SessionFile(tmp_path / "session.json")
    tokens = Tokens(access_token="a", refresh_token="r", expires_at=None)
    store.write(Session(url="http://gateway-a:3000", tokens=tokens))

    def context(*argv: str) -> commands.Context:
        return commands.Context(build_parser().parse_args([*argv, "list"]), session_file=store)

    assert context().url() == "http://gateway-a:3000"
    assert context().client().tokens == tokens
    elsewhere = context("--url", "http://gateway-b:3000/")
    assert elsewhere.url() == "http://gateway-b:3000"
    assert elsewhere.client().tokens is None  # never sent to another gateway
    monkeypatch.setenv("JOBS_TOKEN", "from-env")
    env_token = context().client().tokens
    assert env_token is not None and env_token.access_token == "from-env"
    monkeypatch.delenv("JOBS_TOKEN")
    monkeypatch.setenv("JOBS_URL", "http://from-env:1")
    assert context().url() == "http://from-env:1"


def test_an_api_key_and_a_project_come_from_the_options_else_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def client(*argv: str) -> JobsClient:
        return commands.Context(build_parser().parse_args([*argv, "list"])).client()

    with client("--url", UNUSED) as plain:
        assert (plain.tokens, plain.project) == (None, None)
    with client("--api-key", "jk_a", "--project", "acme/web") as keyed:
        assert keyed.tokens is not None and keyed.tokens.access_token == "jk_a"
        assert keyed.project == "acme/web"
    monkeypatch.setenv("JOBS_API_KEY", "jk_env")
    monkeypatch.setenv("JOBS_PROJECT", "ops")
    with client() as from_env:
        assert from_env.tokens is not None and from_env.tokens.access_token == "jk_env"
        assert from_env.project == "ops"
    monkeypatch.setenv("JOBS_TOKEN", "a-token")  # a person's token goes first
    with client("--project", "web") as token:
        assert token.tokens is not None and token.tokens.access_token == "a-token"
        assert token.project == "web"
    with client("--api-key", "jk_flag") as flag:  # ... after an explicit --api-key
        assert flag.tokens is not None and flag.tokens.access_token == "jk_flag"


def test_the_key_and_the_project_go_with_every_request() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(202, json={"jobId": "j1", "status": "accepted"})

    with JobsClient(
        UNUSED, api_key="jk_abc", project="acme/web", transport=httpx.MockTransport(answer)
    ) as jobs:
        jobs.submit("simulate", {})
    assert seen[0].headers["authorization"] == "Bearer jk_abc"
    assert seen[0].headers["x-project"] == "acme/web"
    with pytest.raises(ValueError, match="api_key"):
        JobsClient(UNUSED, api_key="jk_abc", token="t")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_bar_draws_on_a_terminal_only() -> None:
    screen = Terminal()
    bar = ProgressBar(screen)
    bar(WaitProgress({"a": "succeeded", "b": "dead", "c": "running", "d": None}))
    bar.close()
    drawn = screen.getvalue()
    assert drawn.startswith("\r[" + "#" * 15 + "-" * 15 + "] 2/4 finished")
    assert "succeeded 1, dead 1, running 1" in drawn and drawn.endswith("\n")

    piped = io.StringIO()
    quiet = ProgressBar(piped)
    quiet(WaitProgress({"a": "succeeded"}))
    quiet.close()
    assert piped.getvalue() == ""
