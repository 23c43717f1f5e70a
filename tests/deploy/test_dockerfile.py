"""infra/docker/Dockerfile: one target per service, each small (python:3.11-slim, no compiler),
non-root, without secrets, holding only its own package and libs/common; the gateway's image
holds the web UI. And .dockerignore keeps the build context small."""

from __future__ import annotations

import re

import pytest

from .deploy_files import (
    DOCKERFILE,
    DOCKERIGNORE,
    ROOT,
    SERVICES,
    Dockerfile,
    ignore_patterns,
    ignored,
    key_values,
    load_dockerfile,
    logical_lines,
    parse_dockerfile,
)

pytestmark = pytest.mark.unit

BASE_IMAGE = "python:3.11-slim"
COMPILERS = re.compile(r"\b(build-essential|gcc|g\+\+|clang|cc)\b")
SECRET_NAME = re.compile(r"SECRET|TOKEN|PASSWORD|PASSWD|_PASS\b|CREDENTIAL|API_?KEY|PRIVATE", re.I)
URL_WITH_PASSWORD = re.compile(r"[a-z+]+://[^/\s:@]+:[^/\s@]+@")
LIBRARIES = {"common", "sdk"}  # shared packages, in any image that needs them


@pytest.fixture(scope="module")
def dockerfile() -> Dockerfile:
    return load_dockerfile()


def user_problems(dockerfile: Dockerfile) -> list[str]:
    problems = []
    for target in SERVICES:
        user = dockerfile.user(target)
        if user is None or user.split(":")[0] in ("root", "0"):
            problems.append(f"{target}: runs as {user or 'root (no USER)'}")
    return problems


def secret_problems(dockerfile: Dockerfile) -> list[str]:
    """No ENV or ARG carries a secret-looking default, in any stage."""
    problems = []
    args = [("ARG", value) for value in dockerfile.global_args.items()]
    for stage in dockerfile.stages.values():
        for keyword, argument in stage.instructions:
            if keyword in ("ENV", "ARG"):
                args.extend((keyword, item) for item in key_values(argument).items())
    for keyword, (name, value) in args:
        if SECRET_NAME.search(name) and value:
            problems.append(f"{keyword} {name} has a default")
        if URL_WITH_PASSWORD.search(value):
            problems.append(f"{keyword} {name} holds a URL with a password")
    return problems


def package_problems(dockerfile: Dockerfile) -> list[str]:
    """What goes into a target's image mentions services/<itself> and no other service."""
    problems = []
    for target in SERVICES:
        mentioned: set[str] = set()
        installs = ""
        for stage in dockerfile.contributors(target):
            for keyword, argument in stage.instructions:
                if keyword in ("COPY", "ADD") and "--from=" not in argument:
                    sources = [word for word in argument.split() if not word.startswith("--")]
                    if {".", "./", "services", "services/", "services/*"} & set(sources[:-1]):
                        mentioned |= set(SERVICES)  # the whole tree: every service
                if keyword in ("COPY", "ADD", "RUN"):
                    mentioned |= set(re.findall(r"services/([a-z_]+)", argument))
                    mentioned |= set(re.findall(r"\bjobs[-_]([a-z]+)\b", argument)) - LIBRARIES
                if keyword == "RUN" and "pip" in argument:
                    installs += argument + "\n"
        if mentioned != {target}:
            problems.append(f"{target}: its image is built from services {sorted(mentioned)}")
        if "./libs/common" not in installs or f"./services/{target}" not in installs:
            problems.append(f"{target}: does not build libs/common and services/{target}")
        if "--constraint constraints.txt" not in installs and "-c constraints.txt" not in installs:
            problems.append(f"{target}: not pinned by constraints.txt")
    return problems


def small_image_problems(dockerfile: Dockerfile) -> list[str]:
    problems = []
    for target in SERVICES:
        if dockerfile.image(target) != BASE_IMAGE:
            problems.append(f"{target}: based on {dockerfile.image(target)}, not {BASE_IMAGE}")
        for stage in dockerfile.chain(target):
            for argument in stage.args("RUN"):
                if "install" in argument and COMPILERS.search(argument):
                    problems.append(f"{target}: stage {stage.name} installs a compiler")
    return problems


def test_every_service_has_its_build_target(dockerfile: Dockerfile) -> None:
    for target in SERVICES:
        assert target in dockerfile.stages, target
        assert dockerfile.stages[target].args("CMD") == [f'["python", "-m", "jobs_{target}"]']


def test_final_stages_run_as_a_non_root_user(dockerfile: Dockerfile) -> None:
    assert user_problems(dockerfile) == []
    for target in SERVICES:  # set in the final stage itself, where a reader looks for it
        assert dockerfile.stages[target].args("USER"), target


def test_no_env_or_arg_carries_a_secret(dockerfile: Dockerfile) -> None:
    assert secret_problems(dockerfile) == []


def test_each_target_installs_only_its_own_service(dockerfile: Dockerfile) -> None:
    assert package_problems(dockerfile) == []


def test_images_are_slim_and_without_compilers(dockerfile: Dockerfile) -> None:
    assert small_image_problems(dockerfile) == []
    # the compilers are in the builder, which the final stages only copy a venv from
    builder_runs = " ".join(dockerfile.stages["builder"].args("RUN"))
    assert COMPILERS.search(builder_runs)


def test_the_gateway_image_serves_the_web_ui_built_from_the_lock_file(
    dockerfile: Dockerfile,
) -> None:
    ui_dir = dockerfile.env("gateway")["GATEWAY_UI_DIR"]
    copies = [
        argument
        for argument in dockerfile.stages["gateway"].args("COPY")
        if argument.startswith("--from=")
    ]
    ui_copies = [argument for argument in copies if argument.split()[-1] == ui_dir]
    assert len(ui_copies) == 1, copies
    source_stage = re.match(r"--from=(\S+)", ui_copies[0])
    assert source_stage is not None
    ui = dockerfile.stages[source_stage[1]]
    runs = ui.args("RUN")
    assert any(run.startswith("npm ci") for run in runs), runs
    assert "npm run build" in runs
    assert ui_copies[0].split()[1].endswith("/dist")
    assert any("package-lock.json" in copy for copy in ui.args("COPY"))


def test_dockerignore_keeps_local_state_out_and_sources_in() -> None:
    patterns = ignore_patterns(DOCKERIGNORE.read_text())
    for path in (
        ".venv/bin/python",
        "frontend/node_modules/react/index.js",
        "frontend/dist/index.html",
        "var/logs/gateway.log",
        "services/gateway/src/jobs_gateway/__pycache__/app.cpython-311.pyc",
        "services/gateway/src/jobs_gateway.egg-info/PKG-INFO",
        ".mypy_cache/3.11/x.json",
        ".ruff_cache/x",
        ".pytest_cache/x",
        ".git/HEAD",
        ".env",
        "services/worker/tests/unit/test_x.py",
    ):
        assert ignored(path, patterns), f"{path} would be sent to the builder"
    needed = [
        "constraints.txt",
        "libs/common/pyproject.toml",
        "libs/common/src/jobs_common/settings.py",
        "frontend/package.json",
        "frontend/package-lock.json",
        "frontend/index.html",
        "frontend/src/main.tsx",
        *(f"services/{s}/pyproject.toml" for s in SERVICES),
        *(f"services/{s}/src/jobs_{s}/__main__.py" for s in SERVICES),
    ]
    for path in needed:
        assert (ROOT / path).exists(), path
        assert not ignored(path, patterns), f"{path} is needed by the Dockerfile"


# --- The checks notice a broken Dockerfile ---------------------------------------------------


def mutated(old: str, new: str) -> Dockerfile:
    text = DOCKERFILE.read_text()
    assert old in text, old
    return parse_dockerfile(text.replace(old, new, 1))


def test_a_root_user_is_found() -> None:
    broken = mutated(
        'EXPOSE 9100\nUSER app\nCMD ["python", "-m", "jobs_worker"]',
        'EXPOSE 9100\nUSER root\nCMD ["python", "-m", "jobs_worker"]',
    )
    assert user_problems(broken) == ["worker: runs as root"]


def test_a_secret_default_is_found() -> None:
    broken = mutated("ENV SCHEDULER_HOST=0.0.0.0", "ENV SCHEDULER_HOST=0.0.0.0 API_TOKEN=abc")
    assert secret_problems(broken) == ["ENV API_TOKEN has a default"]
    url = mutated(
        "ENV SCHEDULER_HOST=0.0.0.0",
        "ENV SCHEDULER_HOST=0.0.0.0 SCHEDULER_AMQP_URL=amqp://guest:guest@rabbitmq:5672/",
    )
    assert secret_problems(url) == ["ENV SCHEDULER_AMQP_URL holds a URL with a password"]


def test_another_services_package_is_found() -> None:
    broken = mutated(
        "./libs/common ./services/dashboard",
        "./libs/common ./services/dashboard ./services/scheduler",
    )
    assert package_problems(broken) == [
        "dashboard: its image is built from services ['dashboard', 'scheduler']"
    ]
    shared = mutated(
        "COPY libs/common/ libs/common/", "COPY libs/common/ libs/common/\nCOPY services/ services/"
    )
    assert len(package_problems(shared)) == len(SERVICES)


def test_a_compiler_in_a_final_image_is_found() -> None:
    broken = mutated("FROM runtime AS worker", "FROM builder AS worker")
    assert small_image_problems(broken) == [
        "worker: stage builder installs a compiler",
    ]
    fat = mutated("ARG PYTHON_IMAGE=python:3.11-slim", "ARG PYTHON_IMAGE=python:3.11")
    assert len(small_image_problems(fat)) == len(SERVICES)


def test_the_dockerfile_parser_joins_continuations_and_drops_comments() -> None:
    lines = list(logical_lines("FROM a AS b\n# note\nRUN one \\\n    # inner\n    && two\n"))
    assert lines == ["FROM a AS b", "RUN one && two"]


def test_a_missing_dockerignore_entry_is_found() -> None:
    text = DOCKERIGNORE.read_text()
    assert "**/node_modules\n" in text
    patterns = ignore_patterns(text.replace("**/node_modules\n", ""))
    assert not ignored("frontend/node_modules/react/index.js", patterns)
    assert ignored("a/b", ignore_patterns("**/b\n!a/b\n")) is False  # the last match wins
