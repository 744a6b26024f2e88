"""A small aiocoap server for coapcc's interoperability tests.

Usage: python3 aiocoap_server.py PORT

Serves on 127.0.0.1:PORT:
  /sense  GET -> 2.05 with 60 bytes of 'x' (the testbed's response)
  /store  GET -> 2.05 with the stored bytes; PUT/POST -> 2.04, replacing them;
          DELETE -> 2.02, clearing them
Prints "ready" on stdout once listening.
"""

import asyncio
import sys

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


async def main(port):
    site = resource.Site()
    site.add_resource(["sense"], Sense())
    site.add_resource(["store"], Store())
    await aiocoap.Context.create_server_context(site, bind=("127.0.0.1", port))
    print("ready", flush=True)
    await asyncio.get_running_loop().create_future()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
