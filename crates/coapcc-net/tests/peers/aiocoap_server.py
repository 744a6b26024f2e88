"""A small aiocoap server for coapcc's interoperability tests.

Usage: python3 aiocoap_server.py PORT

Serves on 127.0.0.1:PORT:
  /sense  GET -> 2.05 with 60 bytes of 'x' (the testbed's response)
  /store  GET -> 2.05 with the stored bytes; PUT/POST -> 2.04, replacing them;
          DELETE -> 2.02, clearing them
  /obs    observable (RFC 7641): GET -> 2.05 with "N T", N a counter that
          grows every 200 ms and T the wall clock at that change in
          microseconds since the Unix epoch (coapcc's representation)
Prints "ready" on stdout once listening.
"""

import asyncio
import sys
import time

import aiocoap
import aiocoap.resource as resource


class Sense(resource.Resource):
    async def render_get(self, request):
        return aiocoap.Message(code=aiocoap.CONTENT, payload=b"x" * 60)


class Store(resource.Resource):
    def __init__(self):
        super().__init__()
        self.value = b""

    async def render_get(self, request):
        return aiocoap.Message(code=aiocoap.CONTENT, payload=self.value)

    async def render_put(self, request):
        self.value = request.payload
        return aiocoap.Message(code=aiocoap.CHANGED)

    async def render_post(self, request):
        return await self.render_put(request)

    async def render_delete(self, request):
        self.value = b""
        return aiocoap.Message(code=aiocoap.DELETED)


class Obs(resource.ObservableResource):
    """Changes every `period` seconds; aiocoap notifies the observers."""

    def __init__(self, period: float = 0.2) -> None:
        super().__init__()
        self.period = period
        self.count = 0
        self.at = time.time()

    async def tick(self) -> None:
        while True:
            await asyncio.sleep(self.period)
            self.count += 1
            self.at = time.time()
            self.updated_state()

    async def render_get(self, request: aiocoap.Message) -> aiocoap.Message:
        payload = f"{self.count} {int(self.at * 1e6)}".encode()
        return aiocoap.Message(code=aiocoap.CONTENT, payload=payload)


async def main(port):
    site = resource.Site()
    site.add_resource(["sense"], Sense())
    site.add_resource(["store"], Store())
    obs = Obs()
    site.add_resource(["obs"], obs)
    ticker = asyncio.create_task(obs.tick())
    await aiocoap.Context.create_server_context(site, bind=("127.0.0.1", port))
    print("ready", flush=True)
    await asyncio.get_running_loop().create_future()
    ticker.cancel()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
