"""Streaming overhead per chunk of the OpenAI connector, against a local server.

Usage: python benchmarks/bench_connectors.py [--json] [--chunks N] [--rounds R]

A server in a child process answers every Chat Completions request with the same SSE
stream of N one-word chunks (then usage). The same stream is read two ways in this process:

- ``sdk``: the openai SDK alone (``AsyncOpenAI.chat.completions.create(stream=True)``,
  iterating the chunks): the floor any connector built on the SDK pays;
- ``connector``: ``OpenAILlm.generate_content_async(stream=True)``, yielding a partial
  ``LlmResponse`` per chunk and the aggregated final response.

The connector's overhead per chunk is the difference divided by N, in wall time and in this
process's CPU time (the server runs in another process, so CPU time excludes it). Medians
over R rounds, after one warm-up round each.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import statistics
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from eventide import types  # noqa: E402
from eventide.models.llm_request import LlmRequest  # noqa: E402
from eventide.models.openai_llm import OpenAILlm  # noqa: E402


def _sse_body(chunks: int) -> bytes:
    frames = []
    for i in range(chunks):
        chunk = {
            "id": "chatcmpl-b",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "bench",
            "choices": [
                {
                    "index": 0,
                    "delta": {"content": f"w{i} "},
                    "finish_reason": "stop" if i == chunks - 1 else None,
                }
            ],
        }
        frames.append(f"data: {json.dumps(chunk)}\n\n")
    usage = {
        "id": "chatcmpl-b",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "bench",
        "choices": [],
        "usage": {"prompt_tokens": 5, "completion_tokens": chunks, "total_tokens": chunks + 5},
    }
    frames.append(f"data: {json.dumps(usage)}\n\ndata: [DONE]\n\n")
    return "".join(frames).encode()


def _serve(chunks: int, port_queue: Any) -> None:
    body = _sse_body(chunks)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port_queue.put(server.server_address[1])
    server.serve_forever()


def _request() -> LlmRequest:
    return LlmRequest(contents=[types.Content(role="user", parts=[types.Part(text="go")])])


async def _sdk_round(client: Any) -> tuple[float, float, int]:
    wall, cpu = time.perf_counter(), time.process_time()
    stream = await client.chat.completions.create(
        model="bench",
        messages=[{"role": "user", "content": "go"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    count = 0
    async for _chunk in stream:
        count += 1
    return time.perf_counter() - wall, time.process_time() - cpu, count


async def _connector_round(llm: OpenAILlm) -> tuple[float, float, int]:
    wall, cpu = time.perf_counter(), time.process_time()
    count = 0
    final = None
    async for response in llm.generate_content_async(_request(), stream=True):
        count += 1
        final = response
    elapsed = time.perf_counter() - wall, time.process_time() - cpu
    assert final is not None and final.partial is None and final.error_code is None
    return elapsed[0], elapsed[1], count


async def _measure(base_url: str, chunks: int, rounds: int) -> dict[str, Any]:
    import openai

    client = openai.AsyncOpenAI(api_key="bench", base_url=base_url, max_retries=0)
    llm = OpenAILlm(model="bench", api_key="bench", base_url=base_url)
    sdk: list[tuple[float, float, int]] = []
    connector: list[tuple[float, float, int]] = []
    await _sdk_round(client)
    await _connector_round(llm)
    for _ in range(rounds):
        # Interleaved, so a change in machine load hits both sides alike.
        sdk.append(await _sdk_round(client))
        connector.append(await _connector_round(llm))
    await client.close()
    await llm.close()

    def per_chunk(samples: list[tuple[float, float, int]], index: int) -> float:
        return statistics.median(s[index] for s in samples) / chunks * 1e6

    result = {
        "chunks": chunks,
        "rounds": rounds,
        "sdk_wall_us_per_chunk": per_chunk(sdk, 0),
        "sdk_cpu_us_per_chunk": per_chunk(sdk, 1),
        "connector_wall_us_per_chunk": per_chunk(connector, 0),
        "connector_cpu_us_per_chunk": per_chunk(connector, 1),
    }
    result["overhead_wall_us_per_chunk"] = (
        result["connector_wall_us_per_chunk"] - result["sdk_wall_us_per_chunk"]
    )
    result["overhead_cpu_us_per_chunk"] = (
        result["connector_cpu_us_per_chunk"] - result["sdk_cpu_us_per_chunk"]
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--chunks", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()

    ports: Any = multiprocessing.Queue()
    server = multiprocessing.Process(target=_serve, args=(args.chunks, ports), daemon=True)
    server.start()
    try:
        port = ports.get(timeout=30)
        result = asyncio.run(_measure(f"http://127.0.0.1:{port}/v1", args.chunks, args.rounds))
    finally:
        server.terminate()
        server.join()
    if args.json:
        print(json.dumps(result))
        return
    print(f"OpenAI connector streaming, {args.chunks} chunks, median of {args.rounds} rounds")
    print(f"{'':24}{'wall us/chunk':>16}{'CPU us/chunk':>16}")
    for label, key in (("openai SDK alone", "sdk"), ("through OpenAILlm", "connector")):
        wall, cpu = result[f"{key}_wall_us_per_chunk"], result[f"{key}_cpu_us_per_chunk"]
        print(f"{label:24}{wall:>16.1f}{cpu:>16.1f}")
    overhead_wall, overhead_cpu = (
        result["overhead_wall_us_per_chunk"],
        result["overhead_cpu_us_per_chunk"],
    )
    print(f"{'connector overhead':24}{overhead_wall:>16.1f}{overhead_cpu:>16.1f}")


if __name__ == "__main__":
    main()
