"""How long the twin's mirror takes to follow a real Home Assistant.

Starts a real `hass` serving a generated home (scripts/hass_server.py), mirrors it (twin.mirror
through HomeAssistantBackend's WebSocket), then makes --changes state changes through the REST API
one after the other, each once the mirror has the previous one, and prints the delay from Home
Assistant's change (the new state's last_updated) to the mirror's update: median, p95 and max.
Server and mirror share this machine's clock.

    scripts/ha-env run python bench/mirror_delay.py [--changes 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from contextlib import aclosing, suppress
from pathlib import Path

from rich.console import Console
from rich.table import Table

from agent.backends.home_assistant import HomeAssistantBackend
from twin.mirror import Mirror, Update

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # scripts/ is not installed
from scripts.hass_server import HASS_PORT, HassServer

ENTITY = "input_number.mirror_bench"  # a domain the twin does not simulate: mirrored read-only
URL = f"http://127.0.0.1:{HASS_PORT}"  # as the server sees itself; reached through its bridge


async def measure(server: HassServer, token: str, changes: int) -> tuple[Update, list[Update]]:
    """The mirror's first sync, and its update for each of `changes` REST state changes."""
    async with HomeAssistantBackend(URL, token, unix_socket="\0" + server.bridge) as ha:
        mirror = Mirror(ha)
        async with aclosing(mirror.follow()) as updates:
            synced = await anext(updates)
            seen: list[Update] = []
            arrived = asyncio.Event()

            async def follow() -> None:
                async for update in updates:
                    if update.subject == ENTITY:
                        seen.append(update)
                        arrived.set()

            follower = asyncio.create_task(follow())
            for number in range(changes):
                body = {"state": str(number), "attributes": {"friendly_name": "Mirror bench"}}
                await asyncio.to_thread(
                    server.call, "POST", f"/api/states/{ENTITY}", body, token=token
                )
                while len(seen) <= number:
                    await arrived.wait()
                    arrived.clear()
                assert mirror.home.states[ENTITY].state == str(number)
            follower.cancel()
            with suppress(asyncio.CancelledError):
                await follower
    return synced, seen


def main() -> None:
    """Serve a home, measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=200, help="state changes to follow")
    args = parser.parse_args()
    with HassServer() as server:
        tokens = server.onboard()
        server.wait_until_running(tokens.access_token)
        server.remove_areas(tokens.access_token)
        server.create_home(tokens.access_token, "Bench Home", 7, "apartment", city="Oslo")
        token = server.long_lived_token(tokens.access_token, "mirror_delay")
        synced, updates = asyncio.run(measure(server, token, args.changes))
    delays = sorted(update.delay * 1000 for update in updates)
    table = Table(title=f"HA state change -> mirror update, {len(delays)} changes")
    table.add_column("delay")
    table.add_column("ms", justify="right")
    table.add_row("median", f"{statistics.median(delays):.2f}")
    table.add_row("p95", f"{statistics.quantiles(delays, n=20)[-1]:.2f}")
    table.add_row("max", f"{delays[-1]:.2f}")
    table.add_row("first sync (every registry and state)", f"{synced.delay * 1000:.1f}")
    Console().print(table)


if __name__ == "__main__":
    main()
