"""User administration for operators: ``python -m jobs_gateway.manage <command>``.

Outside development no demo login exists, so this is how the first administrator is made::

    python -m jobs_gateway.manage create-user --email ops@example.com --role admin
    python -m jobs_gateway.manage set-role --email someone@example.com --role user
    python -m jobs_gateway.manage delete-user --email someone@example.com

``create-user`` reads the password from standard input (one line; ``--password-stdin``) or,
without it, generates one and prints it once. Settings (the database) come from the same
``GATEWAY_*`` variables as the service; the migrations must have run.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import sys
from typing import cast

from pydantic import EmailStr, TypeAdapter, ValidationError

from jobs_common.auth import Role
from jobs_common.db import create_engine
from jobs_common.settings import settings_from_environment
from jobs_gateway.adapters.passwords import Passwords
from jobs_gateway.adapters.user_admin import UserAdministration
from jobs_gateway.adapters.users import UserRepository
from jobs_gateway.domain.users import PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH
from jobs_gateway.settings import Settings

EXIT_USAGE = 2
EXIT_NOT_FOUND = 3
EXIT_CONFLICT = 4

_EMAIL = TypeAdapter(EmailStr)


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="python -m jobs_gateway.manage", description=__doc__)
    commands = root.add_subparsers(dest="command", required=True)
    create = commands.add_parser("create-user", help="create a user")
    create.add_argument("--email", required=True)
    create.add_argument("--role", choices=("admin", "user"), default="user")
    create.add_argument(
        "--password-stdin", action="store_true", help="read the password from standard input"
    )
    role = commands.add_parser("set-role", help="change a user's role (next refresh)")
    role.add_argument("--email", required=True)
    role.add_argument("--role", choices=("admin", "user"), required=True)
    delete = commands.add_parser("delete-user", help="delete a user (next refresh refused)")
    delete.add_argument("--email", required=True)
    return root


def _password(from_stdin: bool) -> tuple[str, bool]:
    """The password to set and whether it was generated (then it is printed once)."""
    if not from_stdin:
        return secrets.token_urlsafe(18), True
    password = sys.stdin.readline().rstrip("\r\n")
    if not PASSWORD_MIN_LENGTH <= len(password) <= PASSWORD_MAX_LENGTH:
        raise SystemExit(
            f"the password must have {PASSWORD_MIN_LENGTH} to {PASSWORD_MAX_LENGTH} characters"
        )
    return password, False


async def run(arguments: argparse.Namespace, settings: Settings) -> int:
    try:
        email = str(_EMAIL.validate_python(arguments.email))
    except ValidationError:
        print(f"not an email address: {arguments.email!r}", file=sys.stderr)
        return EXIT_USAGE
    engine = create_engine(settings.database_url, pool_size=1)
    try:
        if arguments.command == "create-user":
            password, generated = _password(arguments.password_stdin)
            user = await UserRepository(engine).insert_if_absent(
                email=email,
                password_hash=await Passwords().hash(password),
                role=cast(Role, arguments.role),
            )
            if user is None:
                print(f"{email} already exists", file=sys.stderr)
                return EXIT_CONFLICT
            print(f"created {user.email} ({user.role})")
            if generated:
                print(f"password: {password}")
            return 0
        administration = UserAdministration(engine)
        if arguments.command == "set-role":
            done = await administration.set_role(email=email, role=cast(Role, arguments.role))
        else:
            done = await administration.delete(email=email)
        if not done:
            print(f"no user {email}", file=sys.stderr)
            return EXIT_NOT_FOUND
        print(f"{arguments.command}: {email}")
        return 0
    finally:
        await engine.dispose()


def main(argv: list[str] | None = None) -> int:
    arguments = parser().parse_args(argv)
    return asyncio.run(run(arguments, settings_from_environment(Settings)))


if __name__ == "__main__":
    sys.exit(main())
