"""Accepts every message on :1025 and prints one line per message: `mail from=... to=...`."""

import asyncio
from typing import Any

from aiosmtpd.controller import Controller


class Printer:
    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # aiosmtpd's name
        print(f"mail from={envelope.mail_from} to={','.join(envelope.rcpt_tos)}", flush=True)
        return "250 Message accepted for delivery"


async def main() -> None:
    controller = Controller(Printer(), hostname="0.0.0.0", port=1025)
    controller.start()
    print("smtp sink listening on :1025", flush=True)
    await asyncio.Event().wait()


asyncio.run(main())
